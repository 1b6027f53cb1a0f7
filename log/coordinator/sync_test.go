package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// subscriptionOf is a network consumer's metadata for topic t.
func subscriptionOf(t *testing.T) []byte {
	t.Helper()
	b, err := groupcodec.AppendSubscription(nil, groupcodec.Subscription{Topics: []string{"t"}, GenerationID: groupcodec.NoGenerationID})
	require.NoError(t, err)
	return b
}

// assignmentOf encodes partitions of topic t as a leader's assignment.
func assignmentOf(t *testing.T, parts ...int32) []byte {
	t.Helper()
	b, err := groupcodec.AppendAssignment(nil, groupcodec.Assignment{Partitions: []groupcodec.TopicPartitions{{Topic: "t", Partitions: parts}}})
	require.NoError(t, err)
	return b
}

// allowID lets a network member join group g under id, as if a
// MEMBER_ID_REQUIRED answer had given it.
func allowID(c *GroupCoordinator, group, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groupLocked(group)
	if g.members[id] == nil && id != "" {
		if g.pending == nil {
			g.pending = map[string]time.Time{}
		}
		g.pending[id] = c.now().Add(time.Hour)
	}
}

func networkJoin(ctx context.Context, t *testing.T, c *GroupCoordinator, id string, rebalance time.Duration) (joinResult, error) {
	t.Helper()
	allowID(c, "g", id)
	return c.join(ctx, joinRequest{GroupID: "g", MemberID: id, ClientID: "net", ProtocolType: "consumer",
		Protocols:      []Protocol{{Name: "range", Metadata: subscriptionOf(t)}},
		SessionTimeout: time.Minute, RebalanceTimeout: rebalance})
}

// TestNetworkLeaderAssigns: a network leader gets the members and their
// metadata (an in-process member's subscription encoded as the Java
// consumer encodes it), the group waits in CompletingRebalance (commits
// refused, heartbeats fine) until its Sync, and the in-process member's
// Join returns the partitions the leader gave it.
func TestNetworkLeaderAssigns(t *testing.T) {
	_, c := openCoordinator(t)
	ctx := context.Background()
	a, err := networkJoin(ctx, t, c, "a", time.Minute)
	require.NoError(t, err)
	require.Equal(t, "a", a.Leader)
	require.Len(t, a.Members, 1)
	d, err := c.DescribeGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateCompletingRebalance, d.State)
	require.NoError(t, c.Heartbeat(GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}))
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 1, LeaderEpoch: -1}}
	require.ErrorIs(t, c.CommitOffsets(ctx, GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}, off), ErrRebalanceInProgress)

	got, err := c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}, Assignments: map[string][]byte{"a": assignmentOf(t, 0, 1, 2, 3)}})
	require.NoError(t, err)
	require.Equal(t, assignmentOf(t, 0, 1, 2, 3), got)
	require.NoError(t, c.CommitOffsets(ctx, GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}, off))

	// An in-process member joins: the network leader rejoins and assigns.
	joined := make(chan joinResult, 1)
	go func() {
		res, err := c.join(ctx, joinRequest{GroupID: "g", MemberID: "b", ClientID: "local", Topics: []string{"t"},
			Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute, OwnedGeneration: -1})
		if err != nil {
			res.Generation = -1
		}
		joined <- res
	}()
	<-a.RebalanceStarts
	a2, err := networkJoin(ctx, t, c, "a", time.Minute)
	require.NoError(t, err)
	require.Len(t, a2.Members, 2)
	for _, m := range a2.Members {
		sub, err := groupcodec.ParseSubscription(m.Metadata)
		require.NoError(t, err, "member %s", m.MemberID)
		require.Equal(t, []string{"t"}, sub.Topics)
	}
	select {
	case <-joined:
		require.Fail(t, "the in-process member's join returned before the leader assigned")
	default:
	}
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a2.Generation}, Assignments: map[string][]byte{"a": assignmentOf(t, 0), "b": assignmentOf(t, 1, 2, 3)}})
	require.NoError(t, err)
	b := <-joined
	require.Equal(t, a2.Generation, b.Generation)
	require.Equal(t, []TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}, {Topic: "t", Partition: 3}}, b.Assignment)
	d, err = c.DescribeGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateStable, d.State)
	for _, m := range d.Members {
		if m.MemberID == "b" {
			require.Equal(t, assignmentOf(t, 1, 2, 3), m.AssignmentBytes)
		}
	}
	// A follower's Sync in a stable group returns its current assignment.
	again, err := c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "b", GenerationID: b.Generation}, Assignments: nil})
	require.NoError(t, err)
	require.Equal(t, assignmentOf(t, 1, 2, 3), again)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "b", GenerationID: b.Generation - 1}, Assignments: nil})
	require.ErrorIs(t, err, ErrIllegalGeneration)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "nobody", GenerationID: b.Generation}, Assignments: nil})
	require.ErrorIs(t, err, ErrUnknownMember)
}

// TestLeaderThatNeverSyncs: a network leader that does not send its
// assignment within the rebalance timeout is dropped; the member waiting
// for it is told to rejoin and the group goes on without it.
func TestLeaderThatNeverSyncs(t *testing.T) {
	_, c := openCoordinator(t)
	ctx := context.Background()
	a, err := networkJoin(ctx, t, c, "a", 200*time.Millisecond)
	require.NoError(t, err)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}, Assignments: map[string][]byte{"a": assignmentOf(t, 0, 1, 2, 3)}})
	require.NoError(t, err)

	// The in-process member's session is shorter than the wait: a member
	// waiting for its assignment is kept alive.
	local := joinRequest{GroupID: "g", MemberID: "b", ClientID: "local", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 100 * time.Millisecond, RebalanceTimeout: 300 * time.Millisecond, OwnedGeneration: -1}
	joined := make(chan error, 1)
	go func() {
		_, err := c.join(ctx, local)
		joined <- err
	}()
	<-a.RebalanceStarts
	_, err = networkJoin(ctx, t, c, "a", 200*time.Millisecond) // and then nothing
	require.NoError(t, err)
	require.ErrorIs(t, <-joined, ErrRebalanceInProgress, "the waiting member learns the rebalance failed")

	res, err := c.join(ctx, local)
	require.NoError(t, err)
	require.Equal(t, "b", res.Leader, "the silent leader was dropped")
	require.Len(t, res.Assignment, 4)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}, Assignments: nil})
	require.ErrorIs(t, err, ErrUnknownMember)
}

// TestRestoreNetworkMembers: a coordinator loading __consumer_offsets
// again (the directory reopened, a server restarted) restores the network
// members of each group's last metadata as Kafka's coordinator restores a
// classic group: same generation, leader, subscriptions and assignments,
// so that their commits and heartbeats are accepted. In-process members
// are not restored (their process is gone): a group that had one
// rebalances at once, and a group of in-process members only is empty.
func TestRestoreNetworkMembers(t *testing.T) {
	mem := vfs.NewMem()
	cfg := log.DefaultConfig()
	cfg.FS = mem
	cfg.OffsetsTopicNumPartitions = 3
	ctx := context.Background()
	open := func() (*log.Dir, *GroupCoordinator) {
		d, err := log.Open(ctx, "/data", cfg)
		require.NoError(t, err)
		c, err := Groups(ctx, d)
		require.NoError(t, err)
		return d, c
	}
	d, c := open()
	_, err := d.CreateTopic(ctx, "t", 4, nil)
	require.NoError(t, err)
	joinAs := func(group, id string) joinResult {
		allowID(c, group, id)
		res, err := c.join(ctx, joinRequest{GroupID: group, MemberID: id, ClientID: "net", ClientHost: "/10.0.0.7", ProtocolType: "consumer",
			Protocols: []Protocol{{Name: "range", Metadata: subscriptionOf(t)}}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
		require.NoError(t, err)
		return res
	}
	// "net": one network member. "mixed": a network leader and an
	// in-process member. "local": one in-process member.
	a := joinAs("net", "a")
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "net", MemberID: "a", GenerationID: a.Generation}, Assignments: map[string][]byte{"a": assignmentOf(t, 0, 1, 2, 3)}})
	require.NoError(t, err)
	m := joinAs("mixed", "m")
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "mixed", MemberID: "m", GenerationID: m.Generation}, Assignments: map[string][]byte{"m": assignmentOf(t, 0, 1, 2, 3)}})
	require.NoError(t, err)
	local := joinRequest{MemberID: "l", ClientID: "local", Topics: []string{"t"}, Assignors: []assignor.Assignor{assignor.Range()},
		SessionTimeout: time.Minute, RebalanceTimeout: time.Minute, OwnedGeneration: -1}
	joined := make(chan error, 1)
	go func() {
		r := local
		r.GroupID = "mixed"
		_, err := c.join(ctx, r)
		joined <- err
	}()
	<-m.RebalanceStarts
	m = joinAs("mixed", "m")
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "mixed", MemberID: "m", GenerationID: m.Generation}, Assignments: map[string][]byte{"m": assignmentOf(t, 0, 1), "l": assignmentOf(t, 2, 3)}})
	require.NoError(t, err)
	require.NoError(t, <-joined)
	local.GroupID = "local"
	_, err = c.join(ctx, local)
	require.NoError(t, err)
	require.NoError(t, d.Close())

	d, c = open()
	defer d.Close()
	net, err := c.DescribeGroup("net")
	require.NoError(t, err)
	require.Equal(t, StateStable, net.State)
	require.Equal(t, a.Generation, net.Generation)
	require.Equal(t, "a", net.Leader)
	require.Equal(t, "range", net.Protocol)
	require.Len(t, net.Members, 1)
	require.Equal(t, "/10.0.0.7", net.Members[0].ClientHost)
	require.Equal(t, []string{"t"}, net.Members[0].Topics)
	require.Equal(t, assignmentOf(t, 0, 1, 2, 3), net.Members[0].AssignmentBytes)
	require.Len(t, net.Members[0].Assignment, 4)
	require.NoError(t, c.Heartbeat(GroupMetadata{GroupID: "net", MemberID: "a", GenerationID: a.Generation}))
	require.NoError(t, c.CommitOffsets(ctx, GroupMetadata{GroupID: "net", MemberID: "a", GenerationID: a.Generation}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 3, LeaderEpoch: -1}}))
	got, err := c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "net", MemberID: "a", GenerationID: a.Generation}, Assignments: nil})
	require.NoError(t, err)
	require.Equal(t, assignmentOf(t, 0, 1, 2, 3), got)

	mixed, err := c.DescribeGroup("mixed")
	require.NoError(t, err)
	require.Equal(t, StatePreparingRebalance, mixed.State, "the in-process member is gone: the rest rebalance")
	require.Len(t, mixed.Members, 1)
	require.ErrorIs(t, c.Heartbeat(GroupMetadata{GroupID: "mixed", MemberID: "m", GenerationID: m.Generation}), ErrRebalanceInProgress)

	lonely, err := c.DescribeGroup("local")
	require.NoError(t, err)
	require.Equal(t, StateEmpty, lonely.State)
	require.Empty(t, lonely.Members)
}

// TestStaticMemberRejoins: a static member (group.instance.id) that joins
// again under no member id, its process restarted, takes its old
// member's place under a new id without a rebalance when it sends what it
// sent before, and keeps its assignment; its old id is fenced
// (ErrFencedInstanceID), and a join naming another member id for the
// instance is refused.
func TestStaticMemberRejoins(t *testing.T) {
	_, c := openCoordinator(t)
	ctx := context.Background()
	join := func(id, instance string) (joinResult, error) {
		if instance == "" {
			allowID(c, "g", id)
		}
		return c.join(ctx, joinRequest{GroupID: "g", MemberID: id, InstanceID: instance, ClientID: "net", ProtocolType: "consumer",
			Protocols: []Protocol{{Name: "range", Metadata: subscriptionOf(t)}}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	}
	lead, err := join("lead", "")
	require.NoError(t, err)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "lead", GenerationID: lead.Generation}, Assignments: map[string][]byte{"lead": assignmentOf(t, 0, 1, 2, 3)}})
	require.NoError(t, err)
	static := make(chan joinResult, 1)
	go func() {
		res, err := join("", "instance-1")
		if err != nil {
			res.MemberID = err.Error() // the check of the generation below fails and shows it
		}
		static <- res
	}()
	<-lead.RebalanceStarts
	lead, err = join("lead", "")
	require.NoError(t, err)
	first := <-static
	require.Equal(t, lead.Generation, first.Generation, first.MemberID)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "lead", GenerationID: lead.Generation}, Assignments: map[string][]byte{"lead": assignmentOf(t, 0, 1), first.MemberID: assignmentOf(t, 2, 3)}})
	require.NoError(t, err)

	again, err := join("", "instance-1")
	require.NoError(t, err)
	require.NotEqual(t, first.MemberID, again.MemberID, "a new member id")
	require.Equal(t, first.Generation, again.Generation, "no rebalance")
	d, err := c.DescribeGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateStable, d.State)
	require.Len(t, d.Members, 2)
	got, err := c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: again.MemberID, GenerationID: again.Generation}, Assignments: nil})
	require.NoError(t, err)
	require.Equal(t, assignmentOf(t, 2, 3), got, "the old member's assignment")

	// Every request of the replaced member that names the instance is
	// fenced, before anything else is looked at; the new member's
	// passes; without the instance id the old id is only unknown.
	old := GroupMetadata{GroupID: "g", MemberID: first.MemberID, GenerationID: first.Generation, GroupInstanceID: "instance-1"}
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t"}: {Offset: 1, LeaderEpoch: -1}}
	require.ErrorIs(t, c.Heartbeat(old), ErrFencedInstanceID)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: old})
	require.ErrorIs(t, err, ErrFencedInstanceID)
	require.ErrorIs(t, c.CommitOffsets(ctx, old, off), ErrFencedInstanceID)
	require.ErrorIs(t, c.LeaveGroup(old), ErrFencedInstanceID)
	current := old
	current.MemberID = again.MemberID
	require.NoError(t, c.Heartbeat(current))
	require.NoError(t, c.CommitOffsets(ctx, current, off))
	dynamic := old
	dynamic.GroupInstanceID = ""
	require.ErrorIs(t, c.Heartbeat(dynamic), ErrUnknownMember, "a dynamic member is not checked")
	require.ErrorIs(t, c.LeaveGroup(dynamic), ErrUnknownMember)
	_, err = join("someone-else", "instance-1")
	require.ErrorIs(t, err, ErrFencedInstanceID)
}

// TestPendingMembersBounded: the ids handed out for first joins are kept
// for a group up to a bound, the oldest forgotten first, however many a
// client asks for; the newest still join.
func TestPendingMembersBounded(t *testing.T) {
	_, c := openCoordinator(t)
	var last string
	for range 3 * maxPendingMembers {
		var err error
		last, err = c.PendingMember("g", "spam", time.Minute)
		require.NoError(t, err)
	}
	c.mu.Lock()
	n := len(c.groups["g"].pending)
	c.mu.Unlock()
	require.Equal(t, maxPendingMembers, n)
	res, err := c.join(context.Background(), joinRequest{GroupID: "g", MemberID: last, ProtocolType: "consumer",
		Protocols: []Protocol{{Name: "range", Metadata: subscriptionOf(t)}}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.NoError(t, err)
	require.Equal(t, last, res.MemberID)
}

// TestFollowerOfASilentLeaderKeepsItsSession: a member waiting in
// SyncGroup for a leader that never sends its assignment outlives the
// leader, whose session ends: its SyncGroup is answered
// REBALANCE_IN_PROGRESS and its session starts again then, as Kafka's
// coordinator restarts a member's session when it answers its SyncGroup,
// so it rejoins under its id and leads the next generation. (It was
// dropped with the leader, its session counted from its SyncGroup, and
// answered UNKNOWN_MEMBER_ID: sarama's cooperative group test saw it.)
func TestFollowerOfASilentLeaderKeepsItsSession(t *testing.T) {
	_, c := openCoordinator(t)
	ctx := context.Background()
	const session = 300 * time.Millisecond
	join := func(id string) (joinResult, error) {
		allowID(c, "g", id)
		return c.join(ctx, joinRequest{GroupID: "g", MemberID: id, ClientID: "net", ProtocolType: "consumer",
			Protocols:      []Protocol{{Name: "range", Metadata: subscriptionOf(t)}},
			SessionTimeout: session, RebalanceTimeout: time.Minute})
	}
	a, err := join("a")
	require.NoError(t, err)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}, Assignments: map[string][]byte{"a": assignmentOf(t, 0, 1, 2, 3)}})
	require.NoError(t, err)

	type joined struct {
		res joinResult
		err error
	}
	bJoined := make(chan joined, 1)
	go func() {
		res, err := join("b")
		bJoined <- joined{res, err}
	}()
	<-a.RebalanceStarts
	a2, err := join("a") // the leader rejoins, then says nothing more
	require.NoError(t, err)
	b := <-bJoined
	require.NoError(t, b.err)
	require.Equal(t, "a", a2.Leader)
	require.Equal(t, a2.Generation, b.res.Generation)

	start := time.Now()
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "b", GenerationID: b.res.Generation}})
	require.ErrorIs(t, err, ErrRebalanceInProgress, "the follower is told to rejoin, not that it is unknown")
	require.GreaterOrEqual(t, time.Since(start), session, "answered once the leader's session ended")

	res, err := join("b")
	require.NoError(t, err, "the follower rejoins under its id")
	require.Equal(t, "b", res.Leader, "and leads the group the silent leader left")
	require.Greater(t, res.Generation, b.res.Generation)
	_, err = c.SyncGroup(ctx, SyncRequest{Member: GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a2.Generation}})
	require.ErrorIs(t, err, ErrUnknownMember, "the silent leader is gone")
}
