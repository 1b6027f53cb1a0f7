package segment

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// The .txnindex lists the transactions whose ABORT marker is in the
// segment: the log appends an entry as it appends the marker
// (AppendAbortedTxn), and read_committed readers drop those transactions'
// records by it (AppendAbortedTxns), so an entry lost or wrong serves
// aborted records. The segment checks the file (CheckTxnIndex) and finds
// its ABORT markers (AppendAbortMarkers); rebuilding the entries takes the
// producer state before the segment, which the log has: it replays the
// log and hands the result to ReplaceTxnIndex.

// AppendAbortedTxn records an aborted transaction whose ABORT marker is in
// this segment in the .txnindex, creating the file at the first entry.
func (s *Segment) AppendAbortedTxn(t index.AbortedTxn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.txnIndex == nil {
		ti, err := index.CreateTxnIndex(s.fsys, s.path(TxnIndexSuffix), s.base)
		if err != nil {
			return err
		}
		s.txnIndex = ti
	}
	return s.txnIndex.Append(t)
}

// AppendAbortedTxns appends to dst the aborted transactions of the
// segment's .txnindex that overlap [fetchOffset, upperBoundOffset) and
// reports whether the search can stop here, by the rule of
// [index.TxnIndex.CollectAbortedTxns] (Kafka's
// LogSegment.collectAbortedTxns). It returns dst unchanged on error or
// without a .txnindex.
func (s *Segment) AppendAbortedTxns(dst []index.AbortedTxn, fetchOffset, upperBoundOffset int64) ([]index.AbortedTxn, bool, error) {
	s.mu.Lock()
	txn := s.txnIndex
	s.mu.Unlock()
	if txn == nil {
		return dst, false, nil
	}
	return txn.AppendAbortedTxns(dst, fetchOffset, upperBoundOffset)
}

// CheckTxnIndex implements [LogHooks.CheckTxnIndex].
func (logHooks) CheckTxnIndex(s *Segment, endOffset int64) error {
	s.mu.Lock()
	txn, damage := s.txnIndex, s.txnDamage
	s.mu.Unlock()
	switch {
	case damage != nil:
		return damage
	case txn == nil:
		return nil
	}
	return txn.Validate(endOffset)
}

// HasTxnIndex implements [LogHooks.HasTxnIndex].
func (logHooks) HasTxnIndex(s *Segment) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txnIndex != nil || s.txnDamage != nil
}

// TxnIndexEntries implements [LogHooks.TxnIndexEntries].
func (logHooks) TxnIndexEntries(s *Segment) ([]index.AbortedTxn, error) {
	s.mu.Lock()
	txn, damage := s.txnIndex, s.txnDamage
	s.mu.Unlock()
	switch {
	case damage != nil:
		return nil, damage
	case txn == nil:
		return nil, nil
	}
	return txn.AllAbortedTxns()
}

// ReplaceTxnIndex implements [LogHooks.ReplaceTxnIndex].
func (logHooks) ReplaceTxnIndex(s *Segment, entries []index.AbortedTxn) error {
	name := s.path(TxnIndexSuffix)
	tmp := name + TmpSuffix
	if err := s.fsys.Remove(tmp); err != nil && !isNotExist(err) {
		return err
	}
	if len(entries) > 0 {
		t, err := index.CreateTxnIndex(s.fsys, tmp, s.base)
		if err != nil {
			return err
		}
		for _, e := range entries {
			err = errors.Join(err, t.Append(e))
		}
		if err = errors.Join(err, t.Flush(), t.Close()); err != nil {
			return errors.Join(err, s.fsys.Remove(tmp))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.deleted {
		if len(entries) > 0 {
			return errors.Join(ErrClosed, s.fsys.Remove(tmp))
		}
		return ErrClosed
	}
	var err error
	if len(entries) > 0 {
		err = s.fsys.Rename(tmp, name)
	} else if err = s.fsys.Remove(name); isNotExist(err) {
		err = nil
	}
	if err == nil {
		err = s.fsys.SyncDir(s.dir)
	}
	if err != nil {
		return err
	}
	if s.txnIndex != nil {
		s.retired = append(s.retired, s.txnIndex)
		s.txnIndex = nil
	}
	s.txnDamage = nil
	if len(entries) > 0 {
		mode := index.ReadOnly
		if s.active {
			mode = index.ReadWrite
		}
		if s.txnIndex, err = index.OpenTxnIndex(s.fsys, name, s.base, mode); err != nil {
			return err
		}
	}
	s.txnVerified.Store(true)
	return nil
}

// TxnIndexVerified implements [LogHooks.TxnIndexVerified].
func (logHooks) TxnIndexVerified(s *Segment) bool { return s.txnVerified.Load() }

// MarkTxnIndexVerified implements [LogHooks.MarkTxnIndexVerified].
func (logHooks) MarkTxnIndexVerified(s *Segment) { s.txnVerified.Store(true) }

// AbortMarker is an ABORT marker of the .log: its producer and offset.
type AbortMarker struct {
	ProducerID int64
	Offset     int64
}

// maxMarkerBatch bounds the batches AppendAbortMarkers decodes: an
// end-transaction marker batch is one small record (78 bytes as Kafka
// writes it); a control batch much larger is no marker.
const maxMarkerBatch = 4096

// AppendAbortMarkers implements [LogHooks.AppendAbortMarkers].
func (h logHooks) AppendAbortMarkers(s *Segment, dst []AbortMarker, from int64) ([]AbortMarker, int64, error) {
	if err := s.acquire(); err != nil {
		return dst, from, err
	}
	defer s.release()
	size := h.ReadableSize(s)
	bound := s.offsetBound()
	sc := newScanner(s.log.f, size, scanWindow)
	defer sc.release()
	r := record.NewReader(record.ReaderOptions{})
	var buf []byte
	prev := s.base - 1
	pos := from
	for pos < size {
		h, err := sc.header(pos)
		if err != nil {
			if isFormatError(err) {
				break // unreadable from here: so are its records
			}
			return dst, pos, s.log.walkError(pos, err)
		}
		next := pos + int64(h.Size())
		if s.checkOffsets(&h, prev, bound) != nil || !followedInOrder(sc, &h, next, size) {
			pos = next
			continue
		}
		prev = h.LastOffset()
		if h.Attributes.IsControl() && h.Attributes.IsTransactional() && h.ProducerID >= 0 && h.RecordsCount > 0 && h.Size() <= maxMarkerBatch {
			buf = append(buf[:0], make([]byte, h.Size())...)
			if _, err := s.log.f.ReadAt(buf, pos); err != nil {
				return dst, pos, &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			if r.Reset(buf) == nil && r.Next() {
				if typ, err := record.ParseControlKey(r.Record().Key); err == nil && typ == record.ControlAbort {
					dst = append(dst, AbortMarker{ProducerID: h.ProducerID, Offset: h.BaseOffset})
				}
			}
		}
		pos = next
	}
	return dst, pos, nil
}

// String formats the marker for logs.
func (m AbortMarker) String() string {
	return fmt.Sprintf("ABORT of producer %d at offset %d", m.ProducerID, m.Offset)
}
