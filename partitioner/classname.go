package partitioner

import "strings"

// Kafka class names that partitioner.class may hold, and that [ByClassName]
// resolves.
const (
	// RoundRobinClass names Kafka's RoundRobinPartitioner: [RoundRobin].
	RoundRobinClass = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
	// UniformStickyClass names Kafka's UniformStickyPartitioner (removed in
	// Kafka 4.0): [UniformSticky].
	UniformStickyClass = "org.apache.kafka.clients.producer.UniformStickyPartitioner"
	// LegacyDefaultClass names Kafka's DefaultPartitioner (removed in Kafka
	// 4.0): [LegacyDefault].
	LegacyDefaultClass = "org.apache.kafka.clients.producer.internals.DefaultPartitioner"
)

// ByClassName resolves a partitioner.class value to a new built-in
// partitioner:
//
//	""                   → [Default] with [DefaultConfig] and batch.size batchSize
//	RoundRobinClass      → [RoundRobin]
//	UniformStickyClass   → [UniformSticky]
//	LegacyDefaultClass   → [LegacyDefault]
//
// Surrounding white space is ignored, as Kafka's ConfigDef trims class
// names. batchSize is batch.size; only the default uses it. The two classes
// Kafka 4.0 removed are accepted anyway, with their 3.x behaviour. Any other
// name fails with an [*UnknownPartitionerError] (matching
// [ErrUnknownPartitioner]): a custom partitioner is a Go value, set directly
// on the producer's configuration. A negative batchSize with an empty name
// fails with [ErrInvalidConfig].
//
// For a default partitioner with other settings (adaptive partitioning,
// partitioner.ignore.keys) use [NewDefault].
func ByClassName(name string, batchSize int) (Partitioner, error) {
	switch strings.TrimSpace(name) {
	case "":
		cfg := DefaultConfig()
		cfg.BatchSize = batchSize
		return NewDefault(cfg)
	case RoundRobinClass:
		return NewRoundRobin(), nil
	case UniformStickyClass:
		return NewUniformSticky(nil), nil
	case LegacyDefaultClass:
		return NewLegacyDefault(nil), nil
	}
	return nil, &UnknownPartitionerError{Name: name}
}

// ClassName is the inverse of [ByClassName], for printing a configuration
// back as Kafka properties: it returns the partitioner.class value of a
// built-in partitioner ("" for a [*Default]) and true, or "" and false for
// any other Partitioner (including nil).
func ClassName(p Partitioner) (name string, ok bool) {
	switch p.(type) {
	case *Default:
		return "", true
	case *RoundRobin:
		return RoundRobinClass, true
	case *UniformSticky:
		return UniformStickyClass, true
	case *LegacyDefault:
		return LegacyDefaultClass, true
	}
	return "", false
}
