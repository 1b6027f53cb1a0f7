package kafkacheck

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kafkaServer runs examples/kafkaserver (the wire-protocol server, built
// from its module) over a directory of the test, on a free loopback port,
// until the test ends or stop is called; restart serves the same directory
// again on the same address.
type kafkaServer struct {
	addr string
	dir  string
	bin  string
	log  string // what the server printed, all its runs
	// args are the command's flags beyond -dir, -listen and the lock
	// duration override, for the next start.
	args []string
	// props is the properties file the command starts from, if any.
	props string
	cmd   *exec.Cmd
	done  chan error
}

// startKafkaServer builds and runs examples/kafkaserver with args, the
// command's further flags, and waits until Kafka's Admin client sees it
// (not for an SSL listener, whose clients need their keystores). With a
// properties file first in args (name ending in .properties), the
// command starts from it (its log.dirs overridden by the test's
// directory), s.addr is its first listener's bound address, and the
// caller checks that its clients see it.
func startKafkaServer(t *testing.T, k *Kafka, args ...string) *kafkaServer {
	t.Helper()
	root := t.TempDir()
	s := &kafkaServer{addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), dir: filepath.Join(root, "kafkalite"),
		bin: filepath.Join(root, "kafkaserver"), log: filepath.Join(root, "kafkaserver.log"), args: args}
	if len(args) > 0 && strings.HasSuffix(args[0], ".properties") {
		s.props, s.args, s.addr = args[0], args[1:], ""
	}
	build := exec.Command("go", "build", "-o", s.bin, ".")
	build.Dir = filepath.Join(moduleDir(), "..", "..", "..", "examples", "kafkaserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building examples/kafkaserver: %s", out)
	s.start(t)
	// Cleanups run last first: a failed test shows the server's log after
	// it stopped.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the server's log:\n%s", s.logTail())
		}
	})
	t.Cleanup(func() { s.stop(t) })
	if !slices.Contains(args, "-ssl.keystore.location") && s.props == "" {
		k.Run(t, "", "KafkaCheck", "ready", s.addr) // an SSL listener's clients need their keystores: the caller checks
	}
	return s
}

// start runs the server over s.dir on s.addr and waits until it prints
// that it serves.
func (s *kafkaServer) start(t *testing.T) {
	t.Helper()
	require.Nil(t, s.cmd, "the server is already running")
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	// Share groups may set a lock as short as 1 s (Kafka's minimum, 15 s,
	// would make the share flow wait that long); classic groups start
	// without the command's 3 s initial rebalance delay, as the harness's
	// Kafka broker does.
	overrides := []string{"--override", "group.share.min.record.lock.duration.ms=1000", "--override", "group.initial.rebalance.delay.ms=0"}
	args := append([]string{"-dir", s.dir, "-listen", s.addr}, overrides...)
	if s.props != "" {
		args = append([]string{s.props, "--override", "log.dirs=" + s.dir}, overrides...)
	}
	cmd := exec.Command(s.bin, append(args, s.args...)...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// The command prints one line once it listens; the rest of its output
	// goes to the log.
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || !strings.Contains(line, "serving") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		t.Fatalf("the server did not start: %q %v\n%s", line, err, s.logTail())
	}
	if s.props != "" && s.addr == "" {
		// "kafkaserver: serving DIR on NAME://host:port, ...": the first.
		_, first, _ := strings.Cut(strings.TrimSpace(line), " on ")
		first, _, _ = strings.Cut(first, ",")
		_, s.addr, _ = strings.Cut(first, "://")
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() {
		_, _ = io.Copy(logf, r)
		err := cmd.Wait()
		logf.Close()
		s.done <- err
	}()
}

// restart stops the server with SIGTERM, runs whileDown (if not nil) once
// it exited, and starts it again over the same directory on the same
// address: clients reconnect to it.
func (s *kafkaServer) restart(t *testing.T, whileDown func()) {
	t.Helper()
	s.stop(t)
	if whileDown != nil {
		whileDown()
	}
	s.start(t)
}

// peakMB is the running server's peak resident memory in MB (VmHWM).
func (s *kafkaServer) peakMB() float64 {
	if s.cmd == nil {
		return 0
	}
	return float64(readProcStats(s.cmd.Process.Pid).peakRSS) / 1e6
}

// stop ends the server with SIGTERM (it closes the directory cleanly) and
// waits for it.
func (s *kafkaServer) stop(t *testing.T) {
	t.Helper()
	if s.cmd == nil {
		return
	}
	cmd := s.cmd
	s.cmd = nil
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		require.NoError(t, err, "the server's exit; its log:\n%s", s.logTail())
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-s.done
		t.Errorf("the server did not stop within a minute; its log:\n%s", s.logTail())
	}
}

// logTail is the end of what the server printed.
func (s *kafkaServer) logTail() string {
	out, _ := os.ReadFile(s.log)
	return tail(string(out))
}

// TestJavaClientsAgainstServer: Kafka 4.4's Java clients and command-line
// tools against kafkalite's wire-protocol server: the Admin client creates
// topics; the idempotent Java producer sends keyed records with headers in
// every codec; the Java consumer reads them back at both isolation
// levels; kafka-topics lists and describes; the console producer and
// consumer round-trip lines; the producer perf test runs with acks=all; a
// consumer group commits, and kafka-consumer-groups lists, describes and
// resets it; a transactional producer commits and aborts, read_committed
// sees only the committed records, and kafka-transactions lists the id and
// describes the partition's producers; kafka-configs alters a topic.
// Records are found by timestamp (checkJavaByTime); two consumers share a
// group through a rebalance (checkJavaGroupPair); the server restarts while
// an idempotent producer and consumers carry on (checkJavaRestart), and
// kafka-transactions then describes the transactional id from the state
// the server loaded. Then the server stops and Kafka's DumpLogSegments
// reads every file of the directory it wrote (checkServerDir).
func TestJavaClientsAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	// Record i of each codec's topic goes to partition i%2 with timestamp
	// base+i s (checkJavaByTime finds them by it).
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	for _, codec := range codecs {
		topic := "java-" + codec
		k.Client(t, "", "create-topic", s.addr, topic, "2")
		var in strings.Builder
		for i := range 40 {
			fmt.Fprintf(&in, "send-at\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", topic, i%2, base+int64(i)*1000,
				b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("value %d", i)), b64("h"), b64(codec))
		}
		acks := Lines(k.Client(t, in.String(), "produce", s.addr, "compression.type="+codec, "acks=all"), "ack")
		require.Len(t, acks, 40, codec)
		out := k.Client(t, "", "read", s.addr, topic)
		for _, iso := range []string{"read_uncommitted", "read_committed"} {
			var got []string
			for _, f := range Lines(out, "record") {
				if f[0] != iso {
					continue
				}
				// ISOLATION TOPIC PARTITION OFFSET LEADER_EPOCH TIMESTAMP TYPE KEY VALUE HKEY HVALUE
				require.Equal(t, "CreateTime", f[6], codec)
				require.Equal(t, []string{b64("h"), b64(codec)}, f[9:11], codec)
				got = append(got, f[7]+"="+f[8]+"@"+f[5])
			}
			var want []string
			for i := range 40 {
				want = append(want, b64(fmt.Sprintf("k%d", i))+"="+b64(fmt.Sprintf("value %d", i))+"@"+fmt.Sprint(base+int64(i)*1000))
			}
			slices.Sort(got)
			slices.Sort(want)
			require.Equal(t, want, got, "%s %s", codec, iso)
		}
	}

	topics := k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", s.addr, "--list")
	for _, codec := range codecs {
		require.Contains(t, topics, "java-"+codec)
	}
	describe := k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", s.addr, "--describe", "--topic", "java-lz4")
	require.Contains(t, describe, "PartitionCount: 2")

	k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", s.addr, "--create", "--topic", "console", "--partitions", "1")
	k.Run(t, "one\ntwo\nthree\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", s.addr, "--topic", "console")
	lines := k.Run(t, "", "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", s.addr, "--topic", "console",
		"--partition", "0", "--offset", "earliest", "--max-messages", "3")
	require.Equal(t, "one\ntwo\nthree\n", lines)

	perf := k.Run(t, "", "org.apache.kafka.tools.ProducerPerformance", "--topic", "perf", "--num-records", "20000",
		"--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers="+s.addr, "acks=all")
	require.Contains(t, perf, "20000 records sent")

	t.Run("by timestamp", func(t *testing.T) {
		var topics []string
		for _, codec := range codecs {
			topics = append(topics, "java-"+codec)
		}
		checkJavaByTime(t, k, s, topics, base, 40)
	})

	// A group: the Java consumer subscribes and commits once caught up;
	// kafka-consumer-groups describes it and resets it to the earliest
	// offsets, which the committed offsets then show.
	recs := Lines(k.Client(t, "", "consume", s.addr, "java-lz4", "read_committed", "jg"), "rec")
	require.Len(t, recs, 40)
	committed := Lines(k.Client(t, "", "committed", s.addr, "jg"), "committed")
	var total int64
	for _, c := range committed {
		var off int64
		_, err := fmt.Sscan(c[3], &off)
		require.NoError(t, err)
		total += off
	}
	require.Equal(t, int64(40), total, "committed offsets of jg: %v", committed)
	groups := k.Run(t, "", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", s.addr, "--list")
	require.Contains(t, groups, "jg")
	desc := k.Run(t, "", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", s.addr, "--describe", "--group", "jg")
	require.Contains(t, desc, "java-lz4")
	k.Run(t, "", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", s.addr,
		"--reset-offsets", "--group", "jg", "--topic", "java-lz4", "--to-earliest", "--execute")
	for _, c := range Lines(k.Client(t, "", "committed", s.addr, "jg"), "committed") {
		require.Equal(t, "0", c[3], "after --reset-offsets --to-earliest: %v", c)
	}

	t.Run("group of two", func(t *testing.T) { checkJavaGroupPair(t, k, s, "classic") })
	t.Run("group of two, KIP-848", func(t *testing.T) { checkJavaGroupPair(t, k, s, "consumer") })
	t.Run("share group of two", func(t *testing.T) { checkJavaSharePair(t, k, s) })

	// Transactions: the Java transactional producer commits one and
	// aborts one; read_committed sees only the first.
	k.Client(t, "", "create-topic", s.addr, "java-tx", "1")
	var tx strings.Builder
	tx.WriteString("init\nbegin\n")
	for i := range 5 {
		fmt.Fprintf(&tx, "send\tjava-tx\t0\t%s\t%s\n", b64("k"), b64(fmt.Sprintf("committed %d", i)))
	}
	tx.WriteString("commit\nbegin\n")
	for i := range 5 {
		fmt.Fprintf(&tx, "send\tjava-tx\t0\t%s\t%s\n", b64("k"), b64(fmt.Sprintf("aborted %d", i)))
	}
	tx.WriteString("flush\nabort\n") // flushed first: an abort drops what was not sent yet
	k.Client(t, tx.String(), "produce", s.addr, "transactional.id=java-tx")
	byIso := map[string][]string{}
	for _, f := range Lines(k.Client(t, "", "read", s.addr, "java-tx"), "record") {
		byIso[f[0]] = append(byIso[f[0]], f[8])
	}
	require.Len(t, byIso["read_committed"], 5)
	for i, v := range byIso["read_committed"] {
		require.Equal(t, b64(fmt.Sprintf("committed %d", i)), v, "read_committed")
	}
	require.Len(t, byIso["read_uncommitted"], 10)
	txlist := k.Run(t, "", "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", s.addr, "list")
	require.Contains(t, txlist, "java-tx")

	producers := k.Run(t, "", "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", s.addr,
		"describe-producers", "--topic", "java-tx", "--partition", "0")
	require.Contains(t, producers, "ProducerId")

	t.Run("restart", func(t *testing.T) { checkJavaRestart(t, k, s, "classic") })
	t.Run("restart, KIP-848", func(t *testing.T) { checkJavaRestart(t, k, s, "consumer") })
	// The transaction coordinator the restarted server loaded knows the
	// id, its producer and its last transaction's end.
	txdesc := k.Run(t, "", "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", s.addr,
		"describe", "--transactional-id", "java-tx")
	require.Regexp(t, `(?m)^\S+\s+java-tx\s+\d+\s+\d+\s+CompleteAbort\s`, txdesc)

	// kafka-configs alters a topic's configuration incrementally.
	k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", s.addr, "--entity-type", "topics", "--entity-name", "java-lz4",
		"--alter", "--add-config", "retention.ms=86400000")
	cfgs := k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", s.addr, "--entity-type", "topics", "--entity-name", "java-lz4", "--describe")
	require.Contains(t, cfgs, "retention.ms=86400000")

	s.stop(t)
	dump := checkServerDir(t, k, s.dir)
	for _, codec := range codecs {
		for p := range int32(2) {
			require.Equal(t, []string{codec}, dumpedCodecs(t, dump, s.dir, TopicPartition{"java-" + codec, p}), "java-%s-%d", codec, p)
		}
	}
	for p := range int32(restartPartitions) {
		require.Equal(t, restartValues(p), dumpedValues(t, dump, s.dir, TopicPartition{restartTopic, p}), "%s-%d: every record once, in order", restartTopic, p)
	}
}
