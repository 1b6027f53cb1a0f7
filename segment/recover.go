package segment

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/crc"
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
	// end: an interrupted write), and one matching record.ErrCorrupt or
	// ErrOffsetOrder for damage. Either way Kafka's rule applies: everything
	// from the first invalid batch on is removed.
	Cause error
}

// Recover validates the .log from its start as Kafka does after an unclean
// shutdown (KAFKA_FORMAT §3.7): every batch's length, magic, CRC and offsets
// are checked, the file is truncated at the first batch that fails (a torn
// or corrupt tail, or a zero-filled preallocated tail), and the offset and
// time indexes are rebuilt from the valid batches with Kafka's spacing rule.
// The .txnindex keeps its entries below the new end (rebuilding aborted
// transactions from producer state is the log's, through OnBatch).
//
// Legacy batches (magic 0 or 1) are not truncated: Recover stops with an
// error matching record.ErrUnsupportedMagic that names file and position,
// since those bytes are valid Kafka data this library cannot read. So does
// a batch whose offsets overflow the segment's relative offsets
// (ErrOffsetOverflow), which Kafka repairs by splitting the segment.
//
// Concurrent readers of the segment may get errors or stale batches while
// it runs (the log recovers before it serves reads); the truncation waits
// for views of the mapped .log in flight, as TruncateTo's does.
func (s *Segment) Recover(opts RecoverOptions) (RecoverResult, error) {
	s.failed = nil
	if err := s.activate(); err != nil {
		return RecoverResult{}, err
	}
	if err := s.dropMapping(); err != nil { // mapped at its inactive size
		return RecoverResult{}, err
	}
	oi, ti, err := s.resetIndexes()
	if err != nil {
		return RecoverResult{}, err
	}
	size, err := s.log.Size()
	if err != nil {
		return RecoverResult{}, &Error{File: s.LogFile(), Err: err}
	}
	res := RecoverResult{NextOffset: s.base}
	maxTS, offMax := record.NoTimestamp, s.base
	firstTS := record.NoTimestamp
	sc := newScanner(s.log, size, s.cfg.recoveryBuffer())
	var pos, lastIndexEntry int64
	for pos < size {
		h, err := sc.header(pos)
		if err == nil {
			err = s.checkRecovered(sc, pos, &h, res.NextOffset)
		}
		if err != nil {
			if errors.Is(err, ErrLegacyFormat) || errors.Is(err, ErrOffsetOverflow) || !(errors.Is(err, record.ErrCorrupt) || errors.Is(err, record.ErrTruncated) || errors.Is(err, ErrOffsetOrder)) {
				return res, &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			res.Cause = &Error{File: s.LogFile(), Position: pos, Err: err}
			break
		}
		if h.MaxTimestamp > maxTS {
			maxTS, offMax = h.MaxTimestamp, h.LastOffset()
		}
		if res.Batches == 0 {
			firstTS = h.MaxTimestamp
		}
		if pos-lastIndexEntry > int64(s.cfg.IndexIntervalBytes) {
			err := errors.Join(oi.Append(h.LastOffset(), index.Position(pos)), ti.MaybeAppend(maxTS, offMax, false))
			if err != nil && !errors.Is(err, index.ErrIndexFull) {
				return res, err
			}
			lastIndexEntry = pos
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
		if err := s.shrinkLog(pos); err != nil {
			return res, &Error{File: s.LogFile(), Position: pos, Err: err}
		}
	}
	s.mu.Lock()
	txn := s.txnIndex
	s.mu.Unlock()
	if txn != nil {
		if err := txn.TruncateTo(res.NextOffset); err != nil {
			return res, err
		}
	}
	if maxTS >= 0 {
		if err := ti.MaybeAppend(maxTS, offMax, true); err != nil {
			return res, err
		}
	}
	s.size.Store(pos)
	s.nextOffset.Store(res.NextOffset)
	s.maxTimestampSoFar.Store(maxTS)
	s.offsetOfMaxTimestamp.Store(offMax)
	s.firstBatchTimestamp = firstTS
	s.bytesSinceLastIndexEntry = 0
	return res, nil
}

// checkRecovered checks the rest of a batch: CRC, codec, count, offsets.
func (s *Segment) checkRecovered(sc *scanner, pos int64, h *record.BatchHeader, next int64) error {
	if !h.Attributes.Compression().Valid() {
		return &record.CorruptError{BaseOffset: h.BaseOffset, Position: 21, Section: "batch", Kind: record.ErrUnknownCodec}
	}
	if h.RecordsCount < 0 || h.LastOffsetDelta < 0 {
		return &record.CorruptError{BaseOffset: h.BaseOffset, Position: 57, Section: "batch", Kind: record.ErrRecordCount,
			Detail: fmt.Sprintf("recordsCount %d, lastOffsetDelta %d", h.RecordsCount, h.LastOffsetDelta)}
	}
	sum, err := sc.crc(pos, h.Size(), crc.Update)
	if err != nil {
		return err
	}
	if sum != h.CRC {
		return &record.CorruptError{BaseOffset: h.BaseOffset, Position: 17, Section: "batch", Kind: record.ErrCRC,
			Detail: fmt.Sprintf("stored %#08x, computed %#08x", h.CRC, sum)}
	}
	if h.BaseOffset < next {
		return fmt.Errorf("%w: base offset %d after next offset %d", ErrOffsetOrder, h.BaseOffset, next)
	}
	if !index.CanIndex(s.base, h.LastOffset()) {
		return fmt.Errorf("%w: last offset %d, base %d", ErrOffsetOverflow, h.LastOffset(), s.base)
	}
	return nil
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
