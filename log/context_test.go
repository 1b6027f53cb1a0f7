package log

import (
	"context"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestDoneContextChangesNothing: the Dir's and Log's calls that can block
// on an fsync return a done context's error at once and change nothing
// (DESIGN.md, Contexts).
func TestDoneContextChangesNothing(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	_, err := l.Append(producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	done, cancel := context.WithCancel(context.Background())
	cancel()

	segments := len(l.local.segs())
	require.ErrorIs(t, l.Roll(done), context.Canceled)
	require.Len(t, l.local.segs(), segments, "Roll rolled nothing")
	require.ErrorIs(t, l.Flush(done), context.Canceled)

	_, err = d.AllocateProducerID(done)
	require.ErrorIs(t, err, context.Canceled)
	first, err := d.AllocateProducerID(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(0), first, "the cancelled call allocated no id")

	_, err = d.AlterTopicConfig(done, "t", map[string]string{"retention.ms": "1000"})
	require.ErrorIs(t, err, context.Canceled)
	desc, err := d.DescribeTopic("t")
	require.NoError(t, err)
	require.Empty(t, desc.Overrides, "AlterTopicConfig changed nothing")

	require.ErrorIs(t, d.DeleteTopic(done, "t"), context.Canceled)
	require.Equal(t, []string{"t"}, d.Topics(), "DeleteTopic deleted nothing")

	require.NoError(t, l.Roll(context.Background()))
	require.Len(t, l.local.segs(), segments+1)
	require.NoError(t, l.Flush(context.Background()))
}
