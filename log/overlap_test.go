package log

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// TestOverlappedAppendMatchesSerial appends the same script of batches —
// valid ones, refused ones, a duplicate, a batch whose header understates
// its max timestamp (rewritten), a compressed one, and enough to roll
// segments — to a directory that overlaps every append's write with its
// validation (segment.LogHooks.AppendOverlapped) and to one that never does: every result and error is the
// same, and so is every byte of every .log file.
func TestOverlappedAppendMatchesSerial(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))) // the overlap needs two Ps
	now := newClock().Now().UnixMilli()
	idem := func(seq int32) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			b, _ := idempotentBatchSized(t, 7, seq, int(seq), 10, 300, now)
			return b
		}
	}
	steps := []struct {
		name  string
		topic string
		batch func(t *testing.T) []byte
		want  error
		idem  bool
	}{
		{"plain", "p", func(t *testing.T) []byte { return producerBatch(t, 40, 100, now, record.None) }, nil, false},
		{"corrupt CRC", "p", func(t *testing.T) []byte {
			b := producerBatch(t, 40, 100, now, record.None)
			b[len(b)-1] ^= 1
			return b
		}, record.ErrCRC, false},
		{"timestamp too far ahead", "p", func(t *testing.T) []byte {
			return producerBatch(t, 40, 100, now+2*time.Hour.Milliseconds(), record.None)
		}, ErrInvalidTimestamp, false},
		{"idempotent", "p", idem(0), nil, true},
		{"duplicate", "p", idem(0), nil, true},
		{"out of order", "p", idem(20), ErrOutOfOrderSequence, true},
		{"next in order", "p", idem(10), nil, true},
		{"max timestamp understated", "p", func(t *testing.T) []byte {
			b := producerBatch(t, 40, 100, now, record.None)
			require.NoError(t, record.SetMaxTimestamp(b, now-5))
			return b
		}, nil, false},
		{"lz4", "p", func(t *testing.T) []byte { return producerBatch(t, 40, 100, now, record.LZ4) }, nil, false},
		{"recompressed", "zstd", func(t *testing.T) []byte { return producerBatch(t, 40, 100, now, record.None) }, nil, false},
		{"null key on a compacted topic", "c", func(t *testing.T) []byte {
			b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, 0,
				[]record.Record{{Timestamp: now, Key: []byte("a")}, {OffsetDelta: 1, Timestamp: now, Value: bytes.Repeat([]byte("x"), 200)}})
			require.NoError(t, err)
			return b
		}, ErrInvalidRecord, false},
		{"keyed on a compacted topic", "c", func(t *testing.T) []byte { return producerBatch(t, 40, 100, now, record.None) }, nil, false},
	}
	type outcome struct {
		res AppendResult
		err error
	}
	run := func(overlap int) ([]outcome, map[string][]byte, int64) {
		e := newEnv(t)
		e.cfg.OverlapAppendBytes = overlap
		d := e.open(t)
		defer func() { require.NoError(t, d.Close()) }()
		createTopic(t, d, "p", 1, map[string]string{"segment.bytes": "12000"})
		createTopic(t, d, "zstd", 1, map[string]string{"compression.type": "zstd"})
		createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact"})
		var out []outcome
		for round := range 3 { // the later rounds roll segments
			for _, s := range steps {
				if round > 0 && s.idem {
					continue // the producer's sequences are used up
				}
				b := s.batch(t)
				res, err := partition(t, d, s.topic, 0).Append(b)
				if s.want != nil {
					require.ErrorIs(t, err, s.want, "%s, round %d", s.name, round)
				} else {
					require.NoError(t, err, "%s, round %d", s.name, round)
				}
				out = append(out, outcome{res, err})
			}
		}
		var overlapped int64
		for _, ps := range d.Stats().PartitionStats {
			overlapped += ps.OverlappedAppends
		}
		files := map[string][]byte{}
		for _, topic := range []string{"p", "zstd", "c"} {
			dir := d.Path() + "/" + PartitionDirName(topic, 0)
			infos, err := e.mem.List(dir)
			require.NoError(t, err)
			for _, fi := range infos {
				if strings.HasSuffix(fi.Name, ".log") {
					f, err := e.mem.Open(dir + "/" + fi.Name)
					require.NoError(t, err)
					data := make([]byte, fi.Size)
					_, err = f.ReadAt(data, 0)
					require.NoError(t, errors.Join(err, f.Close()))
					files[topic+"/"+fi.Name] = data
				}
			}
		}
		return out, files, overlapped
	}
	serial, serialFiles, none := run(0)
	overlapped, overlappedFiles, some := run(1)
	require.Zero(t, none)
	require.Positive(t, some, "the overlap was used")
	require.Len(t, overlapped, len(serial))
	for i := range serial {
		require.Equal(t, serial[i].res, overlapped[i].res, "step %d", i)
		require.Equal(t, fmt.Sprint(serial[i].err), fmt.Sprint(overlapped[i].err), "step %d", i)
	}
	require.Equal(t, len(serialFiles), len(overlappedFiles))
	require.Greater(t, len(serialFiles), 3, "segments rolled")
	for name, data := range serialFiles {
		require.Equal(t, data, overlappedFiles[name], name)
	}
}

// TestOverlappedAppendsOfTwoPartitions holds the write ahead of one
// partition's batch: its append waits for it, while an append to another
// partition meanwhile overlaps its own write and completes; once the held
// write goes on, the first append completes too. After Close no goroutine
// of a write ahead is left.
func TestOverlappedAppendsOfTwoPartitions(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))) // the overlap needs two Ps
	e := newEnv(t)
	ffs := vfs.NewFaultFS(e.mem)
	e.cfg.FS, e.cfg.OverlapAppendBytes = ffs, 1
	d := e.open(t)
	createTopic(t, d, "t", 2, nil)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ffs.OnOp(func(op vfs.Op, path string) {
		if op == vfs.OpWrite && strings.Contains(path, "t-0/") && strings.HasSuffix(path, ".log") {
			once.Do(func() { close(held); <-release }) // the first write: the body of the batch below
		}
	})
	now := e.clock.Now().UnixMilli()
	type result struct {
		res AppendResult
		err error
	}
	first := make(chan result, 1)
	go func() {
		res, err := partition(t, d, "t", 0).Append(producerBatch(t, 20, 100, now, record.None))
		first <- result{res, err}
	}()
	<-held

	other := partition(t, d, "t", 1)
	res, err := other.Append(producerBatch(t, 20, 100, now, record.None))
	require.NoError(t, err)
	require.Equal(t, int64(19), res.LastOffset)
	require.Equal(t, int64(1), other.Stats().OverlappedAppends, "the other partition's write overlapped too")
	select {
	case <-first:
		t.Fatal("the first append returned before its write")
	default:
	}

	close(release)
	got := <-first
	require.NoError(t, got.err)
	require.Equal(t, int64(19), got.res.LastOffset)
	require.Equal(t, int64(1), partition(t, d, "t", 0).Stats().OverlappedAppends)
	require.Len(t, records(t, partition(t, d, "t", 0), 0), 20)
	ffs.OnOp(nil)
	require.NoError(t, d.Close())
	buf := make([]byte, 1<<20)
	require.NotContains(t, string(buf[:runtime.Stack(buf, true)]), "writeAhead", "a write ahead's goroutine outlived Close")
}
