package log

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/record"
)

// batchesToRetain is how many of a producer's latest batches the log
// remembers for duplicate detection: Kafka's
// ProducerStateEntry.NUM_BATCHES_TO_RETAIN, which matches the client limit
// max.in.flight.requests.per.connection ≤ 5 of an idempotent producer.
const batchesToRetain = 5

// batchMeta is what the log remembers of one producer batch.
type batchMeta struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
	timestamp               int64 // the batch's max timestamp
}

// producerEntry is the state of one producer id in one partition (Kafka's
// ProducerStateEntry).
type producerEntry struct {
	epoch            int16
	batches          []batchMeta // oldest first, at most batchesToRetain
	coordinatorEpoch int32
	lastTimestamp    int64
	txnFirstOffset   int64 // first offset of the open transaction, -1 for none
}

func (e *producerEntry) lastSeq() int32 {
	if len(e.batches) == 0 {
		return -1
	}
	return e.batches[len(e.batches)-1].lastSeq
}

// duplicate returns the remembered batch with exactly this sequence range.
func (e *producerEntry) duplicate(firstSeq, lastSeq int32) (batchMeta, bool) {
	for _, b := range e.batches {
		if b.firstSeq == firstSeq && b.lastSeq == lastSeq {
			return b, true
		}
	}
	return batchMeta{}, false
}

func (e *producerEntry) addBatch(b batchMeta) {
	if len(e.batches) == batchesToRetain {
		copy(e.batches, e.batches[1:])
		e.batches = e.batches[:batchesToRetain-1]
	}
	e.batches = append(e.batches, b)
}

// producerState is a partition's producer state (Kafka's
// ProducerStateManager): per producer id the epoch, the latest batches'
// sequences and the open transaction; the open transactions, from which
// the last stable offset follows; and the producers the transaction
// coordinator has cleared to open a transaction here. It lives under the
// log's write lock.
type producerState struct {
	producers map[int64]*producerEntry
	// ongoing maps the producer ids with an open transaction to the first
	// offset of its data here.
	ongoing map[int64]int64
	// verified maps a producer id to the epoch the transaction coordinator
	// registered this partition for: the only way for a transactional
	// batch to open a transaction (Kafka's transaction verification, which
	// stops a zombie's late batch from opening a transaction nobody will
	// end). In memory only, as in Kafka.
	verified map[int64]int16
}

func newProducerState() *producerState {
	return &producerState{producers: map[int64]*producerEntry{}, ongoing: map[int64]int64{}, verified: map[int64]int16{}}
}

// firstUnstableOffset returns the first offset of the earliest open
// transaction, or -1 if none is open.
func (ps *producerState) firstUnstableOffset() int64 {
	first := int64(-1)
	for _, off := range ps.ongoing {
		if first < 0 || off < first {
			first = off
		}
	}
	return first
}

// incrementSequence adds delta to a sequence number, wrapping past
// math.MaxInt32 to 0 as Kafka's sequences do.
func incrementSequence(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// decrementSequence subtracts delta from a sequence number, undoing
// incrementSequence's wrap.
func decrementSequence(seq, delta int32) int32 {
	if seq < delta {
		return math.MaxInt32 - (delta - seq) + 1
	}
	return seq - delta
}

// inSequence reports whether next follows last.
func inSequence(last, next int32) bool {
	return next == last+1 || (next == 0 && last == math.MaxInt32)
}

// checkLeader applies Kafka's checks for an idempotent or transactional
// batch appended as the leader (ProducerAppendInfo) without changing
// anything. A duplicate of a remembered batch returns that batch and ok.
// The header's offsets are not yet assigned. A coordinator's batch
// (originCoordinator) is checked as Kafka checks AppendOrigin.COORDINATOR:
// no duplicate detection (UnifiedLog looks for duplicates of client batches
// only) and no sequence check (ProducerAppendInfo.maybeValidateDataBatch
// checks sequences of client batches only), since Kafka's coordinators
// write every batch with base sequence 0.
func (ps *producerState) checkLeader(h *record.BatchHeader, origin appendOrigin) (dup batchMeta, isDup bool, err error) {
	e := ps.producers[h.ProducerID]
	lastSeq := incrementSequence(h.BaseSequence, h.LastOffsetDelta)
	if origin == originClient && e != nil && e.epoch == h.ProducerEpoch {
		if b, ok := e.duplicate(h.BaseSequence, lastSeq); ok {
			return b, true, nil
		}
	}
	if e != nil && h.ProducerEpoch < e.epoch {
		// Checked before the transaction verification (Kafka checks it
		// after), so that a fenced producer learns it is fenced.
		return batchMeta{}, false, fmt.Errorf("%w: producer %d has epoch %d, the batch %d", ErrInvalidProducerEpoch, h.ProducerID, e.epoch, h.ProducerEpoch)
	}
	txn := h.Attributes.IsTransactional()
	if txn && (e == nil || e.txnFirstOffset < 0) {
		if epoch, ok := ps.verified[h.ProducerID]; !ok || epoch != h.ProducerEpoch {
			return batchMeta{}, false, fmt.Errorf("%w: producer %d epoch %d has no transaction open on this partition", ErrInvalidTxnState, h.ProducerID, h.ProducerEpoch)
		}
	}
	if e == nil {
		return batchMeta{}, false, nil
	}
	switch {
	case origin == originCoordinator:
		// Sequences of a coordinator's batches are not checked.
	case h.ProducerEpoch != e.epoch:
		if h.BaseSequence != 0 && e.epoch != -1 {
			return batchMeta{}, false, fmt.Errorf("%w: producer %d's first batch of epoch %d has sequence %d, not 0",
				ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
	case e.epoch != -1:
		// An entry without batches (a marker's, or a snapshot's without
		// data) expects sequence 0.
		if last := e.lastSeq(); !inSequence(last, h.BaseSequence) {
			return batchMeta{}, false, fmt.Errorf("%w: producer %d epoch %d sent sequence %d after %d",
				ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence, last)
		}
	}
	if !txn && e.txnFirstOffset >= 0 {
		return batchMeta{}, false, fmt.Errorf("%w: producer %d sent a non-transactional batch inside its open transaction", ErrInvalidTxnState, h.ProducerID)
	}
	return batchMeta{}, false, nil
}

// onData records an appended data batch (offsets assigned). It serves
// leader appends after checkLeader, and replicas and recovery, which skip
// the checks (an epoch going backwards is kept as it is).
func (ps *producerState) onData(h *record.BatchHeader) {
	if h.ProducerID < 0 {
		return
	}
	e := ps.producers[h.ProducerID]
	if e == nil {
		e = &producerEntry{epoch: h.ProducerEpoch, coordinatorEpoch: -1, txnFirstOffset: -1}
		ps.producers[h.ProducerID] = e
	}
	if h.ProducerEpoch != e.epoch {
		e.epoch = h.ProducerEpoch
		e.batches = e.batches[:0]
	}
	if h.RecordsCount > 0 || h.BaseSequence >= 0 {
		e.addBatch(batchMeta{firstSeq: h.BaseSequence, lastSeq: h.LastSequence(), firstOffset: h.BaseOffset,
			lastOffset: h.LastOffset(), timestamp: h.MaxTimestamp})
	}
	e.lastTimestamp = h.MaxTimestamp
	if h.Attributes.IsTransactional() && e.txnFirstOffset < 0 {
		e.txnFirstOffset = h.BaseOffset
		ps.ongoing[h.ProducerID] = h.BaseOffset
		delete(ps.verified, h.ProducerID)
	}
}

// checkMarker checks an end-transaction marker the coordinator writes: the
// producer epoch must not go back, nor the coordinator epoch.
func (ps *producerState) checkMarker(pid int64, epoch int16, coordinatorEpoch int32) error {
	e := ps.producers[pid]
	if e == nil {
		return nil
	}
	if epoch < e.epoch {
		return fmt.Errorf("%w: producer %d has epoch %d, the marker %d", ErrInvalidProducerEpoch, pid, e.epoch, epoch)
	}
	if coordinatorEpoch < e.coordinatorEpoch {
		return fmt.Errorf("%w: marker of coordinator epoch %d after %d for producer %d", ErrTransactionCoordinatorFenced, coordinatorEpoch, e.coordinatorEpoch, pid)
	}
	return nil
}

// completedTxn is a transaction a marker ended.
type completedTxn struct {
	producerID              int64
	firstOffset, lastOffset int64 // the data's first offset, the marker's offset
	aborted                 bool
}

// onMarker records an end-transaction marker at offset. It returns the
// transaction it ended, if the producer had one open here (a marker for a
// transaction without data in this partition ends none).
func (ps *producerState) onMarker(pid int64, epoch int16, m record.EndTxnMarker, offset, timestamp int64) (completedTxn, bool) {
	e := ps.producers[pid]
	if e == nil {
		e = &producerEntry{epoch: epoch, coordinatorEpoch: -1, txnFirstOffset: -1}
		ps.producers[pid] = e
	}
	if epoch > e.epoch {
		e.epoch = epoch
		e.batches = e.batches[:0]
	}
	e.coordinatorEpoch = m.CoordinatorEpoch
	e.lastTimestamp = timestamp
	delete(ps.verified, pid)
	if e.txnFirstOffset < 0 {
		return completedTxn{}, false
	}
	c := completedTxn{producerID: pid, firstOffset: e.txnFirstOffset, lastOffset: offset, aborted: m.Type == record.ControlAbort}
	e.txnFirstOffset = -1
	delete(ps.ongoing, pid)
	return c, true
}

// verify registers the coordinator's clearance for pid at epoch to open a
// transaction here. A stale epoch is refused.
func (ps *producerState) verify(pid int64, epoch int16) error {
	if e := ps.producers[pid]; e != nil && epoch < e.epoch {
		return fmt.Errorf("%w: producer %d has epoch %d, not %d", ErrInvalidProducerEpoch, pid, e.epoch, epoch)
	}
	ps.verified[pid] = epoch
	return nil
}

// expire drops the producers without an open transaction whose latest
// batch or marker is at least the expiration (producer.id.expiration.ms)
// old: Kafka's isProducerExpired, now - lastTimestamp >= expiration, in
// milliseconds.
func (ps *producerState) expire(now time.Time, expiration time.Duration) int {
	if expiration < 0 {
		return 0
	}
	limit := now.UnixMilli() - expiration.Milliseconds()
	n := 0
	for pid, e := range ps.producers {
		if e.txnFirstOffset < 0 && e.lastTimestamp <= limit {
			delete(ps.producers, pid)
			n++
		}
	}
	return n
}

// truncateHead forgets the producers whose last data lies below the log
// start offset and who have no open transaction, as Kafka does when the log
// start offset moves.
func (ps *producerState) truncateHead(logStartOffset int64) {
	for pid, e := range ps.producers {
		if e.txnFirstOffset >= 0 || len(e.batches) == 0 {
			continue
		}
		if e.batches[len(e.batches)-1].lastOffset < logStartOffset {
			delete(ps.producers, pid)
		}
	}
}

// entries returns the snapshot of the state: per producer its latest batch
// only, as Kafka's snapshots hold, in producer id order so that equal states
// give equal files.
func (ps *producerState) entries() []snapshot.Entry {
	out := make([]snapshot.Entry, 0, len(ps.producers))
	for pid, e := range ps.producers {
		se := snapshot.Entry{ProducerID: pid, ProducerEpoch: e.epoch, LastSequence: -1, LastOffset: -1,
			Timestamp: e.lastTimestamp, CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnFirstOffset: e.txnFirstOffset}
		if n := len(e.batches); n > 0 {
			b := e.batches[n-1]
			se.LastSequence, se.LastOffset, se.OffsetDelta = b.lastSeq, b.lastOffset, int32(b.lastOffset-b.firstOffset)
		}
		out = append(out, se)
	}
	slices.SortFunc(out, func(a, b snapshot.Entry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// load replaces the state with a snapshot's entries.
func (ps *producerState) load(entries []snapshot.Entry) {
	*ps = *newProducerState()
	for _, se := range entries {
		e := &producerEntry{epoch: se.ProducerEpoch, coordinatorEpoch: se.CoordinatorEpoch,
			lastTimestamp: se.Timestamp, txnFirstOffset: se.CurrentTxnFirstOffset}
		if se.LastOffset >= 0 {
			first := se.LastOffset - int64(se.OffsetDelta)
			e.batches = []batchMeta{{firstSeq: decrementSequence(se.LastSequence, se.OffsetDelta), lastSeq: se.LastSequence, firstOffset: first, lastOffset: se.LastOffset, timestamp: se.Timestamp}}
		}
		ps.producers[se.ProducerID] = e
		if e.txnFirstOffset >= 0 {
			ps.ongoing[se.ProducerID] = e.txnFirstOffset
		}
	}
}
