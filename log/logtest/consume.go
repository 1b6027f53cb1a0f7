package logtest

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/partitioner"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// ConsumeAll reads topic from the beginning to its end with a consumer at
// isolation level read_committed (records of aborted and open transactions
// are left out, as a read_committed consumer sees the topic) and returns the
// records ordered by partition, then offset. It creates the topic if needed
// and fails the test on an error.
func (b *Broker) ConsumeAll(topic string) []consumer.Record {
	b.t.Helper()
	recs, err := b.consumeAll(topic, consumer.ReadCommitted)
	require.NoError(b.t, err, "logtest: consuming %q", topic)
	return recs
}

// ConsumeAllUncommitted is ConsumeAll at isolation level read_uncommitted:
// every data record, including those of aborted and open transactions.
func (b *Broker) ConsumeAllUncommitted(topic string) []consumer.Record {
	b.t.Helper()
	recs, err := b.consumeAll(topic, consumer.ReadUncommitted)
	require.NoError(b.t, err, "logtest: consuming %q", topic)
	return recs
}

func (b *Broker) consumeAll(topic string, level consumer.IsolationLevel) (_ []consumer.Record, err error) {
	n, err := b.partitionCount(topic)
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.context()
	defer cancel()
	cfg := consumer.DefaultConfig()
	cfg.IsolationLevel = level
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	cfg.MaxPollRecords = 1 << 16
	c, err := consumer.New(b.Dir(), cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := c.Close(ctx); err == nil {
			err = cerr
		}
	}()
	tps := make([]consumer.TopicPartition, n)
	for p := range n {
		tps[p] = consumer.TopicPartition{Topic: topic, Partition: p}
	}
	if err := c.Assign(tps); err != nil {
		return nil, err
	}
	ends, err := c.EndOffsets(tps)
	if err != nil {
		return nil, err
	}
	var out []consumer.Record
	for {
		caughtUp := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			if err != nil {
				return nil, err
			}
			if pos < ends[tp] {
				caughtUp = false
			}
		}
		if caughtUp {
			break
		}
		recs, err := c.Poll(ctx)
		if err != nil {
			return nil, err
		}
		for i := range recs {
			if recs[i].Offset < ends[consumer.TopicPartition{Topic: topic, Partition: recs[i].Partition}] {
				out = append(out, recs[i].Clone())
			}
		}
	}
	slices.SortStableFunc(out, func(x, y consumer.Record) int {
		if x.Partition != y.Partition {
			return int(x.Partition - y.Partition)
		}
		return int(x.Offset - y.Offset)
	})
	return out, nil
}

// WaitFor waits until topic holds at least n records (read_committed), for
// code that produces in the background, and returns them as ConsumeAll does.
// It wakes at each append instead of polling, and fails the test after the
// Timeout option's duration.
func (b *Broker) WaitFor(t T, topic string, n int) []consumer.Record {
	t.Helper()
	deadline := time.NewTimer(b.opts.timeout)
	defer deadline.Stop()
	for {
		changed := b.Dir().Changed() // before reading, so that no append is missed
		recs, err := b.consumeAll(topic, consumer.ReadCommitted)
		require.NoError(t, err, "logtest: consuming %q", topic)
		if len(recs) >= n {
			return recs
		}
		select {
		case <-changed:
		case <-deadline.C:
			require.FailNow(t, "logtest: WaitFor timed out",
				"%q holds %d records after %v, want at least %d", topic, len(recs), b.opts.timeout, n)
		}
	}
}

// Expect reads topic as ConsumeAll does and returns an Expectation over its
// records, whose methods fail t when a check does not hold.
func (b *Broker) Expect(t T, topic string) *Expectation {
	t.Helper()
	recs, err := b.consumeAll(topic, consumer.ReadCommitted)
	require.NoError(t, err, "logtest: consuming %q", topic)
	return &Expectation{t: t, what: topic, recs: recs}
}

// Expectation holds records read from a topic, ordered by partition then
// offset, for checks that fail the test. Each method returns the receiver,
// or a narrowed Expectation, so checks chain:
//
//	b.Expect(t, "orders").Len(3).Partition(1).Keys("a", "a")
type Expectation struct {
	t    T
	what string // the topic, and how it was narrowed, for messages
	recs []consumer.Record
}

// Records returns the records.
func (e *Expectation) Records() []consumer.Record { return e.recs }

// Len checks the number of records.
func (e *Expectation) Len(n int) *Expectation {
	e.t.Helper()
	require.Len(e.t, e.recs, n, "records of %s", e.what)
	return e
}

// Keys checks the records' keys, in order ("" stands for an empty key; a
// null key shows as "<null>").
func (e *Expectation) Keys(keys ...string) *Expectation {
	e.t.Helper()
	return e.fields("keys", keys, func(r consumer.Record) []byte { return r.Key })
}

// Values checks the records' values, in order.
func (e *Expectation) Values(values ...string) *Expectation {
	e.t.Helper()
	return e.fields("values", values, func(r consumer.Record) []byte { return r.Value })
}

// fields checks one field of the records, named name, in order.
func (e *Expectation) fields(name string, want []string, field func(consumer.Record) []byte) *Expectation {
	e.t.Helper()
	got := make([]string, len(e.recs))
	for i, r := range e.recs {
		got[i] = showBytes(field(r))
	}
	require.Equal(e.t, want, got, "%s of %s", name, e.what)
	return e
}

// Header checks that every record carries the header name with value.
func (e *Expectation) Header(name, value string) *Expectation {
	e.t.Helper()
	for _, r := range e.recs {
		found := false
		for _, h := range r.Headers {
			if string(h.Key) == name && h.Value != nil && string(h.Value) == value {
				found = true
				break
			}
		}
		require.True(e.t, found, "%s: record %d@%d has no header %s=%s (headers %v)",
			e.what, r.Partition, r.Offset, name, value, showHeaders(r))
	}
	return e
}

// Partition narrows to the records of partition p.
func (e *Expectation) Partition(p int32) *Expectation {
	var recs []consumer.Record
	for _, r := range e.recs {
		if r.Partition == p {
			recs = append(recs, r)
		}
	}
	return &Expectation{t: e.t, what: fmt.Sprintf("%s partition %d", e.what, p), recs: recs}
}

// Key narrows to the records with key, and checks that they are all in one
// partition, as a key's records must be under key partitioning.
func (e *Expectation) Key(key string) *Expectation {
	e.t.Helper()
	var recs []consumer.Record
	for _, r := range e.recs {
		if r.Key != nil && string(r.Key) == key {
			recs = append(recs, r)
		}
	}
	for _, r := range recs {
		require.Equal(e.t, recs[0].Partition, r.Partition, "%s: key %q in two partitions", e.what, key)
	}
	return &Expectation{t: e.t, what: fmt.Sprintf("%s key %q", e.what, key), recs: recs}
}

// AssertProduced checks that topic holds exactly the records want
// (read_committed), given in the order they were sent:
//
//   - a record with an explicit partition (InPartition) is in that partition;
//     a keyed record is in the partition the configured partitioner chooses
//     for its key: murmur2, as Kafka's Java producer, unless the
//     ProducerConfig option set another partitioner, which is then asked
//     again and must be deterministic; a record without a key (or under
//     partitioner.ignore.keys) may be in any partition;
//   - each partition holds its expected records in the expected order,
//     with their keys, values and headers (timestamps are not compared);
//   - nothing else is in the topic.
//
// A record that may be in any partition is matched with the first partition
// whose next unmatched record equals it. On failure the expected and actual
// records are printed per partition.
func (b *Broker) AssertProduced(t T, topic string, want ...*producer.Record) {
	t.Helper()
	n, err := b.partitionCount(topic)
	require.NoError(t, err, "logtest: topic %q", topic)
	recs, err := b.consumeAll(topic, consumer.ReadCommitted)
	require.NoError(t, err, "logtest: consuming %q", topic)

	actual := map[int32][]string{}
	for _, r := range recs {
		actual[r.Partition] = append(actual[r.Partition], showRecord(r.Key, r.Value, r.Headers))
	}
	expected := map[int32][]string{}
	next := map[int32]int{} // per partition, the next actual record to match
	for _, w := range want {
		s := showRecord(w.Key, w.Value, w.Headers)
		p := b.expectedPartition(topic, w, n)
		if p == partitioner.UnknownPartition {
			for q := range n {
				if i := next[q]; i < len(actual[q]) && actual[q][i] == s {
					p = q
					break
				}
			}
		}
		// A record found nowhere is expected in partition -1, so that the
		// diff names it.
		expected[p] = append(expected[p], s)
		next[p]++
	}
	require.Equal(t, expected, actual, "%s: expected (-) and produced (+) records per partition", topic)
}

// expectedPartition returns the partition w must be in, or UnknownPartition
// if it may be in any.
func (b *Broker) expectedPartition(topic string, w *producer.Record, n int32) int32 {
	if w.Partition != nil {
		return *w.Partition
	}
	switch part := b.pcfg.Partitioner.(type) {
	case nil:
		if w.Key == nil || b.pcfg.PartitionerIgnoreKeys {
			return partitioner.UnknownPartition
		}
		return partitioner.PartitionForKey(w.Key, n)
	case *partitioner.Default:
		if w.Key == nil {
			return partitioner.UnknownPartition
		}
		return part.KeyPartition(w.Key, n)
	default:
		return part.Partition(topic, w.Key, w.Value, n)
	}
}

// showRecord prints a record for comparison and diffs: key, value and
// headers, with null shown as <null>.
func showRecord(key, value []byte, headers []record.Header) string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "key=%s value=%s", quote(key), quote(value))
	for _, h := range headers {
		fmt.Fprintf(&buf, " %q=%s", h.Key, quote(h.Value))
	}
	return buf.String()
}

// quote prints bytes as a Go string, or <null>.
func quote(b []byte) string {
	if b == nil {
		return "<null>"
	}
	return fmt.Sprintf("%q", b)
}

func showHeaders(r consumer.Record) []string {
	var out []string
	for _, h := range r.Headers {
		out = append(out, string(h.Key)+"="+showBytes(h.Value))
	}
	return out
}

func showBytes(b []byte) string {
	if b == nil {
		return "<null>"
	}
	return string(b)
}

// BatchCodecs counts the data batches of every partition of topic in d by
// their compression codec, for tests that check a producer's or topic's
// compression.type reached the log (control batches, uncompressed by
// Kafka's rules, are not counted). It fails t on a read error.
func BatchCodecs(t T, d *log.Dir, topic string) map[record.Compression]int {
	t.Helper()
	desc, err := d.DescribeTopic(topic)
	require.NoError(t, err, "logtest: topic %q", topic)
	out := map[record.Compression]int{}
	for p := range desc.Partitions {
		l, err := d.Partition(topic, p)
		require.NoError(t, err)
		batch := int64(-1)
		var rr log.RecordReader
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			off, err = rr.ReadRecords(l, off, 1<<20, func(_ *record.Record, h *record.BatchHeader) error {
				if h.BaseOffset != batch {
					batch = h.BaseOffset
					out[h.Attributes.Compression()]++
				}
				return nil
			})
			require.NoError(t, err, "logtest: reading %s-%d", topic, p)
		}
	}
	return out
}
