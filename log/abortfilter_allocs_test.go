package log

import (
	"context"
	"fmt"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestAbortFilterResetReusesItsSlices: a read_committed Fetch appends its
// aborted transactions to the slice it is given (FetchParams.AbortedTxns,
// from [:0]), and a read_committed fetch's AbortFilter.Reset, once its
// slices have grown, allocates nothing (the .txnindex scan reads into a
// pooled buffer). The allocation count is checked without -race, whose
// sync.Pool drops items at random.
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

	all, err := l.AbortedTransactions(0, lso)
	require.NoError(t, err)
	require.Len(t, all, 5, "the five aborted transactions")
	buf := make([]index.AbortedTxn, 1, 8)
	buf[0] = index.AbortedTxn{ProducerID: 99}
	res, err := l.Fetch(context.Background(), FetchParams{Offset: 0, MaxBytes: 1 << 20, MinOneBatch: true, Isolation: ReadCommitted, AbortedTxns: buf})
	require.NoError(t, err)
	res.Release()
	require.Equal(t, all, res.AbortedTransactions, "the fetch's, from buf[:0]")
	require.Same(t, &buf[0], &res.AbortedTransactions[0], "in buf")

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
