package vfs_test

import (
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// newFault returns a FaultFS over a MemFS with a durable /d.
func newFault(t *testing.T) (*vfs.FaultFS, *vfs.MemFS) {
	t.Helper()
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d"))
	require.NoError(t, mem.SyncDir("/"))
	return vfs.NewFaultFS(mem), mem
}

// assertInjected checks that err is an injected *fs.PathError with cause.
func assertInjected(t *testing.T, err error, cause error) {
	t.Helper()
	assert.ErrorIs(t, err, cause)
	assert.ErrorIs(t, err, vfs.ErrInjected)
	var pe *fs.PathError
	assert.ErrorAs(t, err, &pe)
}

func TestFaultWrites(t *testing.T) {
	tests := []struct {
		name     string
		rule     vfs.Rule
		failures []bool // per write of "abcdefgh": does it fail
		want     string // file contents after the writes
		cause    error
	}{{
		name:     "third write fails with ENOSPC",
		rule:     vfs.ENOSPC(vfs.OpWrite, ".log", 3),
		failures: []bool{false, false, true, false},
		want:     strings.Repeat("abcdefgh", 3),
		cause:    syscall.ENOSPC,
	}, {
		name:     "sticky from the second write",
		rule:     vfs.Rule{Op: vfs.OpWrite, Nth: 2, Sticky: true, Err: syscall.EIO},
		failures: []bool{false, true, true, true},
		want:     "abcdefgh",
		cause:    syscall.EIO,
	}, {
		name:     "torn write leaves exactly TornBytes",
		rule:     vfs.Rule{Op: vfs.OpWrite, Nth: 2, TornBytes: 3, Err: syscall.EIO},
		failures: []bool{false, true},
		want:     "abcdefghabc",
		cause:    syscall.EIO,
	}, {
		name:     "torn write by fraction",
		rule:     vfs.Rule{Op: vfs.OpWrite, TornFraction: 0.5, Err: syscall.ENOSPC},
		failures: []bool{true, false},
		want:     "abcdabcdefgh",
		cause:    syscall.ENOSPC,
	}, {
		name:     "nil Err is ErrInjected",
		rule:     vfs.Rule{Op: vfs.OpAny, Path: "seg"},
		failures: []bool{true, false},
		want:     "abcdefgh",
		cause:    vfs.ErrInjected,
	}, {
		name:     "other paths are untouched",
		rule:     vfs.ENOSPC(vfs.OpWrite, ".index", 1),
		failures: []bool{false, false},
		want:     strings.Repeat("abcdefgh", 2),
	}, {
		name: "Match narrows the rule",
		rule: vfs.Rule{Op: vfs.OpWrite, Err: syscall.EIO,
			Match: func(op vfs.Op, path string) bool { return strings.HasPrefix(path, "/other") }},
		failures: []bool{false},
		want:     "abcdefgh",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ffs, _ := newFault(t)
			f, err := ffs.Create("/d/seg.log")
			require.NoError(t, err)
			ffs.Inject(tc.rule)
			wantInjected := 0
			for i, fail := range tc.failures {
				n, err := f.Write([]byte("abcdefgh"))
				if !fail {
					require.NoError(t, err, "write %d", i+1)
					continue
				}
				wantInjected++
				assertInjected(t, err, tc.cause)
				assert.Equal(t, tc.rule.TornBytes+int(8*tc.rule.TornFraction), n, "write %d", i+1)
			}
			assert.Equal(t, tc.want, readAll(t, f))
			assert.Equal(t, wantInjected, ffs.Injected())
			assert.Equal(t, len(tc.failures), ffs.Count(vfs.OpWrite))
		})
	}
}

func TestFaultWriteAtTorn(t *testing.T) {
	ffs, _ := newFault(t)
	f, err := ffs.Create("/d/00000000000000000000.index")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(16))
	ffs.Inject(vfs.Rule{Op: vfs.OpWrite, TornBytes: 2, Err: syscall.EIO})
	n, err := f.WriteAt([]byte{1, 2, 3, 4}, 8)
	assertInjected(t, err, syscall.EIO)
	assert.Equal(t, 2, n)
	assert.Equal(t, "\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x00\x00", readAll(t, f))
}

// TestFaultSync checks the documented state after a failed Sync: the data is
// in the current contents but not synced, so a crash loses it.
func TestFaultSync(t *testing.T) {
	ffs, mem := newFault(t)
	f, err := ffs.Create("/d/seg.log")
	require.NoError(t, err)
	require.NoError(t, ffs.SyncDir("/d"))
	write(t, f, "acked")
	require.NoError(t, f.Sync())
	write(t, f, "lost")

	ffs.Inject(vfs.EIO(vfs.OpSync, "seg.log", 1))
	assertInjected(t, f.Sync(), syscall.EIO)
	assert.Equal(t, "ackedlost", readAll(t, f), "still visible")
	assert.Equal(t, "acked", contents(t, mem.CrashClone(), "/d/seg.log"), "not durable")

	require.NoError(t, f.Sync(), "the rule fired once")
	assert.Equal(t, "ackedlost", contents(t, mem.CrashClone(), "/d/seg.log"))
}

func TestFaultNamespace(t *testing.T) {
	tests := []struct {
		name  string
		rule  vfs.Rule
		do    func(fsys vfs.FS) error
		cause error
		check func(t *testing.T, mem *vfs.MemFS)
	}{{
		name:  "rename fails and leaves both names",
		rule:  vfs.EIO(vfs.OpRename, ".swap", 1), // matches the new name
		do:    func(fsys vfs.FS) error { return fsys.Rename("/d/a", "/d/a.swap") },
		cause: syscall.EIO,
		check: func(t *testing.T, mem *vfs.MemFS) {
			assert.Equal(t, "A", contents(t, mem, "/d/a"))
			assert.Equal(t, absent, contents(t, mem, "/d/a.swap"))
		},
	}, {
		name:  "remove fails",
		rule:  vfs.EIO(vfs.OpRemove, "", 1),
		do:    func(fsys vfs.FS) error { return fsys.Remove("/d/a") },
		cause: syscall.EIO,
		check: func(t *testing.T, mem *vfs.MemFS) { assert.Equal(t, "A", contents(t, mem, "/d/a")) },
	}, {
		name: "create fails",
		rule: vfs.ENOSPC(vfs.OpCreate, "", 1),
		do: func(fsys vfs.FS) error {
			_, err := fsys.Create("/d/b")
			return err
		},
		cause: syscall.ENOSPC,
		check: func(t *testing.T, mem *vfs.MemFS) { assert.Equal(t, absent, contents(t, mem, "/d/b")) },
	}, {
		name: "SyncDir fails and the entry stays undurable",
		rule: vfs.EIO(vfs.OpSyncDir, "/d", 1),
		do: func(fsys vfs.FS) error {
			if err := fsys.RemoveAll("/d/a"); err != nil {
				return err
			}
			return fsys.SyncDir("/d")
		},
		cause: syscall.EIO,
		check: func(t *testing.T, mem *vfs.MemFS) {
			assert.Equal(t, absent, contents(t, mem, "/d/a"))
			assert.Equal(t, "A", contents(t, mem.CrashClone(), "/d/a"))
		},
	}, {
		name: "lock fails",
		rule: vfs.EIO(vfs.OpLock, "", 1),
		do: func(fsys vfs.FS) error {
			_, err := fsys.Lock("/d/.lock")
			return err
		},
		cause: syscall.EIO,
		check: func(t *testing.T, mem *vfs.MemFS) { assert.Equal(t, absent, contents(t, mem, "/d/.lock")) },
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ffs, mem := newFault(t)
			durableFile(t, mem, "/d/a", "A")
			ffs.Inject(tc.rule)
			err := tc.do(ffs)
			assert.ErrorIs(t, err, tc.cause)
			assert.ErrorIs(t, err, vfs.ErrInjected)
			tc.check(t, mem)
			ffs.Clear()
			assert.NoError(t, tc.do(ffs), "no rules after Clear")
		})
	}
}

func TestFaultRenameIsLinkError(t *testing.T) {
	ffs, mem := newFault(t)
	durableFile(t, mem, "/d/a", "A")
	ffs.Inject(vfs.EIO(vfs.OpRename, "", 1))
	err := ffs.Rename("/d/a", "/d/b")
	var le *os.LinkError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "/d/a", le.Old)
	assert.Equal(t, "/d/b", le.New)
	assert.ErrorIs(t, err, syscall.EIO)
}

func TestFaultCloseStillCloses(t *testing.T) {
	ffs, _ := newFault(t)
	f, err := ffs.Create("/d/f")
	require.NoError(t, err)
	ffs.Inject(vfs.EIO(vfs.OpClose, "", 1))
	assertInjected(t, f.Close(), syscall.EIO)
	assert.ErrorIs(t, f.Close(), vfs.ErrClosed, "the inner file was closed")
}

// TestFaultOnOp enumerates the sync points of a small workload and crashes
// at each, as the storage crash tests do.
func TestFaultOnOp(t *testing.T) {
	ffs, mem := newFault(t)
	var atSync []string
	var ops []string
	ffs.OnOp(func(op vfs.Op, path string) {
		ops = append(ops, op.String()+" "+path)
		if op == vfs.OpSync {
			atSync = append(atSync, contents(t, mem.CrashClone(), "/d/seg.log"))
		}
	})
	f, err := ffs.Create("/d/seg.log")
	require.NoError(t, err)
	require.NoError(t, ffs.SyncDir("/d"))
	for _, batch := range []string{"b1", "b2", "b3"} {
		write(t, f, batch)
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
	ffs.OnOp(nil)
	_, err = ffs.Stat("/d/seg.log")
	require.NoError(t, err)

	assert.Equal(t, []string{"", "b1", "b1b2"}, atSync, "state just before each sync")
	assert.Equal(t, []string{
		"create /d/seg.log", "syncdir /d",
		"write /d/seg.log", "sync /d/seg.log",
		"write /d/seg.log", "sync /d/seg.log",
		"write /d/seg.log", "sync /d/seg.log",
		"close /d/seg.log",
	}, ops)
	assert.Equal(t, 3, ffs.Count(vfs.OpSync))
	assert.Equal(t, 10, ffs.Count(vfs.OpAny), "the operations above and the Stat")
	assert.Equal(t, "syncdir", vfs.OpSyncDir.String())
	assert.Equal(t, "Op(99)", vfs.Op(99).String())
}
