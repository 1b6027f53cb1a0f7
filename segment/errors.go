package segment

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/record"
)

// Sentinel errors. Compare with errors.Is; most are returned inside an
// [*Error] that names the file and position.
var (
	// ErrClosed is returned by operations on a closed or deleted segment.
	ErrClosed = errors.New("segment: closed")
	// ErrOffsetOverflow means a batch's offsets cannot be stored relative to
	// the segment's base offset (the log must roll first).
	ErrOffsetOverflow = errors.New("segment: offset does not fit the segment's relative offsets")
	// ErrSegmentFull means the .log would grow past 2 GiB, the limit of
	// Kafka's int32 file positions.
	ErrSegmentFull = errors.New("segment: file position would exceed 2 GiB")
	// ErrOffsetOrder means an appended batch does not start after the
	// segment's last offset.
	ErrOffsetOrder = errors.New("segment: batch offsets are not increasing")
	// ErrLegacyFormat means a batch in Kafka's legacy message format (magic
	// 0 or 1), which kafkalite does not read. It also matches
	// record.ErrUnsupportedMagic, but not record.ErrCorrupt: the bytes are
	// valid, and recovery never truncates them.
	ErrLegacyFormat = errors.New("segment: legacy message format (magic 0 or 1) is not supported")
	// ErrFailed means an earlier write failed and the segment refuses
	// further appends until it is reopened (sticky error).
	ErrFailed = errors.New("segment: failed after an earlier write error")
	// ErrCutUnderRead means a read of a [Slice] found the .log shorter than
	// the slice: the segment was truncated (Log.TruncateTo, recovery) while
	// the slice was held. The bytes are gone; read again from the log.
	ErrCutUnderRead = errors.New("segment: the .log was cut under a read")
	// ErrCorruptLog means bytes of a .log that cannot be served as
	// batches: a batch header that does not parse where a whole batch
	// must be, a batch whose offsets cannot be true (see [Segment.Read]),
	// or, in a sealed segment, the bytes past its last readable batch
	// ([LogHooks.Damage]). It matches record.ErrCorrupt too, and comes
	// inside an [*Error] naming the file and the position.
	ErrCorruptLog error = corruptLog{}
)

// corruptLog is ErrCorruptLog's type: a sentinel that also matches
// record.ErrCorrupt, so that callers checking for corrupt data need only
// that one.
type corruptLog struct{}

func (corruptLog) Error() string { return "segment: corrupt .log" }

// Is matches record.ErrCorrupt.
func (corruptLog) Is(target error) bool { return target == record.ErrCorrupt }

// corruptAt returns the [*Error] for corrupt bytes of file at pos: it
// matches ErrCorruptLog, record.ErrCorrupt and cause.
func corruptAt(file string, pos int64, cause error) *Error {
	return &Error{File: file, Position: pos, Err: fmt.Errorf("%w: %w", ErrCorruptLog, cause)}
}

// Error describes a problem in a segment file: which file, where, and the
// underlying error (a record or index sentinel, or one of this package's).
type Error struct {
	File     string
	Position int64
	Err      error
	// NextOffset, for a read that failed on corrupt bytes
	// ([ErrCorruptLog]), is the first offset after them that reads can
	// find, where the segment knows it: the base offset of the next batch
	// it can serve, or of the next segment. A reader seeks there to go on.
	// 0 when not known, and for other errors.
	NextOffset int64
}

func (e *Error) Error() string {
	return fmt.Sprintf("segment %s at position %d: %v", e.File, e.Position, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
