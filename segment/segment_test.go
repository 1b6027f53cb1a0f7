package segment

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

func TestAppendReadAndIndexRules(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		cfg := testConfig()
		s := create(t, e, 100, cfg)
		defer s.Close()
		batches := fill(t, s, 100, 20, 5, 100, 1700000000000)

		next, err := s.NextOffset()
		require.NoError(t, err)
		require.Equal(t, int64(200), next)
		maxTS, err := s.MaxTimestamp()
		require.NoError(t, err)
		require.Equal(t, header(t, batches[19]).MaxTimestamp, maxTS)

		// Index entries as Kafka adds them: before appending a batch, if more
		// than IndexIntervalBytes were appended since the last entry, an
		// entry (batch last offset, batch position).
		var want []index.OffsetPosition
		var pos, since int64
		for _, b := range batches {
			h := header(t, b)
			if since > int64(cfg.IndexIntervalBytes) {
				want = append(want, index.OffsetPosition{Offset: h.LastOffset(), Position: index.Position(pos)})
				since = 0
			}
			since += int64(len(b))
			pos += int64(len(b))
		}
		oi, ti, err := s.indexes()
		require.NoError(t, err)
		got, err := oi.AppendEntries(nil)
		require.NoError(t, err)
		require.NotEmpty(t, want)
		require.Equal(t, want, got)
		tentries, err := ti.AppendEntries(nil)
		require.NoError(t, err)
		require.Len(t, tentries, len(want), "a time entry with every offset entry (timestamps increase here)")

		// Reads from every offset return the batch holding it first.
		all := bytes.Join(batches, nil)
		for off := int64(100); off < 200; off += 7 {
			b := readAll(t, s, off)
			first := int((off - 100) / 5)
			require.Equal(t, bytes.Join(batches[first:], nil), b, "read from %d", off)
		}
		require.Equal(t, all, readAll(t, s, 0), "below the base offset reads from the start")
		sl, err := s.Read(200, 1<<20, s.Size(), true)
		require.NoError(t, err)
		require.Nil(t, sl, "nothing at or after the next offset")

		// maxBytes bounds the slice to whole batches; minOneBatch lets one
		// through that is larger than maxBytes.
		one := len(batches[0])
		sl, err = s.Read(100, 2*one+10, s.Size(), false)
		require.NoError(t, err)
		require.Equal(t, int64(2*one), sl.Size)
		require.Equal(t, int64(100), sl.FirstOffset)
		require.Equal(t, int64(109), sl.LastOffset)
		sl.Release()
		sl, err = s.Read(100, 10, s.Size(), false)
		require.NoError(t, err)
		require.Nil(t, sl)
		sl, err = s.Read(100, 10, s.Size(), true)
		require.NoError(t, err)
		require.Equal(t, int64(one), sl.Size)
		sl.Release()
		// maxPosition (the high watermark's position) stops the read.
		sl, err = s.Read(100, 1<<20, int64(3*one), false)
		require.NoError(t, err)
		require.Equal(t, int64(3*one), sl.Size)
		sl.Release()
	})
}

func TestSealTrimsAndReopen(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		cfg := testConfig()
		s := create(t, e, 0, cfg)
		batches := fill(t, s, 0, 30, 4, 80, 1700000000000)
		require.Equal(t, int64(cfg.MaxIndexBytes), fileSize(t, e, path(e, 0, IndexSuffix)), "active index is preallocated")
		require.NoError(t, s.Seal())
		oi, ti, err := s.indexes()
		require.NoError(t, err)
		require.Equal(t, int64(oi.Entries()*8), fileSize(t, e, path(e, 0, IndexSuffix)), "sealed index trimmed")
		require.Equal(t, int64(ti.Entries()*12), fileSize(t, e, path(e, 0, TimeIndexSuffix)), "sealed time index trimmed")
		last := ti.LastEntry()
		require.Equal(t, header(t, batches[29]).MaxTimestamp, last.Timestamp, "the final time entry is the segment's max timestamp")
		require.Equal(t, int64(119), last.Offset)
		require.NoError(t, s.Flush())
		require.NoError(t, s.Close())

		// Inactive: indexes open on first use; the next offset is scanned.
		r, err := Open(e.fs, e.dir, 0, cfg, OpenOptions{})
		require.NoError(t, err)
		next, err := r.NextOffset()
		require.NoError(t, err)
		require.Equal(t, int64(120), next)
		require.Equal(t, bytes.Join(batches[10:], nil), readAll(t, r, 41))
		require.NoError(t, r.Close())

		// Active: appends continue after the last batch.
		a, err := Open(e.fs, e.dir, 0, cfg, OpenOptions{Active: true})
		require.NoError(t, err)
		more := batchAt(t, 120, 3, 10, 1800000000000)
		require.NoError(t, a.Append(more, header(t, more)))
		maxTS, err := a.MaxTimestamp()
		require.NoError(t, err)
		require.Equal(t, header(t, more).MaxTimestamp, maxTS)
		old := batchAt(t, 100, 1, 10, 0)
		require.ErrorIs(t, a.Append(old, header(t, old)), ErrOffsetOrder)
		require.NoError(t, a.Close())
	})
}

func TestFindOffsetByTimestamp(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		defer s.Close()
		// batch i holds offsets 5i..5i+4 with timestamps 1000+10i .. +4
		fill(t, s, 0, 40, 5, 100, 1000)
		tests := []struct {
			ts, start int64
			want      TimestampOffset
			ok        bool
		}{
			{0, 0, TimestampOffset{1000, 0}, true},
			{1000, 0, TimestampOffset{1000, 0}, true},
			{1003, 0, TimestampOffset{1003, 3}, true},
			{1005, 0, TimestampOffset{1010, 5}, true},
			{1200, 0, TimestampOffset{1200, 100}, true},
			{1394, 0, TimestampOffset{1394, 199}, true},
			{1395, 0, TimestampOffset{}, false},
			{1000, 57, TimestampOffset{1112, 57}, true},
		}
		for _, tc := range tests {
			got, ok, err := s.FindOffsetByTimestamp(tc.ts, tc.start)
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok, "ts %d", tc.ts)
			require.Equal(t, tc.want, got, "ts %d start %d", tc.ts, tc.start)
		}
	})
}

// TestFindOffsetByTimestampSeesMarkers: the search looks at every batch,
// transaction markers too, as Kafka's FileRecords.searchForTimestamp does:
// a marker whose timestamp is at or after the target answers with its
// offset and its record's timestamp (a marker's only record has the
// batch's timestamp), also when it is the only record that late and when
// records after it are earlier.
func TestFindOffsetByTimestampSeesMarkers(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		defer s.Close()
		fill(t, s, 0, 40, 5, 100, 1000) // offsets 0..199, timestamps 1000..1394
		marker, err := record.AppendEndTxnMarkerBatch(nil, 200, 0, 5, 0, 2000, record.EndTxnMarker{Type: record.ControlCommit})
		require.NoError(t, err)
		require.NoError(t, s.Append(marker, header(t, marker)))
		after := batchAt(t, 201, 5, 10, 1400) // offsets 201..205, timestamps 1400..1404
		require.NoError(t, s.Append(after, header(t, after)))
		tests := []struct {
			ts, start int64
			want      TimestampOffset
			ok        bool
		}{
			{1395, 0, TimestampOffset{2000, 200}, true},
			{2000, 0, TimestampOffset{2000, 200}, true},
			{2001, 0, TimestampOffset{}, false},
			{1395, 200, TimestampOffset{2000, 200}, true},
			{1395, 201, TimestampOffset{1400, 201}, true},
			{1394, 0, TimestampOffset{1394, 199}, true},
		}
		for _, tc := range tests {
			got, ok, err := s.FindOffsetByTimestamp(tc.ts, tc.start)
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok, "ts %d start %d", tc.ts, tc.start)
			require.Equal(t, tc.want, got, "ts %d start %d", tc.ts, tc.start)
		}
	})
}

func TestTruncateTo(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		defer s.Close()
		batches := fill(t, s, 0, 20, 5, 100, 1000)
		size := s.Size()
		n, err := s.TruncateTo(52) // inside batch 10 (offsets 50-54): the whole batch goes
		require.NoError(t, err)
		kept := int64(len(bytes.Join(batches[:10], nil)))
		require.Equal(t, size-kept, n)
		require.Equal(t, kept, s.Size())
		next, err := s.NextOffset()
		require.NoError(t, err)
		require.Equal(t, int64(50), next)
		maxTS, err := s.MaxTimestamp()
		require.NoError(t, err)
		require.Equal(t, header(t, batches[9]).MaxTimestamp, maxTS)
		oi, ti, err := s.indexes()
		require.NoError(t, err)
		require.Less(t, oi.LastOffset(), int64(52))
		require.Less(t, ti.LastEntry().Offset, int64(52))
		again := batchAt(t, 50, 5, 100, 2000)
		require.NoError(t, s.Append(again, header(t, again)))
		require.Equal(t, append(bytes.Join(batches[:10], nil), again...), readAll(t, s, 0))
		n, err = s.TruncateTo(1000)
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = s.TruncateTo(0)
		require.NoError(t, err)
		require.Zero(t, s.Size())
		require.Equal(t, int64(len(bytes.Join(batches[:10], nil))+len(again)), n)
	})
}

func TestShouldRoll(t *testing.T) {
	e := fsKinds(t)[1]
	clock := &fixedClock{now: testStart}
	cfg := testConfig()
	cfg.Now = clock.Now
	s, err := Create(e.fs, e.dir, 1000, cfg, time.Minute)
	require.NoError(t, err)
	defer s.Close()
	base := RollParams{BatchBytes: 100, MaxTimestamp: -1, LastOffset: 1000, SegmentBytes: 1 << 20, SegmentTime: time.Hour, Now: testStart}
	roll := func(p RollParams) bool {
		ok, err := s.ShouldRoll(p)
		require.NoError(t, err)
		return ok
	}
	require.False(t, roll(base), "empty segment")
	p := base
	p.Now = testStart.Add(48 * time.Hour)
	require.False(t, roll(p), "an empty segment never rolls by time")

	b := batchAt(t, 1000, 1, 10, -1) // no timestamps: time counts from creation
	h := header(t, b)
	require.NoError(t, s.Append(b, h))
	p = base
	p.Now = testStart.Add(59*time.Minute + time.Millisecond)
	require.True(t, roll(p), "past segment.ms less the one-minute jitter")
	p.Now = testStart.Add(59 * time.Minute)
	require.False(t, roll(p), "Kafka rolls only once the wait is strictly longer")
	p.Now = testStart.Add(-time.Hour)
	require.False(t, roll(p), "a clock that went backwards does not roll")

	p = base
	p.SegmentBytes = s.Size() + 99
	require.True(t, roll(p), "the batch would pass segment.bytes")
	p.SegmentBytes = s.Size() + 100
	require.False(t, roll(p))

	p = base
	p.LastOffset = 1000 + 1<<31
	require.True(t, roll(p), "relative offset overflow")
}

func TestShouldRollByTimestamp(t *testing.T) {
	e := fsKinds(t)[1]
	s := create(t, e, 0, testConfig())
	defer s.Close()
	b := batchAt(t, 0, 1, 10, 1_000_000)
	require.NoError(t, s.Append(b, header(t, b)))
	p := RollParams{BatchBytes: 10, LastOffset: 1, SegmentBytes: 1 << 20, SegmentTime: time.Second, Now: testStart.Add(1000 * time.Hour)}
	p.MaxTimestamp = 1_001_000
	ok, err := s.ShouldRoll(p)
	require.NoError(t, err)
	require.False(t, ok, "timestamps, not the clock, measure the wait when the first batch has one")
	p.MaxTimestamp = 1_001_001
	ok, err = s.ShouldRoll(p)
	require.NoError(t, err)
	require.True(t, ok)
}

func TestIndexFullRolls(t *testing.T) {
	e := fsKinds(t)[1]
	cfg := testConfig()
	cfg.IndexIntervalBytes = 1
	cfg.MaxIndexBytes = 4 * 12 // 4 offset entries (6 slots), 4 time entries
	s := create(t, e, 0, cfg)
	defer s.Close()
	p := RollParams{BatchBytes: 10, LastOffset: 100, SegmentBytes: 1 << 20, SegmentTime: time.Hour, Now: testStart}
	for i := int64(0); ; i++ {
		ok, err := s.ShouldRoll(p)
		require.NoError(t, err)
		if ok {
			break
		}
		require.Less(t, i, int64(10), "the time index fills after 3 entries (one slot is reserved)")
		b := batchAt(t, i, 1, 10, 1000+i)
		require.NoError(t, s.Append(b, header(t, b)))
	}
	_, ti, err := s.indexes()
	require.NoError(t, err)
	require.Equal(t, ti.MaxEntries()-1, ti.Entries())
}

func TestOpenMissingIndexes(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		batches := fill(t, s, 0, 10, 5, 200, 1000)
		require.NoError(t, s.Close())

		require.NoError(t, e.fs.Remove(path(e, 0, TimeIndexSuffix)))
		r, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{})
		require.NoError(t, err, "a missing .timeindex is created empty")
		require.Equal(t, int64(0), fileSize(t, e, path(e, 0, TimeIndexSuffix)))
		require.NoError(t, r.Close())

		// The active segment's missing .index needs recovery.
		require.NoError(t, e.fs.Remove(path(e, 0, IndexSuffix)))
		r, err = Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
		require.ErrorIs(t, err, fs.ErrNotExist, "a missing .index needs recovery")
		res, err := r.Recover(RecoverOptions{})
		require.NoError(t, err)
		require.Equal(t, 10, res.Batches)
		require.Zero(t, res.TruncatedBytes)
		require.Equal(t, bytes.Join(batches, nil), readAll(t, r, 0))
		oi, _, err := r.indexes()
		require.NoError(t, err)
		require.Positive(t, oi.Entries())
		entries := oi.Entries()
		require.NoError(t, r.Close())

		// An inactive segment's is rebuilt on first use.
		require.NoError(t, e.fs.Remove(path(e, 0, IndexSuffix)))
		cfg := testConfig()
		var rebuilt []string
		cfg.OnIndexRebuild = func(file string, cause error) {
			require.ErrorIs(t, cause, fs.ErrNotExist)
			rebuilt = append(rebuilt, file)
		}
		r, err = Open(e.fs, e.dir, 0, cfg, OpenOptions{})
		require.NoError(t, err)
		require.Equal(t, bytes.Join(batches, nil), readAll(t, r, 0))
		require.Equal(t, []string{r.LogFile()}, rebuilt)
		oi, _, err = r.indexes()
		require.NoError(t, err)
		require.Equal(t, entries, oi.Entries())
		require.NoError(t, r.Close())
	})
}

func TestCorruptIndexIsRebuilt(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		batches := fill(t, s, 0, 10, 5, 200, 1000)
		oi, _, err := s.indexes()
		require.NoError(t, err)
		entries := oi.Entries()
		require.GreaterOrEqual(t, entries, 2)
		require.NoError(t, s.Close())
		overwrite := func(n int, entry []byte) {
			f, err := e.fs.OpenReadWrite(path(e, 0, IndexSuffix))
			require.NoError(t, err)
			_, err = f.WriteAt(entry, int64(8*n))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}

		// The last entry points past the end of the .log: found on open.
		overwrite(entries-1, []byte{0, 0, 0, 49, 0x7f, 0, 0, 0})
		r, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
		require.ErrorIs(t, err, index.ErrCorruptIndex)
		res, err := r.Recover(RecoverOptions{})
		require.NoError(t, err)
		require.Equal(t, int64(50), res.NextOffset)
		require.Equal(t, bytes.Join(batches[3:], nil), readAll(t, r, 17))
		oi, _, err = r.indexes()
		require.NoError(t, err)
		last, err := oi.Entry(oi.Entries() - 1)
		require.NoError(t, err)
		require.NoError(t, r.Close())

		// An entry whose position holds a batch with another last offset:
		// in the active segment, found by the read that uses it, never
		// served; in an inactive one, the read rebuilds the index.
		bad := []byte{0, 0, 0, byte(last.Offset - 1), byte(last.Position >> 24), byte(last.Position >> 16), byte(last.Position >> 8), byte(last.Position)}
		overwrite(0, bad)
		r, err = Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
		require.NoError(t, err, "only the last entry is checked on open")
		_, err = r.Read(last.Offset-1, 1<<20, r.Size(), true)
		require.ErrorIs(t, err, index.ErrCorruptIndex)
		require.NoError(t, r.Close())

		overwrite(0, bad)
		cfg := testConfig()
		rebuilds := 0
		cfg.OnIndexRebuild = func(_ string, cause error) {
			require.ErrorIs(t, cause, index.ErrCorruptIndex)
			rebuilds++
		}
		r, err = Open(e.fs, e.dir, 0, cfg, OpenOptions{})
		require.NoError(t, err)
		sl, err := r.Read(last.Offset-1, 1<<20, r.Size(), true)
		require.NoError(t, err)
		require.LessOrEqual(t, sl.FirstOffset, last.Offset-1, "the read is answered")
		require.GreaterOrEqual(t, sl.LastOffset, last.Offset-1)
		sl.Release()
		require.Equal(t, bytes.Join(batches, nil), readAll(t, r, 0))
		require.Equal(t, 1, rebuilds)
		checkIndexes(t, r)
		require.NoError(t, r.Close())
	})
}

func TestAppendErrors(t *testing.T) {
	e := fsKinds(t)[1]
	s := create(t, e, 100, testConfig())
	defer s.Close()
	below := batchAt(t, 99, 1, 1, 0)
	require.ErrorIs(t, s.Append(below, header(t, below)), ErrOffsetOverflow)
	far := batchAt(t, 100+1<<31, 1, 1, 0)
	require.ErrorIs(t, s.Append(far, header(t, far)), ErrOffsetOverflow)
	ok := batchAt(t, 100, 2, 1, 0)
	require.Error(t, s.Append(ok[:len(ok)-1], header(t, ok)), "length disagrees with the header")
	require.NoError(t, s.Append(ok, header(t, ok)))
	require.ErrorIs(t, s.Append(ok, header(t, ok)), ErrOffsetOrder)
	var se *Error
	require.ErrorAs(t, s.Append(ok, header(t, ok)), &se)
	require.Equal(t, s.LogFile(), se.File)
	require.Equal(t, int64(len(ok)), se.Position)
}

func TestDeletionWaitsForReaders(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		batches := fill(t, s, 0, 5, 5, 100, 1000)
		sl, err := s.Read(0, 1<<20, s.Size(), true)
		require.NoError(t, err)
		require.NoError(t, s.RenameForDeletion())
		_, err = e.fs.Stat(path(e, 0, LogSuffix) + DeletedSuffix)
		require.NoError(t, err)
		_, err = e.fs.Stat(path(e, 0, LogSuffix))
		require.ErrorIs(t, err, fs.ErrNotExist)

		require.NoError(t, s.Remove())
		_, err = e.fs.Stat(path(e, 0, LogSuffix) + DeletedSuffix)
		require.NoError(t, err, "a live slice keeps the files")
		b, err := sl.Bytes(nil)
		require.NoError(t, err)
		require.Equal(t, bytes.Join(batches, nil), b, "and can still read them")
		_, err = s.Read(0, 1<<20, s.Size(), true)
		require.ErrorIs(t, err, ErrClosed)

		sl.Release()
		sl.Release()
		for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
			_, err = e.fs.Stat(path(e, 0, suffix) + DeletedSuffix)
			require.ErrorIs(t, err, fs.ErrNotExist, suffix)
		}
	})
}

func TestTxnIndex(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		fill(t, s, 0, 4, 5, 10, 1000)
		txns, done, err := s.AppendAbortedTxns(nil, 0, 100)
		require.NoError(t, err)
		require.Empty(t, txns)
		require.False(t, done)
		_, err = e.fs.Stat(path(e, 0, TxnIndexSuffix))
		require.ErrorIs(t, err, fs.ErrNotExist, "created at the first entry only")
		abort := index.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 12, LastStableOffset: 13}
		require.NoError(t, s.AppendAbortedTxn(abort))
		txns, _, err = s.AppendAbortedTxns(nil, 0, 100)
		require.NoError(t, err)
		require.Equal(t, []index.AbortedTxn{abort}, txns)
		require.NoError(t, s.Close())

		r, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
		require.NoError(t, err)
		_, err = r.TruncateTo(10)
		require.NoError(t, err)
		txns, _, err = r.AppendAbortedTxns(nil, 0, 100)
		require.NoError(t, err)
		require.Empty(t, txns, "truncation removes aborts ending at or past the new end")
		require.NoError(t, r.Close())
	})
}

func TestClosedSegment(t *testing.T) {
	e := fsKinds(t)[1]
	s := create(t, e, 0, testConfig())
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close returns nil")
	_, err := s.Read(0, 100, 100, true)
	require.True(t, errors.Is(err, ErrClosed))
	require.ErrorIs(t, s.AppendAbortedTxn(index.AbortedTxn{}), ErrClosed)
}

func TestSliceWriteToAndReadAt(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		defer s.Close()
		batches := fill(t, s, 0, 6, 3, 50, 1000)
		sl, err := s.Read(3, 1<<20, s.Size(), true)
		require.NoError(t, err)
		defer sl.Release()
		var buf bytes.Buffer
		n, err := sl.WriteTo(&buf)
		require.NoError(t, err)
		require.Equal(t, sl.Size, n)
		require.Equal(t, bytes.Join(batches[1:], nil), buf.Bytes())
		p := make([]byte, 10)
		got, err := sl.ReadAt(p, sl.Size-5)
		require.Equal(t, 5, got)
		require.ErrorIs(t, err, io.EOF)
		_, err = sl.ReadAt(p, sl.Size)
		require.ErrorIs(t, err, io.EOF)
	})
}

func TestSliceBatches(t *testing.T) {
	e := fsKinds(t)[1]
	s := create(t, e, 0, testConfig())
	defer s.Close()
	batches := fill(t, s, 0, 4, 3, 20, 1000)
	sl, err := s.Read(4, 1<<20, s.Size(), true)
	require.NoError(t, err)
	defer sl.Release()
	var bases []int64
	var got [][]byte
	_, err = sl.Batches(nil, func(h *record.BatchHeader, b []byte) error {
		bases = append(bases, h.BaseOffset)
		got = append(got, bytes.Clone(b))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 6, 9}, bases)
	require.Equal(t, batches[1:], got)
}

// TestPublishBoundsReadableSize: an Append is invisible until Publish,
// from the first one on; once published, a segment is readable up to the
// size at the last Publish, never past a truncation; a segment opened
// again is readable up to the size it was opened with.
func TestPublishBoundsReadableSize(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s, b1, b2 := twoBatches(t, e)

		require.NoError(t, s.Append(b1, header(t, b1)))
		require.Zero(t, hooks.ReadableSize(s), "not published yet")

		hooks.Publish(s)
		require.Equal(t, int64(len(b1)), hooks.ReadableSize(s))
		require.NoError(t, s.Append(b2, header(t, b2)))
		require.Equal(t, int64(len(b1)), hooks.ReadableSize(s), "the second batch is not published yet")
		require.Equal(t, int64(len(b1)+len(b2)), s.Size())

		hooks.Publish(s)
		require.Equal(t, int64(len(b1)+len(b2)), hooks.ReadableSize(s))

		_, err := s.TruncateTo(2)
		require.NoError(t, err)
		require.Equal(t, int64(len(b1)), hooks.ReadableSize(s), "a truncation lowers the bound before the next Publish")
		require.NoError(t, s.Close())

		s, err = Open(e.fs, e.dir, 0, testConfig(), OpenOptions{})
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Close()) }()
		require.Equal(t, int64(len(b1)), hooks.ReadableSize(s), "opened: readable up to its size")
		require.NoError(t, s.Append(b2, header(t, b2)))
		require.Equal(t, int64(len(b1)), hooks.ReadableSize(s), "the append is not published yet")
	})
}

// TestSliceReadAfterCut: a slice held across a truncation that cut its
// bytes reports ErrCutUnderRead instead of a short read that a caller
// could take for data (a point reader reusing a buffer once returned a
// stale batch that way).
func TestSliceReadAfterCut(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s, b1, b2 := twoBatches(t, e)
		require.NoError(t, s.Append(b1, header(t, b1)))
		require.NoError(t, s.Append(b2, header(t, b2)))
		sl, err := s.Read(0, 1<<20, s.Size(), true)
		require.NoError(t, err)
		defer sl.Release()
		require.Equal(t, int64(len(b1)+len(b2)), sl.Size)

		_, err = s.TruncateTo(2)
		require.NoError(t, err)

		buf := make([]byte, sl.Size)
		n, err := sl.ReadAt(buf, 0)
		require.ErrorIs(t, err, ErrCutUnderRead)
		require.Equal(t, len(b1), n, "the bytes before the cut are read")
		var se *Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, int64(len(b1)), se.Position)

		out, err := sl.Bytes([]byte("x"))
		require.ErrorIs(t, err, ErrCutUnderRead)
		require.Equal(t, []byte("x"), out, "Bytes leaves dst as it was")

		// Past the slice's end is io.EOF, as io.ReaderAt says.
		_, err = sl.ReadAt(make([]byte, 4), sl.Size)
		require.ErrorIs(t, err, io.EOF)
	})
}

// twoBatches creates a segment, closed by the test's cleanup, and two
// batches of two records (offsets 0-1 and 2-3) not yet appended.
func twoBatches(t *testing.T, e testFS) (s *Segment, b1, b2 []byte) {
	s = create(t, e, 0, testConfig())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, batchAt(t, 0, 2, 10, 1000), batchAt(t, 2, 2, 10, 1000)
}

// TestSliceCutAt: a slice cut at an offset keeps the batches whose base
// offset is below it, and WriteTo, Bytes and LastOffset follow; a cut at or
// below the first batch leaves it empty, one past the last changes
// nothing; a slice whose bytes were truncated under it fails with
// ErrCutUnderRead and stays as it was.
func TestSliceCutAt(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		defer s.Close()
		batches := fill(t, s, 0, 6, 3, 50, 1000) // offsets 0-17, 3 a batch
		for _, tc := range []struct {
			cut  int64
			keep int // batches kept, of the five read from offset 3
		}{{3, 0}, {2, 0}, {4, 1}, {6, 1}, {7, 2}, {15, 4}, {16, 5}, {18, 5}, {100, 5}} {
			sl, err := s.Read(3, 1<<20, s.Size(), true)
			require.NoError(t, err)
			require.NoError(t, sl.CutAt(tc.cut), "cut at %d", tc.cut)
			want := bytes.Join(batches[1:1+tc.keep], nil)
			require.Equal(t, int64(len(want)), sl.Size, "cut at %d", tc.cut)
			if tc.keep > 0 {
				require.Equal(t, int64(3+3*tc.keep-1), sl.LastOffset, "cut at %d", tc.cut)
			}
			var buf bytes.Buffer
			_, err = sl.WriteTo(&buf)
			require.NoError(t, err)
			require.Equal(t, want, append([]byte{}, buf.Bytes()...), "cut at %d", tc.cut)
			sl.Release()
			require.ErrorIs(t, sl.CutAt(tc.cut), ErrClosed)
		}

		sl, err := s.Read(0, 1<<20, s.Size(), true)
		require.NoError(t, err)
		defer sl.Release()
		size, last := sl.Size, sl.LastOffset
		_, err = s.TruncateTo(6)
		require.NoError(t, err)
		require.ErrorIs(t, sl.CutAt(17), ErrCutUnderRead)
		require.Equal(t, size, sl.Size, "a failed cut leaves the slice")
		require.Equal(t, last, sl.LastOffset)
	})
}

// TestCreateFailureLeavesNoFiles: a Create that fails on any of its files
// (as a process out of file descriptors fails) removes what it made, so
// that a Create of the same base offset succeeds once the cause is gone.
func TestCreateFailureLeavesNoFiles(t *testing.T) {
	for _, tc := range []struct {
		op     vfs.Op
		suffix string
		err    error
	}{
		{vfs.OpCreate, LogSuffix, syscall.EMFILE},
		{vfs.OpCreate, IndexSuffix, syscall.EMFILE},
		{vfs.OpCreate, TimeIndexSuffix, syscall.EMFILE},
		{vfs.OpTruncate, IndexSuffix, syscall.ENOSPC},
		{vfs.OpTruncate, TimeIndexSuffix, syscall.ENOSPC},
	} {
		// The rule matches the file's suffix (the test's directory holds
		// the test's name).
		rule := vfs.Rule{Op: tc.op, Err: tc.err, Match: func(_ vfs.Op, p string) bool { return strings.HasSuffix(p, tc.suffix) }}
		t.Run(tc.op.String()+tc.suffix, func(t *testing.T) {
			forEachFS(t, func(t *testing.T, e testFS) {
				ffs := vfs.NewFaultFS(e.fs)
				ffs.Inject(rule)
				_, err := Create(ffs, e.dir, 40, testConfig(), 0)
				require.ErrorIs(t, err, rule.Err)
				names, err := e.fs.List(e.dir)
				require.NoError(t, err)
				require.Empty(t, names, "the files of a failed Create")
				ffs.Clear()
				s, err := Create(ffs, e.dir, 40, testConfig(), 0)
				require.NoError(t, err)
				require.NoError(t, s.Close())
			})
		})
	}
}
