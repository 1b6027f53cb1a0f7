package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestTransactions: a franz-go transactional producer commits one
// transaction and aborts another over two partitions; a read_committed
// consumer sees only the committed records, a read_uncommitted one all of
// them; DescribeTransactions and ListTransactions show the id; a second
// producer with the same transactional id fences the first.
func TestTransactions(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := client(t, srv.Addr)
	createTopic(t, admin, "tx", 2)
	ctx := context.Background()
	prod := client(t, srv.Addr, kgo.TransactionalID("tx-1"), kgo.ProducerLinger(0))
	send := func(commit bool, prefix string) {
		require.NoError(t, prod.BeginTransaction())
		for i := range 10 {
			prod.Produce(ctx, &kgo.Record{Topic: "tx", Partition: int32(i % 2), Value: fmt.Appendf(nil, "%s%d", prefix, i)}, nil)
		}
		require.NoError(t, prod.Flush(ctx))
		require.NoError(t, prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)))
	}
	send(true, "c")
	send(false, "a")
	send(true, "d")

	values := func(rs []*kgo.Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, string(r.Value))
		}
		slices.Sort(out)
		return out
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("c%d", i), fmt.Sprintf("d%d", i))
	}
	slices.Sort(want)
	require.Equal(t, want, values(consume(t, srv.Addr, "tx", 20, kgo.FetchIsolationLevel(kgo.ReadCommitted()))))
	all := values(consume(t, srv.Addr, "tx", 30))
	require.Len(t, all, 30, "read_uncommitted sees the aborted records too")

	// The coordinator's view.
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"tx-1"}
	dresp, err := dt.RequestWith(ctx, admin)
	require.NoError(t, err)
	require.Zero(t, dresp.TransactionStates[0].ErrorCode)
	require.Equal(t, "CompleteCommit", dresp.TransactionStates[0].State)
	lt := kmsg.NewPtrListTransactionsRequest()
	lresp, err := lt.RequestWith(ctx, admin)
	require.NoError(t, err)
	require.Len(t, lresp.TransactionStates, 1)
	require.Equal(t, "tx-1", lresp.TransactionStates[0].TransactionalID)

	// A new producer with the same id fences the old one.
	other := client(t, srv.Addr, kgo.TransactionalID("tx-1"), kgo.ProducerLinger(0))
	require.NoError(t, other.BeginTransaction())
	require.NoError(t, other.ProduceSync(ctx, &kgo.Record{Topic: "tx", Value: []byte("new")}).FirstErr())
	require.NoError(t, other.EndTransaction(ctx, kgo.TryCommit))
	require.NoError(t, prod.BeginTransaction())
	err = prod.ProduceSync(ctx, &kgo.Record{Topic: "tx", Value: []byte("old")}).FirstErr()
	if err == nil {
		err = prod.EndTransaction(ctx, kgo.TryCommit)
	}
	require.Error(t, err, "the fenced producer cannot commit")
}

// TestTransactionalOffsets: a consume-transform-produce loop with
// franz-go's GroupTransactSession: the group's offsets are committed in
// the transaction, and the output topic holds each input record once.
func TestTransactionalOffsets(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := client(t, srv.Addr, kgo.ProducerLinger(0))
	createTopic(t, admin, "in", 2)
	createTopic(t, admin, "out", 1)
	ctx := context.Background()
	const n = 50
	for i := range n {
		require.NoError(t, admin.ProduceSync(ctx, &kgo.Record{Topic: "in", Value: fmt.Appendf(nil, "%d", i)}).FirstErr())
	}
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(srv.Addr), kgo.TransactionalID("etl"), kgo.ConsumerGroup("etl"),
		kgo.ConsumeTopics("in"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ProducerLinger(0))
	require.NoError(t, err)
	defer sess.Close()
	done := 0
	for done < n {
		fs := sess.PollFetches(ctx)
		require.NoError(t, fs.Err())
		require.NoError(t, sess.Begin())
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Topic: "out", Value: append([]byte("x"), r.Value...)}, nil)
			done++
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		require.NoError(t, err)
		require.True(t, committed)
	}
	out := consume(t, srv.Addr, "out", n, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	require.Len(t, out, n)
	// The group's committed offsets cover the input.
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = "etl"
	resp, err := fetch.RequestWith(ctx, admin)
	require.NoError(t, err)
	var total int64
	for _, tpc := range resp.Topics {
		for _, p := range tpc.Partitions {
			total += p.Offset
		}
	}
	require.Equal(t, int64(n), total)
}
