package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// tpKey names a partition in the accumulator.
type tpKey struct {
	topic     string
	partition int32
}

// accumulator is Kafka's RecordAccumulator: a deque of batches per
// partition. Send appends to the last batch of its partition's deque, or
// opens a new one with memory from the BufferPool; the sender drains batches
// that are ready (full, lingered, flushed or closing).
type accumulator struct {
	pool      *bufferPool
	batchSize int
	linger    time.Duration
	maxBlock  time.Duration
	header    record.BatchHeader
	level     int
	now       func() time.Time
	wake      chan struct{} // nudges the sender; capacity 1

	mu         sync.Mutex // protects the fields below
	queues     map[tpKey][]*producerBatch
	order      []tpKey // partitions in the order their first batch appeared, for fair draining
	incomplete int     // batches created and not yet completed
	idle       chan struct{}
	flushing   int // Flush calls in progress: every batch is ready
	closing    bool
	aborting   bool // Close's context ended: the sender takes nothing more
}

func newAccumulator(pool *bufferPool, cfg *Config, now func() time.Time) *accumulator {
	a := &accumulator{pool: pool, batchSize: cfg.BatchSize, linger: cfg.Linger, maxBlock: cfg.MaxBlock,
		header: record.BatchHeader{PartitionLeaderEpoch: record.NoPartitionLeaderEpoch,
			Attributes: record.Attributes(0).WithCompression(cfg.CompressionType),
			ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence},
		level: cfg.compressionLevel(), now: now, wake: make(chan struct{}, 1),
		queues: map[tpKey][]*producerBatch{}, idle: closedChan}
	return a
}

func (a *accumulator) nudge() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// appendResult says what an append did, for the partitioner and the caller.
type appendResult struct {
	batch      *producerBatch
	index      int
	newBatch   bool
	batchFull  bool
	appendSize int
}

// append adds a record to its partition's last batch, or to a new batch
// whose memory it waits for (up to max.block.ms or ctx). estimate is
// record.EstimateRecordSize of the record.
func (a *accumulator) append(ctx context.Context, tp tpKey, l *log.Log, ts int64, key, value []byte, headers []record.Header, cb Callback, estimate int) (appendResult, error) {
	a.mu.Lock()
	if res, ok := a.tryAppendLocked(tp, ts, key, value, headers, cb, estimate); ok {
		a.mu.Unlock()
		return res, nil
	}
	a.mu.Unlock()

	// A new batch: its buffer is batch.size, or larger for a record that
	// would not fit in one (Kafka's max(batch.size, upper-bound estimate)).
	size := max(a.batchSize, record.BatchHeaderLen+estimate)
	buf, err := a.pool.Allocate(ctx, size, a.maxBlock)
	if errors.Is(err, errPoolClosed) {
		return appendResult{}, ErrClosed
	}
	if err != nil {
		return appendResult{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		a.pool.Deallocate(buf)
		return appendResult{}, ErrClosed
	}
	// Another sender may have opened a batch while this one waited.
	if res, ok := a.tryAppendLocked(tp, ts, key, value, headers, cb, estimate); ok {
		a.pool.Deallocate(buf)
		return res, nil
	}
	q := a.queues[tp]
	if n := len(q); n > 0 {
		q[n-1].full = true
	} else if _, seen := a.queues[tp]; !seen {
		a.order = append(a.order, tp)
	}
	b := &producerBatch{topic: tp.topic, partition: tp.partition, log: l, created: a.now(), done: make(chan struct{}),
		baseOffset: -1, logAppendTime: -1, recs: make([]recordInfo, 0, recordsIn(size, estimate))}
	b.builder.ResetBuffer(a.header, a.level, buf)
	a.queues[tp] = append(q, b)
	if a.incomplete == 0 {
		a.idle = make(chan struct{})
	}
	a.incomplete++
	res, ok := a.tryAppendLocked(tp, ts, key, value, headers, cb, estimate)
	if !ok {
		// Cannot happen: the buffer was sized for this record. Reported,
		// not panicked on (bugs panic only under the invariants build tag).
		return appendResult{}, fmt.Errorf("producer: internal error: a new batch of %d bytes has no room for a record of %d", size, estimate)
	}
	res.newBatch = true
	a.nudge()
	return res, nil
}

// recordsIn guesses how many records like one of estimate bytes a new
// batch of size bytes will take, so that its per-record slice is made
// once: an estimate assumes the largest offset and timestamp deltas,
// about 12 bytes more than a batch's records take. At most 512, so that a
// batch of a tiny first record and large others does not hold much more
// than it uses.
func recordsIn(size, estimate int) int {
	return min((size-record.BatchHeaderLen)/max(estimate-12, 1)+1, 512)
}

// tryAppendLocked appends to the partition's last batch if it has room.
func (a *accumulator) tryAppendLocked(tp tpKey, ts int64, key, value []byte, headers []record.Header, cb Callback, estimate int) (appendResult, bool) {
	q := a.queues[tp]
	if len(q) == 0 {
		return appendResult{}, false
	}
	b := q[len(q)-1]
	if !b.hasRoomFor(estimate, a.batchSize) {
		b.full = true
		return appendResult{}, false
	}
	before := b.builder.Size()
	if err := b.builder.Append(ts, key, value, headers); err != nil {
		return appendResult{}, false // argument errors are caught by Send before this
	}
	b.recs = append(b.recs, recordInfo{cb: cb, timestamp: ts, keySize: sizeOf(key), valueSize: sizeOf(value)})
	// Full when the next record of this size would not fit.
	if !b.hasRoomFor(estimate, a.batchSize) || a.batchSize == 0 {
		b.full = true
		a.nudge()
	}
	return appendResult{batch: b, index: len(b.recs) - 1, batchFull: b.full, appendSize: b.builder.Size() - before}, true
}

// drain removes the batches ready to send, in partition order, oldest first
// per partition. It returns them and when the next batch becomes ready by
// linger (zero if none is waiting).
func (a *accumulator) drain(now time.Time) ([]*producerBatch, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ready []*producerBatch
	var next time.Time
	if a.aborting {
		return nil, next
	}
	// Memory is short when someone waits for it: send what there is, as
	// Kafka's sender does when the pool is exhausted.
	exhausted := a.pool.Waiters() > 0
	all := a.flushing > 0 || a.closing || exhausted
	keep := a.order[:0]
	for _, tp := range a.order {
		q := a.queues[tp]
		i := 0
		for ; i < len(q); i++ {
			b := q[i]
			due := b.created.Add(a.linger)
			if !(b.full || all || !now.Before(due)) {
				if next.IsZero() || due.Before(next) {
					next = due
				}
				break
			}
			b.full = true
			ready = append(ready, b)
		}
		if i == len(q) {
			delete(a.queues, tp)
			continue
		}
		a.queues[tp] = q[i:]
		keep = append(keep, tp)
	}
	a.order = keep
	return ready, next
}

// completed records that n batches are done.
func (a *accumulator) completed(n int) {
	a.mu.Lock()
	a.incomplete -= n
	if a.incomplete == 0 {
		close(a.idle)
	}
	a.mu.Unlock()
}

// queueSizes returns the number of pending batches per partition of a
// topic, for the adaptive partitioner.
func (a *accumulator) queueSizes(topic string, n int32, dst []int) []int {
	dst = dst[:0]
	a.mu.Lock()
	defer a.mu.Unlock()
	for p := range n {
		dst = append(dst, len(a.queues[tpKey{topic, p}]))
	}
	return dst
}

// needsNewBatch reports whether a record of the given estimated size would
// open a new batch in the partition.
func (a *accumulator) needsNewBatch(tp tpKey, estimate int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := a.queues[tp]
	return len(q) == 0 || !q[len(q)-1].hasRoomFor(estimate, a.batchSize)
}

// allBatchesFull reports whether every batch of a partition's deque is
// full (true for an empty deque), Kafka's allBatchesFull.
func (a *accumulator) allBatchesFull(tp tpKey) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := a.queues[tp]
	return len(q) == 0 || q[len(q)-1].full
}

// beginFlush makes every batch ready until endFlush, and returns a channel
// closed when no batch is incomplete.
func (a *accumulator) beginFlush() <-chan struct{} {
	a.mu.Lock()
	a.flushing++
	idle := a.idle
	a.mu.Unlock()
	a.nudge()
	return idle
}

func (a *accumulator) endFlush() {
	a.mu.Lock()
	a.flushing--
	a.mu.Unlock()
}

// close stops new batches, makes every batch ready, and returns the idle
// channel.
func (a *accumulator) close() <-chan struct{} {
	a.mu.Lock()
	a.closing = true
	idle := a.idle
	a.mu.Unlock()
	a.nudge()
	return idle
}

// abort stops the sender from draining: Close's context ended.
func (a *accumulator) abort() {
	a.mu.Lock()
	a.aborting = true
	a.mu.Unlock()
}

// abandon removes every batch still queued, for Close after its context
// ended.
func (a *accumulator) abandon() []*producerBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*producerBatch
	for _, tp := range a.order {
		out = append(out, a.queues[tp]...)
		delete(a.queues, tp)
	}
	a.order = nil
	return out
}
