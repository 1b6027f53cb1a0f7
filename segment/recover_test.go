package segment

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// writeLog writes raw bytes as the .log of a segment at base 0, with no
// index files, and opens it for recovery.
func recoverRaw(t *testing.T, e testFS, data []byte) (*Segment, RecoverResult, error) {
	t.Helper()
	_ = e.fs.Remove(path(e, 0, IndexSuffix))
	_ = e.fs.Remove(path(e, 0, TimeIndexSuffix))
	_ = e.fs.Remove(path(e, 0, LogSuffix))
	writeFile(t, e.fs, path(e, 0, LogSuffix), data)
	s, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
	require.Error(t, err, "no .index: recovery needed")
	res, rerr := s.Recover(RecoverOptions{})
	return s, res, rerr
}

// writeFile creates the file name in fsys holding data.
func writeFile(t testing.TB, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// checkIndexes verifies that every index entry points at a batch start whose
// last offset it names, entries increase, and time entries are monotonic.
func checkIndexes(t *testing.T, s *Segment) {
	t.Helper()
	oi, ti, err := s.indexes()
	require.NoError(t, err)
	entries, err := oi.AppendEntries(nil)
	require.NoError(t, err)
	sc := newScanner(s.log.f, s.Size(), 4096)
	starts := map[int64]int64{}
	for pos := int64(0); pos < s.Size(); {
		h, err := sc.header(pos)
		require.NoError(t, err)
		starts[pos] = h.LastOffset()
		pos += int64(h.Size())
	}
	prev := int64(-1)
	for _, e := range entries {
		last, ok := starts[int64(e.Position)]
		require.True(t, ok, "entry %v points at a batch start", e)
		require.Equal(t, last, e.Offset, "entry %v names its batch's last offset", e)
		require.Greater(t, e.Offset, prev)
		prev = e.Offset
	}
	tentries, err := ti.AppendEntries(nil)
	require.NoError(t, err)
	for i := 1; i < len(tentries); i++ {
		require.Greater(t, tentries[i].Timestamp, tentries[i-1].Timestamp)
		require.GreaterOrEqual(t, tentries[i].Offset, tentries[i-1].Offset)
	}
}

func TestRecoverTornTailAtEveryByte(t *testing.T) {
	e := fsKinds(t)[1]
	var valid []byte
	for i := range 8 {
		valid = append(valid, batchAt(t, int64(i*3), 3, 300, 1000+int64(i))...)
	}
	last := batchAt(t, 24, 3, 300, 2000)
	for cut := 0; cut < len(last); cut++ {
		s, res, err := recoverRaw(t, e, append(bytes.Clone(valid), last[:cut]...))
		require.NoError(t, err)
		require.Equal(t, int64(len(valid)), res.ValidBytes, "cut %d", cut)
		require.Equal(t, int64(cut), res.TruncatedBytes)
		require.Equal(t, int64(24), res.NextOffset)
		require.Equal(t, 8, res.Batches)
		if cut == 0 {
			require.NoError(t, res.Cause)
		} else {
			require.ErrorIs(t, res.Cause, record.ErrTruncated, "cut %d: a torn tail", cut)
			require.False(t, errors.Is(res.Cause, record.ErrCorrupt))
		}
		require.Equal(t, int64(len(valid)), fileSize(t, e, path(e, 0, LogSuffix)))
		require.Equal(t, valid, readAll(t, s, 0))
		checkIndexes(t, s)
		require.NoError(t, s.Close())
	}
}

func TestRecoverDamage(t *testing.T) {
	good := func(t *testing.T) [][]byte {
		var bs [][]byte
		for i := range 6 {
			bs = append(bs, batchAt(t, int64(i*4), 4, 400, 1000+int64(i)))
		}
		return bs
	}
	tests := []struct {
		name      string
		data      func(t *testing.T, bs [][]byte) []byte
		keep      int   // batches kept
		cause     error // what Cause matches
		legacyErr bool  // Recover fails instead
	}{
		{"clean", func(t *testing.T, bs [][]byte) []byte { return bytes.Join(bs, nil) }, 6, nil, false},
		{"zero-filled tail", func(t *testing.T, bs [][]byte) []byte {
			return append(bytes.Join(bs, nil), make([]byte, 4096)...)
		}, 6, record.ErrCorrupt, false},
		{"bad CRC in the middle", func(t *testing.T, bs [][]byte) []byte {
			bs[3][len(bs[3])-5] ^= 0x40
			return bytes.Join(bs, nil)
		}, 3, record.ErrCRC, false},
		{"garbage after batch 2", func(t *testing.T, bs [][]byte) []byte {
			return append(bytes.Join(bs[:2], nil), bytes.Repeat([]byte{0xa5}, 300)...)
		}, 2, record.ErrCorrupt, false},
		{"offsets go backwards", func(t *testing.T, bs [][]byte) []byte {
			require.NoError(t, record.SetBaseOffset(bs[4], 2))
			return bytes.Join(bs, nil)
		}, 4, ErrOffsetOrder, false},
		{"unknown magic", func(t *testing.T, bs [][]byte) []byte {
			bs[1][16] = 7
			return bytes.Join(bs, nil)
		}, 1, record.ErrUnsupportedMagic, false},
		{"legacy magic 1", func(t *testing.T, bs [][]byte) []byte {
			bs[2][16] = 1
			return bytes.Join(bs, nil)
		}, 2, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, e := range fsKinds(t) {
				bs := good(t)
				data := tc.data(t, bs)
				s, res, err := recoverRaw(t, e, data)
				kept := int64(len(bytes.Join(bs[:tc.keep], nil)))
				if tc.legacyErr {
					require.ErrorIs(t, err, ErrLegacyFormat)
					require.ErrorIs(t, err, record.ErrUnsupportedMagic)
					var se *Error
					require.ErrorAs(t, err, &se)
					require.Equal(t, kept, se.Position)
					require.Equal(t, s.LogFile(), se.File)
					require.Equal(t, int64(len(data)), fileSize(t, e, path(e, 0, LogSuffix)), "legacy data is never truncated")
					require.NoError(t, s.Close())
					continue
				}
				require.NoError(t, err)
				require.Equal(t, tc.keep, res.Batches)
				require.Equal(t, kept, res.ValidBytes)
				require.Equal(t, int64(len(data))-kept, res.TruncatedBytes)
				if tc.cause == nil {
					require.NoError(t, res.Cause)
				} else {
					require.ErrorIs(t, res.Cause, tc.cause)
					var se *Error
					require.ErrorAs(t, res.Cause, &se)
					require.Equal(t, kept, se.Position)
				}
				require.Equal(t, bytes.Join(bs[:tc.keep], nil), readAll(t, s, 0))
				checkIndexes(t, s)
				// The recovered segment takes appends where it ends.
				next := batchAt(t, int64(4*tc.keep), 1, 10, 5000)
				require.NoError(t, s.Append(next, header(t, next)))
				require.NoError(t, s.Close())
			}
		})
	}
}

// TestRecoverCallsOnBatch: the log rebuilds producer state from these calls.
func TestRecoverCallsOnBatch(t *testing.T) {
	e := fsKinds(t)[1]
	data := append(batchAt(t, 0, 2, 10, 1), batchAt(t, 2, 2, 10, 2)...)
	_, _, err := recoverRaw(t, e, data)
	require.NoError(t, err)
	s, err := Open(e.fs, e.dir, 0, testConfig(), OpenOptions{Active: true})
	require.NoError(t, err)
	var seen []int64
	_, err = s.Recover(RecoverOptions{OnBatch: func(pos int64, h *record.BatchHeader) error {
		seen = append(seen, pos, h.BaseOffset)
		return nil
	}})
	require.NoError(t, err)
	require.Equal(t, []int64{0, 0, int64(len(data) / 2), 2}, seen)
	boom := errors.New("boom")
	_, err = s.Recover(RecoverOptions{OnBatch: func(int64, *record.BatchHeader) error { return boom }})
	require.ErrorIs(t, err, boom)
	require.NoError(t, s.Close())
}

// TestCrashKeepsFlushedBatches: on the memory FS, a crash keeps exactly what
// was flushed; recovery of what survives gives a clean prefix.
func TestCrashKeepsFlushedBatches(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p-0"))
	require.NoError(t, mem.SyncDir("/"))
	e := testFS{name: "mem", fs: mem, dir: "/p-0", mem: mem}
	s := create(t, e, 0, testConfig())
	require.NoError(t, mem.SyncDir("/p-0"))
	durable := fill(t, s, 0, 10, 5, 100, 1000)
	require.NoError(t, s.Flush())
	fill(t, s, 50, 10, 5, 100, 2000) // never flushed

	crashed := mem.CrashClone()
	ce := testFS{name: "crashed", fs: crashed, dir: "/p-0", mem: crashed}
	r, err := Open(crashed, "/p-0", 0, testConfig(), OpenOptions{Active: true})
	if err == nil {
		t.Log("indexes survived the crash; recovering anyway as after an unclean shutdown")
	}
	res, err := r.Recover(RecoverOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(50), res.NextOffset)
	require.Equal(t, bytes.Join(durable, nil), readAll(t, r, 0))
	checkIndexes(t, r)
	require.Equal(t, int64(len(bytes.Join(durable, nil))), fileSize(t, ce, path(ce, 0, LogSuffix)))
	require.NoError(t, r.Close())
	require.NoError(t, s.Close())
}

// TestWriteFailure: a failed write is cut off, the segment refuses further
// appends, and reopening shows only the acknowledged batches.
func TestWriteFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule vfs.Rule
	}{
		{"ENOSPC", vfs.ENOSPC(vfs.OpWrite, ".log", 1)},
		{"EIO", vfs.EIO(vfs.OpWrite, ".log", 1)},
		{"torn", vfs.Rule{Op: vfs.OpWrite, Path: ".log", Nth: 1, Err: syscall.EIO, TornBytes: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			require.NoError(t, mem.MkdirAll("/p-0"))
			ffs := vfs.NewFaultFS(mem)
			e := testFS{fs: ffs, dir: "/p-0"}
			s := create(t, e, 0, testConfig())
			acked := fill(t, s, 0, 2, 5, 100, 1000)
			ffs.Inject(tc.rule)
			b := batchAt(t, 10, 5, 100, 3000)
			err := s.Append(b, header(t, b))
			require.ErrorIs(t, err, vfs.ErrInjected)
			require.Equal(t, int64(len(bytes.Join(acked, nil))), fileSize(t, e, path(e, 0, LogSuffix)), "the partial write is cut off")
			require.ErrorIs(t, s.Append(b, header(t, b)), ErrFailed, "sticky")
			require.Equal(t, bytes.Join(acked, nil), readAll(t, s, 0), "still readable")
			require.NoError(t, s.Close())

			r, err := Open(mem, "/p-0", 0, testConfig(), OpenOptions{Active: true})
			require.NoError(t, err)
			res, err := r.Recover(RecoverOptions{})
			require.NoError(t, err)
			require.Equal(t, int64(10), res.NextOffset)
			require.NoError(t, r.Append(b, header(t, b)))
			require.NoError(t, r.Close())
		})
	}
}

func TestPreallocatedLog(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		cfg := testConfig()
		cfg.Preallocate = true
		cfg.SegmentBytes = 1 << 20
		s := create(t, e, 0, cfg)
		require.Equal(t, int64(1<<20), fileSize(t, e, path(e, 0, LogSuffix)))
		batches := fill(t, s, 0, 5, 5, 100, 1000)
		require.NoError(t, s.Flush())
		// A crash now leaves the zero-filled tail: opening without recovery
		// reports it, recovery removes it.
		r, err := Open(e.fs, e.dir, 0, cfg, OpenOptions{Active: true})
		require.ErrorIs(t, err, record.ErrCorrupt)
		res, err := r.Recover(RecoverOptions{})
		require.NoError(t, err)
		require.Equal(t, int64(len(bytes.Join(batches, nil))), res.ValidBytes)
		require.ErrorIs(t, res.Cause, record.ErrCorrupt, "zeros read as a corrupt length, as in Kafka")
		require.NoError(t, r.Close())
		require.NoError(t, s.Close())
	})
}
