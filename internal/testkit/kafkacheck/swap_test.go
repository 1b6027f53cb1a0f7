package kafkacheck

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// swapTopics are the data topics of WriteFeatureDir that
// TestBrokerServesKafkaliteFiles hands to a broker: every feature of the
// format but the internal topics, which the broker keeps its own of.
var swapTopics = []string{TopicCodecs, TopicLogAppend, TopicRecompress, TopicSegments, TopicCompacted, TopicTxn}

// rootCheckpoints are the offset checkpoint files of a log directory's root
// whose entries for a partition go with its files.
var rootCheckpoints = []string{
	"recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
	"replication-offset-checkpoint", "cleaner-offset-checkpoint",
}

// TestBrokerServesKafkaliteFiles: kafkalite writes the feature directory;
// a broker creates topics of the same names, partition counts and configs,
// and stops; each partition's files are replaced by kafkalite's (the
// broker's partition.metadata kept) and the root checkpoints' entries of
// those partitions by kafkalite's, as docs/interoperability.md's swap procedure says;
// the broker restarts and Kafka's consumer reads exactly kafkalite's
// records at both isolation levels, up to the same end offsets, and the
// broker's log shows no recovery or corruption of those partitions. Then
// the broker recovers every segment (no clean-shutdown marker, recovery
// points 0): it validates every batch and finds nothing to truncate, the
// .index, .timeindex and .txnindex files it rebuilds from the logs are
// byte for byte kafkalite's, and its consumer reads the same again. A
// Kafka producer then appends after kafkalite's last offset.
//
// The broker's cleaner is off: kafkalite's compacted topic is already
// cleaned, and a later round of the broker's (tombstones past their delete
// horizon) would rightly change what the comparison reads.
func TestBrokerServesKafkaliteFiles(t *testing.T) {
	k, dir, exp := featureDir(t)
	d, err := log.Open(context.Background(), dir, log.DefaultConfig())
	require.NoError(t, err)
	want := map[string]*readResult{}
	for _, iso := range bothIsolations {
		want[iso] = kafkaliteRead(t, d, swapTopics, iso)
	}
	require.NoError(t, d.Close())
	for _, iso := range bothIsolations {
		requireSameRecords(t, expectedLines(exp, swapTopics, iso == "read_committed"), want[iso].records,
			"kafkalite's consumer reads what the builder wrote, "+iso)
	}

	b := k.NewBroker(t, map[string]string{"log.cleaner.enable": "false"})
	b.Start()
	k.Client(t, stdinLines(brokerTopicSpecs(exp, swapTopics)), "create-topics", b.Bootstrap())
	b.Stop()
	tps := exp.SortedPartitions(swapTopics...)
	SwapPartitions(t, dir, b.Dir, tps)
	b.Start()

	got := kafkaRead(t, k.Client(t, "", "read", b.Bootstrap(), swapTopics...))
	for _, iso := range bothIsolations {
		t.Run(iso, func(t *testing.T) {
			require.Equal(t, want[iso].ends, got[iso].ends, "end offsets")
			requireSameRecords(t, got[iso].records, want[iso].records, "the broker serves kafkalite's records, "+iso)
		})
	}
	ends := map[TopicPartition]int64{}
	for _, tp := range tps {
		ends[tp] = exp.Partitions[tp].LogEndOffset
	}
	requireCleanLoad(t, lastRun(b.Log()), ends, false)
	require.Contains(t, lastRun(b.Log()), "since clean shutdown file was found", "the broker skipped recovery: it had shut down cleanly")

	// Without the clean-shutdown marker and with recovery points at 0,
	// the broker recovers every segment: it validates each batch and
	// rebuilds the indexes from the log, which must change nothing.
	b.Stop()
	require.NoError(t, os.Remove(filepath.Join(b.Dir, ".kafka_cleanshutdown")))
	points := readOffsetCheckpoint(t, filepath.Join(b.Dir, "recovery-point-offset-checkpoint"))
	for _, tp := range tps {
		points[tp] = 0
	}
	writeOffsetCheckpoint(t, filepath.Join(b.Dir, "recovery-point-offset-checkpoint"), points)
	b.Start()
	run := lastRun(b.Log())
	requireCleanLoad(t, run, ends, true)
	require.Contains(t, run, "Recovering unflushed segment", "the broker recovered the segments")
	got = kafkaRead(t, k.Client(t, "", "read", b.Bootstrap(), swapTopics...))
	for _, iso := range bothIsolations {
		t.Run("recovered/"+iso, func(t *testing.T) {
			require.Equal(t, want[iso].ends, got[iso].ends, "end offsets")
			requireSameRecords(t, got[iso].records, want[iso].records, "the broker serves kafkalite's records after recovering them, "+iso)
		})
	}
	b.Stop()
	compared := 0
	for _, tp := range tps {
		for _, ext := range []string{".index", ".timeindex", ".txnindex"} {
			for _, f := range PartitionFiles(t, dir, tp, ext) {
				mine, err := os.ReadFile(f.Path)
				require.NoError(t, err)
				theirs, err := os.ReadFile(filepath.Join(b.Dir, tp.String(), filepath.Base(f.Path)))
				require.NoError(t, err)
				require.Equal(t, mine, theirs, "%s: Kafka's recovery rebuilt it the same", f.Path)
				compared++
			}
		}
	}
	require.Greater(t, compared, 2*len(tps), "index files compared")
	b.Start()

	// The broker appends after kafkalite's last offset, with its producer
	// state loaded from kafkalite's snapshots.
	tp := TopicPartition{Topic: TopicCodecs, Partition: 3}
	acks := Lines(k.Client(t, stdinLines([]string{"use\tafter\tcompression.type=lz4",
		sendLine{topic: tp.Topic, partition: tp.Partition, key: []byte("k"), value: []byte("after the swap")}.line()}),
		"produce", b.Bootstrap()), "ack")
	require.Equal(t, [][]string{{"3", strconv.FormatInt(exp.Partitions[tp].LogEndOffset, 10)}}, acks)
	b.Stop()
}

// SwapPartitions hands kafkalite's partitions tps in dir to a stopped
// broker whose log directory brokerDir already holds them (created by the
// broker with the same topic names and partition counts, so that its
// metadata knows their topic ids): in each partition directory every file
// but partition.metadata is replaced by kafkalite's, and the entries of
// tps in the root checkpoints (recovery point, log start offset, high
// watermark, cleaner offset) by kafkalite's, so that the broker, which
// shut down cleanly, loads the segments without recovering them.
func SwapPartitions(t testing.TB, dir, brokerDir string, tps []TopicPartition) {
	t.Helper()
	for _, tp := range tps {
		to := filepath.Join(brokerDir, tp.String())
		from := filepath.Join(dir, tp.String())
		entries, err := os.ReadDir(to)
		require.NoError(t, err, "the broker must have created %v", tp)
		for _, e := range entries {
			if e.Name() != "partition.metadata" {
				require.NoError(t, os.Remove(filepath.Join(to, e.Name())))
			}
		}
		entries, err = os.ReadDir(from)
		require.NoError(t, err)
		for _, e := range entries {
			if e.Name() == "partition.metadata" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(to, e.Name()), data, 0o644))
		}
	}
	for _, name := range rootCheckpoints {
		src := readOffsetCheckpoint(t, filepath.Join(dir, name))
		dst := readOffsetCheckpoint(t, filepath.Join(brokerDir, name))
		for _, tp := range tps {
			delete(dst, tp)
			if off, ok := src[tp]; ok {
				dst[tp] = off
			}
		}
		writeOffsetCheckpoint(t, filepath.Join(brokerDir, name), dst)
	}
}

// readOffsetCheckpoint reads a Kafka offset checkpoint file ("0\n<count>\n
// <topic> <partition> <offset>\n…"); a missing file is empty.
func readOffsetCheckpoint(t testing.TB, path string) map[TopicPartition]int64 {
	t.Helper()
	out := map[TopicPartition]int64{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, len(lines), 2, "%s: version and count", path)
	require.Equal(t, "0", lines[0], "%s: version", path)
	n, err := strconv.Atoi(lines[1])
	require.NoError(t, err)
	require.Len(t, lines, 2+n, "%s: entry count", path)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		require.Len(t, f, 3, "%s: entry %q", path, l)
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		out[TopicPartition{Topic: f[0], Partition: int32(p)}] = off
	}
	return out
}

func writeOffsetCheckpoint(t testing.TB, path string, entries map[TopicPartition]int64) {
	t.Helper()
	tps := make([]TopicPartition, 0, len(entries))
	for tp := range entries {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int { return strings.Compare(a.String(), b.String()) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&sb, "%s %d %d\n", tp.Topic, tp.Partition, entries[tp])
	}
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
}

// brokerTopicSpecs are create-topics lines for topics as exp holds them. A
// segment.bytes below Kafka 4's minimum (1 MiB) becomes
// internal.segment.bytes, which has none; it only decides when the broker
// rolls its own next segment.
func brokerTopicSpecs(exp *Expected, topics []string) []string {
	var out []string
	for _, name := range topics {
		spec := exp.Topics[name]
		f := []string{name, strconv.Itoa(int(spec.Partitions))}
		keys := make([]string, 0, len(spec.Config))
		for key := range spec.Config {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			v := spec.Config[key]
			if n, err := strconv.Atoi(v); key == "segment.bytes" && err == nil && n < 1<<20 {
				key = "internal.segment.bytes"
			}
			f = append(f, key+"="+v)
		}
		out = append(out, strings.Join(f, "\t"))
	}
	return out
}

// expectedLines are the record lines a consumer reads from the start of
// the topics' partitions, as the builder wrote them: a LogAppendTime
// batch's records carry its max timestamp, as Kafka's consumer reports.
func expectedLines(exp *Expected, topics []string, readCommitted bool) []string {
	var out []string
	for _, tp := range exp.SortedPartitions(topics...) {
		for _, b := range exp.ConsumerBatches(tp, readCommitted) {
			for _, r := range b.Records {
				ts := r.Timestamp
				if b.TimestampType == record.LogAppendTime {
					ts = b.MaxTimestamp
				}
				out = append(out, formatRecordLine(tp.Topic, tp.Partition, r.Offset, b.PartitionLeaderEpoch, ts, b.TimestampType,
					r.Key, r.Value, r.Headers))
			}
		}
	}
	return out
}

// lastRun is the part of a broker log written by its last start.
func lastRun(brokerLog string) string {
	i := strings.LastIndex(brokerLog, "==== kafkacheck: starting the broker")
	if i < 0 {
		return brokerLog
	}
	return brokerLog[i:]
}

// repairWords are what Kafka's log loading says when it finds a
// partition's files damaged, truncates them or rebuilds a missing index;
// recoveryWords what it says when it recovers segments at all.
var (
	repairWords   = regexp.MustCompile(`(?i)corrupt|invalid|truncat|sanity|could not find|deleting|rebuilding index`)
	recoveryWords = regexp.MustCompile(`(?i)recover`)
	// stateFrom are the lines of every load that name the offset the
	// producer state is rebuilt from: the snapshot's, so nothing is
	// replayed when it is the log end offset.
	stateFrom = regexp.MustCompile(`(?:rebuilding producer state|segment recovery) from offset (\d+)`)
	loadedLog = regexp.MustCompile(`Completed load of Log\(dir=[^,]*, topicId=[^,]*, topic=([^,]*), partition=(\d+),.*logEndOffset=(\d+)\)`)
)

// requireCleanLoad checks a broker run's log for the partitions tps, whose
// log end offsets are ends: each was loaded with that log end offset, its
// producer state came from the snapshot at that offset (unless
// recovered), nothing was found damaged, truncated or rebuilt, and the
// broker logged no error. Unless recovered is set (the run had to recover
// them: Kafka deletes the snapshots above the recovery point and replays
// the segments), no line about them mentions recovery at all.
func requireCleanLoad(t *testing.T, runLog string, ends map[TopicPartition]int64, recovered bool) {
	t.Helper()
	var names []string
	for tp := range ends {
		names = append(names, regexp.QuoteMeta(tp.String()))
	}
	about := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	loaded := map[TopicPartition]int64{}
	for _, l := range strings.Split(runLog, "\n") {
		require.NotContains(t, l, " ERROR ", "the broker logged an error")
		if m := loadedLog.FindStringSubmatch(l); m != nil {
			p, _ := strconv.Atoi(m[2])
			end, _ := strconv.ParseInt(m[3], 10, 64)
			loaded[TopicPartition{Topic: m[1], Partition: int32(p)}] = end
		}
		m := about.FindString(l)
		if m == "" {
			continue
		}
		require.False(t, repairWords.MatchString(l), "the broker repaired a swapped partition:\n%s", l)
		if f := stateFrom.FindStringSubmatch(l); f != nil && !recovered {
			var end int64
			for tp, e := range ends {
				if tp.String() == m {
					end = e
				}
			}
			require.Equal(t, strconv.FormatInt(end, 10), f[1], "the producer state comes from kafkalite's snapshot at the log end offset:\n%s", l)
			continue
		}
		if !recovered {
			require.False(t, recoveryWords.MatchString(l), "the broker recovered a swapped partition:\n%s", l)
		}
	}
	for tp, end := range ends {
		require.Contains(t, loaded, tp, "the broker loaded %v", tp)
		require.Equal(t, end, loaded[tp], "the broker's log end offset of %v", tp)
	}
}
