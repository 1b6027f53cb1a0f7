package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	kllog "github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// groupConsumer is a franz-go group member that records what it gets.
type groupConsumer struct {
	cl   *kgo.Client
	mu   sync.Mutex
	got  map[string]int
	tps  map[int32]bool
	done chan struct{}
}

func startGroupConsumer(t *testing.T, addr, group, topic string, balancer kgo.GroupBalancer, opts ...kgo.Opt) *groupConsumer {
	t.Helper()
	if balancer != nil {
		opts = append([]kgo.Opt{kgo.Balancers(balancer)}, opts...)
	}
	gc := &groupConsumer{got: map[string]int{}, tps: map[int32]bool{}, done: make(chan struct{})}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	gc.cl = cl
	go func() {
		defer close(gc.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				gc.mu.Lock()
				gc.got[string(r.Value)]++
				gc.tps[r.Partition] = true
				gc.mu.Unlock()
			})
			_ = cl.CommitUncommittedOffsets(context.Background())
		}
	}()
	return gc
}

func (gc *groupConsumer) close() {
	gc.cl.Close()
	<-gc.done
}

func (gc *groupConsumer) count() int {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	n := 0
	for _, c := range gc.got {
		n += c
	}
	return n
}

// eventually polls cond every 20 ms for up to 30 s.
func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		<-tick.C
	}
}

// TestConsumerGroup: two franz-go members of one group share a topic's
// four partitions (each with the balancer it names: the coordinator
// assigns with kafkalite's implementation of the protocol), read every
// record, commit; kafka's OffsetFetch returns the commits; a third
// member that joins after the first two left reads nothing again.
func TestConsumerGroup(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"range", kgo.RangeBalancer()},
		{"roundrobin", kgo.RoundRobinBalancer()},
		{"sticky", kgo.StickyBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := servertest.Start(t, nil)
			prod := client(t, srv.Addr, kgo.ProducerLinger(0))
			createTopic(t, prod, "events", 4)
			const n = 400
			produceKeyed(t, prod, "events", n)

			a := startGroupConsumer(t, srv.Addr, "g", "events", tc.balancer)
			b := startGroupConsumer(t, srv.Addr, "g", "events", tc.balancer)
			eventually(t, func() bool { return a.count()+b.count() == n }, "the group read %d+%d of %d", a.count(), b.count(), n)

			// Both members hold partitions once the group is stable.
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = []string{"g"}
			eventually(t, func() bool {
				resp, err := req.RequestWith(context.Background(), prod)
				if err != nil || len(resp.Groups) != 1 || resp.Groups[0].State != "Stable" || len(resp.Groups[0].Members) != 2 {
					return false
				}
				for _, m := range resp.Groups[0].Members {
					var as kmsg.ConsumerMemberAssignment
					if as.ReadFrom(m.MemberAssignment) != nil || len(as.Topics) != 1 || len(as.Topics[0].Partitions) != 2 {
						return false
					}
				}
				return resp.Groups[0].Protocol == tc.name
			}, "the group did not settle with two members of two partitions each")

			// The commits land in __consumer_offsets: OffsetFetch sees them.
			fetch := kmsg.NewPtrOffsetFetchRequest()
			fetch.Group = "g"
			eventually(t, func() bool {
				resp, err := fetch.RequestWith(context.Background(), prod)
				if err != nil || len(resp.Topics) != 1 {
					return false
				}
				var total int64
				for _, p := range resp.Topics[0].Partitions {
					total += p.Offset
				}
				return total == n
			}, "committed offsets do not add up to %d", n)
			a.close()
			b.close()

			c := startGroupConsumer(t, srv.Addr, "g", "events", tc.balancer)
			defer c.close()
			require.NoError(t, prod.ProduceSync(context.Background(), &kgo.Record{Topic: "events", Value: []byte("after")}).FirstErr())
			eventually(t, func() bool { return c.count() == 1 }, "the third member read %d records, not the one after the commits", c.count())
		})
	}
}

// produceKeyed produces n records to topic, record i with key "k<i>" and
// value "v<i>".
func produceKeyed(t *testing.T, cl *kgo.Client, topic string, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)})
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

// TestMixedGroup: a kafkalite consumer in the same process and a
// franz-go client over the network are members of one group: once it
// settles each holds two of the four partitions, none held by both, and
// between them they read every record (at least once: partitions move
// while the group forms).
func TestMixedGroup(t *testing.T) {
	mixedGroup(t, "mixed", "classic", []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())},
		func(cl *kgo.Client, localID string) []int32 {
			describe := kmsg.NewPtrDescribeGroupsRequest()
			describe.Groups = []string{"mixed"}
			resp, err := describe.RequestWith(context.Background(), cl)
			if err != nil || len(resp.Groups) != 1 || resp.Groups[0].State != "Stable" || len(resp.Groups[0].Members) != 2 {
				return nil
			}
			for _, m := range resp.Groups[0].Members {
				var as kmsg.ConsumerMemberAssignment
				if m.MemberID != localID && as.ReadFrom(m.MemberAssignment) == nil && len(as.Topics) == 1 {
					return as.Topics[0].Partitions
				}
			}
			return nil
		})
}

// mixedGroup runs a mixed group: a kafkalite consumer in the server's
// process (group.protocol protocol) and a franz-go client over the
// network (remoteOpts) in group; remoteParts asks the server, through
// cl, for the remote member's partitions once the group is stable (nil
// before). Once it settles each holds two of the four partitions, none
// held by both, and between them they read every record.
func mixedGroup(t *testing.T, group, protocol string, remoteOpts []kgo.Opt, remoteParts func(cl *kgo.Client, localID string) []int32) {
	srv := servertest.Start(t, nil)
	prod := client(t, srv.Addr, kgo.ProducerLinger(0))
	topic := group + "-topic"
	createTopic(t, prod, topic, 4)
	const n = 200
	produceKeyed(t, prod, topic, n)

	remote := startGroupConsumer(t, srv.Addr, group, topic, nil, remoteOpts...)
	defer remote.close()
	cfg := consumer.DefaultConfig()
	cfg.GroupID, cfg.GroupProtocol = group, protocol
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	local, err := consumer.New(srv.Dir, cfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, local.Close(context.Background())) }()
	require.NoError(t, local.Subscribe([]string{topic}, nil))
	seen := map[string]bool{}
	var parts []int32
	eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		rs, _ := local.Poll(ctx)
		for _, r := range rs {
			seen[string(r.Value)] = true
		}
		remote.mu.Lock()
		for v := range remote.got {
			seen[v] = true
		}
		remote.mu.Unlock()
		parts = remoteParts(prod, local.GroupMetadata().MemberID)
		return len(seen) == n && len(local.Assignment()) == 2 && len(parts) == 2
	}, "read %d of %d records; local assignment %v, remote %v", len(seen), n, local.Assignment(), parts)
	for _, p := range parts {
		require.False(t, containsPartition(local.Assignment(), p), "partition %d held by both members", p)
	}
}

func containsPartition(tps []kllog.TopicPartition, p int32) bool {
	for _, tp := range tps {
		if tp.Partition == p {
			return true
		}
	}
	return false
}

// TestOffsetDelete: a group's committed offsets of a topic are deleted
// once no member is subscribed to it, as kafka-consumer-groups
// --delete-offsets does.
func TestOffsetDelete(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, cl, "od", 1)
	ctx := context.Background()
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "odg", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic, ct.TopicID = "od", topicIDFor(t, cl, "od")
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset = 0, 5
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{cp}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	cresp, err := commit.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, cresp.Topics[0].Partitions[0].ErrorCode)

	del := kmsg.NewPtrOffsetDeleteRequest()
	del.Group = "odg"
	dt := kmsg.NewOffsetDeleteRequestTopic()
	dt.Topic = "od"
	dt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	del.Topics = []kmsg.OffsetDeleteRequestTopic{dt}
	dresp, err := del.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, dresp.ErrorCode)
	require.Zero(t, dresp.Topics[0].Partitions[0].ErrorCode)

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = "odg"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "od", []int32{0}
	fetch.Topics = []kmsg.OffsetFetchRequestTopic{ft}
	fresp, err := fetch.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, int64(-1), fresp.Topics[0].Partitions[0].Offset, "deleted")
}

// TestGroupMaxCountOverTheWire: a client creates no group beyond the
// directory's GroupMaxCount: an OffsetCommit of a new group and a
// JoinGroup asking for its member id answer GROUP_MAX_SIZE_REACHED (Kafka
// bounds a group's members, not the groups; its code for a bound reached,
// which clients do not retry), while the existing groups carry on and
// nothing is made for the refused requests. A DeleteGroups makes room.
func TestGroupMaxCountOverTheWire(t *testing.T) {
	cfg := kllog.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.GroupMaxCount = 2
	d, err := kllog.Open(context.Background(), "/kafkalite", cfg)
	require.NoError(t, err)
	cl := client(t, serveDir(t, d))
	createTopic(t, cl, "gm", 1)
	ctx := context.Background()
	commit := func(group string) int16 { return offsetCommitCode(t, cl, group, "gm", 1) }
	join := func(group string) int16 {
		t.Helper()
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.ProtocolType, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = group, "consumer", 10_000, 10_000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.ErrorCode
	}
	const groupMaxSizeReached = 81
	require.Zero(t, commit("g1"))
	require.Zero(t, commit("g2"))
	require.Equal(t, int16(groupMaxSizeReached), commit("g3"))
	require.Equal(t, int16(groupMaxSizeReached), join("g4"))
	require.Zero(t, commit("g1"), "an existing group carries on")
	list, err := kmsg.NewPtrListGroupsRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Len(t, list.Groups, 2)

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g2"}
	dresp, err := del.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, dresp.Groups[0].ErrorCode)
	require.Equal(t, int16(79), join("g4"), "MEMBER_ID_REQUIRED: the group is made")
}

// offsetCommitCode commits offset for topic-0 in group without membership
// (generation -1) and returns the partition's error code.
func offsetCommitCode(t *testing.T, cl *kgo.Client, group, topic string, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, topicIDFor(t, cl, topic) // v10 names topics by id
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Topics[0].Partitions[0].ErrorCode
}
