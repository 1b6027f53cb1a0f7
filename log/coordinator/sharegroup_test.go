package coordinator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// shareBeat heartbeats a share group member and fails the test on error.
func (e *consumerEnv) shareBeat(group, member string, epoch int32, topics ...string) ShareHeartbeatResult {
	e.t.Helper()
	res, err := e.c.ShareGroupHeartbeat(context.Background(), ShareHeartbeat{GroupID: group, MemberID: member, MemberEpoch: epoch, SubscribedTopicNames: topics})
	require.NoError(e.t, err)
	return res
}

// partitionsOf flattens an assignment of topic a into partition numbers.
func (e *consumerEnv) partitionsOf(a []TopicPartitions, topic string) []int32 {
	var out []int32
	for _, tp := range a {
		if tp.TopicID == e.id(topic) {
			out = append(out, tp.Partitions...)
		}
	}
	return out
}

func TestShareGroupAssignment(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"a": 3, "b": 1})
	r1 := e.shareBeat("g", "m1", JoinEpoch, "a", "b")
	assert.Equal(t, int32(1), r1.MemberEpoch)
	assert.Equal(t, 5*time.Second, r1.HeartbeatInterval)
	assert.ElementsMatch(t, []int32{0, 1, 2}, e.partitionsOf(r1.Assignment, "a"))
	assert.Equal(t, []int32{0}, e.partitionsOf(r1.Assignment, "b"))

	r2 := e.shareBeat("g", "m2", JoinEpoch, "a")
	assert.Equal(t, int32(2), r2.MemberEpoch)
	r1 = e.shareBeat("g", "m1", 1)
	assert.Equal(t, int32(2), r1.MemberEpoch, "a share member takes the new assignment at once: nothing to revoke")
	a1, a2 := e.partitionsOf(r1.Assignment, "a"), e.partitionsOf(r2.Assignment, "a")
	assert.ElementsMatch(t, []int32{0, 1, 2}, append(append([]int32{}, a1...), a2...), "every partition of a to one of them")
	assert.Len(t, a1, 2)
	assert.Len(t, a2, 1)
	assert.Equal(t, []int32{0}, e.partitionsOf(r1.Assignment, "b"), "only m1 reads b")
	assert.Empty(t, e.partitionsOf(r2.Assignment, "b"))

	// More members than partitions: they share them.
	r3 := e.shareBeat("g", "m3", JoinEpoch, "b")
	r4 := e.shareBeat("g", "m4", JoinEpoch, "b")
	assert.Equal(t, []int32{0}, e.partitionsOf(r3.Assignment, "b"))
	assert.Equal(t, []int32{0}, e.partitionsOf(r4.Assignment, "b"))

	d, err := e.c.DescribeShareGroup("g")
	require.NoError(t, err)
	assert.Equal(t, int32(4), d.GroupEpoch)
	assert.Equal(t, AssignorSimple, d.AssignorName)
	assert.Equal(t, StateStable, d.State)
	require.Len(t, d.Members, 4)
	assert.Equal(t, []string{"a", "b"}, d.Members[0].SubscribedTopicNames)

	// A heartbeat that changes nothing keeps the epoch; one from an old
	// epoch is fenced; an unknown member is unknown.
	assert.Equal(t, int32(4), e.shareBeat("g", "m3", 3).MemberEpoch, "m3 had epoch 3: m4 joined since")
	assert.Equal(t, int32(4), e.shareBeat("g", "m3", 4).MemberEpoch)
	_, err = e.c.ShareGroupHeartbeat(context.Background(), ShareHeartbeat{GroupID: "g", MemberID: "m1", MemberEpoch: 1})
	assert.ErrorIs(t, err, ErrFencedMemberEpoch)
	_, err = e.c.ShareGroupHeartbeat(context.Background(), ShareHeartbeat{GroupID: "g", MemberID: "nobody", MemberEpoch: 3})
	assert.ErrorIs(t, err, ErrUnknownMember)

	// Partitions added to a subscribed topic bump the epoch.
	require.NoError(t, e.d.AddPartitions(context.Background(), "a", 4))
	r1 = e.shareBeat("g", "m1", 2)
	assert.Equal(t, int32(5), r1.MemberEpoch)

	assert.Contains(t, e.c.ListGroups(), GroupListing{GroupID: "g", Type: TypeShare, State: StateStable})
}

func TestShareHeartbeatRefusals(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"a": 1})
	ctx := context.Background()
	for name, req := range map[string]ShareHeartbeat{
		"no group":       {MemberID: "m", SubscribedTopicNames: []string{"a"}},
		"no member":      {GroupID: "g", SubscribedTopicNames: []string{"a"}},
		"no topics":      {GroupID: "g", MemberID: "m"},
		"empty rack":     {GroupID: "g", MemberID: "m", SubscribedTopicNames: []string{"a"}, RackID: new(string)},
		"negative epoch": {GroupID: "g", MemberID: "m", MemberEpoch: -2, SubscribedTopicNames: []string{"a"}},
		"long member":    {GroupID: "g", MemberID: strings.Repeat("m", 1<<15), SubscribedTopicNames: []string{"a"}},
		"long topic":     {GroupID: "g", MemberID: "m", SubscribedTopicNames: []string{strings.Repeat("t", 1<<15)}},
	} {
		_, err := e.c.ShareGroupHeartbeat(ctx, req)
		assert.ErrorIs(t, err, ErrInvalidHeartbeat, name)
	}
	_, err := e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "g", MemberID: "m", MemberEpoch: 3})
	assert.ErrorIs(t, err, ErrUnknownMember, "not a member, not joining")
	assert.Empty(t, e.c.ListGroups(), "a refused heartbeat creates nothing")

	// A group id is of one type.
	e.newClient("cg", "c1", "a").mustHeartbeat()
	_, err = e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "cg", MemberID: "m", SubscribedTopicNames: []string{"a"}})
	assert.ErrorIs(t, err, ErrUnknownGroup, "a consumer group")
	e.shareBeat("sg", "m", JoinEpoch, "a")
	_, err = e.c.ConsumerGroupHeartbeat(ctx, ConsumerHeartbeat{GroupID: "sg", MemberID: "c", SubscribedTopicNames: []string{"a"}, RebalanceTimeout: time.Minute, OwnedPartitions: []TopicPartitions{}})
	assert.ErrorIs(t, err, ErrUnknownGroup, "a share group is not a consumer group")
	_, err = e.c.JoinGroup(ctx, JoinRequest{GroupID: "sg", MemberID: "x", ProtocolType: "consumer", SessionTimeout: 10 * time.Second,
		RebalanceTimeout: time.Minute, Protocols: []Protocol{{Name: "range"}}})
	assert.ErrorIs(t, err, ErrInconsistentProtocol)
	err = e.c.CommitOffsets(ctx, GroupMetadata{GroupID: "sg", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "a"}: {Offset: 1}})
	assert.ErrorIs(t, err, ErrUnknownGroup, "share groups commit no offsets")
	_, err = e.c.DescribeGroup("sg")
	assert.ErrorIs(t, err, ErrUnknownGroup)
	_, err = e.c.DescribeShareGroup("cg")
	assert.ErrorIs(t, err, ErrUnknownGroup)

	// group.share.max.size
	e.c.shareMaxSize = 2
	e.shareBeat("sg", "m2", JoinEpoch, "a")
	_, err = e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "sg", MemberID: "m3", SubscribedTopicNames: []string{"a"}})
	assert.ErrorIs(t, err, ErrGroupMaxSize)
	assert.NoError(t, e.c.CheckShareMember("sg", "m2"))
	assert.ErrorIs(t, e.c.CheckShareMember("sg", "m3"), ErrUnknownMember)
	assert.ErrorIs(t, e.c.CheckShareMember("cg", "c1"), ErrUnknownGroup)
}

// produceShare appends n records to topic-0 in one batch.
func (e *consumerEnv) produceShare(topic string, n int) {
	e.t.Helper()
	l, err := e.d.Partition(topic, 0)
	require.NoError(e.t, err)
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	for i := range n {
		require.NoError(e.t, b.Append(e.clock.Now().UnixMilli(), nil, fmt.Appendf(nil, "v%d", i), nil))
	}
	batch, err := b.Build()
	require.NoError(e.t, err)
	_, err = l.Append(batch)
	require.NoError(e.t, err)
}

func TestShareMembersLeavingReleaseTheirRecords(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"a": 1})
	ctx := context.Background()
	e.produceShare("a", 4)
	sp, err := e.c.SharePartitions(ctx)
	require.NoError(t, err)
	same, err := share.Partitions(ctx, e.d)
	require.NoError(t, err)
	require.Same(t, sp, same)
	_, err = e.c.AlterShareGroupOffsets(ctx, "g", map[TopicPartition]int64{{Topic: "a"}: 0})
	require.NoError(t, err)

	acquire := func(member string) []share.AcquiredRecords {
		f, err := sp.Acquire(ctx, share.FetchRequest{GroupID: "g", MemberID: member, Topic: "a", MaxRecords: 10, MaxBytes: 1 << 20})
		require.NoError(t, err)
		if f.Acquired != nil {
			f.Records.Release()
		}
		return f.Acquired
	}
	e.shareBeat("g", "m1", JoinEpoch, "a")
	r2 := e.shareBeat("g", "m2", JoinEpoch, "a")
	assert.Equal(t, []share.AcquiredRecords{{FirstOffset: 0, LastOffset: 3, DeliveryCount: 1}}, acquire("m1"))
	_, err = e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "g", MemberID: "m1", MemberEpoch: LeaveEpoch})
	require.NoError(t, err)
	assert.Equal(t, []share.AcquiredRecords{{FirstOffset: 0, LastOffset: 3, DeliveryCount: 2}}, acquire("m2"), "m1 left: its records went back")

	// A member whose session runs out is removed, its records released.
	e.clock.Add(46 * time.Second)
	e.tick()
	e.c.mu.Lock()
	releases := e.c.shareReleases
	e.c.shareReleases = nil
	e.c.mu.Unlock()
	require.Equal(t, []shareRelease{{"g", "m2"}}, releases)
	e.c.releaseShareMembers(ctx, releases)
	assert.Equal(t, []share.AcquiredRecords{{FirstOffset: 0, LastOffset: 3, DeliveryCount: 3}}, acquire("m3"))
	d, err := e.c.DescribeShareGroup("g")
	require.NoError(t, err)
	assert.Empty(t, d.Members)
	assert.Equal(t, StateEmpty, d.State)
	_, err = e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "g", MemberID: "m2", MemberEpoch: r2.MemberEpoch})
	assert.ErrorIs(t, err, ErrUnknownMember, "an expired member joins again with epoch 0")
}

func TestShareGroupAdmin(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"a": 2})
	ctx := context.Background()
	e.produceShare("a", 5)
	e.shareBeat("g", "m1", JoinEpoch, "a")
	_, err := e.c.AlterShareGroupOffsets(ctx, "g", map[TopicPartition]int64{{Topic: "a"}: 2})
	assert.ErrorIs(t, err, ErrGroupNotEmpty)
	_, err = e.c.DeleteShareGroupOffsets(ctx, "g", []string{"a"})
	assert.ErrorIs(t, err, ErrGroupNotEmpty)
	assert.ErrorIs(t, e.c.DeleteGroup(ctx, "g"), ErrGroupNotEmpty)
	_, err = e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "g", MemberID: "m1", MemberEpoch: LeaveEpoch})
	require.NoError(t, err)

	errs, err := e.c.AlterShareGroupOffsets(ctx, "g", map[TopicPartition]int64{{Topic: "a"}: 2, {Topic: "a", Partition: 1}: 0, {Topic: "zz"}: 0})
	require.NoError(t, err)
	assert.NoError(t, errs[TopicPartition{Topic: "a"}])
	assert.ErrorIs(t, errs[TopicPartition{Topic: "zz"}], log.ErrUnknownTopicOrPartition)
	sp, err := e.c.SharePartitions(ctx)
	require.NoError(t, err)
	assert.Equal(t, []share.PartitionOffset{
		{Topic: "a", Partition: 0, StartOffset: 2, LeaderEpoch: 0, Lag: 3},
		{Topic: "a", Partition: 1, StartOffset: 0, LeaderEpoch: 0, Lag: 0},
	}, sp.Offsets("g", nil))

	errsByTopic, err := e.c.DeleteShareGroupOffsets(ctx, "g", []string{"a", "zz"})
	require.NoError(t, err)
	assert.NoError(t, errsByTopic["a"])
	assert.ErrorIs(t, errsByTopic["zz"], log.ErrUnknownTopicOrPartition)
	assert.Empty(t, sp.Offsets("g", nil))

	_, err = e.c.AlterShareGroupOffsets(ctx, "new", map[TopicPartition]int64{{Topic: "a"}: 1})
	require.NoError(t, err, "Kafka creates the share group")
	assert.Contains(t, e.c.ListGroups(), GroupListing{GroupID: "new", Type: TypeShare, State: StateEmpty})
	_, err = e.c.DeleteShareGroupOffsets(ctx, "missing", []string{"a"})
	assert.ErrorIs(t, err, ErrUnknownGroup)
	require.NoError(t, e.c.DeleteGroup(ctx, "new"))
	assert.Empty(t, sp.Offsets("new", nil), "the group's states went with it")
	_, err = e.c.DescribeShareGroup("new")
	assert.ErrorIs(t, err, ErrUnknownGroup)
}

func TestShareGroupSurvivesRestart(t *testing.T) {
	for _, how := range []string{"restart", "crash"} {
		t.Run(how, func(t *testing.T) {
			e := newConsumerEnv(t, map[string]int32{"a": 3})
			ctx := context.Background()
			mem := e.fs.(*vfs.MemFS)
			e.shareBeat("g", "m1", JoinEpoch, "a")
			e.shareBeat("g", "m2", JoinEpoch, "a")
			e.shareBeat("g", "m3", JoinEpoch, "a")
			_, err := e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "g", MemberID: "m3", MemberEpoch: LeaveEpoch})
			require.NoError(t, err)
			_, err = e.c.AlterShareGroupOffsets(ctx, "empty", map[TopicPartition]int64{{Topic: "a"}: 0})
			require.NoError(t, err)
			before, err := e.c.DescribeShareGroup("g")
			require.NoError(t, err)
			if how == "crash" {
				e.fs = mem.CrashClone()
				require.NoError(t, e.d.Close())
				e.cfg.FS = e.fs
				e.open()
			} else {
				e.restart()
			}
			after, err := e.c.DescribeShareGroup("g")
			require.NoError(t, err)
			assert.Equal(t, before, after, "members, epochs and assignments as stored")
			assert.Equal(t, int32(4), e.shareBeat("g", "m2", 2).MemberEpoch, "a member carries on with its epoch")
			_, err = e.c.ShareGroupHeartbeat(ctx, ShareHeartbeat{GroupID: "g", MemberID: "m3", MemberEpoch: 3})
			assert.ErrorIs(t, err, ErrUnknownMember, "m3 left for good")
			assert.Contains(t, e.c.ListGroups(), GroupListing{GroupID: "empty", Type: TypeShare, State: StateEmpty})
			require.NoError(t, e.c.DeleteGroup(ctx, "empty"))
			e.restart()
			_, err = e.c.DescribeShareGroup("empty")
			assert.ErrorIs(t, err, ErrUnknownGroup, "deleted for good")
		})
	}
}
