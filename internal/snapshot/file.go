package snapshot

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/segment"
)

// Suffix ends every snapshot file's name. Part of Kafka's layout; must not
// change.
const Suffix = ".snapshot"

// maxFileBytes bounds what [Read] loads: 256 MiB is over five million
// producers in one partition. A larger file is refused as corrupt, so the
// state is rebuilt from the log rather than read into memory.
const maxFileBytes = 256 << 20

// FileName returns the name of the snapshot at offset: the offset
// zero-padded to 20 digits, then ".snapshot" ("00000000000000001200.snapshot"),
// as [segment.FileName] formats every file named by an offset.
// REQUIRES: offset ≥ 0.
func FileName(offset int64) string { return segment.FileName(offset, Suffix) }

// ParseFileName returns the offset of a snapshot file name, a base name as
// [FileName] makes it: exactly 20 decimal digits, then ".snapshot", and
// nothing after (so "<offset>.snapshot.deleted" and ".tmp" files are not
// snapshots). ok is false for any other name.
func ParseFileName(name string) (offset int64, ok bool) {
	offset, suffix, err := segment.ParseFileName(name)
	if err != nil || suffix != Suffix {
		return 0, false
	}
	return offset, true
}

// Write replaces the snapshot at offset in dir with one holding entries,
// encoded by [Encode] in the order given, through checkpoint.WriteFileAtomic.
// The directory must exist. A negative offset is an error matching
// [ErrInvalid], and nothing is written.
//
// Durability: when Write returns nil the snapshot is durable. A crash
// before that leaves the old snapshot at offset (or none) and never a torn
// one, plus perhaps a stale "<name>.tmp" that [List] ignores. On error,
// treat the snapshot as not written.
func Write(fsys vfs.FS, dir string, offset int64, entries []Entry) error {
	if offset < 0 {
		return fmt.Errorf("%w: negative snapshot offset %d", ErrInvalid, offset)
	}
	return checkpoint.WriteFileAtomic(fsys, filepath.Join(dir, FileName(offset)), Encode(nil, entries))
}

// WriteUnsynced replaces the snapshot at offset like [Write] but syncs
// nothing ([checkpoint.WriteFileReplace]): Kafka writes the snapshot taken
// at a segment roll this way and flushes it later with the segment. After a
// machine crash the file may be missing, old or damaged; [Read] reports a
// damaged one as corrupt, and the state is rebuilt from an older snapshot
// and the log. Make it durable with [Sync].
func WriteUnsynced(fsys vfs.FS, dir string, offset int64, entries []Entry) error {
	if offset < 0 {
		return fmt.Errorf("%w: negative snapshot offset %d", ErrInvalid, offset)
	}
	return checkpoint.WriteFileReplace(fsys, filepath.Join(dir, FileName(offset)), Encode(nil, entries))
}

// Sync makes the snapshot at offset in dir durable (its directory entry
// needs a sync of dir too).
func Sync(fsys vfs.FS, dir string, offset int64) error {
	return checkpoint.SyncFile(fsys, filepath.Join(dir, FileName(offset)))
}

// Read reads and decodes the snapshot file at path. A missing file is an
// error matching fs.ErrNotExist; a file that breaks the format, or is
// larger than 256 MiB, is a [*CorruptError] (with File set to path)
// matching [ErrCorrupt]: delete it and rebuild the state from the log.
func Read(fsys vfs.FS, path string) (entries []Entry, err error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size > maxFileBytes {
		return nil, &CorruptError{File: path, Reason: fmt.Sprintf("%d bytes, over the %d-byte limit", size, maxFileBytes)}
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	entries, err = Decode(buf[:n])
	if ce, ok := errors.AsType[*CorruptError](err); ok {
		ce.File = path
	}
	return entries, err
}

// List returns the offsets of the snapshot files in dir (names that
// [ParseFileName] accepts, directories excluded), ascending. A missing
// directory is an error matching fs.ErrNotExist.
func List(fsys vfs.FS, dir string) ([]int64, error) {
	infos, err := fsys.List(dir)
	if err != nil {
		return nil, err
	}
	var offsets []int64
	for _, fi := range infos {
		if fi.IsDir {
			continue
		}
		if offset, ok := ParseFileName(fi.Name); ok {
			offsets = append(offsets, offset)
		}
	}
	slices.Sort(offsets)
	return offsets, nil
}
