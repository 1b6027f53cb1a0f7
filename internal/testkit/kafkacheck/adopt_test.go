package kafkacheck

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// adoptCodecs are Kafka's compression.type values for producers.
var adoptCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// adoptTopics are the topics TestKafkaliteReadsBrokerDirectory makes the
// broker write, as create-topics lines: a topic per codec, one with
// LogAppendTime, one for transactions, a compacted one with a fast
// cleaner (small segments, rolled by size and by time, so that the
// cleaner has sealed segments; tombstones kept 100 ms), and one that many
// idempotent producers write once each.
var adoptTopics = []string{
	"codec-none\t2", "codec-gzip\t2", "codec-snappy\t2", "codec-lz4\t2", "codec-zstd\t2",
	"logappend\t1\tmessage.timestamp.type=LogAppendTime",
	"txn\t2",
	"compacted\t1\tcleanup.policy=compact\tmin.cleanable.dirty.ratio=0.01\tdelete.retention.ms=100\tsegment.ms=1000\tinternal.segment.bytes=8192",
	"many\t1",
}

func topicNames(specs []string) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s[:strings.IndexByte(s, '\t')]
	}
	return out
}

// manyProducers is how many idempotent producers write to topic "many".
const manyProducers = 40

// TestKafkaliteReadsBrokerDirectory: a Kafka broker writes through Kafka's
// producer (every codec, idempotent and not, LogAppendTime, transactions
// committed and aborted, two of them open at once, offsets committed
// inside transactions, a compacted topic its cleaner has cleaned, a group
// that committed offsets, many producers), with a restart in between so
// that leader epochs change, and stops cleanly. kafkalite adopts the
// directory with log.Open, and its consumer reads exactly what Kafka's
// consumer read from the running broker, at both isolation levels; the
// group's committed offsets are the ones the broker reported; dumplog
// -verify passes over the directory before and after kafkalite opened it.
func TestKafkaliteReadsBrokerDirectory(t *testing.T) {
	k := Get(t)
	dumplog := buildDumplog(t)
	b := k.NewBroker(t, map[string]string{"log.cleaner.backoff.ms": "100"})
	b.Start()
	k.Client(t, stdinLines(adoptTopics), "create-topics", b.Bootstrap())
	topics := topicNames(adoptTopics)

	// Phase 1: everything but the records after the restart.
	rng := rand.New(rand.NewPCG(3, 9))
	var p1 []string
	for _, c := range adoptCodecs {
		p1 = append(p1, "use\tc-"+c+"\tcompression.type="+c)
		p1 = append(p1, sendLinesOf(genRecords(rng, "codec-"+c, 2, 300))...)
		p1 = append(p1, "flush")
	}
	// A producer without idempotence: batches without a producer id.
	p1 = append(p1, "use\tplain\tenable.idempotence=false\tacks=1\tcompression.type=snappy")
	p1 = append(p1, sendLinesOf(genRecords(rng, "codec-none", 2, 40))...)
	p1 = append(p1, "flush", "use\tlat\tcompression.type=gzip")
	p1 = append(p1, sendLinesOf(genRecords(rng, "logappend", 1, 60))...)
	p1 = append(p1, "flush")
	// Two transactional producers with transactions open at once; offsets
	// committed in a committed and in an aborted transaction.
	p1 = append(p1, "use\ttxa\ttransactional.id=txa\tcompression.type=lz4", "init", "begin")
	p1 = append(p1, sendLinesOf(genRecords(rng, "txn", 2, 30))...)
	p1 = append(p1, sendLinesOf(compactedRecords(rng, 0, 10))...)
	p1 = append(p1, "use\ttxb\ttransactional.id=txb\tcompression.type=zstd", "init", "begin")
	p1 = append(p1, sendLinesOf(genRecords(rng, "txn", 2, 30))...)
	p1 = append(p1, sendLinesOf(compactedRecords(rng, 1, 10))...)
	p1 = append(p1, "use\ttxa")
	p1 = append(p1, sendLinesOf(genRecords(rng, "txn", 2, 20))...)
	p1 = append(p1, "offsets\tg1\ttxn\t0\t5", "commit", "use\ttxb")
	p1 = append(p1, sendLinesOf(genRecords(rng, "txn", 2, 20))...)
	p1 = append(p1, "offsets\tg1\tcodec-gzip\t0\t3", "abort", "use\ttxa", "begin")
	p1 = append(p1, sendLinesOf(genRecords(rng, "txn", 2, 20))...)
	p1 = append(p1, "abort", "use\ttxb", "begin")
	p1 = append(p1, sendLinesOf(genRecords(rng, "txn", 2, 20))...)
	p1 = append(p1, "offsets\tg1\ttxn\t1\t7", "offsets\tg-txn\ttxn\t0\t9", "commit")
	// The compacted topic: five rounds over 30 keys, with tombstones.
	p1 = append(p1, "use\tcmp\tcompression.type=snappy")
	for round := range 5 {
		p1 = append(p1, sendLinesOf(compactedRecords(rng, round, 30))...)
		p1 = append(p1, "flush")
	}
	// Many idempotent producers, one batch of three records each.
	for i := range manyProducers {
		p1 = append(p1, fmt.Sprintf("use\tmany-%d", i))
		p1 = append(p1, sendLinesOf(genRecords(rng, "many", 1, 3))...)
		p1 = append(p1, "flush")
	}
	k.Client(t, stdinLines(p1), "produce", b.Bootstrap())

	// A restart: the partitions get a new leader epoch.
	b.Stop()
	b.Start()
	// Phase 2: the first record rolls the compacted topic's segment (by
	// segment.ms), which makes everything before it cleanable.
	p2 := []string{"use\troll", sendLine{topic: "compacted", key: []byte("roll"), value: []byte("roll")}.line(), "flush"}
	for _, c := range adoptCodecs {
		p2 = append(p2, "use\tc-"+c+"\tcompression.type="+c)
		p2 = append(p2, sendLinesOf(genRecords(rng, "codec-"+c, 2, 50))...)
		p2 = append(p2, "flush")
	}
	p2 = append(p2, "use\ttxa\ttransactional.id=txa", "init", "begin")
	p2 = append(p2, sendLinesOf(genRecords(rng, "txn", 2, 20))...)
	p2 = append(p2, "commit", "use\tlat")
	p2 = append(p2, sendLinesOf(genRecords(rng, "logappend", 1, 10))...)
	acks := Lines(k.Client(t, stdinLines(p2), "produce", b.Bootstrap()), "ack")
	rolledAt, err := strconv.ParseInt(acks[0][1], 10, 64)
	require.NoError(t, err)
	require.Positive(t, rolledAt)

	// Wait for the cleaner to have cleaned everything before the roll:
	// its checkpoint says so.
	waitUntil(t, time.Minute, "the broker's cleaner to clean compacted-0 up to "+strconv.FormatInt(rolledAt, 10), func() bool {
		off, ok := checkpointEntry(filepath.Join(b.Dir, "cleaner-offset-checkpoint"), "compacted", 0)
		return ok && off == rolledAt
	})

	// A group that commits what it consumed, then Kafka's consumer reads
	// every topic at both isolation levels, and the group's offsets.
	k.Client(t, "", "consume", b.Bootstrap(), "codec-none", "read_committed", "g1")
	kafka := kafkaRead(t, k.Client(t, "", "read", b.Bootstrap(), topics...))
	committed := Lines(k.Client(t, "", "committed", b.Bootstrap(), "g1", "g-txn"), "committed")

	// The cleaner removed records: fewer than the 150 + 10 + 10 + 1 sent
	// are left in compacted-0 (30 keys, some deleted).
	require.Less(t, countByTopic(kafka["read_uncommitted"].records)["compacted"], 100)
	require.Positive(t, countByTopic(kafka["read_committed"].records)["compacted"])

	t.Run("DirLockedByRunningBroker", func(t *testing.T) {
		// Kafka holds a lock on .lock while it runs; kafkalite must refuse
		// the directory, and change nothing in it.
		require.Equal(t, []string{"locked"}, k.Client(t, "", "try-lock", filepath.Join(b.Dir, ".lock")), "Kafka's own lock is held")
		meta, err := os.ReadFile(filepath.Join(b.Dir, "meta.properties"))
		require.NoError(t, err)
		cfg := log.DefaultConfig()
		cfg.NodeID = 1
		cfg.AdoptBrokerDirectory = true
		d, err := log.Open(context.Background(), b.Dir, cfg)
		if err == nil {
			require.NoError(t, d.Close())
		}
		require.ErrorIs(t, err, log.ErrDirLocked)
		// The broker writes the directory meanwhile, so what is compared is
		// what kafkalite would have written: meta.properties, which Open
		// reads or writes right after taking the lock, and its topic
		// store, which Open writes last.
		require.NoFileExists(t, filepath.Join(b.Dir, "kafkalite-topics.json"))
		after, err := os.ReadFile(filepath.Join(b.Dir, "meta.properties"))
		require.NoError(t, err)
		require.Equal(t, meta, after)
	})

	b.Stop()

	// Kafka's own reading of the producer snapshot of "many", for later.
	snapshots, err := filepath.Glob(filepath.Join(b.Dir, "many-0", "*.snapshot"))
	require.NoError(t, err)
	require.NotEmpty(t, snapshots)
	slices.Sort(snapshots)
	snapshotDump := k.DumpLogSegments(t, "--files", snapshots[len(snapshots)-1])

	t.Run("DumplogVerifiesBrokerDirectory", func(t *testing.T) {
		requireDumplogVerifies(t, dumplog, b.Dir)
	})

	metadataLog := filepath.Join(b.Dir, "__cluster_metadata-0")
	metadataBefore := fileSums(t, metadataLog)
	var warnings lockedBuffer
	d := openBrokerDir(t, b.Dir, &warnings)
	closed := false
	defer func() {
		if !closed {
			require.NoError(t, d.Close())
		}
	}()
	require.True(t, d.Recovery().Clean, "the broker stopped cleanly")
	require.Equal(t, brokerMeta(t, b.Dir).ClusterID, d.ClusterID())
	for _, topic := range topics {
		require.Contains(t, d.Topics(), topic)
	}
	require.NotContains(t, d.Topics(), "__cluster_metadata", "the KRaft metadata log is not a topic")

	t.Run("DirLockedByKafkalite", func(t *testing.T) {
		// And the other way: while kafkalite has the directory open, the
		// lock a broker's LogManager takes at startup fails.
		require.Equal(t, []string{"locked"}, k.Client(t, "", "try-lock", filepath.Join(b.Dir, ".lock")))
	})

	t.Run("BatchesAsIntended", func(t *testing.T) {
		// What the broker wrote covers what this test claims: each codec
		// topic holds batches of its codec, with and without producer ids
		// (codec-none's plain producer); txn holds markers; the cleaner
		// gave compacted-0 delete horizons; many-0 has its producers.
		for _, c := range adoptCodecs {
			want, err := record.ParseCompression(c)
			require.NoError(t, err)
			hs := batchHeaders(t, d, "codec-"+c, 0)
			require.True(t, slices.ContainsFunc(hs, func(h record.BatchHeader) bool { return h.Attributes.Compression() == want && h.ProducerID >= 0 }),
				"codec-%s-0 has idempotent %s batches", c, c)
		}
		require.True(t, slices.ContainsFunc(batchHeaders(t, d, "codec-none", 0), func(h record.BatchHeader) bool { return h.ProducerID < 0 }))
		require.True(t, slices.ContainsFunc(batchHeaders(t, d, "txn", 0), func(h record.BatchHeader) bool { return h.Attributes.IsControl() }))
		require.True(t, slices.ContainsFunc(batchHeaders(t, d, "compacted", 0), func(h record.BatchHeader) bool { return h.Attributes.HasDeleteHorizon() }))
		pids := map[int64]bool{}
		for _, h := range batchHeaders(t, d, "many", 0) {
			pids[h.ProducerID] = true
		}
		require.Len(t, pids, manyProducers)
	})

	for _, iso := range bothIsolations {
		t.Run("Records/"+iso, func(t *testing.T) {
			got := kafkaliteRead(t, d, topics, iso)
			require.Equal(t, kafka[iso].ends, got.ends, "end offsets")
			requireSameRecords(t, kafka[iso].records, got.records, iso)
			t.Logf("%s: %d records, by topic %v", iso, len(got.records), countByTopic(got.records))
		})
	}

	t.Run("CommittedOffsets", func(t *testing.T) {
		// g1: offsets its consumer committed (codec-none) and offsets
		// committed in transactions (txn), not those of the aborted one
		// (codec-gzip); g-txn: only a transactional commit.
		var groups []string
		for _, f := range committed {
			groups = append(groups, f[0]+" "+f[1])
		}
		require.Equal(t, []string{"g1 codec-none", "g1 codec-none", "g1 txn", "g1 txn", "g-txn txn"}, groups)
		for _, group := range []string{"g1", "g-txn"} {
			requireCommitted(t, d, group, topics, committed)
		}
	})

	t.Run("LeaderEpochChanges", func(t *testing.T) {
		// The restart gave the partitions a new leader epoch: the broker's
		// leader-epoch-checkpoint has an entry per epoch, kafkalite keeps
		// it, and the records carry both epochs (compared above, record by
		// record, with Kafka's consumer's leaderEpoch()).
		entries := leaderEpochs(t, filepath.Join(b.Dir, "codec-none-0", "leader-epoch-checkpoint"))
		require.GreaterOrEqual(t, len(entries), 2, "epochs %v", entries)
		epochs := map[string]bool{}
		for _, r := range kafka["read_uncommitted"].records {
			if strings.HasPrefix(r, "codec-none\t0\t") {
				epochs[strings.Split(r, "\t")[3]] = true
			}
		}
		require.Len(t, epochs, 2, "leader epochs of codec-none-0's records")
		for e := range epochs {
			n, err := strconv.Atoi(e)
			require.NoError(t, err)
			require.True(t, slices.ContainsFunc(entries, func(en checkpoint.EpochEntry) bool { return en.Epoch == int32(n) }),
				"epoch %d of a record is in leader-epoch-checkpoint %v", n, entries)
		}
	})

	t.Run("ProducerSnapshotsOfManyProducers", func(t *testing.T) {
		// Kafka's snapshot of "many" holds every producer that wrote it;
		// kafkalite loads the same state from it, and so still knows them:
		// a batch sent again is a duplicate, answered with its offsets.
		want := parseSnapshotDump(t, snapshotDump)
		require.GreaterOrEqual(t, len(want), manyProducers)
		l, err := d.Partition("many", 0)
		require.NoError(t, err)
		var got []string
		for _, p := range l.Producers() {
			got = append(got, fmt.Sprintf("producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %d lastTimestamp: %d lastSequence: %d",
				p.ProducerID, p.ProducerEpoch, p.CoordinatorEpoch, p.CurrentTxnStartOffset, p.LastTimestamp, p.LastSequence))
		}
		require.Equal(t, want, got)
		requireDuplicatesDetected(t, l)
	})

	t.Run("NoTieredStorageMetadata", func(t *testing.T) {
		// Tiered storage is off: the broker wrote no remote-log metadata
		// (no __remote_log_metadata topic, no remote-log-index-cache), and
		// kafkalite needs none.
		for _, name := range dirNames(t, b.Dir) {
			require.NotContains(t, name, "remote")
		}
		require.NotContains(t, d.Topics(), "__remote_log_metadata")
	})

	t.Run("InternalTopicsStayCompacted", func(t *testing.T) {
		// The broker's internal topics keep Kafka's configuration for them:
		// with the default (delete after 7 days) committed offsets and
		// transaction states would go.
		for _, name := range []string{OffsetsTopic, TxnStateTopic} {
			desc, err := d.DescribeTopic(name)
			require.NoError(t, err)
			require.True(t, desc.Config.CleanupPolicy.Compact, name)
			require.False(t, desc.Config.CleanupPolicy.Delete, name)
		}
	})

	require.NoError(t, d.Close())
	closed = true
	// A directory a broker wrote and stopped cleanly is adopted without a
	// warning: kafkalite knows every file a broker writes.
	require.Empty(t, warnings.String(), "kafkalite's warnings")
	t.Run("MetadataLogLeftAlone", func(t *testing.T) {
		// The KRaft metadata log is the raft client's, not a topic: Kafka's
		// LogManager does not load it, and kafkalite must neither adopt
		// it nor write into it.
		require.Equal(t, metadataBefore, fileSums(t, metadataLog))
	})
	t.Run("DumplogVerifiesAfterKafkalite", func(t *testing.T) {
		requireDumplogVerifies(t, dumplog, b.Dir)
	})

	t.Run("BrokerRestartsAfterKafkalite", func(t *testing.T) {
		// What kafkalite wrote while it had the directory (its topic
		// store, checkpoints, producer snapshots, the clean-shutdown
		// marker) leaves it a directory the broker starts on and serves
		// as before.
		b.Start()
		again := kafkaRead(t, k.Client(t, "", "read", b.Bootstrap(), topics...))
		for _, iso := range bothIsolations {
			require.Equal(t, kafka[iso].ends, again[iso].ends, "end offsets (%s)", iso)
			requireSameRecords(t, kafka[iso].records, again[iso].records, iso)
		}
		b.Stop()
	})
}

// requireCommitted compares a group's committed offsets in kafkalite
// (consumer.Committed over every partition of topics) with the
// "committed" lines KafkaCheck printed from the broker.
func requireCommitted(t *testing.T, d *log.Dir, group string, topics []string, committed [][]string) {
	t.Helper()
	var want []string
	for _, f := range committed {
		if f[0] == group {
			want = append(want, strings.Join(f[1:], "\t"))
		}
	}
	cfg := consumer.DefaultConfig()
	cfg.GroupID = group
	cfg.EnableAutoCommit = false
	c, err := consumer.New(d, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	var tps []consumer.TopicPartition
	for _, topic := range topics {
		desc, err := d.DescribeTopic(topic)
		require.NoError(t, err)
		for p := range desc.Partitions {
			tps = append(tps, consumer.TopicPartition{Topic: topic, Partition: p})
		}
	}
	offs, err := c.Committed(tps)
	require.NoError(t, err)
	var got []string
	for _, tp := range tps {
		if om, ok := offs[tp]; ok {
			got = append(got, fmt.Sprintf("%s\t%d\t%d\t%d\t%s", tp.Topic, tp.Partition, om.Offset, om.LeaderEpoch, om.Metadata))
		}
	}
	require.Equal(t, want, got, "group %s", group)
}

// batchHeaders returns the headers of every batch of a partition.
func batchHeaders(t *testing.T, d *log.Dir, topic string, partition int32) []record.BatchHeader {
	t.Helper()
	l, err := d.Partition(topic, partition)
	require.NoError(t, err)
	var out []record.BatchHeader
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		res, err := l.Read(off, 1<<20, true)
		require.NoError(t, err)
		require.NotNil(t, res.Slice)
		_, err = res.Slice.Batches(nil, func(h *record.BatchHeader, _ []byte) error {
			out = append(out, *h)
			off = h.NextOffset()
			return nil
		})
		res.Release()
		require.NoError(t, err)
	}
	return out
}

// compactedRecords is a round of updates to keys key-0…key-n-1 of
// "compacted": one key in seven deleted (a null value).
func compactedRecords(rng *rand.Rand, round, n int) []sendLine {
	out := make([]sendLine, n)
	for i := range n {
		s := sendLine{topic: "compacted", key: fmt.Appendf(nil, "key-%d", i), value: fmt.Appendf(nil, "round %d %x", round, rng.Uint64())}
		if (i+round)%7 == 0 {
			s.value = nil
		}
		out[i] = s
	}
	return out
}

// dirNames lists the names in dir and its partition directories, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		out = append(out, e.Name())
		if e.IsDir() {
			sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			for _, s := range sub {
				out = append(out, e.Name()+"/"+s.Name())
			}
		}
	}
	return out
}

// fileSums maps the names of the files in dir to the SHA-256 of their
// contents.
func fileSums(t *testing.T, dir string) map[string][sha256.Size]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string][sha256.Size]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func brokerMeta(t *testing.T, dir string) checkpoint.MetaProperties {
	t.Helper()
	mp, err := checkpoint.ReadMetaProperties(vfs.Default, filepath.Join(dir, checkpoint.MetaPropertiesFile))
	require.NoError(t, err)
	return mp
}

func leaderEpochs(t *testing.T, path string) []checkpoint.EpochEntry {
	t.Helper()
	entries, err := checkpoint.ReadLeaderEpochs(vfs.Default, path)
	require.NoError(t, err)
	return entries
}

// snapshotLine matches the producer lines DumpLogSegments prints for a
// .snapshot file.
var snapshotLine = regexp.MustCompile(`producerId: (\d+) producerEpoch: (\d+) coordinatorEpoch: (-?\d+) currentTxnFirstOffset: (\S+) lastTimestamp: (-?\d+)(?: firstSequence: -?\d+ lastSequence: (-?\d+))?`)

// parseSnapshotDump returns DumpLogSegments' producer entries in the form
// the test prints kafkalite's, ordered by producer id.
func parseSnapshotDump(t *testing.T, out string) []string {
	t.Helper()
	type entry struct {
		pid  int64
		line string
	}
	var es []entry
	for _, m := range snapshotLine.FindAllStringSubmatch(out, -1) {
		pid, err := strconv.ParseInt(m[1], 10, 64)
		require.NoError(t, err)
		// currentTxnFirstOffset prints as Java's OptionalLong.
		txn := m[4]
		if txn == "OptionalLong.empty" {
			txn = "-1"
		}
		txn = strings.TrimSuffix(strings.TrimPrefix(txn, "OptionalLong["), "]")
		seq := m[6]
		if seq == "" {
			seq = "-1"
		}
		es = append(es, entry{pid, fmt.Sprintf("producerId: %s producerEpoch: %s coordinatorEpoch: %s currentTxnFirstOffset: %s lastTimestamp: %s lastSequence: %s",
			m[1], m[2], m[3], txn, m[5], seq)})
	}
	require.NotEmpty(t, es, "no producer entries in DumpLogSegments' output:\n%s", out)
	slices.SortFunc(es, func(a, b entry) int { return int(a.pid - b.pid) })
	out2 := make([]string, len(es))
	for i, e := range es {
		out2[i] = e.line
	}
	return out2
}

// requireDuplicatesDetected appends every batch of l again, as a producer
// retrying it would, and requires kafkalite to answer each as a duplicate
// with its original offsets, writing nothing.
func requireDuplicatesDetected(t *testing.T, l *log.Log) {
	t.Helper()
	end := l.LogEndOffset()
	res, err := l.Read(l.LogStartOffset(), 1<<20, true)
	require.NoError(t, err)
	require.NotNil(t, res.Slice)
	type batch struct {
		base, last int64
		bytes      []byte
	}
	var batches []batch
	_, err = res.Slice.Batches(nil, func(h *record.BatchHeader, b []byte) error {
		batches = append(batches, batch{h.BaseOffset, h.LastOffset(), slices.Clone(b)})
		return nil
	})
	res.Release()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(batches), manyProducers)
	for _, b := range batches {
		// As the producer sent it: base offset 0 and no leader epoch
		// (neither is covered by the CRC).
		binary.BigEndian.PutUint64(b.bytes[0:8], 0)
		binary.BigEndian.PutUint32(b.bytes[12:16], math.MaxUint32)
		ar, err := l.Append(b.bytes)
		require.NoError(t, err, "batch at %d", b.base)
		require.True(t, ar.Duplicate, "batch at %d is a duplicate", b.base)
		require.Equal(t, [2]int64{b.base, b.last}, [2]int64{ar.BaseOffset, ar.LastOffset})
	}
	require.Equal(t, end, l.LogEndOffset(), "nothing was appended")
}
