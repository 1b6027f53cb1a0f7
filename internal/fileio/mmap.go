package fileio

import (
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"sync"
	"syscall"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// Mapping is a shared memory mapping of the start of a file, made by [Map].
// Stores into a writable mapping's bytes change the file (they become visible
// to ReadAt at once on systems with a unified buffer cache, which all of
// kafkalite's targets are) and are durable after [Mapping.Sync].
//
// Bytes may be read and written concurrently as the caller arranges; Sync
// and Close are safe for concurrent use with each other, but nothing may
// touch the bytes once Close has begun: the memory is gone, and a stray
// access crashes the process.
type Mapping struct {
	f        vfs.File
	writable bool

	mu   sync.Mutex // protects data against Sync racing Close
	data []byte     // nil after Close, or for a zero-length mapping
}

// Map maps the first size bytes of the operating-system file behind f with
// MAP_SHARED, read-only or read-write. It returns an error matching
// [ErrNotSupported] when f is not an operating-system file (a [MemFS] or
// [FaultFS] file) and on systems without mmap (Windows, where a mapped file
// also cannot be truncated or deleted; plan9; wasm): callers fall back to
// ReadAt and WriteAt.
//
// REQUIRES: size is at most f's size, and f is not truncated below size while
// mapped (a store or load past the end of the file kills the process with
// SIGBUS). f must be open for writing if writable, and stay open while
// [Mapping.Sync] is used. The mapping itself survives closing f.
func Map(f vfs.File, size int64, writable bool) (*Mapping, error) {
	osf := OSFile(f)
	if osf == nil || !mmapSupported {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: ErrNotSupported}
	}
	if size < 0 || size > math.MaxInt {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: fmt.Errorf("size %d: %w", size, syscall.EINVAL)}
	}
	fileSize, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > fileSize {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(),
			Err: fmt.Errorf("size %d beyond end of file at %d: %w", size, fileSize, syscall.EINVAL)}
	}
	m := &Mapping{f: f, writable: writable}
	if size == 0 {
		return m, nil // mmap rejects a zero length; there is nothing to map
	}
	data, err := mmap(osf, int(size), writable)
	if err != nil {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	m.data = data
	return m, nil
}

// MapGrowing maps the first size bytes of the operating-system file behind
// f read-only with MAP_SHARED, where size may exceed the file's current
// size: what later writes append, up to size, shows in the mapping, so that
// a growing file (an active segment's .log) is mapped once. It returns an
// error matching [ErrNotSupported] where [Map] does, on 32-bit systems
// (whose address space is too small for segment-sized mappings), and on
// systems where what write(2) writes is not known to show at once in shared
// mappings of the file (OpenBSD and AIX, whose buffer caches are not
// unified): callers fall back to ReadAt.
//
// REQUIRES: nothing touches the mapped bytes at or beyond the file's size
// at the time of the access. Pages past the end of the file are not backed:
// a load there kills the process with SIGBUS, and so does a load of bytes
// that a concurrent Truncate cuts off. The caller keeps what it reads below
// a size it knows the file has, and keeps truncation from running during
// its reads.
func MapGrowing(f vfs.File, size int64) (*Mapping, error) {
	osf := OSFile(f)
	if osf == nil || !mmapSupported || math.MaxInt == math.MaxInt32 || !WriteCoherent() {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: ErrNotSupported}
	}
	if size < 0 || size > math.MaxInt {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: fmt.Errorf("size %d: %w", size, syscall.EINVAL)}
	}
	m := &Mapping{f: f}
	if size == 0 {
		return m, nil
	}
	data, err := mmap(osf, int(size), false)
	if err != nil {
		return nil, &fs.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	m.data = data
	return m, nil
}

// WriteCoherent reports whether data written with write(2) shows at once in
// the shared mappings of the file (a unified buffer cache).
func WriteCoherent() bool {
	switch runtime.GOOS {
	case "openbsd", "aix":
		return false
	}
	return true
}

// Bytes returns the mapped memory: len(Bytes()) is the size given to [Map].
// It returns nil after Close.
func (m *Mapping) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.data
}

// Sync makes the stores into a writable mapping durable: msync(MS_SYNC)
// where the syscall package offers it, then [File.Sync] of the mapped file
// (msync alone does not reach the media on macOS, and fsync covers mapped
// pages on unified-buffer-cache systems where msync is not offered). It does
// nothing for a read-only mapping. After Close it returns [ErrClosed].
func (m *Mapping) Sync() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return &fs.PathError{Op: "msync", Path: "", Err: vfs.ErrClosed}
	}
	if !m.writable {
		return nil
	}
	if len(m.data) > 0 {
		if err := msync(m.data); err != nil {
			return &fs.PathError{Op: "msync", Path: m.f.Name(), Err: err}
		}
	}
	return m.f.Sync()
}

// Close unmaps the memory. Stores into a writable mapping are not lost by
// unmapping, but they are not durable either: Sync first. A second Close
// returns nil.
func (m *Mapping) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return nil
	}
	name := m.f.Name()
	data := m.data
	m.data, m.f = nil, nil
	if data == nil {
		return nil
	}
	if err := munmap(data); err != nil {
		return &fs.PathError{Op: "munmap", Path: name, Err: err}
	}
	return nil
}
