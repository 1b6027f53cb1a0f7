package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/record"
)

// Deserializer turns key or value bytes into a typed value: Kafka's
// Deserializer. b is nil for a null key or value.
type Deserializer[T any] func(topic string, b []byte) (T, error)

// StringDeserializer decodes UTF-8 bytes (null gives "").
func StringDeserializer(_ string, b []byte) (string, error) { return string(b), nil }

// BytesDeserializer copies the bytes out of the consumer's buffers (nil
// stays nil).
func BytesDeserializer(_ string, b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	return append([]byte(nil), b...), nil
}

// JSONDeserializer decodes JSON (null gives the zero value).
func JSONDeserializer[T any](_ string, b []byte) (T, error) {
	var v T
	if b == nil {
		return v, nil
	}
	err := json.Unmarshal(b, &v)
	return v, err
}

// TypedRecord is a consumed record with typed key and value. Headers are
// copies, valid after the next Poll.
type TypedRecord[K, V any] struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
	Key       K
	Value     V
	Headers   []record.Header
}

// Typed wraps a Consumer with deserializers; the Consumer stays usable for
// everything else (Subscribe, Commit, Seek, Close).
type Typed[K, V any] struct {
	*Consumer
	key   Deserializer[K]
	value Deserializer[V]
}

// NewTyped wraps c.
func NewTyped[K, V any](c *Consumer, key Deserializer[K], value Deserializer[V]) *Typed[K, V] {
	return &Typed[K, V]{Consumer: c, key: key, value: value}
}

// PollTyped polls and deserializes. A record that fails to deserialize
// stops the batch: the records before it are returned with the error, and
// the consumer's position is left after them, as Kafka's
// RecordDeserializationException leaves it (seek past the record to skip
// it).
func (t *Typed[K, V]) PollTyped(ctx context.Context) ([]TypedRecord[K, V], error) {
	recs, err := t.Poll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]TypedRecord[K, V], 0, len(recs))
	for i := range recs {
		r := &recs[i]
		k, err := t.key(r.Topic, r.Key)
		if err == nil {
			var v V
			if v, err = t.value(r.Topic, r.Value); err == nil {
				cl := r.Clone()
				out = append(out, TypedRecord[K, V]{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
					Key: k, Value: v, Headers: cl.Headers})
				continue
			}
		}
		_ = t.Seek(TopicPartition{Topic: r.Topic, Partition: r.Partition}, r.Offset)
		for j := i + 1; j < len(recs); j++ {
			// Later partitions' records were not delivered either.
			if recs[j].Partition != r.Partition || recs[j].Topic != r.Topic {
				_ = t.seekBackTo(recs[j])
			}
		}
		return out, fmt.Errorf("consumer: deserializing %s-%d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	return out, nil
}

// seekBackTo moves a partition back to a record not delivered, unless an
// earlier undelivered record of it already moved it further back.
func (t *Typed[K, V]) seekBackTo(r Record) error {
	ps, ok := t.byTP[TopicPartition{Topic: r.Topic, Partition: r.Partition}]
	if !ok || ps.position <= r.Offset {
		return nil
	}
	return t.Seek(TopicPartition{Topic: r.Topic, Partition: r.Partition}, r.Offset)
}
