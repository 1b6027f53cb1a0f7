package server_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// franz-go's flows that server_test.go, groups_test.go and txns_test.go
// do not already run: its admin package kadm, offsets by time through
// it, an idempotent produce whose answer is lost across a restart, and
// a group of two carrying on across a restart; and what the flows of the
// Go clients share.

// sentLines are produced records where the producer was told they went,
// as logRecords gives a partition's records: "OFFSET KEY VALUE" in
// offset order. at says where a record went and what it holds.
func sentLines[R any](recs []R, at func(R) (partition int32, offset int64, key, value string)) map[int32][]string {
	type line struct {
		offset int64
		text   string
	}
	byPartition := map[int32][]line{}
	for _, r := range recs {
		p, off, k, v := at(r)
		byPartition[p] = append(byPartition[p], line{off, recordLine(off, k, v)})
	}
	out := map[int32][]string{}
	for p, lines := range byPartition {
		slices.SortFunc(lines, func(a, b line) int { return cmp.Compare(a.offset, b.offset) })
		for _, l := range lines {
			out[p] = append(out[p], l.text)
		}
	}
	return out
}

// kgoSent are franz-go's produced records as sentLines gives them.
func kgoSent(recs ...[]*kgo.Record) map[int32][]string {
	return sentLines(slices.Concat(recs...), func(r *kgo.Record) (int32, int64, string, string) {
		return r.Partition, r.Offset, string(r.Key), string(r.Value)
	})
}

// kgoRecords are records "k<i> <prefix><i>" for i in [from, to) to topic,
// record i in partition i%partitions (with a manual partitioner).
func kgoRecords(topic, prefix string, from, to int, partitions int32) []*kgo.Record {
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Key: fmt.Appendf(nil, "k%d", i),
			Value: fmt.Appendf(nil, "%s%d", prefix, i)})
	}
	return recs
}

// kgoLines reads n records with a franz-go consumer and returns them as
// logRecords gives them, by partition in the order read.
func kgoLines(t *testing.T, cl *kgo.Client, n int) map[int32][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	got := map[int32][]string{}
	for read := 0; read < n; {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read %d of %d records", read, n)
		fs.EachError(func(topic string, p int32, err error) { require.NoError(t, err, "%s-%d", topic, p) })
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], recordLine(r.Offset, string(r.Key), string(r.Value)))
			read++
		})
	}
	return got
}

// lostAnswerProxy stands between a client and the server (the server
// advertises the proxy's address, so that every connection goes through
// it) and forwards Kafka's frames both ways, except the answer to the
// nth Produce request: it holds that answer, closes lost, waits until
// resume is closed (the test restarts the server meanwhile) and closes
// the client's connection instead of answering, as when a broker goes
// away after appending a batch and before answering. An idempotent
// producer sends the batch again, with its sequence, to the restarted
// server, which must find it already appended.
type lostAnswerProxy struct {
	Addr   string
	lost   chan struct{}
	resume chan struct{}

	target   atomic.Pointer[string]
	produces atomic.Int64
	n        int64
	done     chan struct{} // closed by t.Cleanup

	mu    sync.Mutex
	conns []net.Conn

	stopOnce sync.Once
}

// stop closes the proxy's connections and releases an answer it holds,
// so that a client waiting for it gives up; the test's cleanup calls it,
// and a failed test before closing its client.
func (p *lostAnswerProxy) stop() {
	p.stopOnce.Do(func() {
		close(p.done)
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
}

// startLostAnswerProxy listens on a loopback port; the server's address
// is set with setTarget before a client connects.
func startLostAnswerProxy(t *testing.T, n int64) *lostAnswerProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &lostAnswerProxy{Addr: ln.Addr().String(), lost: make(chan struct{}), resume: make(chan struct{}), n: n, done: make(chan struct{})}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		p.stop()
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.serve(c)
			}()
		}
	}()
	return p
}

func (p *lostAnswerProxy) setTarget(addr string) { p.target.Store(&addr) }

// serve forwards one client connection's requests and answers.
func (p *lostAnswerProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", *p.target.Load())
	if err != nil {
		return
	}
	defer s.Close()
	p.mu.Lock()
	select {
	case <-p.done: // the cleanup has closed the connections it knew
		p.mu.Unlock()
		return
	default:
	}
	p.conns = append(p.conns, c, s)
	p.mu.Unlock()
	// The answers come in the order of the requests: the index of the
	// request whose answer is lost goes from one side to the other.
	drop := make(chan int, 1)
	go func() {
		defer s.Close()
		for i := 0; ; i++ {
			frame, err := readKafkaFrame(c)
			if err != nil {
				return
			}
			if binary.BigEndian.Uint16(frame[4:]) == uint16(kmsg.Produce.Int16()) && p.produces.Add(1) == p.n {
				drop <- i
			}
			if _, err := s.Write(frame); err != nil {
				return
			}
		}
	}()
	dropAt := -1
	for i := 0; ; i++ {
		frame, err := readKafkaFrame(s)
		if err != nil {
			return
		}
		select {
		case dropAt = <-drop:
		default:
		}
		if i == dropAt {
			close(p.lost)
			select {
			case <-p.resume:
			case <-p.done:
			}
			return
		}
		if _, err := c.Write(frame); err != nil {
			return
		}
	}
}

// readKafkaFrame reads one size-prefixed frame, with its size.
func readKafkaFrame(r io.Reader) ([]byte, error) {
	size := make([]byte, 4, 256)
	if _, err := io.ReadFull(r, size); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size)
	if n < 4 || n > 1<<30 {
		return nil, fmt.Errorf("a frame of %d bytes", n)
	}
	frame := append(size, make([]byte, n)...)
	_, err := io.ReadFull(r, frame[4:])
	return frame, err
}

// TestFlowKgoIdempotentLostAnswer: franz-go's idempotent producer sends
// records one by one; the answer to one produce is lost and the server
// restarts before the producer hears of it; the producer sends the batch
// again to the restarted server, which recognizes it by its producer id
// and sequence (the producer state survives the restart) and answers
// with its offset: the log holds every record once, where the producer
// was told.
func TestFlowKgoIdempotentLostAnswer(t *testing.T) {
	proxy := startLostAnswerProxy(t, 10)
	srv := servertest.Start(t, func(c *server.Config) { c.AdvertisedAddr = proxy.Addr })
	proxy.setTarget(srv.Addr)
	prod := client(t, proxy.Addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(100))
	createTopic(t, prod, "kgo-lost", 2)
	recs := kgoRecords("kgo-lost", "v", 0, 40, 2)
	done := make(chan error, 1)
	go func() {
		for _, r := range recs {
			if err := prod.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case <-proxy.lost:
	case err := <-done:
		t.Fatalf("every record acknowledged (%v), none lost", err)
	}
	srv.Restart(t)
	close(proxy.resume)
	require.NoError(t, <-done)
	require.Equal(t, kgoSent(recs), logRecords(t, srv, "kgo-lost", false))
}

// TestFlowKgoAdmin runs kadm's admin calls against the server:
// CreateTopics (with a config; a second time refused), ListTopics,
// ListStartOffsets, ListEndOffsets and ListOffsetsAfterMilli (a franz-go
// consumer reads exactly the records from the offsets for a time; after
// the last record kadm gives the end offset for the server's -1);
// ListGroups, DescribeGroups, FetchOffsets and Lag of a group whose
// member read everything and committed; DeleteGroups refused while it
// has a member; CommitOffsets while it is empty, from which a new member
// resumes; DeleteGroups, after which the group and its offsets are gone.
func TestFlowKgoAdmin(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	ctx := context.Background()

	retention := "3600000"
	created, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": &retention}, "kadm", "kadm-other")
	require.NoError(t, err)
	for _, name := range []string{"kadm", "kadm-other"} {
		r := created[name]
		require.NoError(t, r.Err, name)
		require.Equal(t, int32(3), r.NumPartitions, name)
		require.NotNil(t, r.Configs["retention.ms"].Value, name)
		require.Equal(t, retention, *r.Configs["retention.ms"].Value, name)
	}
	_, err = adm.CreateTopic(ctx, 1, 1, nil, "kadm")
	require.ErrorIs(t, err, kerr.TopicAlreadyExists)
	topics, err := adm.ListTopics(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"kadm", "kadm-other"}, topics.Names())
	require.Len(t, topics["kadm"].Partitions, 3)

	// Records 0..29, record i in partition i%3 at minute i.
	base := time.UnixMilli(1_700_000_000_000)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	recs := kgoRecords("kadm", "v", 0, 30, 3)
	for i, r := range recs {
		r.Timestamp = at(i)
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	all := map[int32][]string{0: keyed(0, stepping(0, 30, 3)...), 1: keyed(0, stepping(1, 30, 3)...), 2: keyed(0, stepping(2, 30, 3)...)}
	require.Equal(t, all, logRecords(t, srv, "kadm", false))

	offsets := func(l kadm.ListedOffsets, err error) map[int32]int64 {
		t.Helper()
		require.NoError(t, err)
		require.NoError(t, l.Error())
		out := map[int32]int64{}
		l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
		return out
	}
	require.Equal(t, map[int32]int64{0: 0, 1: 0, 2: 0}, offsets(adm.ListStartOffsets(ctx, "kadm")))
	require.Equal(t, map[int32]int64{0: 10, 1: 10, 2: 10}, offsets(adm.ListEndOffsets(ctx, "kadm")))
	// Minute 14: record 15 in partition 0, 16 in 1, 14 (exact) in 2.
	after, err := adm.ListOffsetsAfterMilli(ctx, at(14).UnixMilli(), "kadm")
	require.Equal(t, map[int32]int64{0: 5, 1: 5, 2: 4}, offsets(after, err))
	for p, i := range map[int32]int{0: 15, 1: 16, 2: 14} {
		o, _ := after.Lookup("kadm", p)
		require.Equal(t, at(i).UnixMilli(), o.Timestamp, "partition %d", p)
	}
	require.Equal(t, map[int32]int64{0: 10, 1: 10, 2: 10}, offsets(adm.ListOffsetsAfterMilli(ctx, at(30).UnixMilli(), "kadm")),
		"kadm's end offsets for the server's -1")
	fromTime := client(t, srv.Addr, kgo.ConsumePartitions(after.KOffsets()))
	require.Equal(t, map[int32][]string{0: keyed(5, 15, 18, 21, 24, 27), 1: keyed(5, 16, 19, 22, 25, 28), 2: keyed(4, 14, 17, 20, 23, 26, 29)},
		kgoLines(t, fromTime, 16))

	// A group whose member read everything and committed.
	m := startKgoMember(t, srv.Addr, "kadm-g", "kadm")
	eventually(t, func() bool { return countLines(m.lines()) >= 30 }, "the member read %d of 30 records", countLines(m.lines()))
	require.Equal(t, all, m.lines())
	ends := map[int32]int64{0: 10, 1: 10, 2: 10}
	committed := func() map[int32]int64 {
		resps, err := adm.FetchOffsets(ctx, "kadm-g")
		require.NoError(t, err)
		require.NoError(t, resps.Error())
		out := map[int32]int64{}
		resps.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
		return out
	}
	eventually(t, func() bool { return maps.Equal(ends, committed()) }, "the group committed %v, not the ends", committed())
	listed, err := adm.ListGroups(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"kadm-g"}, listed.Groups())
	require.Equal(t, "consumer", listed["kadm-g"].ProtocolType)
	require.Equal(t, "Stable", listed["kadm-g"].State)
	described, err := adm.DescribeGroups(ctx, "kadm-g")
	require.NoError(t, err)
	require.NoError(t, described.Error())
	g := described["kadm-g"]
	require.Equal(t, "Stable", g.State)
	require.Len(t, g.Members, 1)
	require.Equal(t, kadm.TopicsSet{"kadm": {0: {}, 1: {}, 2: {}}}, g.AssignedPartitions())
	lags, err := adm.Lag(ctx, "kadm-g")
	require.NoError(t, err)
	lag := lags["kadm-g"]
	require.NoError(t, lag.Error())
	for p := range int32(3) {
		l, ok := lag.Lag.Lookup("kadm", p)
		require.True(t, ok, "partition %d", p)
		require.NoError(t, l.Err)
		require.Zero(t, l.Lag, "partition %d", p)
	}
	deleted, err := adm.DeleteGroups(ctx, "kadm-g")
	require.NoError(t, err)
	require.ErrorIs(t, deleted["kadm-g"].Err, kerr.NonEmptyGroup)
	m.close()
	require.Empty(t, m.failures())

	// Offsets committed by the admin while the group is empty; a new
	// member resumes from them.
	set := kadm.Offsets{"kadm": {
		0: {Topic: "kadm", Partition: 0, At: 2, LeaderEpoch: -1},
		1: {Topic: "kadm", Partition: 1, At: 7, LeaderEpoch: -1},
		2: {Topic: "kadm", Partition: 2, At: 10, LeaderEpoch: -1},
	}}
	require.NoError(t, adm.CommitAllOffsets(ctx, "kadm-g", set))
	require.Equal(t, map[int32]int64{0: 2, 1: 7, 2: 10}, committed())
	m = startKgoMember(t, srv.Addr, "kadm-g", "kadm")
	eventually(t, func() bool { return countLines(m.lines()) >= 11 }, "the new member read %d of 11 records", countLines(m.lines()))
	require.Equal(t, map[int32][]string{0: all[0][2:], 1: all[1][7:]}, m.lines())
	m.close()
	require.Empty(t, m.failures())

	deleted, err = adm.DeleteGroups(ctx, "kadm-g")
	require.NoError(t, err)
	require.NoError(t, deleted["kadm-g"].Err)
	listed, err = adm.ListGroups(ctx)
	require.NoError(t, err)
	require.Empty(t, listed.Groups())
	require.Empty(t, committed(), "the deleted group's offsets")
}

// kgoMember is a franz-go group member: it keeps the partitions it holds
// and every record it reads ("OFFSET KEY VALUE" by partition), and
// commits after each poll, before a rebalance may take the partitions
// away (BlockRebalanceOnPoll).
type kgoMember struct {
	cl   *kgo.Client
	done chan struct{}

	readLines

	mu    sync.Mutex
	parts map[int32]bool // the partitions it holds
	errs  []error
	ended bool
}

func startKgoMember(t *testing.T, addr, group, topic string) *kgoMember {
	t.Helper()
	m := &kgoMember{done: make(chan struct{}), parts: map[int32]bool{}}
	change := func(add bool) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, p := range parts[topic] {
				if add {
					m.parts[p] = true
				} else {
					delete(m.parts, p)
				}
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.HeartbeatInterval(200*time.Millisecond),
		kgo.OnPartitionsAssigned(change(true)), kgo.OnPartitionsRevoked(change(false)), kgo.OnPartitionsLost(change(false)))
	require.NoError(t, err)
	m.cl = cl
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			m.mu.Lock()
			fs.EachError(func(topic string, p int32, err error) {
				m.errs = append(m.errs, fmt.Errorf("%s-%d: %w", topic, p, err))
			})
			m.mu.Unlock()
			fs.EachRecord(func(r *kgo.Record) { m.add(r.Partition, r.Offset, r.Key, r.Value) })
			if err := cl.CommitUncommittedOffsets(context.Background()); err != nil {
				m.mu.Lock()
				m.errs = append(m.errs, fmt.Errorf("commit: %w", err))
				m.mu.Unlock()
			}
			cl.AllowRebalance()
		}
	}()
	t.Cleanup(m.close)
	return m
}

// close leaves the group and waits for the member's loop to end.
func (m *kgoMember) close() {
	m.mu.Lock()
	ended := m.ended
	m.ended = true
	m.mu.Unlock()
	if !ended {
		m.cl.Close()
		<-m.done
	}
}

// failures are the errors the member's polls and commits returned.
func (m *kgoMember) failures() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.errs)
}

// held are the partitions the member holds, sorted.
func (m *kgoMember) held() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.parts))
}

// readLines is what a group member has read: "OFFSET KEY VALUE" by
// partition, in the order read. It is safe for concurrent use.
type readLines struct {
	mu  sync.Mutex
	got map[int32][]string
}

func (r *readLines) add(p int32, offset int64, key, value []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[int32][]string{}
	}
	r.got[p] = append(r.got[p], recordLine(offset, string(key), string(value)))
}

// lines is a copy of what the member has read.
func (r *readLines) lines() map[int32][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int32][]string{}
	for p, lines := range r.got {
		out[p] = slices.Clone(lines)
	}
	return out
}

// groupMember is a member of a Go client's group flow.
type groupMember interface {
	lines() map[int32][]string // what it has read, by partition
	held() []int32             // the partitions it holds, sorted
}

// requireReadBy waits until members have read want between them, beyond
// what each had read before (by member), checks that each read only
// from partitions it holds, then waits until committed gives the
// topic's end offsets.
func requireReadBy(t *testing.T, srv *servertest.Server, topic string, want map[int32][]string,
	members map[groupMember]map[int32][]string, committed func() (map[int32]int64, error)) {
	t.Helper()
	got := map[int32][]string{}
	eventually(t, func() bool {
		clear(got)
		for m, before := range members {
			for p, lines := range since(m.lines(), before) {
				got[p] = append(got[p], lines...)
			}
		}
		return countLines(got) >= countLines(want)
	}, "the members read %d of %d records", countLines(got), countLines(want))
	for m, before := range members {
		require.Subset(t, m.held(), slices.Collect(maps.Keys(since(m.lines(), before))), "a member read a partition it does not hold")
	}
	require.Equal(t, want, got)
	ends := endOffsets(t, srv, topic)
	var offsets map[int32]int64
	eventually(t, func() bool {
		var err error
		offsets, err = committed()
		return err == nil && maps.Equal(ends, offsets)
	}, "the group committed %v, not the ends %v", offsets, ends)
}

// requireSplit waits until members a and b hold two of four partitions
// each, none held by both, and ready (when not nil) holds.
func requireSplit(t *testing.T, a, b groupMember, ready func() bool) {
	t.Helper()
	eventually(t, func() bool { return len(a.held()) == 2 && len(b.held()) == 2 && (ready == nil || ready()) },
		"the group did not settle with two partitions each: %v and %v", a.held(), b.held())
	require.ElementsMatch(t, []int32{0, 1, 2, 3}, append(a.held(), b.held()...), "each partition held by one member")
}

// since is what got holds beyond before, by partition (partitions with
// nothing new left out).
func since(got, before map[int32][]string) map[int32][]string {
	out := map[int32][]string{}
	for p, lines := range got {
		if n := len(before[p]); len(lines) > n {
			out[p] = lines[n:]
		}
	}
	return out
}

// countLines is how many records a by-partition map holds.
func countLines(m map[int32][]string) int {
	n := 0
	for _, lines := range m {
		n += len(lines)
	}
	return n
}

// TestFlowKgoGroupRestart: a franz-go member alone reads a topic's four
// partitions and commits; a second joins and the group rebalances to two
// partitions each; they read the next records exactly once, each from
// its partitions, and commit; the server restarts; the producer and both
// members carry on, and the records produced after the restart are read
// exactly once too; after both leave, a new member resumes after the
// commits. The members keep their ids and the group its generation
// across the restart, as Kafka's broker keeps a group's members.
func TestFlowKgoGroupRestart(t *testing.T) {
	srv := servertest.Start(t, nil)
	prod := client(t, srv.Addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(100))
	createTopic(t, prod, "kgo-group", 4)
	adm := kadm.NewClient(prod)
	ctx := context.Background()
	produce := func(prefix string, n int) map[int32][]string {
		t.Helper()
		recs := kgoRecords("kgo-group", prefix, 0, n, 4)
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())
		return kgoSent(recs)
	}
	committed := func() (map[int32]int64, error) {
		resps, err := adm.FetchOffsets(ctx, "kgo-group-g")
		if err == nil {
			err = resps.Error()
		}
		out := map[int32]int64{}
		resps.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
		return out, err
	}
	readBy := func(want map[int32][]string, members map[groupMember]map[int32][]string) {
		t.Helper()
		requireReadBy(t, srv, "kgo-group", want, members, committed)
	}
	stable := func() bool {
		d, err := adm.DescribeGroups(ctx, "kgo-group-g")
		return err == nil && d.Error() == nil && d["kgo-group-g"].State == "Stable" && len(d["kgo-group-g"].Members) == 2
	}

	first := produce("first-", 40)
	a := startKgoMember(t, srv.Addr, "kgo-group-g", "kgo-group")
	readBy(first, map[groupMember]map[int32][]string{a: nil})
	require.Equal(t, []int32{0, 1, 2, 3}, a.held(), "alone, the first member holds every partition")

	b := startKgoMember(t, srv.Addr, "kgo-group-g", "kgo-group")
	requireSplit(t, a, b, stable)
	beforeA := a.lines()
	second := produce("second-", 40)
	readBy(second, map[groupMember]map[int32][]string{a: beforeA, b: nil})
	memberIDs := func() []string {
		var out []string
		for _, m := range []*kgoMember{a, b} {
			id, generation := m.cl.GroupMetadata()
			out = append(out, fmt.Sprintf("%s@%d", id, generation))
		}
		return out
	}
	idsBefore := memberIDs()

	srv.Restart(t)
	requireSplit(t, a, b, stable)
	beforeA, beforeB := a.lines(), b.lines()
	third := produce("third-", 40)
	readBy(third, map[groupMember]map[int32][]string{a: beforeA, b: beforeB})
	require.Equal(t, idsBefore, memberIDs(), "%s (members as id@generation)", lostMembers)
	a.close()
	b.close()

	fourth := produce("fourth-", 20)
	c := startKgoMember(t, srv.Addr, "kgo-group-g", "kgo-group")
	readBy(fourth, map[groupMember]map[int32][]string{c: nil})
}
