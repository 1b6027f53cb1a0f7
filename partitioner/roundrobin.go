package partitioner

import (
	"sync"
	"sync/atomic"
)

// RoundRobin is Kafka's org.apache.kafka.clients.producer.RoundRobinPartitioner:
// records go to the partitions of a topic in turn, whatever their keys. Each
// topic has its own counter, starting at 0; record n of a topic goes to
// ToPositive(n) % numPartitions, with n wrapping at 2^31 as Java's
// AtomicInteger does. (Kafka cycles over the partitions that have a leader;
// in-process every partition is available, so it cycles over all of them.)
//
// # The new-batch double call
//
// A producer with a partitioner calls Partition twice for a record that
// opens a new batch, with OnNewBatch in between (see [BatchObserver]). Before
// Kafka 3.9.1 and 4.0 the second call advanced the counter again, so every
// new batch skipped a partition, and with an even partition count records
// could reach only half of the partitions (KAFKA-9965, KAFKA-16283). Kafka
// fixed it in KAFKA-17632 (RoundRobinPartitioner.onNewBatch remembers the
// partition; the next partition() call of the same thread returns it instead
// of advancing the counter). RoundRobin follows the fixed behaviour: OnNewBatch
// hands the partition back to the topic, and the next Partition call for that
// topic returns it without advancing the counter. Go has no thread-locals, so
// under concurrency the handed-back partition may go to another goroutine's
// record rather than the one that opened the batch; every counter value is
// still used exactly once, so the distribution stays even.
//
// A RoundRobin is safe for concurrent use; Partition does not allocate.
type RoundRobin struct {
	topics *topicMap[roundRobinTopic]
}

type roundRobinTopic struct {
	counter atomic.Int32 // the next counter value; wraps like Java's int
	// handedBackN is len(handedBack), so Partition skips the lock when zero.
	handedBackN atomic.Int32

	mu         sync.Mutex // protects handedBack
	handedBack []int32    // partitions returned by OnNewBatch, not yet reused
}

// NewRoundRobin returns a RoundRobin with every topic's counter at 0.
func NewRoundRobin() *RoundRobin {
	return &RoundRobin{topics: newTopicMap(func() *roundRobinTopic { return new(roundRobinTopic) })}
}

// Partition implements [Partitioner]. It ignores the key and the value.
func (r *RoundRobin) Partition(topic string, _, _ []byte, numPartitions int32) int32 {
	if numPartitions < 1 {
		return UnknownPartition
	}
	t := r.topics.get(topic)
	if t.handedBackN.Load() > 0 {
		if p, ok := t.takeHandedBack(); ok && p >= 0 && p < numPartitions {
			return p
		}
	}
	return ToPositive(t.counter.Add(1)-1) % numPartitions
}

// OnNewBatch implements [BatchObserver]: the next Partition call for topic
// returns prevPartition again instead of advancing the counter.
func (r *RoundRobin) OnNewBatch(topic string, prevPartition, _ int32) {
	t := r.topics.get(topic)
	t.mu.Lock()
	t.handedBack = append(t.handedBack, prevPartition)
	t.handedBackN.Store(int32(len(t.handedBack)))
	t.mu.Unlock()
}

// takeHandedBack removes and returns the most recently handed-back partition.
func (t *roundRobinTopic) takeHandedBack() (int32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.handedBack)
	if n == 0 {
		return 0, false
	}
	p := t.handedBack[n-1]
	t.handedBack = t.handedBack[:n-1]
	t.handedBackN.Store(int32(n - 1))
	return p, true
}
