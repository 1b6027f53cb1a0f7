package server_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/record"
)

// sarama's flows (the producer in every codec is TestSarama's): its
// ClusterAdmin, offsets by time, consumer groups with each balance
// strategy, a restart under a producer and consumers, an idempotent
// producer whose answer is lost across a restart, and transactions.

// saramaConfig is sarama's default configuration (protocol version
// 2.8.0) with acks=all, successes returned, quick retries that outlast a
// restart of the server, and consumer errors returned.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kafkalite-flows"
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 100
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Metadata.Retry.Max = 100
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	cfg.Consumer.Retry.Backoff = 50 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	return cfg
}

// saramaAdmin is a ClusterAdmin on the server, closed by t.Cleanup.
func saramaAdmin(t *testing.T, addr string) sarama.ClusterAdmin {
	t.Helper()
	admin, err := sarama.NewClusterAdmin([]string{addr}, saramaConfig())
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	return admin
}

// saramaCreateTopic creates a topic with sarama's ClusterAdmin.
func saramaCreateTopic(t *testing.T, admin sarama.ClusterAdmin, topic string, partitions int32) {
	t.Helper()
	require.NoError(t, admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false))
}

// saramaSyncProducer is a sync producer with cfg, closed by t.Cleanup.
func saramaSyncProducer(t *testing.T, addr string, cfg *sarama.Config) sarama.SyncProducer {
	t.Helper()
	prod, err := sarama.NewSyncProducer([]string{addr}, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = prod.Close() })
	return prod
}

// saramaMessages are the records "k<i> <prefix><i>" for i in [from,
// to) as sarama's producer messages to topic, where the partitioner puts
// them (or, with the manual partitioner, in partition 0).
func saramaMessages(topic, prefix string, from, to int) []*sarama.ProducerMessage {
	var msgs []*sarama.ProducerMessage
	for i := from; i < to; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value: sarama.StringEncoder(fmt.Sprintf("%s%d", prefix, i))})
	}
	return msgs
}

// saramaSend produces msgs with a sync producer, in one SendMessages.
func saramaSend(t *testing.T, prod sarama.SyncProducer, msgs []*sarama.ProducerMessage) []*sarama.ProducerMessage {
	t.Helper()
	require.NoError(t, prod.SendMessages(msgs))
	return msgs
}

// saramaSent are sarama's produced messages as sentLines gives them.
func saramaSent(msgs ...[]*sarama.ProducerMessage) map[int32][]string {
	return sentLines(slices.Concat(msgs...), func(m *sarama.ProducerMessage) (int32, int64, string, string) {
		return m.Partition, m.Offset, string(m.Key.(sarama.StringEncoder)), string(m.Value.(sarama.StringEncoder))
	})
}

// saramaReader reads a topic's partitions with sarama's partition
// consumers, which stay open from one read to the next (and across a
// restart of the server).
type saramaReader struct {
	pcs map[int32]sarama.PartitionConsumer
}

// newSaramaReader opens partition consumers of topic's partitions at
// offset (sarama.OffsetOldest, or an offset), closed by t.Cleanup.
func newSaramaReader(t *testing.T, addr string, cfg *sarama.Config, topic string, partitions []int32, offset int64) *saramaReader {
	t.Helper()
	cons, err := sarama.NewConsumer([]string{addr}, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cons.Close() })
	r := &saramaReader{pcs: map[int32]sarama.PartitionConsumer{}}
	for _, p := range partitions {
		pc, err := cons.ConsumePartition(topic, p, offset)
		require.NoError(t, err)
		r.pcs[p] = pc
		// Before the consumer (cleanups run last first): a partition
		// consumer's Close drains the errors it still holds, which it
		// would otherwise block on sending (errors of the restart), and
		// sarama's Consumer.Close wants its partition consumers closed.
		t.Cleanup(func() { _ = pc.Close() })
	}
	return r
}

// read reads, from each partition, as many records as want holds for it,
// and returns them as want gives them: "OFFSET KEY VALUE" by partition,
// in the order read.
func (r *saramaReader) read(t *testing.T, want map[int32][]string) map[int32][]string {
	t.Helper()
	return consumedLines(r.messages(t, want))
}

// consumedLines are consumed messages as logRecords gives a partition's
// records: "OFFSET KEY VALUE" by partition, in the order given.
func consumedLines(msgs []*sarama.ConsumerMessage) map[int32][]string {
	got := map[int32][]string{}
	for _, m := range msgs {
		got[m.Partition] = append(got[m.Partition], recordLine(m.Offset, string(m.Key), string(m.Value)))
	}
	return got
}

// messages reads, from each partition, as many messages as want holds
// for it, partition after partition. Errors the consumers return are
// logged, not fatal: a restart of the server makes some, and the
// consumers carry on; a record that does not come fails t after
// flowTimeout.
func (r *saramaReader) messages(t *testing.T, want map[int32][]string) []*sarama.ConsumerMessage {
	t.Helper()
	var got []*sarama.ConsumerMessage
	for _, p := range slices.Sorted(maps.Keys(want)) {
		pc := r.pcs[p]
		require.NotNil(t, pc, "no consumer of partition %d", p)
		timeout := time.NewTimer(flowTimeout)
		for n := 0; n < len(want[p]); {
			select {
			case m := <-pc.Messages():
				got = append(got, m)
				n++
			case err := <-pc.Errors():
				t.Logf("partition %d: %v", p, err)
			case <-timeout.C:
				t.Fatalf("partition %d: %d of %d records read in %v", p, n, len(want[p]), flowTimeout)
			}
		}
		timeout.Stop()
	}
	return got
}

// TestFlowSaramaAdmin: sarama's ClusterAdmin creates a topic (and is
// refused a second time), lists and describes it; the sync producer
// writes to it with every codec sarama offers, and partition consumers
// read it from the oldest offset: each record once, where the producer
// was told it went, in batches of its codec on disk.
func TestFlowSaramaAdmin(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := saramaAdmin(t, srv.Addr)
	saramaCreateTopic(t, admin, "sarama-admin", 3)
	require.ErrorIs(t, admin.CreateTopic("sarama-admin", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false),
		sarama.ErrTopicAlreadyExists)
	topics, err := admin.ListTopics()
	require.NoError(t, err)
	require.Equal(t, int32(3), topics["sarama-admin"].NumPartitions)
	md, err := admin.DescribeTopics([]string{"sarama-admin"})
	require.NoError(t, err)
	require.Len(t, md, 1)
	require.Equal(t, sarama.ErrNoError, md[0].Err)
	require.Len(t, md[0].Partitions, 3)

	onDisk := map[sarama.CompressionCodec]record.Compression{sarama.CompressionNone: record.None, sarama.CompressionGZIP: record.Gzip,
		sarama.CompressionSnappy: record.Snappy, sarama.CompressionLZ4: record.LZ4, sarama.CompressionZSTD: record.Zstd}
	codecOf := map[string]sarama.CompressionCodec{}
	var sent [][]*sarama.ProducerMessage
	for codec := range onDisk {
		cfg := saramaConfig()
		cfg.Producer.Compression = codec
		msgs := saramaSend(t, saramaSyncProducer(t, srv.Addr, cfg), saramaMessages("sarama-admin", codec.String()+"-", 0, 60))
		sent = append(sent, msgs)
		for _, m := range msgs {
			codecOf[string(m.Value.(sarama.StringEncoder))] = codec
		}
	}
	want := saramaSent(sent...)
	require.Len(t, want, 3, "the partitioner spreads the keys over the three partitions")
	require.Equal(t, want, newSaramaReader(t, srv.Addr, saramaConfig(), "sarama-admin", []int32{0, 1, 2}, sarama.OffsetOldest).read(t, want))
	require.Equal(t, want, logRecords(t, srv, "sarama-admin", false))
	for p := range int32(3) {
		l, err := srv.Dir.Partition("sarama-admin", p)
		require.NoError(t, err)
		for off := int64(0); off < l.LogEndOffset(); {
			off, err = l.ReadRecords(off, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
				if c := codecOf[string(r.Value)]; h.Attributes.Compression() != onDisk[c] {
					return fmt.Errorf("%s in a batch of %v, produced with %v", r.Value, h.Attributes.Compression(), c)
				}
				return nil
			})
			require.NoError(t, err)
		}
	}
}

// TestFlowSaramaByTimestamp: records 0..19 with chosen timestamps, record
// i in partition i%2; sarama's Client.GetOffset finds the first offset
// at or after a time (exact, between two records, before all of them; -1
// after all), the oldest and the newest; ClusterAdmin.ListOffsets gives
// the same with the record's timestamp; a partition consumer started at
// the offset for a time reads from that record on, with the timestamps.
func TestFlowSaramaByTimestamp(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := saramaAdmin(t, srv.Addr)
	saramaCreateTopic(t, admin, "sarama-times", 2)
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	base := time.UnixMilli(1_700_000_000_000)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	msgs := saramaMessages("sarama-times", "v", 0, 20)
	for i, m := range msgs {
		m.Partition, m.Timestamp = int32(i%2), at(i)
	}
	saramaSend(t, saramaSyncProducer(t, srv.Addr, cfg), msgs)
	require.Equal(t, map[int32][]string{0: keyed(0, stepping(0, 20, 2)...), 1: keyed(0, stepping(1, 20, 2)...)},
		logRecords(t, srv, "sarama-times", false))

	cl, err := sarama.NewClient([]string{srv.Addr}, saramaConfig())
	require.NoError(t, err)
	defer cl.Close()
	for _, tc := range []struct {
		name      string
		partition int32
		time      int64
		want      int64
	}{
		{"exact", 0, at(6).UnixMilli(), 3},
		{"between two records", 1, at(6).UnixMilli(), 3}, // record 7, the partition's fourth
		{"before all", 0, base.Add(-time.Hour).UnixMilli(), 0},
		{"after all", 1, at(20).UnixMilli(), -1},
		{"oldest", 1, sarama.OffsetOldest, 0},
		{"newest", 0, sarama.OffsetNewest, 10},
	} {
		got, err := cl.GetOffset("sarama-times", tc.partition, tc.time)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	listed, err := admin.ListOffsets(map[string]map[int32]int64{"sarama-times": {0: at(5).UnixMilli(), 1: at(5).UnixMilli()}}, nil)
	require.NoError(t, err)
	for p, wantOffset := range map[int32]int64{0: 3, 1: 2} { // records 6 and 5
		res := listed["sarama-times"][p]
		require.NotNil(t, res, "partition %d", p)
		require.Equal(t, sarama.ErrNoError, res.Err, "partition %d", p) // sarama's way of saying nil here
		require.Equal(t, wantOffset, res.Offset, "partition %d", p)
		require.Equal(t, at(int(2*wantOffset)+int(p)).UnixMilli(), res.Timestamp, "partition %d", p)
	}

	from, err := cl.GetOffset("sarama-times", 0, at(7).UnixMilli())
	require.NoError(t, err)
	require.Equal(t, int64(4), from, "record 8")
	cons, err := sarama.NewConsumer([]string{srv.Addr}, saramaConfig())
	require.NoError(t, err)
	defer cons.Close()
	pc, err := cons.ConsumePartition("sarama-times", 0, from)
	require.NoError(t, err)
	defer pc.Close()
	var got []string
	for len(got) < 6 {
		select {
		case m := <-pc.Messages():
			require.Equal(t, at(2*int(m.Offset)).UnixMilli(), m.Timestamp.UnixMilli(), "the timestamp of offset %d", m.Offset)
			got = append(got, recordLine(m.Offset, string(m.Key), string(m.Value)))
		case err := <-pc.Errors():
			require.NoError(t, err)
		case <-time.After(flowTimeout):
			t.Fatalf("%d records from offset %d", len(got), from)
		}
	}
	require.Equal(t, keyed(4, 8, 10, 12, 14, 16, 18), got)
}

// saramaMember is a member of a sarama ConsumerGroup: it keeps its
// session, whose claims are the partitions it holds, and every record it
// reads ("OFFSET KEY VALUE" by partition), marking each and committing
// synchronously whenever it has read all it was given.
type saramaMember struct {
	group  sarama.ConsumerGroup
	topic  string
	cancel context.CancelFunc
	done   chan struct{}

	readLines

	mu   sync.Mutex
	sess sarama.ConsumerGroupSession // between Setup and Cleanup
	errs []error
}

func startSaramaMember(t *testing.T, addr, group, topic string, strategy sarama.BalanceStrategy) *saramaMember {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{strategy}
	cfg.Consumer.Return.Errors = false
	cg, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	m := &saramaMember{group: cg, topic: topic, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, m); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				m.mu.Lock()
				m.errs = append(m.errs, err)
				m.mu.Unlock()
			}
		}
	}()
	t.Cleanup(m.close)
	return m
}

func (m *saramaMember) Setup(sess sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess = sess
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sess = nil
	return nil
}

func (m *saramaMember) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		sess.MarkMessage(msg, "")
		if len(claim.Messages()) == 0 {
			sess.Commit() // what was read so far, synchronously
		}
		m.add(msg.Partition, msg.Offset, msg.Key, msg.Value)
	}
	return nil
}

// close leaves the group and waits for the member's loop to end.
func (m *saramaMember) close() {
	m.cancel()
	_ = m.group.Close()
	<-m.done
}

// held are the partitions the member holds (its session's claims),
// sorted; none between sessions.
func (m *saramaMember) held() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sess == nil {
		return nil
	}
	return slices.Sorted(slices.Values(m.sess.Claims()[m.topic]))
}

// TestFlowSaramaGroup, with each of sarama's balance strategies (the
// eager range, roundrobin and sticky, and cooperative-sticky): a sarama
// ConsumerGroup member alone holds the four partitions and reads the
// first records, committing; a second member joins, the group rebalances
// and each holds two partitions, none held by both; between them they
// read the next records exactly once, each from its own partitions; the
// commits show in ClusterAdmin.ListConsumerGroupOffsets, and
// DescribeConsumerGroups shows the two members and the strategy; after
// both leave, a new member resumes after the commits and reads only what
// came later.
func TestFlowSaramaGroup(t *testing.T) {
	for _, strategy := range []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange(), sarama.NewBalanceStrategyRoundRobin(),
		sarama.NewBalanceStrategySticky(), sarama.NewBalanceStrategyCooperativeSticky()} {
		t.Run(strategy.Name(), func(t *testing.T) {
			srv := servertest.Start(t, nil)
			admin := saramaAdmin(t, srv.Addr)
			saramaCreateTopic(t, admin, "sarama-group", 4)
			prod := saramaSyncProducer(t, srv.Addr, saramaConfig())
			committed := func() (map[int32]int64, error) {
				resp, err := admin.ListConsumerGroupOffsets("sarama-g", map[string][]int32{"sarama-group": {0, 1, 2, 3}})
				out := map[int32]int64{}
				if err == nil {
					for p, b := range resp.Blocks["sarama-group"] {
						if b.Offset >= 0 {
							out[p] = b.Offset
						}
					}
				}
				return out, err
			}
			readBy := func(want map[int32][]string, members map[groupMember]map[int32][]string) {
				t.Helper()
				requireReadBy(t, srv, "sarama-group", want, members, committed)
			}

			first := saramaSent(saramaSend(t, prod, saramaMessages("sarama-group", "first-", 0, 80)))
			require.Len(t, first, 4, "the partitioner spreads the keys over the four partitions")
			a := startSaramaMember(t, srv.Addr, "sarama-g", "sarama-group", strategy)
			readBy(first, map[groupMember]map[int32][]string{a: nil})
			require.Equal(t, []int32{0, 1, 2, 3}, a.held(), "alone, the first member holds every partition")

			b := startSaramaMember(t, srv.Addr, "sarama-g", "sarama-group", strategy)
			requireSplit(t, a, b, nil)
			groups, err := admin.DescribeConsumerGroups([]string{"sarama-g"})
			require.NoError(t, err)
			require.Len(t, groups, 1)
			require.Equal(t, "Stable", groups[0].State)
			require.Equal(t, strategy.Name(), groups[0].Protocol)
			require.Len(t, groups[0].Members, 2)

			beforeA := a.lines()
			second := saramaSent(saramaSend(t, prod, saramaMessages("sarama-group", "second-", 0, 80)))
			readBy(second, map[groupMember]map[int32][]string{a: beforeA, b: nil})
			a.close()
			b.close()
			require.Empty(t, a.errs)
			require.Empty(t, b.errs)

			third := saramaSent(saramaSend(t, prod, saramaMessages("sarama-group", "third-", 0, 40)))
			c := startSaramaMember(t, srv.Addr, "sarama-g", "sarama-group", strategy)
			readBy(third, map[groupMember]map[int32][]string{c: nil})
		})
	}
}

// TestFlowSaramaRestart: a sync producer and partition consumers carry
// on across a restart of the server: the records produced before and
// after it are read once each, in order, by the same consumers, and the
// log holds each once.
func TestFlowSaramaRestart(t *testing.T) {
	srv := servertest.Start(t, nil)
	saramaCreateTopic(t, saramaAdmin(t, srv.Addr), "sarama-restart", 2)
	prod := saramaSyncProducer(t, srv.Addr, saramaConfig())
	reader := newSaramaReader(t, srv.Addr, saramaConfig(), "sarama-restart", []int32{0, 1}, sarama.OffsetOldest)

	before := saramaSend(t, prod, saramaMessages("sarama-restart", "before-", 0, 50))
	got := reader.read(t, saramaSent(before))
	srv.Restart(t)
	after := saramaSend(t, prod, saramaMessages("sarama-restart", "after-", 0, 50))
	for p, lines := range reader.read(t, saramaSent(after)) {
		got[p] = append(got[p], lines...)
	}
	want := saramaSent(before, after)
	require.Len(t, want, 2)
	require.Equal(t, want, got)
	require.Equal(t, want, logRecords(t, srv, "sarama-restart", false))
}

// TestFlowSaramaIdempotentRestart: sarama's idempotent async producer
// (Producer.Idempotent, one request in flight, acks=all) keeps sending
// while the server restarts under it; the answer to one of its produces
// is lost across the restart (lostAnswerProxy), so it sends that batch
// again, with its sequence, to the restarted server, which recognizes
// it: the log holds every record once, where the producer was told, in
// the order sent.
func TestFlowSaramaIdempotentRestart(t *testing.T) {
	proxy := startLostAnswerProxy(t, 3)
	srv := servertest.Start(t, func(c *server.Config) { c.AdvertisedAddr = proxy.Addr })
	proxy.setTarget(srv.Addr)
	saramaCreateTopic(t, saramaAdmin(t, proxy.Addr), "sarama-idem", 2)
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Flush.Messages = 10 // small batches, many in a row
	prod, err := sarama.NewAsyncProducer([]string{proxy.Addr}, cfg)
	require.NoError(t, err)
	const n = 2000
	msgs := saramaMessages("sarama-idem", "v", 0, n)
	stop, stopped := make(chan struct{}), make(chan struct{})
	defer func() {
		close(stop)
		<-stopped
		if t.Failed() {
			// The proxy may hold an answer the producer's Close would wait
			// for forever.
			proxy.stop()
			_ = prod.Close()
			return
		}
		require.NoError(t, prod.Close())
	}()
	// The records go in three waves, each after the one before is
	// acknowledged: 10 (one produce), 10 (a second), then the rest, whose
	// first produce is the third, the one whose answer the proxy drops,
	// while the others wait buffered. Fed at once, the records that piled
	// up while the first answer was awaited sometimes went in one more
	// produce, and no third came.
	waves := []int{10, 20, n}
	waveDone := make(chan struct{}, len(waves))
	go func() {
		defer close(stopped)
		from := 0
		for _, to := range waves {
			for _, m := range msgs[from:to] {
				select {
				case prod.Input() <- m:
				case <-stop:
					return
				}
			}
			from = to
			select {
			case <-waveDone:
			case <-stop:
				return
			}
		}
	}()
	acked, lost, timeout := 0, proxy.lost, time.After(flowTimeout)
	for acked < n {
		select {
		case <-prod.Successes():
			acked++
			if slices.Contains(waves, acked) {
				waveDone <- struct{}{}
			}
		case err := <-prod.Errors():
			require.NoError(t, err)
		case <-lost:
			srv.Restart(t) // more records are in flight and buffered
			close(proxy.resume)
			lost = nil
		case <-timeout:
			t.Fatalf("%d of %d records acknowledged", acked, n)
		}
	}
	require.Nil(t, lost, "no answer was lost")
	want := saramaSent(msgs)
	require.Len(t, want, 2)
	require.Equal(t, want, logRecords(t, srv, "sarama-idem", false))
}

// TestFlowSaramaTransactions: sarama's transactional producer commits a
// transaction of c0..c9 (record i in partition i%2), aborts one of
// a0..a9 and commits one of d0..d9; a read_committed consumer
// (Consumer.IsolationLevel) reads only the committed records, a
// read_uncommitted one every record; then a consume-transform-produce
// transaction writes a copy of the committed records and commits a
// group's offsets with them (AddMessageToTxn).
func TestFlowSaramaTransactions(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := saramaAdmin(t, srv.Addr)
	saramaCreateTopic(t, admin, "sarama-tx", 2)
	saramaCreateTopic(t, admin, "sarama-tx-copy", 2)
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = "sarama-tx-1"
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	prod := saramaSyncProducer(t, srv.Addr, cfg)

	txn := func(prefix string, commit bool) []*sarama.ProducerMessage {
		t.Helper()
		require.NoError(t, prod.BeginTxn())
		msgs := saramaMessages("sarama-tx", prefix, 0, 10)
		for i, m := range msgs {
			m.Partition = int32(i % 2)
		}
		saramaSend(t, prod, msgs)
		if commit {
			require.NoError(t, prod.CommitTxn())
		} else {
			require.NoError(t, prod.AbortTxn())
		}
		return msgs
	}
	c, a, d := txn("c", true), txn("a", false), txn("d", true)
	require.Equal(t, sarama.ProducerTxnFlagReady, prod.TxnStatus())

	// Each transaction's marker takes an offset after its five records in
	// each partition: c at 0-4, a at 6-10, d at 12-16, the last marker 17.
	committed, every := saramaSent(c, d), saramaSent(c, a, d)
	require.Equal(t, []string{"12 k1 d1"}, every[1][10:11])
	rc := saramaConfig()
	rc.Consumer.IsolationLevel = sarama.ReadCommitted
	read := newSaramaReader(t, srv.Addr, rc, "sarama-tx", []int32{0, 1}, sarama.OffsetOldest).messages(t, committed)
	require.Equal(t, committed, consumedLines(read))
	require.Equal(t, committed, logRecords(t, srv, "sarama-tx", true))
	require.Equal(t, every, newSaramaReader(t, srv.Addr, saramaConfig(), "sarama-tx", []int32{0, 1}, sarama.OffsetOldest).read(t, every))
	require.Equal(t, every, logRecords(t, srv, "sarama-tx", false))

	// Consume, transform, produce: the copies and the group's offsets
	// commit together.
	require.NoError(t, prod.BeginTxn())
	var copies []*sarama.ProducerMessage
	for _, m := range read {
		copies = append(copies, &sarama.ProducerMessage{Topic: "sarama-tx-copy", Partition: m.Partition,
			Key: sarama.StringEncoder(m.Key), Value: sarama.StringEncoder("copy-" + string(m.Value))})
		require.NoError(t, prod.AddMessageToTxn(m, "sarama-txg", nil))
	}
	saramaSend(t, prod, copies)
	require.NoError(t, prod.CommitTxn())
	require.Equal(t, saramaSent(copies), logRecords(t, srv, "sarama-tx-copy", true))
	require.Equal(t, map[int32]int64{0: 17, 1: 17}, committedOffsets(t, srv, "sarama-txg", "sarama-tx"))
}
