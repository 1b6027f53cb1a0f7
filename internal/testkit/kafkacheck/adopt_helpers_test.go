package kafkacheck

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// This file holds what the adoption tests (adopt_test.go,
// adopt_kill_test.go) share: the records they send through Kafka's
// producer, the form in which both sides' consumers report records, and
// the readers that produce it.

// encBytes is KafkaCheck's encoding of bytes: base64, "-" for null.
func encBytes(b []byte) string {
	if b == nil {
		return "-"
	}
	return base64.StdEncoding.EncodeToString(b)
}

// sendLine is one record for KafkaCheck's produce command.
type sendLine struct {
	topic     string
	partition int32
	key       []byte
	value     []byte
	headers   [][2][]byte // key (UTF-8), value (nil for null)
}

// line is the produce command's "send" line.
func (s sendLine) line() string {
	f := []string{"send", s.topic, strconv.Itoa(int(s.partition)), encBytes(s.key), encBytes(s.value)}
	for _, h := range s.headers {
		f = append(f, encBytes(h[0]), encBytes(h[1]))
	}
	return strings.Join(f, "\t")
}

// genRecords makes n records for topic's partitions, drawn from rng: null,
// empty and binary keys and values, small and large (compressible and
// not) values, and headers with empty keys, empty values and null values.
func genRecords(rng *rand.Rand, topic string, partitions int32, n int) []sendLine {
	out := make([]sendLine, 0, n)
	for i := range n {
		s := sendLine{topic: topic, partition: rng.Int32N(partitions)}
		switch i % 9 {
		case 0:
			s.key = nil
		case 1:
			s.key = []byte{}
		case 2:
			s.key = randomBytes(rng, 1+rng.IntN(40))
		default:
			s.key = fmt.Appendf(nil, "key-%d", rng.IntN(50))
		}
		switch i % 13 {
		case 0:
			s.value = nil
		case 1:
			s.value = []byte{}
		case 2:
			s.value = randomBytes(rng, 1+rng.IntN(3000))
		default:
			s.value = []byte(strings.Repeat(fmt.Sprintf("value %d of %s; ", i, topic), 1+rng.IntN(60)))
		}
		for h := range rng.IntN(4) {
			var hv []byte
			switch rng.IntN(4) {
			case 0:
				hv = nil
			case 1:
				hv = []byte{}
			default:
				hv = randomBytes(rng, 1+rng.IntN(20))
			}
			hk := []byte(fmt.Sprintf("h%d", h))
			if rng.IntN(5) == 0 {
				hk = []byte{}
			}
			s.headers = append(s.headers, [2][]byte{hk, hv})
		}
		out = append(out, s)
	}
	return out
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// stdinLines joins produce-command lines into its standard input.
func stdinLines(ls ...[]string) string {
	var b strings.Builder
	for _, l := range ls {
		for _, s := range l {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// sendLinesOf returns the "send" lines of recs.
func sendLinesOf(recs []sendLine) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.line()
	}
	return out
}

// bothIsolations are both isolation levels, by Kafka's names.
var bothIsolations = []string{"read_uncommitted", "read_committed"}

// readResult is what a consumer read at one isolation level: the end
// offset it read to per partition ("topic-partition"), and every record as
// a line "TOPIC PARTITION OFFSET LEADER_EPOCH TIMESTAMP TYPE KEY VALUE
// [HKEY HVALUE...]" (tab-separated, bytes as encBytes prints them), sorted by
// topic, partition and offset.
type readResult struct {
	ends    map[string]int64
	records []string
}

// kafkaRead parses the output of KafkaCheck's read command, by isolation
// level.
func kafkaRead(t *testing.T, out []string) map[string]*readResult {
	t.Helper()
	res := map[string]*readResult{}
	for _, iso := range bothIsolations {
		res[iso] = &readResult{ends: map[string]int64{}}
	}
	for _, f := range Lines(out, "end") {
		require.Len(t, f, 4, "end line %q", f)
		off, err := strconv.ParseInt(f[3], 10, 64)
		require.NoError(t, err)
		res[f[0]].ends[f[1]+"-"+f[2]] = off
	}
	for _, f := range Lines(out, "record") {
		require.GreaterOrEqual(t, len(f), 9, "record line %q", f)
		res[f[0]].records = append(res[f[0]].records, strings.Join(f[1:], "\t"))
	}
	for _, r := range res {
		sortRecordLines(t, r.records)
	}
	return res
}

// sortRecordLines sorts record lines by topic, partition and offset, and
// fails t if an offset repeats.
func sortRecordLines(t *testing.T, ls []string) {
	t.Helper()
	type key struct {
		topic     string
		partition int64
		offset    int64
	}
	keyOf := func(l string) key {
		f := strings.SplitN(l, "\t", 4)
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, errors.Join(err1, err2), "record line %q", l)
		return key{f[0], p, o}
	}
	slices.SortFunc(ls, func(a, b string) int {
		ka, kb := keyOf(a), keyOf(b)
		return cmp.Or(cmp.Compare(ka.topic, kb.topic), cmp.Compare(ka.partition, kb.partition), cmp.Compare(ka.offset, kb.offset))
	})
	for i := 1; i < len(ls); i++ {
		require.NotEqual(t, keyOf(ls[i-1]), keyOf(ls[i]), "a record read twice")
	}
}

// recordLine is a kafkalite consumer record in readResult's form.
func recordLine(r *consumer.Record) string {
	return formatRecordLine(r.Topic, r.Partition, r.Offset, r.LeaderEpoch, r.Timestamp.UnixMilli(), r.TimestampType,
		r.Key, r.Value, r.Headers)
}

// formatRecordLine is a record in readResult's form.
func formatRecordLine(topic string, partition int32, offset int64, leaderEpoch int32, timestamp int64,
	typ record.TimestampType, key, value []byte, headers []record.Header) string {
	f := []string{topic, strconv.Itoa(int(partition)), strconv.FormatInt(offset, 10),
		strconv.Itoa(int(leaderEpoch)), strconv.FormatInt(timestamp, 10), typ.String(),
		encBytes(key), encBytes(value)}
	for _, h := range headers {
		hk := h.Key
		if hk == nil {
			hk = []byte{} // a header key is a string in Kafka's API: never null
		}
		f = append(f, encBytes(hk), encBytes(h.Value))
	}
	return strings.Join(f, "\t")
}

// kafkaliteRead reads every partition of topics from its beginning with
// kafkalite's consumer (assigned, no group) at an isolation level, up to
// the log end offset (read_uncommitted) or the last stable offset
// (read_committed), as Kafka's consumer reads to its end offsets.
func kafkaliteRead(t *testing.T, d *log.Dir, topics []string, isolation string) *readResult {
	t.Helper()
	cfg := consumer.DefaultConfig()
	iso := consumer.ReadUncommitted
	if isolation == "read_committed" {
		iso = consumer.ReadCommitted
	}
	cfg.IsolationLevel = iso
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	cfg.EnableAutoCommit = false
	c, err := consumer.New(d, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	res := &readResult{ends: map[string]int64{}}
	var tps []consumer.TopicPartition
	for _, topic := range topics {
		desc, err := d.DescribeTopic(topic)
		require.NoError(t, err)
		for p := range desc.Partitions {
			tp := consumer.TopicPartition{Topic: topic, Partition: p}
			tps = append(tps, tp)
			l, err := d.Partition(topic, p)
			require.NoError(t, err)
			end := l.LogEndOffset()
			if iso == consumer.ReadCommitted {
				end = l.LastStableOffset()
			}
			res.ends[tp.String()] = end
		}
	}
	require.NoError(t, c.Assign(tps))
	require.NoError(t, c.SeekToBeginning(tps...))
	deadline := time.Now().Add(time.Minute)
	for {
		done := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			require.NoError(t, err)
			done = done && pos >= res.ends[tp.String()]
		}
		if done {
			break
		}
		require.True(t, time.Now().Before(deadline), "kafkalite's consumer did not reach %v within a minute", res.ends)
		// A short wait per Poll, as KafkaCheck polls for 200 ms: a
		// partition whose last batches are markers moves without
		// returning records.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		recs, err := c.Poll(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			require.NoError(t, err)
		}
		for i := range recs {
			res.records = append(res.records, recordLine(&recs[i]))
		}
	}
	sortRecordLines(t, res.records)
	return res
}

// requireSameRecords compares two sorted record-line lists line by line
// and fails at the first difference, naming the record.
func requireSameRecords(t *testing.T, want, got []string, msg string) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			require.Failf(t, "records differ", "%s: record %d of %d\nkafka:     %s\nkafkalite: %s", msg, i, len(want), want[i], got[i])
		}
	}
	if len(want) != len(got) {
		var extra string
		if len(want) > len(got) {
			extra = "kafka has " + want[len(got)]
		} else {
			extra = "kafkalite has " + got[len(want)]
		}
		require.Failf(t, "record counts differ", "%s: kafka read %d records, kafkalite %d; first unmatched: %s", msg, len(want), len(got), extra)
	}
}

// countByTopic counts record lines per topic.
func countByTopic(ls []string) map[string]int {
	m := map[string]int{}
	for _, l := range ls {
		m[l[:strings.IndexByte(l, '\t')]]++
	}
	return m
}

// openBrokerDir opens a log directory a broker wrote with kafkalite: the
// broker's node id, everything else the defaults. What kafkalite logs at
// level Warn and above goes to warnings as well as to the test's output.
func openBrokerDir(t *testing.T, dir string, warnings *lockedBuffer) *log.Dir {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.NodeID = 1 // the harness's broker is node 1; kafkalite refuses another node's directory
	cfg.AdoptBrokerDirectory = true
	cfg.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(warnings, tWriter{t}), &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := log.Open(context.Background(), dir, cfg)
	require.NoError(t, err)
	return d
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tWriter writes to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// buildDumplog builds kafkalite's dumplog (examples/dumplog, a main
// package) into a directory of the test and returns the binary's path.
func buildDumplog(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dumplog")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/kafkalite/kafkalite/examples/dumplog")
	cmd.Dir = moduleDir()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building dumplog:\n%s", out)
	return bin
}

// runDumplog runs the dumplog binary with args and returns its exit
// status and both outputs.
func runDumplog(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}

// requireDumplogVerifies runs dumplog -verify over dir and fails t unless
// it exits 0 and says it found no problems.
func requireDumplogVerifies(t *testing.T, bin, dir string) {
	t.Helper()
	code, stdout, stderr := runDumplog(t, bin, "-verify", dir)
	require.Equal(t, 0, code, "dumplog -verify %s\nstdout:\n%s\nstderr:\n%s", dir, stdout, stderr)
	require.Contains(t, stdout, ": no problems", "dumplog -verify %s", dir)
	require.Empty(t, stderr, "dumplog -verify %s", dir)
}

// copyTree copies the tree at from to to byte for byte (regular files and
// directories; a broker writes nothing else).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	require.NoError(t, err)
}

// waitUntil polls cond every 50 ms until it holds or the deadline passes,
// then fails t with what.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited %v for %s", within, what)
		time.Sleep(50 * time.Millisecond)
	}
}

// checkpointEntry reads a Kafka offset checkpoint file ("0\n<count>\n<topic>
// <partition> <offset>\n…") and returns the entry of topic-partition, if
// any.
func checkpointEntry(path, topic string, partition int32) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == topic && f[1] == strconv.Itoa(int(partition)) {
			off, err := strconv.ParseInt(f[2], 10, 64)
			return off, err == nil
		}
	}
	return 0, false
}
