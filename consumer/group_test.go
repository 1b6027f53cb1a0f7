package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// recordingListener remembers the listener calls.
type recordingListener struct {
	mu                      sync.Mutex
	revoked, assigned, lost [][]TopicPartition
}

func (l *recordingListener) OnPartitionsRevoked(_ context.Context, tps []TopicPartition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.revoked = append(l.revoked, tps)
}

func (l *recordingListener) OnPartitionsAssigned(_ context.Context, tps []TopicPartition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.assigned = append(l.assigned, tps)
}

func (l *recordingListener) OnPartitionsLost(_ context.Context, tps []TopicPartition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = append(l.lost, tps)
}

func groupConsumer(e *env, strategy assignor.Assignor, mods ...func(*Config)) *Consumer {
	return e.consumer(func(c *Config) {
		c.GroupID = "g"
		c.HeartbeatInterval = 10 * time.Millisecond
		c.SessionTimeout = 2 * time.Second
		c.MaxPollInterval = 2 * time.Second
		c.EnableAutoCommit = false
		c.PartitionAssignmentStrategy = []assignor.Assignor{strategy}
		for _, mod := range mods {
			mod(c)
		}
	})
}

// pollUntil polls c until cond holds, failing after a deadline.
func pollUntil(t *testing.T, cs []*Consumer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not reached")
		for _, c := range cs {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			_, err := c.Poll(ctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				require.NoError(t, err)
			}
		}
	}
}

func TestGroupSplitsPartitions(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 4)
	a := groupConsumer(e, assignor.Range())
	b := groupConsumer(e, assignor.Range())
	la, lb := &recordingListener{}, &recordingListener{}
	require.NoError(t, a.Subscribe([]string{"t"}, la))
	require.NoError(t, b.Subscribe([]string{"t"}, lb))
	pollUntil(t, []*Consumer{a, b}, func() bool { return len(a.Assignment()) == 2 && len(b.Assignment()) == 2 })
	all := append(a.Assignment(), b.Assignment()...)
	sortTPs(all)
	require.Equal(t, []TopicPartition{tp("t", 0), tp("t", 1), tp("t", 2), tp("t", 3)}, all)

	// The one with the old generation is fenced.
	idA, genA := a.group.identity()
	require.NoError(t, b.Close(context.Background()))
	pollUntil(t, []*Consumer{a}, func() bool { return len(a.Assignment()) == 4 })
	_, newGen := a.group.identity()
	require.Greater(t, newGen, genA)
	coord, err := coordinator.Groups(context.Background(), e.dir)
	require.NoError(t, err)
	err = coord.CommitOffsets(context.Background(), coordinator.GroupMetadata{GroupID: "g", MemberID: idA, GenerationID: genA}, map[coordinator.TopicPartition]coordinator.OffsetAndMetadata{{Topic: "t"}: {Offset: 1}})
	require.ErrorIs(t, err, ErrIllegalGeneration)
	require.NoError(t, a.CommitSync(context.Background(), map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 0, LeaderEpoch: -1}}))

	require.NotEmpty(t, la.assigned)
	require.NotEmpty(t, la.revoked, "eager: everything is revoked before a rebalance")
	desc, err := DescribeGroup(context.Background(), e.dir, "g")
	require.NoError(t, err)
	require.Equal(t, "Stable", desc.State)
	require.Len(t, desc.Members, 1)
	require.Equal(t, "range", desc.Assignor)
	require.ErrorIs(t, DeleteGroup(context.Background(), e.dir, "g"), ErrGroupNotEmpty)
	_, err = ResetOffsets(context.Background(), e.dir, "g", []TopicPartition{tp("t", 0)}, ResetToEarliest())
	require.ErrorIs(t, err, ErrGroupNotEmpty, "a group with members is not reset")
	committed, err := a.Committed([]TopicPartition{tp("t", 0)})
	require.NoError(t, err)
	require.Equal(t, int64(0), committed[tp("t", 0)].Offset)
}

// TestResetOffsetsMakesNoGroupBeyondTheBound: resetting the offsets of a
// new group while the coordinator holds log.Config.GroupMaxCount groups is
// refused, and makes no group; an existing group is reset.
func TestResetOffsetsMakesNoGroupBeyondTheBound(t *testing.T) {
	e := newEnv(t)
	e.cfg.GroupMaxCount = 1
	e.reopen()
	e.topic("t", 1)
	ctx := context.Background()
	_, err := ResetOffsets(ctx, e.dir, "first", []TopicPartition{tp("t", 0)}, ResetToEarliest())
	require.NoError(t, err)
	_, err = ResetOffsets(ctx, e.dir, "second", []TopicPartition{tp("t", 0)}, ResetToEarliest())
	require.ErrorIs(t, err, coordinator.ErrGroupMaxCount)
	_, err = ResetOffsets(ctx, e.dir, "first", []TopicPartition{tp("t", 0)}, ResetToLatest())
	require.NoError(t, err)
	groups, err := ListGroups(ctx, e.dir)
	require.NoError(t, err)
	require.Equal(t, []string{"first"}, groups)
}

// TestCooperativeKeepsUnaffectedPartitions: with cooperative-sticky, a
// member joining takes partitions only from those that must move; the first
// member keeps the rest throughout and never has them revoked.
func TestCooperativeKeepsUnaffectedPartitions(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 6)
	a := groupConsumer(e, assignor.CooperativeSticky())
	la := &recordingListener{}
	require.NoError(t, a.Subscribe([]string{"t"}, la))
	pollUntil(t, []*Consumer{a}, func() bool { return len(a.Assignment()) == 6 })
	b := groupConsumer(e, assignor.CooperativeSticky())
	require.NoError(t, b.Subscribe([]string{"t"}, nil))
	pollUntil(t, []*Consumer{a, b}, func() bool { return len(a.Assignment()) == 3 && len(b.Assignment()) == 3 })
	la.mu.Lock()
	defer la.mu.Unlock()
	var revoked []TopicPartition
	for _, r := range la.revoked {
		revoked = append(revoked, r...)
	}
	require.Len(t, revoked, 3, "only the partitions that moved were revoked")
	for _, tp := range a.Assignment() {
		require.NotContains(t, revoked, tp)
	}
}

// TestDeadMemberIsDropped: a member that stops heartbeating loses its
// partitions to the others after session.timeout.ms.
func TestDeadMemberIsDropped(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 2)
	a := groupConsumer(e, assignor.RoundRobin())
	b := groupConsumer(e, assignor.RoundRobin(), func(c *Config) {
		c.SessionTimeout, c.MaxPollInterval = 100*time.Millisecond, time.Minute
	})
	require.NoError(t, a.Subscribe([]string{"t"}, nil))
	require.NoError(t, b.Subscribe([]string{"t"}, nil))
	pollUntil(t, []*Consumer{a, b}, func() bool { return len(a.Assignment()) == 1 && len(b.Assignment()) == 1 })
	b.group.stopHeartbeat() // b's process "hangs": no more heartbeats
	pollUntil(t, []*Consumer{a}, func() bool { return len(a.Assignment()) == 2 })
}

func TestGroupOffsetsAndAdmin(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 40)
	c := groupConsumer(e, assignor.Range())
	require.NoError(t, c.Subscribe([]string{"t"}, nil))
	recs := pollN(t, c, 40)
	require.Len(t, recs, 40)
	require.NoError(t, c.CommitSync(context.Background(), nil))
	require.NoError(t, c.Close(context.Background()))

	groups, err := ListGroups(context.Background(), e.dir)
	require.NoError(t, err)
	require.Equal(t, []string{"g"}, groups)
	desc, err := DescribeGroup(context.Background(), e.dir, "g")
	require.NoError(t, err)
	require.Equal(t, int64(40), desc.Offsets[tp("t", 0)].Offset)
	require.Zero(t, desc.Lag[tp("t", 0)])

	got, err := ResetOffsets(context.Background(), e.dir, "g", []TopicPartition{tp("t", 0)}, ResetToOffset(15))
	require.NoError(t, err)
	require.Equal(t, int64(15), got[tp("t", 0)])

	e.reopen() // the group's offsets and generation come back from __consumer_offsets
	c2 := groupConsumer(e, assignor.Range())
	require.NoError(t, c2.Subscribe([]string{"t"}, nil))
	recs = pollN(t, c2, 25)
	require.Equal(t, int64(15), recs[0].Offset)
	_, gen := c2.group.identity()
	require.Greater(t, gen, int32(1), "a restarted coordinator starts above the last generation")
	require.NoError(t, c2.Close(context.Background()))
	require.NoError(t, DeleteGroup(context.Background(), e.dir, "g"))
	groups, err = ListGroups(context.Background(), e.dir)
	require.NoError(t, err)
	require.Empty(t, groups)
}

// TestOffsetsTopicLayout: commits and group metadata are records of
// __consumer_offsets in Kafka's schemas, in the group's partition.
func TestOffsetsTopicLayout(t *testing.T) {
	e := newEnv(t)
	e.cfg.OffsetsTopicNumPartitions = 5
	e.reopen()
	e.topic("t", 1)
	e.produce("t", 0, 10)
	c := groupConsumer(e, assignor.Range())
	require.NoError(t, c.Subscribe([]string{"t"}, nil))
	pollN(t, c, 10)
	require.NoError(t, c.CommitSync(context.Background(), nil))
	_, gen := c.group.identity()

	part := groupcodec.PartitionFor("g", 5)
	l, err := e.dir.Partition("__consumer_offsets", part)
	require.NoError(t, err)
	var sawCommit, sawGroup bool
	for off := int64(0); off < l.LogEndOffset(); {
		next, err := l.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			k, err := groupcodec.ParseKey(r.Key)
			require.NoError(t, err)
			switch k.Type {
			case groupcodec.TypeOffsetCommit:
				v, err := groupcodec.ParseOffsetCommitValue(r.Value)
				require.NoError(t, err)
				require.Equal(t, "g", k.OffsetCommit.Group)
				require.Equal(t, int64(10), v.Offset)
				sawCommit = true
			case groupcodec.TypeGroupMetadata:
				v, err := groupcodec.ParseGroupMetadataValue(r.Value)
				require.NoError(t, err)
				require.Equal(t, "consumer", v.ProtocolType)
				if v.Generation == gen {
					require.Len(t, v.Members, 1)
					sub, err := groupcodec.ParseSubscription(v.Members[0].Subscription)
					require.NoError(t, err)
					require.Equal(t, []string{"t"}, sub.Topics)
					sawGroup = true
				}
			}
			return nil
		})
		require.NoError(t, err)
		off = next
	}
	require.True(t, sawCommit)
	require.True(t, sawGroup)
}

// TestRebalanceFuncs: nil functions do nothing, and a nil Lost falls back
// to Revoked, as Kafka's default onPartitionsLost does.
func TestRebalanceFuncs(t *testing.T) {
	parts := []TopicPartition{tp("t", 0)}
	for _, tc := range []struct {
		name              string
		withLost          bool
		wantRevokedByLost bool
	}{
		{name: "Lost set", withLost: true},
		{name: "Lost nil calls Revoked", wantRevokedByLost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []string
			f := RebalanceFuncs{Revoked: func(context.Context, []TopicPartition) { calls = append(calls, "revoked") }}
			if tc.withLost {
				f.Lost = func(context.Context, []TopicPartition) { calls = append(calls, "lost") }
			}
			f.OnPartitionsAssigned(context.Background(), parts) // nil: nothing
			f.OnPartitionsLost(context.Background(), parts)
			want := []string{"lost"}
			if tc.wantRevokedByLost {
				want = []string{"revoked"}
			}
			require.Equal(t, want, calls)
		})
	}
	var empty RebalanceFuncs
	require.NotPanics(t, func() {
		empty.OnPartitionsRevoked(context.Background(), parts)
		empty.OnPartitionsAssigned(context.Background(), parts)
		empty.OnPartitionsLost(context.Background(), parts)
	})
}
