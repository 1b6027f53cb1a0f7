package log

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// The services a Log is made of, each tested alone: no Dir, no Log.

var quiet = slog.New(slog.DiscardHandler)

// openLocalLog opens /p of mem as a partition's local log (made empty if
// it has no segment).
func openLocalLog(t *testing.T, mem *vfs.MemFS, cfg TopicConfig, now func() time.Time) *localLog {
	t.Helper()
	require.NoError(t, mem.MkdirAll("/p"))
	ll := newLocalLog(TopicPartition{Topic: "t"}, "/p", mem, cfg, quiet, now)
	var st recoveryStats
	require.NoError(t, ll.open(loadOptions{clean: true}, &st, map[*segment.Segment]bool{}))
	t.Cleanup(func() { _ = closeAll(ll.segs(), nil) })
	return ll
}

// appendTo writes batch at the local log's end as the Log's append does,
// less its other services: the offsets, a roll if due, the write, the
// publication. It returns the batch's header and segment.
func appendTo(t *testing.T, ll *localLog, batch []byte) (record.BatchHeader, *segment.Segment) {
	t.Helper()
	require.NoError(t, record.SetBaseOffset(batch, ll.logEndOffset.Load()))
	h, err := record.Validate(batch)
	require.NoError(t, err)
	roll, err := ll.shouldRollLocked(&h, len(batch))
	require.NoError(t, err)
	if roll {
		require.NoError(t, ll.rollLocked(h.BaseOffset))
	}
	seg := ll.active()
	require.NoError(t, seg.Append(batch, &h))
	ll.publishLocked(seg, &h)
	return h, seg
}

// TestLocalLogAlone: a localLog opens an empty directory with one
// segment, rolls at segment.bytes, reads and finds timestamps across its
// segments, flushes (the recovery point moves to the end), removes its
// oldest segments and their files after the delay, truncates, and after a
// storage failure refuses writes and flushes.
func TestLocalLogAlone(t *testing.T) {
	mem := vfs.NewMem()
	clk := newClock()
	cfg := DefaultTopicConfig()
	cfg.SegmentBytes = 1000
	ll := openLocalLog(t, mem, cfg, clk.Now)
	require.Len(t, ll.segs(), 1)
	require.Zero(t, ll.logEndOffset.Load())
	ts := clk.Now().UnixMilli()
	for i := range 10 {
		appendTo(t, ll, producerBatch(t, 2, 100, ts+int64(i), record.None))
	}
	require.Equal(t, int64(20), ll.logEndOffset.Load())
	segs := ll.segs()
	require.Greater(t, len(segs), 2, "rolled at segment.bytes")

	sl, how, err := ll.read(7, 1<<20, true, func() int64 { return 0 })
	require.NoError(t, err)
	require.Equal(t, readDone, how)
	require.LessOrEqual(t, sl.FirstOffset, int64(7))
	require.GreaterOrEqual(t, sl.LastOffset, int64(7))
	sl.Release()
	got, ok, err := ll.offsetForTimestamp(ts+5, 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(10), got.Offset, "the sixth batch")
	got, ok, err = ll.maxTimestampOffset(0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(18), got.Offset)

	ps := newProducerStateManager(ll.tp, ll.dir, mem, quiet, clk.Now, -1)
	w, err := ll.beginFlushLocked(ps)
	require.NoError(t, err)
	rp, err := ll.syncFlush(w, ll.logEndOffset.Load(), true)
	require.NoError(t, err)
	ll.flushed(ll.logEndOffset.Load(), rp, true)
	require.Equal(t, int64(20), ll.recoveryPoint.Load())
	require.Equal(t, int64(20), ll.durable.Load())

	n, err := ll.countWhile(func(s, next *segment.Segment) (bool, error) { return next != nil && next.BaseOffset() <= 8, nil })
	require.NoError(t, err)
	require.Positive(t, n)
	gone := segs[0].LogFile()
	var res RetentionResult
	first, err := ll.removeOldestLocked(n, &res)
	require.NoError(t, err)
	require.Equal(t, n, res.SegmentsDeleted)
	require.Equal(t, ll.startOffset(), first)
	require.LessOrEqual(t, first, int64(8))
	require.NoError(t, ll.removeDeletedLocked(false))
	_, err = mem.Stat(gone + segment.DeletedSuffix)
	require.NoError(t, err, "kept for file.delete.delay.ms")
	clk.Add(cfg.FileDeleteDelay)
	require.NoError(t, ll.removeDeletedLocked(false))
	_, err = mem.Stat(gone + segment.DeletedSuffix)
	require.True(t, isNotExist(err), "removed after the delay: %v", err)

	next, err := ll.truncateToLocked(15)
	require.NoError(t, err)
	require.Equal(t, int64(14), next, "cut at the batch holding 15")
	require.Equal(t, int64(14), ll.logEndOffset.Load())
	require.Equal(t, int64(14), ll.recoveryPoint.Load())

	require.NoError(t, ll.writableLocked())
	ll.failLocked("a test failure", "", errors.New("disk gone"))
	require.ErrorIs(t, ll.writableLocked(), ErrStorage)
	_, err = ll.beginFlushLocked(ps)
	require.ErrorIs(t, err, ErrStorage, "no fsync after a failure")
}

// TestProducerStateManagerAlone: the producer state finds duplicates,
// opens a transaction on the coordinator's word only, moves the last
// stable offset, writes an abort's .txnindex entry, snapshots at a roll
// (to be synced by the next flush), reloads from its snapshot and the log
// after it, expires idle producers and deletes snapshots.
func TestProducerStateManagerAlone(t *testing.T) {
	mem := vfs.NewMem()
	clk := newClock()
	ll := openLocalLog(t, mem, DefaultTopicConfig(), clk.Now)
	m := newProducerStateManager(ll.tp, ll.dir, mem, quiet, clk.Now, time.Hour)
	apply := func(batch []byte, client bool) {
		t.Helper()
		b := bytes.Clone(batch)
		require.NoError(t, record.SetBaseOffset(b, 0))
		h, err := record.Validate(b)
		require.NoError(t, err)
		if client {
			_, dup, err := m.checkLeader(&h, originClient)
			require.NoError(t, err)
			require.False(t, dup)
		}
		h, seg := appendTo(t, ll, b)
		_, err = m.update(seg, b, &h, false)
		require.NoError(t, err)
	}
	data := idemBatch(t, 7, 0, 0, 2, false, "x")
	apply(data, true)
	h, err := record.ParseHeader(data)
	require.NoError(t, err)
	orig, dup, err := m.checkLeader(&h, originClient)
	require.NoError(t, err)
	require.True(t, dup, "the same batch again")
	require.Equal(t, int64(0), orig.firstOffset)

	txn := idemBatch(t, 8, 0, 0, 2, true, "t")
	th, err := record.ParseHeader(txn)
	require.NoError(t, err)
	_, _, err = m.checkLeader(&th, originClient)
	require.ErrorIs(t, err, ErrInvalidTxnState, "no transaction without the coordinator's word")
	require.NoError(t, m.verify(8, 0))
	apply(txn, true)
	hw := ll.logEndOffset.Load()
	require.Equal(t, int64(2), m.lastStable(hw), "the open transaction's first offset")

	v := newLogValidator(ll.tp, clk.Now, 0)
	marker, mh, err := v.marker(hw, 0, 8, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	mh, seg := appendTo(t, ll, marker)
	created, err := m.update(seg, marker, &mh, false)
	require.NoError(t, err)
	require.True(t, created, "the first entry makes the .txnindex")
	require.Equal(t, ll.logEndOffset.Load(), m.lastStable(ll.logEndOffset.Load()))
	entries, err := segHooks.TxnIndexEntries(seg)
	require.NoError(t, err)
	require.Equal(t, []index.AbortedTxn{{ProducerID: 8, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5}}, entries)

	leo := ll.logEndOffset.Load()
	written, err := m.snapshot(leo, false)
	require.NoError(t, err)
	require.True(t, written)
	require.Equal(t, leo, m.takeUnsyncedLocked(), "the next flush syncs it")
	require.Equal(t, int64(-1), m.takeUnsyncedLocked())
	apply(idemBatch(t, 7, 0, 2, 1, false, "y"), true) // after the snapshot: replayed

	again := newProducerStateManager(ll.tp, ll.dir, mem, quiet, clk.Now, time.Hour)
	created, err = again.reload(ll.segs(), 0, ll.logEndOffset.Load())
	require.NoError(t, err)
	require.False(t, created, "the entry was there")
	require.Equal(t, m.infos(), again.infos())
	require.Equal(t, leo, again.snapshotOffset)

	clk.Add(2 * time.Hour)
	require.Equal(t, 2, m.expire(clk.Now(), m.expiration))
	require.Empty(t, m.infos())
	require.NoError(t, m.deleteSnapshots(math.MaxInt64, -1))
	offsets, err := snapshot.List(mem, ll.dir)
	require.NoError(t, err)
	require.Empty(t, offsets)
}

// TestLeaderEpochCacheAlone: the cache writes leader-epoch-checkpoint at
// every change, answers epochs by offset and end offsets by epoch, and
// truncates from either end; a reopen drops the epochs at or past the log
// end and stamps the latest.
func TestLeaderEpochCacheAlone(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p"))
	tp := TopicPartition{Topic: "t"}
	lc, err := openLeaderEpochCache(tp, mem, "/p", quiet, 0)
	require.NoError(t, err)
	require.Zero(t, lc.latest.Load(), "a new partition's epoch")
	inFile := func() []checkpoint.EpochEntry {
		t.Helper()
		c, err := checkpoint.OpenLeaderEpochCache(mem, filepath.Join("/p", checkpoint.LeaderEpochFile))
		require.NoError(t, err)
		return c.Entries()
	}
	lc.assign(3, 10)
	lc.assign(3, 12)
	lc.assign(-1, 14) // no epoch: nothing
	lc.assign(5, 20)
	require.Equal(t, int32(5), lc.latest.Load())
	require.Equal(t, []checkpoint.EpochEntry{{Epoch: 3, StartOffset: 10}, {Epoch: 5, StartOffset: 20}}, inFile())

	e, ok := lc.epochForOffset(15)
	require.True(t, ok)
	require.Equal(t, int32(3), e)
	_, ok = lc.epochForOffset(5)
	require.False(t, ok)
	epoch, end, err := lc.endOffsetFor(3, 30)
	require.NoError(t, err)
	require.Equal(t, [2]int64{3, 20}, [2]int64{int64(epoch), end})
	epoch, end, err = lc.endOffsetFor(5, 30)
	require.NoError(t, err)
	require.Equal(t, [2]int64{5, 30}, [2]int64{int64(epoch), end}, "the latest epoch ends at the log end")
	require.Equal(t, []remote.EpochStart{{LeaderEpoch: 3, StartOffset: 12}, {LeaderEpoch: 5, StartOffset: 20}}, lc.epochsIn(12, 25))
	require.Equal(t, "0\n2\n3 12\n5 20\n", string(epochCheckpointText(lc.epochsIn(12, 25))))

	lc.truncateFromStart(15)
	require.Equal(t, []checkpoint.EpochEntry{{Epoch: 3, StartOffset: 15}, {Epoch: 5, StartOffset: 20}}, inFile())
	lc.truncateFromEnd(20)
	require.Equal(t, []checkpoint.EpochEntry{{Epoch: 3, StartOffset: 15}}, inFile())

	again, err := openLeaderEpochCache(tp, mem, "/p", quiet, 18)
	require.NoError(t, err)
	require.Equal(t, int32(3), again.latest.Load())
	again, err = openLeaderEpochCache(tp, mem, "/p", quiet, 15)
	require.NoError(t, err)
	require.Empty(t, inFile(), "an epoch starting at the log end goes")
	require.Zero(t, again.latest.Load())
}

// TestLogValidatorAlone: the validator accepts a producer's batch as it
// is, refuses what Kafka's LogValidator refuses, recompresses to the
// topic's codec, asks for the fix of a wrong max timestamp, decides which
// batches overlap their write with their validation, makes the marks of a
// large batch, and encodes the markers it decodes.
func TestLogValidatorAlone(t *testing.T) {
	clk := newClock()
	now := clk.Now().UnixMilli()
	v := newLogValidator(TopicPartition{Topic: "t"}, clk.Now, 64<<10)
	c := DefaultTopicConfig()

	b := producerBatch(t, 3, 10, now, record.None)
	h, out, err := v.validate(b, c)
	require.NoError(t, err)
	require.Same(t, &b[0], &out[0], "as it came")
	require.Equal(t, int32(3), h.RecordsCount)

	moved := bytes.Clone(b)
	require.NoError(t, record.SetBaseOffset(moved, 5))
	_, _, err = v.validate(moved, c)
	require.ErrorIs(t, err, ErrInvalidRecord, "a base offset")
	marker, _, err := v.marker(0, 0, 7, 0, record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 4})
	require.NoError(t, err)
	_, _, err = v.validate(bytes.Clone(marker), c)
	require.ErrorIs(t, err, ErrInvalidRecord, "a control batch")
	windowed := c
	windowed.MessageTimestampBeforeMax = time.Hour
	_, _, err = v.validate(producerBatch(t, 1, 10, now-2*time.Hour.Milliseconds(), record.None), windowed)
	require.ErrorIs(t, err, ErrInvalidTimestamp)
	small := c
	small.MaxMessageBytes = 50
	_, _, err = v.validate(b, small)
	require.ErrorIs(t, err, ErrRecordTooLarge)
	compacted, _, err := c.WithProperties(map[string]string{"cleanup.policy": "compact"})
	require.NoError(t, err)
	var nb record.Builder
	nb.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, nb.Append(now, nil, []byte("no key"), nil))
	keyless, err := nb.Build()
	require.NoError(t, err)
	_, _, err = v.validate(bytes.Clone(keyless), compacted)
	require.ErrorIs(t, err, ErrInvalidRecord, "a record without a key on a compacted topic")
	var rve *RecordValidationError
	require.ErrorAs(t, err, &rve)
	require.Equal(t, []RecordError{{Index: 0, Message: "Compacted topic cannot accept message without key in topic partition " + v.tp.String()}}, rve.Records)
	// Both faults in one batch: every record listed, each for its first
	// fault (the key), and a timestamp among them makes the batch's error
	// ErrInvalidTimestamp, as Kafka's LogValidator decides.
	nb.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, nb.Append(now-2*time.Hour.Milliseconds(), nil, []byte("no key, old"), nil))
	require.NoError(t, nb.Append(now, []byte("k"), []byte("fine"), nil))
	require.NoError(t, nb.Append(now-2*time.Hour.Milliseconds(), []byte("k"), []byte("old"), nil))
	both, err := nb.Build()
	require.NoError(t, err)
	windowedCompacted := compacted
	windowedCompacted.MessageTimestampBeforeMax = time.Hour
	_, _, err = v.validate(bytes.Clone(both), windowedCompacted)
	require.ErrorIs(t, err, ErrInvalidTimestamp)
	require.NotErrorIs(t, err, ErrInvalidRecord)
	require.ErrorAs(t, err, &rve)
	require.Len(t, rve.Records, 2)
	require.Equal(t, int32(0), rve.Records[0].Index)
	require.Contains(t, rve.Records[0].Message, "without key")
	require.Equal(t, int32(2), rve.Records[1].Index)
	require.Contains(t, rve.Records[1].Message, "of message with offset 2 is out of range")
	require.Equal(t, "One or more records have been rejected due to invalid timestamp", rve.Message())

	gz, _, err := c.WithProperties(map[string]string{"compression.type": "gzip"})
	require.NoError(t, err)
	h, out, err = v.validate(bytes.Clone(b), gz)
	require.NoError(t, err)
	require.Equal(t, record.Gzip, h.Attributes.Compression(), "recompressed")
	rh, err := record.Validate(out)
	require.NoError(t, err)
	require.Equal(t, int32(3), rh.RecordsCount)

	wrong := bytes.Clone(b)
	require.NoError(t, record.SetMaxTimestamp(wrong, now-1000))
	h, out, err = v.validate(wrong, c)
	require.NoError(t, err)
	require.Nil(t, out, "the max timestamp needs the fix")
	require.Equal(t, now, h.MaxTimestamp)
	fixed, err := fixMaxTimestamp(wrong, &h)
	require.NoError(t, err)
	_, err = record.Validate(fixed)
	require.NoError(t, err)

	large := producerBatch(t, 100, 1000, now, record.None)
	_, ok := v.overlaps(b, c)
	require.False(t, ok, "below Config.OverlapAppendBytes")
	_, ok = v.overlaps(large, c)
	require.Equal(t, runtime.GOMAXPROCS(0) >= 2, ok, "a large batch on two Ps")
	_, ok = v.overlaps(large, gz)
	require.False(t, ok, "recompressed")
	lh, err := record.ParseHeader(large)
	require.NoError(t, err)
	marks := v.appendedMarks(large, &lh)
	require.NotNil(t, marks)
	require.Equal(t, marksStep(100), marks.Step)
	require.Len(t, marks.Pos, int(99/marksStep(100))+1)
	require.Nil(t, v.appendedMarks(b, &h), "a small batch")

	marker, mh, err := v.marker(9, 2, 7, 1, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 4})
	require.NoError(t, err)
	require.Equal(t, int64(9), mh.BaseOffset)
	require.True(t, mh.Attributes.IsControl() && mh.Attributes.IsTransactional())
	m, err := parseMarker(v.reader, marker)
	require.NoError(t, err)
	require.Equal(t, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 4}, m)
}

// TestTxnIndexRepairAlone: a .txnindex cut at an entry boundary passes
// the checks at load, and the first read_committed use of its segment
// finds the ABORT marker without an entry and rebuilds the file from the
// log; the repair counts it.
func TestTxnIndexRepairAlone(t *testing.T) {
	mem := vfs.NewMem()
	clk := newClock()
	ll := openLocalLog(t, mem, DefaultTopicConfig(), clk.Now)
	m := newProducerStateManager(ll.tp, ll.dir, mem, quiet, clk.Now, time.Hour)
	require.NoError(t, m.verify(8, 0))
	txn := idemBatch(t, 8, 0, 0, 2, true, "t")
	h, seg := appendTo(t, ll, txn)
	_, err := m.update(seg, txn, &h, false)
	require.NoError(t, err)
	marker, mh, err := newLogValidator(ll.tp, clk.Now, 0).marker(2, 0, 8, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	mh, seg = appendTo(t, ll, marker)
	_, err = m.update(seg, marker, &mh, false)
	require.NoError(t, err)
	want, err := segHooks.TxnIndexEntries(seg)
	require.NoError(t, err)
	require.Len(t, want, 1)
	require.NoError(t, closeAll(ll.segs(), nil))
	f, err := mem.OpenReadWrite(filepath.Join("/p", segment.FileName(0, segment.TxnIndexSuffix)))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(0))
	require.NoError(t, f.Close())

	again := openLocalLog(t, mem, DefaultTopicConfig(), clk.Now)
	r := &txnIndexRepair{local: again, writeMu: new(sync.Mutex)}
	require.NoError(t, r.repairAtLoad(nil))
	require.Zero(t, r.rebuilds.Load(), "an empty file passes the checks of the file alone")
	got, err := again.appendAbortedTxns(nil, 0, again.logEndOffset.Load(), r.verify)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, int64(1), r.rebuilds.Load())
	require.True(t, again.dirDirty, "the new file's entry is synced by the next flush")
}

// TestGroupCommitAlone: concurrent callers share rounds, each returning
// once a round covered it; a caller whose ctx ends while another's round
// runs returns its error, and a round's or the check's error is the
// caller's.
func TestGroupCommitAlone(t *testing.T) {
	var g groupCommit
	var appended, durable atomic.Int64
	var rounds atomic.Int32
	round := func() error {
		rounds.Add(1)
		durable.Store(appended.Load())
		return nil
	}
	noCheck := func() error { return nil }
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			off := appended.Add(1)
			err := g.await(context.Background(), func() bool { return durable.Load() >= off }, noCheck, round)
			if err != nil || durable.Load() < off {
				t.Errorf("caller %d: %v, durable %d below %d", i, err, durable.Load(), off)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(16), durable.Load())
	require.LessOrEqual(t, rounds.Load(), int32(16))

	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- g.await(context.Background(), func() bool { return false }, noCheck, func() error {
			close(started)
			<-release
			return errors.New("round failed")
		})
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := g.await(ctx, func() bool { return false }, noCheck, round)
	require.ErrorIs(t, err, context.Canceled, "waiting for another's round")
	close(release)
	require.EqualError(t, <-done, "round failed")
	require.ErrorIs(t, g.await(context.Background(), func() bool { return false }, func() error { return ErrClosed }, round), ErrClosed)
}
