package index

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kafkalite/kafkalite/log/vfs"
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
	// x.last is the last entry, (baseOffset, 0) when there is none: its
	// Offset is the index's last offset. Protected by x.mu.
	x fixedIndex[OffsetPosition]
}

// offsetCodec describes .index entries to fixedIndex.
var offsetCodec = entryCodec[OffsetPosition]{
	size:   OffsetIndexEntryBytes,
	parse:  parseOffsetEntry,
	none:   func(baseOffset int64) OffsetPosition { return OffsetPosition{Offset: baseOffset} },
	offset: offsetKey,
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
	ix := &OffsetIndex{x: fixedIndex[OffsetPosition]{codec: &offsetCodec}}
	if err := ix.x.createIndex(fsys, name, baseOffset, maxIndexBytes); err != nil {
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
	ix := &OffsetIndex{x: fixedIndex[OffsetPosition]{codec: &offsetCodec}}
	if err := ix.x.openIndex(fsys, name, baseOffset, maxIndexBytes, mode); err != nil {
		return nil, err
	}
	return ix, nil
}

// Name returns the file's name, as it was created or opened.
func (ix *OffsetIndex) Name() string { return ix.x.name }

// BaseOffset returns the base offset of the index's segment.
func (ix *OffsetIndex) BaseOffset() int64 { return ix.x.baseOffset }

// Entries returns the number of entries in use.
func (ix *OffsetIndex) Entries() int {
	return ix.x.stats().entries
}

// MaxEntries returns the number of slots of the file: its size / 8.
func (ix *OffsetIndex) MaxEntries() int {
	return ix.x.stats().maxEntries
}

// SizeBytes returns the file's current size (Kafka's length).
func (ix *OffsetIndex) SizeBytes() int64 {
	return ix.x.stats().length
}

// Mapped reports whether the index is served from a memory mapping rather
// than through ReadAt and WriteAt.
func (ix *OffsetIndex) Mapped() bool {
	return ix.x.stats().mapped
}

// IsFull reports whether every slot is in use: entries ≥ maxEntries. The
// segment rolls when it is (Kafka's LogSegment.shouldRoll).
func (ix *OffsetIndex) IsFull() bool {
	st := ix.x.stats()
	return st.entries >= st.maxEntries
}

// LastOffset returns the absolute offset of the last entry, or the base
// offset if the index is empty.
func (ix *OffsetIndex) LastOffset() int64 {
	return ix.x.lastEntry().Offset
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
	if x.entries > 0 && offset <= x.last.Offset {
		return fmt.Errorf("%w: append offset %d at slot %d of %s, not larger than the last offset %d",
			ErrInvalidOffset, offset, x.entries, x.name, x.last.Offset)
	}
	if !CanIndex(x.baseOffset, offset) {
		return &OffsetOverflowError{File: x.name, BaseOffset: x.baseOffset, Offset: offset}
	}
	rel := RelativeOffset(offset - x.baseOffset)
	e := x.wbuf[:OffsetIndexEntryBytes]
	binary.BigEndian.PutUint32(e, uint32(rel))
	binary.BigEndian.PutUint32(e[4:], uint32(position))
	if err := x.appendEntryLocked(e); err != nil {
		return err
	}
	x.last = OffsetPosition{Offset: offset, Position: position}
	return nil
}

// Lookup returns the entry with the largest offset ≤ target: the position
// from which to scan the .log for target. If the index is empty or target
// is below the first entry it returns (base offset, 0). It searches the
// last 8 KiB of entries first (Kafka's warm section) and does not allocate.
func (ix *OffsetIndex) Lookup(target int64) (OffsetPosition, error) {
	return ix.x.lookup(target, offsetKey)
}

// FetchUpperBoundOffset returns the entry with the smallest position ≥
// start.Position + fetchSize: an offset guaranteed to lie beyond a fetch of
// fetchSize bytes from start, though not in general the smallest such
// (Kafka's fetchUpperBoundOffset, which bounds the aborted transactions a
// read_committed fetch collects). ok is false if no entry is that far.
func (ix *OffsetIndex) FetchUpperBoundOffset(start OffsetPosition, fetchSize int) (e OffsetPosition, ok bool, err error) {
	target := int64(start.Position) + int64(fetchSize)
	if fetchSize > 0 && target < int64(start.Position) {
		target = math.MaxInt64 // saturate instead of wrapping
	}
	return ix.x.find(target, positionKey, true)
}

// Entry returns entry n, 0 ≤ n < Entries() ([ErrEntryOutOfRange]).
func (ix *OffsetIndex) Entry(n int) (OffsetPosition, error) {
	return ix.x.entry(n)
}

// AppendEntries appends every entry in use to dst, in file order, and
// returns the extended slice. It is meant for tools and tests.
func (ix *OffsetIndex) AppendEntries(dst []OffsetPosition) ([]OffsetPosition, error) {
	return ix.x.appendEntries(dst)
}

// TruncateTo removes the entries whose offset is ≥ offset, keeping those
// below it. Truncating to an offset above the last entry has no effect.
// The removed slots are zeroed.
func (ix *OffsetIndex) TruncateTo(offset int64) error {
	return ix.x.truncateTo(offset)
}

// TruncateToEntries keeps the first n entries (all of them if n ≥
// Entries()) and zeroes the rest.
func (ix *OffsetIndex) TruncateToEntries(n int) error {
	return ix.x.truncateToEntries(n)
}

// Reset removes every entry and resizes the file back to maxIndexBytes,
// ready for a rebuild from the .log (Kafka's reset).
func (ix *OffsetIndex) Reset() error {
	return ix.x.reset()
}

// Resize sets the file's size to roundDown(newSize, 8) bytes and remaps
// it, reporting whether the size changed. The segment re-expands the
// active segment's index to segment.index.bytes after opening it. Shrinking
// below the entries in use is [ErrInvalidSize].
func (ix *OffsetIndex) Resize(newSize int64) (bool, error) {
	return ix.x.resize(newSize)
}

// TrimToValidSize truncates the file to Entries() × 8 bytes (on roll and
// close). On a [ReadOnly] index it succeeds only if there is nothing to
// trim.
func (ix *OffsetIndex) TrimToValidSize() error {
	return ix.x.trim()
}

// Flush makes the entries durable (msync of the mapping, then fsync). It
// is a no-op on a [ReadOnly] index.
func (ix *OffsetIndex) Flush() error {
	return ix.x.flush()
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
	return x.sanityCheckLocked(x.last.Offset)
}

// Close trims a [ReadWrite] index to its entries, unmaps and closes the
// file, and returns every error joined. Deleting or renaming the file is the
// segment's job. A second Close returns nil.
func (ix *OffsetIndex) Close() error {
	return ix.x.close()
}
