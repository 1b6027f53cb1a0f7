package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// testFS is a filesystem and a directory in it to put files in.
type testFS struct {
	name string
	fs   vfs.FS
	dir  string
}

func (e testFS) path(name string) string { return filepath.Join(e.dir, name) }

// filesystems returns a fresh memory filesystem and a fresh directory on
// the operating system's, for tests that run on both.
func filesystems(t *testing.T) []testFS {
	t.Helper()
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/logdir"))
	return []testFS{
		{name: "mem", fs: mem, dir: "/logdir"},
		{name: "os", fs: vfs.Default, dir: t.TempDir()},
	}
}

// readAll returns the contents of name, failing the test if it cannot.
func readAll(t testing.TB, fsys vfs.FS, name string) []byte {
	t.Helper()
	b, err := readFile(fsys, name, 1<<30)
	require.NoError(t, err)
	return b
}

// writeRaw creates or replaces name with data, without the atomic dance.
func writeRaw(t testing.TB, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	_ = fsys.Remove(name)
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, fsys.SyncDir(filepath.Dir(name)))
}

// requireCorrupt checks that err is a *FormatError matching ErrCorrupt for
// file, at line (when line ≥ 0).
func requireCorrupt(t testing.TB, err error, file string, line int) *FormatError {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, ErrCorrupt)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, file, fe.File)
	if line >= 0 {
		require.Equal(t, line, fe.Line, "error: %v", err)
	}
	return fe
}
