package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

func openCoordinator(t *testing.T) (*log.Dir, *GroupCoordinator) {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions = 3
	d, err := log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.CreateTopic(context.Background(), "t", 4, nil)
	require.NoError(t, err)
	c, err := Groups(context.Background(), d)
	require.NoError(t, err)
	again, err := Groups(context.Background(), d)
	require.NoError(t, err)
	require.Same(t, c, again, "one coordinator per Dir")
	return d, c
}

// groupIDs lists the ids of ListGroups' groups.
func groupIDs(ls []GroupListing) []string {
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.GroupID
	}
	return ids
}

func join(t *testing.T, c *GroupCoordinator, id string, assignors ...assignor.Assignor) joinResult {
	t.Helper()
	res, err := c.join(context.Background(), joinRequest{GroupID: "g", MemberID: id, ClientID: "c", Topics: []string{"t"},
		Assignors: assignors, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.NoError(t, err)
	return res
}

func TestJoinAssignsAndFences(t *testing.T) {
	_, c := openCoordinator(t)
	first := join(t, c, "", assignor.Range(), assignor.RoundRobin())
	require.Equal(t, int32(1), first.Generation)
	require.Equal(t, "range", first.Protocol)
	require.Len(t, first.Assignment, 4)
	require.Equal(t, first.MemberID, first.Leader)

	// A member offering no common assignor is refused.
	_, err := c.join(context.Background(), joinRequest{GroupID: "g", ClientID: "x", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Sticky()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.ErrorIs(t, err, ErrInconsistentProtocol)

	// Heartbeats: fine in the current generation, fenced otherwise.
	require.NoError(t, c.Heartbeat(GroupMetadata{GroupID: "g", MemberID: first.MemberID, GenerationID: 1}))
	require.ErrorIs(t, c.Heartbeat(GroupMetadata{GroupID: "g", MemberID: first.MemberID, GenerationID: 0}), ErrIllegalGeneration)
	require.ErrorIs(t, c.Heartbeat(GroupMetadata{GroupID: "g", MemberID: "nobody", GenerationID: 1}), ErrUnknownMember)

	// Commits: by the member in its generation; not without membership
	// while the group has members.
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 5, LeaderEpoch: -1}}
	require.NoError(t, c.CommitOffsets(context.Background(), GroupMetadata{GroupID: "g", MemberID: first.MemberID, GenerationID: 1}, off))
	require.ErrorIs(t, c.CommitOffsets(context.Background(), GroupMetadata{GroupID: "g", MemberID: first.MemberID, GenerationID: 0}, off), ErrIllegalGeneration)
	// Kafka 4.4's ClassicGroup answers UNKNOWN_MEMBER_ID there.
	require.ErrorIs(t, c.CommitOffsets(context.Background(), GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, off), ErrUnknownMember)
	require.Equal(t, int64(5), c.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)

	// Leaving empties the group; a commit without membership is fine then.
	c.LeaveGroup(GroupMetadata{GroupID: "g", MemberID: first.MemberID})
	d, err := c.DescribeGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateEmpty, d.State)
	require.NoError(t, c.CommitOffsets(context.Background(), GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, off))
	_, err = c.DescribeGroup("missing")
	require.ErrorIs(t, err, ErrUnknownGroup)
}

// TestLoadAfterRestart: offsets and the last generation come back from
// __consumer_offsets; members do not.
func TestLoadAfterRestart(t *testing.T) {
	mem := vfs.NewMem()
	cfg := log.DefaultConfig()
	cfg.FS = mem
	cfg.OffsetsTopicNumPartitions = 3
	d, err := log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(context.Background(), "t", 2, nil)
	require.NoError(t, err)
	c, err := Groups(context.Background(), d)
	require.NoError(t, err)
	m := join(t, c, "", assignor.Range())
	require.NoError(t, c.CommitOffsets(context.Background(), GroupMetadata{GroupID: "g", MemberID: m.MemberID, GenerationID: m.Generation},
		map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 1}: {Offset: 9, LeaderEpoch: -1, Metadata: "x"}}))
	require.NoError(t, d.Close())

	d, err = log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	defer d.Close()
	c, err = Groups(context.Background(), d)
	require.NoError(t, err)
	got := c.FetchOffsets("g", []TopicPartition{{Topic: "t", Partition: 1}})
	require.Equal(t, int64(9), got[TopicPartition{Topic: "t", Partition: 1}].Offset)
	require.Equal(t, "x", got[TopicPartition{Topic: "t", Partition: 1}].Metadata)
	desc, err := c.DescribeGroup("g")
	require.NoError(t, err)
	require.Empty(t, desc.Members)
	next := join(t, c, "", assignor.Range())
	require.Greater(t, next.Generation, m.Generation)
}

// closed reports whether ch is closed (it is never sent on).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestRebalanceStartsSignalsMembers: the channel a join returns, and
// RebalanceStarts for a stable generation, close when the next rebalance
// starts; for a generation that passed, a running rebalance or an unknown
// group it is closed already.
func TestRebalanceStartsSignalsMembers(t *testing.T) {
	_, c := openCoordinator(t)
	first := join(t, c, "", assignor.Range())
	require.False(t, closed(first.RebalanceStarts), "stable: no rebalance yet")
	polled := c.RebalanceStarts(access.Internal{}, "g", first.Generation)
	require.False(t, closed(polled))
	require.True(t, closed(c.RebalanceStarts(access.Internal{}, "g", first.Generation-1)), "a passed generation")
	require.True(t, closed(c.RebalanceStarts(access.Internal{}, "nobody", 0)), "an unknown group")

	// A second member's join starts a rebalance: both signals close.
	joined := make(chan joinResult, 1)
	go func() {
		res, err := c.join(context.Background(), joinRequest{GroupID: "g", ClientID: "c", Topics: []string{"t"},
			Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
		if err != nil {
			res.Generation = -1 // the comparison below fails and shows it
		}
		joined <- res
	}()
	select {
	case <-first.RebalanceStarts:
	case <-time.After(10 * time.Second):
		require.Fail(t, "the join of a second member did not signal the first")
	}
	require.True(t, closed(polled))
	require.True(t, closed(c.RebalanceStarts(access.Internal{}, "g", first.Generation)), "a rebalance runs")
	again := join(t, c, first.MemberID, assignor.Range())
	second := <-joined
	require.Equal(t, again.Generation, second.Generation)
	require.False(t, closed(again.RebalanceStarts), "the new generation's signal is open")
	require.Equal(t, again.RebalanceStarts, c.RebalanceStarts(access.Internal{}, "g", again.Generation))
}

// TestDeleteOffsets: the offsets of a topic no member is subscribed to
// are deleted (and stay deleted when the coordinator loads the group
// again); those of a subscribed topic are refused.
func TestDeleteOffsets(t *testing.T) {
	d, c := openCoordinator(t)
	ctx := context.Background()
	_, err := d.CreateTopic(ctx, "other", 1, nil)
	require.NoError(t, err)
	t0, o0 := TopicPartition{Topic: "t", Partition: 0}, TopicPartition{Topic: "other", Partition: 0}
	require.NoError(t, c.CommitOffsets(ctx, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{t0: {Offset: 3, LeaderEpoch: -1}, o0: {Offset: 7, LeaderEpoch: -1}}))
	join(t, c, "", assignor.Range()) // subscribed to t

	refused, err := c.DeleteOffsets(ctx, "g", []TopicPartition{t0, o0})
	require.NoError(t, err)
	require.Len(t, refused, 1)
	require.ErrorIs(t, refused[t0], ErrGroupSubscribedToTopic)
	got := c.FetchOffsets("g", nil)
	require.Contains(t, got, t0)
	require.NotContains(t, got, o0)

	_, err = c.DeleteOffsets(ctx, "nobody", []TopicPartition{o0})
	require.ErrorIs(t, err, ErrUnknownGroup)

	// A coordinator loading __consumer_offsets again sees the tombstone.
	fresh := &GroupCoordinator{dir: d, partitions: c.partitions, groups: map[string]*group{}, now: time.Now, logger: c.logger,
		pendingTxn: map[txnKey]map[string]map[TopicPartition]pendingOffset{}}
	require.NoError(t, fresh.load())
	require.NotContains(t, fresh.FetchOffsets("g", nil), o0)
	require.Contains(t, fresh.FetchOffsets("g", nil), t0)
}
