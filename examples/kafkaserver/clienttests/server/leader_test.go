package server_test

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/log/coordinator"
)

// takeAllProtocol is a protocol name kafkalite's own assignors do not
// have: a group using it can only be assigned by its members' code.
const takeAllProtocol = "take-all"

// takeAllBalancer is a franz-go group balancer for takeAllProtocol that
// gives every partition to the member whose id sorts first.
type takeAllBalancer struct{}

func (takeAllBalancer) ProtocolName() string { return takeAllProtocol }
func (takeAllBalancer) IsCooperative() bool  { return false }
func (takeAllBalancer) JoinGroupMetadata(topics []string, _ map[string][]int32, _ int32) []byte {
	md := kmsg.NewConsumerMemberMetadata()
	md.Topics = topics
	return md.AppendTo(nil)
}
func (takeAllBalancer) ParseSyncAssignment(b []byte) (map[string][]int32, error) {
	return kgo.ParseConsumerSyncAssignment(b)
}
func (tb takeAllBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	b, err := kgo.NewConsumerBalancer(tb, members)
	if err != nil {
		return nil, nil, err
	}
	return b, b.MemberTopics(), nil
}
func (takeAllBalancer) Balance(b *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	plan := b.NewPlan()
	members := b.Members()
	first := &members[0]
	for i := range members {
		if members[i].MemberID < first.MemberID {
			first = &members[i]
		}
	}
	for topic, n := range topics {
		for p := range n {
			plan.AddPartition(first, topic, p)
		}
	}
	return plan
}

// takeAllAssignor is kafkalite's assignor for takeAllProtocol, with the
// opposite rule: every partition to the member whose id sorts last. Which
// member holds the partitions tells which leader's code assigned them.
type takeAllAssignor struct{}

func (takeAllAssignor) Name() string                   { return takeAllProtocol }
func (takeAllAssignor) Protocols() []assignor.Protocol { return []assignor.Protocol{assignor.Eager} }
func (takeAllAssignor) Assign(counts map[string]int32, members []assignor.Member) (map[string][]assignor.TopicPartition, error) {
	out := map[string][]assignor.TopicPartition{}
	last := ""
	for _, m := range members {
		out[m.ID] = []assignor.TopicPartition{}
		last = max(last, m.ID)
	}
	for _, m := range members {
		if m.ID != last {
			continue
		}
		for _, topic := range m.Topics {
			for p := range counts[topic] {
				out[m.ID] = append(out[m.ID], assignor.TopicPartition{Topic: topic, Partition: p})
			}
		}
		slices.SortFunc(out[m.ID], func(a, b assignor.TopicPartition) int { return int(a.Partition - b.Partition) })
	}
	return out, nil
}

// describeAssignments returns a stable group's members' partitions of
// one topic, by member id, as DescribeGroups gives them, or nil while the
// group is not stable with n members.
func describeAssignments(t *testing.T, cl *kgo.Client, group string, n int) map[string][]int32 {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].State != "Stable" || len(resp.Groups[0].Members) != n {
		return nil
	}
	out := map[string][]int32{}
	for _, m := range resp.Groups[0].Members {
		var as kmsg.ConsumerMemberAssignment
		require.NoError(t, as.ReadFrom(m.MemberAssignment))
		out[m.MemberID] = []int32{}
		for _, at := range as.Topics {
			out[m.MemberID] = append(out[m.MemberID], at.Partitions...)
		}
	}
	return out
}

// holder returns the one member holding all n partitions, or "" if they
// are not all held by one member.
func holder(assignments map[string][]int32, n int) string {
	for id, parts := range assignments {
		if len(parts) == n {
			return id
		}
	}
	return ""
}

// TestLeaderAssigns: the group's leader assigns with its own assignor, as
// in Kafka. Two franz-go members using a protocol kafkalite does not
// implement get the franz-go leader's assignment; in a group of a
// franz-go client and an in-process kafkalite consumer, both offering the
// same protocol name with opposite rules, the partitions go where the
// leader's rule puts them, whichever side leads.
func TestLeaderAssigns(t *testing.T) {
	const parts = 4
	start := func(t *testing.T, srv *servertest.Server, group string) *groupConsumer {
		t.Helper()
		prod := client(t, srv.Addr, kgo.ProducerLinger(0))
		createTopic(t, prod, "lead", parts)
		return startGroupConsumer(t, srv.Addr, group, "lead", takeAllBalancer{})
	}
	local := func(t *testing.T, srv *servertest.Server, group string) *consumer.Consumer {
		t.Helper()
		cfg := consumer.DefaultConfig()
		cfg.GroupID = group
		cfg.PartitionAssignmentStrategy = []assignor.Assignor{takeAllAssignor{}}
		c, err := consumer.New(srv.Dir, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, c.Close(context.Background())) })
		require.NoError(t, c.Subscribe([]string{"lead"}, nil))
		return c
	}
	// poll keeps the in-process consumer in the group while cond waits.
	pollUntil := func(t *testing.T, c *consumer.Consumer, cond func() bool, msg string) {
		t.Helper()
		eventually(t, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, _ = c.Poll(ctx)
			return cond()
		}, "%s", msg)
	}

	t.Run("network members only", func(t *testing.T) {
		srv := servertest.Start(t, nil)
		a := start(t, srv, "g")
		defer a.close()
		b := startGroupConsumer(t, srv.Addr, "g", "lead", takeAllBalancer{})
		defer b.close()
		admin := client(t, srv.Addr)
		var got map[string][]int32
		eventually(t, func() bool { got = describeAssignments(t, admin, "g", 2); return got != nil }, "the group did not settle")
		ids := slices.Sorted(func(yield func(string) bool) {
			for id := range got {
				if !yield(id) {
					return
				}
			}
		})
		require.Len(t, got[ids[0]], parts, "the franz-go leader gives everything to the first id: %v", got)
		require.Empty(t, got[ids[1]])
	})

	t.Run("network leader, in-process follower", func(t *testing.T) {
		srv := servertest.Start(t, nil)
		remote := start(t, srv, "g")
		defer remote.close()
		admin := client(t, srv.Addr)
		eventually(t, func() bool { return describeAssignments(t, admin, "g", 1) != nil }, "the first member did not settle")
		c := local(t, srv, "g")
		var got map[string][]int32
		pollUntil(t, c, func() bool {
			got = describeAssignments(t, admin, "g", 2)
			return got != nil && holder(got, parts) != ""
		},
			"the group did not settle")
		localID := c.GroupMetadata().MemberID
		first := min(localID, holder(got, parts))
		for id := range got {
			first = min(first, id)
		}
		require.Equal(t, first, holder(got, parts), "the franz-go leader's rule (first id) assigned: %v", got)
		if first == localID {
			require.Len(t, c.Assignment(), parts, "the in-process member took the leader's assignment")
		} else {
			require.Empty(t, c.Assignment())
		}
	})

	t.Run("in-process leader, network follower", func(t *testing.T) {
		srv := servertest.Start(t, nil)
		prod := client(t, srv.Addr, kgo.ProducerLinger(0))
		createTopic(t, prod, "lead", parts)
		c := local(t, srv, "g")
		pollUntil(t, c, func() bool { return len(c.Assignment()) == parts }, "the in-process member did not get the partitions")
		remote := startGroupConsumer(t, srv.Addr, "g", "lead", takeAllBalancer{})
		defer remote.close()
		var got map[string][]int32
		pollUntil(t, c, func() bool { got = describeAssignments(t, prod, "g", 2); return got != nil && holder(got, parts) != "" },
			"the group did not settle")
		last := ""
		for id := range got {
			last = max(last, id)
		}
		require.Equal(t, last, holder(got, parts), "the in-process leader's rule (last id) assigned: %v", got)
		if last == c.GroupMetadata().MemberID {
			require.Len(t, c.Assignment(), parts)
		} else {
			require.Empty(t, c.Assignment())
		}
	})
}

// TestSyncGroupErrors: SyncGroup from an unknown member, of another
// generation, or naming another protocol is refused with Kafka's codes; a
// follower's SyncGroup waits for the leader's and gets what the leader
// assigned it, bytes for bytes; a group of another protocol type than
// "consumer" works as Kafka's does, its metadata passed through.
func TestSyncGroupErrors(t *testing.T) {
	srv := servertest.Start(t, nil)
	// A client per worker: a connection's requests are answered in order,
	// so a JoinGroup waiting for the rebalance holds its connection.
	clients := map[string]*kgo.Client{"worker-a": client(t, srv.Addr), "worker-b": client(t, srv.Addr)}
	cl := client(t, srv.Addr)
	ctx := context.Background()
	// ids are the member ids the workers were given (KIP-394: a first
	// JoinGroup without one is answered MEMBER_ID_REQUIRED with it).
	ids := map[string]string{}
	rawJoin := func(worker, id, meta string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = 5
		req.Group, req.MemberID, req.ProtocolType = "connect-like", id, "connect"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "sessioned", []byte(meta)
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctx, clients[worker])
		require.NoError(t, err)
		return resp
	}
	for _, w := range []string{"worker-a", "worker-b"} {
		resp := rawJoin(w, "", "")
		require.Equal(t, int16(79), resp.ErrorCode, "MEMBER_ID_REQUIRED")
		ids[w] = resp.MemberID
	}
	join := func(worker, meta string) *kmsg.JoinGroupResponse { return rawJoin(worker, ids[worker], meta) }
	idOf := func(name string) string { return cmp.Or(ids[name], name) }
	sync := func(member string, gen int32, protocol string, assign map[string]string) *kmsg.SyncGroupResponse {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version = 5
		req.Group, req.MemberID, req.Generation = "connect-like", idOf(member), gen
		pt := "connect"
		req.ProtocolType, req.Protocol = &pt, &protocol
		for name, b := range assign {
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID, a.MemberAssignment = idOf(name), []byte(b)
			req.GroupAssignment = append(req.GroupAssignment, a)
		}
		c := clients[member]
		if c == nil {
			c = cl
		}
		resp, err := req.RequestWith(ctx, c)
		require.NoError(t, err)
		return resp
	}
	leader := join("worker-a", "meta-a")
	require.Equal(t, int16(0), leader.ErrorCode)
	require.Equal(t, ids["worker-a"], leader.LeaderID)
	require.Len(t, leader.Members, 1)
	require.Equal(t, "meta-a", string(leader.Members[0].ProtocolMetadata), "the metadata is passed through")

	require.Equal(t, int16(25), sync("nobody", leader.Generation, "sessioned", nil).ErrorCode, "UNKNOWN_MEMBER_ID")
	require.Equal(t, int16(22), sync("worker-a", leader.Generation+1, "sessioned", nil).ErrorCode, "ILLEGAL_GENERATION")
	require.Equal(t, int16(23), sync("worker-a", leader.Generation, "other", nil).ErrorCode, "INCONSISTENT_GROUP_PROTOCOL")
	got := sync("worker-a", leader.Generation, "sessioned", map[string]string{"worker-a": "task-1,task-2"})
	require.Equal(t, int16(0), got.ErrorCode)
	require.Equal(t, "task-1,task-2", string(got.MemberAssignment))

	// A consumer cannot join a group of another protocol type.
	consumerJoin := kmsg.NewPtrJoinGroupRequest()
	consumerJoin.Version = 5
	consumerJoin.Group, consumerJoin.MemberID, consumerJoin.ProtocolType = "connect-like", "c", "consumer"
	consumerJoin.SessionTimeoutMillis, consumerJoin.RebalanceTimeoutMillis = 10000, 10000
	consumerJoin.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sessioned"}}
	resp, err := consumerJoin.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, int16(23), resp.ErrorCode)

	// A second worker: both rejoin; the follower's sync waits for the
	// leader's and gets its bytes.
	second := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { second <- join("worker-b", "meta-b") }()
	var again *kmsg.JoinGroupResponse
	eventually(t, func() bool {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = "connect-like", ids["worker-a"], leader.Generation
		r, err := hb.RequestWith(ctx, clients["worker-a"])
		return err == nil && r.ErrorCode == 27 // REBALANCE_IN_PROGRESS: rejoin
	}, "the leader was not told to rejoin")
	again = join("worker-a", "meta-a")
	follower := <-second
	require.Equal(t, again.Generation, follower.Generation)
	require.Equal(t, ids["worker-a"], again.LeaderID)
	require.Len(t, again.Members, 2)
	require.Empty(t, follower.Members, "only the leader gets the members")
	followerSync := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { followerSync <- sync("worker-b", follower.Generation, "sessioned", nil) }()
	require.Equal(t, int16(0), sync("worker-a", again.Generation, "sessioned", map[string]string{"worker-a": "A", "worker-b": "B"}).ErrorCode)
	require.Equal(t, "B", string((<-followerSync).MemberAssignment))

	// DescribeGroups gives each member's metadata and assignment as sent.
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{"connect-like"}
	dr, err := describe.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, "connect", dr.Groups[0].ProtocolType)
	require.Equal(t, "sessioned", dr.Groups[0].Protocol)
	got2 := map[string]string{}
	for _, m := range dr.Groups[0].Members {
		got2[m.MemberID] = string(m.ProtocolMetadata) + "/" + string(m.MemberAssignment)
	}
	require.Equal(t, map[string]string{ids["worker-a"]: "meta-a/A", ids["worker-b"]: "meta-b/B"}, got2)
}

// TestStaticMembership: a franz-go member with a group.instance.id that
// closes (a static member does not leave its group) and starts again
// takes its old place without a rebalance: the generation stays, the
// partitions it had are its again, and its new member id is made from its
// instance id, as Kafka makes it.
func TestStaticMembership(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, admin, "static", 4)
	dynamic := startGroupConsumer(t, srv.Addr, "g", "static", kgo.RangeBalancer())
	defer dynamic.close()
	eventually(t, func() bool { return describeAssignments(t, admin, "g", 1) != nil }, "the first member did not settle")
	static := startGroupConsumer(t, srv.Addr, "g", "static", kgo.RangeBalancer(), kgo.InstanceID("worker-1"))
	var before map[string][]int32
	eventually(t, func() bool {
		before = describeAssignments(t, admin, "g", 2)
		return before != nil && len(before) == 2 && !slices.ContainsFunc(slices.Collect(maps.Values(before)), func(p []int32) bool { return len(p) != 2 })
	}, "the group did not settle with two members")
	coord, err := coordinator.Groups(context.Background(), srv.Dir)
	require.NoError(t, err)
	d, err := coord.DescribeGroup("g")
	require.NoError(t, err)
	generation := d.Generation
	staticID := ""
	for id := range before {
		if strings.HasPrefix(id, "worker-1-") {
			staticID = id
		}
	}
	require.NotEmpty(t, staticID, "the static member's id is made from its instance id: %v", before)
	static.close()

	again := startGroupConsumer(t, srv.Addr, "g", "static", kgo.RangeBalancer(), kgo.InstanceID("worker-1"))
	defer again.close()
	var after map[string][]int32
	eventually(t, func() bool {
		after = describeAssignments(t, admin, "g", 2)
		return after != nil && after[staticID] == nil && len(after) == 2
	}, "the static member did not come back under a new id")
	for id, parts := range after {
		if strings.HasPrefix(id, "worker-1-") {
			require.ElementsMatch(t, before[staticID], parts, "the static member's partitions are its again")
		} else {
			require.Contains(t, before, id, "the dynamic member stayed")
		}
	}
	d, err = coord.DescribeGroup("g")
	require.NoError(t, err)
	require.Equal(t, generation, d.Generation, "no rebalance")
}

// TestJoinWithUnknownMemberID: a JoinGroup naming a member id the group
// never gave is refused with UNKNOWN_MEMBER_ID, as Kafka refuses it; the
// id a MEMBER_ID_REQUIRED answer gave joins.
func TestJoinWithUnknownMemberID(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	join := func(member string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = 5
		req.Group, req.MemberID, req.ProtocolType = "g", member, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
		md := kmsg.NewConsumerMemberMetadata()
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", md.AppendTo(nil)
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(context.Background(), cl)
		require.NoError(t, err)
		return resp
	}
	require.Equal(t, int16(25), join("made-up").ErrorCode, "UNKNOWN_MEMBER_ID")
	first := join("")
	require.Equal(t, int16(79), first.ErrorCode, "MEMBER_ID_REQUIRED")
	joined := join(first.MemberID)
	require.Equal(t, int16(0), joined.ErrorCode)
	require.Equal(t, first.MemberID, joined.MemberID)
	require.Equal(t, first.MemberID, joined.LeaderID)
}
