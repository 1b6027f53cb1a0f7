package partitioner

// Config configures a [Default]. Start from [DefaultConfig].
type Config struct {
	// StickyConfig configures the sticky partitioner of records without a
	// key (batch.size, partitioner.adaptive.partitioning.enable).
	StickyConfig

	// IgnoreKeys is partitioner.ignore.keys (default false). When true,
	// records with a key also take the sticky path: keys no longer decide
	// the partition, and records with equal keys may land in different
	// partitions.
	IgnoreKeys bool
}

// DefaultConfig returns Kafka's defaults: batch.size 16384, adaptive
// partitioning on, keys hashed.
func DefaultConfig() Config {
	return Config{StickyConfig: DefaultStickyConfig()}
}

// Default is what Kafka 3.3+ and 4.x do when partitioner.class is not set
// (KafkaProducer.partition plus RecordAccumulator's built-in partitioner):
//
//   - a record with a key goes to [PartitionForKey] (murmur2 of the key
//     bytes), unless IgnoreKeys;
//   - a record without a key (or every record, with IgnoreKeys) goes to the
//     topic's sticky partition, kept by a [BuiltInSticky].
//
// Default implements [Partitioner], so it can stand wherever a Partitioner
// is configured, but the sticky partition only moves when the producer
// reports appends to [Default.Sticky]. A producer therefore recognizes a
// *Default and drives it as Kafka's accumulator does: [Default.KeyPartition]
// first, and for an [UnknownPartition] answer the sticky protocol described
// at [BuiltInSticky.UpdateAfterAppend]. It does not call OnNewBatch: Default
// does not implement [BatchObserver], as Kafka's built-in path never aborts
// for a new batch.
//
// A Default is safe for concurrent use.
type Default struct {
	sticky     *BuiltInSticky
	ignoreKeys bool
}

// NewDefault returns a Default. It fails with [ErrInvalidConfig] when
// cfg.BatchSize is negative.
func NewDefault(cfg Config) (*Default, error) {
	s, err := NewBuiltInSticky(cfg.StickyConfig)
	if err != nil {
		return nil, err
	}
	return &Default{sticky: s, ignoreKeys: cfg.IgnoreKeys}, nil
}

// Partition implements [Partitioner]: the key's partition, or the current
// sticky partition (see the type's documentation for how it moves).
func (d *Default) Partition(topic string, key, _ []byte, numPartitions int32) int32 {
	if p := d.KeyPartition(key, numPartitions); p != UnknownPartition {
		return p
	}
	return d.sticky.Partition(topic, numPartitions)
}

// KeyPartition returns the partition a record's key decides,
// [PartitionForKey], or [UnknownPartition] when the record takes the sticky
// path instead: its key is nil, IgnoreKeys is set, or numPartitions < 1. It
// is the keyed half of KafkaProducer.partition.
func (d *Default) KeyPartition(key []byte, numPartitions int32) int32 {
	if key == nil || d.ignoreKeys {
		return UnknownPartition
	}
	return PartitionForKey(key, numPartitions)
}

// Sticky returns the sticky partitioner of records that take the sticky
// path. The producer reports appends and queue sizes to it.
func (d *Default) Sticky() *BuiltInSticky {
	return d.sticky
}

// IgnoreKeys reports whether keys are ignored (partitioner.ignore.keys).
func (d *Default) IgnoreKeys() bool {
	return d.ignoreKeys
}
