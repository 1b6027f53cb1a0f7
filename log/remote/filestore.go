package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kafkalite/kafkalite/internal/crc"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// FileStore is a StorageManager on a directory (a mounted volume, say),
// through a vfs.FS. A segment's copy is a directory entry per file:
//
//	<root>/<topic>-<partition>-<topic id>/<start offset, 20 digits>-<segment id>.<ext>
//
// with ext log, index, timeindex, txnindex (when the segment has one),
// snapshot and leader-epoch-checkpoint, and a manifest (ext manifest)
// listing each file's size and CRC-32C. Each file is written under a
// temporary name, fsynced and renamed; the manifest is written last, the
// same way, and is the copy's commit point: a copy without one is
// incomplete (ErrNotFound) and is removed by DeleteLogSegmentData. Every
// directory entry is made durable (the directory fsynced) before anything
// that depends on it: the root and the partition's directory before the
// files, the files before the manifest, the manifest before the copy
// returns. Fetches
// check sizes against the manifest, and checksums for whole files.
type FileStore struct {
	fs   vfs.FS
	root string
}

// NewFileStore returns a store rooted at root on fsys (vfs.Default for the
// operating system's filesystem). It does no I/O: root (whose parent must
// exist) and the partitions' directories are made by the first copy.
func NewFileStore(fsys vfs.FS, root string) *FileStore {
	return &FileStore{fs: fsys, root: root}
}

// copyChunk is how much a copy reads at once.
const copyChunk = 1 << 20

// maxManifestBytes bounds a manifest read back.
const maxManifestBytes = 4096

// The copy's files, by extension, in the order they are written.
var objectExts = []string{"log", "index", "timeindex", "txnindex", "snapshot", "leader-epoch-checkpoint"}

var indexExts = map[IndexType]string{
	OffsetIndex: "index", TimeIndex: "timeindex", ProducerSnapshot: "snapshot",
	TransactionIndex: "txnindex", LeaderEpochIndex: "leader-epoch-checkpoint",
}

func (s *FileStore) partitionDir(id SegmentID) string {
	return filepath.Join(s.root, fmt.Sprintf("%s-%d-%s", id.Topic, id.Partition, id.TopicID))
}

func (s *FileStore) name(m SegmentMetadata, ext string) string {
	return filepath.Join(s.partitionDir(m.ID), fmt.Sprintf("%020d-%s.%s", m.StartOffset, m.ID.ID, ext))
}

// manifestEntry is a copied file's size and checksum.
type manifestEntry struct {
	size int64
	crc  uint32
}

// CopyLogSegmentData implements StorageManager.
func (s *FileStore) CopyLogSegmentData(ctx context.Context, m SegmentMetadata, data SegmentData) ([]byte, error) {
	dir := s.partitionDir(m.ID)
	if err := s.fs.MkdirAll(dir); err != nil {
		return nil, s.storageErr("copy", m, err)
	}
	// The entries of the root (in its parent) and of the partition's
	// directory (in the root) are durable before anything is in them.
	if err := errors.Join(s.fs.SyncDir(filepath.Dir(s.root)), s.fs.SyncDir(s.root)); err != nil {
		return nil, s.storageErr("copy", m, err)
	}
	// A manifest left by an earlier attempt goes first: the copy is
	// incomplete until the new one is written.
	if err := s.remove(s.name(m, "manifest")); err != nil {
		return nil, s.storageErr("copy", m, err)
	}
	sources := map[string]Source{"log": data.Log, "index": data.OffsetIndex, "timeindex": data.TimeIndex,
		"txnindex": data.TransactionIndex, "snapshot": data.ProducerSnapshot,
		"leader-epoch-checkpoint": {R: bytes.NewReader(data.LeaderEpochIndex), Size: int64(len(data.LeaderEpochIndex))}}
	var manifest strings.Builder
	for _, ext := range objectExts {
		src := sources[ext]
		if src.R == nil {
			if err := s.remove(s.name(m, ext)); err != nil {
				return nil, s.storageErr("copy", m, err)
			}
			continue
		}
		sum, err := s.writeFile(ctx, s.name(m, ext), src)
		if err != nil {
			return nil, s.storageErr("copy", m, err)
		}
		fmt.Fprintf(&manifest, "%s %d %d\n", ext, src.Size, sum)
	}
	// The files' names are durable before the manifest that lists them.
	if err := s.fs.SyncDir(dir); err != nil {
		return nil, s.storageErr("copy", m, err)
	}
	b := []byte(manifest.String())
	if _, err := s.writeFile(ctx, s.name(m, "manifest"), Source{R: bytes.NewReader(b), Size: int64(len(b))}); err != nil {
		return nil, s.storageErr("copy", m, err)
	}
	if err := s.fs.SyncDir(dir); err != nil {
		return nil, s.storageErr("copy", m, err)
	}
	return nil, nil
}

// writeFile copies src into name through a temporary file, fsynced and
// renamed, and returns its checksum.
func (s *FileStore) writeFile(ctx context.Context, name string, src Source) (uint32, error) {
	tmp := name + ".tmp"
	if err := s.remove(tmp); err != nil {
		return 0, err
	}
	f, err := s.fs.Create(tmp)
	if err != nil {
		return 0, err
	}
	var sum uint32
	buf := make([]byte, min(copyChunk, max(src.Size, 1)))
	for off := int64(0); off < src.Size; {
		if err := ctx.Err(); err != nil {
			f.Close()
			return 0, err
		}
		n := int(min(int64(len(buf)), src.Size-off))
		got, err := src.R.ReadAt(buf[:n], off)
		if got < n {
			f.Close()
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("reading the source at %d: %w", off, err)
		}
		sum = crc.Update(sum, buf[:n])
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return 0, err
		}
		off += int64(n)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return sum, s.fs.Rename(tmp, name)
}

// remove removes name; a missing one is not an error.
func (s *FileStore) remove(name string) error {
	if err := s.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// manifest reads and checks a copy's manifest.
func (s *FileStore) manifest(m SegmentMetadata) (map[string]manifestEntry, error) {
	name := s.name(m, "manifest")
	f, err := s.fs.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (no manifest %s)", ErrNotFound, m.ID, name)
	}
	if err != nil {
		return nil, s.storageErr("fetch", m, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, s.storageErr("fetch", m, err)
	}
	if size > maxManifestBytes {
		return nil, fmt.Errorf("%w: %s: manifest of %d bytes", ErrCorrupt, name, size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, s.storageErr("fetch", m, err)
	}
	out := map[string]manifestEntry{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: %s: line %q", ErrCorrupt, name, sc.Text())
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		sum, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil || size < 0 {
			return nil, fmt.Errorf("%w: %s: line %q", ErrCorrupt, name, sc.Text())
		}
		out[f[0]] = manifestEntry{size: size, crc: uint32(sum)}
	}
	if _, ok := out["log"]; !ok {
		return nil, fmt.Errorf("%w: %s: no log", ErrCorrupt, name)
	}
	return out, nil
}

// open opens a copied file and checks its size against the manifest.
func (s *FileStore) open(m SegmentMetadata, ext string, want manifestEntry) (vfs.File, error) {
	name := s.name(m, ext)
	f, err := s.fs.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %s is missing (the manifest lists it)", ErrCorrupt, m.ID, name)
	}
	if err != nil {
		return nil, s.storageErr("fetch", m, err)
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, s.storageErr("fetch", m, err)
	}
	if size != want.size {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %s has %d bytes, %d were copied", ErrCorrupt, m.ID, name, size, want.size)
	}
	return f, nil
}

// FetchLogSegment implements StorageManager.
func (s *FileStore) FetchLogSegment(ctx context.Context, m SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	man, err := s.manifest(m)
	if err != nil {
		return nil, err
	}
	want := man["log"]
	if end < 0 {
		end = want.size
	}
	if start < 0 || start > end || end > want.size {
		return nil, fmt.Errorf("remote: %s: range [%d, %d) outside the segment's %d bytes", m.ID, start, end, want.size)
	}
	f, err := s.open(m, "log", want)
	if err != nil {
		return nil, err
	}
	r := &fileReader{f: f, SectionReader: io.NewSectionReader(f, start, end-start)}
	if start == 0 && end == want.size {
		r.check, r.want, r.name = true, want.crc, s.name(m, "log")
	}
	return r, nil
}

// FetchIndex implements StorageManager.
func (s *FileStore) FetchIndex(ctx context.Context, m SegmentMetadata, t IndexType) (io.ReadCloser, error) {
	ext, ok := indexExts[t]
	if !ok {
		return nil, fmt.Errorf("remote: unknown index type %d", t)
	}
	man, err := s.manifest(m)
	if err != nil {
		return nil, err
	}
	want, ok := man[ext]
	if !ok {
		return nil, fmt.Errorf("%w: %s has no %s index", ErrNotFound, m.ID, t)
	}
	f, err := s.open(m, ext, want)
	if err != nil {
		return nil, err
	}
	return &fileReader{f: f, SectionReader: io.NewSectionReader(f, 0, want.size), check: true, want: want.crc,
		name: s.name(m, ext)}, nil
}

// DeleteLogSegmentData implements StorageManager: the manifest first (the
// copy stops being readable), then the files and any temporary ones.
func (s *FileStore) DeleteLogSegmentData(ctx context.Context, m SegmentMetadata) error {
	dir := s.partitionDir(m.ID)
	if err := s.remove(s.name(m, "manifest")); err != nil {
		return s.storageErr("delete", m, err)
	}
	for _, ext := range append(objectExts, "manifest") {
		for _, name := range []string{s.name(m, ext), s.name(m, ext) + ".tmp"} {
			if err := s.remove(name); err != nil {
				return s.storageErr("delete", m, err)
			}
		}
	}
	if err := s.fs.SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.storageErr("delete", m, err)
	}
	return nil
}

// Close implements StorageManager.
func (s *FileStore) Close() error { return nil }

func (s *FileStore) storageErr(op string, m SegmentMetadata, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %s %s: %w", ErrStorage, op, m.ID, err)
}

// fileReader reads a copied file; with check, it compares the checksum
// of what it read with the manifest's when it reaches the end, and fails
// the last read with ErrCorrupt if they differ.
type fileReader struct {
	*io.SectionReader
	f     vfs.File
	check bool
	want  uint32
	sum   uint32
	name  string
}

func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.SectionReader.Read(p)
	if r.check {
		r.sum = crc.Update(r.sum, p[:n])
		if errors.Is(err, io.EOF) && r.sum != r.want {
			return n, fmt.Errorf("%w: %s: checksum %08x, %08x was copied", ErrCorrupt, r.name, r.sum, r.want)
		}
	}
	return n, err
}

func (r *fileReader) Close() error { return r.f.Close() }
