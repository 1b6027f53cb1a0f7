package log

import (
	"cmp"
	"context"
	"slices"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// abortedTxn is one aborted transaction of a fetch: the producer's
// transactional batches from firstOffset up to its ABORT marker at
// lastOffset are dropped.
type abortedTxn struct{ producerID, firstOffset, lastOffset int64 }

// AbortFilter drops the batches of aborted transactions from a
// read_committed fetch, as Kafka's consumer does with the aborted
// transactions of a FetchResponse (CompletedFetch.nextFetchedRecord): after
// [AbortFilter.Reset] for a fetch from an offset below the last stable
// offset, [AbortFilter.Aborted] is asked about every batch of the fetch in
// order. Its slices are reused from fetch to fetch: filtering allocates
// nothing once they have grown. The zero AbortFilter is ready for Reset.
type AbortFilter struct {
	// pending are the fetch's aborted transactions by first offset; those
	// before next have been reached.
	pending []abortedTxn
	next    int
	// active are the transactions reached and not yet ended: at most one
	// per producer (its latest), dropped once a batch of the producer at
	// or after its marker is seen (Kafka's abortedProducerIds).
	active []abortedTxn
	// txns receives the .txnindex entries of a Reset.
	txns []index.AbortedTxn
}

// Reset starts a fetch of l from offset whose batches end below upper (at
// most the last stable offset): the aborted transactions overlapping
// [offset, upper), from the log's .txnindex files. Kafka bounds them by
// the end of the data fetched; a bound past it only costs reads of more
// transaction indexes (of copies in remote storage, fetches).
func (f *AbortFilter) Reset(l *Log, offset, upper int64) error {
	txns, err := l.remote.appendAbortedTxns(context.Background(), l, f.txns[:0], offset, upper)
	if err != nil {
		return err
	}
	f.txns = txns
	f.ResetTxns(txns)
	return nil
}

// ResetTxns starts a fetch whose aborted transactions are txns, in any
// order: those of a [FetchResult] or a FetchResponse, or of .txnindex
// files read directly (a tool reading a directory without opening it).
func (f *AbortFilter) ResetTxns(txns []index.AbortedTxn) {
	f.pending = f.pending[:0]
	for _, t := range txns {
		f.pending = append(f.pending, abortedTxn{producerID: t.ProducerID, firstOffset: t.FirstOffset, lastOffset: t.LastOffset})
	}
	slices.SortFunc(f.pending, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	f.next = 0
	f.active = f.active[:0]
}

// Aborted reports whether the batch h, the next of the fetch in offset
// order, holds data of an aborted transaction. It must see every batch of
// the fetch, control batches included, in order.
func (f *AbortFilter) Aborted(h *record.BatchHeader) bool {
	if h.ProducerID < 0 {
		return false
	}
	for ; f.next < len(f.pending) && f.pending[f.next].firstOffset <= h.LastOffset(); f.next++ {
		t := f.pending[f.next]
		if i := f.find(t.producerID); i >= 0 {
			f.active[i].lastOffset = max(f.active[i].lastOffset, t.lastOffset)
		} else {
			f.active = append(f.active, t)
		}
	}
	i := f.find(h.ProducerID)
	if i < 0 {
		return false
	}
	if h.BaseOffset >= f.active[i].lastOffset {
		// The ABORT marker (a control batch, skipped anyway) or a batch
		// after it: the aborted transaction is over.
		f.active = slices.Delete(f.active, i, i+1)
		return false
	}
	return h.Attributes.IsTransactional() && !h.Attributes.IsControl()
}

func (f *AbortFilter) find(producerID int64) int {
	for i := range f.active {
		if f.active[i].producerID == producerID {
			return i
		}
	}
	return -1
}

// ReadCommittedRecords is [Log.ReadRecords] for isolation.level
// read_committed: it reads no further than the last stable offset, and
// passes fn only the records of committed transactions and of
// non-transactional producers, never those of aborted transactions nor
// control records. It returns the offset to read from next; at the last
// stable offset it returns offset and calls fn for nothing.
func (l *Log) ReadCommittedRecords(offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	var rr RecordReader
	return rr.ReadCommittedRecords(l, offset, maxBytes, fn)
}

// ReadCommittedRecords is [Log.ReadCommittedRecords] on l with rr's
// buffers.
func (rr *RecordReader) ReadCommittedRecords(l *Log, offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	return rr.Read(context.Background(), l, offset, maxBytes, ReadCommitted, fn)
}
