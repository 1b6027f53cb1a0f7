package kafkacheck

import (
	"bufio"
	"fmt"
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
// until the test ends or stop is called.
type kafkaServer struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan error
}

func startKafkaServer(t *testing.T, k *Kafka) *kafkaServer {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kafkaserver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(moduleDir(), "..", "..", "examples", "kafkaserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building examples/kafkaserver: %s", out)
	s := &kafkaServer{addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), dir: filepath.Join(t.TempDir(), "kafkalite")}
	s.cmd = exec.Command(bin, "-dir", s.dir, "-listen", s.addr)
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	// The command prints one line once it listens.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "serving")
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() { s.stop(t) })
	k.Run(t, "", "KafkaCheck", "ready", s.addr)
	return s
}

// peakMB is the running server's peak resident memory in MB (VmHWM).
func (s *kafkaServer) peakMB() float64 {
	if s.cmd == nil {
		return 0
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err == nil {
				return kb / 1000
			}
		}
	}
	return 0
}

// stop ends the server with SIGTERM (it closes the directory cleanly).
func (s *kafkaServer) stop(t *testing.T) {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		require.NoError(t, err, "the server's exit")
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Error("the server did not stop within a minute")
	}
	s.cmd = nil
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
// Then the server stops and Kafka's DumpLogSegments reads the directory it
// wrote.
func TestJavaClientsAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	for _, codec := range codecs {
		topic := "java-" + codec
		k.Client(t, "", "create-topic", s.addr, topic, "2")
		var in strings.Builder
		for i := range 40 {
			fmt.Fprintf(&in, "send\t%s\t%d\t%s\t%s\t%s\t%s\n", topic, i%2, b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("value %d", i)), b64("h"), b64(codec))
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
				got = append(got, f[7]+"="+f[8])
			}
			var want []string
			for i := range 40 {
				want = append(want, b64(fmt.Sprintf("k%d", i))+"="+b64(fmt.Sprintf("value %d", i)))
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

	// kafka-configs alters a topic's configuration incrementally.
	k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", s.addr, "--entity-type", "topics", "--entity-name", "java-lz4",
		"--alter", "--add-config", "retention.ms=86400000")
	cfgs := k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", s.addr, "--entity-type", "topics", "--entity-name", "java-lz4", "--describe")
	require.Contains(t, cfgs, "retention.ms=86400000")

	s.stop(t)
	dump := k.DumpLogSegments(t, "--files", filepath.Join(s.dir, "java-zstd-0", "00000000000000000000.log"), "--print-data-log")
	require.Contains(t, dump, "compresscodec: zstd")
	require.Contains(t, dump, "payload: value 0")
}
