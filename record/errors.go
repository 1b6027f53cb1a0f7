package record

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with errors.Is: the decoder returns them wrapped
// in a [*CorruptError] that says where the problem is.
//
// [ErrCorrupt] is the umbrella for bytes that can never be a valid batch; each
// more specific sentinel below that describes corruption also matches it.
// [ErrTruncated] and [ErrTooLarge] deliberately do not: a truncated batch at
// the end of a segment is a torn write that recovery cuts off, not damage
// in the middle of the log, and a batch over the decompression limit may be
// valid for a reader with a larger limit.
var (
	// ErrCorrupt matches every error about bytes that are not a valid batch.
	ErrCorrupt = errors.New("record: corrupt batch")
	// ErrTruncated means the input ends before the batch it starts does:
	// fewer than 61 header bytes, or fewer bytes than batchLength claims.
	ErrTruncated = errors.New("record: truncated batch")
	// ErrTooLarge means the records section decompresses to more than the
	// reader's limit ([ReaderOptions.MaxDecompressedBytes]).
	ErrTooLarge = errors.New("record: batch exceeds the decompression limit")

	// ErrUnsupportedMagic means the magic byte is not 2. Kafka's legacy
	// message formats (magic 0 and 1) are not supported.
	ErrUnsupportedMagic = errors.New("record: unsupported magic (only RecordBatch v2 is supported)")
	// ErrBadLength means batchLength is below the v2 minimum of 49.
	ErrBadLength = errors.New("record: invalid batch length")
	// ErrCRC means the stored CRC-32C differs from the computed one.
	ErrCRC = errors.New("record: CRC mismatch")
	// ErrUnknownCodec means the attributes name compression codec 5, 6 or 7.
	ErrUnknownCodec = errors.New("record: unknown compression codec")
	// ErrVarint means a varint is longer than Kafka allows (5 bytes for
	// int32, 10 for int64) or its value does not fit.
	ErrVarint = errors.New("record: malformed varint")
	// ErrRecordCount means recordsCount disagrees with the records present,
	// or is negative.
	ErrRecordCount = errors.New("record: record count mismatch")
	// ErrTrailingBytes means bytes are left in the records section after
	// recordsCount records.
	ErrTrailingBytes = errors.New("record: trailing bytes after the last record")
	// ErrBadRecord means one record is malformed: a length that is not
	// consumed exactly, a negative key or header length below -1, a null
	// header key, a negative header count.
	ErrBadRecord = errors.New("record: malformed record")
	// ErrCompression means the compressed records section does not
	// decompress with its codec.
	ErrCompression = errors.New("record: invalid compressed data")
	// ErrBadControlRecord means a control record's key or value is malformed.
	ErrBadControlRecord = errors.New("record: malformed control record")
)

// Errors for callers of the writing side. They are about arguments, not
// about bytes read, so they do not match [ErrCorrupt].
var (
	// ErrInvalidTimestamp means a record timestamp below -1.
	ErrInvalidTimestamp = errors.New("record: invalid timestamp (must be >= 0 or -1)")
	// ErrNoRecords means Build was called on a builder with no records.
	ErrNoRecords = errors.New("record: batch has no records")
	// ErrOffsetDelta means an offset delta that is not increasing or does not
	// fit in an int32.
	ErrOffsetDelta = errors.New("record: invalid offset delta")
	// ErrNilHeaderKey means a header with a nil key; Kafka forbids null
	// header keys.
	ErrNilHeaderKey = errors.New("record: header key must not be nil")
)

// corruptKinds lists the sentinels that also match [ErrCorrupt].
var corruptKinds = []error{
	ErrUnsupportedMagic, ErrBadLength, ErrCRC, ErrUnknownCodec, ErrVarint,
	ErrRecordCount, ErrTrailingBytes, ErrBadRecord, ErrCompression, ErrBadControlRecord,
}

// CorruptError describes a batch that failed to decode. It unwraps to its
// Kind (one of the sentinels above) and, when Kind describes corruption, to
// [ErrCorrupt] as well.
type CorruptError struct {
	// BaseOffset is the batch's base offset, or -1 if it was not readable.
	BaseOffset int64
	// Position is the byte position of the problem, counted from the start
	// of the batch (for a record problem in a compressed batch: from the start
	// of the decompressed records section, which Section says).
	Position int
	// Section is "batch" or "records" (decompressed records section).
	Section string
	// Kind is the sentinel that classifies the error.
	Kind error
	// Detail says more, for people.
	Detail string
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("%v (base offset %d, %s position %d)", e.Kind, e.BaseOffset, e.Section, e.Position)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the Kind, and ErrCorrupt when the kind is a corruption.
func (e *CorruptError) Unwrap() []error {
	for _, k := range corruptKinds {
		if e.Kind == k {
			return []error{e.Kind, ErrCorrupt}
		}
	}
	return []error{e.Kind}
}

func batchErr(base int64, pos int, kind error, format string, args ...any) error {
	return &CorruptError{BaseOffset: base, Position: pos, Section: "batch", Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

func recordsErr(base int64, pos int, kind error, format string, args ...any) error {
	return &CorruptError{BaseOffset: base, Position: pos, Section: "records", Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
