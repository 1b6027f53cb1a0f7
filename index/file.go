package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/kafkalite/kafkalite/internal/fileio"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Mode says how an existing index file is opened.
type Mode int

const (
	// ReadOnly opens the trimmed index of an inactive segment: the file is
	// opened read-only (mapped read-only where possible) and every slot of
	// it is an entry, entries = size / entrySize, as Kafka counts.
	// Mutating calls return [ErrReadOnly]; to make an inactive segment
	// active again (a log truncated back into it), close the index and
	// reopen it ReadWrite.
	ReadOnly Mode = iota
	// ReadWrite opens the index of the active segment for appending (mapped
	// read-write where possible). The file may still be preallocated and
	// zero-filled past its entries (after a crash, or when it was not
	// trimmed): the entries are the slots up to and including the last one
	// holding a non-zero byte. A trimmed file therefore opens with every
	// slot in use and is full until [OffsetIndex.Resize] re-expands it.
	ReadWrite
)

func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "ReadOnly"
	case ReadWrite:
		return "ReadWrite"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// DefaultMaxIndexBytes is Kafka's default segment.index.bytes
// (log.index.size.max.bytes): 10 MiB.
const DefaultMaxIndexBytes = 10 << 20

// warmSectionBytes is the size of the "warm" tail of an index that lookups
// search first (Kafka's AbstractIndex.warmEntries: 8192 / entrySize).
const warmSectionBytes = 8192

// maxFileBytes bounds the size of an index file: Kafka maps the whole file
// into one MappedByteBuffer, whose size is an int.
const maxFileBytes = math.MaxInt32

// entryBuf holds one entry of either fixed-size index (8 or 12 bytes).
type entryBuf = [16]byte

// bufPool holds scratch buffers for reading entries through ReadAt, so that
// lookups on unmapped indexes do not allocate. It holds *entryBuf.
var bufPool = sync.Pool{New: func() any { return new(entryBuf) }}

// zeroChunk is a source of zeros for scanning and clearing the unused tail.
var zeroChunk [64 << 10]byte

// keyFunc extracts the search key of one entry's bytes.
type keyFunc func(entry []byte, baseOffset int64) int64

// fileState is what every index knows of its file: the name and mode it
// was opened with, which never change, and, protected by the index's mu,
// the file itself and the sticky error. It is shared by [indexFile] and
// [TxnIndex].
type fileState struct {
	name     string
	writable bool
	f        vfs.File // nil once closed
	err      error    // sticky error of a failed write, truncate or sync
}

// openFile opens name read-only or read-write, as mode says.
func openFile(fsys vfs.FS, name string, mode Mode) (vfs.File, error) {
	switch mode {
	case ReadOnly:
		return fsys.Open(name)
	case ReadWrite:
		return fsys.OpenReadWrite(name)
	}
	return nil, fmt.Errorf("index: open %s: invalid mode %v", name, mode)
}

func (s *fileState) closeFile() error {
	f := s.f
	s.f = nil
	return f.Close()
}

// checkOpenLocked returns ErrClosed after Close.
func (s *fileState) checkOpenLocked() error {
	if s.f == nil {
		return fmt.Errorf("%w: %s", ErrClosed, s.name)
	}
	return nil
}

// checkWritableLocked returns the error a mutation must return, if any.
func (s *fileState) checkWritableLocked() error {
	if err := s.checkOpenLocked(); err != nil {
		return err
	}
	if !s.writable {
		return fmt.Errorf("%w: %s", ErrReadOnly, s.name)
	}
	return s.err
}

// fail records err as the sticky error and returns it.
func (s *fileState) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return err
}

// syncer is what syncLocked makes durable: a file or a memory mapping.
type syncer interface{ Sync() error }

// syncLocked makes a writable file durable through to, which is only used
// once the file is known to be open. It is a no-op on a read-only file.
func (s *fileState) syncLocked(to syncer) error {
	if err := s.checkOpenLocked(); err != nil {
		return err
	}
	if !s.writable {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if err := to.Sync(); err != nil {
		return s.fail(fmt.Errorf("index: sync %s: %w", s.name, err))
	}
	return nil
}

// indexFile is the machinery shared by [OffsetIndex] and [TimeIndex]: the
// file, its optional memory mapping, and the count of entries in use.
//
// Lookups take mu for reading, mutations take it for writing, so lookups
// run concurrently with each other and see either the state before or after
// a mutation.
type indexFile struct {
	fileState // f and err are protected by mu

	baseOffset    int64
	entrySize     int
	maxIndexBytes int

	mu sync.RWMutex // protects the fields below and fileState's f and err
	// data is the memory mapping's bytes (len == length) while the file is
	// mapped, nil otherwise: then entries are read and written with ReadAt
	// and WriteAt. noMap is set once the vfs reports that the file cannot
	// be mapped (memory FS, fault injector, platform without mmap).
	noMap      bool
	m          *fileio.Mapping
	data       []byte
	length     int64 // the file's size in bytes
	maxEntries int   // length / entrySize
	entries    int   // entries in use
	// written is how many bytes from the file's start lie in pages known
	// to hold data (whose blocks are allocated). A mapped index writes an entry reaching past it with
	// WriteAt, not through the mapping: a write fault that allocates a
	// file's first block costs milliseconds on some filesystems (ext4 on
	// a VM here: 2–5 ms, against 6 µs for the write), and a recovery
	// rebuilding the indexes of 1,000 partitions paid it 2,000 times. The
	// mapping sees the written page at once where the OS has a unified
	// buffer cache (fileio.WriteCoherent); elsewhere every write goes
	// through the mapping.
	written int64
	wbuf    entryBuf
}

// roundDown returns the largest multiple of factor that is ≤ n.
func roundDown(n, factor int64) int64 { return factor * (n / factor) }

// create creates name, preallocated to roundDown(maxIndexBytes, entrySize)
// bytes of zeros, open for appending. If it fails after creating the file,
// it removes it again.
func (x *indexFile) create(fsys vfs.FS, name string, baseOffset int64, entrySize, maxIndexBytes int) error {
	if maxIndexBytes < entrySize || int64(maxIndexBytes) > maxFileBytes {
		return fmt.Errorf("%w: %d bytes for %s (entries are %d bytes)", ErrInvalidSize, maxIndexBytes, name, entrySize)
	}
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	x.name, x.baseOffset, x.entrySize = name, baseOffset, entrySize
	x.maxIndexBytes, x.writable, x.f = maxIndexBytes, true, f
	size := roundDown(int64(maxIndexBytes), int64(entrySize))
	if err := f.Truncate(size); err != nil {
		x.f = nil
		return errors.Join(fmt.Errorf("index: preallocate %s: %w", name, err), f.Close(), fsys.Remove(name))
	}
	x.length = size
	x.maxEntries = int(size / int64(entrySize))
	if err := x.mapLocked(); err != nil {
		x.f = nil
		return errors.Join(err, f.Close(), fsys.Remove(name))
	}
	return nil
}

// open opens an existing index file and counts its entries as mode says.
func (x *indexFile) open(fsys vfs.FS, name string, baseOffset int64, entrySize, maxIndexBytes int, mode Mode) error {
	if maxIndexBytes < entrySize || int64(maxIndexBytes) > maxFileBytes {
		return fmt.Errorf("%w: %d bytes for %s (entries are %d bytes)", ErrInvalidSize, maxIndexBytes, name, entrySize)
	}
	f, err := openFile(fsys, name, mode)
	if err != nil {
		return err
	}
	x.name, x.baseOffset, x.entrySize = name, baseOffset, entrySize
	x.maxIndexBytes, x.writable, x.f = maxIndexBytes, mode == ReadWrite, f
	if err := x.load(); err != nil {
		return errors.Join(err, x.unmapLocked(), x.closeFile())
	}
	return nil
}

// load sizes, maps and counts the entries of a freshly opened file.
func (x *indexFile) load() error {
	size, err := x.f.Size()
	if err != nil {
		return fmt.Errorf("index: size of %s: %w", x.name, err)
	}
	if size < 0 || size > maxFileBytes {
		return corruptf(x.name, "file size %d is outside [0, %d]", size, int64(maxFileBytes))
	}
	x.length = size
	if err := x.mapLocked(); err != nil {
		return err
	}
	x.maxEntries = int(size / int64(x.entrySize))
	if !x.writable {
		x.entries = x.maxEntries
		return nil
	}
	n, err := x.countEntriesLocked()
	if err != nil {
		return err
	}
	x.entries = n
	x.written = roundUp(int64(n)*int64(x.entrySize), pageSize)
	return nil
}

// countEntriesLocked finds the entries of an index that may carry a zeroed,
// preallocated tail: the slots up to and including the last one that holds
// a non-zero byte. It reads the file backwards in chunks, so a trimmed file
// costs one chunk and an untrimmed 10 MiB file one sequential pass.
func (x *indexFile) countEntriesLocked() (int, error) {
	end := int64(x.maxEntries) * int64(x.entrySize)
	var buf []byte
	if x.data == nil {
		buf = make([]byte, min(end, int64(len(zeroChunk))))
	}
	for end > 0 {
		start := max(0, end-int64(len(zeroChunk)))
		var chunk []byte
		if x.data != nil {
			chunk = x.data[start:end]
		} else {
			chunk = buf[:end-start]
			if err := x.readAtLocked(chunk, start); err != nil {
				return 0, err
			}
		}
		if !bytes.Equal(chunk, zeroChunk[:len(chunk)]) {
			last := start + int64(len(chunk)) - 1
			for chunk[last-start] == 0 {
				last--
			}
			return int(last/int64(x.entrySize)) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// readAtLocked reads len(p) bytes at off through the file.
func (x *indexFile) readAtLocked(p []byte, off int64) error {
	return readFull(x.f, x.name, p, off)
}

// readFull reads len(p) bytes of f at off; a short read is
// io.ErrUnexpectedEOF.
func readFull(f vfs.File, name string, p []byte, off int64) error {
	n, err := f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("index: read %s at %d: %w", name, off, err)
}

// indexStats is a consistent snapshot of an index's counters.
type indexStats struct {
	entries    int   // entries in use
	maxEntries int   // slots of the file
	length     int64 // the file's size in bytes
	mapped     bool  // served from a memory mapping
}

// stats returns the counters, taking mu for reading.
func (x *indexFile) stats() indexStats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return indexStats{entries: x.entries, maxEntries: x.maxEntries, length: x.length, mapped: x.data != nil}
}

// entryLocked returns the bytes of slot n. With a mapping they alias it;
// otherwise they are read into buf. REQUIRES: 0 ≤ n < maxEntries, x.mu held.
func (x *indexFile) entryLocked(n int, buf *entryBuf) ([]byte, error) {
	off := int64(n) * int64(x.entrySize)
	if x.data != nil {
		return x.data[off : off+int64(x.entrySize)], nil
	}
	b := buf[:x.entrySize]
	if err := x.readAtLocked(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// scratch returns a buffer for entryLocked, to be given back with release.
// Mapped indexes need none. REQUIRES: x.mu held.
func (x *indexFile) scratch() *entryBuf {
	if x.data != nil {
		return nil
	}
	return bufPool.Get().(*entryBuf)
}

func release(buf *entryBuf) {
	if buf != nil {
		bufPool.Put(buf)
	}
}

// writeEntryLocked stores e in slot n. REQUIRES: n < maxEntries, x.mu held
// for writing.
func (x *indexFile) writeEntryLocked(n int, e []byte) error {
	off := int64(n) * int64(x.entrySize)
	end := off + int64(x.entrySize)
	if x.data != nil && (end <= x.written || !fileio.WriteCoherent()) {
		copy(x.data[off:off+int64(x.entrySize)], e)
		return nil
	}
	if _, err := x.f.WriteAt(e, off); err != nil {
		return x.fail(fmt.Errorf("index: write %s at %d: %w", x.name, off, err))
	}
	x.written = max(x.written, roundUp(end, pageSize))
	return nil
}

// pageSize is the OS's memory page size, the unit of written.
var pageSize = int64(os.Getpagesize())

// roundUp returns the smallest multiple of factor that is ≥ n.
func roundUp(n, factor int64) int64 { return roundDown(n+factor-1, factor) }

// largestLowerBoundLocked returns the slot of the largest entry whose key is
// ≤ target, or −1 if the index is empty or its first key is above target.
// It searches the warm tail first, as Kafka's indexSlotRangeFor does. On
// garbage (keys out of order) it still returns a slot whose key is ≤ target.
func (x *indexFile) largestLowerBoundLocked(target int64, key keyFunc, buf *entryBuf) (int, error) {
	slot, _, err := x.searchLocked(target, key, buf)
	return slot, err
}

// smallestUpperBoundLocked returns the slot of the smallest entry whose key
// is ≥ target, or −1 if there is none (Kafka's smallestUpperBoundSlotFor).
func (x *indexFile) smallestUpperBoundLocked(target int64, key keyFunc, buf *entryBuf) (int, error) {
	slot, exact, err := x.searchLocked(target, key, buf)
	switch {
	case err != nil:
		return 0, err
	case exact:
		return slot, nil
	case slot == x.entries-1:
		return -1, nil
	}
	// slot is −1 (below the first entry) or the largest key below target.
	return slot + 1, nil
}

// searchLocked is Kafka's indexSlotRangeFor: it returns the slot of the
// largest entry whose key is ≤ target (−1 if none, including the empty
// index) and whether its key equals target. It searches the warm section,
// the last warmSectionBytes of entries, first.
func (x *indexFile) searchLocked(target int64, key keyFunc, buf *entryBuf) (slot int, exact bool, err error) {
	n := x.entries
	if n == 0 {
		return -1, false, nil
	}
	firstHot := max(0, n-1-warmSectionBytes/x.entrySize)
	e, err := x.entryLocked(firstHot, buf)
	if err != nil {
		return 0, false, err
	}
	if key(e, x.baseOffset) < target {
		return x.binarySearchLocked(target, key, buf, firstHot, n-1, false)
	}
	e, err = x.entryLocked(0, buf)
	if err != nil {
		return 0, false, err
	}
	k0 := key(e, x.baseOffset)
	if k0 > target {
		return -1, false, nil
	}
	return x.binarySearchLocked(target, key, buf, 0, firstHot, k0 == target)
}

// binarySearchLocked searches slots [lo, hi] for the largest key ≤ target
// and reports whether it equals target; loExact says whether key(lo) does.
// REQUIRES: key(lo) ≤ target, which keeps the answer's key ≤ target even if
// the keys are out of order.
func (x *indexFile) binarySearchLocked(target int64, key keyFunc, buf *entryBuf, lo, hi int, loExact bool) (int, bool, error) {
	exact := loExact
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		e, err := x.entryLocked(mid, buf)
		if err != nil {
			return 0, false, err
		}
		switch k := key(e, x.baseOffset); {
		case k > target:
			hi = mid - 1
		case k < target:
			lo, exact = mid, false
		default:
			return mid, true, nil
		}
	}
	return lo, exact, nil
}

// firstAtLeastLocked returns the first slot whose key is ≥ target, or
// entries if there is none; for keys in non-decreasing order this is the
// number of entries with key < target.
func (x *indexFile) firstAtLeastLocked(target int64, key keyFunc, buf *entryBuf) (int, error) {
	lo, hi := 0, x.entries
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		e, err := x.entryLocked(mid, buf)
		if err != nil {
			return 0, err
		}
		if key(e, x.baseOffset) < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// appendEntryLocked stores e in the first free slot and counts it.
// REQUIRES: entries < maxEntries, x.mu held for writing, x writable.
func (x *indexFile) appendEntryLocked(e []byte) error {
	if err := x.writeEntryLocked(x.entries, e); err != nil {
		return err
	}
	x.entries++
	return nil
}

// truncateToEntriesLocked drops the entries from slot n on and zeroes their
// bytes, so that the zero-tail rule of [ReadWrite] opens holds after a crash.
// REQUIRES: 0 ≤ n, x.mu held for writing, x writable.
func (x *indexFile) truncateToEntriesLocked(n int) error {
	if n >= x.entries {
		return nil
	}
	from := int64(n) * int64(x.entrySize)
	to := int64(x.entries) * int64(x.entrySize)
	if x.data != nil {
		clear(x.data[from:to])
	} else {
		for off := from; off < to; {
			chunk := zeroChunk[:min(int64(len(zeroChunk)), to-off)]
			if _, err := x.f.WriteAt(chunk, off); err != nil {
				return x.fail(fmt.Errorf("index: clear %s at %d: %w", x.name, off, err))
			}
			off += int64(len(chunk))
		}
	}
	x.entries = n
	return nil
}

// resizeLocked sets the file's size to roundDown(newSize, entrySize) and
// remaps it. It reports whether the size changed.
func (x *indexFile) resizeLocked(newSize int64) (bool, error) {
	rounded := roundDown(newSize, int64(x.entrySize))
	if newSize < 0 || rounded > maxFileBytes {
		return false, fmt.Errorf("%w: resize %s to %d bytes", ErrInvalidSize, x.name, newSize)
	}
	if rounded == x.length {
		return false, nil
	}
	if used := int64(x.entries) * int64(x.entrySize); rounded < used {
		return false, fmt.Errorf("%w: resize %s to %d bytes below the %d bytes in use", ErrInvalidSize, x.name, newSize, used)
	}
	if err := x.unmapLocked(); err != nil {
		return false, x.fail(err)
	}
	if err := x.f.Truncate(rounded); err != nil {
		return false, x.fail(fmt.Errorf("index: resize %s to %d bytes: %w", x.name, rounded, err))
	}
	x.length = rounded
	x.maxEntries = int(rounded / int64(x.entrySize))
	x.written = min(x.written, roundUp(rounded, pageSize)) // pages cut off may come back as holes
	if err := x.mapLocked(); err != nil {
		return false, x.fail(err)
	}
	return true, nil
}

// resize is resizeLocked for a writable index, taking mu.
func (x *indexFile) resize(newSize int64) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return false, err
	}
	return x.resizeLocked(newSize)
}

// flush makes the entries durable, taking mu.
func (x *indexFile) flush() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m != nil {
		// Mapping.Sync is msync followed by an fsync of the file.
		return x.syncLocked(x.m)
	}
	return x.syncLocked(x.f)
}

// trim is trimLocked, taking mu.
func (x *indexFile) trim() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.trimLocked()
}

// trimLocked truncates a writable index to the bytes in use. A read-only
// index that already is that size is fine; otherwise it is ErrReadOnly.
func (x *indexFile) trimLocked() error {
	if err := x.checkOpenLocked(); err != nil {
		return err
	}
	used := int64(x.entries) * int64(x.entrySize)
	if !x.writable {
		if used == x.length {
			return nil
		}
		return fmt.Errorf("%w: %s", ErrReadOnly, x.name)
	}
	if x.err != nil {
		return x.err
	}
	_, err := x.resizeLocked(used)
	return err
}

// close trims a writable index, unmaps and closes the file, joining every
// error, taking mu. A second call returns nil.
func (x *indexFile) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.f == nil {
		return nil
	}
	var errs []error
	if x.writable && x.err == nil {
		errs = append(errs, x.trimLocked())
	}
	errs = append(errs, x.unmapLocked(), x.f.Close())
	x.f = nil
	return errors.Join(errs...)
}

// sanityCheckLocked applies the checks Kafka makes of both fixed-size
// indexes: the last entry's offset, lastOffset, is not below the base
// offset, and the file size is a multiple of the entry size.
func (x *indexFile) sanityCheckLocked(lastOffset int64) error {
	if x.entries != 0 && lastOffset < x.baseOffset {
		return corruptf(x.name, "the last offset %d is below the base offset %d", lastOffset, x.baseOffset)
	}
	if x.length%int64(x.entrySize) != 0 {
		return corruptf(x.name, "size %d is not a multiple of %d", x.length, x.entrySize)
	}
	return nil
}

// mapLocked maps the file's length bytes, read-write if the index is
// writable, unless the vfs cannot map this file (then the index works
// through ReadAt and WriteAt from now on) or the file is empty (mmap
// rejects a zero length; there is nothing to read).
func (x *indexFile) mapLocked() error {
	if x.noMap || x.length == 0 {
		return nil
	}
	m, err := fileio.Map(x.f, x.length, x.writable)
	if errors.Is(err, fileio.ErrNotSupported) {
		x.noMap = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: map %s: %w", x.name, err)
	}
	x.m, x.data = m, m.Bytes()
	return nil
}

// unmapLocked removes the mapping, if any. Nothing may touch x.data
// afterwards, which holding x.mu for writing guarantees.
func (x *indexFile) unmapLocked() error {
	m := x.m
	if m == nil {
		return nil
	}
	x.m, x.data = nil, nil
	if err := m.Close(); err != nil {
		return fmt.Errorf("index: unmap %s: %w", x.name, err)
	}
	return nil
}
