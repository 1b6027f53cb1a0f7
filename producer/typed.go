package producer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/record"
)

// Serializer turns a typed key or value into bytes: Kafka's Serializer. A
// nil result is a null key or value.
type Serializer[T any] func(topic string, v T) ([]byte, error)

// StringSerializer encodes a string as its UTF-8 bytes.
func StringSerializer(_ string, v string) ([]byte, error) { return []byte(v), nil }

// BytesSerializer passes bytes through (nil stays null).
func BytesSerializer(_ string, v []byte) ([]byte, error) { return v, nil }

// JSONSerializer encodes a value as JSON.
func JSONSerializer[T any](_ string, v T) ([]byte, error) { return json.Marshal(v) }

// TypedRecord is a record with typed key and value.
type TypedRecord[K, V any] struct {
	Topic     string
	Partition *int32
	Key       K
	Value     V
	Headers   []record.Header
	Timestamp time.Time
}

// Typed is a producer of typed records: it serializes keys and values and
// sends them through a byte Producer, which it shares (several Typed
// producers may wrap one Producer; closing is the Producer's).
type Typed[K, V any] struct {
	p     *Producer
	key   Serializer[K]
	value Serializer[V]
}

// NewTyped wraps p with serializers for keys and values.
func NewTyped[K, V any](p *Producer, key Serializer[K], value Serializer[V]) *Typed[K, V] {
	return &Typed[K, V]{p: p, key: key, value: value}
}

// Send serializes the record and sends it; a serializer error is returned
// wrapped in ErrSerialization and the record is not sent.
func (t *Typed[K, V]) Send(ctx context.Context, r TypedRecord[K, V], cb Callback) (Future, error) {
	k, err := t.key(r.Topic, r.Key)
	if err != nil {
		return Future{err: err}, fmt.Errorf("%w: key: %w", ErrSerialization, err)
	}
	v, err := t.value(r.Topic, r.Value)
	if err != nil {
		return Future{err: err}, fmt.Errorf("%w: value: %w", ErrSerialization, err)
	}
	return t.p.Send(ctx, &Record{Topic: r.Topic, Partition: r.Partition, Key: k, Value: v, Headers: r.Headers, Timestamp: r.Timestamp}, cb)
}

// Producer returns the byte producer.
func (t *Typed[K, V]) Producer() *Producer { return t.p }
