package segment

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

var errRefused = errors.New("the check refuses the batch")

// TestAppendOverlapped appends a first batch plainly and a second through
// AppendOverlapped, with one P and with two, and with one P where the
// goroutine cannot run before the check ends (the caller claims the
// write), with and without preallocation, on both filesystems. An accepted batch leaves the bytes and indexes of a plain
// Append; a refused one — by the check, or by the segment after it —
// leaves the file as it was, and the next batch goes where it would have.
func TestAppendOverlapped(t *testing.T) {
	tests := []struct {
		name string
		// check returns the check's answer for b2 (built at base offset
		// 0; a check may set the base offset); want is its error.
		check func(t *testing.T, b2 []byte) (record.BatchHeader, error)
		want  error
	}{
		{"accepted", func(t *testing.T, b2 []byte) (record.BatchHeader, error) {
			require.NoError(t, record.SetBaseOffset(b2, 3))
			return *header(t, b2), nil
		}, nil},
		{"refused by the check", func(t *testing.T, b2 []byte) (record.BatchHeader, error) {
			return record.BatchHeader{}, errRefused
		}, errRefused},
		{"refused by the segment", func(t *testing.T, b2 []byte) (record.BatchHeader, error) {
			return *header(t, b2), nil // base offset 0, below the next offset 3
		}, ErrOffsetOrder},
	}
	modes := []struct {
		name  string
		procs int
		claim bool // the caller claims the write
	}{{"procs=1", 1, false}, {"procs=2", 2, false}, {"claimed", 1, true}}
	for _, mode := range modes {
		for _, prealloc := range []bool{false, true} {
			for _, tc := range tests {
				t.Run(fmt.Sprintf("%s/%s/prealloc=%t", tc.name, mode.name, prealloc), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(mode.procs))
					if mode.claim {
						yieldToAhead = func() {}
						defer func() { yieldToAhead = runtime.Gosched }()
					}
					forEachFS(t, func(t *testing.T, e testFS) {
						cfg := testConfig()
						cfg.Preallocate, cfg.SegmentBytes = prealloc, 64<<10
						s := create(t, e, 0, cfg)
						b1, b2, b3 := batchAt(t, 0, 3, 50, 1000), batchAt(t, 0, 40, 50, 1000), batchAt(t, 43, 2, 50, 1000)
						require.NoError(t, s.Append(b1, header(t, b1)))
						hooks.Publish(s)

						err := hooks.AppendOverlapped(s, b2, func() (record.BatchHeader, error) {
							require.Equal(t, int64(len(b1)), s.Size(), "nothing is appended while the check runs")
							return tc.check(t, b2)
						})
						hooks.Publish(s)
						if mode.claim {
							require.Equal(t, 1, s.ahead.taken, "the caller claimed the write")
						}
						if tc.want == nil {
							require.NoError(t, err)
							require.Equal(t, append(bytes.Clone(b1), b2...), readAll(t, s, 0))
							require.NoError(t, s.Append(b3, header(t, b3)))
							require.NoError(t, s.Close())
							plain := plainTwin(t, cfg, b1, b2, b3)
							for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
								require.Equal(t, plain[suffix], readFile(t, e, path(e, 0, suffix)), "%s: the bytes of plain Appends", suffix)
							}
							return
						}
						if errors.Is(tc.want, errRefused) {
							require.Same(t, errRefused, err, "the check's error as it is")
						} else {
							require.ErrorIs(t, err, tc.want)
						}
						end := int64(len(b1))
						require.Equal(t, end, s.Size())
						if prealloc {
							require.Equal(t, cfg.SegmentBytes, fileSize(t, e, s.LogFile()), "a preallocated file keeps its size")
							tail := make([]byte, len(b2))
							_, err := s.log.f.ReadAt(tail, end)
							require.NoError(t, err)
							require.Equal(t, make([]byte, len(b2)), tail, "and zeros past its batches")
						} else {
							require.Equal(t, end, fileSize(t, e, s.LogFile()), "the file is cut back")
						}
						b3 = batchAt(t, 3, 2, 50, 1000)
						require.NoError(t, s.Append(b3, header(t, b3)), "the segment still appends")
						hooks.Publish(s)
						require.Equal(t, append(bytes.Clone(b1), b3...), readAll(t, s, 0))
						require.NoError(t, s.Close())
					})
				})
			}
		}
	}
}

// plainTwin appends batches to a fresh memory-FS segment with Append and
// returns its closed files' bytes by suffix.
func plainTwin(t *testing.T, cfg Config, batches ...[]byte) map[string][]byte {
	t.Helper()
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/twin"))
	e := testFS{fs: mem, dir: "/twin", mem: mem}
	s := create(t, e, 0, cfg)
	for _, b := range batches {
		require.NoError(t, s.Append(b, header(t, b)))
	}
	require.NoError(t, s.Close())
	out := map[string][]byte{}
	for _, suffix := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		out[suffix] = readFile(t, e, path(e, 0, suffix))
	}
	return out
}

// TestAppendOverlappedWriteFails fails the write of the body (made by the
// goroutine or by the caller) or of the header: the append fails with the
// write's error, the file is cut back, and the segment refuses further
// appends, overlapped or not, as after a failed Append.
func TestAppendOverlappedWriteFails(t *testing.T) {
	for _, write := range []struct {
		name string
		nth  int
	}{{"body", 1}, {"header", 2}} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/procs=%d", write.name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				mem := vfs.NewMem()
				require.NoError(t, mem.MkdirAll("/p-0"))
				ffs := vfs.NewFaultFS(mem)
				e := testFS{fs: ffs, dir: "/p-0", mem: mem}
				s := create(t, e, 0, testConfig())
				defer func() { require.NoError(t, s.Close()) }()
				b1, b2 := batchAt(t, 0, 3, 50, 1000), batchAt(t, 3, 40, 50, 1000)
				require.NoError(t, s.Append(b1, header(t, b1)))
				ffs.Inject(vfs.EIO(vfs.OpWrite, LogSuffix, write.nth))
				accept := func() (record.BatchHeader, error) { return *header(t, b2), nil }
				require.ErrorIs(t, hooks.AppendOverlapped(s, b2, accept), vfs.ErrInjected)
				require.Equal(t, int64(len(b1)), fileSize(t, e, s.LogFile()))
				require.Equal(t, int64(len(b1)), s.Size())
				require.ErrorIs(t, s.Append(b2, header(t, b2)), ErrFailed)
				require.ErrorIs(t, hooks.AppendOverlapped(s, b2, accept), ErrFailed)
			})
		}
	}
}

// TestAppendOverlappedThenCrash: a process killed after the body was
// written and before the header leaves the body in the file (here, as if
// the operating system had written it out) behind a zero batch length;
// recovery cuts it off, so a batch never validated is never read.
func TestAppendOverlappedThenCrash(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p-0"))
	require.NoError(t, mem.SyncDir("/"))
	ffs := vfs.NewFaultFS(mem)
	e := testFS{fs: ffs, dir: "/p-0", mem: mem}
	cfg := testConfig()
	s := create(t, e, 0, cfg)
	b1, b2 := batchAt(t, 0, 3, 50, 1000), batchAt(t, 3, 40, 50, 1000)
	require.NoError(t, s.Append(b1, header(t, b1)))
	require.NoError(t, mem.SyncDir("/p-0"))
	var crashed *vfs.MemFS
	writes := 0
	ffs.OnOp(func(op vfs.Op, name string) {
		if op != vfs.OpWrite || !strings.HasSuffix(name, LogSuffix) {
			return
		}
		if writes++; writes == 2 { // the header, after the body
			f, err := mem.OpenReadWrite(name)
			require.NoError(t, err)
			require.NoError(t, errors.Join(f.Sync(), f.Close()))
			crashed = mem.CrashClone()
		}
	})
	require.NoError(t, hooks.AppendOverlapped(s, b2, func() (record.BatchHeader, error) { return *header(t, b2), nil }))
	ffs.OnOp(nil)
	require.NoError(t, s.Close())
	require.NotNil(t, crashed)
	again := testFS{fs: crashed, dir: "/p-0", mem: crashed}
	require.Equal(t, int64(len(b1)+len(b2)), fileSize(t, again, path(again, 0, LogSuffix)), "the body is in the file")

	// The next process opens the files: Open finds the damaged tail, and
	// the log recovers the segment.
	r, err := Open(crashed, "/p-0", 0, cfg, OpenOptions{Active: true})
	require.NotNil(t, r, "%v", err)
	require.ErrorIs(t, err, record.ErrCorrupt)
	defer func() { require.NoError(t, r.Close()) }()
	res, err := r.Recover(RecoverOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(len(b1)), res.ValidBytes)
	require.Equal(t, int64(len(b2)), res.TruncatedBytes)
	require.Equal(t, int64(3), res.NextOffset)
	require.ErrorIs(t, res.Cause, record.ErrCorrupt, "a zero batch length is corrupt")
	require.Equal(t, b1, readAll(t, r, 0))
}
