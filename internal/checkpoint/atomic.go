package checkpoint

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// TempSuffix is appended to a file's name for the temporary copy that
// [WriteFileAtomic] writes and renames, as Kafka does ("<name>.tmp").
const TempSuffix = ".tmp"

// Size limits for reading, checked before allocating: a reader refuses a
// larger file with a [*FormatError]. Checkpoint files hold one short line
// per partition (100,000 partitions are about 4 MiB); the other files are a
// few lines.
const (
	maxCheckpointBytes = 256 << 20
	maxSmallFileBytes  = 1 << 20
)

// WriteFileAtomic replaces the file path with data, durably and atomically,
// as Kafka writes every file of this package: it removes a stale
// path+".tmp" left by an earlier crash, creates path+".tmp", writes data,
// syncs and closes it, renames it over path and syncs path's directory.
// The directory must exist (its own entry's durability is the caller's).
//
// Durability: after WriteFileAtomic returns nil, the new contents are durable
// and have replaced the old ones. A crash at any point before that leaves
// either the old file (or no file, if there was none) or the new one, never
// a mix, plus possibly a stale path+".tmp", which readers ignore and the
// next write removes.
//
// On error the old file is still in place, except after a failed sync of the
// directory: the rename has then happened (the new contents are visible and
// synced) but is not known to be durable, so a crash may still bring the old
// file back. Either way the caller should treat the write as not done and
// write again. The temporary file is removed after a failure before the
// rename, as far as the filesystem lets us.
//
// Writes to one path must be serialised by the caller: two at once would
// share the temporary file.
func WriteFileAtomic(fsys vfs.FS, path string, data []byte) error {
	if err := replaceFile(fsys, path, data, true); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// WriteFileReplace replaces the file path with data like
// [WriteFileAtomic], but syncs nothing: readers see the old contents or the
// new ones, never a mix, but a crash of the machine may leave the old file,
// the new one, or the new name with missing or zeroed data. For files whose
// readers detect damage and can rebuild them (producer snapshots, with their
// CRC); [SyncFile] makes the new contents durable later.
func WriteFileReplace(fsys vfs.FS, path string, data []byte) error {
	return replaceFile(fsys, path, data, false)
}

// SyncFile makes the contents of the file path durable (not its directory
// entry: sync the directory for that).
func SyncFile(fsys vfs.FS, path string) error {
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// replaceFile is the common part of [WriteFileAtomic] and
// [WriteFileReplace]: it removes a stale path+".tmp", writes data to a new
// one (synced if sync is set), closes it and renames it over path. After a
// failure past the removal it removes the temporary file.
func replaceFile(fsys vfs.FS, path string, data []byte, sync bool) error {
	tmp := path + TempSuffix
	if err := removeTemp(fsys, tmp); err != nil {
		return err
	}
	if err := writeFile(fsys, tmp, data, sync); err != nil {
		return errors.Join(err, removeTemp(fsys, tmp))
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return errors.Join(err, removeTemp(fsys, tmp))
	}
	return nil
}

// writeFile creates name, writes data, syncs it if sync is set, and closes
// it.
func writeFile(fsys vfs.FS, name string, data []byte, sync bool) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err == nil && sync {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// removeTemp removes a temporary file (a stale one, or after a failed
// write); a missing file is not an error.
func removeTemp(fsys vfs.FS, tmp string) error {
	if err := fsys.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readFile returns the contents of path, refusing a file larger than limit
// bytes with a [*FormatError]. A missing file is an error matching
// fs.ErrNotExist.
func readFile(fsys vfs.FS, path string, limit int64) (data []byte, err error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > limit {
		return nil, corruptf(path, 0, "file is %d bytes, over the %d-byte limit", size, limit)
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}
