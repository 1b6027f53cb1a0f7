package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/examples/migrate/migrate"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

var kgoCodecs = map[record.Compression]kgo.CompressionCodec{
	record.None: kgo.NoCompression(), record.Gzip: kgo.GzipCompression(), record.Snappy: kgo.SnappyCompression(),
	record.LZ4: kgo.Lz4Compression(), record.Zstd: kgo.ZstdCompression(),
}

var base = time.Date(2021, 6, 7, 8, 9, 10, 0, time.UTC)

// writeCluster fills a cluster with the cases a copy from it must carry:
// "events" (3 partitions: keys, null keys, empty and null values, headers,
// old timestamps), "stamped" (LogAppendTime) and "txn" (2 partitions, a
// committed, an aborted and a committed transaction), produced with codec.
func writeCluster(t *testing.T, brokers []string, codec record.Compression, n int) {
	t.Helper()
	ctx := t.Context()
	_, adm := newAdmin(t, brokers)
	_, err := adm.CreateTopic(ctx, 3, -1, nil, "events")
	require.NoError(t, err)
	lat := "LogAppendTime"
	_, err = adm.CreateTopic(ctx, 1, -1, map[string]*string{"message.timestamp.type": &lat}, "stamped")
	require.NoError(t, err)
	_, err = adm.CreateTopic(ctx, 2, -1, nil, "txn")
	require.NoError(t, err)
	produceEvents(t, brokers, codec, 0, n)
	plain, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerBatchCompression(kgoCodecs[codec]))
	require.NoError(t, err)
	defer plain.Close()
	for i := range 3 {
		require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Topic: "stamped", Value: fmt.Appendf(nil, "stamped %d", i)}).FirstErr())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgoCodecs[codec]), kgo.TransactionalID("migrate-test"))
	require.NoError(t, err)
	defer cl.Close()
	for txn, commit := range []bool{true, false, true} {
		require.NoError(t, cl.BeginTransaction())
		for p := range int32(2) {
			for i := range 4 {
				cl.Produce(ctx, &kgo.Record{Topic: "txn", Partition: p, Key: fmt.Appendf(nil, "t%d", txn),
					Value: fmt.Appendf(nil, "txn %d record %d commit=%v", txn, i, commit)}, nil)
			}
		}
		require.NoError(t, cl.Flush(ctx))
		require.NoError(t, cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)))
	}
}

// produceEvents produces records from..to-1 to each partition of "events".
func produceEvents(t *testing.T, brokers []string, codec record.Compression, from, to int) {
	t.Helper()
	ctx := t.Context()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgoCodecs[codec]))
	require.NoError(t, err)
	defer cl.Close()
	for p := range int32(3) {
		for i := from; i < to; i++ {
			r := &kgo.Record{Topic: "events", Partition: p, Key: fmt.Appendf(nil, "k%d-%d", p, i),
				Value: fmt.Appendf(nil, "event %d of partition %d", i, p), Timestamp: base.Add(time.Duration(i) * time.Minute)}
			switch i % 5 {
			case 1:
				r.Key = nil
			case 2:
				r.Value = []byte{}
			case 3:
				r.Headers = []kgo.RecordHeader{{Key: "h1", Value: []byte("v1")}, {Key: "null"}, {Key: "empty", Value: []byte{}}}
			case 4:
				r.Value = nil
			}
			cl.Produce(ctx, r, nil)
		}
	}
	require.NoError(t, cl.Flush(ctx))
}

// TestFromCluster copies a cluster's topics into a new directory over
// every codec: records keep their offsets (the markers' and the aborted
// records' offsets stay gaps), timestamps and timestamp types; aborted
// records are not copied; batches keep their codec.
func TestFromCluster(t *testing.T) {
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			brokers := newCluster(t)
			writeCluster(t, brokers, codec, 20)
			dir := tempDir(t)
			o := opts(dir, brokers, migrate.FromCluster)
			o.Topics = []string{"events", "stamped", "txn"}
			sum := run(t, o)
			for _, topic := range o.Topics {
				requireSameRecords(t, clusterRecords(t, brokers, topic), sourceRecords(t, dir, topic), true, topic)
			}
			for _, p := range sum.Partitions {
				require.True(t, p.Identical, "%s-%d", p.Topic, p.Partition)
			}
			require.Len(t, sourceRecords(t, dir, "txn")[1], 8, "two committed transactions of four records")
			requireCodec(t, brokers, dir, "events", codec)
			// kfake answers LogAppendTime produces with the append time but
			// serves the batches as produced (CreateTime); the timestamp type
			// is checked against Kafka's broker in internal/testkit/kafkacheck.
		})
	}
}

// requireCodec checks that the records of topic's partition 0 sit in
// batches of the codec their batches had on the cluster (kgo sends a
// batch uncompressed when compressing does not make it smaller), and that
// some use codec.
func requireCodec(t *testing.T, brokers []string, dir, topic string, codec record.Compression) {
	t.Helper()
	ctx := t.Context()
	want := map[int64]record.Compression{}
	for _, r := range clusterRecords(t, brokers, topic)[0] {
		want[r.Offset] = record.Compression(r.Attrs.CompressionType())
	}
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	l, err := d.Partition(topic, 0)
	require.NoError(t, err)
	n, used := 0, false
	_, err = l.ReadRecords(l.LogStartOffset(), 1<<20, func(r *record.Record, h *record.BatchHeader) error {
		require.Equal(t, want[r.Offset], h.Attributes.Compression(), "offset %d", r.Offset)
		used = used || h.Attributes.Compression() == codec
		n++
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(want), n)
	require.True(t, used, "no batch uses %s", codec)
}

// TestFromClusterSince copies only the part of a topic since a time: the
// local partitions start at the first offset at or after it, and keep the
// cluster's offsets.
func TestFromClusterSince(t *testing.T) {
	brokers := newCluster(t)
	writeCluster(t, brokers, record.LZ4, 20)
	dir := tempDir(t)
	o := opts(dir, brokers, migrate.FromCluster)
	o.Topics = []string{"events"}
	o.Since = base.Add(15 * time.Minute) // records 15..19
	run(t, o)
	local := sourceRecords(t, dir, "events")
	for p := range int32(3) {
		require.Len(t, local[p], 5)
		require.Equal(t, int64(15), local[p][0].Offset)
	}
	all := clusterRecords(t, brokers, "events")
	for p := range all {
		all[p] = all[p][15:]
	}
	requireSameRecords(t, all, local, true, "events")
}

// TestFromClusterIntoNonEmpty copies into local partitions that already
// hold later offsets than the cluster's: the records follow the local
// ones, through an offset map.
func TestFromClusterIntoNonEmpty(t *testing.T) {
	brokers := newCluster(t)
	writeCluster(t, brokers, record.Snappy, 10)
	dir := tempDir(t)
	writeTopic(t, dir, "events", 3, nil, 25, func(i int) []byte { return fmt.Appendf(nil, "local %d", i) })

	o := opts(dir, brokers, migrate.FromCluster)
	o.Topics = []string{"events"}
	sum := run(t, o)
	local := sourceRecords(t, dir, "events")
	for part := range int32(3) {
		local[part] = local[part][25:]
	}
	requireSameRecords(t, clusterRecords(t, brokers, "events"), local, false, "events")
	for _, ps := range sum.Partitions {
		require.False(t, ps.Identical)
		require.Equal(t, int64(25), ps.TgtStart)
	}
}

// TestFromClusterResumes runs a copy, then another after the cluster got
// more records (it copies only those), then restores the state of before
// the second run, as a crash between appending and saving would leave
// it: the third run finds the records in the directory and copies nothing
// twice. Both with offsets kept and through an offset map.
func TestFromClusterResumes(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("mapped=%v", mapped), func(t *testing.T) {
			brokers := newCluster(t)
			writeCluster(t, brokers, record.Zstd, 10)
			dir := tempDir(t)
			if mapped {
				writeTopic(t, dir, "events", 3, nil, 40, func(int) []byte { return []byte("local") })
			}
			o := opts(dir, brokers, migrate.FromCluster)
			o.Topics = []string{"events"}
			run(t, o)
			saved := filepath.Join(t.TempDir(), "state")
			copyDir(t, o.StateDir, saved)
			produceEvents(t, brokers, record.Zstd, 10, 30)
			sum := run(t, o)
			require.Equal(t, int64(60), sum.Records, "only the new records")
			require.NoError(t, os.RemoveAll(o.StateDir))
			copyDir(t, saved, o.StateDir)
			sum = run(t, o)
			require.Zero(t, sum.Records, "everything was found in the directory")
			local := sourceRecords(t, dir, "events")
			if mapped {
				for part := range int32(3) {
					local[part] = local[part][40:]
				}
			}
			requireSameRecords(t, clusterRecords(t, brokers, "events"), local, !mapped, "events")
		})
	}
}
