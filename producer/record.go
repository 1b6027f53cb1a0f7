package producer

import (
	"context"
	"time"

	"github.com/kafkalite/kafkalite/record"
)

// Record is a record to send: Kafka's ProducerRecord.
type Record struct {
	// Topic is required.
	Topic string
	// Partition, if set, sends the record to that partition, bypassing the
	// partitioner (Kafka's nullable partition field).
	Partition *int32
	// Key and Value are nil for null and non-nil (possibly empty)
	// otherwise. A null key lets the partitioner spread records; a null
	// value is a tombstone on compacted topics.
	Key, Value []byte
	Headers    []record.Header
	// Timestamp is the record's CreateTime; the zero time means now, as
	// Kafka stamps System.currentTimeMillis() in send().
	Timestamp time.Time
}

// RecordMetadata describes an appended record: Kafka's RecordMetadata.
type RecordMetadata struct {
	Topic     string
	Partition int32
	// Offset is the record's offset, or -1 with acks=0 (the producer does
	// not wait for the append).
	Offset int64
	// Timestamp is the record's timestamp, or the time the log appended it
	// on LogAppendTime topics.
	Timestamp time.Time
	// SerializedKeySize and SerializedValueSize are -1 for null.
	SerializedKeySize, SerializedValueSize int
}

// Callback receives the outcome of a Send. Callbacks run serially on the
// producer's sender goroutine, in offset order per partition; they must not
// block (a slow callback delays every later one). A callback that panics is
// recovered, logged and counted; the sender carries on.
type Callback func(RecordMetadata, error)

// Interceptor sees every record before it is partitioned (OnSend may
// return a replacement, or the record itself) and every outcome before the
// callback (OnAcknowledgement): Kafka's ProducerInterceptor. Interceptors run
// in the order configured; OnAcknowledgement runs on the sender goroutine and
// must not block. Panics are recovered and logged.
type Interceptor interface {
	OnSend(r *Record) *Record
	OnAcknowledgement(md RecordMetadata, err error)
}

// Future is the handle Send returns: it completes when the record's batch
// is appended (or fails). It is a small value; waiting on it allocates
// nothing.
type Future struct {
	b   *producerBatch
	i   int
	err error // set when Send failed before buffering the record
}

// Done returns a channel closed when the outcome is known.
func (f Future) Done() <-chan struct{} {
	if f.b == nil {
		return closedChan
	}
	return f.b.done
}

// Wait waits for the outcome, or for ctx to end (its error is returned;
// the record stays buffered and its callback still runs).
func (f Future) Wait(ctx context.Context) (RecordMetadata, error) {
	if f.b == nil {
		return RecordMetadata{}, f.err
	}
	select {
	case <-f.b.done:
		return f.b.metadata(f.i)
	case <-ctx.Done():
		return RecordMetadata{}, ctx.Err()
	}
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
