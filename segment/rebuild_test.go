package segment

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// sealedSegment writes a sealed segment of 10 batches at base 0 in e, its
// files synced (as after a clean shutdown), and returns the batches.
func sealedSegment(t *testing.T, e testFS) [][]byte {
	t.Helper()
	s := create(t, e, 0, testConfig())
	batches := fill(t, s, 0, 10, 5, 200, 1000)
	require.NoError(t, s.Seal())
	require.NoError(t, s.Flush())
	require.NoError(t, s.Close())
	require.NoError(t, e.fs.SyncDir(e.dir))
	return batches
}

// appendByteTo damages a file by one byte more.
func appendByteTo(t *testing.T, fsys vfs.FS, name string) {
	t.Helper()
	f, err := fsys.OpenReadWrite(name)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{1}, size)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// TestIndexRebuildSurvivesACrash: a crash before any filesystem operation
// of a rebuild leaves a segment that opens and reads every batch: the old
// index (which is rebuilt again) or the complete new one, never a partial
// one. Leftover temporary files do not stop the next rebuild.
func TestIndexRebuildSurvivesACrash(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p-0"))
	require.NoError(t, mem.SyncDir("/"))
	e := testFS{fs: mem, dir: "/p-0", mem: mem}
	batches := sealedSegment(t, e)
	appendByteTo(t, mem, path(e, 0, IndexSuffix))
	want := bytes.Join(batches, nil)

	points := 0
	for crashAt := 1; ; crashAt++ {
		base := mem.CrashClone()
		ff := vfs.NewFaultFS(base)
		var crashed *vfs.MemFS
		n := 0
		ff.OnOp(func(vfs.Op, string) {
			if n++; n == crashAt {
				crashed = base.CrashClone()
			}
		})
		cfg := testConfig()
		rebuilds := 0
		cfg.OnIndexRebuild = func(string, error) { rebuilds++ }
		s, err := Open(ff, "/p-0", 0, cfg, OpenOptions{})
		require.NoError(t, err)
		require.Equal(t, want, readAll(t, s, 0))
		require.Equal(t, 1, rebuilds)
		require.NoError(t, s.Close())
		if crashed == nil {
			break // past the last operation
		}
		points++

		ce := testFS{fs: crashed, dir: "/p-0", mem: crashed}
		r, err := Open(crashed, "/p-0", 0, testConfig(), OpenOptions{})
		require.NoError(t, err, "crash at operation %d", crashAt)
		require.Equal(t, want, readAll(t, r, 0), "crash at operation %d", crashAt)
		checkIndexes(t, r)
		require.NoError(t, r.Close())
		require.Zero(t, fileSize(t, ce, path(ce, 0, IndexSuffix))%index.OffsetIndexEntryBytes)
	}
	require.Greater(t, points, 10, "the rebuild's operations were crashed")
}

// TestConcurrentReadsRebuildOnce: readers racing to the first use of a
// damaged index rebuild it once and all get their batches.
func TestConcurrentReadsRebuildOnce(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		batches := sealedSegment(t, e)
		appendByteTo(t, e.fs, path(e, 0, IndexSuffix))
		cfg := testConfig()
		var rebuilds atomic.Int32
		cfg.OnIndexRebuild = func(string, error) { rebuilds.Add(1) }
		s, err := Open(e.fs, e.dir, 0, cfg, OpenOptions{})
		require.NoError(t, err)
		defer s.Close()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for g := range errs {
			wg.Go(func() {
				off := int64(g * 5)
				sl, err := s.Read(off, 1, s.Size(), true)
				if err == nil {
					b, berr := sl.Bytes(nil)
					if berr == nil && !bytes.Equal(b, batches[g]) {
						berr = fmt.Errorf("read %d: another batch", off)
					}
					err = berr
					sl.Release()
				}
				errs[g] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, int32(1), rebuilds.Load())
	})
}

// TestVerifyCRC: a batch whose bytes were damaged fails VerifyCRC with a
// typed error naming file and position; a batch verified once is
// remembered; a cut of the .log forgets what was verified. The segment is
// opened afresh after it was written, as by another process, so that it
// remembers none of its appends (TestVerifyCRCOfAppends).
func TestVerifyCRC(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		w := create(t, e, 0, testConfig())
		fill(t, w, 0, 4, 5, 200, 1000)
		require.NoError(t, w.Close())
		s, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
		require.NoError(t, err)
		defer s.Close()
		flip := flipper(t, e, s)
		verify := func(off int64) (*Slice, error) {
			sl, err := s.Read(off, 1, s.Size(), true)
			require.NoError(t, err)
			defer sl.Release()
			return sl, sl.VerifyCRC()
		}
		sl, err := verify(10)
		require.NoError(t, err)
		pos2 := sl.Position
		sl, err = s.Read(15, 1, s.Size(), true)
		require.NoError(t, err)
		pos, size := sl.Position, sl.Size
		sl.Release()

		// Damage found, typed, and never remembered as verified.
		flip(pos + size - 3)
		_, err = verify(15)
		require.ErrorIs(t, err, record.ErrCRC)
		require.ErrorIs(t, err, record.ErrCorrupt)
		var se *Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, s.LogFile(), se.File)
		require.Equal(t, pos, se.Position)
		_, err = verify(15)
		require.ErrorIs(t, err, record.ErrCRC, "a failed batch is never remembered")
		flip(pos + size - 3) // repaired
		_, err = verify(15)
		require.NoError(t, err)

		// A verified batch is remembered: its bytes are not read again.
		flip(pos2 + 70)
		_, err = verify(10)
		require.NoError(t, err, "batch 2 was verified before")

		// A cut forgets what was verified before it, below the cut too.
		_, err = s.TruncateTo(15)
		require.NoError(t, err)
		_, err = verify(10)
		require.ErrorIs(t, err, record.ErrCRC, "the cut forgot the batch verified before it")
	})
}

// TestVerifyCRCOfAppends: the batches a segment appended count as
// verified in the process that appended them (VerifyCRC's doc says what
// that leaves to ReadRecords and the next process); the table survives
// its growth as the segment grows; sealing drops it unless point reads
// used it; a segment opened afresh verifies the bytes.
func TestVerifyCRCOfAppends(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		batches := fill(t, s, 0, 1, 5, 200, 1000)
		early := s.log.crcs.Load()
		batches = append(batches, fill(t, s, 5, 200, 5, 200, 1000)...)
		require.NotSame(t, early, s.log.crcs.Load(), "the table was made again as the segment grew")
		flip := flipper(t, e, s)
		verify := func(s *Segment, off int64) error {
			sl, err := s.Read(off, 1, s.Size(), true)
			require.NoError(t, err)
			defer sl.Release()
			return sl.VerifyCRC()
		}
		first := int64(record.BatchHeaderLen + 20)
		flip(first)
		require.NoError(t, verify(s, 0), "the first batch, appended here, is remembered across the growths")

		// Sealed without a point read, the segment forgets its appends.
		u := create(t, e, 1000, testConfig())
		fill(t, u, 1000, 3, 5, 200, 1000)
		require.NotNil(t, u.log.crcs.Load())
		require.NoError(t, u.Seal())
		require.Nil(t, u.log.crcs.Load(), "no point read used the table")
		require.NoError(t, u.Close())
		// Sealed after one, it keeps them.
		require.NoError(t, s.Seal())
		require.NotNil(t, s.log.crcs.Load())
		require.NoError(t, verify(s, 0))
		require.NoError(t, s.Close())

		r, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{})
		require.NoError(t, err)
		defer r.Close()
		require.ErrorIs(t, verify(r, 0), record.ErrCRC, "opened afresh, the damage is found")
		require.NoError(t, verify(r, int64(len(batches)-1)*5))
	})
}

// TestMarksOfAppends: marks given for appended batches survive the
// table's growth and are dropped with the table when the segment is
// sealed unused; marks a point read used stay.
func TestMarksOfAppends(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		s := create(t, e, 0, testConfig())
		defer s.Close()
		m := &BatchMarks{Step: 16, Pos: []int32{0, 100}, N: []int32{0, 16}}
		fill(t, s, 0, 1, 5, 200, 1000)
		hooks.RememberMarks(s, 0, m)
		early := s.log.marks.Load()
		fill(t, s, 5, 200, 5, 200, 1000)
		sl, err := s.Read(0, 1, s.Size(), true)
		require.NoError(t, err)
		require.Same(t, m, hooks.Marks(sl), "kept across the table's growths")
		require.NotSame(t, early, s.log.marks.Load(), "the table was made again as the segment grew")
		sl.Release()
		require.NoError(t, s.Seal())
		require.NotNil(t, s.log.marks.Load(), "a point read used it")

		u := create(t, e, 1000, testConfig())
		defer u.Close()
		fill(t, u, 1000, 1, 5, 200, 1000)
		hooks.RememberMarks(u, 0, m)
		require.NoError(t, u.Seal())
		require.Nil(t, u.log.marks.Load(), "sealed unread")
	})
}

// flipper returns a function that flips a bit of the byte at a position
// of s's .log, through the filesystem.
func flipper(t *testing.T, e testFS, s *Segment) func(pos int64) {
	return func(pos int64) {
		f, err := e.fs.OpenReadWrite(s.LogFile())
		require.NoError(t, err)
		b := make([]byte, 1)
		_, err = f.ReadAt(b, pos)
		require.NoError(t, err)
		b[0] ^= 0x20
		_, err = f.WriteAt(b, pos)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
}
