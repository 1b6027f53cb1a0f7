package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	kllog "github.com/kafkalite/kafkalite/log"
)

// TestClusterMetadataListsBrokersAndLeaders: three virtual brokers, a
// topic of six partitions with replication factor 3: Metadata lists the
// three brokers at their own ports, each partition with three replicas, a
// leader among them, and the leaders spread over the brokers.
func TestClusterMetadataListsBrokersAndLeaders(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.DefaultReplicationFactor = 3 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	_, err = adm.CreateTopic(ctx, 6, -1, nil, "spread")
	require.NoError(t, err)
	md, err := adm.Metadata(ctx, "spread")
	require.NoError(t, err)
	require.Len(t, md.Brokers, 3)
	for _, b := range md.Brokers {
		require.Equal(t, srv.Addrs[b.NodeID], fmt.Sprintf("%s:%d", b.Host, b.Port))
	}
	leaders := map[int32]int{}
	for _, p := range md.Topics["spread"].Partitions {
		require.NoError(t, p.Err)
		require.Len(t, p.Replicas, 3)
		require.Contains(t, p.Replicas, p.Leader)
		require.ElementsMatch(t, p.Replicas, p.ISR)
		leaders[p.Leader]++
	}
	require.Len(t, leaders, 3, "leaders %v", leaders)

	// A replication factor above the brokers is refused as Kafka refuses it.
	resp, _ := adm.CreateTopic(ctx, 1, 4, nil, "too-many")
	require.ErrorContains(t, resp.Err, "INVALID_REPLICATION_FACTOR")
	// A manual assignment over the brokers is kept.
	ids := srv.Srv().Brokers()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "manual", -1, -1
	for p, reps := range [][]int32{{ids[2], ids[0]}, {ids[1], ids[2]}} {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), reps
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	cresp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, int16(0), cresp.Topics[0].ErrorCode)
	require.Equal(t, int16(2), cresp.Topics[0].ReplicationFactor)
	leader, _, replicas, err := srv.Srv().PartitionLeader("manual", 1)
	require.NoError(t, err)
	require.Equal(t, []int32{ids[1], ids[2]}, replicas)
	require.Equal(t, ids[1], leader)
}

// TestClusterNotLeader: a Produce, Fetch and ListOffsets sent to a broker
// that does not lead the partition are answered NOT_LEADER_OR_FOLLOWER
// with the leader and its epoch (KIP-951), nothing appended; the leader
// serves them.
func TestClusterNotLeader(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.DefaultReplicationFactor = 3 })
	ctx := context.Background()
	_, err := srv.Dir.CreateTopic(ctx, "t", 1, nil)
	require.NoError(t, err)
	leader, epoch, _, err := srv.Srv().PartitionLeader("t", 0)
	require.NoError(t, err)
	var other int32 = -1
	for _, id := range srv.Srv().Brokers() {
		if id != leader {
			other = id
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr))
	require.NoError(t, err)
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, "t") // learns the brokers
	require.NoError(t, err)
	td := struct{ ID [16]byte }{md.Topics["t"].ID}

	batch := oneRecordBatch(t, 'x', 10)
	produce := func(to int32) kmsg.ProduceResponseTopicPartition {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 12, -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = "t", td.ID
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(to)))
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0]
	}
	rp := produce(other)
	require.Equal(t, int16(6), rp.ErrorCode)
	require.Equal(t, leader, rp.CurrentLeader.LeaderID)
	require.Equal(t, epoch, rp.CurrentLeader.LeaderEpoch)
	l, err := srv.Dir.Partition("t", 0)
	require.NoError(t, err)
	require.Equal(t, int64(0), l.LogEndOffset())
	rp = produce(leader)
	require.Equal(t, int16(0), rp.ErrorCode)
	require.Equal(t, int64(1), l.LogEndOffset())

	fetch := func(to int32) kmsg.FetchResponseTopicPartition {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxWaitMillis, req.MaxBytes = 12, 5000, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = "t", td.ID
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		resp, err := req.RequestWith(ctx, cl.Broker(int(to)))
		require.NoError(t, err)
		require.Len(t, resp.Topics, 1)
		return resp.Topics[0].Partitions[0]
	}
	fp := fetch(other)
	require.Equal(t, int16(6), fp.ErrorCode)
	require.Equal(t, leader, fp.CurrentLeader.LeaderID)
	fp = fetch(leader)
	require.Equal(t, int16(0), fp.ErrorCode)
	require.NotEmpty(t, fp.RecordBatches)

	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	loResp, err := lo.RequestWith(ctx, cl.Broker(int(other)))
	require.NoError(t, err)
	require.Equal(t, int16(6), loResp.Topics[0].Partitions[0].ErrorCode)
}

// TestClusterProduceConsumeThroughLeaderMoves: franz-go produces with
// acks=all and idempotence while leaders move (MoveLeader, ElectLeaders)
// and a broker stops and starts again; a consumer then reads every
// record, once, in order per partition, and the leader epochs went up.
func TestClusterProduceConsumeThroughLeaderMoves(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.DefaultReplicationFactor = 3 })
	ctx := context.Background()
	const topic, parts, total = "moves", 3, 3000
	_, err := srv.Dir.CreateTopic(ctx, topic, parts, nil)
	require.NoError(t, err)
	ids := srv.Srv().Brokers()
	addrs := make([]string, 0, len(ids))
	for _, id := range ids {
		addrs = append(addrs, srv.Addrs[id])
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(10*time.Millisecond))
	require.NoError(t, err)
	defer prod.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range total {
		wg.Add(1)
		r := &kgo.Record{Topic: topic, Partition: int32(i % parts), Value: fmt.Appendf(nil, "%d", i)}
		prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			wg.Done()
		})
		switch i {
		case total / 5:
			_, err := srv.Srv().MoveLeader(topic, 0, nextOf(t, srv, topic, 0))
			require.NoError(t, err)
		case 2 * total / 5:
			leader, _, _, err := srv.Srv().PartitionLeader(topic, 1)
			require.NoError(t, err)
			srv.StopBroker(t, leader)
			defer srv.StartBroker(t, leader)
		case 3 * total / 5:
			adm := kadm.NewClient(prod)
			_, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
			require.NoError(t, err)
		}
	}
	wg.Wait()
	require.Empty(t, errs)
	for p := range int32(parts) {
		_, epoch, _, err := srv.Srv().PartitionLeader(topic, p)
		require.NoError(t, err)
		if p < 2 {
			require.Positive(t, epoch, "partition %d", p)
		}
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	got := map[int32][]int{}
	n := 0
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for n < total {
		fs := cons.PollFetches(cctx)
		require.NoError(t, cctx.Err(), "consumed %d of %d", n, total)
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			var v int
			fmt.Sscanf(string(r.Value), "%d", &v)
			got[r.Partition] = append(got[r.Partition], v)
			n++
		})
	}
	for p, vs := range got {
		require.True(t, slices.IsSorted(vs), "partition %d out of order", p)
		require.Len(t, vs, total/parts)
	}
}

// nextOf is a replica of the partition that does not lead it.
func nextOf(t *testing.T, srv *servertest.Server, topic string, p int32) int32 {
	t.Helper()
	leader, _, replicas, err := srv.Srv().PartitionLeader(topic, p)
	require.NoError(t, err)
	for _, r := range replicas {
		if r != leader {
			return r
		}
	}
	t.Fatalf("%s-%d has one replica", topic, p)
	return -1
}

// TestClusterStopBrokerAndRestart: a stopped broker leaves Metadata, its
// partitions move to another replica with a higher epoch (a Fetch with the
// old epoch is fenced); a partition whose replicas are all stopped is
// offline (LEADER_NOT_AVAILABLE) until one starts again. Leaders and
// epochs survive a restart of the server.
func TestClusterStopBrokerAndRestart(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.DefaultReplicationFactor = 2 })
	ctx := context.Background()
	_, err := srv.Dir.CreateTopic(ctx, "s", 3, nil)
	require.NoError(t, err)
	ids := srv.Srv().Brokers()
	leader, epoch, replicas, err := srv.Srv().PartitionLeader("s", 0)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", srv.Addrs[leader])
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write(requestFrame(kmsg.ApiVersions.Int16(), 0, nil))
	require.NoError(t, err)
	_, err = readKafkaFrame(conn) // served: the connection is the broker's
	require.NoError(t, err)
	srv.StopBroker(t, leader)
	_, err = readKafkaFrame(conn)
	require.ErrorIs(t, err, io.EOF, "the stopped broker's connection is dropped")
	_, err = net.Dial("tcp", srv.Addrs[leader])
	require.Error(t, err, "its port is closed")
	newLeader, newEpoch, _, err := srv.Srv().PartitionLeader("s", 0)
	require.NoError(t, err)
	require.NotEqual(t, leader, newLeader)
	require.Contains(t, replicas, newLeader)
	require.Greater(t, newEpoch, epoch)
	l, err := srv.Dir.Partition("s", 0)
	require.NoError(t, err)
	require.Equal(t, newEpoch, l.LeaderEpoch(), "the log's epoch")

	var alive []string
	for _, id := range ids {
		if id != leader {
			alive = append(alive, srv.Addrs[id])
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(alive...))
	require.NoError(t, err)
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, "s")
	require.NoError(t, err)
	require.Len(t, md.Brokers, 2)
	for _, p := range md.Topics["s"].Partitions {
		require.NotEqual(t, leader, p.Leader)
		require.NotContains(t, p.ISR, leader)
	}
	// The other replica stops too: the partition is offline.
	srv.StopBroker(t, newLeader)
	off, _, _, err := srv.Srv().PartitionLeader("s", 0)
	require.NoError(t, err)
	require.Equal(t, int32(-1), off)
	srv.StartBroker(t, leader)
	back, backEpoch, _, err := srv.Srv().PartitionLeader("s", 0)
	require.NoError(t, err)
	require.Equal(t, leader, back)
	require.Greater(t, backEpoch, newEpoch)
	srv.StartBroker(t, newLeader)

	srv.Restart(t)
	again, againEpoch, againReplicas, err := srv.Srv().PartitionLeader("s", 0)
	require.NoError(t, err)
	require.Equal(t, []any{back, backEpoch, replicas}, []any{again, againEpoch, againReplicas})
	l, err = srv.Dir.Partition("s", 0)
	require.NoError(t, err)
	require.Equal(t, backEpoch, l.LeaderEpoch(), "given to the log again")
}

// TestClusterGroupFollowsCoordinator: a consumer group's requests go to
// the broker leading __consumer_offsets' partition of the group, which
// FindCoordinator gives; another broker answers NOT_COORDINATOR; a group
// consumes and commits through it.
func TestClusterGroupFollowsCoordinator(t *testing.T) {
	srv := servertest.StartCluster(t, 3, nil)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.DefaultProduceTopic("g"), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr())
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = "grp", []string{"grp"}
	_, err = fc.RequestWith(ctx, cl) // makes __consumer_offsets: COORDINATOR_NOT_AVAILABLE
	require.NoError(t, err)
	fresp, err := fc.RequestWith(ctx, cl)
	require.NoError(t, err)
	coord := fresp.Coordinators[0].NodeID
	if fresp.Version < 4 {
		coord = fresp.NodeID
	}
	leader, _, _, err := srv.Srv().PartitionLeader("__consumer_offsets", 0)
	require.NoError(t, err)
	require.Equal(t, leader, coord)
	for _, id := range srv.Srv().Brokers() {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = "grp", "m", 1
		resp, err := hb.RequestWith(ctx, cl.Broker(int(id)))
		require.NoError(t, err)
		if id == coord {
			require.NotEqual(t, int16(16), resp.ErrorCode)
		} else {
			require.Equal(t, int16(16), resp.ErrorCode, "broker %d", id)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.ConsumerGroup("grp"), kgo.ConsumeTopics("g"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fs := cons.PollFetches(cctx)
	require.NoError(t, cctx.Err())
	require.Equal(t, 1, fs.NumRecords())
	require.NoError(t, cons.CommitUncommittedOffsets(cctx))
}

// TestClusterAdvertisedPorts: with an advertised address whose port is
// set, the brokers advertise its host, that port and the ones after it in
// id order (a proxy in front of each broker), wherever they listen; the
// connections they answer are the ones proxied to them.
func TestClusterAdvertisedPorts(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.AdvertisedAddr = "proxy.example:41000" })
	ctx := context.Background()
	req := kmsg.NewPtrMetadataRequest()
	for _, addr := range srv.Addrs {
		// Straight to each broker: the seed's answer, not a redirect.
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		require.NoError(t, err)
		r, err := cl.SeedBrokers()[0].Request(ctx, req)
		cl.Close()
		require.NoError(t, err)
		resp := r.(*kmsg.MetadataResponse)
		got := map[int32]string{}
		for _, b := range resp.Brokers {
			got[b.NodeID] = fmt.Sprintf("%s:%d", b.Host, b.Port)
		}
		ids := srv.Srv().Brokers()
		want := map[int32]string{}
		for i, id := range ids {
			want[id] = fmt.Sprintf("proxy.example:%d", 41000+i)
		}
		require.Equal(t, want, got)
	}
	// A port range past 65535 is refused at start.
	d, err := kllog.Open(ctx, t.TempDir(), kllog.DefaultConfig())
	require.NoError(t, err)
	defer d.Close()
	cfg := server.DefaultConfig()
	cfg.Brokers, cfg.AdvertisedAddr = 3, "proxy.example:65534"
	_, err = server.New(d, cfg)
	require.ErrorContains(t, err, "3 brokers need the ports up to 65536")
}

// TestClusterReassignPartitions: on virtual brokers AlterPartitionAssignments
// makes the target the partition's replica set at once (nothing to copy:
// one directory), a leader outside it gives way to the target's first
// replica in a new epoch, a leader inside it stays; v1 without
// AllowReplicationFactorChange refuses another replica count with Kafka's
// message; ListPartitionReassignments lists none in progress; records
// produced before and after are all read.
func TestClusterReassignPartitions(t *testing.T) {
	srv := servertest.StartCluster(t, 3, func(c *server.Config) { c.DefaultReplicationFactor = 2 })
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addr), kgo.DefaultProduceTopic("moved"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	_, err = adm.CreateTopic(ctx, 1, -1, nil, "moved")
	require.NoError(t, err)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr())
	leader, epoch, replicas, err := srv.Srv().PartitionLeader("moved", 0)
	require.NoError(t, err)
	require.Len(t, replicas, 2)
	var outside int32 = -1
	for _, id := range srv.Srv().Brokers() {
		if !slices.Contains(replicas, id) {
			outside = id
		}
	}
	other := replicas[0]
	if other == leader {
		other = replicas[1]
	}

	alter := func(v int16, allowRF bool, target []int32) kmsg.AlterPartitionAssignmentsResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		req.SetVersion(v)
		req.AllowReplicationFactorChange = allowRF
		rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		rt.Topic = "moved"
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = 0, target
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode)
		return resp.Topics[0].Partitions[0]
	}
	// Another replica count without AllowReplicationFactorChange.
	got := alter(1, false, []int32{outside})
	require.Equal(t, int16(38), got.ErrorCode)
	require.Equal(t, "The replication factor is changed from 2 to 1", *got.ErrorMessage)
	_, _, still, err := srv.Srv().PartitionLeader("moved", 0)
	require.NoError(t, err)
	require.Equal(t, replicas, still, "a refused target changes nothing")

	// The leader stays when it is in the target.
	got = alter(1, false, []int32{outside, leader})
	require.Zero(t, got.ErrorCode, "%v", got.ErrorMessage)
	l2, e2, r2, err := srv.Srv().PartitionLeader("moved", 0)
	require.NoError(t, err)
	require.Equal(t, []int32{outside, leader}, r2)
	require.Equal(t, leader, l2)
	require.Equal(t, epoch, e2)

	// A leader outside the target gives way, in a new epoch.
	got = alter(0, true, []int32{other})
	require.Zero(t, got.ErrorCode, "%v", got.ErrorMessage)
	l3, e3, r3, err := srv.Srv().PartitionLeader("moved", 0)
	require.NoError(t, err)
	require.Equal(t, []int32{other}, r3)
	require.Equal(t, other, l3)
	require.Greater(t, e3, e2)

	lresp, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Empty(t, lresp.Topics)
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("moved")
	mreq.Topics = append(mreq.Topics, mt)
	mresp, err := mreq.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, []int32{other}, mresp.Topics[0].Partitions[0].Replicas)
	require.Equal(t, other, mresp.Topics[0].Partitions[0].Leader)

	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr())
	recs := consume(t, srv.Addr, "moved", 2)
	require.Equal(t, "before", string(recs[0].Value))
	require.Equal(t, "after", string(recs[1].Value))
}
