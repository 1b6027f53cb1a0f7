package server_test

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// confluentFlow is testdata/flow_confluent.py in the first python3 on
// PATH, which imports confluent_kafka (PyPI's wheel, a current
// librdkafka), or skips the test.
func confluentFlow(t *testing.T) scriptFlow {
	return scriptFlow{interpreter: pythonWith(t, "confluent_kafka"), script: "testdata/flow_confluent.py", keepsGroup: true}
}

// TestFlowConfluentKafkaTimestamps: confluent-kafka creates a topic,
// produces with timestamps, reads from the earliest offsets and from
// offsets_for_times.
func TestFlowConfluentKafkaTimestamps(t *testing.T) { flowTimes(t, confluentFlow(t)) }

// TestFlowConfluentKafkaGroup: two confluent-kafka consumers in one
// group split a topic's two partitions after a rebalance, commit, and a
// third member resumes after their commits; with librdkafka's default
// assignors (an eager rebalance) and with cooperative-sticky.
//
// With group.protocol=consumer (KIP-848) the coordinator assigns, with its
// uniform and range assignors (group.remote.assignor).
func TestFlowConfluentKafkaGroup(t *testing.T) {
	for _, assignor := range []string{"", "cooperative-sticky"} {
		t.Run(cmp.Or(assignor, "eager"), func(t *testing.T) {
			f := confluentFlow(t)
			f.env = []string{"FLOW_ASSIGNOR=" + assignor}
			flowGroup(t, f)
		})
	}
	for _, assignor := range []string{"uniform", "range"} {
		t.Run("consumer-protocol/"+assignor, func(t *testing.T) {
			f := confluentFlow(t)
			f.env = []string{"FLOW_GROUP_PROTOCOL=consumer", "FLOW_ASSIGNOR=" + assignor}
			flowGroup(t, f)
		})
	}
}

// TestFlowConfluentKafkaRestart: an idempotent confluent-kafka producer
// with records in flight and a group consumer carry on across a restart
// of the server, with no record lost, repeated or read twice.
func TestFlowConfluentKafkaRestart(t *testing.T) { flowRestart(t, confluentFlow(t), true) }

// TestFlowConfluentKafkaTransactions: confluent-kafka commits two
// transactions and aborts one; read_committed reads the committed
// records only, read_uncommitted all; a consume-transform-produce
// transaction commits its copy and the group's offset together.
func TestFlowConfluentKafkaTransactions(t *testing.T) { flowTxn(t, confluentFlow(t)) }

// kcat's flows. Debian's kcat is 1.7.1 on librdkafka 2.0.2; its quirks,
// which the tests work with:
//   - Its producer reads standard input 1024 bytes at a time with fread,
//     before it looks for a delimiter, so a line written to a pipe that
//     stays open is produced only once 1024 more bytes follow (or at
//     the end of the input); kcat after 1.7.1 reads with select and
//     read. A test that feeds kcat slowly writes lines of exactly 1024
//     bytes ([kcatLine]).
//   - With -G, an -o offset applies to every assignment, overriding the
//     group's committed offsets: a group test sets auto.offset.reset
//     instead.
//   - It cannot create a topic (a producer's Metadata auto-creates it,
//     with the server's num.partitions) nor set a record's timestamp.
//   - It exits when every broker connection is down (a restart) unless
//     -E tells it to carry on after errors that are not fatal.
//   - Transactions: -X transactional.id=... sends everything in one
//     transaction, committed at the end of the input, aborted when kcat
//     is stopped by a signal.

// kcatLine is a record "key:value" padded with spaces to 1023 bytes, so
// that with its newline it fills one of kcat's 1024-byte reads (see
// above); trimmed strips the padding from what is read back.
func kcatLine(key, value string) string { return fmt.Sprintf("%-1023s", key+":"+value) }

// trimmed strips trailing spaces from every line.
func trimmed(m map[int32][]string) map[int32][]string {
	out := map[int32][]string{}
	for p, lines := range m {
		for _, l := range lines {
			out[p] = append(out[p], strings.TrimRight(l, " "))
		}
	}
	return out
}

// kcatArgs are a kcat command's arguments for the server.
func kcatArgs(srv *servertest.Server, args ...string) []string {
	return append([]string{"-b", srv.Addr}, args...)
}

// kcatProduce produces records "k<i>:v<i>" to one partition of topic
// with kcat, which exits at the end of its input.
func kcatProduce(t *testing.T, kcat string, srv *servertest.Server, topic string, partition int32, is []int, args ...string) {
	t.Helper()
	var in strings.Builder
	for _, i := range is {
		fmt.Fprintf(&in, "k%d:v%d\n", i, i)
	}
	run(t, in.String(), kcat, kcatArgs(srv, append([]string{"-P", "-t", topic, "-K:", "-p", strconv.Itoa(int(partition))}, args...)...)...)
}

// kcatRead reads topic with kcat from the beginning to its end, with the
// extra arguments, as "TAG PARTITION OFFSET KEY VALUE" lines split by
// partition.
func kcatRead(t *testing.T, kcat string, srv *servertest.Server, topic string, args ...string) map[int32][]string {
	t.Helper()
	out := run(t, "", kcat, kcatArgs(srv, append([]string{"-C", "-t", topic, "-e", "-q", "-f", "r %p %o %k %s\n"}, args...)...)...)
	return byPartition(t, "r", strings.Split(strings.TrimSuffix(out, "\n"), "\n"))
}

// kcatMember starts a kcat group member (-G) that prints each record as
// "NAME PARTITION OFFSET KEY VALUE" at once, commits every 100 ms and
// carries on when the server is down (-E), with the extra arguments.
func kcatMember(t *testing.T, kcat string, srv *servertest.Server, name, group, topic string, args ...string) *proc {
	return startProc(t, kcat, kcatArgs(srv, append([]string{"-G", group, topic, "-u", "-E", "-f", name + " %p %o %k %s\n",
		"-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=100"}, args...)...)...)
}

// awaitEnd waits until partition 0 of topic, created by a client
// meanwhile, holds n records (its high watermark).
func awaitEnd(t *testing.T, srv *servertest.Server, topic string, n int64) {
	t.Helper()
	end := int64(-1)
	eventually(t, func() bool {
		if l, err := srv.Dir.Partition(topic, 0); err == nil {
			end = l.HighWatermark()
		}
		return end >= n
	}, "%s-0 ends at %v, not %d", topic, lazy(func() any { return end }), n)
}

// TestFlowKcatTimestamps: kcat reads a topic from a timestamp (-o s@),
// up to one (-o e@), and queries offsets by time (-Q). kcat cannot set
// timestamps: the second batch is produced once the clock has passed
// the end of the first, so that the first's timestamps are all below
// the time the test queries and the second's at or above it.
func TestFlowKcatTimestamps(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, nil)
	kcatProduce(t, kcat, srv, "kts", 0, stepping(0, 5, 1))
	mid := time.Now().UnixMilli() + 1
	eventually(t, func() bool { return time.Now().UnixMilli() >= mid }, "the clock did not pass %d", mid)
	kcatProduce(t, kcat, srv, "kts", 0, stepping(5, 10, 1))
	first, second := map[int32][]string{0: keyed(0, stepping(0, 5, 1)...)}, map[int32][]string{0: keyed(5, stepping(5, 10, 1)...)}
	require.Equal(t, map[int32][]string{0: keyed(0, stepping(0, 10, 1)...)}, logRecords(t, srv, "kts", false))
	require.Equal(t, second, kcatRead(t, kcat, srv, "kts", "-o", fmt.Sprintf("s@%d", mid)))
	require.Equal(t, first, kcatRead(t, kcat, srv, "kts", "-o", "beginning", "-o", fmt.Sprintf("e@%d", mid)))
	require.Equal(t, "kts [0] offset 5\n", run(t, "", kcat, kcatArgs(srv, "-Q", "-t", fmt.Sprintf("kts:0:%d", mid))...))
	require.Equal(t, "kts [0] offset -1\n", run(t, "", kcat, kcatArgs(srv, "-Q", "-t", fmt.Sprintf("kts:0:%d", time.Now().Add(time.Hour).UnixMilli()))...))
}

// TestFlowKcatGroup: a kcat group member (-G) reads both partitions of a
// topic and commits; a second member joins while the first runs, and
// after the rebalance each holds one partition and reads the new
// records of its own; both stop (SIGTERM), committing; a third member
// reads only what came after their commits. With librdkafka's default
// assignors (range, roundrobin: an eager rebalance) and with
// cooperative-sticky (incremental: the first member keeps one partition
// throughout).
func TestFlowKcatGroup(t *testing.T) {
	kcat := requireTool(t, "kcat")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"eager", nil},
		{"cooperative-sticky", []string{"-X", "partition.assignment.strategy=cooperative-sticky"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := servertest.Start(t, func(c *server.Config) { c.NumPartitions = 2 })
			produce := func(from, to int) {
				kcatProduce(t, kcat, srv, "kgroup", 0, stepping(from, to, 2))
				kcatProduce(t, kcat, srv, "kgroup", 1, stepping(from+1, to, 2))
			}
			produce(0, 10)
			a := kcatMember(t, kcat, srv, "a", "kg", "kgroup", tc.args...)
			require.Equal(t, map[int32][]string{0: keyed(0, stepping(0, 10, 2)...), 1: keyed(0, stepping(1, 10, 2)...)},
				byPartition(t, "a", a.lines(t, 10)), "the first member alone")
			awaitCommitted(t, srv, "kg", "kgroup")
			b := kcatMember(t, kcat, srv, "b", "kg", "kgroup", tc.args...)
			groupAssignment(t, srv, "kg", 2)
			produce(10, 20)
			gotA, gotB := byPartition(t, "a", a.lines(t, 5)), byPartition(t, "b", b.lines(t, 5))
			require.Len(t, gotA, 1, "a read %v", gotA)
			require.Len(t, gotB, 1, "b read %v", gotB)
			for _, got := range []map[int32][]string{gotA, gotB} {
				for p, lines := range got {
					require.Equal(t, keyed(5, stepping(10+int(p), 20, 2)...), lines, "partition %d after the rebalance", p)
				}
			}
			require.Empty(t, byPartition(t, "a", a.terminate(t)))
			require.Empty(t, byPartition(t, "b", b.terminate(t)))
			require.Equal(t, map[int32]int64{0: 10, 1: 10}, committedOffsets(t, srv, "kg", "kgroup"))
			produce(20, 30)
			out := run(t, "", kcat, kcatArgs(srv, append([]string{"-G", "kg", "kgroup", "-e", "-q", "-f", "c %p %o %k %s\n"}, tc.args...)...)...)
			require.Equal(t, map[int32][]string{0: keyed(10, stepping(20, 30, 2)...), 1: keyed(10, stepping(21, 30, 2)...)},
				byPartition(t, "c", strings.Split(strings.TrimSuffix(out, "\n"), "\n")), "the third member, from the commits on")
		})
	}
}

// TestFlowKcatRestart: a kcat producer fed slowly and a kcat group
// member carry on across a restart of the server: every record is in
// the topic once, in order, and the member reads each once.
func TestFlowKcatRestart(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, nil)
	const n = 100
	prod := startProc(t, kcat, kcatArgs(srv, "-P", "-t", "krestart", "-K:", "-p", "0", "-E")...)
	for i := range n / 2 {
		prod.send(t, kcatLine(fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)))
	}
	awaitEnd(t, srv, "krestart", n/2)
	member := kcatMember(t, kcat, srv, "m", "kr", "krestart")
	got := member.lines(t, n/2)
	awaitCommitted(t, srv, "kr", "krestart")
	srv.Restart(t)
	for i := n / 2; i < n; i++ {
		prod.send(t, kcatLine(fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)))
	}
	require.Empty(t, prod.finish(t))
	want := map[int32][]string{0: keyed(0, stepping(0, n, 1)...)}
	require.Equal(t, want, trimmed(logRecords(t, srv, "krestart", false)))
	got = append(got, member.lines(t, n/2)...)
	got = append(got, member.terminate(t)...)
	stderr := member.stderr()
	require.Equal(t, 1, strings.Count(stderr, "assigned:"), "%s: a rejoin after the restart\n%s", lostMembers, stderr)
	require.NotContains(t, stderr, "Unknown member", "%s: a commit refused", lostMembers)
	require.Equal(t, want, trimmed(byPartition(t, "m", got)))
	require.Equal(t, map[int32]int64{0: n}, committedOffsets(t, srv, "kr", "krestart"))
}

// TestFlowKcatIdempotentRestart: an idempotent kcat producer
// (enable.idempotence=true) fed without pause is restarted under: the
// batches in flight when the server stops are sent again to the new
// one, which keeps them once. Every record is in the topic once, in
// order.
func TestFlowKcatIdempotentRestart(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, nil)
	const n = 2000
	prod := startProc(t, kcat, kcatArgs(srv, "-P", "-t", "kidem", "-K:", "-p", "0", "-E", "-X", "enable.idempotence=true")...)
	written := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := fmt.Fprintln(prod.stdin, kcatLine(fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	awaitEnd(t, srv, "kidem", n/4)
	srv.Restart(t)
	require.NoError(t, <-written)
	require.Empty(t, prod.finish(t))
	require.Equal(t, map[int32][]string{0: keyed(0, stepping(0, n, 1)...)}, trimmed(logRecords(t, srv, "kidem", false)))
	require.Equal(t, map[int32][]string{0: keyed(0, stepping(0, n, 1)...)}, trimmed(kcatRead(t, kcat, srv, "kidem")))
}

// TestFlowKcatTransactions: kcat commits a transaction at the end of its
// input and aborts one when stopped by SIGINT (after its records are
// written); kcat's consumer, read_committed by default (librdkafka's
// default isolation level), reads only the committed records, and with
// isolation.level=read_uncommitted all of them.
func TestFlowKcatTransactions(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, nil)
	txn := []string{"-X", "transactional.id=ktx"}
	kcatProduce(t, kcat, srv, "ktxn", 0, stepping(0, 5, 1), txn...)
	aborted := startProc(t, kcat, kcatArgs(srv, append([]string{"-P", "-t", "ktxn", "-K:", "-p", "0"}, txn...)...)...)
	for i := range 5 {
		aborted.send(t, kcatLine(fmt.Sprintf("a%d", i), fmt.Sprintf("aborted %d", i)))
	}
	awaitEnd(t, srv, "ktxn", 11) // five committed, their marker, five in the open transaction
	aborted.signal(t, syscall.SIGINT)
	aborted.finish(t)
	require.Contains(t, aborted.stderr(), "Aborting transaction")
	kcatProduce(t, kcat, srv, "ktxn", 0, stepping(5, 10, 1), txn...)
	var abortedRecs []string
	for i := range 5 {
		abortedRecs = append(abortedRecs, recordLine(int64(6+i), fmt.Sprintf("a%d", i), fmt.Sprintf("aborted %d", i)))
	}
	committed := map[int32][]string{0: slices.Concat(keyed(0, stepping(0, 5, 1)...), keyed(12, stepping(5, 10, 1)...))}
	all := map[int32][]string{0: slices.Concat(keyed(0, stepping(0, 5, 1)...), abortedRecs, keyed(12, stepping(5, 10, 1)...))}
	require.Equal(t, committed, trimmed(logRecords(t, srv, "ktxn", true)))
	require.Equal(t, all, trimmed(logRecords(t, srv, "ktxn", false)))
	require.Equal(t, committed, trimmed(kcatRead(t, kcat, srv, "ktxn")))
	require.Equal(t, all, trimmed(kcatRead(t, kcat, srv, "ktxn", "-X", "isolation.level=read_uncommitted")))
}
