package log

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/record"
)

// TestReadRecordRacesTruncationAndClose runs point reads, which look at
// memory-mapped segments in place on the OS filesystem, against a writer
// that appends, truncates (Log.TruncateTo), deletes segments
// (DeleteRecordsBefore, RemoveDeleted) and finally closes the directory
// (run it with -race). Reads may fail while the data they aim at goes away,
// but a record they return is always the right one, and none can touch
// unmapped memory or a page past the end of a file (see the segment
// package's doc): a fault would kill the test.
func TestReadRecordRacesTruncationAndClose(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RetentionCheckInterval = time.Hour
	d, err := Open(context.Background(), t.TempDir(), cfg)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			_ = d.Close()
		}
	}()
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "40000", "file.delete.delay.ms": "0"})
	l := partition(t, d, "t", 0)
	// Every batch holds 20 records keyed k0..k19, so the record at offset o
	// has key k(o%20) as long as batches start at multiples of 20, which
	// truncation keeps.
	batch := producerBatch(t, 20, 100, time.Now().UnixMilli(), record.None)
	appendOne := func() {
		b := bytes.Clone(batch)
		_, err := l.Append(b)
		require.NoError(t, err)
	}
	for range 50 {
		appendOne()
	}
	var found, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched() // leave the writer its share
				}
				lo, hi := l.LogStartOffset(), l.LogEndOffset()
				if hi <= lo {
					continue
				}
				off := lo + rand.Int64N(hi-lo)
				rec, ok, err := l.ReadRecord(off)
				switch {
				case errors.Is(err, ErrClosed):
					return
				case err != nil:
					failed.Add(1)
				case ok:
					found.Add(1)
					if rec.Offset < off || string(rec.Key) != fmt.Sprintf("k%d", rec.Offset%20) || !bytes.Equal(rec.Value, bytes.Repeat([]byte{'v'}, 100)) {
						t.Errorf("read %d: got offset %d, key %q, %d-byte value", off, rec.Offset, rec.Key, len(rec.Value))
						return
					}
				}
			}
		}()
	}
	for round := range 200 {
		appendOne()
		switch {
		case round%9 == 8:
			end := l.LogEndOffset()
			to := max(l.LogStartOffset(), end-20*rand.Int64N(30))
			require.NoError(t, l.TruncateTo(to-to%20))
		case round%23 == 22:
			_, err := l.DeleteRecordsBefore(max(l.LogStartOffset(), l.LogEndOffset()-20*rand.Int64N(50)))
			require.NoError(t, err)
			require.NoError(t, l.RemoveDeleted(true))
		}
	}
	// Close the directory under the readers, then stop them.
	require.NoError(t, d.Close())
	closed = true
	close(stop)
	wg.Wait()
	t.Logf("%d records found, %d reads failed", found.Load(), failed.Load())
	require.NotZero(t, found.Load())
}

// TestReadNeverPassesLogEndOffset has a reader follow a writer batch by
// batch, as a consumer does: every read starts where the last one ended.
// A batch must never reach a reader before the log end offset covers it,
// else the reader's next position lies beyond the log end offset it sees
// and reads fail with ErrOffsetOutOfRange (a consumer would then reset
// and deliver everything again). Run it with -race for more interleavings.
func TestReadNeverPassesLogEndOffset(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "65536"})
	l := partition(t, d, "t", 0)
	const batches = 3000
	batch := producerBatch(t, 1, 10, 1_800_000_000_000, record.None)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range batches {
			if _, err := l.Append(bytes.Clone(batch)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var pos int64
	for pos < batches {
		res, err := l.Read(pos, 1<<20, true)
		require.NoError(t, err, "read at %d", pos)
		if res.Slice == nil {
			runtime.Gosched()
			continue
		}
		buf, err := res.Slice.Bytes(nil)
		res.Release()
		require.NoError(t, err)
		for len(buf) > 0 {
			n, err := record.BatchSize(buf)
			require.NoError(t, err)
			h, err := record.ParseHeader(buf[:n])
			require.NoError(t, err)
			require.LessOrEqual(t, h.NextOffset(), res.LogEndOffset, "a batch beyond the log end offset of its read")
			pos = h.NextOffset()
			buf = buf[n:]
		}
	}
	<-done
}
