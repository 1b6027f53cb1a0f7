package consumer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

// TestPollReadsAgainAfterCutUnderRead truncates the log between a fetch's
// Log.Fetch and the copy of its bytes (a replica's TruncateTo racing a
// consumer), so that the copy fails with log.ErrCutUnderRead: Poll reads
// again what the log holds now, returns no record of the removed batch, and
// later returns the records written in its place. Every codec.
func TestPollReadsAgainAfterCutUnderRead(t *testing.T) {
	matrix.Run(t, matrix.Codecs, testPollReadsAgainAfterCutUnderRead)
}

func testPollReadsAgainAfterCutUnderRead(t *testing.T, mc matrix.Case) {
	e := newEnvFor(t, mc)
	e.topic("t", 1)
	l, err := e.dir.Partition("t", 0)
	require.NoError(t, err)
	kv := func(prefix string) func(i int) ([]byte, []byte) {
		return func(i int) ([]byte, []byte) { return []byte(fmt.Sprint(i)), []byte(fmt.Sprintf("%s%d", prefix, i)) }
	}
	require.NoError(t, appendRecords(l, e.codec, 20, 10, kv("old"))) // batches 0-9 and 10-19

	cuts := 0
	testHookAfterRead = func(hl *log.Log) {
		if hl == l && cuts == 0 {
			cuts++
			require.NoError(t, l.TruncateTo(10)) // the second batch goes from under the slice
		}
	}
	t.Cleanup(func() { testHookAfterRead = nil })

	c := e.consumer(nil)
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	first := pollN(t, c, 10)
	require.Equal(t, 1, cuts, "the hook cut the log under a read")
	for i, r := range first {
		require.Equal(t, int64(i), r.Offset)
		require.Equal(t, fmt.Sprintf("old%d", i), string(r.Value))
	}
	pos, err := c.Position(tp("t", 0))
	require.NoError(t, err)
	require.Equal(t, int64(10), pos, "nothing past the truncation")

	// What is written in the removed batch's place is what the consumer
	// reads next.
	require.NoError(t, appendRecords(l, e.codec, 10, 10, kv("new")))
	next := pollN(t, c, 10)
	for i, r := range next {
		require.Equal(t, int64(10+i), r.Offset)
		require.Equal(t, fmt.Sprintf("new%d", i), string(r.Value))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	more, err := c.Poll(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, more)
}
