package log

import (
	"context"
	"fmt"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
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
func (l *Log) LastStableOffset() int64 { return l.producers.lastStable(l.HighWatermark()) }

// VerifyTransaction registers that the transaction coordinator added this
// partition to producerID's transaction at producerEpoch: the producer's
// next transactional batch may open a transaction here. A transactional
// batch without it is refused with [ErrInvalidTxnState] (Kafka's
// transaction verification, KIP-890), so a fenced producer's late batch can
// never open a transaction that nobody will end.
func (l *Log) VerifyTransaction(_ access.Internal, producerID int64, producerEpoch int16) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return err
	}
	if err := l.producers.verify(producerID, producerEpoch); err != nil {
		return l.tp.wrap(err)
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
	if err := l.local.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	if m.Type != record.ControlCommit && m.Type != record.ControlAbort {
		return AppendResult{}, l.tp.wrap(fmt.Errorf("%w: marker type %s", ErrInvalidRecord, m.Type))
	}
	if err := l.producers.checkMarker(producerID, producerEpoch, m.CoordinatorEpoch); err != nil {
		return AppendResult{}, l.tp.wrap(err)
	}
	base := l.LogEndOffset()
	batch, h, err := l.validator.marker(base, l.LeaderEpoch(), producerID, producerEpoch, m)
	if err != nil {
		return AppendResult{}, l.tp.wrap(err)
	}
	if err := l.appendLocked(batch, &h, nil); err != nil {
		return AppendResult{}, err
	}
	return AppendResult{BaseOffset: base, LastOffset: base, LogAppendTime: record.NoTimestamp, LogStartOffset: l.LogStartOffset(), Records: 1}, nil
}

// AbortedTransactions returns the aborted transactions whose data overlaps
// [fetchOffset, upperBound), from the .txnindex files of the segments from
// the one holding fetchOffset on ([index.TxnIndex.CollectAbortedTxns];
// Kafka's LogSegment.collectAbortedTxns), and of the copies in remote
// storage below the first local segment: what a broker puts in a
// read_committed FetchResponse, as [Log.Fetch] at [ReadCommitted] returns
// them for the batches it reads.
//
// A segment's .txnindex is checked against the segment's ABORT markers the
// first time a read uses it, unless this process wrote it (or checked it
// at load), and rebuilt from the log if an entry is missing: see
// "Damage below the recovery point" in the package doc.
func (l *Log) AbortedTransactions(fetchOffset, upperBound int64) ([]index.AbortedTxn, error) {
	return l.remote.appendAbortedTxns(context.Background(), l, nil, fetchOffset, upperBound)
}
