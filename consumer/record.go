package consumer

import (
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// TopicPartition names a partition: [log.TopicPartition] under the
// consumer's name.
type TopicPartition = log.TopicPartition

// Record is a consumed record: Kafka's ConsumerRecord. The byte slices
// reference the consumer's fetch buffers and are valid until the next Poll;
// use Clone to keep a record longer.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's CreateTime, or the LogAppendTime of its
	// batch on topics that use it (TimestampType says which).
	Timestamp     time.Time
	TimestampType record.TimestampType
	Key, Value    []byte // nil for null
	Headers       []record.Header
	// LeaderEpoch is the partition leader epoch of the record's batch.
	LeaderEpoch int32
}

// Clone returns a copy that shares no memory with the consumer.
func (r *Record) Clone() Record {
	c := *r
	inner := record.Record{Key: r.Key, Value: r.Value, Headers: r.Headers}
	cl := inner.Clone()
	c.Key, c.Value, c.Headers = cl.Key, cl.Value, cl.Headers
	return c
}

// OffsetAndMetadata is a committed offset: [log.OffsetAndMetadata] under
// the consumer's name.
type OffsetAndMetadata = log.OffsetAndMetadata
