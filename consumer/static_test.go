package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/stretchr/testify/require"
)

// TestStaticMemberInProcess pins what Config.GroupInstanceID's doc says of
// an in-process consumer: the instance id is shown by DescribeGroup and
// GroupMetadata; a second consumer with the instance id of a member
// still in the group does not take its place (its Poll fails with the
// fenced-instance error, the member keeps its partitions); once the member
// has closed, which leaves the group, the second joins as a new member,
// with a rebalance.
func TestStaticMemberInProcess(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 4)
	static := func() *Consumer {
		return groupConsumer(e, assignor.Range(), func(c *Config) { c.GroupInstanceID = "worker-1" })
	}
	first := static()
	require.NoError(t, first.Subscribe([]string{"t"}, nil))
	pollUntil(t, []*Consumer{first}, func() bool { return len(first.Assignment()) == 4 })
	md := first.GroupMetadata()
	require.Equal(t, "worker-1", md.GroupInstanceID)
	d, err := DescribeGroup(context.Background(), e.dir, "g")
	require.NoError(t, err)
	require.Len(t, d.Members, 1)
	require.Equal(t, "worker-1", d.Members[0].InstanceID)

	second := static()
	require.NoError(t, second.Subscribe([]string{"t"}, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err = second.Poll(ctx)
	cancel()
	require.ErrorIs(t, err, ErrFencedInstanceID)
	require.Empty(t, second.Assignment())
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = first.Poll(ctx) // a rebalance, had one started, would show here
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, first.Assignment(), 4, "the member keeps its partitions")
	require.Equal(t, md, first.GroupMetadata(), "no rebalance")

	require.NoError(t, first.Close(context.Background()))
	pollUntil(t, []*Consumer{second}, func() bool { return len(second.Assignment()) == 4 })
	again := second.GroupMetadata()
	require.NotEqual(t, md.MemberID, again.MemberID, "a new member")
	require.Greater(t, again.GenerationID, md.GenerationID, "a rebalance")
}
