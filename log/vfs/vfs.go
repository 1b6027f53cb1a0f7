package vfs

import (
	"errors"
	"io"
	"time"
)

// Sentinel errors. Implementations wrap the operating system's errors so that
// errors.Is(err, fs.ErrNotExist) and friends keep working; these are for the
// states of our own.
var (
	// ErrLocked is returned by [FS.Lock] when another holder owns the lock.
	ErrLocked = errors.New("vfs: locked by another holder")
	// ErrClosed is returned, wrapped in an *fs.PathError, by operations on a
	// closed [File], including a second Close.
	ErrClosed = errors.New("vfs: file closed")
)

// File is an open file. ReadAt, Size and Name are safe for concurrent use,
// also while one goroutine writes; Write, WriteAt, Truncate and Sync must be
// serialised by the caller (one writer per file). Close must not race with
// other calls.
type File interface {
	io.ReaderAt
	// Write appends at the file's write position, which starts at 0 for a
	// created file and at the end for [FS.OpenReadWrite]; Truncate to a size
	// below it moves the write position to the new end.
	io.Writer
	io.WriterAt
	io.Closer
	// Sync makes the file's data durable.
	Sync() error
	// Truncate sets the file's size; growing it fills with zeros (sparse
	// where the implementation can: preallocated index files cost nothing).
	Truncate(size int64) error
	// Size returns the file's current size in bytes.
	Size() (int64, error)
	// Name returns the name the file was opened with.
	Name() string
}

// FileInfo describes a directory entry.
type FileInfo struct {
	Name    string // base name
	Size    int64
	IsDir   bool
	ModTime time.Time
}

// FS is a filesystem. Implementations are safe for concurrent use.
type FS interface {
	// Create creates a new file for reading and writing; it fails with an
	// error matching fs.ErrExist if the name exists.
	Create(name string) (File, error)
	// Open opens an existing file read-only. Write, WriteAt and Truncate on
	// it fail.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing, with the
	// write position at its end.
	OpenReadWrite(name string) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a directory tree; a missing name is not an error.
	RemoveAll(name string) error
	// Rename atomically replaces newname with oldname. Its errors are
	// *os.LinkError.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(dir string) error
	// List returns the entries of a directory sorted by name.
	List(dir string) ([]FileInfo, error)
	// Stat describes one name.
	Stat(name string) (FileInfo, error)
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
	// Lock takes an exclusive advisory lock on the named file, creating it if
	// needed (its directory must exist). It fails with an error matching
	// [ErrLocked] if another process, or another holder in this process, has
	// it. Closing the returned Closer releases it; a second Close returns nil.
	Lock(name string) (io.Closer, error)
}

// Default is the operating system's filesystem.
var Default FS = osFS{}
