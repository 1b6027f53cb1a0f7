package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// txnEnv is a Dir with topic t (2 partitions) and both coordinators.
type txnEnv struct {
	t      *testing.T
	mem    *vfs.MemFS
	clock  *testclock.Clock
	cfg    log.Config
	dir    *log.Dir
	txn    *TxnCoordinator
	groups *GroupCoordinator
	seq    map[seqKey]int32 // the test producer's next sequence numbers
}

type seqKey struct {
	pe ProducerIDAndEpoch
	p  int32
}

// newTxnEnv opens a Dir on a memory FS. The coordinator's goroutine runs
// at intervals of an hour unless configure changes them: tests call its
// work directly.
func newTxnEnv(t *testing.T, configure func(*log.Config)) *txnEnv {
	t.Helper()
	e := &txnEnv{t: t, mem: vfs.NewMem(), clock: testclock.New(time.Unix(1_700_000_000, 0)), seq: map[seqKey]int32{}}
	e.cfg = log.DefaultConfig()
	e.cfg.FS = e.mem
	e.cfg.Now = e.clock.Now
	e.cfg.OffsetsTopicNumPartitions = 3
	e.cfg.TransactionStateNumPartitions = 3
	e.cfg.TransactionAbortTimedOutInterval = time.Hour
	e.cfg.TransactionRemoveExpiredInterval = time.Hour
	if configure != nil {
		configure(&e.cfg)
	}
	e.open()
	_, err := e.dir.CreateTopic(context.Background(), "t", 2, nil)
	require.NoError(t, err)
	return e
}

func (e *txnEnv) open() {
	e.t.Helper()
	d, err := log.Open(context.Background(), "/data", e.cfg)
	require.NoError(e.t, err)
	e.dir = d
	e.t.Cleanup(func() { require.NoError(e.t, d.Close()) })
	e.txn, err = Transactions(context.Background(), d)
	require.NoError(e.t, err)
	again, err := Transactions(context.Background(), d)
	require.NoError(e.t, err)
	require.Same(e.t, e.txn, again, "one transaction coordinator per Dir")
	e.groups, err = Groups(context.Background(), d)
	require.NoError(e.t, err)
	require.Same(e.t, e.groups, e.txn.groups)
}

// reopen closes the Dir cleanly and opens it again.
func (e *txnEnv) reopen() {
	e.t.Helper()
	require.NoError(e.t, e.dir.Close())
	e.open()
}

// crash simulates a power loss: the Dir opens again on what was durable.
func (e *txnEnv) crash() {
	e.t.Helper()
	e.mem = e.mem.CrashClone()
	require.NoError(e.t, e.dir.Close()) // releases the lock; the clone does not see what it writes
	e.cfg.FS = e.mem
	e.open()
}

func (e *txnEnv) log(p int32) *log.Log {
	e.t.Helper()
	l, err := e.dir.Partition("t", p)
	require.NoError(e.t, err)
	return l
}

func (e *txnEnv) init(id string) ProducerIDAndEpoch {
	e.t.Helper()
	pe, err := e.txn.InitProducerID(context.Background(), id, time.Minute)
	require.NoError(e.t, err)
	return pe
}

// produce appends a batch of n records of producer pe to t-p,
// transactional or not, durably (acks=all), and returns its base offset.
func (e *txnEnv) produce(pe ProducerIDAndEpoch, p int32, n int, txn bool) (int64, error) {
	k := seqKey{pe, p}
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, BaseSequence: e.seq[k],
		Attributes: record.Attributes(0).WithTransactional(txn)}, record.DefaultLevel)
	for i := range n {
		require.NoError(e.t, b.Append(e.clock.Now().UnixMilli(), nil, fmt.Appendf(nil, "v%d", i), nil))
	}
	batch, err := b.Build()
	require.NoError(e.t, err)
	l := e.log(p)
	res, err := l.Append(batch)
	if err != nil {
		return -1, err
	}
	require.NoError(e.t, l.Sync(context.Background(), res.LastOffset+1)) // acks=all
	e.seq[k] += int32(n)
	return res.BaseOffset, nil
}

func (e *txnEnv) mustProduce(pe ProducerIDAndEpoch, p int32, n int) int64 {
	e.t.Helper()
	off, err := e.produce(pe, p, n, true)
	require.NoError(e.t, err)
	return off
}

// committed counts the records of t-p a read_committed consumer sees.
func committed(t *testing.T, l *log.Log) int {
	t.Helper()
	n := 0
	for off := l.LogStartOffset(); off < l.LastStableOffset(); {
		next, err := l.ReadCommittedRecords(off, 1<<20, func(*record.Record, *record.BatchHeader) error { n++; return nil })
		require.NoError(t, err)
		if next <= off {
			break
		}
		off = next
	}
	return n
}

// lastMarker returns the marker at the end of l.
func lastMarker(t *testing.T, l *log.Log) (record.BatchHeader, record.EndTxnMarker) {
	t.Helper()
	res, err := l.Read(l.LogEndOffset()-1, 1<<20, true)
	require.NoError(t, err)
	require.NotNil(t, res.Slice)
	defer res.Release()
	var h record.BatchHeader
	var batch []byte
	_, err = res.Slice.Batches(nil, func(bh *record.BatchHeader, b []byte) error {
		h, batch = *bh, append([]byte(nil), b...)
		return nil
	})
	require.NoError(t, err)
	require.True(t, h.Attributes.IsControl(), "last batch %v is not a marker", h)
	r := record.NewReader(record.ReaderOptions{})
	require.NoError(t, r.Reset(batch))
	require.True(t, r.Next())
	m, err := record.ParseEndTxnMarker(r.Record().Key, r.Record().Value)
	require.NoError(t, err)
	return h, m
}

func openTxnStart(t *testing.T, l *log.Log, pid int64) int64 {
	t.Helper()
	for _, p := range l.Producers() {
		if p.ProducerID == pid {
			return p.CurrentTxnStartOffset
		}
	}
	return -1
}

// requireFencedInLog checks that the log refused a fenced producer's
// transactional batch. Its transaction ended with a marker of a higher
// epoch, so the log finds no open transaction and no verification first
// (log.ErrInvalidTxnState, Kafka's order of checks); an open transaction
// of the old epoch would give log.ErrInvalidProducerEpoch.
func requireFencedInLog(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, log.ErrInvalidTxnState) || errors.Is(err, log.ErrInvalidProducerEpoch), "%v", err)
}

func TestInitProducerID(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()

	// Idempotent producers: a fresh id each time, epoch 0, nothing stored.
	a, err := e.txn.InitProducerID(ctx, "", 0)
	require.NoError(t, err)
	b, err := e.txn.InitProducerID(ctx, "", 0)
	require.NoError(t, err)
	require.NotEqual(t, a.ProducerID, b.ProducerID)
	require.Zero(t, a.Epoch)
	require.Empty(t, e.txn.ListTransactions())

	// A transactional id keeps its producer id and bumps the epoch.
	first := e.init("tx")
	require.Zero(t, first.Epoch)
	second := e.init("tx")
	require.Equal(t, first.ProducerID, second.ProducerID)
	require.Equal(t, int16(1), second.Epoch)
	d, err := e.txn.DescribeTransaction("tx")
	require.NoError(t, err)
	require.Equal(t, TxnDescription{TransactionalID: "tx", State: TxnEmpty, ProducerID: second.ProducerID, ProducerEpoch: 1,
		Timeout: time.Minute, LastUpdate: e.clock.Now()}, d)

	// Epoch exhausted: a new producer id at epoch 0.
	e.txn.mu.Lock()
	e.txn.txns["tx"].st.epoch = math.MaxInt16 - 1
	e.txn.mu.Unlock()
	third := e.init("tx")
	require.NotEqual(t, first.ProducerID, third.ProducerID)
	require.Zero(t, third.Epoch)

	for _, timeout := range []time.Duration{0, -time.Second, e.cfg.TransactionMaxTimeout + time.Millisecond} {
		_, err := e.txn.InitProducerID(ctx, "bad", timeout)
		require.ErrorIs(t, err, ErrInvalidTransactionTimeout, "timeout %v", timeout)
	}
	_, err = e.txn.DescribeTransaction("bad")
	require.ErrorIs(t, err, ErrTransactionalIDNotFound)
	require.Equal(t, []string{"tx"}, e.txn.ListTransactions())
}

func TestUnknownTransactionalIDAndPartition(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	pe := ProducerIDAndEpoch{ProducerID: 1}
	require.ErrorIs(t, e.txn.AddPartitions(ctx, "nobody", pe, []TopicPartition{{Topic: "t", Partition: 0}}), ErrTransactionalIDNotFound)
	require.ErrorIs(t, e.txn.EndTxn(ctx, "nobody", pe, true), ErrTransactionalIDNotFound)
	require.ErrorIs(t, e.groups.TxnCommitOffsets(ctx, "nobody", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, nil), ErrTransactionalIDNotFound)

	pe = e.init("tx")
	for _, tp := range []TopicPartition{{Topic: "missing", Partition: 0}, {Topic: "t", Partition: 2}} {
		err := e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}, tp})
		require.ErrorIs(t, err, ErrUnknownTopicOrPartition)
		require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)
	}
	// The coordinators' own topics: a producer may not write them (the
	// offsets partition joins a transaction through AddOffsets).
	for _, tp := range []TopicPartition{{Topic: OffsetsTopic, Partition: 0}, {Topic: TransactionStateTopic, Partition: 0}} {
		err := e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}, tp})
		require.ErrorIs(t, err, log.ErrInternalTopic, "%s", tp)
	}
	d, err := e.txn.DescribeTransaction("tx")
	require.NoError(t, err)
	require.Equal(t, TxnEmpty, d.State, "a refused AddPartitions changes nothing")
}

// TestFencing: a second InitProducerID aborts the first producer's open
// transaction and fences it on the coordinator and in the logs.
func TestFencing(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	old := e.init("tx")
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", old, []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}))
	first := e.mustProduce(old, 0, 3)
	require.Equal(t, first, e.log(0).LastStableOffset(), "the open transaction holds the LSO")

	// A transactional batch without AddPartitions is refused by the log.
	other := e.init("other")
	_, err := e.produce(other, 0, 1, true)
	require.ErrorIs(t, err, log.ErrInvalidTxnState)

	cur := e.init("tx")
	require.Equal(t, old.ProducerID, cur.ProducerID)
	// Kafka at transaction.version 2 fences (one bump), aborts as a
	// version 2 end (another), then bumps for the new producer.
	require.Equal(t, old.Epoch+3, cur.Epoch, "one bump to fence, one to abort, one for the new producer")
	for p := range int32(2) {
		l := e.log(p)
		require.Equal(t, l.HighWatermark(), l.LastStableOffset())
		h, m := lastMarker(t, l)
		require.Equal(t, record.ControlAbort, m.Type)
		require.Equal(t, old.Epoch+2, h.ProducerEpoch)
		require.Equal(t, old.ProducerID, h.ProducerID)
	}
	require.Zero(t, committed(t, e.log(0)))

	tests := []struct {
		name string
		call func(pe ProducerIDAndEpoch) error
	}{
		{"AddPartitions", func(pe ProducerIDAndEpoch) error {
			return e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}})
		}},
		{"AddOffsets", func(pe ProducerIDAndEpoch) error { return e.txn.AddOffsets(ctx, "tx", pe, "g") }},
		{"EndTxn", func(pe ProducerIDAndEpoch) error { return e.txn.EndTxn(ctx, "tx", pe, true) }},
		{"TxnCommit", func(pe ProducerIDAndEpoch) error {
			return e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 1}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.call(old), ErrProducerFenced)
			require.ErrorIs(t, tc.call(ProducerIDAndEpoch{ProducerID: cur.ProducerID + 100, Epoch: cur.Epoch}), ErrProducerFenced)
		})
	}
	// The fenced producer's late batches are refused by the log.
	for p := range int32(2) {
		_, err = e.produce(old, p, 1, true)
		requireFencedInLog(t, err)
	}
}

func TestEndTxnWritesMarkers(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			e := newTxnEnv(t, nil)
			ctx := context.Background()
			pe := e.init("tx")
			require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, commit), "ending an empty transaction is a no-op")
			start := e.clock.Now()
			require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0}}))
			e.clock.Add(time.Second)
			require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}), "adding again is fine")
			off0 := e.mustProduce(pe, 0, 2)
			e.mustProduce(pe, 1, 1)
			e.mustProduce(pe, 0, 3)
			d, err := e.txn.DescribeTransaction("tx")
			require.NoError(t, err)
			require.Equal(t, TxnOngoing, d.State)
			require.Equal(t, []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}, d.Partitions)
			require.Equal(t, start, d.StartTime)
			require.Equal(t, off0, e.log(0).LastStableOffset())
			require.Equal(t, off0, openTxnStart(t, e.log(0), pe.ProducerID))

			require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, commit))
			want := record.ControlAbort
			if commit {
				want = record.ControlCommit
			}
			for p, n := range map[int32]int{0: 5, 1: 1} {
				l := e.log(p)
				require.Equal(t, l.LogEndOffset(), l.LastStableOffset())
				require.Equal(t, int64(-1), openTxnStart(t, l, pe.ProducerID))
				h, m := lastMarker(t, l)
				require.Equal(t, want, m.Type)
				require.Equal(t, coordinatorEpoch, m.CoordinatorEpoch)
				require.Equal(t, pe.Epoch, h.ProducerEpoch)
				if commit {
					require.Equal(t, n, committed(t, l))
				} else {
					require.Zero(t, committed(t, l))
				}
			}
			d, err = e.txn.DescribeTransaction("tx")
			require.NoError(t, err)
			require.Empty(t, d.Partitions)
			// Repeating the result succeeds; the other result does not.
			require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, commit))
			require.ErrorIs(t, e.txn.EndTxn(ctx, "tx", pe, !commit), ErrInvalidTxnState)
			if commit {
				require.Equal(t, TxnCompleteCommit, d.State)
			} else {
				require.Equal(t, TxnCompleteAbort, d.State)
			}

			// The next transaction of the same producer works as the first.
			require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}))
			e.mustProduce(pe, 0, 1)
			require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
			require.Equal(t, e.log(0).LogEndOffset(), e.log(0).LastStableOffset())
		})
	}
}

func TestTxnOffsets(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	tp := TopicPartition{Topic: "t", Partition: 0}
	pe := e.init("tx")
	commit := func(off int64) error {
		return e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp: {Offset: off, LeaderEpoch: -1, Metadata: "m"}})
	}
	require.ErrorIs(t, commit(1), ErrInvalidTxnState, "no transaction")
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{tp}))
	require.ErrorIs(t, commit(1), ErrInvalidTxnState, "AddOffsets missing")

	// Committed in a committed transaction: visible after the marker only.
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	e.mustProduce(pe, 0, 4)
	require.NoError(t, commit(4))
	require.NoError(t, commit(5), "a second commit in the same transaction")
	require.Empty(t, e.groups.FetchOffsets("g", nil))
	require.Equal(t, int64(5), e.groups.PendingTxnOffsets("g")[tp].Offset)
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.Equal(t, int64(5), e.groups.FetchOffsets("g", nil)[tp].Offset)
	require.Empty(t, e.groups.PendingTxnOffsets("g"))
	offsets := e.groups.partitions[e.groups.offsetsPartitionOf("g").Partition]
	require.Equal(t, offsets.LogEndOffset(), offsets.LastStableOffset())

	// Aborted: never visible.
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	require.NoError(t, commit(9))
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, false))
	require.Equal(t, int64(5), e.groups.FetchOffsets("g", nil)[tp].Offset)
	require.Empty(t, e.groups.PendingTxnOffsets("g"))

	// A plain commit written after the transactional one wins over it.
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	require.NoError(t, commit(11))
	require.NoError(t, e.groups.CommitOffsets(ctx, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp: {Offset: 12, LeaderEpoch: -1}}))
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.Equal(t, int64(12), e.groups.FetchOffsets("g", nil)[tp].Offset)

	// All of it comes back after a restart, from the markers.
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	require.NoError(t, commit(20))
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, false))
	e.reopen()
	require.Equal(t, int64(12), e.groups.FetchOffsets("g", nil)[tp].Offset)
	require.Empty(t, e.groups.PendingTxnOffsets("g"))
}

func TestTxnCommitChecksMembership(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	m := join(t, e.groups, "", assignor.Range())
	pe := e.init("tx")
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 3, LeaderEpoch: -1}}
	require.ErrorIs(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: m.MemberID, GenerationID: m.Generation + 1}, off), ErrIllegalGeneration)
	require.ErrorIs(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "stranger", GenerationID: m.Generation}, off), ErrUnknownMember)
	require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: m.MemberID, GenerationID: m.Generation}, off))
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.Equal(t, int64(3), e.groups.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
}

// TestTxnCommitFencesStaticMember: a transactional commit of a static
// member that another member replaced is fenced with ErrFencedInstanceID,
// as Kafka fences a TxnOffsetCommit naming the instance; the new member's
// commit goes through.
func TestTxnCommitFencesStaticMember(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	static := func() joinResult {
		res, err := e.groups.join(ctx, joinRequest{GroupID: "g", ClientID: "c", InstanceID: "instance-1", Topics: []string{"t"},
			Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: time.Minute, RebalanceTimeout: time.Minute})
		require.NoError(t, err)
		return res
	}
	first := static()
	again := static() // its process restarted: a new member id for the same instance
	require.NotEqual(t, first.MemberID, again.MemberID)
	pe := e.init("tx")
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 3, LeaderEpoch: -1}}
	old := GroupMetadata{GroupID: "g", MemberID: first.MemberID, GenerationID: first.Generation, GroupInstanceID: "instance-1"}
	require.ErrorIs(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, old, off), ErrFencedInstanceID)
	current := GroupMetadata{GroupID: "g", MemberID: again.MemberID, GenerationID: again.Generation, GroupInstanceID: "instance-1"}
	require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, current, off))
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.Equal(t, int64(3), e.groups.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
}

// TestPendingOffsetsSurviveRestart: offsets of an open transaction are
// loaded as pending and applied by the marker written after the restart.
func TestPendingOffsetsSurviveRestart(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	tp := TopicPartition{Topic: "t", Partition: 1}
	pe := e.init("tx")
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{tp}))
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	e.mustProduce(pe, 1, 2)
	require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp: {Offset: 2, LeaderEpoch: -1}}))
	before, err := e.txn.DescribeTransaction("tx")
	require.NoError(t, err)

	e.reopen()
	after, err := e.txn.DescribeTransaction("tx")
	require.NoError(t, err)
	require.Equal(t, before, after, "the state survives a restart")
	require.Empty(t, e.groups.FetchOffsets("g", nil))
	require.Equal(t, int64(2), e.groups.PendingTxnOffsets("g")[tp].Offset)
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.Equal(t, int64(2), e.groups.FetchOffsets("g", nil)[tp].Offset)
	require.Equal(t, 2, committed(t, e.log(1)))
}

// TestCrashBetweenPrepareAndMarkers: a PrepareCommit persisted without its
// markers is completed when the coordinator loads.
func TestCrashBetweenPrepareAndMarkers(t *testing.T) {
	for _, recovery := range []string{"retry", "restart", "power loss"} {
		t.Run(recovery, func(t *testing.T) {
			e := newTxnEnv(t, nil)
			ctx := context.Background()
			tp := TopicPartition{Topic: "t", Partition: 0}
			pe := e.init("tx")
			require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{tp}))
			require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
			first := e.mustProduce(pe, 0, 3)
			require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp: {Offset: 3, LeaderEpoch: -1}}))

			crash := errors.New("crash")
			hook := func() error { return crash }
			e.txn.afterPrepare.Store(&hook)
			require.ErrorIs(t, e.txn.EndTxn(ctx, "tx", pe, true), crash)
			e.txn.afterPrepare.Store(nil)
			d, err := e.txn.DescribeTransaction("tx")
			require.NoError(t, err)
			require.Equal(t, TxnPrepareCommit, d.State)
			require.Equal(t, first, e.log(0).LastStableOffset(), "no marker yet")
			require.ErrorIs(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{tp}), ErrConcurrentTransactions)
			require.ErrorIs(t, e.txn.EndTxn(ctx, "tx", pe, false), ErrInvalidTxnState)

			switch recovery {
			case "retry":
				require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true), "a retried EndTxn completes it")
			case "restart":
				e.reopen()
			case "power loss":
				e.crash()
			}
			d, err = e.txn.DescribeTransaction("tx")
			require.NoError(t, err)
			require.Equal(t, TxnCompleteCommit, d.State)
			l := e.log(0)
			require.Equal(t, l.LogEndOffset(), l.LastStableOffset())
			_, m := lastMarker(t, l)
			require.Equal(t, record.ControlCommit, m.Type)
			require.Equal(t, 3, committed(t, l))
			require.Equal(t, int64(3), e.groups.FetchOffsets("g", nil)[tp].Offset)
			require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
		})
	}
}

// markerAt is an end-transaction marker in a log.
type markerAt struct {
	offset int64
	typ    record.ControlType
}

// markersOf returns producer pid's COMMIT and ABORT markers in l, in offset
// order.
func markersOf(t *testing.T, l *log.Log, pid int64) []markerAt {
	t.Helper()
	var out []markerAt
	r := record.NewReader(record.ReaderOptions{})
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		res, err := l.Read(off, 1<<20, true)
		require.NoError(t, err)
		require.NotNil(t, res.Slice)
		next := off
		_, err = res.Slice.Batches(nil, func(h *record.BatchHeader, b []byte) error {
			next = h.NextOffset()
			if !h.Attributes.IsControl() || h.ProducerID != pid {
				return nil
			}
			if err := r.Reset(b); err != nil {
				return err
			}
			if !r.Next() {
				return fmt.Errorf("an empty control batch at offset %d", h.BaseOffset)
			}
			m, err := record.ParseEndTxnMarker(r.Record().Key, r.Record().Value)
			if err != nil {
				return err
			}
			out = append(out, markerAt{h.BaseOffset, m.Type})
			return nil
		})
		res.Release()
		require.NoError(t, err)
		require.Greater(t, next, off)
		off = next
	}
	return out
}

// TestCrashBetweenMarkers: the coordinator stops after the first marker of
// a transaction over several partitions; the recovery writes the markers
// to every partition again, so the first one gets a second marker. As in
// Kafka (ProducerAppendInfo.appendEndTxnMarker), a marker for a producer
// with no transaction open in the partition is accepted and ends nothing:
// no .txnindex entry, no change to the read_committed view. The first
// marker goes to t-0, or, with offsets, to the group's __consumer_offsets
// partition (it sorts first), which the group coordinator must apply once.
func TestCrashBetweenMarkers(t *testing.T) {
	for _, offsets := range []bool{false, true} {
		for _, commit := range []bool{true, false} {
			for _, recovery := range []string{"retry", "restart", "power loss"} {
				t.Run(fmt.Sprintf("offsets=%v/commit=%v/%s", offsets, commit, recovery), func(t *testing.T) {
					testCrashBetweenMarkers(t, offsets, commit, recovery)
				})
			}
		}
	}
}

func testCrashBetweenMarkers(t *testing.T, offsets, commit bool, recovery string) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	require.NoError(t, e.dir.AddPartitions(ctx, "t", 3))
	data := []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}}
	gtp := e.groups.offsetsPartitionOf("g")
	logOf := func(tp TopicPartition) *log.Log {
		t.Helper()
		l, err := e.dir.Partition(tp.Topic, tp.Partition)
		require.NoError(t, err)
		return l
	}
	want := record.ControlAbort
	if commit {
		want = record.ControlCommit
	}

	pe := e.init("tx")
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, data))
	tps := data
	if offsets {
		require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
		tps = append([]TopicPartition{gtp}, data...)
	}
	for _, tp := range data {
		e.mustProduce(pe, tp.Partition, int(tp.Partition)+1) // 1, 2, 3 records
	}
	if offsets {
		require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 1, LeaderEpoch: -1}}))
	}
	first := map[TopicPartition]int64{}
	for _, tp := range tps {
		first[tp] = openTxnStart(t, logOf(tp), pe.ProducerID)
		require.GreaterOrEqual(t, first[tp], int64(0), "%s is in the transaction", tp)
	}

	// The crash: after the first marker, which the OS wrote back before
	// the power went (writeMarkers syncs only after the last marker; a
	// marker lost with the power is TestCrashBetweenPrepareAndMarkers).
	crash := errors.New("crash")
	var marked []TopicPartition
	hook := func(tp TopicPartition) error {
		marked = append(marked, tp)
		l := logOf(tp)
		require.NoError(t, l.Sync(ctx, l.LogEndOffset()))
		return crash
	}
	e.txn.afterMarker.Store(&hook)
	require.ErrorIs(t, e.txn.EndTxn(ctx, "tx", pe, commit), crash)
	e.txn.afterMarker.Store(nil)
	require.Equal(t, tps[:1], marked, "the markers go in partition order")
	d, err := e.txn.DescribeTransaction("tx")
	require.NoError(t, err)
	if commit {
		require.Equal(t, TxnPrepareCommit, d.State)
	} else {
		require.Equal(t, TxnPrepareAbort, d.State)
	}
	for _, tp := range tps {
		l := logOf(tp)
		if tp == tps[0] {
			require.Equal(t, l.LogEndOffset(), l.LastStableOffset(), "%s has its marker", tp)
			require.Len(t, markersOf(t, l, pe.ProducerID), 1)
		} else {
			require.Equal(t, first[tp], l.LastStableOffset(), "%s has no marker yet", tp)
			require.Empty(t, markersOf(t, l, pe.ProducerID))
		}
	}

	switch recovery {
	case "retry":
		require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, commit), "a retried EndTxn completes it")
	case "restart":
		e.reopen()
	case "power loss":
		e.crash()
	}

	// check asserts the transaction's outcome in every partition; extra is
	// the number of committed records of t-p written after it.
	check := func(extra int) {
		t.Helper()
		for _, tp := range tps {
			l := logOf(tp)
			require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "%s: the LSO passed the transaction", tp)
			require.Equal(t, int64(-1), openTxnStart(t, l, pe.ProducerID), "%s: no transaction open", tp)
			ms := markersOf(t, l, pe.ProducerID)
			if extra > 0 { // every partition took part in the next transaction
				require.Equal(t, record.ControlCommit, ms[len(ms)-1].typ, "%s: the next transaction's marker", tp)
				ms = ms[:len(ms)-1]
			}
			n := 1
			if tp == tps[0] {
				n = 2 // the first marker and the recovery's
			}
			require.Len(t, ms, n, "%s: markers %v", tp, ms)
			for _, m := range ms {
				require.Equal(t, want, m.typ, "%s", tp)
			}
			aborted, err := l.AbortedTransactions(l.LogStartOffset(), l.LogEndOffset())
			require.NoError(t, err)
			if commit {
				require.Empty(t, aborted, "%s", tp)
			} else {
				// One entry, ending at the first ABORT marker: the second
				// one ended nothing.
				require.Equal(t, []index.AbortedTxn{{ProducerID: pe.ProducerID, FirstOffset: first[tp], LastOffset: ms[0].offset,
					LastStableOffset: ms[0].offset + 1}}, aborted, "%s", tp)
			}
			if tp.Topic == "t" {
				n := extra
				if commit {
					n += int(tp.Partition) + 1
				}
				require.Equal(t, n, committed(t, l), "%s: read_committed records", tp)
			}
		}
		if offsets {
			require.Empty(t, e.groups.PendingTxnOffsets("g"))
			got, ok := e.groups.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}]
			switch {
			case extra > 0:
				require.Equal(t, int64(10), got.Offset)
			case commit:
				require.Equal(t, int64(1), got.Offset)
			default:
				require.False(t, ok, "the aborted offset commit is not visible")
			}
		}
	}
	d, err = e.txn.DescribeTransaction("tx")
	require.NoError(t, err)
	if commit {
		require.Equal(t, TxnCompleteCommit, d.State)
	} else {
		require.Equal(t, TxnCompleteAbort, d.State)
	}
	check(0)
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, commit), "a retried EndTxn of the result succeeds")
	check(0)

	// The producer's next transaction works as usual.
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, data))
	for _, tp := range data {
		e.mustProduce(pe, tp.Partition, 1)
	}
	if offsets {
		require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
		require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 10, LeaderEpoch: -1}}))
	}
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	check(1)

	// Recovery replays the second marker too (no snapshot after a power
	// loss): still one .txnindex entry, the same view.
	e.crash()
	check(1)
}

func TestTimedOutTransactionIsAbortedAndFenced(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	pe := e.init("tx")
	idle := e.init("idle")
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}))
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	e.mustProduce(pe, 0, 2)
	require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 2}}))

	e.clock.Add(time.Minute)
	require.Zero(t, e.txn.abortTimedOut(ctx), "not past the timeout yet")
	e.clock.Add(time.Millisecond)
	require.Equal(t, 1, e.txn.abortTimedOut(ctx))
	d, err := e.txn.DescribeTransaction("tx")
	require.NoError(t, err)
	require.Equal(t, TxnCompleteAbort, d.State)
	require.Equal(t, pe.Epoch+2, d.ProducerEpoch, "fenced, then aborted as a version 2 end")
	l := e.log(0)
	require.Equal(t, l.LogEndOffset(), l.LastStableOffset())
	require.Zero(t, committed(t, l))
	require.Empty(t, e.groups.FetchOffsets("g", nil))
	require.Empty(t, e.groups.PendingTxnOffsets("g"))
	d, err = e.txn.DescribeTransaction("idle")
	require.NoError(t, err)
	require.Equal(t, idle.Epoch, d.ProducerEpoch, "an Empty transactional id does not time out")

	require.ErrorIs(t, e.txn.EndTxn(ctx, "tx", pe, true), ErrProducerFenced)
	_, err = e.produce(pe, 0, 1, true)
	requireFencedInLog(t, err)
	next := e.init("tx")
	require.Equal(t, pe.Epoch+3, next.Epoch)
}

// TestTimeoutGoroutine: the coordinator's goroutine aborts on its own.
func TestTimeoutGoroutine(t *testing.T) {
	e := newTxnEnv(t, func(c *log.Config) { c.TransactionAbortTimedOutInterval = time.Millisecond })
	ctx := context.Background()
	pe := e.init("tx")
	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}))
	e.mustProduce(pe, 0, 1)
	e.clock.Add(2 * time.Minute)
	require.Eventually(t, func() bool {
		d, err := e.txn.DescribeTransaction("tx")
		return err == nil && d.State == TxnCompleteAbort
	}, 10*time.Second, time.Millisecond)
	require.Equal(t, e.log(0).LogEndOffset(), e.log(0).LastStableOffset())
}

func TestTransactionalIDExpiry(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	pe := e.init("done")
	require.NoError(t, e.txn.AddPartitions(ctx, "done", pe, []TopicPartition{{Topic: "t", Partition: 0}}))
	require.NoError(t, e.txn.EndTxn(ctx, "done", pe, true))
	e.init("empty")
	open := e.init("open")
	require.NoError(t, e.txn.AddPartitions(ctx, "open", open, []TopicPartition{{Topic: "t", Partition: 1}}))

	e.clock.Add(e.cfg.TransactionalIDExpiration - time.Millisecond)
	require.Zero(t, e.txn.expireTransactionalIDs(ctx))
	e.clock.Add(time.Millisecond)
	require.Equal(t, 2, e.txn.expireTransactionalIDs(ctx))
	require.Equal(t, []string{"open"}, e.txn.ListTransactions(), "a transaction in progress does not expire")
	_, err := e.txn.DescribeTransaction("done")
	require.ErrorIs(t, err, ErrTransactionalIDNotFound)
	require.ErrorIs(t, e.txn.EndTxn(ctx, "done", pe, true), ErrTransactionalIDNotFound)

	e.reopen()
	require.Equal(t, []string{"open"}, e.txn.ListTransactions(), "tombstones survive a restart")
	again := e.init("done")
	require.Zero(t, again.Epoch, "an expired id starts over")
}

// TestConcurrentTransactions: two producers' transactions interleave on the
// same partitions; the LSO waits for the earliest open one.
func TestConcurrentTransactions(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	a, b := e.init("a"), e.init("b")
	for _, p := range []struct {
		id string
		pe ProducerIDAndEpoch
	}{{"a", a}, {"b", b}} {
		require.NoError(t, e.txn.AddPartitions(ctx, p.id, p.pe, []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}))
	}
	l := e.log(0)
	firstA := e.mustProduce(a, 0, 2)
	e.mustProduce(b, 0, 1)
	e.mustProduce(a, 0, 1)
	e.mustProduce(b, 1, 1)
	require.Equal(t, firstA, l.LastStableOffset())
	require.NoError(t, e.txn.EndTxn(ctx, "b", b, true))
	require.Equal(t, firstA, l.LastStableOffset(), "a's transaction is still open")
	require.Equal(t, e.log(1).LogEndOffset(), e.log(1).LastStableOffset())
	require.NoError(t, e.txn.EndTxn(ctx, "a", a, true))
	require.Equal(t, l.HighWatermark(), l.LastStableOffset())
	require.Equal(t, 4, committed(t, l))
}

// TestConcurrentProducers runs whole transactions from several goroutines
// (for the race detector) and checks every partition ends decided.
func TestConcurrentProducers(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	const producers, rounds = 4, 10
	var mu sync.Mutex // the env's produce helper is not concurrent
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for i := range producers {
		wg.Go(func() {
			id := fmt.Sprintf("p%d", i)
			pe, err := e.txn.InitProducerID(ctx, id, time.Minute)
			if err != nil {
				errs <- err
				return
			}
			for r := range rounds {
				tps := []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
				if err := e.txn.AddPartitions(ctx, id, pe, tps); err != nil {
					errs <- err
					return
				}
				if err := e.txn.AddOffsets(ctx, id, pe, id); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				_, err0 := e.produce(pe, 0, 1, true)
				_, err1 := e.produce(pe, 1, 1, true)
				mu.Unlock()
				if err := errors.Join(err0, err1); err != nil {
					errs <- err
					return
				}
				if err := e.groups.TxnCommitOffsets(ctx, id, pe, GroupMetadata{GroupID: id, MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: int64(r)}}); err != nil {
					errs <- err
					return
				}
				if err := e.txn.EndTxn(ctx, id, pe, r%2 == 0); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for p := range int32(2) {
		l := e.log(p)
		require.Equal(t, l.HighWatermark(), l.LastStableOffset())
		require.Equal(t, producers*rounds/2, committed(t, l))
	}
	for i := range producers {
		require.Equal(t, int64(rounds-2), e.groups.FetchOffsets(fmt.Sprintf("p%d", i), nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
	}
}

func TestTxnCoordinatorClose(t *testing.T) {
	e := newTxnEnv(t, nil)
	pe := e.init("tx")
	require.NoError(t, e.txn.Close())
	require.NoError(t, e.txn.Close(), "Close is idempotent")
	_, err := e.txn.InitProducerID(context.Background(), "tx", time.Minute)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, e.txn.EndTxn(context.Background(), "tx", pe, true), ErrClosed)
}

// TestOffsetsBatchesHaveSequenceZero: every batch the group coordinator
// writes to __consumer_offsets has base sequence 0, transactional offset
// commits (several in one transaction, and after a restart) as well as
// plain commits and group metadata, as Kafka's CoordinatorRuntime writes
// them; the log takes them as a coordinator's appends, whose sequences it
// does not check.
func TestOffsetsBatchesHaveSequenceZero(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	tp := TopicPartition{Topic: "t", Partition: 0}
	pe := e.init("tx")
	txnCommit := func(off int64) {
		t.Helper()
		require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp: {Offset: off, LeaderEpoch: -1}}))
	}
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	txnCommit(1)
	txnCommit(2)
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.NoError(t, e.groups.CommitOffsets(ctx, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp: {Offset: 3, LeaderEpoch: -1}}))
	e.reopen()
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	txnCommit(4)
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	m := join(t, e.groups, "", assignor.Range()) // a group metadata record
	e.groups.LeaveGroup(GroupMetadata{GroupID: "g", MemberID: m.MemberID})
	require.Equal(t, int64(4), e.groups.FetchOffsets("g", nil)[tp].Offset)

	l := e.groups.partitions[e.groups.offsetsPartitionOf("g").Partition]
	type batch struct {
		producerID int64
		sequence   int32
	}
	var got []batch
	seen := map[int64]bool{}
	for off := int64(0); off < l.LogEndOffset(); {
		next, err := l.ReadRecords(off, 1<<20, func(_ *record.Record, h *record.BatchHeader) error {
			if !seen[h.BaseOffset] {
				seen[h.BaseOffset] = true
				got = append(got, batch{h.ProducerID, h.BaseSequence})
			}
			return nil
		})
		require.NoError(t, err)
		off = next
	}
	require.Equal(t, []batch{{pe.ProducerID, 0}, {pe.ProducerID, 0}, {-1, 0}, {pe.ProducerID, 0}, {-1, 0}, {-1, 0}}, got,
		"three transactional commits, a plain commit, the group's metadata on join and on leave")
}

// TestOpenTransactionSurvivesRestart: a transaction open across a restart
// (or a power loss) carries on. Partitions added before it take their first
// batch after it (the partition's clearance to open a transaction is in
// memory, so the coordinator gives it again when it loads), a partition
// that had its batch before it takes more, offsets added before it are
// committed after it, and the transaction commits or aborts whole: every
// partition gets its marker and its last stable offset moves to its end.
func TestOpenTransactionSurvivesRestart(t *testing.T) {
	for _, recovery := range []string{"restart", "power loss"} {
		for _, commit := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/commit=%v", recovery, commit), func(t *testing.T) {
				e := newTxnEnv(t, nil)
				ctx := context.Background()
				tp0, tp1 := TopicPartition{Topic: "t", Partition: 0}, TopicPartition{Topic: "t", Partition: 1}
				pe := e.init("tx")
				require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, []TopicPartition{tp0, tp1}))
				require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
				e.mustProduce(pe, 0, 2) // t-1 has no batch before the restart
				switch recovery {
				case "restart":
					e.reopen()
				case "power loss":
					e.crash()
				}
				d, err := e.txn.DescribeTransaction("tx")
				require.NoError(t, err)
				require.Equal(t, TxnOngoing, d.State)

				e.mustProduce(pe, 1, 3) // its first batch
				e.mustProduce(pe, 0, 1)
				require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", pe, GroupMetadata{GroupID: "g", MemberID: "", GenerationID: -1}, map[TopicPartition]OffsetAndMetadata{tp0: {Offset: 7, LeaderEpoch: -1}}))
				require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, commit))
				want := map[bool][2]int{true: {3, 3}, false: {0, 0}}[commit]
				for p, n := range want {
					l := e.log(int32(p))
					require.Equal(t, l.LogEndOffset(), l.LastStableOffset(), "t-%d's last stable offset reaches its end", p)
					require.Equal(t, n, committed(t, l), "t-%d", p)
				}
				offsets := e.groups.partitions[e.groups.offsetsPartitionOf("g").Partition]
				require.Equal(t, offsets.LogEndOffset(), offsets.LastStableOffset())
				if commit {
					require.Equal(t, int64(7), e.groups.FetchOffsets("g", nil)[tp0].Offset)
				} else {
					require.Empty(t, e.groups.FetchOffsets("g", nil))
				}

				// A partition added before the restart is no door for a
				// producer that the restart did not clear: another epoch,
				// or the next transaction.
				_, err = e.produce(ProducerIDAndEpoch{ProducerID: pe.ProducerID, Epoch: pe.Epoch + 1}, 1, 1, true)
				require.ErrorIs(t, err, log.ErrInvalidTxnState)
				_, err = e.produce(pe, 1, 1, true)
				require.ErrorIs(t, err, log.ErrInvalidTxnState, "the transaction ended")
			})
		}
	}
}

// TestTxnCommitDuringCompletingRebalance: while a classic group waits for
// its leader's assignment, a member's OffsetCommit gets
// REBALANCE_IN_PROGRESS but its TxnOffsetCommit is accepted, as Kafka
// 4.4's ClassicGroup.validateOffsetCommit decides (the transaction, not
// the group, decides a transactional commit's fate); a stale generation
// is fenced either way.
func TestTxnCommitDuringCompletingRebalance(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	c := e.groups
	a, err := networkJoin(ctx, t, c, "a", time.Minute)
	require.NoError(t, err)
	d, err := c.DescribeGroup("g")
	require.NoError(t, err)
	require.Equal(t, StateCompletingRebalance, d.State)
	member := GroupMetadata{GroupID: "g", MemberID: "a", GenerationID: a.Generation}
	off := map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 3, LeaderEpoch: -1}}
	require.ErrorIs(t, c.CommitOffsets(ctx, member, off), ErrRebalanceInProgress)

	pe := e.init("tx")
	require.NoError(t, e.txn.AddOffsets(ctx, "tx", pe, "g"))
	stale := member
	stale.GenerationID--
	require.ErrorIs(t, c.TxnCommitOffsets(ctx, "tx", pe, stale, off), ErrIllegalGeneration)
	require.NoError(t, c.TxnCommitOffsets(ctx, "tx", pe, member, off))
	require.NoError(t, e.txn.EndTxn(ctx, "tx", pe, true))
	require.Equal(t, int64(3), c.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
}
