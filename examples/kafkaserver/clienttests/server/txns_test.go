package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/record"
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

// txnV1Versions caps the requests that transactions version 2 changes
// below their version 2 forms (Produce v12, TxnOffsetCommit v5, EndTxn v5).
func txnV1Versions() *kversion.Versions {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.Produce.Int16(), 10)
	vs.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), 4)
	vs.SetMaxKeyVersion(kmsg.EndTxn.Int16(), 4)
	return vs
}

// txnCommitCode sends a TxnOffsetCommit of offset for topic-p in
// group's name by producer pid at epoch and returns the partition's error
// code.
func txnCommitCode(t *testing.T, cl *kgo.Client, txnID, group string, pid int64, epoch int16, topic string, p int32, offset int64) int16 {
	t.Helper()
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = txnID, group, pid, epoch
	ct := kmsg.NewTxnOffsetCommitRequestTopic()
	ct.Topic = topic
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = append(md.Topics, mt)
	mresp, err := md.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	ct.TopicID = mresp.Topics[0].TopicID // v6 names the topic by id
	cp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset = p, offset
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	cresp, err := commit.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return cresp.Topics[0].Partitions[0].ErrorCode
}

// initTxn sends an InitProducerId for txnID (a 60 s timeout) and returns
// the producer id and epoch.
func initTxn(t *testing.T, cl *kgo.Client, txnID string) (int64, int16) {
	t.Helper()
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60_000
	iresp, err := init.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	require.Zero(t, iresp.ErrorCode)
	return iresp.ProducerID, iresp.ProducerEpoch
}

// txnBatch is a transactional batch of n records of producer pid at
// epoch, with base sequence seq.
func txnBatch(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
		Attributes: record.Attributes(0).WithTransactional(true)}, record.DefaultLevel)
	for i := range n {
		require.NoError(t, b.Append(time.Now().UnixMilli(), nil, fmt.Appendf(nil, "v%d", i), nil))
	}
	batch, err := b.Build()
	require.NoError(t, err)
	return batch
}

// produceCode sends one batch to topic-p with acks=all and returns the
// partition's error code.
func produceCode(t *testing.T, cl *kgo.Client, txnID, topic string, p int32, batch []byte) int16 {
	t.Helper()
	return produceAcks(t, cl, txnID, -1, topic, p, batch)
}

// produceAcks sends one batch to topic-p (topic named by its id, as v13
// does; a transactional id unless txnID is empty) with acks and returns
// the partition's error code.
func produceAcks(t *testing.T, cl *kgo.Client, txnID string, acks int16, topic string, p int32, batch []byte) int16 {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, 10_000
	if txnID != "" {
		req.TransactionID = &txnID
	}
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, mresp.Topics[0].TopicID // v13 names it by id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = p, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// TestOpenTransactionAcrossRestart: a transactional producer that added
// two partitions (one of them without a batch yet) and a group's offsets
// to its transaction carries it on across a restart of the server, or a
// power loss, as across a Kafka broker's restart: the partition without a
// batch takes its first one, the offsets are committed after the restart,
// and the transaction commits whole (every partition's last stable offset
// moves to its end; a read_committed consumer sees every record). A
// partition never added refuses a transactional batch with
// INVALID_TXN_STATE, Kafka's answer. The requests are transactions
// version 1's (Produce v10, TxnOffsetCommit v4, EndTxn v4), which add
// partitions explicitly.
func TestOpenTransactionAcrossRestart(t *testing.T) {
	for _, recovery := range []string{"restart", "power loss"} {
		t.Run(recovery, func(t *testing.T) {
			srv := servertest.StartInMemory(t, nil)
			cl := client(t, srv.Addr, kgo.RequestRetries(20), kgo.MaxVersions(txnV1Versions()))
			createTopic(t, cl, "tx", 3)
			ctx := context.Background()
			const id = "tx-restart"
			pid, epoch := initTxn(t, cl, id)

			add := kmsg.NewPtrAddPartitionsToTxnRequest()
			add.TransactionalID, add.ProducerID, add.ProducerEpoch = id, pid, epoch
			at := kmsg.NewAddPartitionsToTxnRequestTopic()
			at.Topic, at.Partitions = "tx", []int32{0, 1}
			add.Topics = append(add.Topics, at)
			aresp, err := add.RequestWith(ctx, cl)
			require.NoError(t, err)
			for _, p := range aresp.Topics[0].Partitions {
				require.Zero(t, p.ErrorCode, "partition %d", p.Partition)
			}
			offs := kmsg.NewPtrAddOffsetsToTxnRequest()
			offs.TransactionalID, offs.ProducerID, offs.ProducerEpoch, offs.Group = id, pid, epoch, "g"
			oresp, err := offs.RequestWith(ctx, cl)
			require.NoError(t, err)
			require.Zero(t, oresp.ErrorCode)
			require.Zero(t, produceCode(t, cl, id, "tx", 0, txnBatch(t, pid, epoch, 0, 2)))

			switch recovery {
			case "restart":
				srv.Restart(t)
			case "power loss":
				srv.RestartAfterPowerLoss(t)
			}

			require.Zero(t, produceCode(t, cl, id, "tx", 1, txnBatch(t, pid, epoch, 0, 3)), "the first batch of a partition added before the restart")
			require.Zero(t, produceCode(t, cl, id, "tx", 0, txnBatch(t, pid, epoch, 2, 1)))
			require.Equal(t, int16(48), produceCode(t, cl, id, "tx", 2, txnBatch(t, pid, epoch, 0, 1)), "INVALID_TXN_STATE: never added")

			require.Zero(t, txnCommitCode(t, cl, id, "g", pid, epoch, "tx", 0, 3), "offsets added before the restart, committed after it")

			end := kmsg.NewPtrEndTxnRequest()
			end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
			eresp, err := end.RequestWith(ctx, cl)
			require.NoError(t, err)
			require.Zero(t, eresp.ErrorCode)

			for p, l := range []int64{4, 4, 0} { // three records and a marker in t-0 and t-1
				part, err := srv.Dir.Partition("tx", int32(p))
				require.NoError(t, err)
				require.Equal(t, l, part.LogEndOffset(), "tx-%d", p)
				require.Equal(t, part.LogEndOffset(), part.LastStableOffset(), "tx-%d's last stable offset reaches its end", p)
			}
			require.Len(t, consume(t, srv.Addr, "tx", 6, kgo.FetchIsolationLevel(kgo.ReadCommitted())), 6)
			fetch := kmsg.NewPtrOffsetFetchRequest()
			fetch.Group = "g"
			fresp, err := fetch.RequestWith(ctx, cl)
			require.NoError(t, err)
			require.Len(t, fresp.Topics, 1)
			require.Equal(t, int64(3), fresp.Topics[0].Partitions[0].Offset)
		})
	}
}

// TestKgoTransactionAcrossRestart: a franz-go transactional producer
// whose server restarts (or loses power) in the middle of a transaction
// carries on with it, to a partition it had written and to a new one,
// and commits it whole.
func TestKgoTransactionAcrossRestart(t *testing.T) {
	for _, recovery := range []string{"restart", "power loss"} {
		t.Run(recovery, func(t *testing.T) {
			srv := servertest.StartInMemory(t, nil)
			admin := client(t, srv.Addr)
			createTopic(t, admin, "ktx", 2)
			ctx := context.Background()
			prod := client(t, srv.Addr, kgo.TransactionalID("ktx-1"), kgo.ProducerLinger(0), kgo.RecordRetries(100), kgo.RequestRetries(100))
			require.NoError(t, prod.BeginTransaction())
			require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "ktx", Partition: 0, Value: []byte("before")}).FirstErr())
			switch recovery {
			case "restart":
				srv.Restart(t)
			case "power loss":
				srv.RestartAfterPowerLoss(t)
			}
			for p := range int32(2) {
				require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "ktx", Partition: p, Value: fmt.Appendf(nil, "after-%d", p)}).FirstErr())
			}
			require.NoError(t, prod.EndTransaction(ctx, kgo.TryCommit))
			got := consume(t, srv.Addr, "ktx", 3, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			require.Len(t, got, 3)
		})
	}
}
