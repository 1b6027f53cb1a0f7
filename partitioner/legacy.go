package partitioner

import (
	"sync"
	"sync/atomic"
)

// UniformSticky is Kafka's org.apache.kafka.clients.producer.UniformStickyPartitioner
// (KIP-480): every record of a topic, keyed or not, goes to the topic's
// sticky partition, which changes only when a record opens a new batch there
// ([UniformSticky.OnNewBatch]). The first sticky partition, and each next
// one, is drawn uniformly at random, never the same partition twice in a row
// (unless the topic has one partition).
//
// Kafka deprecated the class in 3.3 (KIP-794) and removed it in 4.0
// (KAFKA-18262); kafkalite keeps it so that configurations naming it still
// work. Kafka's replacement is the default partitioner with
// partitioner.ignore.keys=true, which switches by bytes produced rather
// than by batches opened.
//
// A UniformSticky is safe for concurrent use; Partition does not lock or
// allocate once the topic has a sticky partition.
//
// Deprecated: Kafka removed UniformStickyPartitioner in 4.0. Use [Default]
// with [Config].IgnoreKeys set.
type UniformSticky struct {
	cache *stickyCache
}

// NewUniformSticky returns a UniformSticky. rand, when not nil, is its
// source of random 32-bit values (called with a lock held); when nil it
// seeds a generator of its own.
//
// Deprecated: see [UniformSticky].
func NewUniformSticky(rand func() uint32) *UniformSticky {
	return &UniformSticky{cache: newStickyCache(rand)}
}

// Partition implements [Partitioner]: the topic's sticky partition, whatever
// the key.
func (u *UniformSticky) Partition(topic string, _, _ []byte, numPartitions int32) int32 {
	return u.cache.partition(topic, numPartitions)
}

// OnNewBatch implements [BatchObserver]: if prevPartition is still the
// topic's sticky partition, a new one is drawn.
func (u *UniformSticky) OnNewBatch(topic string, prevPartition, numPartitions int32) {
	u.cache.nextPartition(topic, prevPartition, numPartitions)
}

// LegacyDefault is Kafka's org.apache.kafka.clients.producer.internals.DefaultPartitioner
// as it was from 2.4 to 3.x (KIP-480): a record with a key goes to
// [PartitionForKey]; a record without one goes to the topic's sticky
// partition, which changes only when a record opens a new batch there
// ([LegacyDefault.OnNewBatch]), as in [UniformSticky]. Note that a keyed
// record opening a new batch on the sticky partition also moves it, as in
// Kafka.
//
// It is not [Default], the partitioner Kafka uses when none is configured:
// that one switches by bytes produced (KIP-794). Kafka deprecated this class
// in 3.3 and removed it in 4.0 (KAFKA-18262); kafkalite keeps it so that
// configurations naming it still work.
//
// A LegacyDefault is safe for concurrent use; Partition does not lock or
// allocate once the topic has a sticky partition.
//
// Deprecated: Kafka removed DefaultPartitioner in 4.0. Use [Default].
type LegacyDefault struct {
	cache *stickyCache
}

// NewLegacyDefault returns a LegacyDefault. rand, when not nil, is its
// source of random 32-bit values (called with a lock held); when nil it
// seeds a generator of its own.
//
// Deprecated: see [LegacyDefault].
func NewLegacyDefault(rand func() uint32) *LegacyDefault {
	return &LegacyDefault{cache: newStickyCache(rand)}
}

// Partition implements [Partitioner]: the key's partition, or for a nil key
// the topic's sticky partition.
func (d *LegacyDefault) Partition(topic string, key, _ []byte, numPartitions int32) int32 {
	if key == nil {
		return d.cache.partition(topic, numPartitions)
	}
	return PartitionForKey(key, numPartitions)
}

// OnNewBatch implements [BatchObserver]: if prevPartition is still the
// topic's sticky partition, a new one is drawn.
func (d *LegacyDefault) OnNewBatch(topic string, prevPartition, numPartitions int32) {
	d.cache.nextPartition(topic, prevPartition, numPartitions)
}

// stickyCache is Kafka's StickyPartitionCache: the sticky partition of each
// topic, changed only by nextPartition.
type stickyCache struct {
	rand   *randSource
	topics *topicMap[stickyCacheTopic]
}

type stickyCacheTopic struct {
	// current is the sticky partition, or UnknownPartition before the first
	// choice. Written only with mu held.
	current atomic.Int32
	mu      sync.Mutex // serializes changes of current
}

func newStickyCache(rand func() uint32) *stickyCache {
	return &stickyCache{
		rand: newRandSource(rand),
		topics: newTopicMap(func() *stickyCacheTopic {
			t := new(stickyCacheTopic)
			t.current.Store(UnknownPartition)
			return t
		}),
	}
}

// partition returns topic's sticky partition, choosing one if it has none
// (or none below numPartitions).
func (c *stickyCache) partition(topic string, numPartitions int32) int32 {
	if numPartitions < 1 {
		return UnknownPartition
	}
	t := c.topics.get(topic)
	if p := t.current.Load(); p >= 0 && p < numPartitions {
		return p
	}
	return c.next(t, UnknownPartition, numPartitions)
}

// nextPartition draws a new sticky partition for topic if it has none or if
// prevPartition is its current one, and returns the sticky partition.
func (c *stickyCache) nextPartition(topic string, prevPartition, numPartitions int32) int32 {
	if numPartitions < 1 {
		return UnknownPartition
	}
	return c.next(c.topics.get(topic), prevPartition, numPartitions)
}

func (c *stickyCache) next(t *stickyCacheTopic, prevPartition, numPartitions int32) int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.current.Load()
	if old >= numPartitions {
		old = UnknownPartition // a partition that no longer exists is no choice
	}
	if old != UnknownPartition && old != prevPartition {
		return old // someone else already moved on
	}
	p := int32(0)
	if numPartitions > 1 {
		for {
			p = c.rand.int31() % numPartitions
			if p != old {
				break
			}
		}
	}
	t.current.Store(p)
	return p
}
