package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func TestWriteFileAtomic(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			name := e.path("file")

			// A new file.
			require.NoError(t, WriteFileAtomic(e.fs, name, []byte("first")))
			assert.Equal(t, []byte("first"), readAll(t, e.fs, name))
			_, err := e.fs.Stat(name + TempSuffix)
			require.ErrorIs(t, err, fs.ErrNotExist, "no temporary file is left")

			// A stale temporary file from a crash is removed, the file replaced.
			writeRaw(t, e.fs, name+TempSuffix, []byte("stale garbage that is longer"))
			require.NoError(t, WriteFileAtomic(e.fs, name, []byte("second")))
			assert.Equal(t, []byte("second"), readAll(t, e.fs, name))
			_, err = e.fs.Stat(name + TempSuffix)
			require.ErrorIs(t, err, fs.ErrNotExist)

			// Empty contents.
			require.NoError(t, WriteFileAtomic(e.fs, name, nil))
			assert.Empty(t, readAll(t, e.fs, name))

			// A missing directory.
			err = WriteFileAtomic(e.fs, e.path("missing/file"), []byte("x"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		})
	}
}

// atomicStates are the contents a reader may see of the file being
// replaced: the old, the new, or (before the first write) none.
type atomicCase struct {
	name     string
	old      []byte // nil: no file before the write
	staleTmp []byte // nil: no stale temporary file
}

var atomicCases = []atomicCase{
	{name: "new-file"},
	{name: "replace", old: []byte("old contents\n")},
	{name: "replace-with-stale-tmp", old: []byte("old contents\n"), staleTmp: []byte("torn new cont")},
	{name: "new-file-with-stale-tmp", staleTmp: []byte("torn")},
}

func setupAtomic(t *testing.T, c atomicCase) (*vfs.MemFS, string) {
	t.Helper()
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/logdir"))
	require.NoError(t, mem.SyncDir("/"))
	name := "/logdir/file"
	if c.old != nil {
		require.NoError(t, WriteFileAtomic(mem, name, c.old))
	}
	if c.staleTmp != nil {
		writeRaw(t, mem, name+TempSuffix, c.staleTmp)
	}
	return mem, name
}

// requireOldOrNew checks that name holds exactly the old or the new
// contents (or is missing, when there was no old file).
func requireOldOrNew(t *testing.T, fsys vfs.FS, name string, old, new []byte, context string) {
	t.Helper()
	got, err := readFile(fsys, name, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		require.Nil(t, old, "%s: the old file vanished", context)
		return
	}
	require.NoError(t, err, context)
	if string(got) != string(old) && string(got) != string(new) {
		t.Fatalf("%s: torn file %q, want old %q or new %q", context, got, old, new)
	}
}

// TestWriteFileAtomicCrash crashes (CrashClone of the memory filesystem)
// before every operation of a write and after it returns: the file is
// always the old one or the new one, and the new one once the write has
// returned.
func TestWriteFileAtomicCrash(t *testing.T) {
	newData := []byte("new contents, longer than the old\n")
	for _, c := range atomicCases {
		t.Run(c.name, func(t *testing.T) {
			mem, name := setupAtomic(t, c)
			ffs := vfs.NewFaultFS(mem)
			type crash struct {
				op    string
				state *vfs.MemFS
			}
			var crashes []crash
			ffs.OnOp(func(op vfs.Op, path string) {
				crashes = append(crashes, crash{fmt.Sprintf("before %v %s", op, path), mem.CrashClone()})
			})
			require.NoError(t, WriteFileAtomic(ffs, name, newData))
			ffs.OnOp(nil)
			require.GreaterOrEqual(t, len(crashes), 6, "remove, create, write, sync, close, rename, syncdir")
			for _, cr := range crashes {
				requireOldOrNew(t, cr.state, name, c.old, newData, cr.op)
				// The next write after the crash succeeds and leaves no
				// temporary file.
				require.NoError(t, WriteFileAtomic(cr.state, name, []byte("again")), cr.op)
				assert.Equal(t, []byte("again"), readAll(t, cr.state, name), cr.op)
				_, err := cr.state.Stat(name + TempSuffix)
				require.ErrorIs(t, err, fs.ErrNotExist, cr.op)
			}
			after := mem.CrashClone()
			assert.Equal(t, newData, readAll(t, after, name), "durable after return")
		})
	}
}

// TestWriteFileAtomicFaults fails each operation of a write in turn: the
// write returns the error; the file is the old or the new one, both as the
// process sees it and after a crash; a later write succeeds.
func TestWriteFileAtomicFaults(t *testing.T) {
	newData := []byte("new contents\n")
	for _, c := range atomicCases {
		t.Run(c.name, func(t *testing.T) {
			// Count the operations of a clean write.
			mem, name := setupAtomic(t, c)
			ffs := vfs.NewFaultFS(mem)
			require.NoError(t, WriteFileAtomic(ffs, name, newData))
			total := ffs.Count(vfs.OpAny)
			require.GreaterOrEqual(t, total, 6)

			for nth := 1; nth <= total; nth++ {
				for _, torn := range []bool{false, true} {
					mem, name := setupAtomic(t, c)
					ffs := vfs.NewFaultFS(mem)
					var failed string
					ffs.OnOp(func(op vfs.Op, path string) {
						if ffs.Count(vfs.OpAny) == nth {
							failed = fmt.Sprintf("%v %s", op, path)
						}
					})
					ffs.Inject(vfs.Rule{Op: vfs.OpAny, Nth: nth, Err: syscall.EIO, TornFraction: map[bool]float64{true: 0.5}[torn]})
					err := WriteFileAtomic(ffs, name, newData)
					ctx := fmt.Sprintf("fault at op %d (%s), torn=%v", nth, failed, torn)
					require.Error(t, err, ctx)
					require.ErrorIs(t, err, vfs.ErrInjected, ctx)
					requireOldOrNew(t, mem, name, c.old, newData, ctx+", process view")
					crashed := mem.CrashClone()
					requireOldOrNew(t, crashed, name, c.old, newData, ctx+", after a crash")

					ffs.Clear()
					ffs.OnOp(nil)
					require.NoError(t, WriteFileAtomic(ffs, name, []byte("retry")), ctx)
					assert.Equal(t, []byte("retry"), readAll(t, mem.CrashClone(), name), ctx)
				}
			}
		})
	}
}

func TestReadFileLimit(t *testing.T) {
	mem := vfs.NewMem()
	writeRaw(t, mem, "/f", make([]byte, 100))
	_, err := readFile(mem, "/f", 99)
	requireCorrupt(t, err, "/f", 0)
	b, err := readFile(mem, "/f", 100)
	require.NoError(t, err)
	require.Len(t, b, 100)
	_, err = readFile(mem, "/missing", 100)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
