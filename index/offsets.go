package index

import (
	"math"
	"strconv"
)

// RelativeOffset is an offset relative to a segment's base offset, as index
// entries store it: absolute offset = base offset + relative offset. Valid
// values are 0 through 2^31−1 ([MaxRelativeOffset]); Kafka rolls a segment
// before an offset would leave that range. A RelativeOffset is not an
// absolute offset (int64): convert with [ToRelative] and
// [RelativeOffset.Absolute].
type RelativeOffset int32

// MaxRelativeOffset is the largest relative offset an index can store
// (Java's Integer.MAX_VALUE).
const MaxRelativeOffset = RelativeOffset(math.MaxInt32)

// String formats r as "+N", relative to an unnamed base offset.
func (r RelativeOffset) String() string {
	return "+" + strconv.FormatInt(int64(r), 10)
}

// Absolute returns baseOffset + r.
func (r RelativeOffset) Absolute(baseOffset int64) int64 {
	return baseOffset + int64(r)
}

// ToRelative returns offset − baseOffset as a [RelativeOffset], or an
// [*OffsetOverflowError] (matching [ErrOffsetOverflow]) if the difference is
// outside [0, 2^31−1]. It is Kafka's AbstractIndex.relativeOffset.
func ToRelative(baseOffset, offset int64) (RelativeOffset, error) {
	if !CanIndex(baseOffset, offset) {
		return 0, &OffsetOverflowError{BaseOffset: baseOffset, Offset: offset}
	}
	return RelativeOffset(offset - baseOffset), nil
}

// CanIndex reports whether offset can be stored in an index relative to
// baseOffset, that is whether offset − baseOffset is in [0, 2^31−1] (Kafka's
// AbstractIndex.canAppendOffset). A segment whose next batch's last offset
// fails this check must roll (Kafka's LogSegment.shouldRoll).
func CanIndex(baseOffset, offset int64) bool {
	// offset − baseOffset may overflow int64 for hostile inputs; compare
	// without subtracting first.
	if offset < baseOffset {
		return false
	}
	return uint64(offset)-uint64(baseOffset) <= math.MaxInt32
}

// Position is a byte position in a segment's .log file. Kafka stores it as an
// int32 (segments are at most 2 GiB − 1 bytes). A Position is not an offset.
type Position int32

// String formats p as "@N".
func (p Position) String() string {
	return "@" + strconv.FormatInt(int64(p), 10)
}

// OffsetPosition is one offset index entry with its offset made absolute
// (Kafka's OffsetPosition): the batch whose last offset is Offset starts at
// byte Position of the .log file.
type OffsetPosition struct {
	// Offset is the absolute offset: the last offset of the indexed batch.
	Offset int64
	// Position is the byte position in the .log where that batch starts.
	Position Position
}

// String formats e as "offset@position".
func (e OffsetPosition) String() string {
	return strconv.FormatInt(e.Offset, 10) + e.Position.String()
}

// NoTimestamp is Kafka's RecordBatch.NO_TIMESTAMP (−1): the timestamp of a
// time index lookup that found no entry, and of the empty index's "last
// entry".
const NoTimestamp int64 = -1

// TimestampOffset is one time index entry with its offset made absolute
// (Kafka's TimestampOffset): no record before Offset (exclusive of the
// batch holding it) has a timestamp above Timestamp.
type TimestampOffset struct {
	// Timestamp is the segment's max timestamp, in milliseconds since the
	// epoch, at the time the entry was added.
	Timestamp int64
	// Offset is the absolute last offset of the batch holding that
	// timestamp.
	Offset int64
}

// String formats e as "timestamp:offset".
func (e TimestampOffset) String() string {
	return strconv.FormatInt(e.Timestamp, 10) + ":" + strconv.FormatInt(e.Offset, 10)
}
