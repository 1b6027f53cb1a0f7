package vfs

import (
	"io"
	"io/fs"
	"math"
	"slices"
	"sync/atomic"
	"syscall"
)

// memFile is an open [MemFS] file. It points at the node, not at the name,
// so it keeps working after the name is renamed or removed.
type memFile struct {
	fs       *MemFS
	n        *memNode
	name     string
	writable bool
	closed   atomic.Bool
	pos      int64 // write position; protected by n.mu
}

var _ File = (*memFile)(nil)

func (f *memFile) Name() string { return f.name }

func (f *memFile) err(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// ReadAt reads from the current contents; bytes between the highest byte
// written and the size (a sparse Truncate) read as zeros.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, f.err("read", ErrClosed)
	}
	if off < 0 {
		return 0, f.err("read", syscall.EINVAL)
	}
	if len(p) == 0 {
		return 0, nil // as os.File.ReadAt, even past the end
	}
	n := f.n
	n.mu.RLock()
	defer n.mu.RUnlock()
	if off >= n.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), n.size-off)
	got := 0
	if off < int64(len(n.data)) {
		got = copy(p[:want], n.data[off:])
	}
	clear(p[got:want])
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if err := f.checkWritable("write"); err != nil {
		return 0, err
	}
	n := f.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := f.writeAtLocked(p, f.pos); err != nil {
		return 0, err
	}
	f.pos += int64(len(p))
	return len(p), nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.checkWritable("write"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.err("write", syscall.EINVAL)
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	if err := f.writeAtLocked(p, off); err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxMemData bounds the bytes a [MemFS] file stores (not its logical size):
// 4 GiB, twice what a Kafka segment can address with its int32 positions,
// and less on 32-bit systems.
const maxMemData = min(1<<32, math.MaxInt)

// writeAtLocked stores p at off, growing the stored data (and zero-filling
// any gap) only as far as the last byte written: a write far past the end
// allocates up to it. Writing beyond [maxMemData] fails with EFBIG.
// REQUIRES: f.n.mu is held for writing.
func (f *memFile) writeAtLocked(p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	if off > maxMemData-int64(len(p)) {
		return f.err("write", syscall.EFBIG)
	}
	n := f.n
	end := off + int64(len(p))
	if have := int64(len(n.data)); end > have {
		n.data = slices.Grow(n.data, int(end-have))[:end]
		if off > have {
			clear(n.data[have:off]) // capacity may hold bytes from before a shrink
		}
	}
	copy(n.data[off:], p)
	n.size = max(n.size, end)
	n.dirtyFrom = min(n.dirtyFrom, off)
	n.modTime = f.fs.now()
	return nil
}

// Truncate sets the logical size. Growing stores nothing: the new bytes read
// as zeros until written.
func (f *memFile) Truncate(size int64) error {
	if err := f.checkWritable("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return f.err("truncate", syscall.EINVAL)
	}
	n := f.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if size < int64(len(n.data)) {
		n.data = n.data[:size]
	}
	n.dirtyFrom = min(n.dirtyFrom, n.size, size)
	n.size = size
	f.pos = min(f.pos, size)
	n.modTime = f.fs.now()
	return nil
}

// Sync makes the current contents and size the synced ones. Only the bytes
// changed since the previous Sync are copied.
func (f *memFile) Sync() error {
	if f.closed.Load() {
		return f.err("sync", ErrClosed)
	}
	n := f.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dirtyFrom == noneDirty && n.syncedSize == n.size {
		return nil
	}
	// Below dirtyFrom, data and synced hold the same bytes (where both
	// hold any), so only the rest is copied.
	keep := min(n.dirtyFrom, int64(len(n.synced)), int64(len(n.data)))
	n.synced = append(n.synced[:keep], n.data[keep:]...)
	n.syncedSize = n.size
	n.dirtyFrom = noneDirty
	return nil
}

func (f *memFile) Size() (int64, error) {
	if f.closed.Load() {
		return 0, f.err("stat", ErrClosed)
	}
	f.n.mu.RLock()
	defer f.n.mu.RUnlock()
	return f.n.size, nil
}

func (f *memFile) Close() error {
	if f.closed.Swap(true) {
		return f.err("close", ErrClosed)
	}
	return nil
}

func (f *memFile) checkWritable(op string) error {
	if f.closed.Load() {
		return f.err(op, ErrClosed)
	}
	if !f.writable {
		return f.err(op, syscall.EBADF) // as the OS answers for a read-only descriptor
	}
	return nil
}
