package segment

import (
	"errors"

	"github.com/kafkalite/kafkalite/index"
)

// TruncateTo removes every batch from the one holding offset on (Kafka
// truncates at batch boundaries), the index entries at or above offset and
// the aborted transactions ending at or above it, and makes the segment the
// active one again. It returns the number of bytes removed from the .log.
// Concurrent readers of the removed batches get errors; the cut itself
// waits for views of the mapped .log in flight (see [Slice.View]).
func (s *Segment) TruncateTo(offset int64) (int64, error) {
	s.failed = nil
	// A sealed segment's indexes are checked (and rebuilt if need be)
	// before they reopen for writing, as the active segment's are not.
	if _, _, err := s.indexes(); err != nil {
		return 0, err
	}
	if err := s.activate(); err != nil {
		return 0, err
	}
	if err := s.log.unmap(); err != nil { // mapped at its inactive size
		return 0, err
	}
	s.limit.Store(0) // the last segment now: the next one is gone
	size := s.log.size.Load()
	pos, _, err := s.translateOffset(offset, size)
	if err != nil {
		return 0, err
	}
	if pos < 0 {
		d := s.damage.Load()
		if d == nil {
			return 0, nil
		}
		// Offset lies past the readable part of a damaged segment: the
		// damaged bytes go, as everything from offset on does.
		pos, size = d.Position, d.Position
		if fs, err := s.log.f.Size(); err == nil {
			size = fs
		}
	}
	oi, ti, err := s.indexes()
	if err != nil {
		return 0, err
	}
	if err := errors.Join(oi.TruncateTo(offset), ti.TruncateTo(offset)); err != nil {
		return 0, err
	}
	s.mu.Lock()
	txn := s.txnIndex
	s.mu.Unlock()
	if txn != nil {
		if err := txn.TruncateTo(offset); err != nil {
			return 0, err
		}
	}
	if err := s.log.cut(pos); err != nil {
		s.failed = err
		return 0, &Error{File: s.LogFile(), Position: pos, Err: err}
	}
	s.damage.Store(nil)
	s.bytesSinceLastIndexEntry = 0
	if pos == 0 {
		s.created = s.cfg.now()
	}
	s.firstBatchTimestamp = notLoaded
	if err := s.loadTail(); err != nil {
		return size - pos, err
	}
	return size - pos, nil
}

// activate makes an inactive segment the active one: its indexes are
// reopened for writing and expanded on next use.
func (s *Segment) activate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.active {
		return nil
	}
	s.active = true
	s.activations.Add(1) // a rebuild begun while inactive must not install
	var errs []error
	if s.txnIndex != nil {
		// Opened read-only with the inactive segment; recovery truncates
		// it and replay may append to it.
		errs = append(errs, s.txnIndex.Close())
		ti, err := index.OpenTxnIndex(s.fsys, s.path(TxnIndexSuffix), s.base, index.ReadWrite)
		s.txnIndex = ti
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	if s.offsetIndex == nil {
		return errors.Join(errs...)
	}
	errs = append(errs, s.offsetIndex.Close(), s.timeIndex.Close())
	s.offsetIndex, s.timeIndex = nil, nil
	return errors.Join(errs...)
}
