package segment

import (
	"errors"
	"fmt"
	"math"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// RecoverOptions configure [Segment.Recover].
type RecoverOptions struct {
	// OnBatch, if set, is called for every valid batch in file order, as
	// the log rebuilds producer state and its leader-epoch cache from them.
	// An error it returns stops the recovery with that error.
	OnBatch func(position int64, h *record.BatchHeader) error
}

// RecoverResult says what a recovery found.
type RecoverResult struct {
	// ValidBytes is the size of the .log's valid batches, where it now ends.
	ValidBytes int64
	// TruncatedBytes is how much was cut off the end.
	TruncatedBytes int64
	// Batches is the number of valid batches.
	Batches int
	// NextOffset is the offset after the last valid batch.
	NextOffset int64
	// Cause says why bytes were truncated: nil when none were, an error
	// matching record.ErrTruncated for a torn tail (a partial batch at the
	// end: an interrupted write), and one matching record.ErrCorrupt for
	// damage (offsets that cannot be true also match ErrOffsetOrder or
	// ErrOffsetOverflow, and ErrCorruptLog). Either way Kafka's rule
	// applies: everything from the first invalid batch on is removed.
	Cause error
}

// Recover validates the .log from its start as Kafka does after an unclean
// shutdown (LogSegment.recover, which Kafka's LogLoader runs when the log
// directory has no clean shutdown marker): every batch's length, magic, CRC
// and offsets are checked, the file is truncated at the first batch that
// fails (a torn or corrupt tail, or a zero-filled preallocated tail), and
// the offset and time indexes are rebuilt from the valid batches with
// Kafka's spacing rule. The .txnindex keeps its entries below the new end
// (rebuilding aborted transactions from producer state is the log's, through
// OnBatch); one that cannot be read is left for the log to rebuild
// ([LogHooks.CheckTxnIndex]).
//
// The offsets checked are those reads check ([Segment.Read]): a batch
// must start above the previous one's last offset, end below the next
// segment's base offset ([LogHooks.SetNextBaseOffset]), fit the relative
// offsets of the indexes, and be followed by a batch starting above its
// last offset. A batch that fails is corruption: Recover truncates there
// (Kafka, which checks only the relative range, would try to split the
// segment instead).
//
// Legacy batches (magic 0 or 1) are not truncated: Recover stops with an
// error matching record.ErrUnsupportedMagic that names file and position,
// since those bytes are valid Kafka data this library cannot read.
//
// Concurrent readers of the segment may get errors or stale batches while
// it runs (the log recovers before it serves reads); the truncation waits
// for views of the mapped .log in flight, as TruncateTo's does.
func (s *Segment) Recover(opts RecoverOptions) (RecoverResult, error) {
	s.failed = nil
	if err := s.activate(); err != nil {
		return RecoverResult{}, err
	}
	if err := s.log.unmap(); err != nil { // mapped at its inactive size
		return RecoverResult{}, err
	}
	oi, ti, err := s.resetIndexes()
	if err != nil {
		return RecoverResult{}, err
	}
	size, err := s.log.f.Size()
	if err != nil {
		return RecoverResult{}, &Error{File: s.LogFile(), Err: err}
	}
	bound := int64(math.MaxInt64)
	if l := s.limit.Load(); l > 0 {
		bound = l
	}
	res := RecoverResult{NextOffset: s.base}
	b := indexBuilder{oi: oi, ti: ti, interval: s.cfg.IndexIntervalBytes, maxTS: record.NoTimestamp, offMax: s.base, firstTS: record.NoTimestamp}
	sc := newScanner(s.log.f, size, s.cfg.recoveryWindow(size))
	defer sc.release()
	var pos int64
	for pos < size {
		h, err := sc.header(pos)
		if err == nil {
			err = checkBatch(sc, pos, &h)
		}
		if err == nil {
			err = s.checkOffsets(&h, res.NextOffset-1, bound)
		}
		if err == nil && !followedInOrder(sc, &h, pos+int64(h.Size()), size) {
			err = fmt.Errorf("%w: %w: the next batch starts at or below this one's last offset %d", ErrCorruptLog, ErrOffsetOrder, h.LastOffset())
		}
		if err != nil {
			if errors.Is(err, ErrLegacyFormat) || !isFormatError(err) {
				return res, &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			res.Cause = &Error{File: s.LogFile(), Position: pos, Err: err}
			break
		}
		if err := b.add(pos, &h); err != nil {
			return res, err
		}
		if opts.OnBatch != nil {
			if err := opts.OnBatch(pos, &h); err != nil {
				return res, err
			}
		}
		res.Batches++
		res.NextOffset = h.NextOffset()
		pos += int64(h.Size())
	}
	res.ValidBytes = pos
	res.TruncatedBytes = size - pos
	if res.TruncatedBytes > 0 {
		if err := s.log.cut(pos); err != nil {
			return res, &Error{File: s.LogFile(), Position: pos, Err: err}
		}
	}
	s.damage.Store(nil) // whatever was past the valid batches is gone
	s.mu.Lock()
	txn := s.txnIndex
	s.mu.Unlock()
	if txn != nil {
		if err := txn.TruncateTo(res.NextOffset); err != nil {
			if !errors.Is(err, index.ErrCorruptIndex) {
				return res, err
			}
			s.mu.Lock()
			s.txnDamage = err // the log rebuilds it
			s.mu.Unlock()
		}
	}
	if err := b.finish(); err != nil {
		return res, err
	}
	s.log.size.Store(pos)
	s.nextOffset.Store(res.NextOffset)
	s.maxTimestampSoFar.Store(b.maxTS)
	s.offsetOfMaxTimestamp.Store(b.offMax)
	s.firstBatchTimestamp = b.firstTS
	s.bytesSinceLastIndexEntry = 0
	return res, nil
}

// resetIndexes replaces both indexes with new, empty, preallocated files.
func (s *Segment) resetIndexes() (*index.OffsetIndex, *index.TimeIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.offsetIndex != nil {
		errs = append(errs, s.offsetIndex.Close(), s.timeIndex.Close())
		s.offsetIndex, s.timeIndex = nil, nil
	}
	for _, suffix := range []string{IndexSuffix, TimeIndexSuffix} {
		if err := s.fsys.Remove(s.path(suffix)); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	oi, err := index.CreateOffsetIndex(s.fsys, s.path(IndexSuffix), s.base, s.cfg.MaxIndexBytes)
	if err != nil {
		return nil, nil, err
	}
	ti, err := index.CreateTimeIndex(s.fsys, s.path(TimeIndexSuffix), s.base, s.cfg.MaxIndexBytes)
	if err != nil {
		return nil, nil, errors.Join(err, oi.Close())
	}
	s.offsetIndex, s.timeIndex = oi, ti
	return oi, ti, nil
}
