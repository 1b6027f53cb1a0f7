package index

import (
	"encoding/binary"
	"fmt"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// TimeIndexEntryBytes is the size of one .timeindex entry. Part of the file
// format: frozen.
const TimeIndexEntryBytes = 12

// TimeIndex is a segment's .timeindex file: a sparse map from timestamps to
// offsets (Kafka's TimeIndex). An entry (T, O) says that no record before
// the batch ending at O has a timestamp above T. See the package
// documentation for the format and the filling rules.
//
// A TimeIndex is safe for concurrent use: lookups run in parallel with each
// other; mutations are serialised with them. Kafka expects a single writer,
// the segment's appender.
type TimeIndex struct {
	// x.last is the last entry, (NoTimestamp, baseOffset) when there is
	// none. Protected by x.mu.
	x fixedIndex[TimestampOffset]
}

// timeCodec describes .timeindex entries to fixedIndex.
var timeCodec = entryCodec[TimestampOffset]{
	size:  TimeIndexEntryBytes,
	parse: parseTimeEntry,
	none: func(baseOffset int64) TimestampOffset {
		return TimestampOffset{Timestamp: NoTimestamp, Offset: baseOffset}
	},
	offset: timeOffsetKey,
}

func timestampKey(e []byte, _ int64) int64 {
	return int64(binary.BigEndian.Uint64(e))
}

func timeOffsetKey(e []byte, baseOffset int64) int64 {
	return baseOffset + int64(int32(binary.BigEndian.Uint32(e[8:])))
}

func parseTimeEntry(e []byte, baseOffset int64) TimestampOffset {
	return TimestampOffset{Timestamp: timestampKey(e, baseOffset), Offset: timeOffsetKey(e, baseOffset)}
}

// CreateTimeIndex creates a new .timeindex file for the segment starting at
// baseOffset, preallocated to roundDown(maxIndexBytes, 12) bytes of zeros
// (10,485,756 bytes for the default [DefaultMaxIndexBytes]), open for
// appending. It fails if the file exists. The new file is durable only after
// [TimeIndex.Flush] and a sync of its directory.
func CreateTimeIndex(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int) (*TimeIndex, error) {
	ix := &TimeIndex{x: fixedIndex[TimestampOffset]{codec: &timeCodec}}
	if err := ix.x.createIndex(fsys, name, baseOffset, maxIndexBytes); err != nil {
		return nil, err
	}
	return ix, nil
}

// OpenTimeIndex opens an existing .timeindex file of the segment starting
// at baseOffset; mode and maxIndexBytes are as for [OpenOffsetIndex]. Open
// reads at most the last entry (or, for an untrimmed [ReadWrite] file, its
// zeroed tail); it does not check the entries: call
// [TimeIndex.SanityCheck].
func OpenTimeIndex(fsys vfs.FS, name string, baseOffset int64, maxIndexBytes int, mode Mode) (*TimeIndex, error) {
	ix := &TimeIndex{x: fixedIndex[TimestampOffset]{codec: &timeCodec}}
	if err := ix.x.openIndex(fsys, name, baseOffset, maxIndexBytes, mode); err != nil {
		return nil, err
	}
	return ix, nil
}

// Name returns the file's name, as it was created or opened.
func (ix *TimeIndex) Name() string { return ix.x.name }

// BaseOffset returns the base offset of the index's segment.
func (ix *TimeIndex) BaseOffset() int64 { return ix.x.baseOffset }

// Entries returns the number of entries in use.
func (ix *TimeIndex) Entries() int {
	return ix.x.stats().entries
}

// MaxEntries returns the number of slots of the file: its size / 12.
func (ix *TimeIndex) MaxEntries() int {
	return ix.x.stats().maxEntries
}

// SizeBytes returns the file's current size (Kafka's length).
func (ix *TimeIndex) SizeBytes() int64 {
	return ix.x.stats().length
}

// Mapped reports whether the index is served from a memory mapping rather
// than through ReadAt and WriteAt.
func (ix *TimeIndex) Mapped() bool {
	return ix.x.stats().mapped
}

// IsFull reports whether the index has no slot left for a regular append:
// entries ≥ maxEntries − 1. The last slot is reserved for the entry appended
// on roll or close with skipFullCheck (see "Filling rules" in the package
// doc). The segment rolls when it is full (Kafka's LogSegment.shouldRoll).
func (ix *TimeIndex) IsFull() bool {
	st := ix.x.stats()
	return st.entries >= st.maxEntries-1
}

// LastEntry returns the last entry, or (NoTimestamp, base offset) if the
// index is empty.
func (ix *TimeIndex) LastEntry() TimestampOffset {
	return ix.x.lastEntry()
}

// CanAppendOffset reports whether offset can be stored relative to the base
// offset ([CanIndex]).
func (ix *TimeIndex) CanAppendOffset(offset int64) bool {
	return CanIndex(ix.x.baseOffset, offset)
}

// MaybeAppend adds the entry (timestamp, offset) if timestamp is larger
// than the last entry's; an equal (or, on an empty index, a −1) timestamp
// is silently skipped. It is an error for offset to be below the last
// entry's ([ErrInvalidOffset]), for timestamp to be below it
// ([ErrInvalidTimestamp]), or for offset not to fit a relative offset
// ([ErrOffsetOverflow]).
//
// skipFullCheck is false for the entries added while appending, which
// fail with [ErrIndexFull] once [TimeIndex.IsFull]; it is true only for the
// final entry (segment max timestamp, its offset) added when the segment
// rolls or closes, which may take the reserved last slot. The entry is in
// the page cache (or the memory FS) when MaybeAppend returns, durable after
// [TimeIndex.Flush].
func (ix *TimeIndex) MaybeAppend(timestamp, offset int64, skipFullCheck bool) error {
	x := &ix.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkWritableLocked(); err != nil {
		return err
	}
	if !skipFullCheck && x.entries >= x.maxEntries-1 {
		return fmt.Errorf("%w: %s has %d of %d entries, the last one reserved", ErrIndexFull, x.name, x.entries, x.maxEntries)
	}
	last := x.last
	if x.entries != 0 && offset < last.Offset {
		return fmt.Errorf("%w: append offset %d at slot %d of %s, below the last offset %d",
			ErrInvalidOffset, offset, x.entries, x.name, last.Offset)
	}
	if x.entries != 0 && timestamp < last.Timestamp {
		return fmt.Errorf("%w: append timestamp %d at slot %d of %s, below the last timestamp %d",
			ErrInvalidTimestamp, timestamp, x.entries, x.name, last.Timestamp)
	}
	if timestamp <= last.Timestamp {
		return nil
	}
	if x.entries >= x.maxEntries {
		return fmt.Errorf("%w: %s has all %d entries in use", ErrIndexFull, x.name, x.maxEntries)
	}
	if !CanIndex(x.baseOffset, offset) {
		return &OffsetOverflowError{File: x.name, BaseOffset: x.baseOffset, Offset: offset}
	}
	e := x.wbuf[:TimeIndexEntryBytes]
	binary.BigEndian.PutUint64(e, uint64(timestamp))
	binary.BigEndian.PutUint32(e[8:], uint32(offset-x.baseOffset))
	if err := x.appendEntryLocked(e); err != nil {
		return err
	}
	x.last = TimestampOffset{Timestamp: timestamp, Offset: offset}
	return nil
}

// Lookup returns the entry with the largest timestamp ≤ target: the offset
// from which to scan for the first record with timestamp ≥ target. If the
// index is empty or target is below the first entry it returns
// (NoTimestamp, base offset). It searches the last 8 KiB of entries first
// (Kafka's warm section) and does not allocate.
func (ix *TimeIndex) Lookup(target int64) (TimestampOffset, error) {
	return ix.x.lookup(target, timestampKey)
}

// Entry returns entry n, 0 ≤ n < Entries() ([ErrEntryOutOfRange]).
func (ix *TimeIndex) Entry(n int) (TimestampOffset, error) {
	return ix.x.entry(n)
}

// AppendEntries appends every entry in use to dst, in file order, and
// returns the extended slice. It is meant for tools and tests.
func (ix *TimeIndex) AppendEntries(dst []TimestampOffset) ([]TimestampOffset, error) {
	return ix.x.appendEntries(dst)
}

// TruncateTo removes the entries whose offset is ≥ offset, keeping those
// below it. Truncating to an offset above the last entry has no effect.
// The removed slots are zeroed.
func (ix *TimeIndex) TruncateTo(offset int64) error {
	return ix.x.truncateTo(offset)
}

// TruncateToEntries keeps the first n entries (all of them if n ≥
// Entries()) and zeroes the rest.
func (ix *TimeIndex) TruncateToEntries(n int) error {
	return ix.x.truncateToEntries(n)
}

// Reset removes every entry and resizes the file back to maxIndexBytes,
// ready for a rebuild from the .log (Kafka's reset).
func (ix *TimeIndex) Reset() error {
	return ix.x.reset()
}

// Resize sets the file's size to roundDown(newSize, 12) bytes and remaps
// it, reporting whether the size changed. Shrinking below the entries in
// use is [ErrInvalidSize].
func (ix *TimeIndex) Resize(newSize int64) (bool, error) {
	return ix.x.resize(newSize)
}

// TrimToValidSize truncates the file to Entries() × 12 bytes (on roll and
// close). On a [ReadOnly] index it succeeds only if there is nothing to
// trim.
func (ix *TimeIndex) TrimToValidSize() error {
	return ix.x.trim()
}

// Flush makes the entries durable (msync of the mapping, then fsync). It
// is a no-op on a [ReadOnly] index.
func (ix *TimeIndex) Flush() error {
	return ix.x.flush()
}

// SanityCheck applies Kafka's checks to the index as opened: the last
// entry's timestamp is not below the first entry's, the last entry's offset
// is not below the base offset, and the file size is a multiple of 12. A
// failure is a [*CorruptIndexError]; the segment then rebuilds the index
// from the .log.
func (ix *TimeIndex) SanityCheck() error {
	x := &ix.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.checkOpenLocked(); err != nil {
		return err
	}
	last := x.last
	if x.entries != 0 {
		buf := x.scratch()
		defer release(buf)
		e, err := x.entryLocked(0, buf)
		if err != nil {
			return err
		}
		if first := timestampKey(e, x.baseOffset); last.Timestamp < first {
			return corruptf(x.name, "the last timestamp %d is below the first timestamp %d", last.Timestamp, first)
		}
	}
	return x.sanityCheckLocked(last.Offset)
}

// Close trims a [ReadWrite] index to its entries, unmaps and closes the
// file, and returns every error joined. Deleting or renaming the file is the
// segment's job. A second Close returns nil.
func (ix *TimeIndex) Close() error {
	return ix.x.close()
}
