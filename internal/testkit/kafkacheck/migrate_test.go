package kafkacheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// buildMigrate builds examples/migrate's command (its own module).
func buildMigrate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "migrate")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(moduleDir(), "..", "..", "..", "examples", "migrate")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building examples/migrate: %s", out)
	return bin
}

// runMigrate runs the command to completion and returns its output,
// failing the test unless it exits 0.
func runMigrate(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "migrate %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// javaRecord is a record as Kafka's Java consumer returned it
// (KafkaCheck's "rec" line).
type javaRecord struct {
	Offset, Timestamp int64
	TimestampType     string
	Key, Value        []byte
	Headers           []record.Header
}

// javaRecords reads topic from the start with Kafka's Java consumer,
// read_committed, per partition.
func javaRecords(t *testing.T, k *Kafka, bootstrap, topic string) map[int32][]javaRecord {
	t.Helper()
	out := map[int32][]javaRecord{}
	for _, f := range Lines(k.Client(t, "", "consume", bootstrap, topic, "read_committed"), "rec") {
		p, err := strconv.ParseInt(f[0], 10, 32)
		require.NoError(t, err)
		r := javaRecord{TimestampType: f[3], Key: unb64(t, f[4]), Value: unb64(t, f[5])}
		r.Offset, err = strconv.ParseInt(f[1], 10, 64)
		require.NoError(t, err)
		r.Timestamp, err = strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		for i := 6; i+1 < len(f); i += 2 {
			r.Headers = append(r.Headers, record.Header{Key: unb64(t, f[i]), Value: unb64(t, f[i+1])})
		}
		out[int32(p)] = append(out[int32(p)], r)
	}
	return out
}

// requireSameJavaRecord compares a record's key, value (null and empty
// told apart) and headers.
func requireSameJavaRecord(t *testing.T, key, value []byte, headers []record.Header, got javaRecord, at string) {
	t.Helper()
	require.Equal(t, key == nil, got.Key == nil, "%s: null key", at)
	require.Equal(t, value == nil, got.Value == nil, "%s: null value", at)
	require.Equal(t, string(key), string(got.Key), at)
	require.Equal(t, string(value), string(got.Value), at)
	require.Len(t, got.Headers, len(headers), at)
	for i := range headers {
		require.Equal(t, string(headers[i].Key), string(got.Headers[i].Key), at)
		require.Equal(t, headers[i].Value == nil, got.Headers[i].Value == nil, "%s: header %d null", at, i)
		require.Equal(t, string(headers[i].Value), string(got.Headers[i].Value), at)
	}
}

// TestMigrateIntoKafka copies the feature directory (every codec, headers,
// null and empty keys and values, LogAppendTime, tiny segments, a
// compacted topic cleaned twice, committed and aborted transactions, two
// groups' offsets) into Kafka's broker with examples/migrate, and has
// Kafka's own Java consumer and admin client judge the result: each
// partition holds the directory's read_committed records in order, at the
// same offsets where the directory's offsets are dense, and each group's
// committed offsets point at the same records. -verify agrees, and a
// second run copies nothing.
func TestMigrateIntoKafka(t *testing.T) {
	k := Get(t)
	dir := filepath.Join(t.TempDir(), "kafkalite")
	exp := WriteFeatureDir(t, dir)
	b := k.NewBroker(t, nil)
	b.Start()
	bin := buildMigrate(t)
	out := runMigrate(t, bin, "-from", dir, "-to", b.Bootstrap(), "-progress", "log")
	t.Logf("migrate:\n%s", out)
	require.Contains(t, runMigrate(t, bin, "-from", dir, "-to", b.Bootstrap(), "-verify"), "both sides agree")
	requireFeatureCopy(t, k, exp, b.Bootstrap(), out)
	again := runMigrate(t, bin, "-from", dir, "-to", b.Bootstrap(), "-progress", "log")
	require.Contains(t, again, "to-cluster: 0 records")
}

// TestMigrateIntoKafkaCluster copies the feature directory into three
// Kafka brokers (topics created with three replicas) and judges the
// result as TestMigrateIntoKafka does; then copies two of its topics back
// into a new directory, and -verify agrees both ways.
func TestMigrateIntoKafkaCluster(t *testing.T) {
	k := Get(t)
	dir := filepath.Join(t.TempDir(), "kafkalite")
	exp := WriteFeatureDir(t, dir)
	c := k.NewCluster(t, nil)
	c.Start()
	bin := buildMigrate(t)
	out := runMigrate(t, bin, "-from", dir, "-to", c.Bootstrap(), "-replication-factor", "3", "-progress", "log")
	t.Logf("migrate:\n%s", out)
	require.Contains(t, runMigrate(t, bin, "-from", dir, "-to", c.Bootstrap(), "-verify"), "both sides agree")
	requireFeatureCopy(t, k, exp, c.Bootstrap(), out)
	described := k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", c.Bootstrap(), "--describe", "--topic", TopicCodecs)
	require.Contains(t, described, "ReplicationFactor: 3")

	back := filepath.Join(t.TempDir(), "back")
	topics := TopicCodecs + "," + TopicTxn
	t.Logf("migrate back:\n%s", runMigrate(t, bin, "-from", c.Bootstrap(), "-to", back, "-topics", topics, "-progress", "log"))
	require.Contains(t, runMigrate(t, bin, "-from", c.Bootstrap(), "-to", back, "-topics", topics, "-verify"), "both sides agree")
	c.Stop()
}

// requireFeatureCopy has Kafka's Java consumer and admin client judge a
// copy of the feature directory: each partition holds the directory's
// read_committed records in order, at the same offsets where the
// directory's offsets are dense, and each group's committed offsets point
// at the same records.
func requireFeatureCopy(t *testing.T, k *Kafka, exp *Expected, bootstrap, out string) {
	t.Helper()
	// where[tp] maps each directory record's offset to the offset Kafka's
	// consumer read it at.
	where := map[TopicPartition]map[int64]int64{}
	ends := map[TopicPartition]int64{}
	for _, topic := range []string{TopicCodecs, TopicLogAppend, TopicRecompress, TopicSegments, TopicCompacted, TopicTxn} {
		got := javaRecords(t, k, bootstrap, topic)
		for p := range exp.Topics[topic].Partitions {
			tp := TopicPartition{Topic: topic, Partition: p}
			var want []Record
			var wantTs []int64
			for _, batch := range exp.ConsumerBatches(tp, true) {
				for _, r := range batch.Records {
					want = append(want, r)
					if batch.TimestampType == record.LogAppendTime {
						wantTs = append(wantTs, batch.MaxTimestamp)
					} else {
						wantTs = append(wantTs, r.Timestamp)
					}
				}
			}
			require.Len(t, got[p], len(want), "%s", tp)
			dense := true
			where[tp] = map[int64]int64{}
			for i, w := range want {
				dense = dense && w.Offset == int64(i)
				g := got[p][i]
				at := fmt.Sprintf("%s record %d (directory offset %d, Kafka offset %d)", tp, i, w.Offset, g.Offset)
				requireSameJavaRecord(t, w.Key, w.Value, w.Headers, g, at)
				require.Equal(t, wantTs[i], g.Timestamp, "%s: timestamp", at)
				where[tp][w.Offset] = g.Offset
			}
			for i, w := range want {
				if dense {
					require.Equal(t, w.Offset, got[p][i].Offset, "%s: dense offsets are kept", tp)
				}
			}
			ends[tp] = int64(len(want))
			if dense {
				require.Contains(t, out, fmt.Sprintf("%s: ", tp), "the summary names %s", tp)
			}
			t.Logf("%s: %d records, dense=%v", tp, len(want), dense)
		}
	}

	var groups []string
	for g := range exp.Groups {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	committed := Lines(k.Client(t, "", "committed", bootstrap, groups...), "committed")
	require.NotEmpty(t, committed)
	for g, offs := range exp.Groups {
		for tp, co := range offs {
			// The record a consumer of the group reads next in the
			// directory, and where Kafka has it; past the end, Kafka's end.
			want := ends[tp]
			var next int64 = -1
			for off := range where[tp] {
				if off >= co.Offset && (next < 0 || off < next) {
					next = off
				}
			}
			if next >= 0 {
				want = where[tp][next]
			}
			found := false
			for _, c := range committed {
				if c[0] == g && c[1] == tp.Topic && c[2] == strconv.Itoa(int(tp.Partition)) {
					require.Equal(t, strconv.FormatInt(want, 10), c[3], "group %s %s (directory offset %d)", g, tp, co.Offset)
					require.Equal(t, co.Metadata, c[5], "group %s %s metadata", g, tp)
					found = true
				}
			}
			require.True(t, found, "group %s has no offset of %s on Kafka", g, tp)
		}
	}
}

// TestMigrateFromKafka copies topics Kafka's Java producer wrote (every
// codec, headers, null keys and values, a LogAppendTime topic, committed
// and aborted transactions) from the broker into a new directory: every
// record keeps its offset, timestamp and timestamp type, aborted records
// are not copied, and kafkalite's read of the directory equals Kafka's
// consumer's read of the broker.
func TestMigrateFromKafka(t *testing.T) {
	k := Get(t)
	b := k.NewBroker(t, nil)
	b.Start()
	bs := b.Bootstrap()
	k.Client(t, "", "create-topic", bs, "events", "5")
	k.Client(t, "", "create-topic", bs, "stamped", "1", "message.timestamp.type=LogAppendTime")
	k.Client(t, "", "create-topic", bs, "txn", "2")
	var in strings.Builder
	for p, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		fmt.Fprintf(&in, "use\t%s\tcompression.type=%s\tlinger.ms=5\n", codec, codec)
		for i := range 50 {
			key, value := b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("%s value %d %s", codec, i, strings.Repeat("x", i)))
			switch i % 4 {
			case 1:
				key = "-"
			case 2:
				value = "-"
			}
			fmt.Fprintf(&in, "send-at\tevents\t%d\t%d\t%s\t%s\t%s\t%s\n", p, 1_600_000_000_000+int64(i)*1000, key, value, b64("h"), b64(codec))
		}
		fmt.Fprintf(&in, "flush\n")
	}
	fmt.Fprintf(&in, "use\tplain\n")
	for i := range 3 {
		fmt.Fprintf(&in, "send\tstamped\t0\t%s\t%s\n", b64(strconv.Itoa(i)), b64("stamped"))
	}
	fmt.Fprintf(&in, "flush\nuse\ttx\ttransactional.id=migrate-from-kafka\ninit\n")
	for txn, end := range []string{"commit", "abort", "commit"} {
		fmt.Fprintf(&in, "begin\n")
		for p := range 2 {
			for i := range 3 {
				fmt.Fprintf(&in, "send\ttxn\t%d\t%s\t%s\n", p, b64(fmt.Sprint(txn)), b64(fmt.Sprintf("txn %d record %d %s", txn, i, end)))
			}
		}
		fmt.Fprintf(&in, "%s\n", end)
	}
	k.Client(t, in.String(), "produce", bs)

	dir := filepath.Join(t.TempDir(), "kafkalite")
	bin := buildMigrate(t)
	t.Logf("migrate:\n%s", runMigrate(t, bin, "-from", bs, "-to", dir, "-topics", "events,stamped,txn", "-progress", "log"))
	require.Contains(t, runMigrate(t, bin, "-from", bs, "-to", dir, "-topics", "events,stamped,txn", "-verify"), "both sides agree")

	d, err := log.Open(t.Context(), dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	for _, topic := range []string{"events", "stamped", "txn"} {
		want := javaRecords(t, k, bs, topic)
		desc, err := d.DescribeTopic(topic)
		require.NoError(t, err)
		for p := range desc.Partitions {
			l, err := d.Partition(topic, p)
			require.NoError(t, err)
			i := 0
			_, err = l.ReadCommittedRecords(l.LogStartOffset(), 64<<20, func(r *record.Record, h *record.BatchHeader) error {
				require.Less(t, i, len(want[p]), "%s-%d: more records than Kafka's", topic, p)
				w := want[p][i]
				at := fmt.Sprintf("%s-%d offset %d", topic, p, w.Offset)
				require.Equal(t, w.Offset, r.Offset, "%s: offset kept", at)
				require.Equal(t, w.Timestamp, r.Timestamp, "%s: timestamp", at)
				wantType := record.CreateTime
				if w.TimestampType == "LogAppendTime" {
					wantType = record.LogAppendTime
				}
				require.Equal(t, wantType, h.Attributes.TimestampType(), "%s: timestamp type", at)
				requireSameJavaRecord(t, r.Key, r.Value, r.Headers, w, at)
				i++
				return nil
			})
			require.NoError(t, err)
			require.Len(t, want[p], i, "%s-%d", topic, p)
		}
	}
}

// TestMigrateKillNineIntoKafka kills examples/migrate with SIGKILL at
// several points of a copy into Kafka's broker, starting it again each
// time; Kafka's consumer then finds every record exactly once, at its own
// offset, and -verify agrees.
func TestMigrateKillNineIntoKafka(t *testing.T) {
	k := Get(t)
	const perPartition = 100_000
	dir := filepath.Join(t.TempDir(), "kafkalite")
	ctx := t.Context()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "orders", 3, nil)
	require.NoError(t, err)
	cfg := producer.DefaultConfig()
	cfg.CompressionType = record.LZ4
	pr, err := producer.New(d, cfg)
	require.NoError(t, err)
	for part := range int32(3) {
		for i := range perPartition {
			_, err := pr.Send(ctx, &producer.Record{Topic: "orders", Partition: &part, Key: fmt.Appendf(nil, "c%d", i%100),
				Value: fmt.Appendf(nil, "order %d", i)}, nil)
			require.NoError(t, err)
		}
	}
	require.NoError(t, pr.Close(ctx))
	require.NoError(t, d.Close())

	b := k.NewBroker(t, nil)
	b.Start()
	bin := buildMigrate(t)
	stateFile := dir + ".migrate/state.json"
	progress := regexp.MustCompile(`"records": (\d+)`)
	saved := func() int64 {
		raw, _ := os.ReadFile(stateFile)
		var n int64
		for _, m := range progress.FindAllSubmatch(raw, -1) {
			v, _ := strconv.ParseInt(string(m[1]), 10, 64)
			n += v
		}
		return n
	}
	kills := 0
	for _, frac := range []int64{0, 3, 6} {
		atLeast := 3 * perPartition * frac / 10
		cmd := exec.Command(bin, "-from", dir, "-to", b.Bootstrap(), "-progress", "log", "-checkpoint", "10ms")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
	wait:
		for {
			select {
			case err := <-exited:
				require.NoError(t, err, "%s", out.String())
				break wait
			case <-time.After(2 * time.Millisecond):
			}
			if _, err := os.Stat(stateFile); err == nil && saved() >= atLeast {
				require.NoError(t, cmd.Process.Kill())
				<-exited
				kills++
				break
			}
		}
		t.Logf("kill point %d: %d records in the saved state", atLeast, saved())
	}
	require.Positive(t, kills)
	t.Logf("last run:\n%s", runMigrate(t, bin, "-from", dir, "-to", b.Bootstrap(), "-progress", "log"))
	require.Contains(t, runMigrate(t, bin, "-from", dir, "-to", b.Bootstrap(), "-verify"), "both sides agree")
	got := javaRecords(t, k, b.Bootstrap(), "orders")
	for p := range int32(3) {
		require.Len(t, got[p], perPartition, "partition %d", p)
		for i, r := range got[p] {
			require.Equal(t, int64(i), r.Offset)
			require.Equal(t, fmt.Sprintf("order %d", i), string(r.Value))
		}
	}
}
