package server_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestClusterShareGroupOverBrokers: two franz-go share consumers read a
// topic whose partitions three virtual brokers lead, each consumer with a
// share session on every leader (a session per broker, as Kafka's brokers
// keep them: one cache for the server made each broker's session replace
// the other's); a leader moves halfway and a broker stops, and the
// consumers follow (NOT_LEADER_OR_FOLLOWER with the current leader).
// Every record is acknowledged; one delivered again (its acknowledgement
// lost with the leader) carries its delivery count.
func TestClusterShareGroupOverBrokers(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.DefaultReplicationFactor = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := srv.Dir.CreateTopic(ctx, "sh", 6, nil)
	require.NoError(t, err)
	leaders := map[int32]bool{}
	for p := range int32(6) {
		l, _, _, err := srv.Srv().PartitionLeader("sh", p)
		require.NoError(t, err)
		leaders[l] = true
	}
	require.Len(t, leaders, 3, "the partitions' leaders are spread over the brokers")
	_, err = srv.Dir.AlterGroupConfig(ctx, "sg", map[string]string{"share.auto.offset.reset": "earliest"})
	require.NoError(t, err)

	pr, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.DefaultProduceTopic("sh"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	require.NoError(t, err)
	defer pr.Close()
	const n = 600
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			pr.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}, nil)
		}
		require.NoError(t, pr.Flush(ctx))
	}
	produce(0, n/2)

	var (
		mu sync.Mutex
		// acked counts each record's deliveries; most is the highest
		// delivery count the server gave it.
		acked = map[string]int{}
		most  = map[string]int32{}
	)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	var members []*kgo.Client
	var wg sync.WaitGroup
	for i := range 2 {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.ShareGroup("sg"), kgo.ConsumeTopics("sh"),
			kgo.ClientID(fmt.Sprint("m", i)), kgo.FetchMaxWait(100*time.Millisecond))
		require.NoError(t, err)
		members = append(members, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				if fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					acked[string(r.Value)]++
					most[string(r.Value)] = max(most[string(r.Value)], r.DeliveryCount())
					mu.Unlock()
					r.Ack(kgo.AckAccept)
				})
				fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
				_ = cl.FlushAcks(fctx)
				fcancel()
			}
		}()
	}
	waitFor := func(want int) {
		t.Helper()
		for count() < want {
			require.NoError(t, ctx.Err(), "%d of %d records acknowledged", count(), want)
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor(n / 2)

	// A leader moves, and another broker stops: their partitions are
	// led elsewhere.
	l0, _, replicas, err := srv.Srv().PartitionLeader("sh", 0)
	require.NoError(t, err)
	other := replicas[0]
	if other == l0 {
		other = replicas[1]
	}
	_, err = srv.Srv().MoveLeader("sh", 0, other)
	require.NoError(t, err)
	l1, _, _, err := srv.Srv().PartitionLeader("sh", 1)
	require.NoError(t, err)
	srv.StopBroker(t, l1)
	produce(n/2, n)
	waitFor(n)
	cancel()
	for _, cl := range members {
		cl.Close()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, acked, n)
	again := 0
	for v, times := range acked {
		// An acknowledgement in flight to a broker that stops or stops
		// leading is lost and the record delivered again, as on Kafka;
		// but never silently: each delivery counts.
		require.Equal(t, int32(times), most[v], "record %s delivered %d times, its highest delivery count %d", v, times, most[v])
		if times > 1 {
			again++
		}
	}
	t.Logf("%d of %d records delivered again after the leader moves", again, n)
}

// TestClusterShareFetchNotLeader: a ShareFetch to a broker that does not
// lead a partition answers it NOT_LEADER_OR_FOLLOWER with the current
// leader and its endpoint, and acquires nothing there; an acknowledgement
// of it is UNKNOWN_TOPIC_OR_PARTITION there, as Kafka's brokers hold no
// share-partition they do not lead. A member's session with one broker
// is not its session with another.
func TestClusterShareFetchNotLeader(t *testing.T) {
	srv := servertest.StartCluster(t, 2, nil)
	ctx := context.Background()
	_, err := srv.Dir.CreateTopic(ctx, "nl", 1, nil)
	require.NoError(t, err)
	_, err = srv.Dir.AlterGroupConfig(ctx, "g", map[string]string{"share.auto.offset.reset": "earliest"})
	require.NoError(t, err)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.DefaultProduceTopic("nl"))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr())
	topicID := topicIDOf(t, cl, "nl")
	leader, epoch, _, err := srv.Srv().PartitionLeader("nl", 0)
	require.NoError(t, err)
	ids := srv.Srv().Brokers()
	follower := ids[0]
	if follower == leader {
		follower = ids[1]
	}
	// Join the group at its coordinator.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = "g", []string{"g"}
	var coord int32
	for {
		fr, err := fc.RequestWith(ctx, cl)
		require.NoError(t, err)
		if fr.Coordinators[0].ErrorCode == 0 {
			coord = fr.Coordinators[0].NodeID
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = "g", "m-1", 0, []string{"nl"}
	hr, err := hb.RequestWith(ctx, cl.Broker(int(coord)))
	require.NoError(t, err)
	require.Zero(t, hr.ErrorCode)

	fetch := func(broker int32, epoch int32, ack bool) *kmsg.ShareFetchResponse {
		t.Helper()
		f := kmsg.NewPtrShareFetchRequest()
		f.GroupID, f.MemberID, f.ShareSessionEpoch, f.MaxWaitMillis, f.MaxBytes, f.MaxRecords = kmsg.StringPtr("g"), kmsg.StringPtr("m-1"), epoch, 0, 1<<20, 100
		ft := kmsg.NewShareFetchRequestTopic()
		ft.TopicID = topicID
		fp := kmsg.NewShareFetchRequestTopicPartition()
		if ack {
			b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
			b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, 0, []int8{1}
			fp.AcknowledgementBatches = append(fp.AcknowledgementBatches, b)
		}
		ft.Partitions = append(ft.Partitions, fp)
		f.Topics = append(f.Topics, ft)
		resp, err := f.RequestWith(ctx, cl.Broker(int(broker)))
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode, "%v", resp.ErrorMessage)
		return resp
	}
	// The follower's session: NOT_LEADER_OR_FOLLOWER with the leader.
	resp := fetch(follower, 0, false)
	require.Len(t, resp.Topics, 1)
	p := resp.Topics[0].Partitions[0]
	require.Equal(t, int16(6), p.ErrorCode)
	require.Equal(t, []int32{leader, epoch}, []int32{p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch})
	require.Empty(t, p.AcquiredRecords)
	require.Len(t, resp.NodeEndpoints, 1)
	require.Equal(t, leader, resp.NodeEndpoints[0].NodeID)
	// The leader's session is another: its epoch 0 does not end the
	// follower's, whose epoch 1 still holds.
	resp = fetch(leader, 0, false)
	p = resp.Topics[0].Partitions[0]
	require.Zero(t, p.ErrorCode)
	require.Len(t, p.AcquiredRecords, 1)
	resp = fetch(follower, 1, true)
	p = resp.Topics[0].Partitions[0]
	require.Equal(t, int16(3), p.AcknowledgeErrorCode, "acknowledged at the follower")
	require.Equal(t, int16(6), p.ErrorCode)
	resp = fetch(leader, 1, true)
	p = resp.Topics[0].Partitions[0]
	require.Zero(t, p.AcknowledgeErrorCode, "acknowledged at the leader")
	require.Zero(t, p.ErrorCode)
}

// TestClusterGroupRequestsPerCoordinator: DescribeGroups, DeleteGroups,
// ConsumerGroupDescribe, ShareGroupDescribe and DescribeShareGroupOffsets
// answer the groups another broker coordinates NOT_COORDINATOR, each, and
// act on the broker's own (a group of another broker is not deleted);
// AlterShareGroupOffsets and DeleteShareGroupOffsets answer
// NOT_COORDINATOR for a group not the broker's, as Kafka's coordinators
// answer them.
func TestClusterGroupRequestsPerCoordinator(t *testing.T) {
	// The command, for __consumer_offsets' partitions: six, led by the
	// three brokers.
	c := startCommand(t, "-dir", t.TempDir(), "-listen", "127.0.0.1:0", "-brokers", "3",
		"-override", "offsets.topic.num.partitions=6")
	var seeds []string
	var ids []int32
	for _, b := range commandBrokerRe.FindAllStringSubmatch(c.line, -1) {
		seeds = append(seeds, b[2])
		var id int32
		fmt.Sscan(b[1], &id)
		ids = append(ids, id)
	}
	require.Len(t, seeds, 3, c.line)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	require.NoError(t, err)
	defer cl.Close()
	// Groups until two coordinators are covered, each group with a
	// commit (so that it exists).
	coordOf := map[string]int32{}
	byCoord := map[int32][]string{}
	for i := 0; len(byCoord) < 2 || len(coordOf) < 6; i++ {
		g := fmt.Sprint("grp-", i)
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = g, []string{g}
		fr, err := fc.RequestWith(ctx, cl)
		require.NoError(t, err)
		if fr.Coordinators[0].ErrorCode != 0 {
			i--
			time.Sleep(20 * time.Millisecond)
			continue
		}
		c := fr.Coordinators[0].NodeID
		coordOf[g] = c
		byCoord[c] = append(byCoord[c], g)
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "t", 1, 1
	ct.Topics = append(ct.Topics, ctt)
	ctr, err := ct.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, ctr.Topics[0].ErrorCode)
	tid := topicIDOf(t, cl, "t")
	for g, c := range coordOf {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Group, oc.Generation = g, -1
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic, ot.TopicID = "t", tid
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Offset = 0
		ot.Partitions = append(ot.Partitions, op)
		oc.Topics = append(oc.Topics, ot)
		resp, err := oc.RequestWith(ctx, cl.Broker(int(c)))
		require.NoError(t, err)
		require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode, g)
	}
	groups := slices.Sorted(func(yield func(string) bool) {
		for g := range coordOf {
			if !yield(g) {
				return
			}
		}
	})
	var me int32
	for c := range byCoord {
		me = c
		break
	}
	at := cl.Broker(int(me))
	check := func(what string, got map[string]int16) {
		t.Helper()
		require.Len(t, got, len(groups), what)
		for _, g := range groups {
			if coordOf[g] == me {
				require.NotEqual(t, int16(16), got[g], "%s %s at its coordinator", what, g)
			} else {
				require.Equal(t, int16(16), got[g], "%s %s at broker %d, not its coordinator", what, g, me)
			}
		}
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = slices.Clone(groups)
	dgr, err := dg.RequestWith(ctx, at)
	require.NoError(t, err)
	got := map[string]int16{}
	for _, g := range dgr.Groups {
		got[g.Group] = g.ErrorCode
	}
	check("DescribeGroups", got)

	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = slices.Clone(groups)
	cdr, err := cd.RequestWith(ctx, at)
	require.NoError(t, err)
	got = map[string]int16{}
	for _, g := range cdr.Groups {
		got[g.Group] = g.ErrorCode
	}
	check("ConsumerGroupDescribe", got)

	sd := kmsg.NewPtrShareGroupDescribeRequest()
	sd.GroupIDs = slices.Clone(groups)
	sdr, err := sd.RequestWith(ctx, at)
	require.NoError(t, err)
	got = map[string]int16{}
	for _, g := range sdr.Groups {
		got[g.GroupID] = g.ErrorCode
	}
	check("ShareGroupDescribe", got)

	so := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	for _, g := range groups {
		rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		rg.GroupID = g
		so.Groups = append(so.Groups, rg)
	}
	sor, err := so.RequestWith(ctx, at)
	require.NoError(t, err)
	got = map[string]int16{}
	for _, g := range sor.Groups {
		got[g.GroupID] = g.ErrorCode
	}
	check("DescribeShareGroupOffsets", got)

	for _, g := range groups {
		if coordOf[g] == me {
			continue
		}
		as := kmsg.NewPtrAlterShareGroupOffsetsRequest()
		as.GroupID = g
		asr, err := as.RequestWith(ctx, at)
		require.NoError(t, err)
		require.Equal(t, int16(16), asr.ErrorCode, "AlterShareGroupOffsets")
		ds := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		ds.GroupID = g
		dsr, err := ds.RequestWith(ctx, at)
		require.NoError(t, err)
		require.Equal(t, int16(16), dsr.ErrorCode, "DeleteShareGroupOffsets")
		break
	}

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = slices.Clone(groups)
	delr, err := del.RequestWith(ctx, at)
	require.NoError(t, err)
	got = map[string]int16{}
	for _, g := range delr.Groups {
		got[g.Group] = g.ErrorCode
	}
	check("DeleteGroups", got)
	for _, g := range groups {
		require.Equal(t, coordOf[g] == me, got[g] == 0, "%s deleted only at its coordinator: %d", g, got[g])
	}
	// The other brokers' groups are still there.
	lg := kmsg.NewPtrListGroupsRequest()
	var listed []string
	for _, id := range ids {
		lr, err := lg.RequestWith(ctx, cl.Broker(int(id)))
		require.NoError(t, err)
		for _, g := range lr.Groups {
			listed = append(listed, g.Group)
		}
	}
	for _, g := range groups {
		require.Equal(t, coordOf[g] != me, slices.Contains(listed, g), g)
	}
}

// TestClusterAddPartitionsToTxnPerCoordinator: AddPartitionsToTxn v4+,
// Kafka's broker-to-coordinator form naming several transactions, answers
// each transaction another broker coordinates NOT_COORDINATOR for every
// partition, as Kafka's coordinators answer, and handles the broker's own.
func TestClusterAddPartitionsToTxnPerCoordinator(t *testing.T) {
	c := startCommand(t, "-dir", t.TempDir(), "-listen", "127.0.0.1:0", "-brokers", "3",
		"-override", "transaction.state.log.num.partitions=6")
	var seeds []string
	for _, b := range commandBrokerRe.FindAllStringSubmatch(c.line, -1) {
		seeds = append(seeds, b[2])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	require.NoError(t, err)
	defer cl.Close()
	coordOf := map[string]int32{}
	byCoord := map[int32][]string{}
	for i := 0; len(byCoord) < 2; i++ {
		id := fmt.Sprint("txn-", i)
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, id, []string{id}
		fr, err := fc.RequestWith(ctx, cl)
		require.NoError(t, err)
		if fr.Coordinators[0].ErrorCode != 0 {
			i--
			time.Sleep(20 * time.Millisecond)
			continue
		}
		coordOf[id] = fr.Coordinators[0].NodeID
		byCoord[coordOf[id]] = append(byCoord[coordOf[id]], id)
	}
	var me int32
	for id := range byCoord {
		me = id
		break
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	for id := range coordOf {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, 1, 0, true
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = "t", []int32{0, 1}
		tx.Topics = append(tx.Topics, tt)
		req.Transactions = append(req.Transactions, tx)
	}
	resp, err := cl.Broker(int(me)).RetriableRequest(ctx, req)
	require.NoError(t, err)
	ar := resp.(*kmsg.AddPartitionsToTxnResponse)
	require.Len(t, ar.Transactions, len(coordOf))
	for _, tx := range ar.Transactions {
		require.Len(t, tx.Topics, 1)
		require.Len(t, tx.Topics[0].Partitions, 2)
		for _, p := range tx.Topics[0].Partitions {
			if coordOf[tx.TransactionalID] == me {
				require.NotEqual(t, int16(16), p.ErrorCode, "%s at its coordinator", tx.TransactionalID)
			} else {
				require.Equal(t, int16(16), p.ErrorCode, "%s at broker %d, not its coordinator", tx.TransactionalID, me)
			}
		}
	}
}
