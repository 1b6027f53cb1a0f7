package kafkacheck

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// This file holds the flows of TestJavaClientsAgainstServer that need more
// than one Kafka tool run after another: consuming by timestamp, a group
// of two Java consumers with a rebalance, and a restart of the server
// while a Java producer and consumers carry on; and the final check of the
// directory the server left with Kafka's DumpLogSegments.

// javaProcess is a KafkaCheck command running in the background while the
// test acts: the test writes its standard input line by line and waits for
// the lines it prints.
type javaProcess struct {
	t      *testing.T
	what   string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	lines  chan string // its standard output, closed at the end
	seen   []string    // the lines read so far
	stderr bytes.Buffer
	waited bool
}

// startJava starts KafkaCheck's command against bootstrap. The process is
// killed, if still running, when the test ends.
func startJava(t *testing.T, k *Kafka, command, bootstrap string, args ...string) *javaProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	p := &javaProcess{t: t, what: command, cancel: cancel, lines: make(chan string, 1<<16),
		cmd: k.javaCommand(ctx, "KafkaCheck", append([]string{command, bootstrap}, args...)...)}
	p.cmd.Stderr = &p.stderr
	stdin, err := p.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	p.stdin = stdin
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		if !p.waited {
			p.kill()
		}
	})
	return p
}

// send writes lines to the process's standard input.
func (p *javaProcess) send(lines ...string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		p.fail("writing %q: %v", lines, err)
	}
}

// await reads the output up to the next line whose first field is prefix
// and returns its other fields.
func (p *javaProcess) await(prefix string) []string {
	p.t.Helper()
	timeout := time.NewTimer(3 * time.Minute)
	defer timeout.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.fail("ended before printing a %q line", prefix)
			}
			p.seen = append(p.seen, l)
			if f := strings.Split(l, "\t"); f[0] == prefix {
				return f[1:]
			}
		case <-timeout.C:
			p.fail("printed no %q line within 3 minutes", prefix)
		}
	}
}

// finish ends the process's standard input, waits for it to end and
// returns every line it printed, the final "ok" removed.
func (p *javaProcess) finish() []string {
	p.t.Helper()
	_ = p.stdin.Close()
	for l := range p.lines {
		p.seen = append(p.seen, l)
	}
	err := p.cmd.Wait()
	p.waited = true
	p.cancel()
	if err != nil || len(p.seen) == 0 || p.seen[len(p.seen)-1] != "ok" {
		p.t.Fatalf("kafkacheck: KafkaCheck %s: %v\nstdout:\n%s\nstderr:\n%s", p.what, err, tail(strings.Join(p.seen, "\n")), tail(p.stderr.String()))
	}
	return p.seen[:len(p.seen)-1]
}

func (p *javaProcess) kill() {
	p.cancel()
	for l := range p.lines {
		p.seen = append(p.seen, l)
	}
	_ = p.cmd.Wait()
	p.waited = true
}

func (p *javaProcess) fail(format string, args ...any) {
	p.t.Helper()
	p.kill()
	p.t.Fatalf("kafkacheck: KafkaCheck %s %s\nstdout:\n%s\nstderr:\n%s", p.what, fmt.Sprintf(format, args...),
		tail(strings.Join(p.seen, "\n")), tail(p.stderr.String()))
}

// atoi parses a decimal field of KafkaCheck's output.
func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}

// checkJavaByTime: the n records of each topic, record i at partition
// i%2, offset i/2, with timestamp base+i s, in batches of the topic's
// codec, are found by timestamp by the Java consumer's offsetsForTimes (a
// timestamp between two records finds the later one, one before all the
// first record, one after all none), the consumer reads on from the
// offsets found, and kafka-get-offsets --time finds the same offsets.
func checkJavaByTime(t *testing.T, k *Kafka, s *kafkaServer, topics []string, base int64, n int) {
	// first is the first record i of partition p at or after ts, -1 for none.
	first := func(p int, ts int64) int {
		for i := p; i < n; i += 2 {
			if base+int64(i)*1000 >= ts {
				return i
			}
		}
		return -1
	}
	between, before, after := base+10_500, base-1, base+int64(n)*1000
	out := k.Client(t, "", "by-time", s.addr, strings.Join(topics, ","), fmt.Sprint(between), fmt.Sprint(before), fmt.Sprint(after))
	var wantAt, wantFrom, wantOffsets []string
	for _, ts := range []int64{between, before, after} {
		for _, topic := range topics {
			for p := range 2 {
				at := []string{fmt.Sprint(ts), topic, fmt.Sprint(p), "-", "-"}
				if i := first(p, ts); i >= 0 {
					at[3], at[4] = fmt.Sprint(i/2), fmt.Sprint(base+int64(i)*1000)
				}
				wantAt = append(wantAt, strings.Join(at, "\t"))
			}
		}
	}
	for _, topic := range topics {
		for p := range 2 {
			wantOffsets = append(wantOffsets, fmt.Sprintf("%s:%d:%d", topic, p, first(p, between)/2))
			for i := first(p, between); i < n; i += 2 {
				// TOPIC PARTITION OFFSET TIMESTAMP TYPE KEY VALUE
				wantFrom = append(wantFrom, strings.Join([]string{topic, fmt.Sprint(p), fmt.Sprint(i / 2), fmt.Sprint(base + int64(i)*1000),
					"CreateTime", b64(fmt.Sprintf("k%d", i)), b64(fmt.Sprintf("value %d", i))}, "\t"))
			}
		}
	}
	var gotAt, gotFrom []string
	for _, f := range Lines(out, "at") {
		gotAt = append(gotAt, strings.Join(f, "\t"))
	}
	for _, f := range Lines(out, "from") {
		gotFrom = append(gotFrom, strings.Join(f[:7], "\t"))
	}
	slices.Sort(wantFrom)
	slices.Sort(gotFrom)
	require.Equal(t, wantAt, gotAt, "offsetsForTimes")
	require.Equal(t, wantFrom, gotFrom, "the records from the offsets found for %d", between)

	offsets := k.Run(t, "", "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", s.addr,
		"--topic", "^("+strings.Join(topics, "|")+")$", "--time", fmt.Sprint(between))
	got := strings.Fields(offsets)
	slices.Sort(got)
	slices.Sort(wantOffsets)
	require.Equal(t, wantOffsets, got, "kafka-get-offsets --time %d", between)
}

// checkJavaGroupPair: two Java consumers in one group: the first consumes
// all four partitions; the second joins while it polls, and the
// partitions are split between them; the records sent then reach the
// member that owns their partition; every record is consumed exactly once
// (the first member commits before giving partitions away); and, while
// both still poll, kafka-consumer-groups --describe shows both members,
// each with its partitions, at the committed end.
//
// With protocol "consumer" the consumers use KIP-848's protocol
// (group.protocol=consumer): the coordinator assigns, and the group is a
// consumer group (kafka-consumer-groups describes it through
// ConsumerGroupDescribe).
func checkJavaGroupPair(t *testing.T, k *Kafka, s *kafkaServer, protocol string) {
	const partitions, perRound = 4, 10
	topic, group, command := "java-pair", "java-pair", "group-pair"
	if protocol == "consumer" {
		topic, group, command = "java-pair-848", "java-pair-848", "group-pair-consumer"
	}
	p := startJava(t, k, command, s.addr, topic, fmt.Sprint(partitions), group)
	p.await("caught-up")
	owner := map[string]string{} // partition → client id
	for range 2 {
		f := p.await("assigned")
		for _, part := range strings.Split(f[1], ",") {
			owner[part] = "member-" + f[0]
		}
	}
	require.Len(t, owner, partitions, "the partitions are split")
	p.await("stable")
	desc := k.Run(t, "", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", s.addr, "--describe", "--group", group)
	lines := p.finish()
	_ = os.WriteFile("/tmp/share-pair.out", []byte(strings.Join(lines, "\n")), 0o644) // DEBUG

	// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
	described := map[string]string{}
	consumers := map[string]string{} // consumer id → client id
	for _, l := range strings.Split(desc, "\n") {
		f := strings.Fields(l)
		if len(f) != 9 || f[0] != group {
			continue
		}
		require.Equal(t, topic, f[1], l)
		require.Equal(t, []string{fmt.Sprint(2 * perRound), fmt.Sprint(2 * perRound), "0"}, f[3:6], "committed at the end: %s", l)
		described[f[2]] = f[8]
		consumers[f[6]] = f[8]
	}
	require.Equal(t, owner, described, "kafka-consumer-groups --describe:\n%s", desc)
	require.Len(t, consumers, 2, "two members:\n%s", desc)

	seen := map[string]int{}
	for _, f := range Lines(lines, "rec") {
		// MEMBER PARTITION OFFSET VALUE
		require.Equal(t, f[1]+"-"+f[2], f[3], "the value at partition %s offset %s", f[1], f[2])
		seen[f[1]+"/"+f[2]]++
		if atoi(t, f[2]) >= perRound {
			require.Equal(t, owner[f[1]], "member-"+f[0], "the second round's record at partition %s offset %s", f[1], f[2])
		} else {
			require.Equal(t, "a", f[0], "the first round's record at partition %s offset %s", f[1], f[2])
		}
	}
	for part := range partitions {
		for off := range 2 * perRound {
			require.Equal(t, 1, seen[fmt.Sprintf("%d/%d", part, off)], "partition %d offset %d consumed once", part, off)
		}
	}

	// The members gone, kafka-consumer-groups resets the group's offsets
	// (a consumer group's too), which the committed offsets then show.
	k.Run(t, "", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", s.addr,
		"--reset-offsets", "--group", group, "--topic", topic, "--to-offset", "3", "--execute")
	reset := Lines(k.Client(t, "", "committed", s.addr, group), "committed")
	require.Len(t, reset, partitions, "committed offsets of %s after the reset", group)
	for _, c := range reset {
		require.Equal(t, "3", c[3], "after --reset-offsets --to-offset 3: %v", c)
	}
}

// The records of checkJavaRestart: record i ("r<i>") goes to partition
// i % restartPartitions of restartTopic.
const (
	restartTopic      = "java-restart"
	restartPartitions = 3
	restartRecords    = 1200
)

// restartValues are the values of partition p of restartTopic, in order.
func restartValues(p int32) []string {
	var values []string
	for i := p; i < restartRecords; i += restartPartitions {
		values = append(values, fmt.Sprintf("r%d", i))
	}
	return values
}

// checkJavaRestart: a Java producer with enable.idempotence=true and
// acks=all and two Java consumers (x assigned the partitions, y in a
// group committing as it goes) carry on while the server restarts: sends
// are in flight as it stops and made while it is down. Every record is
// acknowledged once, at the offset its order gives (no duplicate, no gap);
// x reads every offset exactly once from the position it had; y reads
// every offset (again only what it had not committed, if it lost its
// membership) and its committed offsets reach the end; y keeps its
// membership, as Kafka's coordinator keeps it.
//
// With protocol "consumer", y is a member of a KIP-848 consumer group,
// whose records the server loads again: y keeps its member epoch across
// the restart as it keeps its generation in a classic group.
func checkJavaRestart(t *testing.T, k *Kafka, s *kafkaServer, protocol string) {
	const partitions, batch = restartPartitions, restartRecords / 4
	topic, group, command := restartTopic, restartTopic, "stream"
	if protocol == "consumer" {
		topic, group, command = restartTopic+"-848", restartTopic+"-848", "stream-consumer"
	}
	p := startJava(t, k, command, s.addr, topic, fmt.Sprint(partitions), group)
	p.send(fmt.Sprintf("send\t0\t%d", batch), fmt.Sprintf("wait\t%d", batch))
	p.await("received")
	p.send(fmt.Sprintf("send\t%d\t%d", batch, 2*batch)) // in flight as the server stops
	s.restart(t, func() {
		p.send(fmt.Sprintf("send\t%d\t%d", 2*batch, 3*batch)) // while nothing listens
	})
	p.send(fmt.Sprintf("send\t%d\t%d", 3*batch, 4*batch), fmt.Sprintf("wait\t%d", 4*batch))
	p.await("received")
	lines := p.finish()
	_ = os.WriteFile("/tmp/share-pair.out", []byte(strings.Join(lines, "\n")), 0o644) // DEBUG

	const total = restartRecords
	acks := Lines(lines, "ack")
	require.Len(t, acks, total)
	for i, a := range acks {
		// I PARTITION OFFSET: record i is the (i/partitions)th of its partition.
		require.Equal(t, []string{fmt.Sprint(i), fmt.Sprint(i % partitions), fmt.Sprint(i / partitions)}, a, "record %d's ack", i)
	}
	recs := map[string][][]string{} // consumer → PARTITION OFFSET VALUE
	for _, f := range Lines(lines, "rec") {
		recs[f[0]] = append(recs[f[0]], f[1:])
	}
	valueAt := func(part, off int64) string { return fmt.Sprintf("r%d", off*partitions+part) }
	// x: each partition's offsets once, in order.
	next := map[int64]int64{}
	for _, r := range recs["x"] {
		part, off := atoi(t, r[0]), atoi(t, r[1])
		require.Equal(t, next[part], off, "x: partition %d goes on at its position", part)
		require.Equal(t, valueAt(part, off), r[2], "x: partition %d offset %d", part, off)
		next[part]++
	}
	for part := range int64(partitions) {
		require.Equal(t, int64(total/partitions), next[part], "x read partition %d to its end", part)
	}
	// y: each partition in order, going back only to offsets it read.
	reach, repeats := map[int64]int64{}, 0
	for _, r := range recs["y"] {
		part, off := atoi(t, r[0]), atoi(t, r[1])
		require.LessOrEqual(t, off, reach[part], "y: partition %d skips no offset", part)
		require.Equal(t, valueAt(part, off), r[2], "y: partition %d offset %d", part, off)
		if off < reach[part] {
			repeats++
		} else {
			reach[part]++
		}
	}
	var committed [][]string
	for part := range int64(partitions) {
		require.Equal(t, int64(total/partitions), reach[part], "y read partition %d to its end", part)
		committed = append(committed, []string{fmt.Sprint(part), fmt.Sprint(total / partitions)})
	}
	require.Equal(t, committed, Lines(lines, "committed"), "y's group committed the end offsets")

	// Kafka's group coordinator reloads a classic group's members from its
	// GroupMetadataValue records (GroupMetadataManager.onLoaded), and so
	// does kafkalite's: y stays in its generation across the restart, its
	// commits succeed and it reads nothing twice.
	require.Empty(t, Lines(lines, "commit-failed"), "y's commits across the restart")
	require.Zero(t, repeats, "y read records again")
}

// checkServerDir runs Kafka's DumpLogSegments with --deep-iteration over
// every file of every partition of the directory the server left (the
// group and transaction logs with their decoders) and requires that Kafka
// reports no problem and that the data topics' offsets are consecutive.
// It returns the data topics' dump.
func checkServerDir(t *testing.T, k *Kafka, dir string) *DumpOutput {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	byTopic := map[string][]string{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		tp, err := parsePartitionDir(e.Name())
		if err != nil {
			continue
		}
		for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot"} {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], Paths(PartitionFiles(t, dir, tp, ext))...)
		}
	}
	var data []string
	for topic, files := range byTopic {
		if topic != OffsetsTopic && topic != TxnStateTopic && topic != ShareStateTopic {
			data = append(data, files...)
		}
	}
	slices.Sort(data)
	out := k.Dump(t, data, "--deep-iteration", "--print-data-log")
	require.Empty(t, out.Problems, "DumpLogSegments reports no problem")
	require.Empty(t, out.NonConsecutive, "the data topics' offsets are consecutive")
	for topic, decoder := range map[string]string{OffsetsTopic: "--offsets-decoder", TxnStateTopic: "--transaction-log-decoder",
		ShareStateTopic: "--share-group-state-decoder"} {
		if files := byTopic[topic]; len(files) > 0 {
			internal := k.Dump(t, files, "--deep-iteration", decoder)
			require.Empty(t, internal.Problems, "DumpLogSegments %s reports no problem", decoder)
			switch topic {
			case OffsetsTopic:
				requireConsumerGroupRecords(t, internal)
			case ShareStateTopic:
				requireShareStateRecords(t, internal)
			}
		}
	}
	return out
}

// dumpedBatches returns the batches DumpLogSegments printed for the .log
// files of topic-partition under dir, in order.
func dumpedBatches(t *testing.T, out *DumpOutput, dir string, tp TopicPartition) []DumpedBatch {
	t.Helper()
	var batches []DumpedBatch
	for _, path := range Paths(PartitionFiles(t, dir, tp, ".log")) {
		f := out.File(path)
		require.NotNil(t, f, "%s dumped", path)
		batches = append(batches, f.Batches...)
	}
	return batches
}

// dumpedValues returns the payloads of the data records DumpLogSegments
// printed for the .log files of topic-partition under dir, in order.
func dumpedValues(t *testing.T, out *DumpOutput, dir string, tp TopicPartition) []string {
	t.Helper()
	var values []string
	for _, b := range dumpedBatches(t, out, dir, tp) {
		for _, r := range b.Records {
			if !b.IsControl && r.Payload != nil {
				values = append(values, *r.Payload)
			}
		}
	}
	return values
}

// dumpedCodecs returns the compression codecs of the batches of the .log
// files of tp under dir.
func dumpedCodecs(t *testing.T, out *DumpOutput, dir string, tp TopicPartition) []string {
	t.Helper()
	var codecs []string
	for _, b := range dumpedBatches(t, out, dir, tp) {
		if !slices.Contains(codecs, b.CompressCodec) {
			codecs = append(codecs, b.CompressCodec)
		}
	}
	return codecs
}

// requireConsumerGroupRecords: Kafka's --offsets-decoder decodes the
// records of the KIP-848 group checkJavaGroupPair made: the group's epoch,
// both members' subscriptions to its topic, and their current
// assignments, by the field names of Kafka's schemas.
func requireConsumerGroupRecords(t *testing.T, out *DumpOutput) {
	t.Helper()
	seen := map[string]int{}
	for _, f := range out.Files {
		for _, b := range f.Batches {
			for _, r := range b.Records {
				if r.Key == nil || !strings.Contains(*r.Key, `"groupId":"java-pair-848"`) || r.Payload == nil || *r.Payload == "<DELETE>" {
					continue // a tombstone (a member left) prints <DELETE>
				}
				for _, typ := range []string{"3", "5", "6", "7", "8"} {
					if strings.Contains(*r.Key, `"type":"`+typ+`"`) {
						seen[typ]++
					}
				}
				if strings.Contains(*r.Key, `"type":"5"`) {
					require.Contains(t, *r.Payload, `"subscribedTopicNames":["java-pair-848"]`, "a member's subscription as Kafka decodes it")
				}
				if strings.Contains(*r.Key, `"type":"8"`) {
					require.Contains(t, *r.Payload, `"memberEpoch"`, "a member's current assignment as Kafka decodes it")
				}
			}
		}
	}
	for _, typ := range []string{"3", "5", "6", "7", "8"} {
		require.Positive(t, seen[typ], "DumpLogSegments --offsets-decoder decoded no consumer group record of type %s (decoded: %v)", typ, seen)
	}
}

// checkJavaSharePair: two of Kafka 4.4's KafkaShareConsumers share one
// partition through a share group (KIP-932), accepting, releasing and
// rejecting as KafkaCheck's share-pair does, with a 2 s acquisition lock
// one of them sleeps past once; the server restarts once the first half of
// the records is done, and the second half is written after it. Every
// record is acknowledged as its value says by the member that got its last
// delivery; none of the first half is delivered again after the restart;
// each of the second half is acknowledged exactly once; released and
// timed-out records come back with a higher delivery count (the late
// member's acknowledgements are refused for records another member holds,
// INVALID_RECORD_STATE, and are no-ops for records done meanwhile, as
// Kafka's are: the wire tests check the refusal). kafka-share-groups lists and describes the group
// (members, start offset), resets its offset once the members left, and
// deletes it.
func checkJavaSharePair(t *testing.T, k *Kafka, s *kafkaServer) {
	const topic, group, total = "java-share", "java-share", 100
	p := startJava(t, k, "share-pair", s.addr, topic, fmt.Sprint(total), group)
	p.await("half")
	s.restart(t, nil) // the members carry on through it; the second half is written after it
	p.send("more")
	p.await("done-all")
	tool := func(args ...string) string {
		return k.Run(t, "", "org.apache.kafka.tools.consumer.group.ShareGroupCommand", append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	require.Contains(t, tool("--list"), group)
	members := tool("--describe", "--members", "--group", group)
	require.Contains(t, members, "share-a", "kafka-share-groups --describe --members:\n%s", members)
	require.Contains(t, members, "share-b", "kafka-share-groups --describe --members:\n%s", members)
	require.Equal(t, map[string]string{"0": fmt.Sprint(total)}, describeShareOffsets(t, tool("--describe", "--offsets", "--group", group)),
		"the start offset once everything is done")
	lines := p.finish()

	type delivery struct {
		member string
		count  int64
	}
	last := map[int64]delivery{} // offset → its delivery with the highest count
	afterHalf := false
	for _, l := range lines {
		f := strings.Split(l, "\t")
		switch {
		case f[0] == "half":
			afterHalf = true
		case f[0] == "rec":
			// MEMBER OFFSET DELIVERYCOUNT
			off, dc := atoi(t, f[2]), atoi(t, f[3])
			require.Positive(t, dc, "a delivery count: %s", l)
			require.False(t, afterHalf && off < total/2, "record %d, acknowledged before the restart, delivered again after it: %s", off, l)
			if d, ok := last[off]; !ok || dc > d.count {
				last[off] = delivery{f[1], dc}
			}
		}
	}
	finals := map[int64][]string{} // offset → the members whose commit of its final acknowledgement succeeded
	released := map[int64]bool{}
	for _, f := range Lines(lines, "done") {
		// MEMBER OFFSET TYPE
		off, n := atoi(t, f[1]), atoi(t, f[1])
		want := "ACCEPT"
		if n%10 == 0 {
			want = "REJECT"
		}
		switch f[2] {
		case "RELEASE":
			released[off] = true
		case want:
			finals[off] = append(finals[off], f[0])
		default:
			t.Fatalf("record %d acknowledged %s, not %s", off, f[2], want)
		}
	}
	timedOut := 0
	for n := range int64(total) {
		d, ok := last[n]
		require.True(t, ok, "record %d delivered", n)
		require.Contains(t, finals[n], d.member, "record %d: acknowledged by %s, which got its last delivery (%d)", n, d.member, d.count)
		if n >= total/2 {
			require.Len(t, finals[n], 1, "record %d, written after the restart, acknowledged once", n)
		}
		if n%7 == 0 && n%10 != 0 {
			require.GreaterOrEqual(t, d.count, int64(2), "record %d, released once, is delivered again", n)
		}
		if d.count >= 2 && !released[n] {
			timedOut++
		}
	}
	require.Positive(t, timedOut, "records whose lock ran out at member a went to member b with a higher delivery count")
	// The members gone: the offset resets to the earliest, then the group
	// is deleted.
	tool("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
	require.Equal(t, map[string]string{"0": "0"}, describeShareOffsets(t, tool("--describe", "--offsets", "--group", group)))
	tool("--delete", "--group", group)
	require.NotContains(t, tool("--list"), group)
}

// describeShareOffsets reads kafka-share-groups --describe --offsets:
// each partition's START-OFFSET, found by the header's columns.
func describeShareOffsets(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	var cols []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if slices.Contains(f, "START-OFFSET") {
			cols = f
			continue
		}
		if cols == nil || len(f) != len(cols) {
			continue
		}
		got[f[slices.Index(cols, "PARTITION")]] = f[slices.Index(cols, "START-OFFSET")]
	}
	require.NotEmpty(t, got, "kafka-share-groups --describe --offsets:\n%s", out)
	return got
}

// requireShareStateRecords: Kafka's --share-group-state-decoder decodes
// the share-partition states the share flows left in __share_group_state
// (ShareSnapshot records), by the field names of Kafka's schemas.
func requireShareStateRecords(t *testing.T, out *DumpOutput) {
	t.Helper()
	n := 0
	for _, f := range out.Files {
		for _, b := range f.Batches {
			for _, r := range b.Records {
				if r.Key == nil || r.Payload == nil || *r.Payload == "<DELETE>" {
					continue
				}
				require.Contains(t, *r.Key, `"groupId"`, "a share state key as Kafka decodes it")
				require.Contains(t, *r.Payload, `"startOffset"`, "a share state as Kafka decodes it")
				require.Contains(t, *r.Payload, `"stateBatches"`, "a share state as Kafka decodes it")
				n++
			}
		}
	}
	require.Positive(t, n, "DumpLogSegments --share-group-state-decoder decoded no share-partition state")
}
