package kafkacheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// partitionLine is one partition of kafka-topics --describe.
var partitionLine = regexp.MustCompile(`Partition: (\d+)\tLeader: (-?\d+)\tReplicas: ([\d,]+)\tIsr: ([\d,]*)`)

// describedPartitions runs kafka-topics --describe of topic: partition →
// leader, replicas and in-sync replicas, as the tool prints them.
func describedPartitions(t *testing.T, k *Kafka, addr, topic string) map[int][3]string {
	t.Helper()
	out := k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--describe", "--topic", topic)
	got := map[int][3]string{}
	for _, m := range partitionLine.FindAllStringSubmatch(out, -1) {
		p, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		got[p] = [3]string{m[2], m[3], m[4]}
	}
	require.NotEmpty(t, got, out)
	return got
}

// TestJavaClientsOnVirtualBrokers: the kafkaserver command as three virtual
// brokers, judged by Kafka 4.4's tools and Java clients: kafka-topics
// creates a topic of replication factor 3 and describes each partition
// with its leader among three replicas, all in sync, the leaders spread
// over the brokers; a Java producer (acks=all, idempotent) keeps writing
// while kafka-reassign-partitions moves every partition's replicas off its
// leader, so each partition changes leader (NOT_LEADER_OR_FOLLOWER, then
// the new leader); then a broker leading a partition stops (the command's
// control API: its port closes, its connections drop, its partitions move
// to their other replica) and the producer carries on, and the broker
// starts again; the Java consumer then reads every record once, in order
// per partition, those written after the moves under a higher leader
// epoch.
func TestJavaClientsOnVirtualBrokers(t *testing.T) {
	k := Get(t)
	control := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startKafkaServer(t, k, "-brokers", "3", "-default.replication.factor", "3", "-control", control)
	const topics = "org.apache.kafka.tools.TopicCommand"
	k.Run(t, "", topics, "--bootstrap-server", s.addr, "--create", "--topic", "vb", "--partitions", "3", "--replication-factor", "3")
	before := describedPartitions(t, k, s.addr, "vb")
	require.Len(t, before, 3)
	leaders := map[string]bool{}
	for p, d := range before {
		require.Len(t, strings.Split(d[1], ","), 3, "partition %d's replicas", p)
		require.ElementsMatch(t, strings.Split(d[1], ","), strings.Split(d[2], ","), "partition %d: every replica in sync", p)
		require.Contains(t, strings.Split(d[1], ","), d[0])
		leaders[d[0]] = true
	}
	require.Len(t, leaders, 3, "the leaders are spread over the brokers: %v", before)

	const n = 60
	prod := startJava(t, k, "produce", s.addr, "acks=all", "enable.idempotence=true")
	send := func(from int) {
		var lines []string
		for i := from; i < from+n; i++ {
			lines = append(lines, fmt.Sprintf("send\tvb\t%d\t%s\t%s", i%3, b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("v%d", i))))
		}
		prod.send(append(lines, "flush")...)
		for range n {
			prod.await("ack")
		}
	}
	send(0)

	// Every partition moves to its two other replicas: its leader leaves.
	var plan strings.Builder
	plan.WriteString(`{"version":1,"partitions":[`)
	for p := range 3 {
		var rest []string
		for _, r := range strings.Split(before[p][1], ",") {
			if r != before[p][0] {
				rest = append(rest, r)
			}
		}
		if p > 0 {
			plan.WriteString(",")
		}
		fmt.Fprintf(&plan, `{"topic":"vb","partition":%d,"replicas":[%s]}`, p, strings.Join(rest, ","))
	}
	plan.WriteString(`]}`)
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, []byte(plan.String()), 0o644))
	const reassign = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
	require.Contains(t, k.Run(t, "", reassign, "--bootstrap-server", s.addr, "--execute", "--reassignment-json-file", file), "Successfully started partition reassignment")
	out := k.Run(t, "", reassign, "--bootstrap-server", s.addr, "--verify", "--reassignment-json-file", file)
	for p := range 3 {
		require.Contains(t, out, fmt.Sprintf("Reassignment of partition vb-%d is completed.", p))
	}
	after := describedPartitions(t, k, s.addr, "vb")
	for p := range 3 {
		require.NotEqual(t, before[p][0], after[p][0], "partition %d's leader left", p)
		require.Len(t, strings.Split(after[p][1], ","), 2, "partition %d's replicas", p)
	}

	send(n) // the same producer, through the moves

	// A broker leading a partition stops (not the bootstrap broker, which
	// the tools below reach), and starts again after more records.
	first := strings.Split(strings.TrimSpace(s.controlOut(t, control, "brokers")), "\n")[0]
	firstID, _, _ := strings.Cut(first, " ")
	stopped := ""
	for p := range 3 {
		if after[p][0] != firstID {
			stopped = after[p][0]
			break
		}
	}
	require.NotEmpty(t, stopped, "a partition led by another broker than %s: %v", firstID, after)
	require.Equal(t, "broker "+stopped+" stopped\n", s.controlOut(t, control, "stop", stopped))
	moved := describedPartitions(t, k, s.addr, "vb")
	for p := range 3 {
		require.NotEqual(t, stopped, moved[p][0], "partition %d's leader stopped", p)
		require.NotContains(t, strings.Split(moved[p][2], ","), stopped, "partition %d's in-sync replicas", p)
	}
	send(2 * n)
	require.Equal(t, "broker "+stopped+" started\n", s.controlOut(t, control, "start", stopped))
	prod.finish()

	byPartition := map[string][]string{}
	epochs := map[string][]int{}
	for _, f := range Lines(k.Client(t, "", "read", s.addr, "vb"), "record") {
		if f[0] != "read_committed" {
			continue
		}
		byPartition[f[2]] = append(byPartition[f[2]], f[8])
		e, err := strconv.Atoi(f[4])
		require.NoError(t, err)
		epochs[f[2]] = append(epochs[f[2]], e)
	}
	for p := range 3 {
		key := strconv.Itoa(p)
		var want []string
		for i := p; i < 3*n; i += 3 {
			want = append(want, b64(fmt.Sprintf("v%d", i)))
		}
		require.Equal(t, want, byPartition[key], "partition %d: every record once, in order", p)
		es := epochs[key]
		require.Greater(t, es[len(es)-1], es[0], "partition %d: written after the move under a later leader epoch", p)
	}
}

// controlOut runs "kafkaserver control addr args..." and returns its
// output, failing t when it fails.
func (s *kafkaServer) controlOut(t *testing.T, addr string, args ...string) string {
	t.Helper()
	out, err := exec.Command(s.bin, append([]string{"control", addr}, args...)...).CombinedOutput()
	require.NoError(t, err, "kafkaserver control %v: %s", args, out)
	return string(out)
}
