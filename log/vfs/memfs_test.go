package vfs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// absent is the want of a crash case for a name that must not exist.
const absent = "<absent>"

// TestCrashClone runs a workload on a MemFS whose /d already is durable,
// crashes it and checks what is left.
func TestCrashClone(t *testing.T) {
	tests := []struct {
		name string
		work func(t *testing.T, m *vfs.MemFS)
		want map[string]string // name → contents after the crash, or absent
	}{{
		name: "synced data survives",
		work: func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "/d/f")
			write(t, f, "abc")
			require.NoError(t, f.Sync())
		},
		want: map[string]string{"/d/f": "abc"},
	}, {
		name: "unsynced data is lost",
		work: func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "/d/f")
			write(t, f, "abc")
			require.NoError(t, f.Sync())
			write(t, f, "def")
			_, err := f.WriteAt([]byte("X"), 0)
			require.NoError(t, err)
		},
		want: map[string]string{"/d/f": "abc"},
	}, {
		name: "created file without SyncDir vanishes though synced",
		work: func(t *testing.T, m *vfs.MemFS) {
			f, err := m.Create("/d/f")
			require.NoError(t, err)
			write(t, f, "abc")
			require.NoError(t, f.Sync())
		},
		want: map[string]string{"/d/f": absent},
	}, {
		name: "created file with SyncDir but no Sync is empty",
		work: func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "/d/f")
			write(t, f, "abc")
		},
		want: map[string]string{"/d/f": ""},
	}, {
		name: "rename without SyncDir is undone",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "A")
			durableFile(t, m, "/d/b", "B")
			require.NoError(t, m.Rename("/d/a", "/d/b"))
		},
		want: map[string]string{"/d/a": "A", "/d/b": "B"},
	}, {
		name: "rename with SyncDir is durable",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "A")
			durableFile(t, m, "/d/b", "B")
			require.NoError(t, m.Rename("/d/a", "/d/b"))
			require.NoError(t, m.SyncDir("/d"))
		},
		want: map[string]string{"/d/a": absent, "/d/b": "A"},
	}, {
		name: "rename synced in the target directory only leaves two names",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "A")
			require.NoError(t, m.MkdirAll("/d/e"))
			require.NoError(t, m.SyncDir("/d"))
			require.NoError(t, m.Rename("/d/a", "/d/e/a"))
			require.NoError(t, m.SyncDir("/d/e"))
		},
		want: map[string]string{"/d/a": "A", "/d/e/a": "A"},
	}, {
		name: "remove without SyncDir is undone with the synced contents",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "A")
			f, err := m.OpenReadWrite("/d/a")
			require.NoError(t, err)
			write(t, f, "unsynced")
			require.NoError(t, f.Close())
			require.NoError(t, m.Remove("/d/a"))
		},
		want: map[string]string{"/d/a": "A"},
	}, {
		name: "remove with SyncDir is durable",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "A")
			require.NoError(t, m.Remove("/d/a"))
			require.NoError(t, m.SyncDir("/d"))
		},
		want: map[string]string{"/d/a": absent},
	}, {
		name: "RemoveAll without SyncDir is undone",
		work: func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("/d/topic-0"))
			require.NoError(t, m.SyncDir("/d"))
			durableFile(t, m, "/d/topic-0/f", "F")
			require.NoError(t, m.RemoveAll("/d/topic-0"))
		},
		want: map[string]string{"/d/topic-0/f": "F"},
	}, {
		name: "truncate without Sync is undone",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "abcdef")
			truncate(t, m, "/d/a", 2, false)
		},
		want: map[string]string{"/d/a": "abcdef"},
	}, {
		name: "truncate with Sync shrinks",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "abcdef")
			truncate(t, m, "/d/a", 2, true)
		},
		want: map[string]string{"/d/a": "ab"},
	}, {
		name: "truncate shrink then grow with Sync reads zeros",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "abcdef")
			truncate(t, m, "/d/a", 2, false)
			truncate(t, m, "/d/a", 4, true)
		},
		want: map[string]string{"/d/a": "ab\x00\x00"},
	}, {
		name: "overwrite in the middle needs Sync",
		work: func(t *testing.T, m *vfs.MemFS) {
			durableFile(t, m, "/d/a", "aaaa")
			f, err := m.OpenReadWrite("/d/a")
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("bb"), 1)
			require.NoError(t, err)
			require.NoError(t, f.Sync())
			_, err = f.WriteAt([]byte("c"), 0)
			require.NoError(t, err)
			write(t, f, "tail")
		},
		want: map[string]string{"/d/a": "abba"},
	}, {
		name: "MkdirAll without SyncDir of the parent vanishes",
		work: func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("/d/sub/x"))
			require.NoError(t, m.SyncDir("/d/sub"))
			f := create(t, m, "/d/sub/x/f")
			write(t, f, "F")
			require.NoError(t, f.Sync())
		},
		want: map[string]string{"/d/sub": absent, "/d/sub/x/f": absent},
	}, {
		name: "MkdirAll with every parent synced survives",
		work: func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("/d/sub/x"))
			require.NoError(t, m.SyncDir("/d"))
			require.NoError(t, m.SyncDir("/d/sub"))
			durableFile(t, m, "/d/sub/x/f", "F")
		},
		want: map[string]string{"/d/sub/x/f": "F"},
	}, {
		name: "renamed directories never make a cycle",
		work: func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("/d/a/b"))
			require.NoError(t, m.SyncDir("/d"))
			require.NoError(t, m.SyncDir("/d/a"))
			require.NoError(t, m.Rename("/d/a/b", "/d/b"))
			require.NoError(t, m.Rename("/d/a", "/d/b/a"))
			require.NoError(t, m.SyncDir("/d"))
			require.NoError(t, m.SyncDir("/d/b"))
			// /d/a still lists b durably: /d → b → a → b would loop.
		},
		want: map[string]string{"/d/b/a/b": absent},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := vfs.NewMem()
			require.NoError(t, m.MkdirAll("/d"))
			require.NoError(t, m.SyncDir("/"))
			tc.work(t, m)
			c := m.CrashClone()
			for name, want := range tc.want {
				assert.Equal(t, want, contents(t, c, name), name)
			}
		})
	}
}

func TestCrashCloneIsIndependent(t *testing.T) {
	m := vfs.NewMem()
	durableFile(t, m, "/a", "A")
	l, err := m.Lock("/LOCK")
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()

	c := m.CrashClone()
	l2, err := c.Lock("/LOCK")
	require.NoError(t, err, "locks do not survive a crash")
	require.NoError(t, l2.Close())

	f, err := c.OpenReadWrite("/a")
	require.NoError(t, err)
	write(t, f, "+clone")
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	assert.Equal(t, "A", contents(t, m, "/a"))
	assert.Equal(t, "A+clone", contents(t, c, "/a"))
	assert.Equal(t, "A+clone", contents(t, c.CrashClone(), "/a"), "the clone is durable as it stands")

	durableFile(t, m, "/b", "B")
	assert.Equal(t, absent, contents(t, c, "/b"))
}

func TestCrashCloneHardLink(t *testing.T) {
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("/e"))
	require.NoError(t, m.SyncDir("/"))
	durableFile(t, m, "/a", "A")
	require.NoError(t, m.Rename("/a", "/e/a"))
	require.NoError(t, m.SyncDir("/e"))

	c := m.CrashClone()
	f, err := c.OpenReadWrite("/a")
	require.NoError(t, err)
	write(t, f, "!")
	require.NoError(t, f.Close())
	assert.Equal(t, "A!", contents(t, c, "/e/a"), "both names are one file")
}

// TestSparseTruncate preallocates as the index does, far beyond what the
// test may allocate, and reads the zeros back.
func TestSparseTruncate(t *testing.T) {
	const size = 1 << 30
	m := vfs.NewMem()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	f := create(t, m, "/00000000000000000000.index")
	require.NoError(t, f.Truncate(size))
	_, err := f.WriteAt([]byte{0, 0, 0, 1, 0, 0, 0, 2}, 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	c := m.CrashClone()
	buf := make([]byte, 16)
	_, err = f.ReadAt(buf, size-16)
	require.NoError(t, err)

	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
	assert.Equal(t, make([]byte, 16), buf)

	cf, err := c.Open("/00000000000000000000.index")
	require.NoError(t, err)
	n, err := cf.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(size), n, "the clone keeps the synced size")
	_, err = cf.ReadAt(buf, 0)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}, buf)
}

// TestConcurrentReadWhileAppending has readers check the file's contents up
// to its size while one writer appends. Run with -race.
func TestConcurrentReadWhileAppending(t *testing.T) {
	const (
		chunk   = 100
		chunks  = 500
		readers = 4
	)
	pattern := func(i int) byte { return byte(i % 251) }
	for _, impl := range implementations[1:] { // the memory filesystems
		t.Run(impl.name, func(t *testing.T) {
			fsys, dir := impl.new(t)
			w, err := fsys.Create(dir + "/seg.log")
			require.NoError(t, err)
			r, err := fsys.Open(dir + "/seg.log")
			require.NoError(t, err)

			var wg sync.WaitGroup
			errs := make(chan error, readers+1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, chunk)
				for c := range chunks {
					for i := range buf {
						buf[i] = pattern(c*chunk + i)
					}
					if _, err := w.Write(buf); err != nil {
						errs <- err
						return
					}
					if c%50 == 0 {
						if err := w.Sync(); err != nil {
							errs <- err
							return
						}
					}
				}
			}()
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := make([]byte, chunk*chunks)
					for size := int64(0); size < chunk*chunks; {
						var err error
						if size, err = r.Size(); err != nil {
							errs <- err
							return
						}
						if _, err := r.ReadAt(buf[:size], 0); err != nil {
							errs <- err
							return
						}
						for i := range buf[:size] {
							if buf[i] != pattern(i) {
								errs <- fmt.Errorf("byte %d of %d is %d, want %d", i, size, buf[i], pattern(i))
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			require.NoError(t, w.Close())
			require.NoError(t, r.Close())
		})
	}
}

// TestConcurrentNamespace changes names from many goroutines. Run with -race.
func TestConcurrentNamespace(t *testing.T) {
	m := vfs.NewMem()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			dir := fmt.Sprintf("/topic-%d", g)
			if err := m.MkdirAll(dir); err != nil {
				t.Error(err)
				return
			}
			for i := range 20 {
				name := fmt.Sprintf("%s/%020d.log", dir, i)
				f, err := m.Create(name)
				if err != nil {
					t.Error(err)
					return
				}
				_, err1 := f.Write([]byte(name))
				err2 := f.Sync()
				err3 := f.Close()
				err4 := m.Rename(name, name+".deleted")
				err5 := m.SyncDir(dir)
				_, err6 := m.List("/")
				for _, err := range []error{err1, err2, err3, err4, err5, err6} {
					if err != nil {
						t.Error(err)
					}
				}
				_ = m.CrashClone()
			}
		})
	}
	wg.Wait()
	infos, err := m.List("/topic-3")
	require.NoError(t, err)
	assert.Len(t, infos, 20)
}

func TestMemErrors(t *testing.T) {
	m := vfs.NewMem()
	require.NoError(t, m.MkdirAll("/d/sub"))
	durableFile(t, m, "/d/f", "F")
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"open directory", func() error { _, err := m.Open("/d"); return err }, syscall.EISDIR},
		{"create root", func() error { _, err := m.Create("/"); return err }, fs.ErrExist},
		{"create below a file", func() error { _, err := m.Create("/d/f/x"); return err }, syscall.ENOTDIR},
		{"rename file over directory", func() error { return m.Rename("/d/f", "/d/sub") }, syscall.EISDIR},
		{"rename directory over file", func() error { return m.Rename("/d/sub", "/d/f") }, syscall.ENOTDIR},
		{"rename directory into itself", func() error { return m.Rename("/d", "/d/sub/d") }, syscall.EINVAL},
		{"remove non-empty directory", func() error { return m.Remove("/d") }, syscall.ENOTEMPTY},
		{"remove all of root", func() error { return m.RemoveAll("/") }, syscall.EINVAL},
		{"list a file", func() error { _, err := m.List("/d/f"); return err }, syscall.ENOTDIR},
		{"sync a file as directory", func() error { return m.SyncDir("/d/f") }, syscall.ENOTDIR},
		{"lock a directory", func() error { _, err := m.Lock("/d"); return err }, syscall.EISDIR},
		{"write past what memory can address", func() error {
			f, err := m.OpenReadWrite("/d/f")
			if err != nil {
				return err
			}
			_, err = f.WriteAt([]byte("x"), math.MaxInt64-1)
			return errors.Join(err, f.Close())
		}, syscall.EFBIG},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.do(), tc.want)
		})
	}
}

func TestMemClockAndPaths(t *testing.T) {
	m := vfs.NewMem()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.SetClock(func() time.Time { return at })
	durableFile(t, m, "a/./b/../f", "F")
	fi, err := m.Stat("/a/f")
	require.NoError(t, err)
	assert.Equal(t, vfs.FileInfo{Name: "f", Size: 1, ModTime: at}, fi)
	fi, err = m.Stat("/")
	require.NoError(t, err)
	assert.True(t, fi.IsDir)
	assert.Equal(t, "F", contents(t, m, "/a/f"))
}

// create makes name with its directory entry durable.
func create(t *testing.T, m *vfs.MemFS, name string) vfs.File {
	t.Helper()
	f, err := m.Create(name)
	require.NoError(t, err)
	require.NoError(t, m.SyncDir(parent(name)))
	return f
}

// durableFile creates name with contents, all of it durable: the directories
// along the way, the entry and the data.
func durableFile(t *testing.T, m *vfs.MemFS, name, data string) {
	t.Helper()
	require.NoError(t, m.MkdirAll(parent(name)))
	for dir := parent(name); ; dir = parent(dir) {
		require.NoError(t, m.SyncDir(dir))
		if dir == "/" || dir == "." {
			break
		}
	}
	f := create(t, m, name)
	write(t, f, data)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

func truncate(t *testing.T, m *vfs.MemFS, name string, size int64, sync bool) {
	t.Helper()
	f, err := m.OpenReadWrite(name)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	if sync {
		require.NoError(t, f.Sync())
	}
	require.NoError(t, f.Close())
}

func write(t *testing.T, f vfs.File, s string) {
	t.Helper()
	n, err := f.Write([]byte(s))
	require.NoError(t, err)
	require.Equal(t, len(s), n)
}

// contents returns the contents of name, or absent.
func contents(t *testing.T, fsys vfs.FS, name string) string {
	t.Helper()
	if _, err := fsys.Stat(name); err != nil {
		require.ErrorIs(t, err, fs.ErrNotExist)
		return absent
	}
	return readFile(t, fsys, name)
}

func parent(name string) string { return path.Dir(name) }
