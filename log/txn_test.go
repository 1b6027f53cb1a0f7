package log

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// idemBatch builds an idempotent (or, with txn, transactional) producer
// batch of n records with values "<tag>-<i>".
func idemBatch(t testing.TB, pid int64, epoch int16, seq int32, n int, txn bool, tag string) []byte {
	t.Helper()
	return idemBatchAt(t, pid, epoch, seq, n, txn, tag, 1_800_000_000_000)
}

// idemBatchAt is idemBatch with records of timestamp ts.
func idemBatchAt(t testing.TB, pid int64, epoch int16, seq int32, n int, txn bool, tag string, ts int64) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithTransactional(txn),
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, record.DefaultLevel)
	for i := range n {
		require.NoError(t, b.Append(ts, []byte("k"), fmt.Appendf(nil, "%s-%d", tag, i), nil))
	}
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

// appendTxn appends a transactional batch after verifying its producer's
// transaction (as the coordinator's AddPartitions does), and returns the
// append's result.
func appendTxn(t testing.TB, l *Log, batch []byte) AppendResult {
	t.Helper()
	h, err := record.ParseHeader(batch)
	require.NoError(t, err)
	require.NoError(t, l.VerifyTransaction(access.Internal{}, h.ProducerID, h.ProducerEpoch))
	res, err := l.Append(batch)
	require.NoError(t, err)
	return res
}

func newTxnLog(t *testing.T) (*env, *Dir, *Log) {
	t.Helper()
	e := newEnv(t)
	d := e.open(t)
	t.Cleanup(func() { _ = d.Close() })
	createTopic(t, d, "t", 1, nil)
	return e, d, partition(t, d, "t", 0)
}

func values(t *testing.T, l *Log, committed bool) []string {
	t.Helper()
	var out []string
	read := l.ReadRecords
	if committed {
		read = l.ReadCommittedRecords
	}
	for from := l.LogStartOffset(); ; {
		next, err := read(from, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
			out = append(out, string(rec.Value))
			return nil
		})
		require.NoError(t, err)
		if next == from {
			return out
		}
		from = next
	}
}

func TestIdempotentDuplicateIsNotWritten(t *testing.T) {
	_, _, l := newTxnLog(t)
	first, err := l.Append(idemBatch(t, 7, 0, 0, 3, false, "a"))
	require.NoError(t, err)
	_, err = l.Append(idemBatch(t, 7, 0, 3, 2, false, "b"))
	require.NoError(t, err)
	dup, err := l.Append(idemBatch(t, 7, 0, 0, 3, false, "a"))
	require.NoError(t, err)
	require.True(t, dup.Duplicate)
	require.Equal(t, first.BaseOffset, dup.BaseOffset)
	require.Equal(t, first.LastOffset, dup.LastOffset)
	require.Equal(t, int64(5), l.LogEndOffset(), "a duplicate is not written")
	require.Equal(t, []string{"a-0", "a-1", "a-2", "b-0", "b-1"}, values(t, l, false))
}

func TestIdempotentChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pid   int64
		epoch int16
		seq   int32
		txn   bool
		err   error
	}{
		{"next sequence", 7, 1, 5, false, nil},
		{"gap", 7, 1, 6, false, ErrOutOfOrderSequence},
		{"replayed older batch outside the cache range", 7, 1, 1, false, ErrOutOfOrderSequence},
		{"stale epoch", 7, 0, 5, false, ErrInvalidProducerEpoch},
		{"new epoch starts at 0", 7, 2, 0, false, nil},
		{"new epoch not at 0", 7, 2, 5, false, ErrOutOfOrderSequence},
		{"unknown producer, any sequence", 8, 0, 42, false, nil},
		{"transactional without verification", 9, 0, 0, true, ErrInvalidTxnState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, l := newTxnLog(t)
			_, err := l.Append(idemBatch(t, 7, 1, 0, 5, false, "x")) // sequences 0..4
			require.NoError(t, err)
			leo := l.LogEndOffset()
			_, err = l.Append(idemBatch(t, tc.pid, tc.epoch, tc.seq, 1, tc.txn, "y"))
			if tc.err == nil {
				require.NoError(t, err)
				require.Equal(t, leo+1, l.LogEndOffset())
				return
			}
			require.ErrorIs(t, err, tc.err)
			var pe *PartitionError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, leo, l.LogEndOffset(), "a refused batch is not written")
		})
	}
}

func TestSequenceWrapsPastMaxInt32(t *testing.T) {
	_, _, l := newTxnLog(t)
	_, err := l.Append(idemBatch(t, 3, 0, math.MaxInt32-1, 2, false, "a")) // MaxInt32-1, MaxInt32
	require.NoError(t, err)
	_, err = l.Append(idemBatch(t, 3, 0, 0, 1, false, "b"))
	require.NoError(t, err)
	res, err := l.Append(idemBatch(t, 3, 0, 0, 1, false, "b"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	require.Equal(t, 0, incrementSequenceCheck())
}

// incrementSequenceCheck cross-checks the wrap arithmetic both ways.
func incrementSequenceCheck() int {
	bad := 0
	for _, c := range []struct{ seq, delta int32 }{{0, 0}, {5, 3}, {math.MaxInt32, 1}, {math.MaxInt32 - 2, 5}, {math.MaxInt32, 0}} {
		if decrementSequence(incrementSequence(c.seq, c.delta), c.delta) != c.seq {
			bad++
		}
	}
	return bad
}

func TestDuplicateCacheKeepsFiveBatches(t *testing.T) {
	_, _, l := newTxnLog(t)
	for i := range 6 {
		_, err := l.Append(idemBatch(t, 1, 0, int32(i), 1, false, fmt.Sprint(i)))
		require.NoError(t, err)
	}
	// Batches 1..5 are remembered; batch 0 fell out of the cache and is
	// now simply out of order.
	res, err := l.Append(idemBatch(t, 1, 0, 1, 1, false, "1"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	require.Equal(t, int64(1), res.BaseOffset)
	_, err = l.Append(idemBatch(t, 1, 0, 0, 1, false, "0"))
	require.ErrorIs(t, err, ErrOutOfOrderSequence)
}

func TestTransactionCommitAbortAndLSO(t *testing.T) {
	_, _, l := newTxnLog(t)
	_, err := l.Append(producerBatch(t, 1, 1, 1_800_000_000_000, record.None)) // offset 0, plain
	require.NoError(t, err)

	// Producer 1 opens a transaction at offset 1, producer 2 at offset 3.
	require.NoError(t, l.VerifyTransaction(access.Internal{}, 1, 0))
	require.NoError(t, l.VerifyTransaction(access.Internal{}, 2, 0))
	_, err = l.Append(idemBatch(t, 1, 0, 0, 2, true, "p1"))
	require.NoError(t, err)
	require.Equal(t, int64(1), l.LastStableOffset())
	_, err = l.Append(idemBatch(t, 2, 0, 0, 2, true, "p2"))
	require.NoError(t, err)
	require.Equal(t, int64(1), l.LastStableOffset())
	require.Empty(t, values(t, l, true)[1:], "read_committed stops at the first open transaction")
	require.Len(t, values(t, l, false), 5)

	// A non-transactional batch inside the open transaction is refused.
	_, err = l.Append(idemBatch(t, 1, 0, 2, 1, false, "x"))
	require.ErrorIs(t, err, ErrInvalidTxnState)

	// Producer 1 aborts: its data is hidden; the LSO moves to producer 2's
	// transaction, which the .txnindex entry records.
	abort, err := l.AppendTxnMarker(access.Internal{}, 1, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	require.Equal(t, int64(5), abort.BaseOffset)
	require.Equal(t, int64(3), l.LastStableOffset())
	aborted, err := l.AbortedTransactions(0, l.LogEndOffset())
	require.NoError(t, err)
	require.Equal(t, []index.AbortedTxn{{ProducerID: 1, FirstOffset: 1, LastOffset: 5, LastStableOffset: 3}}, aborted)

	// Producer 2 commits.
	_, err = l.AppendTxnMarker(access.Internal{}, 2, 0, record.EndTxnMarker{Type: record.ControlCommit})
	require.NoError(t, err)
	require.Equal(t, l.HighWatermark(), l.LastStableOffset())
	require.Equal(t, []string{"v", "p2-0", "p2-1"}, values(t, l, true))
	require.Equal(t, []string{"v", "p1-0", "p1-1", "p2-0", "p2-1"}, values(t, l, false), "read_uncommitted sees all data, no markers")

	// After the marker a transactional batch needs a new verification.
	_, err = l.Append(idemBatch(t, 2, 0, 2, 1, true, "late"))
	require.ErrorIs(t, err, ErrInvalidTxnState)
	infos := l.Producers()
	require.Len(t, infos, 2)
	require.Equal(t, int64(-1), infos[0].CurrentTxnStartOffset)
}

func TestAbortedTransactionsAcrossProducerReuse(t *testing.T) {
	_, _, l := newTxnLog(t)
	// The same producer aborts, commits, then aborts again.
	seq := int32(0)
	for i, typ := range []record.ControlType{record.ControlAbort, record.ControlCommit, record.ControlAbort} {
		appendTxn(t, l, idemBatch(t, 4, 0, seq, 2, true, fmt.Sprint(i)))
		seq += 2
		_, err := l.AppendTxnMarker(access.Internal{}, 4, 0, record.EndTxnMarker{Type: typ})
		require.NoError(t, err)
	}
	require.Equal(t, []string{"1-0", "1-1"}, values(t, l, true))
}

func TestMarkerFencing(t *testing.T) {
	_, _, l := newTxnLog(t)
	appendTxn(t, l, idemBatch(t, 5, 3, 0, 1, true, "a"))
	_, err := l.AppendTxnMarker(access.Internal{}, 5, 2, record.EndTxnMarker{Type: record.ControlCommit})
	require.ErrorIs(t, err, ErrInvalidProducerEpoch)
	_, err = l.AppendTxnMarker(access.Internal{}, 5, 3, record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 4})
	require.NoError(t, err)
	_, err = l.AppendTxnMarker(access.Internal{}, 5, 3, record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 3})
	require.ErrorIs(t, err, ErrTransactionCoordinatorFenced)
	// A marker of a bumped epoch (the coordinator fencing a producer)
	// makes the old epoch's batches stale.
	_, err = l.AppendTxnMarker(access.Internal{}, 5, 4, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 4})
	require.NoError(t, err)
	_, err = l.Append(idemBatch(t, 5, 3, 1, 1, false, "zombie"))
	require.ErrorIs(t, err, ErrInvalidProducerEpoch)
	require.ErrorIs(t, l.VerifyTransaction(access.Internal{}, 5, 3), ErrInvalidProducerEpoch)
}

func TestProducerStateSurvivesReopen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash bool
	}{{"clean close", false}, {"crash after sync", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			d := e.open(t)
			createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "300"})
			l := partition(t, d, "t", 0)
			for i := range 6 { // several rolls, so several snapshots
				_, err := l.Append(idemBatch(t, 9, 0, int32(i*2), 2, false, fmt.Sprint(i)))
				require.NoError(t, err)
			}
			appendTxn(t, l, idemBatch(t, 10, 0, 0, 1, true, "open"))
			lso := l.LastStableOffset()
			if tc.crash {
				require.NoError(t, l.Flush(context.Background()))
				e.crash()
			} else {
				require.NoError(t, d.Close())
			}
			d = e.open(t)
			defer d.Close()
			l = partition(t, d, "t", 0)
			require.Equal(t, lso, l.LastStableOffset(), "the open transaction survives")
			res, err := l.Append(idemBatch(t, 9, 0, 10, 2, false, "5"))
			require.NoError(t, err)
			require.True(t, res.Duplicate, "the latest batch is remembered")
			_, err = l.Append(idemBatch(t, 9, 0, 13, 1, false, "gap"))
			require.ErrorIs(t, err, ErrOutOfOrderSequence)
			_, err = l.AppendTxnMarker(access.Internal{}, 10, 0, record.EndTxnMarker{Type: record.ControlAbort})
			require.NoError(t, err)
			require.Equal(t, l.HighWatermark(), l.LastStableOffset())
			require.NotContains(t, values(t, l, true), "open-0")
		})
	}
}

func TestCorruptSnapshotIsRebuiltFromTheLog(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	_, err := l.Append(idemBatch(t, 9, 0, 0, 2, false, "a"))
	require.NoError(t, err)
	require.NoError(t, d.Close())
	path := filepath.Join("/data", "t-0", snapshot.FileName(2))
	f, err := e.mem.OpenReadWrite(path)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xff}, 12)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	d = e.open(t)
	defer d.Close()
	l = partition(t, d, "t", 0)
	res, err := l.Append(idemBatch(t, 9, 0, 0, 2, false, "a"))
	require.NoError(t, err)
	require.True(t, res.Duplicate, "the state was rebuilt from the log")
}

func TestTxnIndexEntryRestoredAfterCrash(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	appendTxn(t, l, idemBatch(t, 3, 0, 0, 2, true, "x"))
	_, err := l.AppendTxnMarker(access.Internal{}, 3, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	// The marker reached the .log but the .txnindex entry did not (a
	// crash between the two writes): recovery must restore the entry.
	require.NoError(t, l.Flush(context.Background()))
	e.crash()
	require.NoError(t, e.mem.Remove(filepath.Join("/data", "t-0", "00000000000000000000.txnindex")))

	d = e.open(t)
	defer d.Close()
	l = partition(t, d, "t", 0)
	aborted, err := l.AbortedTransactions(0, l.LogEndOffset())
	require.NoError(t, err)
	require.Equal(t, []index.AbortedTxn{{ProducerID: 3, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}}, aborted)
	require.Empty(t, values(t, l, true))
}

func TestTruncationReloadsProducerState(t *testing.T) {
	_, _, l := newTxnLog(t)
	_, err := l.Append(idemBatch(t, 9, 0, 0, 2, false, "a"))
	require.NoError(t, err)
	appendTxn(t, l, idemBatch(t, 9, 0, 2, 2, true, "b"))
	require.Equal(t, int64(2), l.LastStableOffset())
	require.NoError(t, l.TruncateTo(2))
	require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "the truncated transaction is gone")
	_, err = l.Append(idemBatch(t, 9, 0, 2, 1, false, "c"))
	require.NoError(t, err, "sequence 2 follows again")
}

func TestProducerExpiry(t *testing.T) {
	e, _, l := newTxnLog(t)
	_, err := l.Append(idemBatch(t, 9, 0, 0, 1, false, "a"))
	require.NoError(t, err)
	appendTxn(t, l, idemBatch(t, 10, 0, 0, 1, true, "b"))
	e.clock.Add(25 * time.Hour) // past producer.id.expiration.ms; the record timestamps are older still
	require.Equal(t, 1, l.ExpireProducers(), "only the producer without an open transaction expires")
	infos := l.Producers()
	require.Len(t, infos, 1)
	require.Equal(t, int64(10), infos[0].ProducerID)
	// An expired producer's next batch is accepted with any sequence.
	_, err = l.Append(idemBatch(t, 9, 0, 7, 1, false, "c"))
	require.NoError(t, err)
}

func TestAllocateProducerID(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	seen := map[int64]bool{}
	for range 1500 {
		id, err := d.AllocateProducerID(context.Background())
		require.NoError(t, err)
		require.False(t, seen[id])
		seen[id] = true
	}
	require.NoError(t, d.Close())
	d = e.open(t)
	id, err := d.AllocateProducerID(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, id, int64(2000), "a restart starts at the next unreserved block")
	require.NoError(t, d.Close())

	// Ids start above any a partition remembers (a directory whose
	// allocator file is gone).
	e = newEnv(t)
	d = e.open(t)
	createTopic(t, d, "t", 1, nil)
	_, err = partition(t, d, "t", 0).Append(idemBatch(t, 5000, 0, 0, 1, false, "a"))
	require.NoError(t, err)
	id, err = d.AllocateProducerID(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(5001), id)
	require.NoError(t, d.Close())
	_, err = d.AllocateProducerID(context.Background())
	require.ErrorIs(t, err, ErrClosed)
}

// TestRollSnapshotIsSyncedByTheNextFlush: the snapshot a roll writes is not
// synced at once (as in Kafka): a machine crash before the next flush loses
// it (the state is then rebuilt from the log); the flush makes it durable.
func TestRollSnapshotIsSyncedByTheNextFlush(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "200"})
	l := partition(t, d, "t", 0)
	for i := range 3 {
		_, err := l.Append(idemBatch(t, 9, 0, int32(i*2), 2, false, fmt.Sprint(i)))
		require.NoError(t, err)
	}
	require.Greater(t, len(l.local.segs()), 1, "the log rolled")
	name := filepath.Join("/data", "t-0", snapshot.FileName(l.producers.snapshotOffset))
	_, err := e.mem.Stat(name)
	require.NoError(t, err, "the roll wrote the snapshot")
	_, err = e.mem.CrashClone().Stat(name)
	require.Error(t, err, "not yet durable")

	require.NoError(t, l.Flush(context.Background()))
	_, err = e.mem.CrashClone().Stat(name)
	require.NoError(t, err, "the flush synced it")
	e.crash()
	d = e.open(t)
	defer d.Close()
	l = partition(t, d, "t", 0)
	res, err := l.Append(idemBatch(t, 9, 0, 4, 2, false, "2"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
}

// TestMarkerWithoutOpenTransaction: a marker for a producer with no
// transaction open in the partition (the coordinator writing a
// transaction's markers again after a crash between them, or a marker for
// a transaction without data here) is accepted and ends nothing, as in
// Kafka's ProducerAppendInfo.appendEndTxnMarker: no second .txnindex entry,
// the LSO and the read_committed view unchanged, also after recovery
// replays it.
func TestMarkerWithoutOpenTransaction(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	appendTxn(t, l, idemBatch(t, 3, 0, 0, 2, true, "a")) // offsets 0, 1
	for i := range 2 {
		res, err := l.AppendTxnMarker(access.Internal{}, 3, 0, record.EndTxnMarker{Type: record.ControlAbort})
		require.NoError(t, err, "marker %d", i)
		require.Equal(t, int64(2+i), res.BaseOffset)
	}
	_, err := l.AppendTxnMarker(access.Internal{}, 4, 0, record.EndTxnMarker{Type: record.ControlCommit})
	require.NoError(t, err, "a marker for a producer the partition never saw")
	want := []index.AbortedTxn{{ProducerID: 3, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}}
	check := func() {
		t.Helper()
		aborted, err := l.AbortedTransactions(0, l.LogEndOffset())
		require.NoError(t, err)
		require.Equal(t, want, aborted)
		require.Equal(t, l.HighWatermark(), l.LastStableOffset())
		require.Empty(t, values(t, l, true))
	}
	check()
	require.NoError(t, l.Flush(context.Background()))
	e.crash()
	require.NoError(t, d.Close()) // on the old filesystem
	d = e.open(t)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	l = partition(t, d, "t", 0)
	check()

	// The producer's next transaction is not affected.
	appendTxn(t, l, idemBatch(t, 3, 0, 2, 1, true, "b"))
	_, err = l.AppendTxnMarker(access.Internal{}, 3, 0, record.EndTxnMarker{Type: record.ControlCommit})
	require.NoError(t, err)
	require.Equal(t, []string{"b-0"}, values(t, l, true))
	aborted, err := l.AbortedTransactions(0, l.LogEndOffset())
	require.NoError(t, err)
	require.Equal(t, want, aborted)
}

// TestCoordinatorBatchesAllHaveSequenceZero: Kafka's coordinators write
// every batch with base sequence 0 (CoordinatorRuntime), and Kafka's log
// appends them as AppendOrigin.COORDINATOR: the producer's epoch is checked,
// its sequence is not, and no batch is taken for a duplicate
// (ProducerAppendInfo checks sequences, UnifiedLog looks for duplicates,
// of client batches only). AppendInternal is that append; Append, a
// client's, still refuses or deduplicates the same batches.
func TestCoordinatorBatchesAllHaveSequenceZero(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	t.Cleanup(func() { _ = d.Close() })
	parts, err := d.InternalTopic(access.Internal{}, context.Background(), "__consumer_offsets", 1, map[string]string{"cleanup.policy": "compact"})
	require.NoError(t, err)
	l := parts[0]
	require.NoError(t, l.VerifyTransaction(access.Internal{}, 5, 1))
	for i, n := range []int{2, 1, 3} {
		res, err := l.AppendInternal(access.Internal{}, idemBatch(t, 5, 1, 0, n, true, fmt.Sprint("c", i)))
		require.NoError(t, err, "coordinator batch %d", i)
		require.False(t, res.Duplicate, "coordinator batch %d is written, not a duplicate", i)
	}
	require.Equal(t, int64(6), l.LogEndOffset())
	infos := l.Producers()
	require.Len(t, infos, 1)
	require.Equal(t, int32(2), infos[0].LastSequence, "the state holds the last batch's sequences, 0..2")
	require.Equal(t, int64(0), infos[0].CurrentTxnStartOffset)
	_, err = l.AppendInternal(access.Internal{}, idemBatch(t, 5, 0, 0, 1, true, "stale"))
	require.ErrorIs(t, err, ErrInvalidProducerEpoch, "the epoch is still checked")

	_, _, cl := newTxnLog(t)
	_, err = cl.Append(idemBatch(t, 5, 1, 0, 2, false, "c0"))
	require.NoError(t, err)
	res, err := cl.Append(idemBatch(t, 5, 1, 0, 2, false, "c0"))
	require.NoError(t, err)
	require.True(t, res.Duplicate, "a client's repeated batch is a duplicate")
	_, err = cl.Append(idemBatch(t, 5, 1, 0, 1, false, "c1"))
	require.ErrorIs(t, err, ErrOutOfOrderSequence, "a client's sequence is checked")
}
