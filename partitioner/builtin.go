package partitioner

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// DefaultBatchSize is Kafka's default batch.size, 16384 bytes.
const DefaultBatchSize = 16384

// StickyConfig configures a [BuiltInSticky]. Start from
// [DefaultStickyConfig]: the zero value disables adaptive partitioning,
// which is not Kafka's default.
type StickyConfig struct {
	// BatchSize is Kafka's batch.size in bytes (default 16384): the producer
	// switches the sticky partition after producing this much to it. 0 means
	// 1, as in KafkaProducer (batch.size=0 disables batching, "which in
	// practice means a batch size of 1"); negative is an error.
	BatchSize int

	// AdaptivePartitioning is partitioner.adaptive.partitioning.enable
	// (default true). When true, the next sticky partition is drawn with
	// weights that favour partitions with fewer pending batches, from the
	// queue sizes the producer reports through
	// [BuiltInSticky.UpdatePartitionLoadStats]; when false, those reports
	// are ignored and the draw is uniform.
	AdaptivePartitioning bool

	// Rand, when not nil, is the source of random 32-bit values, for
	// deterministic tests. It is called with a lock held, so it need not be
	// safe for concurrent use. When nil, each instance seeds a generator of
	// its own (math/rand/v2 PCG).
	Rand func() uint32
}

// DefaultStickyConfig returns Kafka's defaults: batch.size 16384, adaptive
// partitioning on.
func DefaultStickyConfig() StickyConfig {
	return StickyConfig{BatchSize: DefaultBatchSize, AdaptivePartitioning: true}
}

// BuiltInSticky is the uniform sticky partitioner that Kafka 3.3+ applies to
// records without a key (KIP-794; Kafka's BuiltInPartitioner, which
// RecordAccumulator drives). Per topic it keeps one sticky partition and
// the bytes produced to it since it was chosen; the producer reports every
// append, and the partition moves on when enough was produced (see
// [BuiltInSticky.UpdateAfterAppend]).
//
// It is not a [Partitioner]: it needs to hear about appends, which only the
// producer's accumulator sees. [Default] wraps it with key hashing.
//
// A BuiltInSticky is safe for concurrent use. Partition does not lock or
// allocate once the topic has a sticky partition; the other methods take a
// per-topic lock.
type BuiltInSticky struct {
	batchSize int64 // stickyBatchSize, at least 1
	adaptive  bool
	rand      *randSource
	topics    *topicMap[stickyTopic]
}

// stickyTopic is one topic's state: Kafka's StickyPartitionInfo plus its
// PartitionLoadStats.
type stickyTopic struct {
	// current is the sticky partition, or UnknownPartition before the first
	// choice. Written only with mu held; read without it by Partition.
	current atomic.Int32

	mu sync.Mutex // protects the fields below, and serializes switches
	// producedBytes counts the bytes appended to current since it was chosen.
	producedBytes int64
	// cft is the cumulative frequency table of the adaptive draw, one entry
	// per partition (entry i is the sum of the weights of partitions 0..i);
	// empty when the draw is uniform.
	cft []int
}

func newStickyTopic() *stickyTopic {
	t := &stickyTopic{}
	t.current.Store(UnknownPartition)
	return t
}

// NewBuiltInSticky returns a BuiltInSticky with no topics. It fails with
// [ErrInvalidConfig] when cfg.BatchSize is negative.
func NewBuiltInSticky(cfg StickyConfig) (*BuiltInSticky, error) {
	if cfg.BatchSize < 0 {
		return nil, fmt.Errorf("%w: batch.size %d is negative", ErrInvalidConfig, cfg.BatchSize)
	}
	return &BuiltInSticky{
		batchSize: int64(max(cfg.BatchSize, 1)),
		adaptive:  cfg.AdaptivePartitioning,
		rand:      newRandSource(cfg.Rand),
		topics:    newTopicMap(newStickyTopic),
	}, nil
}

// Partition returns the current sticky partition of topic for a record
// without a key (Kafka's peekCurrentPartitionInfo). A topic seen for the
// first time, or whose sticky partition is not below numPartitions, gets a
// new one, drawn as described in the package documentation. It returns
// [UnknownPartition] when numPartitions < 1.
//
// The answer can be stale by the time the caller holds the partition's
// queue: another goroutine may have switched. Kafka's accumulator therefore
// rechecks under the queue lock (isPartitionChanged); a producer does the
// same by calling Partition again after locking and retrying if the answer
// changed.
func (s *BuiltInSticky) Partition(topic string, numPartitions int32) int32 {
	if numPartitions < 1 {
		return UnknownPartition
	}
	t := s.topics.get(topic)
	if p := t.current.Load(); p >= 0 && p < numPartitions {
		return p
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.current.Load()
	if p < 0 || p >= numPartitions {
		p = s.switchLocked(t, numPartitions)
	}
	return p
}

// UpdateAfterAppend tells the partitioner that appendedBytes were appended to
// partition of topic for a record that took the sticky path (Kafka's
// updatePartitionInfo). batchIsFull reports whether, after the append, every
// batch in that partition's queue is full: Kafka's allBatchesFull, true when
// the queue's last batch is full or the queue is empty.
//
// It adds appendedBytes to the bytes produced to the sticky partition and
// switches to a new one when
//
//	produced >= BatchSize && batchIsFull   ||   produced >= 2*BatchSize
//
// The first condition waits for the batch to be complete, so a high
// linger.ms does not leave fractional batches behind; the second caps the
// wait. It reports whether a new partition was drawn (the draw may pick the
// same partition again).
//
// Before appending a sticky record, a producer whose chosen partition's
// queue already has only full batches calls UpdateAfterAppend with
// appendedBytes 0 and batchIsFull true, to complete a switch an earlier
// append could not make (Kafka's partitionChanged); if that reports a
// switch, the producer partitions the record again.
//
// An update for a partition that is no longer topic's sticky partition
// (another goroutine switched first) is ignored and reports false. Records
// with a key, or with an explicit partition, must not be reported.
// Negative appendedBytes count as 0.
func (s *BuiltInSticky) UpdateAfterAppend(topic string, partition int32, appendedBytes int, batchIsFull bool, numPartitions int32) (switched bool) {
	if numPartitions < 1 {
		return false
	}
	t := s.topics.get(topic)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current.Load() != partition {
		return false
	}
	t.producedBytes += int64(max(appendedBytes, 0))
	if t.producedBytes >= s.batchSize && batchIsFull || t.producedBytes >= 2*s.batchSize {
		s.switchLocked(t, numPartitions)
		return true
	}
	return false
}

// UpdatePartitionLoadStats reports the queue size of every partition of
// topic: queueSizes[p] is the number of batches pending in partition p's
// queue (Kafka's deque size; an empty queue is 0), and len(queueSizes) is
// the topic's partition count. The sticky partitioner uses the latest report
// the next time it draws a partition. A producer reports after each pass of
// its sender over the queues, as Kafka's RecordAccumulator.ready does.
//
// From the report it builds the cumulative frequency table of the adaptive
// draw, with weight maxQueueSize + 1 − queueSize(p) for partition p. It
// drops the table, leaving the draw uniform, when adaptive partitioning is
// off, when the topic has fewer than two partitions, or when all queue sizes
// are equal. The slice is not retained. REQUIRES: no queue size is negative.
func (s *BuiltInSticky) UpdatePartitionLoadStats(topic string, queueSizes []int) {
	if !s.adaptive {
		return
	}
	t := s.topics.get(topic)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cft = t.cft[:0]
	if len(queueSizes) < 2 {
		return
	}
	maxSize, allEqual := queueSizes[0], true
	for _, q := range queueSizes[1:] {
		if q != queueSizes[0] {
			allEqual = false
		}
		maxSize = max(maxSize, q)
	}
	if allEqual {
		return
	}
	sum := 0
	for _, q := range queueSizes {
		sum += maxSize + 1 - q
		t.cft = append(t.cft, sum)
	}
}

// switchLocked draws a new sticky partition for t and resets its byte count.
// The caller must hold t.mu.
func (s *BuiltInSticky) switchLocked(t *stickyTopic, numPartitions int32) int32 {
	p := s.nextPartitionLocked(t, numPartitions)
	t.current.Store(p)
	t.producedBytes = 0
	return p
}

// nextPartitionLocked is Kafka's BuiltInPartitioner.nextPartition with every
// partition available: a uniform draw, or the adaptive weighted draw when the
// load table matches the partition count. The caller must hold t.mu.
func (s *BuiltInSticky) nextPartitionLocked(t *stickyTopic, numPartitions int32) int32 {
	random := s.rand.int31()
	if len(t.cft) != int(numPartitions) {
		// No load stats (or stats from before the partition count changed).
		return random % numPartitions
	}
	weighted := int(random) % t.cft[len(t.cft)-1]
	// The first entry strictly greater than weighted. Weights are at least 1,
	// so the table strictly increases.
	lo, hi := 0, len(t.cft)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.cft[mid] > weighted {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int32(lo)
}
