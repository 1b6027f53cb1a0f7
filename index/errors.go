package index

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with [errors.Is]: most are returned wrapped, with
// the file name and the values involved.
var (
	// ErrCorruptIndex means an index file's contents break the format's
	// rules ([OffsetIndex.SanityCheck], [TimeIndex.SanityCheck],
	// [TxnIndex.SanityCheck], or an entry read back from disk). The
	// segment's answer is to rebuild the index from the .log. Returned as a
	// [*CorruptIndexError].
	ErrCorruptIndex = errors.New("index: corrupt index")

	// ErrOffsetOverflow means an absolute offset cannot be stored relative
	// to the segment's base offset: offset − baseOffset is outside
	// [0, 2^31−1] (Kafka's IndexOffsetOverflowException). The segment
	// checks [CanIndex] first and rolls instead. Returned as an
	// [*OffsetOverflowError].
	ErrOffsetOverflow = errors.New("index: offset overflows a relative offset")

	// ErrInvalidOffset means an append's offset is not larger than the
	// last entry's (offset index), or smaller than it (time index): Kafka's
	// InvalidOffsetException.
	ErrInvalidOffset = errors.New("index: offset out of order")

	// ErrInvalidTimestamp means a time index append's timestamp is smaller
	// than the last entry's (Kafka throws IllegalStateException). An equal
	// timestamp is not an error: the entry is silently skipped.
	ErrInvalidTimestamp = errors.New("index: timestamp out of order")

	// ErrIndexFull means an append found no free slot: [OffsetIndex.IsFull]
	// or [TimeIndex.IsFull] (which keeps the last slot for the roll entry).
	// The segment rolls before this can happen.
	ErrIndexFull = errors.New("index: index is full")

	// ErrEntryOutOfRange is returned by Entry(n) for n outside [0, Entries()).
	ErrEntryOutOfRange = errors.New("index: entry number out of range")

	// ErrInvalidSize means a size argument is unusable: a maximum index size
	// smaller than one entry, or a resize below the bytes in use.
	ErrInvalidSize = errors.New("index: invalid index size")

	// ErrReadOnly is returned by mutating calls on an index opened with
	// [ReadOnly].
	ErrReadOnly = errors.New("index: index is read-only")

	// ErrClosed is returned by every call on a closed index except Close.
	ErrClosed = errors.New("index: index is closed")
)

// CorruptIndexError reports an index file that breaks the format's rules.
// It matches [ErrCorruptIndex] under [errors.Is].
type CorruptIndexError struct {
	// File is the index file's name, as it was opened.
	File string
	// Reason says which rule is broken, with the values found.
	Reason string
}

func (e *CorruptIndexError) Error() string {
	return fmt.Sprintf("index: corrupt index %s: %s", e.File, e.Reason)
}

// Unwrap returns [ErrCorruptIndex].
func (e *CorruptIndexError) Unwrap() error { return ErrCorruptIndex }

func corruptf(file, format string, args ...any) error {
	return &CorruptIndexError{File: file, Reason: fmt.Sprintf(format, args...)}
}

// OffsetOverflowError reports an absolute offset that does not fit a
// [RelativeOffset] from the base offset. It matches [ErrOffsetOverflow]
// under [errors.Is].
type OffsetOverflowError struct {
	// File is the index file's name; empty when the check was made by
	// [ToRelative] outside an index.
	File string
	// BaseOffset is the segment's base offset.
	BaseOffset int64
	// Offset is the absolute offset that does not fit.
	Offset int64
}

func (e *OffsetOverflowError) Error() string {
	s := fmt.Sprintf("index: offset %d overflows a relative offset from base offset %d", e.Offset, e.BaseOffset)
	if e.File != "" {
		s += " (" + e.File + ")"
	}
	return s
}

// Unwrap returns [ErrOffsetOverflow].
func (e *OffsetOverflowError) Unwrap() error { return ErrOffsetOverflow }
