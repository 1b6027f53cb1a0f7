package vfs_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// implementations are the filesystems every contract test runs on; each
// returns the filesystem and an existing directory to work in.
var implementations = []struct {
	name string
	new  func(t *testing.T) (vfs.FS, string)
}{
	{"os", func(t *testing.T) (vfs.FS, string) { return vfs.Default, t.TempDir() }},
	{"mem", func(t *testing.T) (vfs.FS, string) { return newMemDir(t, vfs.NewMem()) }},
	{"fault", func(t *testing.T) (vfs.FS, string) { return newMemDir(t, vfs.NewFaultFS(vfs.NewMem())) }},
}

func newMemDir(t *testing.T, fsys vfs.FS) (vfs.FS, string) {
	dir := filepath.Join(string(filepath.Separator), "data")
	require.NoError(t, fsys.MkdirAll(dir))
	return fsys, dir
}

// forEachFS runs test once per implementation.
func forEachFS(t *testing.T, test func(t *testing.T, fsys vfs.FS, dir string)) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			fsys, dir := impl.new(t)
			test(t, fsys, dir)
		})
	}
}

// writeFile creates name with contents, synced.
func writeFile(t *testing.T, fsys vfs.FS, name, contents string) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(contents))
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// readFile returns the whole contents of name.
func readFile(t *testing.T, fsys vfs.FS, name string) string {
	t.Helper()
	f, err := fsys.Open(name)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	return readAll(t, f)
}

func readAll(t *testing.T, f vfs.File) string {
	t.Helper()
	size, err := f.Size()
	require.NoError(t, err)
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != io.EOF {
		require.NoError(t, err)
	}
	require.Equal(t, int(size), n)
	return string(buf)
}

func TestCreateOpenErrors(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		name := filepath.Join(dir, "00000000000000000000.log")
		writeFile(t, fsys, name, "x")

		_, err := fsys.Create(name)
		assert.ErrorIs(t, err, fs.ErrExist)
		var pe *fs.PathError
		assert.ErrorAs(t, err, &pe)

		missing := filepath.Join(dir, "missing")
		_, err = fsys.Open(missing)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		_, err = fsys.OpenReadWrite(missing)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		_, err = fsys.Stat(missing)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		_, err = fsys.Create(filepath.Join(missing, "f"))
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.ErrorIs(t, fsys.SyncDir(missing), fs.ErrNotExist)
		assert.ErrorIs(t, fsys.Remove(missing), fs.ErrNotExist)
		assert.NoError(t, fsys.RemoveAll(missing))
		assert.ErrorIs(t, fsys.Rename(missing, name), fs.ErrNotExist)
		assert.Error(t, fsys.MkdirAll(filepath.Join(name, "sub")), "MkdirAll through a file")
	})
}

func TestWritePosition(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		name := filepath.Join(dir, "f")
		writeFile(t, fsys, name, "hello")

		f, err := fsys.OpenReadWrite(name)
		require.NoError(t, err)
		_, err = f.Write([]byte(" world"))
		require.NoError(t, err)
		assert.Equal(t, "hello world", readAll(t, f), "OpenReadWrite writes at the end")

		_, err = f.WriteAt([]byte("J"), 0)
		require.NoError(t, err)
		_, err = f.Write([]byte("!"))
		require.NoError(t, err)
		assert.Equal(t, "Jello world!", readAll(t, f), "WriteAt does not move the write position")

		require.NoError(t, f.Truncate(5))
		_, err = f.Write([]byte("?"))
		require.NoError(t, err)
		assert.Equal(t, "Jello?", readAll(t, f), "Truncate below the position moves it to the end")

		require.NoError(t, f.Truncate(8))
		assert.Equal(t, "Jello?\x00\x00", readAll(t, f), "growing fills with zeros")
		size, err := f.Size()
		require.NoError(t, err)
		assert.Equal(t, int64(8), size)

		buf := make([]byte, 4)
		n, err := f.ReadAt(buf, 6)
		assert.Equal(t, 2, n)
		assert.ErrorIs(t, err, io.EOF)
		n, err = f.ReadAt(buf, 100)
		assert.Equal(t, 0, n)
		assert.ErrorIs(t, err, io.EOF)
		n, err = f.ReadAt(nil, 100)
		assert.Equal(t, 0, n)
		assert.NoError(t, err, "an empty read succeeds anywhere, as os.File's")
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	})
}

func TestReadOnlyAndClosed(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		name := filepath.Join(dir, "f")
		writeFile(t, fsys, name, "abc")

		f, err := fsys.Open(name)
		require.NoError(t, err)
		assert.Equal(t, name, f.Name())
		_, err = f.Write([]byte("x"))
		assert.Error(t, err, "Write on a read-only file")
		_, err = f.WriteAt([]byte("x"), 0)
		assert.Error(t, err, "WriteAt on a read-only file")
		assert.Error(t, f.Truncate(0), "Truncate on a read-only file")
		require.NoError(t, f.Close())

		buf := make([]byte, 1)
		checks := []struct {
			op string
			do func() error
		}{
			{"ReadAt", func() error { _, err := f.ReadAt(buf, 0); return err }},
			{"Write", func() error { _, err := f.Write(buf); return err }},
			{"WriteAt", func() error { _, err := f.WriteAt(buf, 0); return err }},
			{"Sync", f.Sync},
			{"Truncate", func() error { return f.Truncate(0) }},
			{"Size", func() error { _, err := f.Size(); return err }},
			{"Close", f.Close},
		}
		for _, c := range checks {
			err := c.do()
			assert.ErrorIs(t, err, vfs.ErrClosed, c.op)
			var pe *fs.PathError
			assert.ErrorAs(t, err, &pe, c.op)
		}
	})
}

func TestRenameRemoveList(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, fsys, a, "new")
		writeFile(t, fsys, b, "old")
		require.NoError(t, fsys.Rename(a, b))
		assert.Equal(t, "new", readFile(t, fsys, b), "rename replaces")
		_, err := fsys.Stat(a)
		assert.ErrorIs(t, err, fs.ErrNotExist)

		writeFile(t, fsys, filepath.Join(dir, "c"), "cc")
		writeFile(t, fsys, filepath.Join(dir, "a"), "a")
		sub := filepath.Join(dir, "sub")
		require.NoError(t, fsys.MkdirAll(filepath.Join(sub, "deeper")))
		require.NoError(t, fsys.MkdirAll(sub), "MkdirAll of an existing directory")

		infos, err := fsys.List(dir)
		require.NoError(t, err)
		var got []vfs.FileInfo
		for _, fi := range infos {
			assert.False(t, fi.ModTime.IsZero(), fi.Name)
			if fi.IsDir {
				fi.Size = 0 // a directory's size is the OS's business
			}
			got = append(got, vfs.FileInfo{Name: fi.Name, Size: fi.Size, IsDir: fi.IsDir})
		}
		want := []vfs.FileInfo{{Name: "a", Size: 1}, {Name: "b", Size: 3}, {Name: "c", Size: 2}, {Name: "sub", IsDir: true}}
		assert.Equal(t, want, got, "sorted by name")

		fi, err := fsys.Stat(filepath.Join(dir, "c"))
		require.NoError(t, err)
		assert.Equal(t, "c", fi.Name)
		assert.Equal(t, int64(2), fi.Size)

		assert.Error(t, fsys.Remove(sub), "Remove of a non-empty directory")
		require.NoError(t, fsys.RemoveAll(sub))
		require.NoError(t, fsys.Remove(filepath.Join(dir, "c")))
		require.NoError(t, fsys.SyncDir(dir))
		infos, err = fsys.List(dir)
		require.NoError(t, err)
		require.Len(t, infos, 2)
	})
}

func TestOpenFileOutlivesName(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("windows cannot remove or rename an open file by default")
	}
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		name, moved := filepath.Join(dir, "seg.log"), filepath.Join(dir, "seg.log.deleted")
		writeFile(t, fsys, name, "batch1")
		f, err := fsys.OpenReadWrite(name)
		require.NoError(t, err)

		require.NoError(t, fsys.Rename(name, moved))
		_, err = f.Write([]byte("batch2"))
		require.NoError(t, err)
		assert.Equal(t, "batch1batch2", readFile(t, fsys, moved), "a renamed file keeps its handle")

		require.NoError(t, fsys.Remove(moved))
		_, err = f.Write([]byte("batch3"))
		require.NoError(t, err)
		assert.Equal(t, "batch1batch2batch3", readAll(t, f), "a removed file keeps its handle")
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	})
}

func TestLockInProcess(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		name := filepath.Join(dir, ".lock")
		l, err := fsys.Lock(name)
		require.NoError(t, err)

		for _, other := range []string{name, filepath.Join(dir, ".", ".lock"), filepath.Join(dir, "sub", "..", ".lock")} {
			_, err := fsys.Lock(other)
			assert.ErrorIs(t, err, vfs.ErrLocked, other)
		}
		_, err = fsys.Stat(name)
		require.NoError(t, err, "Lock creates the file")

		require.NoError(t, l.Close())
		require.NoError(t, l.Close(), "a second Close returns nil")
		l2, err := fsys.Lock(name)
		require.NoError(t, err, "the lock is free again")
		require.NoError(t, l2.Close())

		_, err = fsys.Lock(filepath.Join(dir, "missing", ".lock"))
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
}

func TestLockRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	l, err := vfs.Default.Lock("LOCK")
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	_, err = vfs.Default.Lock(filepath.Join(dir, "LOCK"))
	assert.ErrorIs(t, err, vfs.ErrLocked, "relative and absolute names are one lock")
}

func TestOSErrorsUnwrap(t *testing.T) {
	dir := t.TempDir()
	_, err := vfs.Default.Open(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, syscall.ENOENT)
	assert.ErrorIs(t, err, os.ErrNotExist)
	err = vfs.Default.Rename(filepath.Join(dir, "missing"), filepath.Join(dir, "x"))
	var le *os.LinkError
	assert.ErrorAs(t, err, &le)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
}
