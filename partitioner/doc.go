// Package partitioner chooses the partition of each produced record exactly
// as Apache Kafka's Java producer does, so that a key lands in the same
// partition whether kafkalite or Kafka produced it.
//
// Verified against Kafka's clients module (apache/kafka): Utils.java
// (murmur2, toPositive), BuiltInPartitioner.java, RecordAccumulator.java
// (append, partitionChanged, allBatchesFull, partitionReady),
// KafkaProducer.java (partition, doSend), RoundRobinPartitioner.java,
// UniformStickyPartitioner.java, StickyPartitionCache.java and the 3.x
// DefaultPartitioner.java; murmur2 vectors from UtilsTest.java and
// librdkafka's rdmurmur2.c.
//
// # What is here
//
//	Partitioner, BatchObserver   the interface of custom partitioners (Kafka's Partitioner)
//	Default                      no partitioner.class: key hash, else BuiltInSticky
//	BuiltInSticky                KIP-794 uniform sticky partitioner, driven by the producer
//	RoundRobin                   partitioner.class=...RoundRobinPartitioner
//	UniformSticky, LegacyDefault the KIP-480 partitioners Kafka 4.0 removed
//	ByClassName, ClassName       partitioner.class values ⇄ built-ins
//	Murmur2, ToPositive, PartitionForKey   the hash
//
// Every type here is safe for concurrent use, and the Partition methods do
// not allocate once a topic has been seen.
//
// # murmur2
//
// Kafka hashes the serialized key bytes with its variant of MurmurHash2 in
// 32-bit wrapping arithmetic (>> below is a logical shift):
//
//	m = 0x5bd1e995, r = 24
//	h = 0x9747b28c ^ len(data)
//	for each whole 4-byte group b0 b1 b2 b3 (little-endian, bytes unsigned):
//	    k = b0 | b1<<8 | b2<<16 | b3<<24
//	    k *= m;  k ^= k >> r;  k *= m
//	    h *= m;  h ^= k
//	tail of 1-3 bytes t0 [t1 [t2]], falling through:
//	    3: h ^= t2 << 16
//	    2: h ^= t1 << 8
//	    1: h ^= t0;  h *= m
//	h ^= h >> 13;  h *= m;  h ^= h >> 15
//	result: h as a signed int32
//
// A keyed record goes to ToPositive(murmur2(key)) % numPartitions, where
// ToPositive(x) = x & 0x7fffffff (not an absolute value), over all the
// topic's partitions ([PartitionForKey]).
//
// # The sticky partitioner of records without a key (KIP-794)
//
// Per topic, [BuiltInSticky] keeps a sticky partition and the bytes produced
// to it since it was chosen. After each append to it:
//
//	producedBytes += appendedBytes
//	switch if producedBytes >= batch.size && every batch in its queue is full
//	       or producedBytes >= 2 × batch.size
//
// The next partition is drawn with r = ToPositive(random int32):
//
//   - uniform: r % numPartitions;
//   - adaptive (partitioner.adaptive.partitioning.enable, the default), when
//     the producer has reported queue sizes that are not all equal: partition
//     p gets weight maxQueueSize + 1 − queueSize(p); the weights are summed
//     into a cumulative frequency table, and the partition is the first entry
//     strictly greater than r % total, found by binary search. Queue sizes
//     0 3 1 give weights 4 1 3 and table 4 5 8: draws 0-3 pick partition 0,
//     4 picks 1, 5-7 pick 2.
//
// Kafka draws among the partitions whose leader is known, and
// partitioner.availability.timeout.ms can exclude slow ones; in-process
// every partition is available, so both are moot.
//
// # How a producer uses this package
//
// Kafka's KafkaProducer.partition decides, in order:
//
//  1. the record's explicit partition, if it has one;
//  2. a custom partitioner (any [Partitioner] other than [*Default]): its
//     Partition result. If it is also a [BatchObserver], a record that would
//     open a new batch is partitioned again after OnNewBatch (the
//     abort-on-new-batch retry of KafkaProducer.doSend);
//  3. otherwise the built-in path of [*Default]: [Default.KeyPartition] for
//     a key, and for an [UnknownPartition] answer the sticky partition of
//     [Default.Sticky].
//
// The producer drives the sticky partitioner of step 3 as Kafka's
// RecordAccumulator.append does:
//
//	p := sticky.Partition(topic, n)                        // peek
//	lock p's queue
//	if sticky.Partition(topic, n) != p { unlock; retry }   // raced
//	if p's queue has only full batches, or none {
//	    if sticky.UpdateAfterAppend(topic, p, 0, true, n) { unlock; retry }
//	}
//	append; sticky.UpdateAfterAppend(topic, p, bytes, allFull, n)
//	unlock
//
// where bytes is the growth of the batch's estimated size and allFull says
// whether the queue's last batch is now full. The producer's sender reports
// queue sizes with [BuiltInSticky.UpdatePartitionLoadStats] after each pass
// over the queues. Records placed by steps 1 and 2, and keyed records, are
// never reported to the sticky partitioner.
//
// # Legacy partitioners (KIP-480)
//
// Kafka 2.4 to 3.x shipped DefaultPartitioner and UniformStickyPartitioner,
// which keep a sticky partition per topic and draw a new one (uniformly,
// never the previous one) only when a record opens a new batch on it
// (onNewBatch). Kafka deprecated them in 3.3 and removed them in 4.0
// (KAFKA-18262); kafkalite keeps them as [LegacyDefault] and
// [UniformSticky].
package partitioner
