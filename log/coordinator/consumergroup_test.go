package coordinator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// consumerEnv is a Dir with topics and its group coordinator, on a clock
// moved by hand.
type consumerEnv struct {
	t     *testing.T
	fs    vfs.FS
	cfg   log.Config
	clock *testclock.Clock
	d     *log.Dir
	c     *GroupCoordinator
}

func newConsumerEnv(t *testing.T, topics map[string]int32) *consumerEnv {
	t.Helper()
	e := &consumerEnv{t: t, fs: vfs.NewMem(), clock: testclock.New(time.UnixMilli(1_700_000_000_000))}
	e.cfg = log.DefaultConfig()
	e.cfg.FS = e.fs
	e.cfg.Now = e.clock.Now
	e.cfg.OffsetsTopicNumPartitions = 2
	e.open()
	for _, name := range slices.Sorted(maps.Keys(topics)) {
		_, err := e.d.CreateTopic(context.Background(), name, topics[name], nil)
		require.NoError(t, err)
	}
	return e
}

func (e *consumerEnv) open() {
	d, err := log.Open(context.Background(), "/data", e.cfg)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = d.Close() })
	c, err := Groups(context.Background(), d)
	require.NoError(e.t, err)
	e.d, e.c = d, c
}

// restart closes the Dir as a crash would leave its files (the memory
// filesystem keeps what was written) and opens it again.
func (e *consumerEnv) restart() {
	require.NoError(e.t, e.d.Close())
	e.open()
}

// tick runs the coordinator's timed work at the clock's time.
func (e *consumerEnv) tick() {
	e.c.mu.Lock()
	e.c.tickLocked(e.clock.Now())
	e.c.mu.Unlock()
}

func (e *consumerEnv) id(topic string) TopicID {
	td, err := e.d.DescribeTopic(topic)
	require.NoError(e.t, err)
	b, err := base64.RawURLEncoding.DecodeString(td.ID)
	require.NoError(e.t, err)
	return TopicID(b)
}

// client is a consumer speaking KIP-848's protocol as Kafka's clients do:
// it owns what the last assignment said, gives up at once what the next
// one leaves out, and tells the coordinator what it owns.
type client struct {
	e      *consumerEnv
	group  string
	id     string
	epoch  int32
	topics []string
	regex  *string
	owned  map[TopicID][]int32
	inst   *string
}

func (e *consumerEnv) newClient(group, id string, topics ...string) *client {
	return &client{e: e, group: group, id: id, topics: topics, owned: map[TopicID][]int32{}}
}

func (cl *client) ownedList() []TopicPartitions {
	out := []TopicPartitions{}
	for _, id := range slices.SortedFunc(maps.Keys(cl.owned), func(a, b TopicID) int { return cmpID(a, b) }) {
		out = append(out, TopicPartitions{TopicID: id, Partitions: slices.Clone(cl.owned[id])})
	}
	return out
}

// heartbeat sends a heartbeat (a full one when joining) and takes the
// answer's assignment.
func (cl *client) heartbeat() (ConsumerHeartbeatResult, error) {
	req := ConsumerHeartbeat{GroupID: cl.group, MemberID: cl.id, MemberEpoch: cl.epoch, RebalanceTimeout: -1,
		OwnedPartitions: cl.ownedList(), ClientID: "client-" + cl.id, ClientHost: "/127.0.0.1", InstanceID: cl.inst}
	if cl.epoch == JoinEpoch {
		req.RebalanceTimeout = time.Minute
		req.SubscribedTopicNames = cl.topics
		req.SubscribedTopicRegex = cl.regex
	}
	res, err := cl.e.c.ConsumerGroupHeartbeat(context.Background(), req)
	if err != nil {
		return res, err
	}
	cl.epoch = res.MemberEpoch
	if res.Assignment != nil {
		cl.owned = map[TopicID][]int32{}
		for _, tp := range res.Assignment {
			cl.owned[tp.TopicID] = tp.Partitions
		}
	}
	return res, nil
}

func (cl *client) mustHeartbeat() ConsumerHeartbeatResult {
	cl.e.t.Helper()
	res, err := cl.heartbeat()
	require.NoError(cl.e.t, err, "member %s", cl.id)
	return res
}

func (cl *client) count() int {
	n := 0
	for _, ps := range cl.owned {
		n += len(ps)
	}
	return n
}

// requireNoPartitionTwice fails if two clients own a partition at once.
func requireNoPartitionTwice(t *testing.T, clients ...*client) {
	t.Helper()
	seen := map[string]string{}
	for _, cl := range clients {
		for id, ps := range cl.owned {
			for _, p := range ps {
				k := fmt.Sprintf("%x-%d", id[:4], p)
				require.Empty(t, seen[k], "partition %s owned by %s and %s", k, seen[k], cl.id)
				seen[k] = cl.id
			}
		}
	}
}

// settle heartbeats every client in turn until the group is Stable,
// checking after each heartbeat that no partition is owned twice.
func settle(t *testing.T, clients ...*client) {
	t.Helper()
	for range 20 {
		for _, cl := range clients {
			cl.mustHeartbeat()
			requireNoPartitionTwice(t, clients...)
		}
		d, err := clients[0].e.c.DescribeConsumerGroup(clients[0].group)
		require.NoError(t, err)
		if d.State == StateStable {
			return
		}
	}
	t.Fatal("the group did not become Stable")
}

func TestConsumerGroupJoinsAndBalances(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"orders": 6})
	a, b, c := e.newClient("g", "a", "orders"), e.newClient("g", "b", "orders"), e.newClient("g", "c", "orders")

	res := a.mustHeartbeat()
	require.Equal(t, int32(1), res.MemberEpoch)
	require.Equal(t, e.cfg.ConsumerGroupHeartbeatInterval, res.HeartbeatInterval)
	require.Equal(t, 6, a.count(), "a lone member owns everything at once")

	b.mustHeartbeat()
	require.Equal(t, 0, b.count(), "b waits while a still owns its partitions")
	settle(t, a, b)
	require.Equal(t, 3, a.count())
	require.Equal(t, 3, b.count())

	c.mustHeartbeat()
	settle(t, a, b, c)
	for _, cl := range []*client{a, b, c} {
		require.Equal(t, 2, cl.count(), cl.id)
	}
	d, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Equal(t, int32(3), d.GroupEpoch)
	require.Equal(t, d.GroupEpoch, d.AssignmentEpoch)
	require.Equal(t, AssignorUniform, d.AssignorName)
	require.Len(t, d.Members, 3)
	for _, m := range d.Members {
		require.Equal(t, d.GroupEpoch, m.MemberEpoch)
		require.Equal(t, m.TargetAssignment, m.Assignment)
	}
	ls := e.c.ListGroups()
	require.Equal(t, []GroupListing{{GroupID: "g", Type: TypeConsumer, ProtocolType: "consumer", State: StateStable}}, ls)

	// A member leaving: the others take its partitions, once they
	// heartbeat.
	res, err = c.e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "c", MemberEpoch: LeaveEpoch})
	require.NoError(t, err)
	require.Equal(t, int32(LeaveEpoch), res.MemberEpoch)
	settle(t, a, b)
	require.Equal(t, 3, a.count())
	require.Equal(t, 3, b.count())
}

// TestConsumerGroupRevokesBeforeAssigning: a partition moves from one
// member to another only after the first has stopped owning it, and the
// first keeps its epoch until then.
func TestConsumerGroupRevokesBeforeAssigning(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 2})
	a, b := e.newClient("g", "a", "t"), e.newClient("g", "b", "t")
	a.mustHeartbeat()
	require.Equal(t, 2, a.count())
	b.mustHeartbeat()
	require.Equal(t, 0, b.count())
	require.Equal(t, int32(2), b.epoch, "b is at the target epoch, waiting for a partition a owns")

	// a's heartbeat without saying what it owns: it must revoke one.
	res, err := e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "a", MemberEpoch: a.epoch, RebalanceTimeout: -1})
	require.NoError(t, err)
	require.Equal(t, int32(1), res.MemberEpoch, "a keeps its epoch until it has revoked")
	require.Len(t, res.Assignment, 1)
	require.Len(t, res.Assignment[0].Partitions, 1)
	d, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateReconciling, d.State)

	// b still gets nothing while a has not said it gave the partition up.
	b.mustHeartbeat()
	require.Equal(t, 0, b.count())

	// a acknowledges (owns one), moves to epoch 2; then b gets the other.
	a.owned = map[TopicID][]int32{res.Assignment[0].TopicID: res.Assignment[0].Partitions}
	a.mustHeartbeat()
	require.Equal(t, int32(2), a.epoch)
	b.mustHeartbeat()
	require.Equal(t, 1, b.count())
	requireNoPartitionTwice(t, a, b)
	d, err = e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateStable, d.State)
}

func TestConsumerGroupFencesEpochs(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 2})
	a, b := e.newClient("g", "a", "t"), e.newClient("g", "b", "t")
	a.mustHeartbeat()
	b.mustHeartbeat()
	settle(t, a, b)
	require.Equal(t, int32(2), a.epoch)

	hb := func(epoch int32, owned []TopicPartitions) error {
		_, err := e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "a", MemberEpoch: epoch,
			RebalanceTimeout: -1, OwnedPartitions: owned})
		return err
	}
	require.ErrorIs(t, hb(3, a.ownedList()), ErrFencedMemberEpoch, "an epoch from the future")
	require.ErrorIs(t, hb(1, nil), ErrFencedMemberEpoch, "the previous epoch without saying what it owns")
	require.ErrorIs(t, hb(1, nil), ErrFencedMemberEpoch, "the previous epoch without saying what it owns")
	require.NoError(t, hb(1, a.ownedList()), "the previous epoch with a subset of its partitions: the answer may have been lost")
	require.ErrorIs(t, hb(1, []TopicPartitions{{TopicID: e.id("t"), Partitions: []int32{0, 1}}}), ErrFencedMemberEpoch,
		"the previous epoch owning more than its assignment")
	_, err := e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "nobody", MemberEpoch: 5, RebalanceTimeout: -1})
	require.ErrorIs(t, err, ErrUnknownMember)
	_, err = e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "nogroup", MemberID: "a", MemberEpoch: 5, RebalanceTimeout: -1})
	require.ErrorIs(t, err, ErrUnknownGroup)
	// Nothing changed for the others.
	settle(t, a, b)
	require.Equal(t, 1, a.count())
	require.Equal(t, 1, b.count())

	// A fenced member joins again under its id with epoch 0, owning
	// nothing, as Kafka 4.4 accepts it, and gets its partition back.
	a.owned, a.epoch = map[TopicID][]int32{}, JoinEpoch
	res, err := a.heartbeat()
	require.NoError(t, err)
	require.Positive(t, res.MemberEpoch)
	require.Equal(t, 1, a.count())
	settle(t, a, b)
	requireNoPartitionTwice(t, a, b)
}

func TestConsumerGroupRefusesBadHeartbeats(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 1})
	owned := []TopicPartitions{}
	str := func(s string) *string { return &s }
	for name, c := range map[string]struct {
		req  ConsumerHeartbeat
		want error
	}{
		"no group":             {ConsumerHeartbeat{MemberID: "m", RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: owned}, ErrInvalidHeartbeat},
		"no member id":         {ConsumerHeartbeat{GroupID: "g", RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: owned}, ErrInvalidHeartbeat},
		"join without timeout": {ConsumerHeartbeat{GroupID: "g", MemberID: "m", RebalanceTimeout: -1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: owned}, ErrInvalidHeartbeat},
		"join owning":          {ConsumerHeartbeat{GroupID: "g", MemberID: "m", RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: []TopicPartitions{{Partitions: []int32{0}}}}, ErrInvalidHeartbeat},
		"join with null owned": {ConsumerHeartbeat{GroupID: "g", MemberID: "m", RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}}, ErrInvalidHeartbeat},
		"join without topics":  {ConsumerHeartbeat{GroupID: "g", MemberID: "m", RebalanceTimeout: 1, OwnedPartitions: owned}, ErrInvalidHeartbeat},
		"epoch -3":             {ConsumerHeartbeat{GroupID: "g", MemberID: "m", MemberEpoch: -3}, ErrInvalidHeartbeat},
		"dynamic static leave": {ConsumerHeartbeat{GroupID: "g", MemberID: "m", MemberEpoch: StaticLeaveEpoch}, ErrInvalidHeartbeat},
		"empty instance id":    {ConsumerHeartbeat{GroupID: "g", MemberID: "m", InstanceID: str(""), RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: owned}, ErrInvalidHeartbeat},
		"long client id":       {ConsumerHeartbeat{GroupID: "g", MemberID: "m", ClientID: string(make([]byte, 40000)), RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: owned}, ErrInvalidHeartbeat},
		"unknown assignor":     {ConsumerHeartbeat{GroupID: "g", MemberID: "m", ServerAssignor: str("sticky"), RebalanceTimeout: 1, SubscribedTopicNames: []string{"t"}, OwnedPartitions: owned}, ErrUnsupportedAssignor},
		"bad regex":            {ConsumerHeartbeat{GroupID: "g", MemberID: "m", SubscribedTopicRegex: str("(["), RebalanceTimeout: 1, OwnedPartitions: owned}, ErrInvalidRegularExpression},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.c.ConsumerGroupHeartbeat(context.Background(), c.req)
			require.ErrorIs(t, err, c.want)
			require.Empty(t, e.c.ListGroups(), "a refused heartbeat creates no group")
		})
	}
}

func TestConsumerGroupMaxSize(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 1})
	e.c.consumerMaxSize = 2
	e.newClient("g", "a", "t").mustHeartbeat()
	e.newClient("g", "b", "t").mustHeartbeat()
	_, err := e.newClient("g", "c", "t").heartbeat()
	require.ErrorIs(t, err, ErrGroupMaxSize)
	d, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Len(t, d.Members, 2)
}

// TestConsumerGroupSessionsAndRebalanceTimeouts: a member that stops
// heartbeating is removed after group.consumer.session.timeout.ms, and one
// that does not revoke within its rebalance timeout is fenced; the others
// get their partitions.
func TestConsumerGroupSessionsAndRebalanceTimeouts(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 4})
	a, b := e.newClient("g", "a", "t"), e.newClient("g", "b", "t")
	a.mustHeartbeat()
	b.mustHeartbeat()
	settle(t, a, b)

	// b goes silent; a keeps heartbeating.
	for range 5 {
		e.clock.Add(10 * time.Second)
		a.mustHeartbeat()
		e.tick()
	}
	_, err := b.heartbeat()
	require.ErrorIs(t, err, ErrUnknownMember, "b's session ended")
	a.mustHeartbeat()
	a.mustHeartbeat()
	require.Equal(t, 4, a.count())

	// c joins; a never acknowledges the revocation (it heartbeats without
	// saying what it owns) and is fenced after its rebalance timeout
	// (a minute).
	c := e.newClient("g", "c", "t")
	c.mustHeartbeat()
	res, err := e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "a", MemberEpoch: a.epoch, RebalanceTimeout: -1})
	require.NoError(t, err)
	require.Len(t, res.Assignment[0].Partitions, 2)
	for range 7 {
		e.clock.Add(10 * time.Second)
		_, err = e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "a", MemberEpoch: a.epoch, RebalanceTimeout: -1})
		c.mustHeartbeat()
		e.tick()
	}
	_, err = a.heartbeat()
	require.ErrorIs(t, err, ErrUnknownMember, "a was fenced")
	c.mustHeartbeat()
	c.mustHeartbeat()
	require.Equal(t, 4, c.count())
}

// TestConsumerGroupConfigOverrides: a group's consumer.session.timeout.ms
// and consumer.heartbeat.interval.ms (log.Dir.AlterGroupConfig) take the
// place of the broker's for that group alone, from its next heartbeat.
func TestConsumerGroupConfigOverrides(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 2})
	ctx := context.Background()
	_, err := e.d.AlterGroupConfig(ctx, "g", map[string]string{"consumer.session.timeout.ms": "60000", "consumer.heartbeat.interval.ms": "7000"})
	require.NoError(t, err)
	a, b := e.newClient("g", "a", "t"), e.newClient("g", "b", "t")
	other := e.newClient("h", "o", "t")
	res := a.mustHeartbeat()
	require.Equal(t, 7*time.Second, res.HeartbeatInterval)
	require.Equal(t, 5*time.Second, other.mustHeartbeat().HeartbeatInterval, "other groups keep the broker's")
	b.mustHeartbeat()
	settle(t, a, b)

	// b goes silent for 50 s: past the broker's 45 s, within g's 60 s.
	for range 5 {
		e.clock.Add(10 * time.Second)
		a.mustHeartbeat()
		other.mustHeartbeat()
		e.tick()
	}
	b.mustHeartbeat()
	// Silent for 61 s: gone.
	for range 5 {
		e.clock.Add(11 * time.Second)
		a.mustHeartbeat()
		e.tick()
	}
	e.clock.Add(6 * time.Second)
	e.tick()
	_, err = b.heartbeat()
	require.ErrorIs(t, err, ErrUnknownMember, "b's session of 60 s ended")
}

// TestConsumerGroupSurvivesRestart: the group's records in
// __consumer_offsets bring back its members, epochs, target and owned
// partitions; members carry on with their epochs.
func TestConsumerGroupSurvivesRestart(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 4, "u": 2})
	a, b := e.newClient("g", "a", "t", "u"), e.newClient("g", "b", "t")
	a.mustHeartbeat()
	b.mustHeartbeat()
	settle(t, a, b)
	// One revocation pending across the restart.
	c := e.newClient("g", "c", "u")
	c.mustHeartbeat()
	before, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)

	e.restart()
	after, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Equal(t, before, after)
	settle(t, a, b, c)
	require.Equal(t, 6, a.count()+b.count()+c.count())

	// A member that left is gone after a restart too.
	_, err = e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: "c", MemberEpoch: LeaveEpoch})
	require.NoError(t, err)
	settle(t, a, b)
	e.restart()
	d, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Len(t, d.Members, 2)
	settle(t, a, b)
}

// TestConsumerGroupRecordsAreKafkas: what the coordinator writes decodes
// as Kafka's consumer group records.
func TestConsumerGroupRecordsAreKafkas(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 2})
	a := e.newClient("g", "a", "t")
	a.mustHeartbeat()
	seen := map[groupcodec.RecordType]int{}
	for _, l := range e.c.partitions {
		for off := int64(0); off < l.LogEndOffset(); off++ {
			rec, ok, err := l.ReadRecord(off)
			require.NoError(t, err)
			require.True(t, ok)
			k, err := groupcodec.ParseKey(rec.Key)
			require.NoError(t, err)
			v, err := groupcodec.ParseValue(k.Type, rec.Value)
			require.NoError(t, err)
			seen[k.Type]++
			require.Equal(t, "g", k.ConsumerGroup.Group)
			if m, ok := v.ConsumerGroup.(groupcodec.ConsumerGroupMemberMetadataValue); ok {
				require.Equal(t, []string{"t"}, m.SubscribedTopicNames)
				require.Equal(t, int32(60000), m.RebalanceTimeoutMs)
			}
			if cur, ok := v.ConsumerGroup.(groupcodec.ConsumerGroupCurrentMemberAssignmentValue); ok {
				require.Equal(t, int32(1), cur.MemberEpoch)
				require.Len(t, cur.AssignedPartitions, 1)
				require.Equal(t, []int32{0, 1}, cur.AssignedPartitions[0].Partitions)
				require.Equal(t, []int32{1, 1}, cur.AssignedPartitions[0].AssignmentEpochs)
			}
		}
	}
	require.Equal(t, map[groupcodec.RecordType]int{groupcodec.TypeConsumerGroupMemberMetadata: 1, groupcodec.TypeConsumerGroupMetadata: 1,
		groupcodec.TypeConsumerGroupTargetAssignmentMember: 1, groupcodec.TypeConsumerGroupTargetAssignmentMetadata: 1,
		groupcodec.TypeConsumerGroupCurrentMemberAssignment: 1}, seen)
}

// TestConsumerGroupCommits: OffsetCommit as Kafka 4.4 checks it for a
// consumer group: a member's commit at its epoch, or at an older one for
// partitions it was assigned at or before that epoch.
func TestConsumerGroupCommits(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 2})
	ctx := context.Background()
	a := e.newClient("g", "a", "t")
	a.mustHeartbeat()
	off := func(p int32) map[TopicPartition]OffsetAndMetadata {
		return map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: p}: {Offset: 7, LeaderEpoch: -1}}
	}
	commit := func(member string, epoch, p int32) error {
		return e.c.CommitOffsets(ctx, GroupMetadata{GroupID: "g", MemberID: member, GenerationID: epoch}, off(p))
	}
	require.NoError(t, commit("a", 1, 0))
	require.ErrorIs(t, commit("a", 2, 0), ErrStaleMemberEpoch, "an epoch ahead of the member's")
	require.ErrorIs(t, commit("x", 1, 0), ErrUnknownMember)
	require.ErrorIs(t, commit("", -1, 0), ErrUnknownMember, "no commit without membership while the group has members")

	b := e.newClient("g", "b", "t")
	b.mustHeartbeat()
	settle(t, a, b)
	require.Equal(t, int32(2), a.epoch)
	kept := a.ownedList()[0].Partitions[0]
	require.NoError(t, commit("a", 1, kept), "epoch 1 for a partition a has had since epoch 1")
	require.ErrorIs(t, commit("a", 1, 1-kept), ErrStaleMemberEpoch, "a partition a no longer owns")
	require.ErrorIs(t, commit("b", 1, 1-kept), ErrStaleMemberEpoch, "b's epoch 1 is before b had it")
	require.NoError(t, commit("b", 2, 1-kept))
	require.NoError(t, e.c.CheckConsumerOffsetFetch("g", "b", 2))
	require.ErrorIs(t, e.c.CheckConsumerOffsetFetch("g", "b", 1), ErrStaleMemberEpoch)
	require.ErrorIs(t, e.c.CheckConsumerOffsetFetch("g", "x", 1), ErrUnknownMember)
	require.NoError(t, e.c.CheckConsumerOffsetFetch("g", "", -1))

	for _, m := range []string{"a", "b"} {
		_, err := e.c.ConsumerGroupHeartbeat(ctx, ConsumerHeartbeat{GroupID: "g", MemberID: m, MemberEpoch: LeaveEpoch})
		require.NoError(t, err)
	}
	require.NoError(t, commit("", -1, 0), "an admin's commit to the empty group")
	require.Equal(t, int64(7), e.c.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
}

// TestConsumerAndClassicGroups: the two protocols share the group ids'
// space: an empty group of one kind becomes the other, a group with
// members refuses the other protocol's members.
func TestConsumerAndClassicGroups(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 2})
	ctx := context.Background()
	// A classic group with a member refuses a consumer-protocol member.
	res, err := e.c.join(ctx, joinRequest{GroupID: "classic", ClientID: "c", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.NoError(t, err)
	_, err = e.newClient("classic", "m", "t").heartbeat()
	require.ErrorIs(t, err, ErrUnknownGroup)

	// A consumer group with members refuses a classic member.
	e.newClient("cg", "m", "t").mustHeartbeat()
	_, err = e.c.join(ctx, joinRequest{GroupID: "cg", ClientID: "c", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.ErrorIs(t, err, ErrInconsistentProtocol)
	_, err = e.c.DescribeGroup("cg")
	require.ErrorIs(t, err, ErrUnknownGroup, "DescribeGroups describes classic groups")
	require.ErrorIs(t, e.c.DeleteGroup(ctx, "cg"), ErrGroupNotEmpty)

	// Emptied, the consumer group keeps its offsets and becomes classic
	// for a classic member.
	require.NoError(t, e.c.CommitOffsets(ctx, GroupMetadata{GroupID: "cg", MemberID: "m", GenerationID: 1},
		map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 3, LeaderEpoch: -1}}))
	_, err = e.c.ConsumerGroupHeartbeat(ctx, ConsumerHeartbeat{GroupID: "cg", MemberID: "m", MemberEpoch: LeaveEpoch})
	require.NoError(t, err)
	_, err = e.c.join(ctx, joinRequest{GroupID: "cg", ClientID: "c", Topics: []string{"t"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
	require.NoError(t, err)
	require.Equal(t, int64(3), e.c.FetchOffsets("cg", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
	_ = res

	// After a restart: the classic group is classic, its offsets kept.
	e.restart()
	d, err := e.c.DescribeGroup("cg")
	require.NoError(t, err)
	require.Equal(t, TypeClassic, d.Type)
	require.Equal(t, int64(3), e.c.FetchOffsets("cg", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
}

// TestConsumerGroupDeleted: an empty consumer group deleted is gone, its
// records deleted, after a restart too.
func TestConsumerGroupDeleted(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 1})
	ctx := context.Background()
	e.newClient("g", "m", "t").mustHeartbeat()
	_, err := e.c.ConsumerGroupHeartbeat(ctx, ConsumerHeartbeat{GroupID: "g", MemberID: "m", MemberEpoch: LeaveEpoch})
	require.NoError(t, err)
	require.Equal(t, StateEmpty, e.c.ListGroups()[0].State)
	require.NoError(t, e.c.DeleteGroup(ctx, "g"))
	require.Empty(t, e.c.ListGroups())
	e.restart()
	require.Empty(t, e.c.ListGroups())
}

func TestConsumerGroupStaticMembers(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 4})
	ctx := context.Background()
	inst := "pod-1"
	a, b := e.newClient("g", "a1", "t"), e.newClient("g", "b", "t")
	a.inst = &inst
	a.mustHeartbeat()
	b.mustHeartbeat()
	settle(t, a, b)
	mine := a.ownedList()

	// A second member with the instance id while the first is there.
	dup := e.newClient("g", "a2", "t")
	dup.inst = &inst
	_, err := dup.heartbeat()
	require.ErrorIs(t, err, ErrUnreleasedInstanceID)

	// The static member leaves for a while (epoch -2) and comes back under
	// a new member id: it gets its partitions back, nobody else had them.
	res, err := e.c.ConsumerGroupHeartbeat(ctx, ConsumerHeartbeat{GroupID: "g", MemberID: "a1", MemberEpoch: StaticLeaveEpoch, InstanceID: &inst})
	require.NoError(t, err)
	require.Equal(t, int32(StaticLeaveEpoch), res.MemberEpoch)
	b.mustHeartbeat()
	require.Equal(t, 2, b.count(), "b does not take the static member's partitions")
	dup.mustHeartbeat()
	require.Equal(t, mine, dup.ownedList())
	settle(t, dup, b)
	require.Equal(t, mine, dup.ownedList())
	_, err = a.heartbeat()
	require.ErrorIs(t, err, ErrUnknownMember, "the old member id is gone")
}

func TestConsumerGroupRegexSubscription(t *testing.T) {
	// An expression matches whole names: not xorders-eu.
	e := newConsumerEnv(t, map[string]int32{"orders-eu": 1, "orders-us": 1, "payments": 1, "xorders-eu": 1})
	re := "orders-.*"
	a := e.newClient("g", "a")
	a.regex = &re
	a.mustHeartbeat()
	require.Equal(t, 2, a.count())
	// A new matching topic joins the subscription at the next heartbeat.
	_, err := e.d.CreateTopic(context.Background(), "orders-ap", 2, nil)
	require.NoError(t, err)
	a.mustHeartbeat()
	require.Equal(t, 4, a.count())
	require.ElementsMatch(t, []TopicID{e.id("orders-eu"), e.id("orders-us"), e.id("orders-ap")}, slices.Collect(maps.Keys(a.owned)))

	// Internal topics match too, as Kafka's coordinator matches them.
	internal := "__consumer_offsets"
	b := e.newClient("g2", "b")
	b.regex = &internal
	b.mustHeartbeat()
	require.Equal(t, []TopicID{e.id(internal)}, slices.Collect(maps.Keys(b.owned)))
}

func TestRangeAssignor(t *testing.T) {
	e := newConsumerEnv(t, map[string]int32{"t": 5})
	rng := AssignorRange
	clients := []*client{e.newClient("g", "m1", "t"), e.newClient("g", "m2", "t")}
	for _, cl := range clients {
		_, err := e.c.ConsumerGroupHeartbeat(context.Background(), ConsumerHeartbeat{GroupID: "g", MemberID: cl.id, RebalanceTimeout: time.Minute,
			SubscribedTopicNames: []string{"t"}, ServerAssignor: &rng, OwnedPartitions: []TopicPartitions{}})
		require.NoError(t, err)
		cl.epoch = 1
	}
	clients[0].epoch, clients[1].epoch = 1, 2
	settle(t, clients...)
	require.Equal(t, []int32{0, 1, 2}, clients[0].owned[e.id("t")])
	require.Equal(t, []int32{3, 4}, clients[1].owned[e.id("t")])
	d, err := e.c.DescribeConsumerGroup("g")
	require.NoError(t, err)
	require.Equal(t, AssignorRange, d.AssignorName)
}

// TestUniformAssignorBalances: over random subscriptions and member
// changes, every subscribed partition goes to exactly one member
// subscribed to its topic; with one subscription for all, counts differ
// by at most one; and a member's partitions that stay valid move only
// when balance needs it.
func TestUniformAssignorBalances(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		topics := map[TopicID]assignTopic{}
		var ids []TopicID
		for i := range 1 + r.IntN(4) {
			id := TopicID{byte(i + 1)}
			topics[id] = assignTopic{id: id, partitions: int32(1 + r.IntN(12))}
			ids = append(ids, id)
		}
		homogeneous := r.IntN(2) == 0
		var members []assignMember
		for i := range 1 + r.IntN(6) {
			m := assignMember{id: fmt.Sprintf("m%d", i), topics: map[TopicID]bool{}}
			for _, id := range ids {
				if homogeneous || r.IntN(2) == 0 {
					m.topics[id] = true
				}
			}
			members = append(members, m)
		}
		first := assign(AssignorUniform, slices.Clone(members), topics)
		check := func(out map[string]partitionEpochs) {
			owner := map[string]string{}
			for _, m := range members {
				for id, ps := range out[m.id] {
					require.True(t, m.topics[id], "round %d: %s got a topic it does not subscribe to", round, m.id)
					for p := range ps {
						k := fmt.Sprint(id[0], "-", p)
						require.Empty(t, owner[k], "round %d: %s twice", round, k)
						owner[k] = m.id
					}
				}
			}
			for _, id := range ids {
				subscribed := slices.ContainsFunc(members, func(m assignMember) bool { return m.topics[id] })
				for p := range topics[id].partitions {
					k := fmt.Sprint(id[0], "-", p)
					require.Equal(t, subscribed, owner[k] != "", "round %d: %s", round, k)
				}
			}
			if homogeneous {
				lo, hi := 1<<30, 0
				for _, m := range members {
					lo, hi = min(lo, out[m.id].count()), max(hi, out[m.id].count())
				}
				require.LessOrEqual(t, hi-lo, 1, "round %d", round)
			}
		}
		check(first)
		// Stickiness: the same members and topics again keep everything.
		for i := range members {
			members[i].target = first[members[i].id]
		}
		again := assign(AssignorUniform, slices.Clone(members), topics)
		for _, m := range members {
			require.True(t, samePartitions(first[m.id], again[m.id]), "round %d: %s moved without cause", round, m.id)
		}
		// One member more: with one subscription, only what balance needs
		// moves (each old member keeps all but its surplus).
		if homogeneous {
			members = append(members, assignMember{id: "new", topics: maps.Clone(members[0].topics)})
			next := assign(AssignorUniform, slices.Clone(members), topics)
			check(next)
			for _, m := range members[:len(members)-1] {
				keptAll := true
				for id, ps := range next[m.id] {
					for p := range ps {
						keptAll = keptAll && first[m.id].has(id, p)
					}
				}
				require.True(t, keptAll, "round %d: %s got a partition another member had", round, m.id)
			}
		}
	}
}

// heartbeatOrRejoin is heartbeat as a client takes a fencing: it gives up
// its partitions and joins again with epoch 0.
func (cl *client) heartbeatOrRejoin() {
	cl.e.t.Helper()
	_, err := cl.heartbeat()
	if errors.Is(err, ErrFencedMemberEpoch) || errors.Is(err, ErrUnknownMember) {
		cl.owned, cl.epoch = map[TopicID][]int32{}, JoinEpoch
		_, err = cl.heartbeat()
	}
	require.NoError(cl.e.t, err, "member %s", cl.id)
}

// TestConsumerGroupCrashes: the group's records are not fsynced, so a
// power loss in the middle of a reconciliation brings back an older
// state. At every step of one (a member joins, another revokes, the
// partitions move), the directory as a crash would leave it is opened
// again and the clients carry on with what they had: those the
// coordinator no longer knows at their epoch are fenced and rejoin owning
// nothing, and no partition is ever owned by two clients at once; the
// group settles again.
func TestConsumerGroupCrashes(t *testing.T) {
	base := newConsumerEnv(t, map[string]int32{"t": 4})
	mem := base.fs.(*vfs.MemFS)
	a, b := base.newClient("g", "a", "t"), base.newClient("g", "b", "t")
	a.mustHeartbeat()
	settle(t, a)
	steps := []func(){b.heartbeatOrRejoin, a.heartbeatOrRejoin, b.heartbeatOrRejoin, a.heartbeatOrRejoin, b.heartbeatOrRejoin}
	for i, step := range steps {
		step()
		requireNoPartitionTwice(t, a, b)
		t.Run(fmt.Sprintf("crash after step %d", i), func(t *testing.T) {
			e := &consumerEnv{t: t, fs: mem.CrashClone(), clock: base.clock, cfg: base.cfg}
			e.cfg.FS = e.fs
			e.open()
			ca, cb := *a, *b
			ca.e, cb.e = e, e
			ca.owned, cb.owned = maps.Clone(a.owned), maps.Clone(b.owned)
			clients := []*client{&ca, &cb}
			for range 10 {
				for _, cl := range clients {
					cl.heartbeatOrRejoin()
					requireNoPartitionTwice(t, clients...)
				}
			}
			d, err := e.c.DescribeConsumerGroup("g")
			require.NoError(t, err)
			require.Equal(t, StateStable, d.State)
			require.Equal(t, 2, ca.count())
			require.Equal(t, 2, cb.count())
		})
	}
}
