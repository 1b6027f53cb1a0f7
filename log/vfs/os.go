package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// osFS is the operating system's filesystem, exposed as [Default]. Its errors
// are the ones package os returns (*fs.PathError, *os.LinkError), except that
// operations on a closed file report [ErrClosed].
type osFS struct{}

var _ FS = osFS{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return newOSFile(f), nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return newOSFile(f), nil
}

// OpenReadWrite opens without O_APPEND, because O_APPEND forbids WriteAt;
// the write position is put at the end with a seek instead.
func (osFS) OpenReadWrite(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return newOSFile(f), nil
}

func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) RemoveAll(name string) error          { return os.RemoveAll(name) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }

func (osFS) List(dir string) ([]FileInfo, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	infos := make([]FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since ReadDir read it
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, fileInfo(fi))
	}
	return infos, nil
}

func (osFS) Stat(name string) (FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return FileInfo{}, err
	}
	return fileInfo(fi), nil
}

func (osFS) SyncDir(dir string) error { return syncDir(dir) }

// Lock registers the absolute path in this process first, so that a second
// holder here fails even where flock does not conflict within a process,
// then takes the OS lock (see lockFile), which also excludes other processes.
func (osFS) Lock(name string) (io.Closer, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	key := filepath.Clean(abs)
	if !processLocks.acquire(key) {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		processLocks.release(key)
		return nil, err
	}
	if err := lockFile(f); err != nil {
		processLocks.release(key)
		return nil, errors.Join(err, f.Close())
	}
	return &osLock{key: key, f: f}, nil
}

func fileInfo(fi fs.FileInfo) FileInfo {
	return FileInfo{Name: fi.Name(), Size: fi.Size(), IsDir: fi.IsDir(), ModTime: fi.ModTime()}
}

// lockRegistry records the lock files held by this process, keyed by their
// cleaned absolute path.
type lockRegistry struct {
	mu   sync.Mutex // protects held
	held map[string]struct{}
}

// processLocks is the registry for [Default]; it is process-wide because the
// locks it mirrors are.
var processLocks = lockRegistry{held: make(map[string]struct{})}

// acquire reports whether key was free, and marks it held if so.
func (r *lockRegistry) acquire(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.held[key]; ok {
		return false
	}
	r.held[key] = struct{}{}
	return true
}

func (r *lockRegistry) release(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, key)
}

// osLock is a held [osFS.Lock]. Closing the file releases the OS lock.
type osLock struct {
	key    string
	f      *os.File
	closed atomic.Bool
}

func (l *osLock) Close() error {
	if l.closed.Swap(true) {
		return nil
	}
	err := l.f.Close()
	processLocks.release(l.key)
	return err
}

// osFile is an open operating-system file. It keeps its own closed flag so
// that every method, including those that reach the descriptor through
// SyscallConn, reports [ErrClosed] after Close.
type osFile struct {
	f      *os.File
	closed atomic.Bool
}

var _ File = (*osFile)(nil)

func newOSFile(f *os.File) *osFile { return &osFile{f: f} }

// OSFile returns the underlying *os.File; see [OSFile].
func (f *osFile) OSFile() *os.File { return f.f }

func (f *osFile) Name() string { return f.f.Name() }

func (f *osFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off)
	return n, f.fixErr("read", err)
}

func (f *osFile) Write(p []byte) (int, error) {
	n, err := f.f.Write(p)
	return n, f.fixErr("write", err)
}

func (f *osFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.f.WriteAt(p, off)
	return n, f.fixErr("write", err)
}

func (f *osFile) Sync() error {
	if f.closed.Load() {
		return f.closedErr("sync")
	}
	if err := fsync(f.f); err != nil {
		return f.fixErr("sync", &fs.PathError{Op: "sync", Path: f.f.Name(), Err: err})
	}
	return nil
}

// Truncate also moves the write position to the new end if it was beyond it,
// as the [File] contract asks (ftruncate alone leaves it where it was).
func (f *osFile) Truncate(size int64) error {
	if err := f.f.Truncate(size); err != nil {
		return f.fixErr("truncate", err)
	}
	pos, err := f.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return f.fixErr("seek", err)
	}
	if pos > size {
		if _, err := f.f.Seek(size, io.SeekStart); err != nil {
			return f.fixErr("seek", err)
		}
	}
	return nil
}

func (f *osFile) Size() (int64, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return 0, f.fixErr("stat", err)
	}
	return fi.Size(), nil
}

func (f *osFile) Close() error {
	if f.closed.Swap(true) {
		return f.closedErr("close")
	}
	return f.f.Close()
}

func (f *osFile) closedErr(op string) error {
	return &fs.PathError{Op: op, Path: f.f.Name(), Err: ErrClosed}
}

// fixErr turns the os package's "file already closed" into [ErrClosed],
// keeping the operation and path; other errors pass unchanged.
func (f *osFile) fixErr(op string, err error) error {
	if err == nil || !errors.Is(err, fs.ErrClosed) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		op = pe.Op
	}
	return f.closedErr(op)
}
