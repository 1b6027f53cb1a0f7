package coordinator

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/txncodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

var errCrash = errors.New("crash")

// storedValue returns the latest __transaction_state value of id.
func storedValue(t *testing.T, e *txnEnv, id string) txncodec.Value {
	t.Helper()
	l := e.txn.stateLog(id)
	var last []byte
	var rr log.RecordReader
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		next, err := rr.ReadRecords(l, off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			if k, err := txncodec.ParseKey(r.Key); err == nil && k.TransactionalID == id {
				last = append([]byte(nil), r.Value...)
			}
			return nil
		})
		require.NoError(t, err)
		if next <= off {
			break
		}
		off = next
	}
	require.NotNil(t, last, "no state stored for %s", id)
	require.Equal(t, byte(1), last[1], "value version 1, as Kafka writes at transaction.version 2")
	v, err := txncodec.ParseValue(last)
	require.NoError(t, err)
	return v
}

// setEpoch moves id's producer epoch to epoch, as if that many
// transactions had ended, persisting it.
func setEpoch(t *testing.T, e *txnEnv, id string, epoch int16) ProducerIDAndEpoch {
	t.Helper()
	m, err := e.txn.acquire(context.Background(), id, false)
	require.NoError(t, err)
	defer e.txn.release(m)
	st := m.st.clone()
	st.epoch = epoch
	require.NoError(t, e.txn.transition(context.Background(), m, st))
	return ProducerIDAndEpoch{ProducerID: st.producerID, Epoch: epoch}
}

// TestEndTxnV2BumpsEpoch: every version 2 end bumps the epoch, the
// markers carry the bumped epoch, the producer continues with the epoch
// EndTxnV2 returns (its sequences from 0), and __transaction_state records
// the transaction's version in Kafka's version 1 value.
func TestEndTxnV2BumpsEpoch(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(map[bool]string{true: "commit", false: "abort"}[commit], func(t *testing.T) {
			e := newTxnEnv(t, nil)
			ctx := context.Background()
			pe := e.init("tx")
			want := 0
			for round := range 3 {
				tps := []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
				require.NoError(t, e.txn.AddPartitionsV2(ctx, "tx", pe, tps))
				require.Equal(t, TxnVersion2, TxnVersion(storedValue(t, e, "tx").ClientTransactionVersion))
				e.mustProduce(pe, 0, 2)
				e.mustProduce(pe, 1, 3)
				next, err := e.txn.EndTxnV2(ctx, "tx", pe, commit)
				require.NoError(t, err)
				require.Equal(t, ProducerIDAndEpoch{ProducerID: pe.ProducerID, Epoch: pe.Epoch + 1}, next, "round %d", round)
				for p := range int32(2) {
					h, m := lastMarker(t, e.log(p))
					require.Equal(t, pe.ProducerID, h.ProducerID)
					require.Equal(t, next.Epoch, h.ProducerEpoch, "the marker carries the bumped epoch")
					require.Equal(t, map[bool]record.ControlType{true: record.ControlCommit, false: record.ControlAbort}[commit], m.Type)
					require.Equal(t, e.log(p).HighWatermark(), e.log(p).LastStableOffset())
				}
				if commit {
					want += 2
				}
				require.Equal(t, want, committed(t, e.log(0)))
				d, err := e.txn.DescribeTransaction("tx")
				require.NoError(t, err)
				require.Equal(t, next.Epoch, d.ProducerEpoch)
				v := storedValue(t, e, "tx")
				require.Equal(t, next.Epoch, v.ProducerEpoch)
				require.Equal(t, int16(TxnVersion2), v.ClientTransactionVersion)
				require.Equal(t, pe.ProducerID, v.PreviousProducerID)
				require.Equal(t, int64(txncodec.NoProducerID), v.NextProducerID)
				// The old epoch's late batch is refused by the log.
				_, err = e.produce(pe, 0, 1, true)
				requireFencedInLog(t, err)
				pe = next
			}
		})
	}
}

// TestEndTxnV2Retries: Kafka's answers to an EndTxn v5 after the end it
// repeats completed, and to the epochs around it.
func TestEndTxnV2Retries(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	pe := e.init("tx")
	require.NoError(t, e.txn.AddPartitionsV2(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}))
	e.mustProduce(pe, 0, 2)
	next, err := e.txn.EndTxnV2(ctx, "tx", pe, true)
	require.NoError(t, err)
	end := e.log(0).LogEndOffset()

	got, err := e.txn.EndTxnV2(ctx, "tx", pe, true)
	require.NoError(t, err, "a retried commit succeeds")
	require.Equal(t, next, got, "with the epoch the first answer gave")
	require.Equal(t, end, e.log(0).LogEndOffset(), "and writes no marker")
	_, err = e.txn.EndTxnV2(ctx, "tx", pe, false)
	require.ErrorIs(t, err, ErrInvalidTxnState, "a retry asking the other result")
	require.ErrorIs(t, e.txn.EndTxn(ctx, "tx", pe, true), ErrProducerFenced, "a version 1 end with the epoch a version 2 end bumped")
	for _, epoch := range []int16{pe.Epoch - 1, next.Epoch + 1} {
		_, err = e.txn.EndTxnV2(ctx, "tx", ProducerIDAndEpoch{ProducerID: pe.ProducerID, Epoch: epoch}, true)
		require.ErrorIs(t, err, ErrProducerFenced, "epoch %d", epoch)
	}
	_, err = e.txn.EndTxnV2(ctx, "tx", ProducerIDAndEpoch{ProducerID: pe.ProducerID + 7, Epoch: next.Epoch}, true)
	require.ErrorIs(t, err, ErrProducerFenced, "another producer id")

	// With the current epoch: a commit has nothing to commit; an abort
	// ends an empty transaction, bumping the epoch, without markers.
	_, err = e.txn.EndTxnV2(ctx, "tx", next, true)
	require.ErrorIs(t, err, ErrInvalidTxnState)
	after, err := e.txn.EndTxnV2(ctx, "tx", next, false)
	require.NoError(t, err)
	require.Equal(t, next.Epoch+1, after.Epoch)
	require.Equal(t, end, e.log(0).LogEndOffset())
	got, err = e.txn.EndTxnV2(ctx, "tx", next, false)
	require.NoError(t, err, "the retried abort")
	require.Equal(t, after, got)

	// State Empty (after InitProducerID): an abort bumps, a commit fails.
	pe = e.init("tx")
	_, err = e.txn.EndTxnV2(ctx, "tx", pe, true)
	require.ErrorIs(t, err, ErrInvalidTxnState)
	got, err = e.txn.EndTxnV2(ctx, "tx", pe, false)
	require.NoError(t, err)
	require.Equal(t, pe.Epoch+1, got.Epoch)
	_, err = e.txn.EndTxnV2(ctx, "nobody", pe, true)
	require.ErrorIs(t, err, ErrTransactionalIDNotFound)
}

// TestEndTxnV2EpochOverflow: at epoch 32766 a version 2 end writes its
// markers with epoch 32767 and gives a new producer id with epoch 0; the
// retry of that end, with the old id, succeeds with the new one, also
// after a crash, and the old id is fenced.
func TestEndTxnV2EpochOverflow(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	e.init("tx")
	pe := setEpoch(t, e, "tx", math.MaxInt16-1)
	require.NoError(t, e.txn.AddPartitionsV2(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}))
	e.mustProduce(pe, 0, 2)
	next, err := e.txn.EndTxnV2(ctx, "tx", pe, true)
	require.NoError(t, err)
	require.NotEqual(t, pe.ProducerID, next.ProducerID)
	require.Zero(t, next.Epoch)
	h, m := lastMarker(t, e.log(0))
	require.Equal(t, record.ControlCommit, m.Type)
	require.Equal(t, pe.ProducerID, h.ProducerID)
	require.Equal(t, int16(math.MaxInt16), h.ProducerEpoch)
	require.Equal(t, 2, committed(t, e.log(0)))
	v := storedValue(t, e, "tx")
	require.Equal(t, next.ProducerID, v.ProducerID)
	require.Equal(t, pe.ProducerID, v.PreviousProducerID)

	e.crash()
	got, err := e.txn.EndTxnV2(ctx, "tx", pe, true)
	require.NoError(t, err, "the retry after the overflow")
	require.Equal(t, next, got)
	require.ErrorIs(t, e.txn.AddPartitionsV2(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}}), ErrProducerFenced)
	require.NoError(t, e.txn.AddPartitionsV2(ctx, "tx", next, []TopicPartition{{Topic: "t", Partition: 0}}))
	e.mustProduce(next, 0, 1)
	got, err = e.txn.EndTxnV2(ctx, "tx", next, true)
	require.NoError(t, err)
	require.Equal(t, ProducerIDAndEpoch{ProducerID: next.ProducerID, Epoch: 1}, got)
	require.Equal(t, 3, committed(t, e.log(0)))
}

// TestEndTxnV2CrashAfterPrepare: a version 2 end stopped between its
// prepared state (with the next producer id when the epoch overflows) and
// its markers is completed by the retry, by a restart, or by the
// coordinator's goroutine, with the same bumped epoch.
func TestEndTxnV2CrashAfterPrepare(t *testing.T) {
	for _, overflow := range []bool{false, true} {
		for _, how := range []string{"retry", "restart"} {
			t.Run(map[bool]string{false: "bump", true: "overflow"}[overflow]+"/"+how, func(t *testing.T) {
				e := newTxnEnv(t, nil)
				ctx := context.Background()
				pe := e.init("tx")
				if overflow {
					pe = setEpoch(t, e, "tx", math.MaxInt16-1)
				}
				require.NoError(t, e.txn.AddPartitionsV2(ctx, "tx", pe, []TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}))
				e.mustProduce(pe, 0, 1)
				e.mustProduce(pe, 1, 1)
				hook := func() error { return errCrash }
				e.txn.afterPrepare.Store(&hook)
				_, err := e.txn.EndTxnV2(ctx, "tx", pe, true)
				require.ErrorIs(t, err, errCrash)
				e.txn.afterPrepare.Store(nil)
				prepared := storedValue(t, e, "tx")
				require.Equal(t, txncodec.StatusPrepareCommit, prepared.TransactionStatus)
				require.Equal(t, pe.Epoch+1, prepared.ProducerEpoch)
				if overflow {
					require.NotEqual(t, int64(txncodec.NoProducerID), prepared.NextProducerID, "the next producer id is kept in the prepared state")
				}
				var got ProducerIDAndEpoch
				if how == "retry" {
					got, err = e.txn.EndTxnV2(ctx, "tx", pe, true)
					require.NoError(t, err)
				} else {
					e.crash()
					d, err := e.txn.DescribeTransaction("tx")
					require.NoError(t, err)
					require.Equal(t, TxnCompleteCommit, d.State)
					got = ProducerIDAndEpoch{ProducerID: d.ProducerID, Epoch: d.ProducerEpoch}
				}
				want := ProducerIDAndEpoch{ProducerID: pe.ProducerID, Epoch: pe.Epoch + 1}
				if overflow {
					want = ProducerIDAndEpoch{ProducerID: prepared.NextProducerID, Epoch: 0}
				}
				require.Equal(t, want, got)
				for p := range int32(2) {
					h, _ := lastMarker(t, e.log(p))
					require.Equal(t, pe.Epoch+1, h.ProducerEpoch)
					require.Equal(t, 1, committed(t, e.log(p)))
				}
			})
		}
	}
}

// TestMixedTransactionVersions: the version is the transaction's latest
// request's, as Kafka's coordinator keeps it: a version 1 transaction
// ended with a version 2 end is bumped, a version 2 one ended with a
// version 1 end is not, and a request of the old epoch after a bump is
// fenced.
func TestMixedTransactionVersions(t *testing.T) {
	e := newTxnEnv(t, nil)
	ctx := context.Background()
	pe := e.init("tx")
	tps := []TopicPartition{{Topic: "t", Partition: 0}}

	require.NoError(t, e.txn.AddPartitions(ctx, "tx", pe, tps))
	require.Equal(t, int16(TxnVersion0), storedValue(t, e, "tx").ClientTransactionVersion)
	e.mustProduce(pe, 0, 1)
	next, err := e.txn.EndTxnV2(ctx, "tx", pe, true)
	require.NoError(t, err)
	require.Equal(t, pe.Epoch+1, next.Epoch)
	require.ErrorIs(t, e.txn.AddPartitions(ctx, "tx", pe, tps), ErrProducerFenced, "a version 1 add with the epoch before the bump")

	require.NoError(t, e.txn.AddPartitionsV2(ctx, "tx", next, tps))
	e.mustProduce(next, 0, 1)
	require.NoError(t, e.txn.EndTxn(ctx, "tx", next, true))
	v := storedValue(t, e, "tx")
	require.Equal(t, next.Epoch, v.ProducerEpoch, "a version 1 end does not bump")
	require.Equal(t, int16(TxnVersion0), v.ClientTransactionVersion)
	h, _ := lastMarker(t, e.log(0))
	require.Equal(t, next.Epoch, h.ProducerEpoch)
	require.Equal(t, 2, committed(t, e.log(0)))

	// AddOffsetsV2 adds the group's partition at version 2.
	require.NoError(t, e.txn.AddOffsetsV2(ctx, "tx", next, "g"))
	require.Equal(t, int16(TxnVersion2), storedValue(t, e, "tx").ClientTransactionVersion)
	require.NoError(t, e.groups.TxnCommitOffsets(ctx, "tx", next, GroupMetadata{GroupID: "g", GenerationID: -1},
		map[TopicPartition]OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 2}}))
	last, err := e.txn.EndTxnV2(ctx, "tx", next, true)
	require.NoError(t, err)
	require.Equal(t, next.Epoch+1, last.Epoch)
	require.Equal(t, int64(2), e.groups.FetchOffsets("g", nil)[TopicPartition{Topic: "t", Partition: 0}].Offset)
	require.ErrorIs(t, e.txn.AddPartitionsV2(ctx, "tx", pe, []TopicPartition{{Topic: "__consumer_offsets", Partition: 0}}), log.ErrInternalTopic)
}
