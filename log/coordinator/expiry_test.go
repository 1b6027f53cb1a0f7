package coordinator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

// junkGroups makes n groups of each kind a client leaves behind without
// members: commits with generation -1 (offsets, no protocol type), a
// network member's join and leave (Empty, no offsets), and a member id
// asked for a first join and never used.
func junkGroups(t *testing.T, c *GroupCoordinator, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		id := fmt.Sprintf("junk-commit-%d", i)
		require.NoError(t, c.CommitOffsets(ctx, GroupMetadata{GroupID: id, MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: int64(i), LeaderEpoch: -1}}))
	}
	for i := range n {
		id := fmt.Sprintf("junk-join-%d", i)
		res, err := c.join(ctx, joinRequest{GroupID: id, ClientID: "junk", ProtocolType: "consumer",
			Protocols: []Protocol{{Name: "range", Metadata: subscriptionOf(t)}}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
		require.NoError(t, err)
		c.LeaveGroup(GroupMetadata{GroupID: id, MemberID: res.MemberID})
	}
	for i := range n {
		_, err := c.PendingMember(fmt.Sprintf("junk-pending-%d", i), "junk", time.Minute)
		require.NoError(t, err)
	}
}

// tickVisits runs the goroutine's ticks over 10 s of the clock (500 ticks
// of 20 ms) while a member of group "real" heartbeats at every tick, and
// returns how many groups the ticks looked at.
func tickVisits(t *testing.T, e *txnEnv) int {
	t.Helper()
	m, err := e.groups.join(context.Background(), joinRequest{GroupID: "real", ClientID: "c", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 3 * time.Second, RebalanceTimeout: time.Minute})
	require.NoError(t, err)
	e.groups.mu.Lock()
	before := e.groups.visited
	e.groups.mu.Unlock()
	for range 500 {
		e.clock.Add(tick)
		require.NoError(t, e.groups.Heartbeat(GroupMetadata{GroupID: "real", MemberID: m.MemberID, GenerationID: m.Generation}))
		e.groups.mu.Lock()
		e.groups.tickLocked(e.clock.Now())
		e.groups.mu.Unlock()
	}
	e.groups.mu.Lock()
	defer e.groups.mu.Unlock()
	require.Len(t, e.groups.groups["real"].members, 1, "the heartbeating member stays")
	return e.groups.visited - before
}

// TestIdleGroupsCostTheTicksNothing: thousands of groups without members
// (commits, joins and leaves, member ids never used) add nothing to the
// work of the coordinator's ticks, whose only group to look at is the one
// whose member's session comes due: the ticks look at as many groups with
// them as without. Before, every tick looked at every group. The ticks
// are driven by hand with the injected clock, and the work counted, not
// timed.
func TestIdleGroupsCostTheTicksNothing(t *testing.T) {
	n := 27_667 // 83,001 groups with "real"
	if testing.Short() {
		n = 500
	}
	quiet := newTxnEnv(t, nil)
	base := tickVisits(t, quiet)
	busy := newTxnEnv(t, nil)
	junkGroups(t, busy.groups, n)
	require.Len(t, groupIDs(busy.groups.ListGroups()), 3*n)
	withJunk := tickVisits(t, busy)
	t.Logf("groups looked at over 500 ticks: %d alone, %d beside %d idle groups", base, withJunk, 3*n)
	require.Positive(t, base, "the member's group comes due as its session would end")
	require.LessOrEqual(t, float64(withJunk)/float64(base), 1.0, "idle groups cost the ticks nothing")
}

// expiryEnv is a txnEnv with offsets.retention.minutes of an hour and
// topics t (2 partitions) and u. The goroutine's own passes are left to a
// far interval: tests call expireGroups.
func expiryEnv(t *testing.T, configure func(*log.Config)) *txnEnv {
	t.Helper()
	e := newTxnEnv(t, func(c *log.Config) {
		c.OffsetsRetention = time.Hour
		c.OffsetsRetentionCheckInterval = 1000 * time.Hour
		if configure != nil {
			configure(c)
		}
	})
	_, err := e.dir.CreateTopic(context.Background(), "u", 1, nil)
	require.NoError(t, err)
	return e
}

var (
	tpT0 = TopicPartition{Topic: "t", Partition: 0}
	tpT1 = TopicPartition{Topic: "t", Partition: 1}
	tpU0 = TopicPartition{Topic: "u", Partition: 0}
)

func commitAt(t *testing.T, c *GroupCoordinator, group, member string, generation int32, tp TopicPartition, offset int64) {
	t.Helper()
	require.NoError(t, c.CommitOffsets(context.Background(), GroupMetadata{GroupID: group, MemberID: member, GenerationID: generation},
		map[TopicPartition]OffsetAndMetadata{tp: {Offset: offset, LeaderEpoch: -1}}))
}

// expireAt runs an expiry pass at now and returns what it removed.
func expireAt(e *txnEnv) (offsets, groups int) { return e.groups.expireGroups(e.clock.Now()) }

// TestGroupExpiry: offsets and empty groups expire as Kafka's coordinator
// expires them, with an injected clock and offsets.retention.minutes of an
// hour, and what expired is gone after a restart and after a power loss
// (the tombstones were fsynced):
//
//   - a group of commits only: each offset an hour after its commit; the
//     group with its last one;
//   - a group that had members: every offset an hour after it became
//     empty, a commit made after that too; the group with them;
//   - an empty group without offsets: at the next pass;
//   - a stable group with a member: the offsets of a topic no member
//     subscribes to an hour after their commit, the others never; the
//     group stays;
//   - an offset with a transactional commit pending: kept, and its group.
func TestGroupExpiry(t *testing.T) {
	for _, recovery := range []string{"restart", "power loss"} {
		t.Run(recovery, func(t *testing.T) {
			e := expiryEnv(t, nil)
			ctx := context.Background()
			c := e.groups
			t0 := e.clock.Now()

			commitAt(t, c, "simple", "", -1, tpT0, 1)
			member := join(t, c, "", assignor.Range()) // group "g", subscribed to t
			commitAt(t, c, "g", member.MemberID, member.Generation, tpT0, 2)
			stable, err := c.join(ctx, joinRequest{GroupID: "stable", ClientID: "c", Topics: []string{"t"},
				Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 100 * time.Hour, RebalanceTimeout: time.Minute})
			require.NoError(t, err)
			commitAt(t, c, "stable", stable.MemberID, stable.Generation, tpT0, 3)
			commitAt(t, c, "stable", stable.MemberID, stable.Generation, tpU0, 4)
			noOffsets, err := c.join(ctx, joinRequest{GroupID: "no-offsets", ClientID: "c", Topics: []string{"t"},
				Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Hour, RebalanceTimeout: time.Minute})
			require.NoError(t, err)
			c.LeaveGroup(GroupMetadata{GroupID: "no-offsets", MemberID: noOffsets.MemberID})
			commitAt(t, c, "txn", "", -1, tpT0, 5)
			pe := e.init("tx")
			require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "txn"))
			require.NoError(t, c.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "txn", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tpT0: {Offset: 6, LeaderEpoch: -1}}))

			require.Equal(t, [2]int{0, 1}, pair(expireAt(e)), "the empty group without offsets goes at once")
			require.NotContains(t, groupIDs(c.ListGroups()), "no-offsets")

			e.clock.Add(10 * time.Minute)
			c.LeaveGroup(GroupMetadata{GroupID: "g", MemberID: member.MemberID}) // empty from t0+10m
			e.clock.Add(20 * time.Minute)
			commitAt(t, c, "simple", "", -1, tpT1, 7) // t0+30m
			e.clock.Add(20 * time.Minute)
			commitAt(t, c, "g", "", -1, tpT1, 8) // t0+50m, after g became empty
			e.clock.Add(10*time.Minute - time.Millisecond)
			require.Equal(t, [2]int{0, 0}, pair(expireAt(e)), "nothing an hour old yet")

			e.clock.Add(time.Millisecond) // t0+1h: the offsets committed at t0 without membership
			require.Equal(t, [2]int{2, 0}, pair(expireAt(e)))
			require.Equal(t, map[TopicPartition]int64{tpT1: 7}, offsetsOf(c, "simple"))
			require.Equal(t, map[TopicPartition]int64{tpT0: 3}, offsetsOf(c, "stable"), "u is not subscribed, t is")
			require.Equal(t, map[TopicPartition]int64{tpT0: 5}, offsetsOf(c, "txn"), "a transactional commit pends")
			require.Equal(t, map[TopicPartition]int64{tpT0: 2, tpT1: 8}, offsetsOf(c, "g"))

			e.clock.Add(10 * time.Minute) // t0+1h10m: g empty for an hour
			require.Equal(t, [2]int{2, 1}, pair(expireAt(e)))
			require.NotContains(t, groupIDs(c.ListGroups()), "g", "its commit of t0+50m went with it")

			e.clock.Add(20 * time.Minute) // t0+1h30m
			require.Equal(t, [2]int{1, 1}, pair(expireAt(e)))
			require.Equal(t, []string{"stable", "txn"}, groupIDs(c.ListGroups()))
			require.Equal(t, t0.Add(90*time.Minute), e.clock.Now())

			check := func(what string) {
				require.Equal(t, []string{"stable", "txn"}, groupIDs(e.groups.ListGroups()), what)
				require.Equal(t, map[TopicPartition]int64{tpT0: 3}, offsetsOf(e.groups, "stable"), what)
				require.Equal(t, map[TopicPartition]int64{tpT0: 5}, offsetsOf(e.groups, "txn"), what)
				require.Equal(t, int64(6), e.groups.PendingTxnOffsets("txn")[tpT0].Offset, what)
				for _, g := range []string{"simple", "g", "no-offsets"} {
					require.Empty(t, offsetsOf(e.groups, g), "%s: %s", what, g)
				}
			}
			check("before the " + recovery)
			switch recovery {
			case "restart":
				e.reopen()
			case "power loss":
				e.crash()
			}
			check("after the " + recovery)

			// The transaction commits: its offset replaces the pending one
			// and expires an hour after its commit, with its group. The
			// in-process member of "stable" did not come back with the
			// restart; one joins again, and the group keeps its offsets of
			// the topic it subscribes to, however old.
			require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
			require.Equal(t, map[TopicPartition]int64{tpT0: 6}, offsetsOf(e.groups, "txn"))
			_, err = e.groups.join(ctx, joinRequest{GroupID: "stable", ClientID: "c", Topics: []string{"t"},
				Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 100 * time.Hour, RebalanceTimeout: time.Minute})
			require.NoError(t, err)
			e.clock.Add(2 * time.Hour)
			require.Equal(t, [2]int{1, 1}, pair(expireAt(e)))
			require.Equal(t, []string{"stable"}, groupIDs(e.groups.ListGroups()), "a group with a member is never deleted")
			require.Equal(t, map[TopicPartition]int64{tpT0: 3}, offsetsOf(e.groups, "stable"))
		})
	}
}

func pair(a, b int) [2]int { return [2]int{a, b} }

// offsetsOf is a group's committed offsets.
func offsetsOf(c *GroupCoordinator, group string) map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for tp, om := range c.FetchOffsets(group, nil) {
		out[tp] = om.Offset
	}
	return out
}

// TestExpiryAfterRestart: a group that had members and was empty when the
// directory closed keeps the time it became empty (stored with its
// metadata): its offsets expire an hour after that, not after the restart;
// a group whose in-process members did not come back is empty from the
// restart.
func TestExpiryAfterRestart(t *testing.T) {
	e := expiryEnv(t, nil)
	c := e.groups
	left := join(t, c, "", assignor.Range())
	commitAt(t, c, "g", left.MemberID, left.Generation, tpT0, 1)
	c.LeaveGroup(GroupMetadata{GroupID: "g", MemberID: left.MemberID}) // empty from t0
	staying, err := c.join(context.Background(), joinRequest{GroupID: "staying", ClientID: "c", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 100 * time.Hour, RebalanceTimeout: time.Minute})
	require.NoError(t, err)
	commitAt(t, c, "staying", staying.MemberID, staying.Generation, tpT0, 2)
	e.clock.Add(40 * time.Minute)
	e.reopen() // at t0+40m
	e.clock.Add(20 * time.Minute)
	require.Equal(t, [2]int{1, 1}, pair(expireAt(e)), "g: an hour after it became empty, across the restart")
	require.Equal(t, []string{"staying"}, groupIDs(e.groups.ListGroups()))
	e.clock.Add(40*time.Minute - time.Millisecond)
	require.Equal(t, [2]int{0, 0}, pair(expireAt(e)), "staying: empty from the restart only")
	e.clock.Add(time.Millisecond)
	require.Equal(t, [2]int{1, 1}, pair(expireAt(e)))
}

// TestExpiryBesideCommits: passes of expiry while commits go on to the
// same groups leave the coordinator's groups and offsets as a restart
// reads them back: no commit is appended before the tombstones of a group
// it was not meant for, nor applied to a group that went.
func TestExpiryBesideCommits(t *testing.T) {
	e := expiryEnv(t, func(c *log.Config) { c.OffsetsRetention = time.Minute })
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 150 {
				group := fmt.Sprintf("g%d", (w+i)%6)
				if err := e.groups.CommitOffsets(ctx, GroupMetadata{GroupID: group, MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tpT0: {Offset: int64(i), LeaderEpoch: -1}}); err != nil {
					t.Errorf("commit: %v", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 60 {
			e.clock.Add(30 * time.Second)
			e.groups.expireGroups(e.clock.Now())
		}
	})
	wg.Wait()
	before := map[string]map[TopicPartition]int64{}
	for _, g := range groupIDs(e.groups.ListGroups()) {
		before[g] = offsetsOf(e.groups, g)
	}
	e.reopen()
	after := map[string]map[TopicPartition]int64{}
	for _, g := range groupIDs(e.groups.ListGroups()) {
		after[g] = offsetsOf(e.groups, g)
	}
	require.Equal(t, before, after)
}

// TestGroupMaxCount: a client creates no group beyond GroupMaxCount
// (ErrGroupMaxCount for a commit, a join and a member id asked for): the
// existing groups carry on, a deleted or expired group makes room, and a
// restart loads every group stored whatever the bound.
func TestGroupMaxCount(t *testing.T) {
	e := expiryEnv(t, func(c *log.Config) { c.GroupMaxCount = 3 })
	ctx := context.Background()
	c := e.groups
	for i := range 3 {
		commitAt(t, c, fmt.Sprintf("g%d", i), "", -1, tpT0, int64(i))
	}
	err := c.CommitOffsets(ctx, GroupMetadata{GroupID: "g3", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tpT0: {Offset: 1, LeaderEpoch: -1}})
	require.ErrorIs(t, err, ErrGroupMaxCount)
	_, err = c.join(ctx, joinRequest{GroupID: "g3", ClientID: "c", Topics: []string{"t"}, Assignors: []assignor.Assignor{assignor.Range()},
		SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.ErrorIs(t, err, ErrGroupMaxCount)
	_, err = c.PendingMember("g3", "c", time.Minute)
	require.ErrorIs(t, err, ErrGroupMaxCount)
	require.Len(t, groupIDs(c.ListGroups()), 3, "nothing made for the refused requests")
	commitAt(t, c, "g0", "", -1, tpT0, 10) // an existing group carries on

	require.NoError(t, c.DeleteGroup(ctx, "g0"))
	commitAt(t, c, "g3", "", -1, tpT0, 3)
	e.clock.Add(2 * time.Hour)
	_, groups := expireAt(e)
	require.Equal(t, 3, groups)
	commitAt(t, c, "g4", "", -1, tpT0, 4)

	for i := 5; i < 7; i++ {
		require.NoError(t, e.dir.Close())
		e.open()
		commitAt(t, e.groups, fmt.Sprintf("g%d", i), "", -1, tpT0, int64(i))
	}
	require.NoError(t, e.dir.Close())
	e.cfg.GroupMaxCount = 1
	e.open()
	require.Equal(t, []string{"g4", "g5", "g6"}, groupIDs(e.groups.ListGroups()), "a restart loads every stored group")
	err = e.groups.CommitOffsets(ctx, GroupMetadata{GroupID: "g7", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tpT0: {Offset: 1, LeaderEpoch: -1}})
	require.ErrorIs(t, err, ErrGroupMaxCount)
}

// TestRefusedRequestsMakeNoGroup: a commit claiming a membership, or a
// network join with a member id, of a group that does not exist is
// refused and leaves no group behind to count or expire.
func TestRefusedRequestsMakeNoGroup(t *testing.T) {
	e := expiryEnv(t, nil)
	ctx := context.Background()
	c := e.groups
	err := c.CommitOffsets(ctx, GroupMetadata{GroupID: "nobody", MemberID: "member-x", GenerationID: 3}, map[TopicPartition]OffsetAndMetadata{tpT0: {Offset: 1, LeaderEpoch: -1}})
	require.ErrorIs(t, err, ErrUnknownMember)
	_, err = c.join(ctx, joinRequest{GroupID: "nobody", MemberID: "made-up", ClientID: "c", ProtocolType: "consumer",
		Protocols: []Protocol{{Name: "range", Metadata: subscriptionOf(t)}}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.ErrorIs(t, err, ErrUnknownMember)
	pe := e.init("tx")
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "nobody"))
	err = c.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "nobody", MemberID: "member-x", GenerationID: 3}, map[TopicPartition]OffsetAndMetadata{tpT0: {Offset: 1, LeaderEpoch: -1}})
	require.ErrorIs(t, err, ErrUnknownMember)
	require.Empty(t, groupIDs(c.ListGroups()))
}
