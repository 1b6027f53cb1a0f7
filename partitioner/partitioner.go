package partitioner

// UnknownPartition is Kafka's RecordMetadata.UNKNOWN_PARTITION (-1): "no
// partition chosen yet". [Default.KeyPartition] returns it for a record that
// takes the sticky path, and every function here returns it when asked to
// choose among fewer than one partition. A producer never appends to it.
const UnknownPartition int32 = -1

// Partitioner chooses the partition of a record. It is kafkalite's
// counterpart of Kafka's org.apache.kafka.clients.producer.Partitioner,
// configured in Kafka by partitioner.class.
//
// Implementations must be safe for concurrent use: the producer calls
// Partition from every goroutine that calls Send, without a lock of its own.
// Partition should not block and, on the hot path, should not allocate.
//
// A Partitioner may also implement [BatchObserver] to hear about new
// batches, and io.Closer: the producer calls Close once, when it closes
// (Kafka's Partitioner.close). Kafka's configure(Map) has no counterpart:
// configure a Go value before handing it over.
type Partitioner interface {
	// Partition returns the partition for a record, in [0, numPartitions).
	// key and value are the serialized bytes; key is nil for a null key (an
	// empty non-nil key is a key). numPartitions is the topic's partition
	// count, at least 1. A result outside [0, numPartitions) is a bug in the
	// partitioner: the producer rejects the record (Kafka throws
	// IllegalArgumentException for a negative one).
	Partition(topic string, key, value []byte, numPartitions int32) int32
}

// BatchObserver is implemented by a [Partitioner] that wants to hear when a
// record is about to open a new batch: Kafka's Partitioner.onNewBatch,
// deprecated since Kafka 3.3 but still called by Kafka 4.x for every custom
// partitioner.
//
// The producer drives it as KafkaProducer.doSend does when a partitioner is
// configured: it partitions the record, tries to append it to the open batch
// of that partition, and if the record does not fit (a new batch would be
// needed) it calls OnNewBatch with the partition it had chosen, partitions
// the record again, and appends it where the second call says, creating the
// batch there. So Partition is called twice for such a record, which a
// stateful partitioner must account for (see [RoundRobin]).
//
// OnNewBatch must be safe for concurrent use, like Partition.
type BatchObserver interface {
	// OnNewBatch reports that a record partitioned to prevPartition of topic
	// (which has numPartitions partitions) needs a new batch there. The
	// next Partition call for the record follows.
	OnNewBatch(topic string, prevPartition, numPartitions int32)
}
