package server_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// capped is a client whose requests of each key go no higher than caps
// says.
func capped(t *testing.T, addr string, caps map[kmsg.Key]int16) *kgo.Client {
	t.Helper()
	vs := kversion.Stable()
	for k, v := range caps {
		vs.SetMaxKeyVersion(k.Int16(), v)
	}
	return client(t, addr, kgo.MaxVersions(vs))
}

// TestApiVersionsFeatures: ApiVersions v3+ reports transaction.version
// finalized at 2 (the level that turns Kafka's clients to transactions
// version 2), group.version and share.version, with Kafka 4.4's ranges;
// v3 leaves out the supported ranges starting at 0, as Kafka does.
func TestApiVersionsFeatures(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	for _, v := range []int16{3, 4} {
		cl := capped(t, srv.Addr, map[kmsg.Key]int16{kmsg.ApiVersions: v})
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "kafkalite-test", "1"
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Equal(t, v, resp.GetVersion())
		finalized := map[string]int16{}
		for _, f := range resp.FinalizedFeatures {
			require.Equal(t, f.MinVersionLevel, f.MaxVersionLevel, f.Name)
			finalized[f.Name] = f.MaxVersionLevel
		}
		require.Equal(t, map[string]int16{"transaction.version": 2, "group.version": 1, "share.version": 1}, finalized)
		require.GreaterOrEqual(t, resp.FinalizedFeaturesEpoch, int64(0))
		supported := map[string][2]int16{}
		for _, f := range resp.SupportedFeatures {
			supported[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
		}
		if v == 3 {
			require.Empty(t, supported, "v3 leaves out ranges from 0")
		} else {
			require.Equal(t, map[string][2]int16{"transaction.version": {0, 2}, "group.version": {0, 1}, "share.version": {0, 1}}, supported)
		}
	}
}

// TestTransactionsV2Wire: transactions version 2 request by request:
// Produce v12+ adds partitions to the transaction itself, EndTxn v5 bumps
// the epoch and returns it (a retry gets the same answer; a version 1
// EndTxn of the old epoch is fenced), TxnOffsetCommit v5 adds the group's
// partition; the markers carry the bumped epoch; KIP-890 part 1's
// verification answers each version as Kafka does.
func TestTransactionsV2Wire(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "tx", 3)
	ctx := context.Background()
	const id = "tx-v2"
	pid, epoch := initTxn(t, cl, id)

	// Produce v13 without AddPartitionsToTxn.
	require.Zero(t, produceCode(t, cl, id, "tx", 0, txnBatch(t, pid, epoch, 0, 2)))
	require.Zero(t, produceCode(t, cl, id, "tx", 1, txnBatch(t, pid, epoch, 0, 3)))
	require.Equal(t, int16(47), produceCode(t, cl, id, "tx", 2, txnBatch(t, pid, epoch+1, 0, 1)), "INVALID_PRODUCER_EPOCH: not the producer's epoch")
	describe := func() kmsg.DescribeTransactionsResponseTransactionState {
		dt := kmsg.NewPtrDescribeTransactionsRequest()
		dt.TransactionalIDs = []string{id}
		dresp, err := dt.RequestWith(ctx, cl)
		require.NoError(t, err)
		return dresp.TransactionStates[0]
	}
	st := describe()
	require.Equal(t, "Ongoing", st.State)
	require.Len(t, st.Topics, 1)
	require.Equal(t, []int32{0, 1}, st.Topics[0].Partitions)

	endTxn := func(cl *kgo.Client, epoch int16, commit bool) *kmsg.EndTxnResponse {
		end := kmsg.NewPtrEndTxnRequest()
		end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, commit
		eresp, err := end.RequestWith(ctx, cl)
		require.NoError(t, err)
		return eresp
	}
	eresp := endTxn(cl, epoch, true)
	require.Zero(t, eresp.ErrorCode)
	require.Equal(t, pid, eresp.ProducerID)
	require.Equal(t, epoch+1, eresp.ProducerEpoch, "EndTxn v5 returns the bumped epoch")
	for p := range int32(2) {
		l, err := srv.Dir.Partition("tx", p)
		require.NoError(t, err)
		require.Equal(t, l.LogEndOffset(), l.LastStableOffset())
		for _, ps := range l.Producers() {
			require.Equal(t, epoch+1, ps.ProducerEpoch, "tx-%d's marker carries the bumped epoch", p)
		}
	}
	retry := endTxn(cl, epoch, true)
	require.Zero(t, retry.ErrorCode, "a retried EndTxn v5 succeeds")
	require.Equal(t, epoch+1, retry.ProducerEpoch)
	v1 := capped(t, srv.Addr, map[kmsg.Key]int16{kmsg.EndTxn: 4, kmsg.Produce: 10, kmsg.TxnOffsetCommit: 3})
	require.Equal(t, int16(90), endTxn(v1, epoch, true).ErrorCode, "PRODUCER_FENCED: a version 1 EndTxn of the epoch before the bump")
	require.Equal(t, int16(48), endTxn(cl, epoch, false).ErrorCode, "INVALID_TXN_STATE: the retry of the other result")

	// The next transaction, at the bumped epoch, with the group's offsets
	// (TxnOffsetCommit v5 without AddOffsetsToTxn), aborted.
	epoch++
	require.Zero(t, produceCode(t, cl, id, "tx", 0, txnBatch(t, pid, epoch, 0, 4)), "sequences start again at 0")
	commitOffsets := func(cl *kgo.Client, epoch int16) int16 {
		return txnCommitCode(t, cl, id, "g", pid, epoch, "tx", 0, 3)
	}
	require.Zero(t, commitOffsets(cl, epoch))
	eresp = endTxn(cl, epoch, false)
	require.Zero(t, eresp.ErrorCode)
	require.Equal(t, epoch+1, eresp.ProducerEpoch)
	epoch++
	require.Len(t, consume(t, srv.Addr, "tx", 5, kgo.FetchIsolationLevel(kgo.ReadCommitted())), 5, "the committed transaction's records only")
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = "g"
	fresp, err := fetch.RequestWith(ctx, cl)
	require.NoError(t, err)
	for _, ft := range fresp.Topics {
		for _, fp := range ft.Partitions {
			require.Equal(t, int64(-1), fp.Offset, "the aborted transaction's offsets")
		}
	}

	// Version 1 requests: a partition or group not added is refused,
	// INVALID_TXN_STATE before the versions that know
	// TRANSACTION_ABORTABLE (Produce v11, TxnOffsetCommit v4), which get it.
	require.Equal(t, int16(48), produceCode(t, v1, id, "tx", 2, txnBatch(t, pid, epoch, 0, 1)))
	v11 := capped(t, srv.Addr, map[kmsg.Key]int16{kmsg.Produce: 11, kmsg.TxnOffsetCommit: 4})
	require.Equal(t, int16(120), produceCode(t, v11, id, "tx", 2, txnBatch(t, pid, epoch, 0, 1)))
	require.Equal(t, int16(48), commitOffsets(v1, epoch))
	require.Equal(t, int16(120), commitOffsets(v11, epoch))
	require.Equal(t, "CompleteAbort", describe().State, "nothing joined the transaction")
}

// TestKgoTransactionsV2: franz-go uses transactions version 2 when the
// broker finalizes transaction.version 2 (ApiVersions v3+, which it reads
// before its first transaction): every transaction's end bumps the epoch.
func TestKgoTransactionsV2(t *testing.T) {
	srv := servertest.Start(t, nil)
	admin := client(t, srv.Addr)
	createTopic(t, admin, "tx", 2)
	ctx := context.Background()
	prod := client(t, srv.Addr, kgo.TransactionalID("kgo-v2"), kgo.ProducerLinger(0))
	var epochs []int16
	for i := range 4 {
		require.NoError(t, prod.BeginTransaction())
		for p := range int32(2) {
			require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "tx", Partition: p, Value: []byte{byte(i)}}).FirstErr())
		}
		require.NoError(t, prod.EndTransaction(ctx, kgo.TransactionEndTry(i%2 == 0)))
		dt := kmsg.NewPtrDescribeTransactionsRequest()
		dt.TransactionalIDs = []string{"kgo-v2"}
		dresp, err := dt.RequestWith(ctx, admin)
		require.NoError(t, err)
		epochs = append(epochs, dresp.TransactionStates[0].ProducerEpoch)
	}
	require.Equal(t, []int16{1, 2, 3, 4}, epochs, "a bump at every end")
	require.Len(t, consume(t, srv.Addr, "tx", 4, kgo.FetchIsolationLevel(kgo.ReadCommitted())), 4)
}
