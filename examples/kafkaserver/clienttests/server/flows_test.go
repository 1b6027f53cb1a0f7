package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// The client flows: each client that can creates a topic,
// produces, consumes from the earliest offset and by timestamp, runs a
// group of two members through a rebalance with commits, carries on
// across a restart of the server (idempotently, where it can), and
// commits and aborts transactions read with both isolation levels. This
// file holds what the flows share: a client process driven line by line,
// the records of a topic as kafkalite's own consumer reads them from the
// server's directory, and the checks of the Python flow scripts, which
// print the same lines whatever their client (confluent-kafka,
// kafka-python).

// flowTimeout bounds every wait of a flow: a client that has not done
// what the test waits for by then has failed.
const flowTimeout = 90 * time.Second

// proc is a client process that a test drives: it reads the process's
// standard output line by line and writes lines to its standard input.
type proc struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     chan string   // standard output's lines, closed at its end
	exited  chan struct{} // closed once the process has been waited for
	err     error         // the process's exit, once exited is closed
	errPath string        // the file of its standard error
}

// startProc starts a client process; t.Cleanup kills it if the test
// did not finish it.
func startProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, nil, name, args...)
}

// startProcEnv is startProc with variables (NAME=VALUE) added to the
// process's environment.
func startProcEnv(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(name, args...), out: make(chan string, 1<<16), exited: make(chan struct{})}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer stderr.Close() // the process keeps its own descriptor
	p.errPath, p.cmd.Stderr = stderr.Name(), stderr
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start(), "%s %v", name, args)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.out <- sc.Text()
		}
		close(p.out)
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// stderr is what the process has written to its standard error so far.
func (p *proc) stderr() string {
	b, err := os.ReadFile(p.errPath)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// line returns the process's next line of output.
func (p *proc) line(t *testing.T) string {
	t.Helper()
	timer := time.NewTimer(flowTimeout)
	defer timer.Stop()
	select {
	case l, ok := <-p.out:
		if !ok {
			<-p.exited
			t.Fatalf("%s ended (%v) before the line the test waits for\nstderr:\n%s", p.name, p.err, p.stderr())
		}
		return l
	case <-timer.C:
		p.stuck(t, "printed nothing")
	}
	return ""
}

// lines returns the process's next n lines of output.
func (p *proc) lines(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	for range n {
		out = append(out, p.line(t))
	}
	return out
}

// until returns the lines the process prints before want.
func (p *proc) until(t *testing.T, want string) []string {
	t.Helper()
	var out []string
	for {
		l := p.line(t)
		if l == want {
			return out
		}
		out = append(out, l)
	}
}

// send writes one line to the process's standard input.
func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(t, err, "writing to %s\nstderr:\n%s", p.name, p.stderr())
}

// signal sends sig to the process.
func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// finish closes the process's standard input, waits for it to exit
// successfully and returns the lines it printed meanwhile.
func (p *proc) finish(t *testing.T) []string {
	t.Helper()
	require.NoError(t, p.stdin.Close())
	var out []string
	timer := time.NewTimer(flowTimeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-p.out:
			if ok {
				out = append(out, l)
				continue
			}
			<-p.exited
			require.NoError(t, p.err, "%s\nstderr:\n%s", p.name, p.stderr())
			return out
		case <-timer.C:
			p.stuck(t, "did not exit")
		}
	}
}

// stuck fails the test for a process that did what (printed nothing,
// did not exit) for flowTimeout. It aborts the process (SIGABRT: a
// Python script run with PYTHONFAULTHANDLER=1, as scriptFlow runs them,
// prints where each of its threads is) and shows its standard error.
func (p *proc) stuck(t *testing.T, what string) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGABRT)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
	t.Fatalf("%s %s for %v\nstderr:\n%s", p.name, what, flowTimeout, p.stderr())
}

// terminate stops a process with SIGTERM, as a user stops a consumer,
// and waits for it to exit successfully; it returns the lines printed
// meanwhile.
func (p *proc) terminate(t *testing.T) []string {
	t.Helper()
	p.signal(t, syscall.SIGTERM)
	return p.finish(t)
}

// byPartition splits lines "TAG PARTITION REST" (TAG and PARTITION
// without spaces) by partition, keeping the lines' order and REST:
// records printed as "TAG PARTITION OFFSET KEY VALUE" become "OFFSET KEY
// VALUE" per partition, as logRecords gives them. Every line must carry
// tag.
func byPartition(t *testing.T, tag string, lines []string) map[int32][]string {
	t.Helper()
	out := map[int32][]string{}
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		require.Len(t, f, 3, "line %q", l)
		require.Equal(t, tag, f[0], "line %q", l)
		p, err := strconv.ParseInt(f[1], 10, 32)
		require.NoError(t, err, "line %q", l)
		out[int32(p)] = append(out[int32(p)], f[2])
	}
	return out
}

// recordLine is a record as the flows print it, after its tag and
// partition: "OFFSET KEY VALUE".
func recordLine(offset int64, key, value string) string {
	return fmt.Sprintf("%d %s %s", offset, key, value)
}

// logRecords reads every partition of topic from the server's directory
// with kafkalite's own consumer, from the log start to the end at the
// isolation level (read_committed skips aborted records; control records
// are never returned), as "OFFSET KEY VALUE" per partition: what the
// server stored, whatever the clients saw.
func logRecords(t *testing.T, srv *servertest.Server, topic string, committed bool) map[int32][]string {
	t.Helper()
	cfg := consumer.DefaultConfig()
	if committed {
		cfg.IsolationLevel = consumer.ReadCommitted
	}
	c, err := consumer.New(srv.Dir, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	tps := topicPartitions(t, srv, topic)
	require.NoError(t, c.Assign(tps))
	require.NoError(t, c.SeekToBeginning(tps...))
	ends, err := c.EndOffsets(tps)
	require.NoError(t, err)
	out := map[int32][]string{}
	deadline := time.Now().Add(flowTimeout)
	for {
		done := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			require.NoError(t, err)
			done = done && pos >= ends[tp]
		}
		if done {
			return out
		}
		require.True(t, time.Now().Before(deadline), "reading %s to %v", topic, ends)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		recs, err := c.Poll(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			require.NoError(t, err)
		}
		for _, r := range recs {
			out[r.Partition] = append(out[r.Partition], recordLine(r.Offset, string(r.Key), string(r.Value)))
		}
	}
}

// committedOffsets returns a group's committed offsets of topic's
// partitions, as kafkalite's coordinator holds them (absent: none).
func committedOffsets(t *testing.T, srv *servertest.Server, group, topic string) map[int32]int64 {
	t.Helper()
	cfg := consumer.DefaultConfig()
	cfg.GroupID = group
	c, err := consumer.New(srv.Dir, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	got, err := c.Committed(topicPartitions(t, srv, topic))
	require.NoError(t, err)
	out := map[int32]int64{}
	for tp, om := range got {
		out[tp.Partition] = om.Offset
	}
	return out
}

// topicPartitions lists topic's partitions in the server's directory.
func topicPartitions(t *testing.T, srv *servertest.Server, topic string) []consumer.TopicPartition {
	t.Helper()
	td, err := srv.Dir.DescribeTopic(topic)
	require.NoError(t, err)
	var tps []consumer.TopicPartition
	for p := range td.Partitions {
		tps = append(tps, consumer.TopicPartition{Topic: topic, Partition: p})
	}
	return tps
}

// endOffsets returns the high watermarks of topic's partitions.
func endOffsets(t *testing.T, srv *servertest.Server, topic string) map[int32]int64 {
	t.Helper()
	out := map[int32]int64{}
	for _, tp := range topicPartitions(t, srv, topic) {
		l, err := srv.Dir.Partition(topic, tp.Partition)
		require.NoError(t, err)
		out[tp.Partition] = l.HighWatermark()
	}
	return out
}

// awaitCommitted waits until a group has committed the end of every
// partition of topic.
func awaitCommitted(t *testing.T, srv *servertest.Server, group, topic string) {
	t.Helper()
	var got, want map[int32]int64
	eventually(t, func() bool {
		got, want = committedOffsets(t, srv, group, topic), endOffsets(t, srv, topic)
		return maps.Equal(got, want)
	}, "group %s committed %v of %s, the ends are %v", group, lazy(func() any { return got }), topic, lazy(func() any { return want }))
}

// lazy formats as what its function returns when a message is made, so
// that the message of a wait that failed shows the last values it saw.
type lazy func() any

func (l lazy) String() string { return fmt.Sprint(l()) }

// groupAssignment describes a group over the wire until it is Stable
// with n members that hold one partition each, and returns the
// assignment: member id → partitions.
func groupAssignment(t *testing.T, srv *servertest.Server, group string, n int) map[string][]int32 {
	t.Helper()
	cl := client(t, srv.Addr)
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	var out map[string][]int32
	var state string
	eventually(t, func() bool {
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil || len(resp.Groups) != 1 {
			return false
		}
		g := resp.Groups[0]
		state, out = g.State, map[string][]int32{}
		for _, m := range g.Members {
			var as kmsg.ConsumerMemberAssignment
			if as.ReadFrom(m.MemberAssignment) != nil {
				return false
			}
			for _, at := range as.Topics {
				out[m.MemberID] = append(out[m.MemberID], at.Partitions...)
			}
		}
		if state != "Stable" || len(out) != n {
			return false
		}
		for _, ps := range out {
			if len(ps) != 1 {
				return false
			}
		}
		return true
	}, "group %s is %s with %v, not Stable with %d members of one partition each", group,
		lazy(func() any { return state }), lazy(func() any { return out }), n)
	return out
}

// The flow scripts (testdata/flowlib.py, with a client each in
// testdata/flow_confluent.py and testdata/flow_kafkapython.py, and
// kafkajs's testdata/kafkajs/flows.js) take the same arguments and print
// the same lines whatever their client; the functions below run one flow
// each and check its lines and the server's directory.

// scriptFlow is a flow script, the interpreter that runs it and
// variables (NAME=VALUE) for its environment beyond the test's.
// keepsGroup says that the client stays a member of its group across a
// restart of the server, as librdkafka and kafka-python do against
// Kafka's broker (which keeps the members); a client that rejoins by
// itself after its connections fail may read records again after a
// restart, from the group's committed offsets.
type scriptFlow struct {
	interpreter, script string
	env                 []string
	keepsGroup          bool
}

func (f scriptFlow) start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, append([]string{"PYTHONFAULTHANDLER=1"}, f.env...), f.interpreter, append([]string{f.script}, args...)...)
}

func (f scriptFlow) run(t *testing.T, args ...string) []string {
	t.Helper()
	return f.start(t, args...).finish(t)
}

// features asks the script what its client offers: "idempotence" and
// "transactions".
func (f scriptFlow) features(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, l := range f.run(t, "features") {
		name, v, _ := strings.Cut(l, " ")
		out[name] = v == "yes"
	}
	return out
}

// keyed are the records "k<i> v<i>" for the numbers i given, at offsets
// from offset on, as the flows produce them to one partition.
func keyed(offset int64, is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, recordLine(offset, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)))
		offset++
	}
	return out
}

// stepping returns from, from+step, ... below to.
func stepping(from, to, step int) []int {
	var out []int
	for i := from; i < to; i += step {
		out = append(out, i)
	}
	return out
}

// flowTimes: the script creates a topic of two partitions and produces
// records 0..9 (record i to partition i%2, timestamp base+10*i); reads
// them from the earliest offsets; finds by offsets_for_times the first
// offsets at base+40 (2 in both partitions: records 4 and 5) and after
// the last record (none: -1); reads from the offsets found.
func flowTimes(t *testing.T, f scriptFlow) {
	srv := servertest.Start(t, nil)
	base := time.Now().Add(-time.Minute).UnixMilli()
	out := f.run(t, "times", srv.Addr, "times", strconv.FormatInt(base, 10))
	var earliest, bytime, offsets []string
	for _, l := range out {
		switch {
		case strings.HasPrefix(l, "earliest "):
			earliest = append(earliest, l)
		case strings.HasPrefix(l, "bytime "):
			bytime = append(bytime, l)
		default:
			offsets = append(offsets, l)
		}
	}
	all := map[int32][]string{0: keyed(0, stepping(0, 10, 2)...), 1: keyed(0, stepping(1, 10, 2)...)}
	require.Equal(t, all, logRecords(t, srv, "times", false))
	require.Equal(t, all, byPartition(t, "earliest", earliest))
	require.Equal(t, []string{"time 0 2", "time 1 2", "late 0 -1", "late 1 -1"}, offsets)
	require.Equal(t, map[int32][]string{0: keyed(2, 4, 6, 8), 1: keyed(2, 5, 7, 9)}, byPartition(t, "bytime", bytime))
}

// flowGroup: the script creates a topic of two partitions and produces
// records 0..9 (record i to partition i%2); member c1 reads them all and
// commits; c2 joins and each member holds one partition ("member NAME
// PARTITION"); records 10..19 go to the members by partition; both
// commit and leave; records 20..29 are read by c3 alone, from the
// commits on.
func flowGroup(t *testing.T, f scriptFlow) {
	srv := servertest.Start(t, nil)
	out := f.run(t, "group", srv.Addr, "grouped", "pygroup")
	got := map[string][]string{}
	members := map[string]int32{}
	for _, l := range out {
		name, rest, _ := strings.Cut(l, " ")
		if name == "member" {
			m, p, _ := strings.Cut(rest, " ")
			n, err := strconv.Atoi(p)
			require.NoError(t, err, "line %q", l)
			members[m] = int32(n)
			continue
		}
		got[name] = append(got[name], l)
	}
	require.Equal(t, map[int32][]string{0: keyed(0, stepping(0, 10, 2)...), 1: keyed(0, stepping(1, 10, 2)...)},
		byPartition(t, "c1", got["c1"][:10]), "c1 alone")
	require.Len(t, members, 2, "the members' partitions: %v", members)
	require.NotEqual(t, members["c1"], members["c2"], "both members hold the same partition")
	for name, p := range members {
		rest := got[name]
		if name == "c1" {
			rest = rest[10:]
		}
		require.Equal(t, map[int32][]string{p: keyed(5, stepping(10+int(p), 20, 2)...)}, byPartition(t, name, rest), "%s after the rebalance", name)
	}
	require.Equal(t, map[int32][]string{0: keyed(10, stepping(20, 30, 2)...), 1: keyed(10, stepping(21, 30, 2)...)},
		byPartition(t, "c3", got["c3"]), "c3 from the commits on")
	require.Equal(t, map[int32]int64{0: 15, 1: 15}, committedOffsets(t, srv, "pygroup", "grouped"))
}

// flowRestart: the script produces records 0..n/2-1 (record i to
// partition i%2) and reads them in a group, committing; then it queues
// records n/2..n-1 (in flight with an idempotent producer; after a flush
// without, whose retries could duplicate a batch in flight), says
// "restart" and waits while the server restarts; then it flushes and
// reads on. Every record is in the topic once, in order, and read once.
func flowRestart(t *testing.T, f scriptFlow, idempotent bool) {
	const n = 200
	srv := servertest.Start(t, nil)
	mode := "plain"
	if idempotent {
		mode = "idempotent"
	}
	p := f.start(t, "restart", srv.Addr, "restarted", "pyrestart", strconv.Itoa(n), mode)
	before := p.until(t, "restart")
	srv.Restart(t)
	p.send(t, "go")
	after := p.finish(t)
	want := map[int32][]string{0: keyed(0, stepping(0, n, 2)...), 1: keyed(0, stepping(1, n, 2)...)}
	require.Equal(t, want, logRecords(t, srv, "restarted", false))
	lost := slices.Contains(after, "lost-member")
	require.False(t, lost && f.keepsGroup, lostMembers)
	got := byPartition(t, "c1", append(before, slices.DeleteFunc(after, func(l string) bool { return l == "lost-member" })...))
	if lost {
		got = firstReads(t, got, n/4)
	}
	require.Equal(t, want, got)
	require.Equal(t, map[int32]int64{0: n / 2, 1: n / 2}, committedOffsets(t, srv, "pyrestart", "restarted"))
}

// firstReads drops from records read ("OFFSET KEY VALUE" lines by
// partition) those read again, which a member that rejoined its group
// reads from the group's committed offset on: a record read again below
// committed fails the test.
func firstReads(t *testing.T, got map[int32][]string, committed int64) map[int32][]string {
	t.Helper()
	out := map[int32][]string{}
	for p, lines := range got {
		seen := map[string]bool{}
		for _, l := range lines {
			offset, _, _ := strings.Cut(l, " ")
			if seen[offset] {
				o, err := strconv.ParseInt(offset, 10, 64)
				require.NoError(t, err, "line %q", l)
				require.GreaterOrEqual(t, o, committed, "partition %d: offset %d read again, below the committed offset", p, o)
				continue
			}
			seen[offset] = true
			out[p] = append(out[p], l)
		}
	}
	return out
}

// lostMembers is what fails a group flow whose member lost its
// membership after a restart: Kafka's broker loads a group's members with
// the group (GroupMetadataManager.onLoaded), so a member carries on
// across a restart, its heartbeats and commits accepted, without a
// rebalance.
const lostMembers = "a member lost its membership across the restart (a rejoin, or UNKNOWN_MEMBER_ID on a heartbeat or commit), " +
	"where Kafka's broker loads a group's members with the group and accepts them"

// flowTxn: the script commits a transaction of c0..c4, aborts one of
// a0..a4, commits one of c5..c9 (one partition: offsets 0-4, marker 5,
// 6-10, marker 11, 12-16, marker 17); reads with read_committed
// ("committed" lines) and read_uncommitted ("uncommitted"); then, in a
// group, reads the committed records and writes them again to a second
// topic in a transaction that commits the group's offset (17) with
// send_offsets_to_transaction.
func flowTxn(t *testing.T, f scriptFlow) {
	srv := servertest.Start(t, nil)
	out := f.run(t, "txn", srv.Addr, "txn", "pytxn")
	var committed, uncommitted []string
	for _, l := range out {
		if strings.HasPrefix(l, "committed ") {
			committed = append(committed, l)
		} else {
			uncommitted = append(uncommitted, l)
		}
	}
	kv := func(offset int64, prefix string, is ...int) []string {
		var out []string
		for _, i := range is {
			out = append(out, recordLine(offset, fmt.Sprintf("k%d", i), fmt.Sprintf("%s%d", prefix, i)))
			offset++
		}
		return out
	}
	wantCommitted := slices.Concat(kv(0, "c", 0, 1, 2, 3, 4), kv(12, "c", 5, 6, 7, 8, 9))
	wantAll := slices.Concat(kv(0, "c", 0, 1, 2, 3, 4), kv(6, "a", 0, 1, 2, 3, 4), kv(12, "c", 5, 6, 7, 8, 9))
	require.Equal(t, map[int32][]string{0: wantCommitted}, byPartition(t, "committed", committed))
	require.Equal(t, map[int32][]string{0: wantAll}, byPartition(t, "uncommitted", uncommitted))
	require.Equal(t, map[int32][]string{0: wantCommitted}, logRecords(t, srv, "txn", true))
	require.Equal(t, map[int32][]string{0: wantAll}, logRecords(t, srv, "txn", false))
	var copied []string
	for i := range 10 {
		copied = append(copied, recordLine(int64(i), fmt.Sprintf("k%d", i), fmt.Sprintf("copy c%d", i)))
	}
	require.Equal(t, map[int32][]string{0: copied}, logRecords(t, srv, "txn-copy", true))
	require.Equal(t, map[int32]int64{0: 17}, committedOffsets(t, srv, "pytxn", "txn"))
}
