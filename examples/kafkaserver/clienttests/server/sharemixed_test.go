package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkalite/kafkalite/consumer"
	kllog "github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Share groups whose members are of both kinds: a consumer.ShareConsumer
// in the server's process, on the served directory, and a franz-go share
// consumer (kgo.ShareGroup) over the wire, sharing one topic.

// shareDir opens a directory on the operating system's filesystem (fs
// "os", in t.TempDir()) or in memory ("memory"), with a share heartbeat
// interval of 500 ms so that members learn of each other quickly.
func shareDir(t *testing.T, fs string) *kllog.Dir {
	t.Helper()
	cfg := kllog.DefaultConfig()
	cfg.ShareHeartbeatInterval, cfg.ShareMinHeartbeatInterval = 500*time.Millisecond, 500*time.Millisecond
	path := t.TempDir()
	if fs == "memory" {
		cfg.FS, path = vfs.NewMem(), "/kafkalite"
	}
	d, err := kllog.Open(context.Background(), path, cfg)
	require.NoError(t, err)
	return d
}

// shareDelivery is one delivery of a record to a member, and what the
// member did with it.
type shareDelivery struct {
	member string
	count  int32
	ack    consumer.AcknowledgeType
}

// shareLedger records every delivery of every record, by key, and decides
// each acknowledgement: a fifth of the records are released at their
// first delivery (and accepted at their second), a tenth rejected, the
// others accepted.
type shareLedger struct {
	mu         sync.Mutex
	deliveries map[string][]shareDelivery
}

func newShareLedger() *shareLedger {
	return &shareLedger{deliveries: map[string][]shareDelivery{}}
}

// plan is the acknowledgement a record's key asks for at its first
// delivery.
func plan(key string) consumer.AcknowledgeType {
	h := fnv.New32a()
	h.Write([]byte(key))
	switch h.Sum32() % 10 {
	case 0, 1:
		return consumer.AcknowledgeRelease
	case 2:
		return consumer.AcknowledgeReject
	}
	return consumer.AcknowledgeAccept
}

// deliver records a delivery and returns the acknowledgement to give it.
func (l *shareLedger) deliver(member, key string, count int32) consumer.AcknowledgeType {
	l.mu.Lock()
	defer l.mu.Unlock()
	ack := plan(key)
	if count > 1 {
		ack = consumer.AcknowledgeAccept
	}
	l.deliveries[key] = append(l.deliveries[key], shareDelivery{member, count, ack})
	return ack
}

// done reports whether every key of want has had all its deliveries: two
// for those released, one for the others.
func (l *shareLedger) done(want []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range want {
		n := 1
		if plan(k) == consumer.AcknowledgeRelease {
			n = 2
		}
		if len(l.deliveries[k]) < n {
			return false
		}
	}
	return true
}

// check asserts that the records of want were delivered as planned and
// no other record at all: each released one twice, with delivery counts
// 1 then 2, then accepted; the others once, accepted or rejected; and
// that each member had some.
func (l *shareLedger) check(t *testing.T, want []string, members ...string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	byMember := map[string]int{}
	for k, ds := range l.deliveries {
		require.True(t, slices.Contains(want, k), "record %s delivered (%v), which must not be", k, ds)
		for _, d := range ds {
			byMember[d.member]++
		}
	}
	for _, k := range want {
		ds := l.deliveries[k]
		switch plan(k) {
		case consumer.AcknowledgeRelease:
			require.Len(t, ds, 2, "record %s: released once, delivered again once", k)
			require.Equal(t, []int32{1, 2}, []int32{ds[0].count, ds[1].count}, "record %s's delivery counts", k)
			require.Equal(t, consumer.AcknowledgeAccept, ds[1].ack)
		default:
			require.Len(t, ds, 1, "record %s: accepted or rejected once, never again", k)
			require.Equal(t, int32(1), ds[0].count, "record %s", k)
		}
	}
	t.Logf("%d records, deliveries by member: %v", len(want), byMember)
	for _, m := range members {
		require.Positive(t, byMember[m], "member %s had no record (deliveries by member: %v)", m, byMember)
	}
}

// localShareMember is an in-process share consumer in explicit mode that
// acknowledges what the ledger says, committing after each Poll.
type localShareMember struct {
	t    *testing.T
	name string
	c    *consumer.ShareConsumer
	l    *shareLedger
}

func newLocalShareMember(t *testing.T, d *kllog.Dir, group, topic, name string, l *shareLedger) *localShareMember {
	t.Helper()
	cfg := consumer.DefaultShareConfig()
	cfg.GroupID, cfg.ClientID, cfg.AcknowledgementMode = group, name, consumer.AcknowledgeExplicit
	c, err := consumer.NewShareConsumer(d, cfg)
	require.NoError(t, err)
	require.NoError(t, c.Subscribe([]string{topic}))
	return &localShareMember{t: t, name: name, c: c, l: l}
}

// poll polls for up to wait, acknowledges and commits what came, and
// returns it.
func (m *localShareMember) poll(wait time.Duration) []consumer.ShareRecord {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	rs, err := m.c.Poll(ctx)
	if err != nil {
		require.ErrorIs(m.t, err, context.DeadlineExceeded)
	}
	for _, r := range rs {
		require.NoError(m.t, m.c.Acknowledge(r, m.l.deliver(m.name, string(r.Key), int32(r.DeliveryCount))))
	}
	if len(rs) > 0 {
		res, err := m.c.CommitSync(context.Background())
		require.NoError(m.t, err)
		for tp, err := range res {
			require.NoError(m.t, err, "%s's acknowledgements of %s", m.name, tp)
		}
	}
	return rs
}

func (m *localShareMember) close() {
	m.t.Helper()
	require.NoError(m.t, m.c.Close(context.Background()))
}

// dropDialer dials for a franz-go client and drops its connections on
// demand: drop closes them all and refuses new ones until restore.
type dropDialer struct {
	mu      sync.Mutex
	conns   []net.Conn
	blocked bool
}

var errDropped = errors.New("dropDialer: connections are dropped")

func (d *dropDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.blocked {
		return nil, errDropped
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *dropDialer) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocked = true
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

func (d *dropDialer) restore() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocked = false
}

// wireShareMember is a franz-go share consumer polling on a goroutine of
// its own, acknowledging each record as the ledger says (explicitly: none
// is left to the next poll's implicit acceptance) and flushing the
// acknowledgements after each poll. hold, when set, makes it keep the
// records of its polls unacknowledged instead, until cleared.
type wireShareMember struct {
	t      *testing.T
	name   string
	cl     *kgo.Client
	dialer *dropDialer
	l      *shareLedger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	hold    bool
	held    []*kgo.Record
	ackErrs []error
}

func startWireShareMember(t *testing.T, addr, group, topic, name string, l *shareLedger) *wireShareMember {
	t.Helper()
	m := &wireShareMember{t: t, name: name, dialer: &dropDialer{}, l: l, done: make(chan struct{})}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
		kgo.Dialer(m.dialer.dial), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
			if err := rs.Error(); err != nil {
				m.mu.Lock()
				m.ackErrs = append(m.ackErrs, err)
				m.mu.Unlock()
			}
		}))
	require.NoError(t, err)
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			if fs.IsClientClosed() || ctx.Err() != nil {
				return
			}
			m.mu.Lock()
			hold := m.hold
			m.mu.Unlock()
			fs.EachRecord(func(r *kgo.Record) {
				m.mu.Lock()
				defer m.mu.Unlock()
				if hold {
					m.held = append(m.held, r)
					return
				}
				r.Ack(kgo.AckStatus(l.deliver(name, string(r.Key), r.DeliveryCount())))
			})
			if hold {
				// Wait without polling: the next poll would accept the
				// held records.
				for {
					m.mu.Lock()
					hold = m.hold
					m.mu.Unlock()
					if !hold || ctx.Err() != nil {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				continue
			}
			fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
			_ = cl.FlushAcks(fctx) // a dropped connection makes it fail; the records come again
			fcancel()
		}
	}()
	return m
}

// heldRecords returns the records held so far.
func (m *wireShareMember) heldRecords() []*kgo.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.held)
}

func (m *wireShareMember) setHold(hold bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold = hold
}

// stop stops polling and closes the client (leaving the group), and
// returns the acknowledgement errors its callback heard.
func (m *wireShareMember) stop() []error {
	m.cancel()
	<-m.done
	m.cl.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ackErrs
}

// produceShareCodecs writes records to each of topic's partitions with
// every codec, first in one batch per partition, then in one batch per
// record, and returns their keys.
func produceShareCodecs(t *testing.T, addr, topic string, parts int32) []string {
	t.Helper()
	ctx := context.Background()
	var want []string
	for _, c := range codecs {
		prod := client(t, addr, kgo.ProducerBatchCompression(c.codec), kgo.ProducerLinger(time.Second),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		// One batch per partition: buffered, then flushed at once.
		for p := range parts {
			for i := range 8 {
				k := shareKey(c.name, "-one-p", p, "-", i)
				want = append(want, k)
				prod.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(k), Value: shareValue(k)}, nil)
			}
		}
		require.NoError(t, prod.Flush(ctx))
		// Many batches per partition: one record each.
		for p := range parts {
			for i := range 3 {
				k := shareKey(c.name, "-many-p", p, "-", i)
				want = append(want, k)
				require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(k), Value: shareValue(k)}).FirstErr())
			}
		}
	}
	return want
}

// shareDone reports whether group's start offset is the high watermark
// in each of topic's partitions.
func shareDone(t *testing.T, d *kllog.Dir, group, topic string, parts int32) bool {
	t.Helper()
	pm, err := share.Partitions(context.Background(), d)
	require.NoError(t, err)
	var tps []kllog.TopicPartition
	for p := range parts {
		tps = append(tps, kllog.TopicPartition{Topic: topic, Partition: p})
	}
	for _, o := range pm.Offsets(group, tps) {
		l, err := d.Partition(topic, o.Partition)
		require.NoError(t, err)
		if o.StartOffset != l.HighWatermark() {
			t.Logf("partition %d: start offset %d, high watermark %d", o.Partition, o.StartOffset, l.HighWatermark())
			return false
		}
	}
	return true
}

// shareKey is a record's key: what the ledger knows it by.
func shareKey(parts ...any) string { return fmt.Sprint(parts...) }

// shareValue is a value that compresses, so that producers keep their
// codec.
func shareValue(key string) []byte { return []byte(key + strings.Repeat(" share", 12)) }

// TestShareGroupMixedMembers: a share group of an in-process
// ShareConsumer and a franz-go share consumer reads a topic of four
// partitions written with every codec, in one batch and in many per
// partition, plus franz-go transactions (one committed, one aborted, one
// left open, then records after it), with share.isolation.level
// read_uncommitted and read_committed, on the operating system's
// filesystem and in memory. Every record the group may read is
// acknowledged exactly once across the members (each member had some):
// the released ones come again, to either member, with delivery count 2,
// the rejected and accepted never again. read_committed never delivers
// the aborted transaction's records and holds back the open
// transaction's and those after it until it commits; read_uncommitted
// delivers them all at once. At the end the group's start offset is
// every partition's end.
func TestShareGroupMixedMembers(t *testing.T) {
	for _, fs := range []string{"os", "memory"} {
		for _, iso := range []string{"read_uncommitted", "read_committed"} {
			t.Run(fs+"/"+iso, func(t *testing.T) { shareMixed(t, fs, iso) })
		}
	}
}

func shareMixed(t *testing.T, fs, iso string) {
	const group, topic, parts = "mixed", "mixed-topic", 4
	ctx := context.Background()
	d := shareDir(t, fs)
	addr := serveDir(t, d)
	admin := client(t, addr)
	createTopic(t, admin, topic, parts)
	_, err := d.AlterGroupConfig(ctx, group, map[string]string{"share.auto.offset.reset": "earliest", "share.isolation.level": iso})
	require.NoError(t, err)

	l := newShareLedger()
	local := newLocalShareMember(t, d, group, topic, "local", l)
	defer local.close()
	local.poll(50 * time.Millisecond) // joins
	remote := startWireShareMember(t, addr, group, topic, "remote", l)
	defer func() { require.Empty(t, remote.stop(), "the wire member's acknowledgement errors") }()
	coord, err := coordinator.Groups(ctx, d)
	require.NoError(t, err)
	eventually(t, func() bool {
		g, err := coord.DescribeShareGroup(group)
		return err == nil && len(g.Members) == 2
	}, "the wire member did not join")

	want := produceShareCodecs(t, addr, topic, parts)
	txn := client(t, addr, kgo.TransactionalID("mixed-txn"), kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	transaction := func(name string) []string {
		require.NoError(t, txn.BeginTransaction())
		var keys []string
		for p := range int32(parts) {
			for i := range 2 {
				k := shareKey(name, "-p", p, "-", i)
				keys = append(keys, k)
				txn.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(k), Value: shareValue(k)}, nil)
			}
		}
		require.NoError(t, txn.Flush(ctx))
		return keys
	}
	want = append(want, transaction("committed")...)
	require.NoError(t, txn.EndTransaction(ctx, kgo.TryCommit))
	aborted := transaction("aborted")
	require.NoError(t, txn.EndTransaction(ctx, kgo.TryAbort))
	open := transaction("open")
	plain := client(t, addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var after []string
	for p := range int32(parts) {
		k := shareKey("after-open-p", p)
		after = append(after, k)
		require.NoError(t, plain.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(k), Value: shareValue(k)}).FirstErr())
	}
	later := slices.Concat(open, after) // what read_committed holds back
	if iso == "read_uncommitted" {
		want = slices.Concat(want, aborted, later)
		later = nil
	}

	drain := func(want []string) {
		t.Helper()
		eventually(t, func() bool {
			local.poll(100 * time.Millisecond)
			return l.done(want)
		}, "the group did not read every record")
	}
	drain(want)
	if len(later) > 0 {
		// Held back: the members poll on, and get none of them; the
		// start offsets stop at the open transaction.
		for range 5 {
			local.poll(100 * time.Millisecond)
		}
		l.check(t, want, "local", "remote")
		require.NoError(t, txn.EndTransaction(ctx, kgo.TryCommit))
		want = slices.Concat(want, later)
		drain(want)
	}
	// Every partition's records are all done: the start offsets reach the
	// ends (the members' last acknowledgements land meanwhile).
	eventually(t, func() bool {
		local.poll(20 * time.Millisecond)
		return shareDone(t, d, group, topic, parts)
	}, "the group's start offsets did not reach the partitions' ends")
	l.check(t, want, "local", "remote")
	if iso == "read_uncommitted" {
		require.NoError(t, txn.EndTransaction(ctx, kgo.TryCommit))
	}
}

// TestShareGroupMixedHandoff: records a member holds go to the other
// member when it goes, delivered a second time, both ways, on the
// operating system's filesystem and in memory. The in-process member
// polls records and closes without acknowledging them: the franz-go
// member gets them with delivery count 2. The franz-go member polls new
// records and its connection drops (its connections close and it cannot
// dial again meanwhile): a new in-process member gets them with delivery
// count 2. Each record is accepted once; at the end the group's start
// offset is the partition's end.
func TestShareGroupMixedHandoff(t *testing.T) {
	for _, fs := range []string{"os", "memory"} {
		t.Run(fs, func(t *testing.T) { shareHandoff(t, fs) })
	}
}

func shareHandoff(t *testing.T, fs string) {
	const group, topic = "handoff", "handoff-topic"
	ctx := context.Background()
	d := shareDir(t, fs)
	addr := serveDir(t, d)
	prod := client(t, addr, kgo.ProducerLinger(0))
	createTopic(t, prod, topic, 1)
	_, err := d.AlterGroupConfig(ctx, group, map[string]string{"share.auto.offset.reset": "earliest"})
	require.NoError(t, err)
	// produce writes n records in one batch, which a member acquires at
	// once.
	batcher := client(t, addr, kgo.ProducerLinger(time.Minute))
	produce := func(name string, n int) []string {
		var keys []string
		for i := range n {
			k := shareKey(name, "-", i)
			keys = append(keys, k)
			batcher.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(k), Value: shareValue(k)}, nil)
		}
		require.NoError(t, batcher.Flush(ctx))
		return keys
	}
	l := newShareLedger()
	count := func(key string) []int32 {
		l.mu.Lock()
		defer l.mu.Unlock()
		var out []int32
		for _, d := range l.deliveries[key] {
			out = append(out, d.count)
		}
		return out
	}

	delivered := func(keys []string) bool {
		for _, k := range keys {
			if len(count(k)) == 0 {
				return false
			}
		}
		return true
	}

	// The in-process member leaves holding records.
	first := produce("first", 5)
	cfg := consumer.DefaultShareConfig()
	cfg.GroupID, cfg.AcknowledgementMode = group, consumer.AcknowledgeExplicit
	leaver, err := consumer.NewShareConsumer(d, cfg)
	require.NoError(t, err)
	require.NoError(t, leaver.Subscribe([]string{topic}))
	var held []consumer.ShareRecord
	eventually(t, func() bool {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		rs, _ := leaver.Poll(pctx)
		held = append(held, rs...)
		return len(held) == len(first)
	}, "the in-process member got %d of %d records", len(held), len(first))
	for _, r := range held {
		require.Equal(t, int16(1), r.DeliveryCount)
		// Acknowledged on the way out, so that the next Poll or Close
		// would be legal; released: the leaving member gives them back.
		require.NoError(t, leaver.Acknowledge(r, consumer.AcknowledgeRelease))
	}
	require.NoError(t, leaver.Close(ctx))
	remote := startWireShareMember(t, addr, group, topic, "remote", l)
	remoteStopped := false
	defer func() {
		if !remoteStopped {
			remote.stop()
		}
	}()
	eventually(t, func() bool { return delivered(first) }, "the wire member did not get the records the in-process member left")
	for _, k := range first {
		require.Equal(t, []int32{2}, count(k), "record %s: delivered a second time", k)
	}

	// The wire member's connection drops while it holds records.
	remote.setHold(true)
	second := produce("second", 5)
	eventually(t, func() bool { return len(remote.heldRecords()) == len(second) },
		"the wire member holds %d of %d records", len(remote.heldRecords()), len(second))
	for _, r := range remote.heldRecords() {
		require.Equal(t, int32(1), r.DeliveryCount())
	}
	local := newLocalShareMember(t, d, group, topic, "local", l)
	defer local.close()
	remote.dialer.drop()
	eventually(t, func() bool {
		local.poll(100 * time.Millisecond)
		return delivered(second)
	}, "the in-process member did not get the records of the wire member's dropped connection")
	for _, k := range second {
		require.Equal(t, []int32{2}, count(k), "record %s: delivered a second time", k)
	}
	// The wire member comes back and goes; what it held was the
	// in-process member's, and none comes again.
	remote.dialer.restore()
	remote.setHold(false)
	remote.stop()
	remoteStopped = true
	eventually(t, func() bool {
		local.poll(20 * time.Millisecond)
		return shareDone(t, d, group, topic, 1)
	}, "the group's start offset did not reach the partition's end")
	for _, k := range slices.Concat(first, second) {
		require.Len(t, count(k), 1, "record %s", k)
	}
}

// TestShareGroupConfluentMixed: confluent-kafka's (librdkafka's)
// ShareConsumer, in explicit acknowledgement mode, and an in-process
// ShareConsumer share a topic of four partitions written with every codec
// in one and many batches: every record is acknowledged exactly once
// across the two (each had some), released ones come again with delivery
// count 2, and librdkafka hears no refused acknowledgement. It skips
// unless the first python3 on PATH has a confluent-kafka with a
// ShareConsumer (2.16 and later).
func TestShareGroupConfluentMixed(t *testing.T) {
	python := pythonWith(t, "confluent_kafka")
	if err := exec.Command(python, "-c", "from confluent_kafka import ShareConsumer").Run(); err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("%s's confluent_kafka has no ShareConsumer: %v", python, err)
		}
		t.Skipf("%s's confluent_kafka has no ShareConsumer (2.16 and later have one)", python)
	}
	const group, topic, parts = "ck-share", "ck-share-topic", 4
	ctx := context.Background()
	d := shareDir(t, "memory")
	addr := serveDir(t, d)
	createTopic(t, client(t, addr), topic, parts)
	_, err := d.AlterGroupConfig(ctx, group, map[string]string{"share.auto.offset.reset": "earliest"})
	require.NoError(t, err)
	l := newShareLedger()
	local := newLocalShareMember(t, d, group, topic, "local", l)
	defer local.close()
	local.poll(50 * time.Millisecond) // joins

	stop := filepath.Join(t.TempDir(), "stop")
	cmd := exec.Command(python, "testdata/shareconsumer_confluent.py", addr, group, topic, stop)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := false
	defer func() {
		if !exited {
			_ = os.WriteFile(stop, nil, 0o600)
			_ = cmd.Wait()
		}
	}()
	var mu sync.Mutex
	var lines, ackErrs []string
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			lines = append(lines, line)
			mu.Unlock()
			if strings.HasPrefix(line, "ERROR ") {
				mu.Lock()
				ackErrs = append(ackErrs, line)
				mu.Unlock()
				continue
			}
			var key string
			var count, ack int32
			if _, err := fmt.Sscanf(line, "%s %d %d", &key, &count, &ack); err == nil {
				if want := l.deliver("librdkafka", key, count); int32(want) != ack {
					mu.Lock()
					ackErrs = append(ackErrs, fmt.Sprintf("%s: acknowledged %d, the plan says %d", line, ack, want))
					mu.Unlock()
				}
			}
		}
	}()
	coord, err := coordinator.Groups(ctx, d)
	require.NoError(t, err)
	eventually(t, func() bool {
		local.poll(50 * time.Millisecond)
		g, err := coord.DescribeShareGroup(group)
		return err == nil && len(g.Members) == 2
	}, "librdkafka's share consumer did not join")

	want := produceShareCodecs(t, addr, topic, parts)
	eventually(t, func() bool {
		local.poll(100 * time.Millisecond)
		return l.done(want)
	}, "the group did not read every record")
	eventually(t, func() bool {
		local.poll(20 * time.Millisecond)
		return shareDone(t, d, group, topic, parts)
	}, "the group's start offsets did not reach the partitions' ends")
	require.NoError(t, os.WriteFile(stop, nil, 0o600))
	<-scanned
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	exited = true
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, ackErrs, "librdkafka's output:\n%s", strings.Join(lines, "\n"))
	l.check(t, want, "local", "librdkafka")
}
