package log

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// appendWorkload appends idempotent batches durably to a topic with 1 KiB
// segments and 1.5 KB retention, so that it rolls (producer snapshots,
// sealed indexes), deletes segments (retention), writes the offset
// checkpoints, and reserves a producer id block (kafkalite-producer-ids).
// It stops at the first call that fails. It is safe to read its progress
// from a FaultFS hook on another goroutine.
type appendWorkload struct {
	mu       sync.Mutex // protects the following
	acked    []ackedBatch
	logStart int64 // the highest log start offset the live log reported
	failed   error
	pid      int64
}

type ackedBatch struct {
	batch      []byte
	base, last int64
	values     []string
}

func idempotentBatch(t testing.TB, pid int64, seq int32, step, n int, ts int64) ([]byte, []string) {
	t.Helper()
	return idempotentBatchSized(t, pid, seq, step, n, 60, ts)
}

// idempotentBatchSized builds a batch of producer pid starting at sequence
// seq, with n records whose values are "s<step>-<i>-" and pad bytes.
func idempotentBatchSized(t testing.TB, pid int64, seq int32, step, n, pad int, ts int64) ([]byte, []string) {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	var values []string
	for i := range n {
		v := fmt.Sprintf("s%d-%d-%s", step, i, bytes.Repeat([]byte{'v'}, pad))
		values = append(values, v)
		require.NoError(t, b.Append(ts, fmt.Appendf(nil, "k%d", i), []byte(v), nil))
	}
	b.SetProducer(pid, 0, seq, false)
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out), values
}

func (w *appendWorkload) snapshot() (acked []ackedBatch, logStart int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ackedBatch(nil), w.acked...), w.logStart
}

func (w *appendWorkload) run(t *testing.T, cfg Config, ts int64) {
	ctx := context.Background()
	fail := func(err error) bool {
		if err == nil {
			return false
		}
		w.mu.Lock()
		w.failed = err
		w.mu.Unlock()
		return true
	}
	d, err := Open(ctx, "/data", cfg)
	if fail(err) {
		return
	}
	defer d.Close()
	_, err = d.CreateTopic(ctx, "t", 1, map[string]string{"segment.bytes": "1024", "retention.bytes": "1500", "file.delete.delay.ms": "0", "segment.index.bytes": "4096"})
	if fail(err) {
		return
	}
	pid, err := d.AllocateProducerID(context.Background())
	if fail(err) {
		return
	}
	w.pid = pid
	l, err := d.Partition("t", 0)
	if fail(err) {
		return
	}
	for step := range 14 {
		batch, values := idempotentBatch(t, pid, int32(step*3), step, 3, ts)
		res, err := l.AppendDurable(ctx, bytes.Clone(batch)) // Append rewrites the base offset in place
		if err != nil && l.Stats().Failed == nil {
			// A roll that could not create the next segment changed
			// nothing: the next append rolls again.
			require.ErrorIs(t, err, ErrStorage, "a failed roll is a storage error")
			res, err = l.AppendDurable(ctx, bytes.Clone(batch))
			require.NoError(t, err, "the append after a failed roll rolls again")
		}
		if err != nil {
			require.ErrorIs(t, err, ErrStorage, "a failed append is a storage error")
			_, again := l.Append(batch)
			require.ErrorIs(t, again, ErrStorage, "the partition refuses appends until reopened")
			fail(err)
			return
		}
		w.mu.Lock()
		w.acked = append(w.acked, ackedBatch{batch: batch, base: res.BaseOffset, last: res.LastOffset, values: values})
		w.mu.Unlock()
		if step%4 == 3 {
			if _, err := l.EnforceRetention(); fail(err) {
				return
			}
			if fail(l.RemoveDeleted(true)) {
				return
			}
		}
		if step%5 == 4 {
			if fail(d.writeCheckpoints(false)) {
				return
			}
		}
		w.mu.Lock()
		w.logStart = max(w.logStart, l.LogStartOffset())
		w.mu.Unlock()
	}
	fail(d.Close())
}

// scanLog decodes every batch of l from its log start offset to its end,
// CRCs checked, offsets gapless, and returns the values by offset.
func scanLog(t *testing.T, l *Log, what string) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	r := record.NewReader(record.ReaderOptions{})
	next, first := l.LogStartOffset(), true
	for next < l.LogEndOffset() {
		res, err := l.Read(next, 1<<20, true)
		require.NoError(t, err, what)
		require.NotNil(t, res.Slice, "%s: nothing at %d below the log end %d", what, next, l.LogEndOffset())
		buf, err := res.Slice.Bytes(nil)
		res.Release()
		require.NoError(t, err, what)
		for pos := 0; pos < len(buf); {
			n, err := record.BatchSize(buf[pos:])
			require.NoError(t, err, what)
			require.NoError(t, r.Reset(buf[pos:pos+n]), "%s: batch at %d", what, next)
			h := r.Header()
			require.True(t, h.BaseOffset == next || first && h.BaseOffset < next, "%s: batch %d, want %d", what, h.BaseOffset, next)
			first = false
			for r.Next() {
				out[r.Record().Offset] = string(r.Record().Value)
			}
			require.NoError(t, r.Err(), what)
			next = h.NextOffset()
			pos += n
		}
	}
	require.Equal(t, l.LogEndOffset(), next, what)
	return out
}

// checkAppendsAfterCrash opens a crashed directory and checks that Open
// succeeds, every batch decodes, every acknowledged (durable) record at or
// above the log start offset is there with its value, the log start offset
// is no further than the live log had gone, and the producer state knows
// the last acknowledged batch (a retry is a duplicate, not a second copy).
func checkAppendsAfterCrash(t *testing.T, cfg Config, acked []ackedBatch, liveStart int64, what string) {
	t.Helper()
	d, err := Open(context.Background(), "/data", cfg)
	require.NoError(t, err, "%s: Open after the crash", what)
	defer d.Close()
	l, err := d.Partition("t", 0)
	if err != nil {
		require.Empty(t, acked, "%s: the topic is gone with acknowledged records", what)
		return
	}
	require.LessOrEqual(t, l.LogStartOffset(), max(liveStart, 0), "%s: log start offset beyond the live one", what)
	got := scanLog(t, l, what)
	for _, a := range acked {
		for i, v := range a.values {
			off := a.base + int64(i)
			if off < l.LogStartOffset() {
				continue
			}
			require.Equal(t, v, got[off], "%s: acknowledged offset %d", what, off)
		}
	}
	if n := len(acked); n > 0 && acked[n-1].base >= l.LogStartOffset() {
		res, err := l.Append(bytes.Clone(acked[n-1].batch))
		require.NoError(t, err, what)
		require.True(t, res.Duplicate, "%s: the retry of the last acknowledged batch is a duplicate", what)
		require.Equal(t, acked[n-1].base, res.BaseOffset, what)
	}
}

// TestAppendCrashAtEveryOp crashes (keeping only synced data and synced
// directory entries) before every filesystem operation of the append
// workload — appends, fsyncs, rolls, producer snapshots, retention
// renames and removals, checkpoint writes, the producer id block — and
// checks each crashed directory (every crash point with
// KAFKALITE_FAULT_EXHAUSTIVE set, about 100 of them spread over the run by
// default).
func TestAppendCrashAtEveryOp(t *testing.T) {
	forEachAppendMode(t, testAppendCrashAtEveryOp)
}

// forEachAppendMode runs a test with appends written after their
// validation and with every append's write overlapped with its validation
// (Config.OverlapAppendBytes 1: the body written ahead, then the header).
func forEachAppendMode(t *testing.T, test func(t *testing.T, overlap int)) {
	t.Run("serial", func(t *testing.T) { test(t, 0) })
	t.Run("overlapped", func(t *testing.T) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))) // the overlap needs two Ps
		test(t, 1)
	})
}

func testAppendCrashAtEveryOp(t *testing.T, overlap int) {
	e := newEnv(t)
	e.cfg.OverlapAppendBytes = overlap
	ffs := vfs.NewFaultFS(e.mem)
	w := &appendWorkload{}
	type crash struct {
		fs       *vfs.MemFS
		acked    []ackedBatch
		logStart int64
		op       string
	}
	var mu sync.Mutex
	var crashes []crash
	ffs.OnOp(func(op vfs.Op, path string) {
		if op == vfs.OpRead || op == vfs.OpStat {
			return // no state change: the previous crash point covers it
		}
		acked, _ := w.snapshot()
		c := crash{fs: e.mem.CrashClone(), acked: acked, op: op.String() + " " + path}
		mu.Lock()
		crashes = append(crashes, c)
		mu.Unlock()
	})
	cfg := e.cfg
	cfg.FS = ffs
	w.run(t, cfg, e.clock.Now().UnixMilli())
	ffs.OnOp(nil)
	require.NoError(t, w.failed)
	_, finalStart := w.snapshot()
	require.Positive(t, finalStart, "retention deleted segments")
	step := faultStride(len(crashes), 100)
	for i := 0; i < len(crashes); i += step {
		c := crashes[i]
		cfg := e.cfg
		cfg.FS = c.fs
		// The log start bound is the live one at the end: a crash may
		// land between a deletion and the step that reads it.
		checkAppendsAfterCrash(t, cfg, c.acked, finalStart, fmt.Sprintf("crash %d before %s", i, c.op))
	}
	t.Logf("%d crash points, every %d checked", len(crashes), step)
}

// faultStride is 1 with KAFKALITE_FAULT_EXHAUSTIVE set, else the step that
// checks about want of n cases, to keep the default run short under -race.
func faultStride(n, want int) int {
	if os.Getenv("KAFKALITE_FAULT_EXHAUSTIVE") != "" {
		return 1
	}
	return max(1, (n+want-1)/want)
}

// TestAppendFaults fails one operation of the append workload — each
// write, fsync, directory fsync, rename, create, truncate and remove in
// turn (every one for the rarer kinds, a spread of the many writes and
// fsyncs; all of them with KAFKALITE_FAULT_EXHAUSTIVE) — with ENOSPC and
// with EIO. A failed append is an ErrStorage and
// later appends are refused; then the directory crashes and reopens, and
// what was acknowledged is there.
func TestAppendFaults(t *testing.T) {
	forEachAppendMode(t, testAppendFaults)
}

func testAppendFaults(t *testing.T, overlap int) {
	// Count the operations of a clean run.
	counter := vfs.NewFaultFS(vfs.NewMem())
	{
		e := newEnv(t)
		e.cfg.OverlapAppendBytes = overlap
		cfg := e.cfg
		cfg.FS = counter
		w := &appendWorkload{}
		w.run(t, cfg, e.clock.Now().UnixMilli())
		require.NoError(t, w.failed)
	}
	faults := 0
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename, vfs.OpCreate, vfs.OpTruncate, vfs.OpRemove, vfs.OpMkdir} {
		total := counter.Count(op)
		stride := faultStride(total, 12)
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			for nth := 1; nth <= total; nth += stride {
				e := newEnv(t)
				e.cfg.OverlapAppendBytes = overlap
				ffs := vfs.NewFaultFS(e.mem)
				ffs.Inject(vfs.Rule{Op: op, Nth: nth, Err: errno})
				cfg := e.cfg
				cfg.FS = ffs
				w := &appendWorkload{}
				what := fmt.Sprintf("%v #%d/%d %v", op, nth, total, errno)
				w.run(t, cfg, e.clock.Now().UnixMilli())
				if ffs.Injected() == 0 {
					continue
				}
				faults++
				acked, liveStart := w.snapshot()
				cfg.FS = e.mem.CrashClone()
				checkAppendsAfterCrash(t, cfg, acked, max(liveStart, startAfterFault(acked)), what)
			}
		}
	}
	t.Logf("%d faults injected", faults)
}

// startAfterFault bounds the log start offset when the workload stopped
// inside a retention step: at most the end of what was acknowledged.
func startAfterFault(acked []ackedBatch) int64 {
	if len(acked) == 0 {
		return 0
	}
	return acked[len(acked)-1].last + 1
}

// TestSyncFailureIsNotDurable fails the fsync of an append: the append
// reports ErrStorage (and the syscall's error), the partition refuses
// appends, a later Sync fails too (a failed fsync is never retried on the
// same pages), the data appended before stays readable, and after a crash
// the directory holds everything acknowledged and reopens for appends.
func TestSyncFailureIsNotDurable(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule vfs.Rule
	}{
		{"log fsync EIO", vfs.EIO(vfs.OpSync, ".log", 1)},
		{"log fsync ENOSPC", vfs.ENOSPC(vfs.OpSync, ".log", 1)},
		{"torn write", vfs.Rule{Op: vfs.OpWrite, Path: ".log", Nth: 1, Err: syscall.EIO, TornFraction: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ffs := vfs.NewFaultFS(e.mem)
			cfg := e.cfg
			cfg.FS = ffs
			d, err := Open(context.Background(), "/data", cfg)
			require.NoError(t, err)
			createTopic(t, d, "t", 1, smallIndexes)
			l := partition(t, d, "t", 0)
			now := e.clock.Now().UnixMilli()
			_, err = l.AppendDurable(context.Background(), producerBatch(t, 3, 10, now, record.None))
			require.NoError(t, err)
			ffs.Inject(tc.rule)
			_, err = l.AppendDurable(context.Background(), producerBatch(t, 3, 10, now, record.None))
			require.ErrorIs(t, err, ErrStorage)
			require.ErrorIs(t, err, vfs.ErrInjected)
			_, err = l.Append(producerBatch(t, 3, 10, now, record.None))
			require.ErrorIs(t, err, ErrStorage, "sticky")
			if tc.rule.Op == vfs.OpSync {
				err := l.Sync(context.Background(), l.LogEndOffset())
				require.ErrorIs(t, err, ErrStorage, "a failed fsync is not retried into success")
				require.Equal(t, int64(3), l.DurableOffset(), "nothing unsynced reported durable")
				require.Zero(t, l.RecoveryPoint(), "nor its indexes")
			}
			require.GreaterOrEqual(t, len(records(t, l, 0)), 3, "acknowledged data stays readable")
			crashed := e.mem.CrashClone()
			ffs.Clear()
			_ = d.Close()

			cfg.FS = crashed
			d, err = Open(context.Background(), "/data", cfg)
			require.NoError(t, err)
			defer d.Close()
			l = partition(t, d, "t", 0)
			recs := records(t, l, 0)
			require.GreaterOrEqual(t, len(recs), 3, "the acknowledged batch survived")
			require.Contains(t, []int{3, 6}, len(recs), "whole batches only")
			_, err = l.AppendDurable(context.Background(), producerBatch(t, 3, 10, now, record.None))
			require.NoError(t, err, "appends work again after reopening")
		})
	}
}

// smallIndexes keeps the memory FS's crash clones cheap: a default 10 MiB
// index preallocation is copied by every CrashClone.
var smallIndexes = map[string]string{"segment.index.bytes": "4096"}

// TestTornBatchAtEveryByte appends an idempotent batch torn at every byte
// boundary on top of durable ones (as a kill during the write leaves it):
// Open truncates the torn bytes and serves nothing of them, and the
// producer state accepts the batch again as new (it was never appended).
func TestTornBatchAtEveryByte(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, smallIndexes)
	l := partition(t, d, "t", 0)
	pid, err := d.AllocateProducerID(context.Background())
	require.NoError(t, err)
	now := e.clock.Now().UnixMilli()
	b0, _ := idempotentBatch(t, pid, 0, 0, 3, now)
	_, err = l.AppendDurable(context.Background(), b0)
	require.NoError(t, err)
	base := e.mem.CrashClone()
	require.NoError(t, d.Close())

	next, _ := idempotentBatchSized(t, pid, 3, 1, 2, 4, now)
	require.NoError(t, record.SetBaseOffset(next, 3))
	segFile := "/data/t-0/00000000000000000000.log"
	for cut := 1; cut < len(next); cut++ {
		mem := base.CrashClone()
		f, err := mem.OpenReadWrite(segFile)
		require.NoError(t, err)
		size, err := f.Size()
		require.NoError(t, err)
		_, err = f.WriteAt(next[:cut], size)
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())

		cfg := e.cfg
		cfg.FS = mem
		d, err := Open(context.Background(), "/data", cfg)
		require.NoError(t, err, "cut %d", cut)
		l := partition(t, d, "t", 0)
		require.Equal(t, int64(3), l.LogEndOffset(), "cut %d: the torn batch is cut off", cut)
		require.Len(t, scanLog(t, l, fmt.Sprintf("cut %d", cut)), 3)
		fresh, _ := idempotentBatchSized(t, pid, 3, 1, 2, 4, now)
		res, err := l.Append(fresh)
		require.NoError(t, err, "cut %d", cut)
		require.False(t, res.Duplicate, "cut %d: the torn batch was never appended", cut)
		require.Equal(t, int64(3), res.BaseOffset)
		require.NoError(t, d.Close())
	}
	t.Logf("%d tears of a %d-byte batch", len(next)-1, len(next))
}
