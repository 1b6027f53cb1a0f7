package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
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

func networkJoin(ctx context.Context, t *testing.T, c *Coordinator, id string, rebalance time.Duration) (JoinResult, error) {
	t.Helper()
	return c.Join(ctx, JoinRequest{GroupID: "g", MemberID: id, ClientID: "net", ProtocolType: "consumer",
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
	d, err := c.Describe("g")
	require.NoError(t, err)
	require.Equal(t, StateCompletingRebalance, d.State)
	require.NoError(t, c.Heartbeat("g", "a", a.Generation))
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 1, LeaderEpoch: -1}}
	require.ErrorIs(t, c.Commit(ctx, "g", "a", a.Generation, off), ErrRebalanceInProgress)

	got, err := c.Sync(ctx, "g", "a", a.Generation, map[string][]byte{"a": assignmentOf(t, 0, 1, 2, 3)})
	require.NoError(t, err)
	require.Equal(t, assignmentOf(t, 0, 1, 2, 3), got)
	require.NoError(t, c.Commit(ctx, "g", "a", a.Generation, off))

	// An in-process member joins: the network leader rejoins and assigns.
	joined := make(chan JoinResult, 1)
	go func() {
		res, err := c.Join(ctx, JoinRequest{GroupID: "g", MemberID: "b", ClientID: "local", Topics: []string{"t"},
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
	_, err = c.Sync(ctx, "g", "a", a2.Generation, map[string][]byte{"a": assignmentOf(t, 0), "b": assignmentOf(t, 1, 2, 3)})
	require.NoError(t, err)
	b := <-joined
	require.Equal(t, a2.Generation, b.Generation)
	require.Equal(t, []TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}, {Topic: "t", Partition: 3}}, b.Assignment)
	d, err = c.Describe("g")
	require.NoError(t, err)
	require.Equal(t, StateStable, d.State)
	for _, m := range d.Members {
		if m.MemberID == "b" {
			require.Equal(t, assignmentOf(t, 1, 2, 3), m.AssignmentBytes)
		}
	}
	// A follower's Sync in a stable group returns its current assignment.
	again, err := c.Sync(ctx, "g", "b", b.Generation, nil)
	require.NoError(t, err)
	require.Equal(t, assignmentOf(t, 1, 2, 3), again)
	_, err = c.Sync(ctx, "g", "b", b.Generation-1, nil)
	require.ErrorIs(t, err, ErrIllegalGeneration)
	_, err = c.Sync(ctx, "g", "nobody", b.Generation, nil)
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
	_, err = c.Sync(ctx, "g", "a", a.Generation, map[string][]byte{"a": assignmentOf(t, 0, 1, 2, 3)})
	require.NoError(t, err)

	// The in-process member's session is shorter than the wait: a member
	// waiting for its assignment is kept alive.
	local := JoinRequest{GroupID: "g", MemberID: "b", ClientID: "local", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 100 * time.Millisecond, RebalanceTimeout: 300 * time.Millisecond, OwnedGeneration: -1}
	joined := make(chan error, 1)
	go func() {
		_, err := c.Join(ctx, local)
		joined <- err
	}()
	<-a.RebalanceStarts
	_, err = networkJoin(ctx, t, c, "a", 200*time.Millisecond) // and then nothing
	require.NoError(t, err)
	require.ErrorIs(t, <-joined, ErrRebalanceInProgress, "the waiting member learns the rebalance failed")

	res, err := c.Join(ctx, local)
	require.NoError(t, err)
	require.Equal(t, "b", res.Leader, "the silent leader was dropped")
	require.Len(t, res.Assignment, 4)
	_, err = c.Sync(ctx, "g", "a", a.Generation, nil)
	require.ErrorIs(t, err, ErrUnknownMember)
}
