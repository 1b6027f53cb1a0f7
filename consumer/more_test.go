package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

// TestEachAssignorSurvivesJoinAndLeave: with every assignor, members
// joining and leaving never leave a partition owned twice, and the group
// settles with every partition owned once and spread evenly. Cooperative
// rebalances pass through states where a partition is unowned or one
// member still holds more than its share (it has not yet handled its
// revocation), so balance is checked once the group settles, and the
// no-two-owners rule at every step. Range balances each topic on its own
// (topic b's 5 partitions over 2 members are 3 and 2, topic a's 3 are 2
// and 1), so over both topics its members may differ by more than one.
func TestEachAssignorSurvivesJoinAndLeave(t *testing.T) {
	const partitions = 8 // topic a has 3, topic b 5
	for _, strategy := range []assignor.Assignor{assignor.Range(), assignor.RoundRobin(), assignor.Sticky(), assignor.CooperativeSticky()} {
		t.Run(strategy.Name(), func(t *testing.T) {
			e := newEnv(t)
			e.topic("a", 3)
			e.topic("b", 5)
			var members []*Consumer
			settled := func() bool {
				seen := map[TopicPartition]int{}
				most, least := 0, partitions
				for _, c := range members {
					n := len(c.Assignment())
					most, least = max(most, n), min(least, n)
					for _, tp := range c.Assignment() {
						seen[tp]++
						require.Equal(t, 1, seen[tp], "%v owned by two members at once", tp)
					}
				}
				balanced := most-least <= 1 || strategy.Name() == "range"
				return len(seen) == partitions && least > 0 && balanced
			}
			for range 3 {
				c := groupConsumer(e, strategy)
				require.NoError(t, c.Subscribe([]string{"a", "b"}, nil))
				members = append(members, c)
				pollUntil(t, members, settled)
			}
			for _, c := range members {
				require.LessOrEqual(t, len(c.Assignment()), 3, "balanced: 8 partitions over 3 members")
			}
			require.NoError(t, members[0].Close(context.Background()))
			members = members[1:]
			pollUntil(t, members, settled)
			if strategy.Name() != "range" {
				for _, c := range members {
					require.Len(t, c.Assignment(), 4, "balanced: 8 partitions over 2 members")
				}
			}
		})
	}
}

// TestStalledMemberLosesPartitions: a member that stops calling Poll for
// max.poll.interval.ms leaves the group; its partitions go to the others,
// and its next Poll reports them lost and rejoins.
func TestStalledMemberLosesPartitions(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 2)
	a := groupConsumer(e, assignor.Range())
	b := groupConsumer(e, assignor.Range(), func(c *Config) {
		c.HeartbeatInterval, c.SessionTimeout, c.MaxPollInterval = 5*time.Millisecond, 10*time.Second, 150*time.Millisecond
	})
	lb := &recordingListener{}
	require.NoError(t, a.Subscribe([]string{"t"}, nil))
	require.NoError(t, b.Subscribe([]string{"t"}, lb))
	pollUntil(t, []*Consumer{a, b}, func() bool { return len(a.Assignment()) == 1 && len(b.Assignment()) == 1 })
	// b stops polling; a keeps going and gets everything.
	pollUntil(t, []*Consumer{a}, func() bool { return len(a.Assignment()) == 2 })
	pollUntil(t, []*Consumer{a, b}, func() bool { return len(a.Assignment()) == 1 && len(b.Assignment()) == 1 })
	lb.mu.Lock()
	defer lb.mu.Unlock()
	require.NotEmpty(t, lb.lost, "the stalled member was told its partitions were lost")
}

// TestCommitsSurviveCrash: a CommitSync that returned is durable.
func TestCommitsSurviveCrash(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 30)
	c := e.consumer(func(c *Config) { c.GroupID = "g" })
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	pollN(t, c, 30)
	require.NoError(t, c.CommitSync(context.Background(), nil))

	crashed := e.mem.CrashClone() // a power loss now; the Dir is never closed
	cfg := e.cfg
	cfg.FS = crashed
	d, err := log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	defer d.Close()
	require.False(t, d.Recovery().Clean)
	ccfg := DefaultConfig()
	ccfg.GroupID = "g"
	c2, err := New(d, ccfg)
	require.NoError(t, err)
	defer c2.Close(context.Background())
	committed, err := c2.Committed([]TopicPartition{tp("t", 0)})
	require.NoError(t, err)
	require.Equal(t, int64(30), committed[tp("t", 0)].Offset)
}

// TestOffsetsExpire: an empty group's offsets go after
// offsets.retention.minutes.
func TestOffsetsExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := &env{t: t}
	e.mem = newMemFS()
	e.cfg = log.DefaultConfig()
	e.cfg.FS = e.mem
	e.cfg.OffsetsTopicNumPartitions = 1
	e.cfg.OffsetsRetention = time.Hour
	e.cfg.Now = clock
	e.open()
	t.Cleanup(func() { _ = e.dir.Close() })
	e.topic("t", 1)
	c := e.consumer(func(c *Config) { c.GroupID = "g"; c.Now = clock })
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	require.NoError(t, c.CommitSync(context.Background(), map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 0, LeaderEpoch: -1}}))
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	require.Eventually(t, func() bool {
		got, err := c.Committed([]TopicPartition{tp("t", 0)})
		return err == nil && len(got) == 0
	}, 5*time.Second, 5*time.Millisecond)
}

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 10)
	c := e.consumer(func(c *Config) { c.AutoOffsetReset = OffsetResetNone; c.GroupID = "g" })
	require.ErrorIs(t, c.Assign([]TopicPartition{tp("missing", 0)}), log.ErrUnknownTopicOrPartition)
	require.ErrorIs(t, c.Assign([]TopicPartition{tp("t", 1)}), log.ErrUnknownTopicOrPartition)
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	require.ErrorIs(t, c.Subscribe([]string{"t"}, nil), ErrIllegalState)

	// A position beyond the log: a typed error under none, a reset otherwise.
	require.NoError(t, c.Seek(tp("t", 0), 500))
	_, err := c.Poll(context.Background())
	require.ErrorIs(t, err, log.ErrOffsetOutOfRange)
	reset := e.consumer(func(c *Config) { c.AutoOffsetReset = OffsetResetEarliest })
	require.NoError(t, reset.Assign([]TopicPartition{tp("t", 0)}))
	require.NoError(t, reset.Seek(tp("t", 0), 500))
	recs := pollN(t, reset, 10)
	require.Equal(t, int64(0), recs[0].Offset)

	noGroup := e.consumer(nil)
	require.ErrorIs(t, noGroup.Subscribe([]string{"t"}, nil), ErrNoGroup)
	_, err = noGroup.Committed(nil)
	require.ErrorIs(t, err, ErrNoGroup)

	require.NoError(t, reset.Close(context.Background()))
	_, err = reset.Poll(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, reset.Close(context.Background()), "a second Close returns nil")
}

func TestStatsAndResetVariants(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 20)
	c := e.consumer(func(c *Config) { c.GroupID = "g" })
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	pollN(t, c, 12) // all 20 come in one poll, so positions and lag are exact after it
	require.NoError(t, c.CommitSync(context.Background(), nil))
	st := c.Stats()
	require.Equal(t, int64(20), st.Records)
	require.Positive(t, st.Bytes)
	require.Equal(t, int64(1), st.Commits)
	require.Positive(t, st.CommitLatencyAvg)
	require.Zero(t, st.Lag[tp("t", 0)])
	e.produce("t", 0, 5)
	require.Equal(t, int64(5), c.Stats().Lag[tp("t", 0)])

	for _, tc := range []struct {
		to   ResetTo
		want int64
	}{
		{ResetToEarliest(), 0},
		{ResetToLatest(), 25},
		{ResetToDuration(time.Hour), 0}, // every record is younger
		{ResetToOffset(10), 10},
		{ResetToOffset(7), 7},
		{ResetToOffset(3), 3},
		{ResetToOffset(0), 0},
		{ResetToOffset(1000), 25}, // clamped to the log
		{ResetToTimestamp(0), 0},
	} {
		got, err := ResetOffsets(context.Background(), e.dir, "g", []TopicPartition{tp("t", 0)}, tc.to)
		require.NoError(t, err, tc.to.String())
		require.Equal(t, tc.want, got[tp("t", 0)], tc.to.String())
		committed, err := c.Committed([]TopicPartition{tp("t", 0)})
		require.NoError(t, err)
		require.Equal(t, tc.want, committed[tp("t", 0)].Offset, tc.to.String())
	}

	// A ResetTo that says nothing, or a negative place, is refused and
	// changes nothing. (ResetTo{Offset: 3} reset the group to 0: the
	// zero Timestamp was taken as "by timestamp 0"; ResetTo{} meant 0.)
	for _, bad := range []ResetTo{{}, ResetToOffset(-1), ResetToTimestamp(-5), ResetToDuration(-time.Second)} {
		_, err := ResetOffsets(context.Background(), e.dir, "g", []TopicPartition{tp("t", 0)}, bad)
		require.ErrorIs(t, err, ErrInvalidReset, bad.String())
		committed, err := c.Committed([]TopicPartition{tp("t", 0)})
		require.NoError(t, err)
		require.Equal(t, int64(0), committed[tp("t", 0)].Offset, "a refused reset changes nothing")
	}
}

// TestInitialRebalanceDelay: with group.initial.rebalance.delay.ms, a new
// group's first rebalance waits for more members before assigning.
func TestInitialRebalanceDelay(t *testing.T) {
	e := newEnv(t)
	e.cfg.GroupInitialRebalanceDelay = 300 * time.Millisecond
	e.reopen()
	e.topic("t", 2)
	a := groupConsumer(e, assignor.Range())
	b := groupConsumer(e, assignor.Range())
	require.NoError(t, a.Subscribe([]string{"t"}, nil))
	require.NoError(t, b.Subscribe([]string{"t"}, nil))
	start := time.Now()
	pollUntil(t, []*Consumer{a, b}, func() bool { return len(a.Assignment()) == 1 && len(b.Assignment()) == 1 })
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	_, gen := a.group.identity()
	require.Equal(t, int32(1), gen, "both members made the first generation: no rebalance in between")
}
