package consumer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/log"
)

// TestCaughtUp: PartitionsFor lists a topic's partitions, and CaughtUp
// says whether the consumer read up to the end offsets taken when it
// looked: false while a partition is unassigned (a group still joining)
// or behind, true once every position reached its end; records appended
// after the look do not move the goal. Three examples wrote this check
// themselves.
func TestCaughtUp(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 3)
	for p := range int32(3) {
		e.produce("t", p, 10+int(p))
	}
	c := groupConsumer(e, assignor.Range())
	tps, err := c.PartitionsFor("t")
	require.NoError(t, err)
	require.Equal(t, []TopicPartition{tp("t", 0), tp("t", 1), tp("t", 2)}, tps)
	_, err = c.PartitionsFor("missing")
	require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)

	ends, err := c.EndOffsets(tps)
	require.NoError(t, err)
	done, err := c.CaughtUp(ends)
	require.NoError(t, err)
	require.False(t, done, "not assigned yet")

	require.NoError(t, c.Subscribe([]string{"t"}, nil))
	got := 0
	for {
		done, err := c.CaughtUp(ends)
		require.NoError(t, err)
		if done {
			break
		}
		recs, err := c.Poll(context.Background())
		require.NoError(t, err)
		for _, r := range recs {
			if r.Offset < ends[tp(r.Topic, r.Partition)] {
				got++
			}
		}
		if got > 0 && got < 33 {
			done, err := c.CaughtUp(ends)
			require.NoError(t, err)
			require.False(t, done, "behind after %d of 33 records", got)
		}
		e.produce("t", 0, 1) // past the ends looked at: not waited for
	}
	require.Equal(t, 33, got)
	done, err = c.CaughtUp(map[TopicPartition]int64{tp("t", 0): 1 << 40})
	require.NoError(t, err)
	require.False(t, done)
}

// TestGroupMetadataNamesTheInstance: GroupMetadata carries
// group.instance.id (it was always empty), as Kafka's ConsumerGroupMetadata
// does, so that SendOffsetsToTransaction fences a static member's zombies.
func TestGroupMetadataNamesTheInstance(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	c := e.consumer(func(c *Config) { c.GroupID, c.GroupInstanceID = "g", "instance-1" })
	require.Equal(t, "instance-1", c.GroupMetadata().GroupInstanceID)
	require.Equal(t, "g", c.GroupMetadata().GroupID)
}

// TestClosedDirIsClosedConsumer: once the consumer's Dir is closed, Poll
// and CommitSync fail with an error matching both consumer.ErrClosed and
// log.ErrClosed.
func TestClosedDirIsClosedConsumer(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 3)
	c := e.consumer(func(c *Config) { c.GroupID = "g" })
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	pollN(t, c, 3)
	require.NoError(t, e.dir.Close())
	_, err := c.Poll(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, log.ErrClosed)
	err = c.CommitSync(context.Background(), nil)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, log.ErrClosed)
}
