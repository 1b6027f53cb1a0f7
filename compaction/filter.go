package compaction

import (
	"sort"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// LastRecord is what the cleaner must keep of an active producer (Kafka's
// LastRecord): the last offset of its last data batch (-1 if its latest
// entry is a transaction marker) and its epoch. The batch holding that
// offset, or that marker, is kept (emptied if need be) so that the
// producer's sequence and epoch survive cleaning.
type LastRecord struct {
	LastDataOffset int64
	ProducerEpoch  int16
}

// txnTracker follows transactions through a pass over the log, as Kafka's
// CleanedTransactionMetadata does: which batches belong to aborted
// transactions (the .txnindex says), and whether a marker may go because no
// data of its transaction remains.
type txnTracker struct {
	aborted []index.AbortedTxn // not yet reached, sorted by FirstOffset
	seen    map[[2]int64]bool  // (producer id, last offset) of entries added
	// ongoingAborted: producers inside an aborted transaction, with
	// whether a batch of it was seen in this pass.
	ongoingAborted   map[int64]*abortedTxn
	ongoingCommitted map[int64]bool
	// keep receives the aborted transactions whose markers stay with
	// data still before them; nil while building the offset map.
	keep func(index.AbortedTxn) error
}

type abortedTxn struct {
	txn      index.AbortedTxn
	observed bool
}

func newTxnTracker() *txnTracker {
	return &txnTracker{seen: map[[2]int64]bool{}, ongoingAborted: map[int64]*abortedTxn{}, ongoingCommitted: map[int64]bool{}}
}

// add queues aborted transactions; one seen before is ignored.
func (t *txnTracker) add(txns []index.AbortedTxn) {
	n := len(t.aborted)
	for _, a := range txns {
		k := [2]int64{a.ProducerID, a.LastOffset}
		if !t.seen[k] {
			t.seen[k] = true
			t.aborted = append(t.aborted, a)
		}
	}
	if len(t.aborted) > n {
		sort.SliceStable(t.aborted, func(i, j int) bool { return t.aborted[i].FirstOffset < t.aborted[j].FirstOffset })
	}
}

func (t *txnTracker) consumeUpTo(offset int64) {
	i := 0
	for ; i < len(t.aborted) && t.aborted[i].FirstOffset <= offset; i++ {
		a := t.aborted[i]
		if _, ok := t.ongoingAborted[a.ProducerID]; !ok {
			t.ongoingAborted[a.ProducerID] = &abortedTxn{txn: a}
		}
	}
	t.aborted = t.aborted[i:]
}

// onData reports whether a data batch belongs to an aborted transaction
// (and so may be discarded).
func (t *txnTracker) onData(h *record.BatchHeader) bool {
	t.consumeUpTo(h.LastOffset())
	if !h.Attributes.IsTransactional() {
		return false
	}
	if a, ok := t.ongoingAborted[h.ProducerID]; ok {
		a.observed = true
		return true
	}
	t.ongoingCommitted[h.ProducerID] = true
	return false
}

// onControl reports whether a control batch may be discarded (once its
// delete horizon passed): an ABORT marker once no data of its transaction
// is left, a COMMIT marker once no data of its transaction was seen in this
// pass, an emptied control batch always. An ABORT marker that stays with
// data before it keeps its .txnindex entry.
func (t *txnTracker) onControl(h *record.BatchHeader, typ record.ControlType, empty bool) (bool, error) {
	t.consumeUpTo(h.LastOffset())
	if empty {
		return true, nil
	}
	switch typ {
	case record.ControlAbort:
		a, ok := t.ongoingAborted[h.ProducerID]
		delete(t.ongoingAborted, h.ProducerID)
		if ok && a.observed {
			if t.keep != nil {
				if err := t.keep(a.txn); err != nil {
					return false, err
				}
			}
			return false, nil
		}
		return true, nil
	case record.ControlCommit:
		had := t.ongoingCommitted[h.ProducerID]
		delete(t.ongoingCommitted, h.ProducerID)
		return !had, nil
	}
	return false, nil
}

// batchRetention is Kafka's BatchRetention.
type batchRetention int

const (
	deleteEmpty batchRetention = iota // drop the batch if no record stays
	retainEmpty                       // keep an empty header if no record stays
	deleteBatch                       // drop the batch whatever its records
)
