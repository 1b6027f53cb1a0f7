package consumer

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// This file holds isolation.level: where a partition ends for the consumer
// (the high watermark, or the last stable offset for read_committed), and
// the read_committed filter that drops the batches of aborted transactions
// from a fetch, as Kafka's consumer does with the aborted transactions a
// read_committed FetchResponse lists (CompletedFetch.nextFetchedRecord).

// endOffset is the end of a partition at the consumer's isolation level,
// as Kafka's ListOffsets answers "latest": the last stable offset for
// read_committed, the high watermark for read_uncommitted.
func (c *Consumer) endOffset(l *log.Log) int64 {
	if c.cfg.IsolationLevel == ReadCommitted {
		return l.LastStableOffset()
	}
	return l.HighWatermark()
}

// abortedTxn is one aborted transaction of a fetch: the producer's
// transactional batches from firstOffset up to its ABORT marker at
// lastOffset are dropped.
type abortedTxn struct{ producerID, firstOffset, lastOffset int64 }

// txnFilter drops the batches of aborted transactions from one fetch of a
// read_committed partition. Its slices are reused from fetch to fetch.
type txnFilter struct {
	// pending are the fetch's aborted transactions by first offset; those
	// before next have been reached.
	pending []abortedTxn
	next    int
	// active are the transactions reached and not yet ended: at most one
	// per producer (its latest), dropped once a batch of the producer at
	// or after its marker is seen (Kafka's abortedProducerIds).
	active []abortedTxn
}

// load starts a fetch of l from offset, below lso: the aborted
// transactions overlapping [offset, lso), from the log's .txnindex files.
func (f *txnFilter) load(l *log.Log, offset, lso int64) error {
	txns, err := l.AbortedTransactions(offset, lso)
	if err != nil {
		return err
	}
	f.pending = f.pending[:0]
	for _, t := range txns {
		f.pending = append(f.pending, abortedTxn{producerID: t.ProducerID, firstOffset: t.FirstOffset, lastOffset: t.LastOffset})
	}
	slices.SortFunc(f.pending, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	f.next = 0
	f.active = f.active[:0]
	return nil
}

// aborted reports whether the batch h, the next of the fetch in offset
// order, holds data of an aborted transaction. It must see every batch of
// the fetch, control batches included, in order.
func (f *txnFilter) aborted(h *record.BatchHeader) bool {
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

func (f *txnFilter) find(producerID int64) int {
	for i := range f.active {
		if f.active[i].producerID == producerID {
			return i
		}
	}
	return -1
}

// waitsForStable reports whether a read_committed partition at position
// has nothing to read until the last stable offset lso moves: the position
// is at or past lso, and inside the log (outside it, a read reports the
// range error).
func waitsForStable(l *log.Log, position, lso int64) bool {
	return position >= lso && position <= l.LogEndOffset() && position >= l.LogStartOffset()
}

// cutAtStable returns the leading batches of buf (whole batches, as a read
// returns them) whose base offsets are below lso: a read_committed fetch
// returns nothing at or after the last stable offset. A batch whose header
// does not parse is kept, for the fetch loop to report.
func cutAtStable(buf []byte, lso int64) []byte {
	for pos := 0; pos+record.HeaderSizeUpToMagic <= len(buf); {
		// The base offset is the batch's first field (KAFKA_FORMAT §1).
		if int64(binary.BigEndian.Uint64(buf[pos:])) >= lso {
			return buf[:pos]
		}
		n, err := record.BatchSize(buf[pos:])
		if err != nil {
			return buf
		}
		pos += n
	}
	return buf
}
