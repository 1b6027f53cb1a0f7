package migrate_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/examples/migrate/migrate"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestToCluster copies a directory holding every case (see writeSource)
// into a three-broker cluster, over every codec at the source and at the
// producer, and checks the cluster's records with franz-go's consumer
// against the directory's read with kafkalite's: offsets identical where
// the source is dense, mapped where compaction and transaction markers
// left gaps, aborted records absent, groups translated, configs carried.
func TestToCluster(t *testing.T) {
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			ctx := t.Context()
			brokers := newCluster(t)
			dir := tempDir(t)
			writeSource(t, dir, sourceSpec{codec: codec, plainRecords: 20})
			o := opts(dir, brokers, migrate.ToCluster)
			o.Compression = codec.String()
			sum := run(t, o)

			identical := map[string]bool{"plain": true, "appendtime": true, "compacted": false, "txn": false}
			for topic, same := range identical {
				src, dst := sourceRecords(t, dir, topic), clusterRecords(t, brokers, topic)
				requireSameRecords(t, src, dst, same, topic)
			}
			for _, p := range sum.Partitions {
				require.Equal(t, identical[p.Topic], p.Identical, "%s-%d", p.Topic, p.Partition)
			}
			txn := sourceRecords(t, dir, "txn")
			require.Len(t, txn[0], 8, "two committed transactions of four records")

			_, adm := newAdmin(t, brokers)
			g1, err := adm.FetchOffsets(ctx, "g1")
			require.NoError(t, err)
			at, _ := g1.Lookup("plain", 2)
			require.Equal(t, int64(10), at.At, "dense: the same offset")

			// g2's offset 3 of "compacted" was cleaned away: it lands on the
			// target record that the first source record at or after 3 became.
			g2, err := adm.FetchOffsets(ctx, "g2")
			require.NoError(t, err)
			srcC, dstC := sourceRecords(t, dir, "compacted")[0], clusterRecords(t, brokers, "compacted")[0]
			i := 0
			for srcC[i].Offset < 3 {
				i++
			}
			at, _ = g2.Lookup("compacted", 0)
			require.Equal(t, dstC[i].Offset, at.At)
			ends, err := adm.ListEndOffsets(ctx, "txn")
			require.NoError(t, err)
			end, _ := ends.Lookup("txn", 1)
			at, _ = g2.Lookup("txn", 1)
			require.Equal(t, end.Offset, at.At, "the source's end is the target's end")

			configs, err := adm.DescribeTopicConfigs(ctx, "compacted", "appendtime")
			require.NoError(t, err)
			requireConfig(t, configs, "compacted", "cleanup.policy", "compact")
			requireConfig(t, configs, "appendtime", "message.timestamp.type", "LogAppendTime")
			require.Contains(t, fmt.Sprint(sum.Notes), "segment.bytes=600 is below Kafka's minimum")
		})
	}
}

func requireConfig(t *testing.T, rcs kadm.ResourceConfigs, topic, key, want string) {
	t.Helper()
	rc, err := rcs.On(topic, nil)
	require.NoError(t, err)
	for _, c := range rc.Configs {
		if c.Key == key {
			require.NotNil(t, c.Value)
			require.Equal(t, want, *c.Value, "%s %s", topic, key)
			return
		}
	}
	t.Fatalf("%s has no %s", topic, key)
}

// TestToClusterTargetHoldsData copies into partitions that already hold
// records: the copied records follow them, through an offset map, and the
// groups' offsets are translated by it.
func TestToClusterTargetHoldsData(t *testing.T) {
	ctx := t.Context()
	brokers := newCluster(t)
	dir := tempDir(t)
	writeSource(t, dir, sourceSpec{codec: 0, plainRecords: 20})
	_, adm := newAdmin(t, brokers)
	_, err := adm.CreateTopic(ctx, 3, -1, nil, "plain")
	require.NoError(t, err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for i := range 5 {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Partition: 0, Value: fmt.Appendf(nil, "already there %d", i)}).FirstErr())
	}
	before := clusterRecords(t, brokers, "plain")[0]
	require.Len(t, before, 5)

	sum := run(t, opts(dir, brokers, migrate.ToCluster))
	src, dst := sourceRecords(t, dir, "plain"), clusterRecords(t, brokers, "plain")
	require.Equal(t, before, dst[0][:len(before)], "the records already there stay")
	dst[0] = dst[0][len(before):]
	requireSameRecords(t, src, dst, false, "plain")
	for _, p := range sum.Partitions {
		if p.Topic == "plain" && p.Partition == 0 {
			require.False(t, p.Identical)
			require.Equal(t, int64(len(before)), p.TgtStart)
		}
	}
	g1, err := adm.FetchOffsets(ctx, "g1")
	require.NoError(t, err)
	at, _ := g1.Lookup("plain", 0)
	require.Equal(t, int64(len(before)+10), at.At)
}

// TestToClusterRefusals checks what is refused before anything is
// written: an open transaction at the source, a topic whose partition
// count differs on the target.
func TestToClusterRefusals(t *testing.T) {
	t.Run("open transaction", func(t *testing.T) {
		ctx := t.Context()
		brokers := newCluster(t)
		dir := tempDir(t)
		d, err := log.Open(ctx, dir, log.DefaultConfig())
		require.NoError(t, err)
		_, err = d.CreateTopic(ctx, "orders", 1, nil)
		require.NoError(t, err)
		cfg := producer.DefaultConfig()
		cfg.TransactionalID = "open"
		p, err := producer.New(d, cfg)
		require.NoError(t, err)
		require.NoError(t, p.InitTransactions(ctx))
		require.NoError(t, p.BeginTransaction())
		_, err = p.Send(ctx, &producer.Record{Topic: "orders", Value: []byte("in an open transaction")}, nil)
		require.NoError(t, err)
		require.NoError(t, p.Flush(ctx))
		require.NoError(t, d.Close())

		_, err = migrate.Run(ctx, opts(dir, brokers, migrate.ToCluster))
		require.ErrorIs(t, err, migrate.ErrOpenTransaction)
		_, adm := newAdmin(t, brokers)
		topics, err := adm.ListTopics(ctx)
		require.NoError(t, err)
		require.False(t, topics.Has("orders"), "nothing was created")
	})
	t.Run("partition count", func(t *testing.T) {
		ctx := t.Context()
		brokers := newCluster(t)
		dir := tempDir(t)
		writeSource(t, dir, sourceSpec{plainRecords: 2})
		_, adm := newAdmin(t, brokers)
		_, err := adm.CreateTopic(ctx, 2, -1, nil, "plain")
		require.NoError(t, err)
		_, err = migrate.Run(ctx, opts(dir, brokers, migrate.ToCluster))
		require.ErrorIs(t, err, migrate.ErrPartitionCount)
	})
}

// TestToClusterRefusesLiveGroup copies a group whose consumers already run
// on the target: it is refused (the others are committed) until they stop.
func TestToClusterRefusesLiveGroup(t *testing.T) {
	ctx := t.Context()
	brokers := newCluster(t)
	dir := tempDir(t)
	writeSource(t, dir, sourceSpec{plainRecords: 20})
	o := opts(dir, brokers, migrate.ToCluster)
	o.NoGroups = true
	run(t, o)

	assigned := make(chan struct{}, 1)
	member, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("g1"), kgo.ConsumeTopics("plain"),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	require.NoError(t, err)
	pollCtx, stopPolling := context.WithCancel(ctx)
	polling := make(chan struct{})
	go func() {
		defer close(polling)
		for pollCtx.Err() == nil {
			member.PollFetches(pollCtx)
		}
	}()
	select {
	case <-assigned:
	case <-time.After(30 * time.Second):
		t.Fatal("the member never joined")
	}

	o.NoGroups = false
	sum, err := migrate.Run(ctx, o)
	require.ErrorIs(t, err, migrate.ErrGroupNotEmpty)
	require.Contains(t, err.Error(), "g1")
	byGroup := map[string]migrate.GroupSummary{}
	for _, g := range sum.Groups {
		byGroup[g.Group] = g
	}
	require.NotEmpty(t, byGroup["g1"].Skipped)
	require.Equal(t, 2, byGroup["g2"].Committed)

	stopPolling()
	<-polling
	member.Close() // leaves the group
	run(t, o)
}

// TestToClusterResumes covers a run that stops after the target
// acknowledged records but before its state said so (a crash between the
// two): the next run finds those records on the target, maps them, and
// copies nothing twice. A record someone else wrote there instead is
// refused.
func TestToClusterResumes(t *testing.T) {
	ctx := t.Context()
	brokers := newCluster(t)
	dir := tempDir(t)
	writeSource(t, dir, sourceSpec{plainRecords: 20})
	o := opts(dir, brokers, migrate.ToCluster)
	run(t, o)
	saved := filepath.Join(t.TempDir(), "state")
	copyDir(t, o.StateDir, saved)

	appendSource(t, dir, "plain", 30)
	run(t, o)
	// The crash: the state of before the second run.
	require.NoError(t, os.RemoveAll(o.StateDir))
	copyDir(t, saved, o.StateDir)
	sum := run(t, o)
	require.Zero(t, sum.Records, "everything was found on the target")
	requireSameRecords(t, sourceRecords(t, dir, "plain"), clusterRecords(t, brokers, "plain"), true, "plain")

	// A record of someone else's where the migration would write.
	require.NoError(t, os.RemoveAll(o.StateDir))
	copyDir(t, saved, o.StateDir)
	cl, _ := newAdmin(t, brokers)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Partition: 1, Value: []byte("not the migration's")}).FirstErr())
	_, err := migrate.Run(ctx, o)
	require.ErrorIs(t, err, migrate.ErrTargetChanged)
}

// TestToClusterStopsAnywhere stops runs at different moments (a canceled
// context, as SIGINT does) and finishes with a last run: the target ends
// up with every record exactly once.
func TestToClusterStopsAnywhere(t *testing.T) {
	for _, after := range []time.Duration{0, 2 * time.Millisecond, 10 * time.Millisecond, 40 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			brokers := newCluster(t)
			dir := tempDir(t)
			writeSource(t, dir, sourceSpec{plainRecords: 3000})
			o := opts(dir, brokers, migrate.ToCluster)
			o.CheckpointEvery = 5 * time.Millisecond
			ctx, cancel := context.WithTimeout(t.Context(), after)
			_, _ = migrate.Run(ctx, o)
			cancel()
			run(t, o)
			requireSameRecords(t, sourceRecords(t, dir, "plain"), clusterRecords(t, brokers, "plain"), true, "plain")
		})
	}
}

// TestDryRun prints the plan and changes nothing on either side.
func TestDryRun(t *testing.T) {
	ctx := t.Context()
	brokers := newCluster(t)
	dir := tempDir(t)
	writeSource(t, dir, sourceSpec{plainRecords: 4})
	o := opts(dir, brokers, migrate.ToCluster)
	var out bytes.Buffer
	o.Out, o.DryRun = &out, true
	_, err := migrate.Run(ctx, o)
	require.NoError(t, err)
	require.Contains(t, out.String(), "topic plain: 3 partitions, to create, 12 offsets to copy")
	require.Contains(t, out.String(), "group g1: offsets to translate and commit")
	require.Contains(t, out.String(), "cleanup.policy=compact")
	_, adm := newAdmin(t, brokers)
	topics, err := adm.ListTopics(ctx)
	require.NoError(t, err)
	require.Empty(t, topics.Names())
	require.NoDirExists(t, o.StateDir)
}

// appendSource adds n records to each partition of topic.
func appendSource(t *testing.T, dir, topic string, n int) {
	t.Helper()
	ctx := t.Context()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	desc, err := d.DescribeTopic(topic)
	require.NoError(t, err)
	p, err := producer.New(d, producer.DefaultConfig())
	require.NoError(t, err)
	for part := range desc.Partitions {
		for i := range n {
			_, err := p.Send(ctx, &producer.Record{Topic: topic, Partition: &part, Key: fmt.Appendf(nil, "later-%d", i),
				Value: fmt.Appendf(nil, "appended later %d", i)}, nil)
			require.NoError(t, err)
		}
	}
	require.NoError(t, p.Close(ctx))
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	out, err := exec.Command("cp", "-R", from, to).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestToClusterSmallMessageLimit copies a topic whose max.message.bytes is
// far below the producer's default batch size: the batches stay under it.
func TestToClusterSmallMessageLimit(t *testing.T) {
	brokers := newCluster(t)
	dir := tempDir(t)
	writeTopic(t, dir, "small", 1, map[string]string{"max.message.bytes": "20000"}, 300, func(i int) []byte {
		return fmt.Appendf(nil, "%04d %s", i, bytes.Repeat([]byte{byte('a' + i%26)}, 1000))
	})
	o := opts(dir, brokers, migrate.ToCluster)
	o.Compression = "none"
	run(t, o)
	requireSameRecords(t, sourceRecords(t, dir, "small"), clusterRecords(t, brokers, "small"), true, "small")
}
