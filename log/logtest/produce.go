package logtest

import (
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// KV returns a record with a key and a value, and headers given as name,
// value pairs ("type", "OrderPlaced", ...; a last name without a value is a
// header with a null value). Its Topic is left empty: Produce and
// AssertProduced take the topic separately.
func KV(key, value string, headers ...string) *producer.Record {
	r := Value(value, headers...)
	r.Key = []byte(key)
	return r
}

// Value returns a record without a key (null), with a value and headers
// given as name, value pairs. The default partitioner spreads such records
// with its sticky partitioner.
func Value(value string, headers ...string) *producer.Record {
	r := &producer.Record{Value: []byte(value)}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Headers = append(r.Headers, record.Header{Key: []byte(headers[i]), Value: []byte(headers[i+1])})
	}
	if len(headers)%2 == 1 {
		r.Headers = append(r.Headers, record.Header{Key: []byte(headers[len(headers)-1])})
	}
	return r
}

// InPartition returns a copy of r sent to (or, for AssertProduced,
// expected in) partition p, bypassing the partitioner.
func InPartition(r *producer.Record, p int32) *producer.Record {
	c := *r
	c.Partition = &p
	return &c
}

// Produce sends the records to topic through the shared producer, creating
// the topic if needed, waits until every one is appended (with acks=all,
// fsynced), and returns their metadata in the order given. The records'
// Topic fields are ignored; the records are not modified. It fails the test
// if a record fails.
func (b *Broker) Produce(topic string, records ...*producer.Record) []producer.RecordMetadata {
	b.t.Helper()
	require.NoError(b.t, b.ensureTopic(topic), "logtest: creating topic %q", topic)
	p, err := b.producer()
	require.NoError(b.t, err, "logtest: creating the producer")
	ctx, cancel := b.context()
	defer cancel()
	futures := make([]producer.Future, len(records))
	for i, r := range records {
		c := *r
		c.Topic = topic
		futures[i], err = p.Send(ctx, &c, nil)
		require.NoError(b.t, err, "logtest: sending record %d to %q", i, topic)
	}
	require.NoError(b.t, p.Flush(ctx), "logtest: flushing the producer")
	mds := make([]producer.RecordMetadata, len(records))
	for i, f := range futures {
		mds[i], err = f.Wait(ctx)
		require.NoError(b.t, err, "logtest: record %d to %q", i, topic)
	}
	return mds
}
