package log

import (
	"errors"
	"fmt"
	"sort"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// This file holds the partition's side of transactions (Kafka's
// EndTransactionMarker and TransactionIndex): the end-transaction markers
// the transaction coordinator writes, the .txnindex entries of aborted
// transactions and the last stable offset. The producer state (checks on
// append, snapshots and their reload) is in producers.go, read_committed
// reads in readcommitted.go.

// LastStableOffset returns the offset below which every transaction is
// decided: the first offset of the earliest open transaction, or the high
// watermark if none is open. read_committed readers stop there.
func (l *Log) LastStableOffset() int64 {
	hw := l.HighWatermark()
	if fu := l.firstUnstable.Load(); fu >= 0 && fu < hw {
		return fu
	}
	return hw
}

// VerifyTransaction registers that the transaction coordinator added this
// partition to producerID's transaction at producerEpoch: the producer's
// next transactional batch may open a transaction here. A transactional
// batch without it is refused with [ErrInvalidTxnState] (Kafka's
// transaction verification, KIP-890), so a fenced producer's late batch can
// never open a transaction that nobody will end.
func (l *Log) VerifyTransaction(_ access.Internal, producerID int64, producerEpoch int16) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if err := l.pstate.verify(producerID, producerEpoch); err != nil {
		return l.perr(err)
	}
	return nil
}

// AppendTxnMarker appends a COMMIT or ABORT marker for producerID's
// transaction, as the transaction coordinator does at the end of a
// transaction (Kafka's EndTransactionMarker; the batch is the one
// [record.AppendEndTxnMarkerBatch] describes). The marker ends the
// producer's open transaction in this partition, if it has one; an ABORT of
// a transaction with data here adds an entry to the active segment's
// .txnindex. A marker of an older producer epoch or coordinator epoch than
// the partition has seen is refused ([ErrInvalidProducerEpoch],
// [ErrTransactionCoordinatorFenced]). Internal topics take markers too
// (offsets committed in a transaction live in __consumer_offsets).
func (l *Log) AppendTxnMarker(_ access.Internal, producerID int64, producerEpoch int16, m record.EndTxnMarker) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	if m.Type != record.ControlCommit && m.Type != record.ControlAbort {
		return AppendResult{}, l.perr(fmt.Errorf("%w: marker type %s", ErrInvalidRecord, m.Type))
	}
	if err := l.pstate.checkMarker(producerID, producerEpoch, m.CoordinatorEpoch); err != nil {
		return AppendResult{}, l.perr(err)
	}
	base := l.LogEndOffset()
	ts := l.now().UnixMilli()
	var err error
	l.markerBuf, err = record.AppendEndTxnMarkerBatch(l.markerBuf[:0], base, l.leaderEpoch.Load(), producerID, producerEpoch, ts, m)
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	h, err := record.ParseHeader(l.markerBuf)
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	if err := l.appendLocked(l.markerBuf, &h); err != nil {
		return AppendResult{}, err
	}
	return AppendResult{BaseOffset: base, LastOffset: base, LogAppendTime: record.NoTimestamp, LogStartOffset: l.LogStartOffset(), Records: 1}, nil
}

// parseMarker decodes the single record of an end-transaction marker
// batch with r.
func parseMarker(r *record.Reader, batch []byte) (record.EndTxnMarker, error) {
	if err := r.Reset(batch); err != nil {
		return record.EndTxnMarker{}, err
	}
	if !r.Next() {
		return record.EndTxnMarker{}, errors.Join(r.Err(), fmt.Errorf("%w: a control batch without a record", ErrInvalidRecord))
	}
	rec := r.Record()
	m, err := record.ParseEndTxnMarker(rec.Key, rec.Value)
	if err != nil {
		typ, kerr := record.ParseControlKey(rec.Key)
		if kerr == nil && typ != record.ControlCommit && typ != record.ControlAbort {
			return record.EndTxnMarker{Type: typ}, nil
		}
	}
	return m, err
}

// AbortedTransactions returns the aborted transactions whose data overlaps
// [fetchOffset, upperBound), from the .txnindex files of the segments from
// the one holding fetchOffset on ([index.TxnIndex.CollectAbortedTxns];
// Kafka's LogSegment.collectAbortedTxns): what a broker puts in
// a read_committed FetchResponse.
func (l *Log) AbortedTransactions(fetchOffset, upperBound int64) ([]index.AbortedTxn, error) {
	return l.AppendAbortedTransactions(nil, fetchOffset, upperBound)
}

// AppendAbortedTransactions is AbortedTransactions appending to dst, for a
// caller that reuses its slice from fetch to fetch: it allocates nothing
// once dst has room. On error it returns dst unchanged.
//
// A segment's .txnindex is checked against the segment's ABORT markers the
// first time a read uses it, unless this process wrote it (or checked it
// at load), and rebuilt from the log if an entry is missing: see
// "Damage below the recovery point" in the package doc.
func (l *Log) AppendAbortedTransactions(dst []index.AbortedTxn, fetchOffset, upperBound int64) ([]index.AbortedTxn, error) {
	segs := l.segs()
	out := dst
	if t := l.tiering(); t != nil && len(segs) > 0 && fetchOffset < segs[0].BaseOffset() {
		got, done, err := t.appendAbortedTxns(l, out, fetchOffset, upperBound, segs[0].BaseOffset())
		if err != nil {
			return dst, l.perr(err)
		}
		if done {
			return got, nil
		}
		out = got
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > fetchOffset }) - 1
	for i = max(i, 0); i < len(segs); i++ {
		if !segHooks.TxnIndexVerified(segs[i]) {
			if err := l.verifyTxnIndex(segs[i]); err != nil && !errors.Is(err, segment.ErrClosed) {
				return dst, l.perr(err)
			}
		}
		got, done, err := segs[i].AppendAbortedTxns(out, fetchOffset, upperBound)
		if errors.Is(err, segment.ErrClosed) {
			continue // deleted by retention after the snapshot of the list
		}
		if err != nil {
			return dst, l.perr(err)
		}
		out = got
		if done {
			break
		}
	}
	return out, nil
}
