package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/kafkalite/kafkalite/internal/vfs"
)

// OffsetIndexEntryBytes is the size of one .index entry. Part of the file
// format: frozen.
const OffsetIndexEntryBytes = 8

// OffsetIndex is a segment's .index file: a sparse map from offsets to byte
// positions in the .log (Kafka's OffsetIndex). See the package
// documentation for the format and the filling rules.
//
// An OffsetIndex is safe for concurrent use: lookups run in parallel with
// each other; mutations (Append, TruncateTo, Resize, ...) are serialised
// with them. Kafka expects a single writer, the segment's appender.
type OffsetIndex struct {
	x indexFile
	// lastOffset is the absolute offset of the last entry, baseOffset when
	// there is none. Protected by x.mu.
	lastOffset int64
}

func offsetKey(e []byte, baseOffset int64) int64 {
	return baseOffset + int64(int32(binary.BigEndian.Uint32(e)))
}

func positionKey(e []byte, _ int64) int64 {
	return int64(int32(binary.BigEndian.Uint32(e[4:])))
}

func parseOffsetEntry(e []byte, baseOffset int64) OffsetPosition {
	return OffsetPosition{
		Offset:   offsetKey(e, baseOffset),
		Position: Position(int32(binary.BigEndian.Uint32(e[4:]))),
	}
}

// CreateOffsetIndex creates a new .index file for the segment starting at
// baseOffset, preallocated to roundDown(maxIndexBytes, 8) bytes of zeros
// (maxIndexBytes is segment.index.bytes, [DefaultMaxIndexBytes] by default),
// open for appending. It fails if the file exists. The new file is durable
// only after [OffsetIndex.Flush] and a sync of its directory.
func CreateOffsetIndex(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int) (*OffsetIndex, error) {
	ix := &OffsetIndex{lastOffset: baseOffset}
	if err := ix.x.create(fsys, name, baseOffset, OffsetIndexEntryBytes, maxIndexBytes); err != nil {
		return nil, err
	}
	return ix, nil
}

// OpenOffsetIndex opens an existing .index file of the segment starting at
// baseOffset. mode says how its entries are counted ([ReadOnly]: every slot;
// [ReadWrite]: up to the last non-zero slot). maxIndexBytes is
// segment.index.bytes, the size [OffsetIndex.Reset] returns to. Open reads
// at most the last entry (or, for an untrimmed [ReadWrite] file, its zeroed
// tail); it does not check the entries: call [OffsetIndex.SanityCheck].
func OpenOffsetIndex(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int, mode Mode) (*OffsetIndex, error) {
	ix := &OffsetIndex{}
	if err := ix.x.open(fsys, name, baseOffset, OffsetIndexEntryBytes, maxIndexBytes, mode); err != nil {
		return nil, err
	}
	if err := ix.loadLastLocked(); err != nil {
		return nil, errors.Join(err, ix.x.unmapLocked(), ix.x.closeFile())
	}
	return ix, nil
}

// loadLastLocked sets lastOffset from the last entry.
func (ix *OffsetIndex) loadLastLocked() error {
	x := &ix.x
	if x.entries == 0 {
		ix.lastOffset = x.baseOffset
		return nil
	}
	buf := x.scratch()
	defer release(buf)
	e, err := x.entryLocked(x.entries-1, buf)
	if err != nil {
		return err
	}
	ix.lastOffset = offsetKey(e, x.baseOffset)
	return nil
}

// Name returns the file's name, as it was created or opened.
func (ix *OffsetIndex) Name() string { return ix.x.name }

// BaseOffset returns the base offset of the index's segment.
func (ix *OffsetIndex) BaseOffset() int64 { return ix.x.baseOffset }

// Entries returns the number of entries in use.
func (ix *OffsetIndex) Entries() int {
	ix.x.mu.RLock()
	defer ix.x.mu.RUnlock()
	return ix.x.entries
}

// MaxEntries returns the number of slots of the file: its size / 8.
func (ix *OffsetIndex) MaxEntries() int {
	ix.x.mu.RLock()
	defer ix.x.mu.RUnlock()
	return ix.x.maxEntries
}

// SizeBytes returns the file's current size (Kafka's length).
func (ix *OffsetIndex) SizeBytes() int64 {
	ix.x.mu.RLock()
	defer ix.x.mu.RUnlock()
	return ix.x.length
}

// Mapped reports whether the index is served from a memory mapping rather
// than through ReadAt and WriteAt.
func (ix *OffsetIndex) Mapped() bool {
	ix.x.mu.RLock()
	defer ix.x.mu.RUnlock()
	return ix.x.data != nil
}

// IsFull reports whether every slot is in use: entries ≥ maxEntries. The
// segment rolls when it is (KAFKA_FORMAT §3.4).
func (ix *OffsetIndex) IsFull() bool {
	ix.x.mu.RLock()
	defer ix.x.mu.RUnlock()
	return ix.x.entries >= ix.x.maxEntries
}

// LastOffset returns the absolute offset of the last entry, or the base
// offset if the index is empty.
func (ix *OffsetIndex) LastOffset() int64 {
	ix.x.mu.RLock()
	defer ix.x.mu.RUnlock()
	return ix.lastOffset
}

// CanAppendOffset reports whether offset can be stored relative to the base
// offset ([CanIndex]).
func (ix *OffsetIndex) CanAppendOffset(offset int64) bool {
	return CanIndex(ix.x.baseOffset, offset)
}

// Append adds the entry (offset, position): the batch whose last offset is
// offset starts at byte position of the .log. offset must be larger than
// the last entry's ([ErrInvalidOffset]) and fit a relative offset
// ([ErrOffsetOverflow]); the index must not be full ([ErrIndexFull]). The
// entry is in the page cache (or the memory FS) when Append returns, durable
// after [OffsetIndex.Flush].
func (ix *OffsetIndex) Append(offset int64, position Position) error {
	x := &ix.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	if x.entries >= x.maxEntries {
		return fmt.Errorf("%w: %s has %d of %d entries", ErrIndexFull, x.name, x.entries, x.maxEntries)
	}
	if x.entries > 0 && offset <= ix.lastOffset {
		return fmt.Errorf("%w: append offset %d at slot %d of %s, not larger than the last offset %d",
			ErrInvalidOffset, offset, x.entries, x.name, ix.lastOffset)
	}
	if !CanIndex(x.baseOffset, offset) {
		return &OffsetOverflowError{File: x.name, BaseOffset: x.baseOffset, Offset: offset}
	}
	rel := RelativeOffset(offset - x.baseOffset)
	e := x.wbuf[:OffsetIndexEntryBytes]
	binary.BigEndian.PutUint32(e, uint32(rel))
	binary.BigEndian.PutUint32(e[4:], uint32(position))
	if err := x.writeEntryLocked(x.entries, e); err != nil {
		return err
	}
	x.entries++
	ix.lastOffset = offset
	return nil
}

// Lookup returns the entry with the largest offset ≤ target: the position
// from which to scan the .log for target. If the index is empty or target
// is below the first entry it returns (base offset, 0). It searches the
// last 8 KiB of entries first (Kafka's warm section) and does not allocate.
func (ix *OffsetIndex) Lookup(target int64) (OffsetPosition, error) {
	x := &ix.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return OffsetPosition{}, err
	}
	buf := x.scratch()
	defer release(buf)
	slot, err := x.largestLowerBoundLocked(target, offsetKey, buf)
	if err != nil {
		return OffsetPosition{}, err
	}
	if slot < 0 {
		return OffsetPosition{Offset: x.baseOffset}, nil
	}
	e, err := x.entryLocked(slot, buf)
	if err != nil {
		return OffsetPosition{}, err
	}
	return parseOffsetEntry(e, x.baseOffset), nil
}

// FetchUpperBoundOffset returns the entry with the smallest position ≥
// start.Position + fetchSize: an offset guaranteed to lie beyond a fetch of
// fetchSize bytes from start, though not in general the smallest such
// (Kafka's fetchUpperBoundOffset, which bounds the aborted transactions a
// read_committed fetch collects). ok is false if no entry is that far.
func (ix *OffsetIndex) FetchUpperBoundOffset(start OffsetPosition, fetchSize int) (e OffsetPosition, ok bool, err error) {
	x := &ix.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return OffsetPosition{}, false, err
	}
	buf := x.scratch()
	defer release(buf)
	target := int64(start.Position) + int64(fetchSize)
	if fetchSize > 0 && target < int64(start.Position) {
		target = math.MaxInt64 // saturate instead of wrapping
	}
	slot, err := x.smallestUpperBoundLocked(target, positionKey, buf)
	if err != nil || slot < 0 {
		return OffsetPosition{}, false, err
	}
	b, err := x.entryLocked(slot, buf)
	if err != nil {
		return OffsetPosition{}, false, err
	}
	return parseOffsetEntry(b, x.baseOffset), true, nil
}

// Entry returns entry n, 0 ≤ n < Entries() ([ErrEntryOutOfRange]).
func (ix *OffsetIndex) Entry(n int) (OffsetPosition, error) {
	x := &ix.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return OffsetPosition{}, err
	}
	if n < 0 || n >= x.entries {
		return OffsetPosition{}, fmt.Errorf("%w: entry %d of %s, which has %d", ErrEntryOutOfRange, n, x.name, x.entries)
	}
	buf := x.scratch()
	defer release(buf)
	e, err := x.entryLocked(n, buf)
	if err != nil {
		return OffsetPosition{}, err
	}
	return parseOffsetEntry(e, x.baseOffset), nil
}

// AppendEntries appends every entry in use to dst, in file order, and
// returns the extended slice. It is meant for tools and tests.
func (ix *OffsetIndex) AppendEntries(dst []OffsetPosition) ([]OffsetPosition, error) {
	x := &ix.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return dst, err
	}
	buf := x.scratch()
	defer release(buf)
	for n := range x.entries {
		e, err := x.entryLocked(n, buf)
		if err != nil {
			return dst, err
		}
		dst = append(dst, parseOffsetEntry(e, x.baseOffset))
	}
	return dst, nil
}

// TruncateTo removes the entries whose offset is ≥ offset, keeping those
// below it. Truncating to an offset above the last entry has no effect.
// The removed slots are zeroed.
func (ix *OffsetIndex) TruncateTo(offset int64) error {
	x := &ix.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	buf := x.scratch()
	defer release(buf)
	n, err := x.firstAtLeastLocked(offset, offsetKey, buf)
	if err != nil {
		return err
	}
	return ix.truncateToEntriesLocked(n)
}

// TruncateToEntries keeps the first n entries (all of them if n ≥
// Entries()) and zeroes the rest.
func (ix *OffsetIndex) TruncateToEntries(n int) error {
	x := &ix.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	return ix.truncateToEntriesLocked(max(n, 0))
}

func (ix *OffsetIndex) truncateToEntriesLocked(n int) error {
	if err := ix.x.truncateToEntriesLocked(n); err != nil {
		return err
	}
	return ix.loadLastLocked()
}

// Reset removes every entry and resizes the file back to maxIndexBytes,
// ready for a rebuild from the .log (Kafka's reset).
func (ix *OffsetIndex) Reset() error {
	x := &ix.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	if err := ix.truncateToEntriesLocked(0); err != nil {
		return err
	}
	_, err := x.resizeLocked(int64(x.maxIndexBytes))
	return err
}

// Resize sets the file's size to roundDown(newSize, 8) bytes and remaps
// it, reporting whether the size changed. The segment re-expands the
// active segment's index to segment.index.bytes after opening it. Shrinking
// below the entries in use is [ErrInvalidSize].
func (ix *OffsetIndex) Resize(newSize int64) (bool, error) {
	x := &ix.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return false, err
	}
	return x.resizeLocked(newSize)
}

// TrimToValidSize truncates the file to Entries() × 8 bytes (on roll and
// close). On a [ReadOnly] index it succeeds only if there is nothing to
// trim.
func (ix *OffsetIndex) TrimToValidSize() error {
	ix.x.mu.Lock()
	defer ix.x.mu.Unlock()
	return ix.x.trimLocked()
}

// Flush makes the entries durable (msync of the mapping, then fsync). It
// is a no-op on a [ReadOnly] index.
func (ix *OffsetIndex) Flush() error {
	ix.x.mu.Lock()
	defer ix.x.mu.Unlock()
	return ix.x.flushLocked()
}

// SanityCheck applies Kafka's checks to the index as opened: the file size
// is a multiple of 8, and the last entry's offset is not below the base
// offset. A failure is a [*CorruptIndexError]; the segment then rebuilds the
// index from the .log.
func (ix *OffsetIndex) SanityCheck() error {
	x := &ix.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return err
	}
	if x.entries != 0 && ix.lastOffset < x.baseOffset {
		return corruptf(x.name, "the last offset %d is below the base offset %d", ix.lastOffset, x.baseOffset)
	}
	if x.length%OffsetIndexEntryBytes != 0 {
		return corruptf(x.name, "size %d is not a multiple of %d", x.length, OffsetIndexEntryBytes)
	}
	return nil
}

// Close trims a [ReadWrite] index to its entries, unmaps and closes the
// file, and returns every error joined. Deleting or renaming the file is the
// segment's job. A second Close returns nil.
func (ix *OffsetIndex) Close() error {
	ix.x.mu.Lock()
	defer ix.x.mu.Unlock()
	return ix.x.closeLocked()
}
