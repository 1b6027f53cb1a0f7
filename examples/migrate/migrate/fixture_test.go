package migrate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/examples/migrate/migrate"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// codecs are the codecs every path is tested over.
var codecs = []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd}

// newCluster starts franz-go's kfake with three brokers for one test.
func newCluster(t *testing.T) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func newAdmin(t *testing.T, brokers []string) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// opts are a test migration's options; the state sits beside the
// directory.
func opts(dir string, brokers []string, d migrate.Direction) migrate.Options {
	return migrate.Options{Direction: d, Dir: dir, Brokers: brokers, StateDir: dir + ".migrate"}
}

// run migrates and verifies, failing the test on either's error.
func run(t *testing.T, o migrate.Options) *migrate.Summary {
	t.Helper()
	sum, err := migrate.Run(t.Context(), o)
	require.NoError(t, err)
	rep, err := migrate.Verify(t.Context(), o)
	require.NoError(t, err, "verify: %v", rep)
	require.Zero(t, rep.Different)
	return sum
}

// sourceSpec is what writeSource puts in a directory.
type sourceSpec struct {
	codec record.Compression
	// plainRecords per partition of "plain" (3 partitions).
	plainRecords int
}

// writeSource fills a kafkalite directory with the cases a migration must
// carry: keys, null keys, empty and null values, headers (a null header
// value too), old timestamps, a compacted topic with tombstones and the
// gaps its cleaning leaves, committed and aborted transactions, a
// LogAppendTime topic, and two groups' committed offsets.
func writeSource(t *testing.T, dir string, spec sourceSpec) {
	t.Helper()
	ctx := t.Context()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	_, err = d.CreateTopic(ctx, "plain", 3, map[string]string{"retention.ms": "-1"})
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "compacted", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "600",
		"min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "0"})
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "txn", 2, nil)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "appendtime", 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	require.NoError(t, err)

	cfg := producer.DefaultConfig()
	cfg.CompressionType = spec.codec
	cfg.Linger = time.Millisecond
	p, err := producer.New(d, cfg)
	require.NoError(t, err)
	base := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	var sendErr error
	send := func(r *producer.Record) {
		_, err := p.Send(ctx, r, func(_ producer.RecordMetadata, err error) {
			if err != nil && sendErr == nil {
				sendErr = err
			}
		})
		require.NoError(t, err)
	}
	for part := range int32(3) {
		for i := range spec.plainRecords {
			r := &producer.Record{Topic: "plain", Partition: &part, Key: fmt.Appendf(nil, "k%d-%d", part, i),
				Value: fmt.Appendf(nil, "value %d of partition %d", i, part), Timestamp: base.Add(time.Duration(i) * time.Second)}
			switch i % 5 {
			case 1:
				r.Key = nil
			case 2:
				r.Value = []byte{}
			case 3:
				r.Headers = []record.Header{{Key: []byte("h1"), Value: []byte("v1")}, {Key: []byte("null"), Value: nil}, {Key: []byte("empty"), Value: []byte{}}}
			case 4:
				r.Value = nil
			}
			send(r)
		}
	}
	zero := int32(0)
	for i := range 60 {
		r := &producer.Record{Topic: "compacted", Partition: &zero, Key: fmt.Appendf(nil, "key-%d", i%7),
			Value: fmt.Appendf(nil, "version %d", i), Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
		if i%11 == 10 {
			r.Value = nil // a tombstone
		}
		send(r)
		require.NoError(t, p.Flush(ctx)) // a batch each: small segments
	}
	for i := range 3 {
		send(&producer.Record{Topic: "appendtime", Partition: &zero, Key: []byte(strconv.Itoa(i)), Value: []byte("stamped by the log")})
	}
	require.NoError(t, p.Close(ctx))
	require.NoError(t, sendErr)
	compacted, err := d.Partition("compacted", 0)
	require.NoError(t, err)
	require.NoError(t, compacted.Roll(ctx))
	_, err = d.CleanNow(ctx)
	require.NoError(t, err)

	tcfg := cfg
	tcfg.TransactionalID = "migrate-test"
	tp, err := producer.New(d, tcfg)
	require.NoError(t, err)
	require.NoError(t, tp.InitTransactions(ctx))
	for txn, commit := range []bool{true, false, true} {
		require.NoError(t, tp.BeginTransaction())
		for part := range int32(2) {
			for i := range 4 {
				_, err := tp.Send(ctx, &producer.Record{Topic: "txn", Partition: &part, Key: fmt.Appendf(nil, "t%d", txn),
					Value: fmt.Appendf(nil, "txn %d record %d commit=%v", txn, i, commit)}, nil)
				require.NoError(t, err)
			}
		}
		if commit {
			require.NoError(t, tp.CommitTransaction(ctx))
		} else {
			require.NoError(t, tp.AbortTransaction(ctx))
		}
	}
	require.NoError(t, tp.Close(ctx))

	// g1 has read some of "plain"; g2 stands at an offset of "compacted"
	// that cleaning removed, and at "txn"'s end.
	_, err = consumer.ResetOffsets(ctx, d, "g1", []consumer.TopicPartition{{Topic: "plain", Partition: 0}, {Topic: "plain", Partition: 2}},
		consumer.ResetToOffset(int64(spec.plainRecords/2)))
	require.NoError(t, err)
	_, err = consumer.ResetOffsets(ctx, d, "g2", []consumer.TopicPartition{{Topic: "compacted", Partition: 0}}, consumer.ResetToOffset(3))
	require.NoError(t, err)
	_, err = consumer.ResetOffsets(ctx, d, "g2", []consumer.TopicPartition{{Topic: "txn", Partition: 1}}, consumer.ResetToLatest())
	require.NoError(t, err)
}

// writeTopic creates topic, with its partitions and props, in a new
// directory at dir and sends n records to each partition, value(i) the
// i-th's value (no key).
func writeTopic(t *testing.T, dir, topic string, partitions int32, props map[string]string, n int, value func(i int) []byte) {
	t.Helper()
	ctx := t.Context()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, topic, partitions, props)
	require.NoError(t, err)
	p, err := producer.New(d, producer.DefaultConfig())
	require.NoError(t, err)
	for part := range partitions {
		for i := range n {
			_, err := p.Send(ctx, &producer.Record{Topic: topic, Partition: &part, Value: value(i)}, nil)
			require.NoError(t, err)
		}
	}
	require.NoError(t, p.Close(ctx))
	require.NoError(t, d.Close())
}

// sourceRecords reads a directory's topic with kafkalite's consumer,
// read_committed: what a migration must carry, per partition.
func sourceRecords(t *testing.T, dir, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx := t.Context()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	desc, err := d.DescribeTopic(topic)
	require.NoError(t, err)
	cfg := consumer.DefaultConfig()
	cfg.IsolationLevel = consumer.ReadCommitted
	c, err := consumer.New(d, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(ctx)) }()
	var tps []consumer.TopicPartition
	for p := range desc.Partitions {
		tps = append(tps, consumer.TopicPartition{Topic: topic, Partition: p})
	}
	require.NoError(t, c.Assign(tps))
	require.NoError(t, c.SeekToBeginning(tps...))
	ends, err := c.EndOffsets(tps)
	require.NoError(t, err)
	out := map[int32][]*kgo.Record{}
	for {
		done := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			require.NoError(t, err)
			if pos < ends[tp] {
				done = false
			}
		}
		if done {
			return out
		}
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		recs, err := c.Poll(pctx)
		cancel()
		if err != nil && pctx.Err() == nil {
			require.NoError(t, err)
		}
		for _, r := range recs {
			r := r.Clone()
			kr := &kgo.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Offset: r.Offset}
			for _, h := range r.Headers {
				kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: string(h.Key), Value: h.Value})
			}
			out[r.Partition] = append(out[r.Partition], kr)
		}
	}
}

// clusterRecords reads a cluster's topic with franz-go's consumer,
// read_committed, from each partition's start to its end.
func clusterRecords(t *testing.T, brokers []string, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx := t.Context()
	_, adm := newAdmin(t, brokers)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	require.NoError(t, err)
	starts, err := adm.ListStartOffsets(ctx, topic)
	require.NoError(t, err)
	parts := map[int32]kgo.Offset{}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(topic, o.Partition)
		if o.Offset > s.Offset {
			parts[o.Partition] = kgo.NewOffset().AtStart()
			left[o.Partition] = o.Offset
		}
	})
	out := map[int32][]*kgo.Record{}
	if len(parts) == 0 {
		return out
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}), kgo.KeepControlRecords())
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "reading %s: still waiting for %v", topic, left)
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
			if r.Attrs.IsControl() {
				return
			}
			out[r.Partition] = append(out[r.Partition], r)
		})
	}
	return out
}

// requireSameRecords compares two sides' records, partition by partition:
// key, value (null and empty told apart), headers and timestamp, and the
// offsets too when offsets says so.
func requireSameRecords(t *testing.T, want, got map[int32][]*kgo.Record, offsets bool, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: partitions with records", what)
	for p, ws := range want {
		gs := got[p]
		require.Len(t, gs, len(ws), "%s: partition %d", what, p)
		for i := range ws {
			w, g := ws[i], gs[i]
			at := fmt.Sprintf("%s: partition %d record %d (source offset %d)", what, p, i, w.Offset)
			require.Equal(t, w.Key == nil, g.Key == nil, "%s: null key", at)
			require.Equal(t, w.Value == nil, g.Value == nil, "%s: null value", at)
			require.Equal(t, string(w.Key), string(g.Key), at)
			require.Equal(t, string(w.Value), string(g.Value), at)
			require.Equal(t, w.Timestamp.UnixMilli(), g.Timestamp.UnixMilli(), at)
			require.Len(t, g.Headers, len(w.Headers), at)
			for j := range w.Headers {
				require.Equal(t, w.Headers[j].Key, g.Headers[j].Key, at)
				require.Equal(t, w.Headers[j].Value == nil, g.Headers[j].Value == nil, "%s: header %d null", at, j)
				require.Equal(t, string(w.Headers[j].Value), string(g.Headers[j].Value), at)
			}
			if offsets {
				require.Equal(t, w.Offset, g.Offset, "%s: offset", at)
			}
		}
	}
}

func tempDir(t *testing.T) string { return filepath.Join(t.TempDir(), "kafkalite") }
