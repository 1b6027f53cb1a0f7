package log

import (
	"fmt"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestAbortFilterResetReusesItsSlices: AppendAbortedTransactions appends
// to the slice it is given, and a read_committed fetch's AbortFilter.Reset,
// once its slices have grown, allocates nothing (the .txnindex scan reads
// into a pooled buffer). The allocation count is checked without -race,
// whose sync.Pool drops items at random.
func TestAbortFilterResetReusesItsSlices(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	t.Cleanup(func() { _ = d.Close() })
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	in := access.Internal{}
	ts := e.clock.Now().UnixMilli()
	for i := range 10 {
		require.NoError(t, l.VerifyTransaction(in, 7, 0))
		_, err := l.Append(txnRecordBatch(t, 7, int32(i), ts, "k", fmt.Sprint(i)))
		require.NoError(t, err)
		typ := record.ControlAbort
		if i%2 == 0 {
			typ = record.ControlCommit
		}
		_, err = l.AppendTxnMarker(in, 7, 0, record.EndTxnMarker{Type: typ})
		require.NoError(t, err)
	}
	lso := l.LastStableOffset()

	prefix := []index.AbortedTxn{{ProducerID: 99}}
	got, err := l.AppendAbortedTransactions(prefix, 0, lso)
	require.NoError(t, err)
	require.Len(t, got, 6, "the prefix and the five aborted transactions")
	require.Equal(t, prefix[0], got[0])
	all, err := l.AbortedTransactions(0, lso)
	require.NoError(t, err)
	require.Equal(t, all, got[1:])

	var f AbortFilter
	require.NoError(t, f.Reset(l, 0, lso))
	if raceEnabled {
		return
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := f.Reset(l, 0, lso); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
