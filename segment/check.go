package segment

import (
	"errors"
	"fmt"
	"math"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// The checks a batch's header must pass before any offset in it is
// believed. The base offset and the batch length lie outside the CRC (a
// broker rewrites the base offset in place), so a flipped bit there is
// found by nothing else: the batch would be served at offsets that were
// never written. Kafka's reader does not check them; every walk over a
// .log here does (reads, the recovery scan, the index rebuild, the tail
// scan), cheaply: they are comparisons of header fields already parsed.

// checkOffsets checks h's offsets against the segment: its last offset is
// not below its base offset, its base offset lies above prev (the last
// offset of the batch before it, or base-1 for a first batch), its last
// offset below bound (the next segment's base offset or the segment's next
// offset, see offsetBound), and both fit the relative offsets of the
// segment's indexes. The error matches ErrOffsetOrder or
// ErrOffsetOverflow, plus ErrCorruptLog.
func (s *Segment) checkOffsets(h *record.BatchHeader, prev, bound int64) error {
	switch last := h.LastOffset(); {
	case h.LastOffsetDelta < 0:
		return fmt.Errorf("%w: %w: lastOffsetDelta %d", ErrCorruptLog, ErrOffsetOrder, h.LastOffsetDelta)
	case h.BaseOffset <= prev:
		return fmt.Errorf("%w: %w: base offset %d is not above the previous batch's last offset %d", ErrCorruptLog, ErrOffsetOrder, h.BaseOffset, prev)
	case !index.CanIndex(s.base, h.BaseOffset) || !index.CanIndex(s.base, last):
		return fmt.Errorf("%w: %w: offsets %d-%d, segment base offset %d", ErrCorruptLog, ErrOffsetOverflow, h.BaseOffset, last, s.base)
	case last >= bound:
		return fmt.Errorf("%w: %w: last offset %d is not below %d, where the segment ends", ErrCorruptLog, ErrOffsetOrder, last, bound)
	}
	return nil
}

// offsetBound returns the offset every batch of the segment ends below:
// the next segment's base offset ([LogHooks.SetNextBaseOffset]) and, once
// known, the segment's next offset, whichever is lower; math.MaxInt64
// when neither is known. A reader loads it after the segment's size, so
// that every batch below that size ends below it (Append stores the next
// offset before the size); only a cut (TruncateTo, Recover) lowers it, and
// readers that race one tell by cutGen.
func (s *Segment) offsetBound() int64 {
	bound := int64(math.MaxInt64)
	if n := s.nextOffset.Load(); n >= 0 {
		bound = n
	}
	if l := s.limit.Load(); l > 0 {
		bound = min(bound, l)
	}
	return bound
}

// SetNextBaseOffset implements [LogHooks.SetNextBaseOffset].
func (logHooks) SetNextBaseOffset(s *Segment, offset int64) {
	if offset > s.base {
		s.limit.Store(offset)
	}
}

// isFormatError reports whether err from a header walk says that the
// bytes are not a batch (rather than that they could not be read).
func isFormatError(err error) bool {
	return (errors.Is(err, record.ErrCorrupt) || errors.Is(err, record.ErrTruncated)) && !errors.Is(err, ErrLegacyFormat)
}
