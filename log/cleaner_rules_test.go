package log

// Tests of the cleaner's choices and bounds: uncleanable partitions, the
// dirtiest log first, the last stable offset, aborted rounds, null keys,
// throttling and round stats. The helpers they share with the other
// compaction tests are in cleaner_test.go.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/compaction"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// logCapture collects a Dir's log lines, safely for its goroutines.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) count(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Count(c.buf.String(), s)
}

// flipMagic flips the magic byte of the first batch of l's first segment
// (a corrupt sealed segment: reading it fails with
// record.ErrUnsupportedMagic); calling it again restores the byte.
func flipMagic(t *testing.T, fsys vfs.FS, l *Log) {
	t.Helper()
	f, err := fsys.OpenReadWrite(l.local.segs()[0].LogFile())
	require.NoError(t, err)
	var b [1]byte
	_, err = f.ReadAt(b[:], 16)
	require.NoError(t, err)
	b[0] ^= 0x03 // 2 ↔ 1
	_, err = f.WriteAt(b[:], 16)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

const uncleanableWarning = "marked uncleanable"

// uncleanableEnv opens a Dir with two compacted topics holding duplicate
// keys in sealed segments: "good", and "bad" whose first segment is
// corrupt. "bad" is written as a delete topic and switched to compact once
// corrupt, so that a background cleaner cannot clean it first.
func uncleanableEnv(t *testing.T, background bool) (e *env, d *Dir, logs *logCapture, good, bad *Log) {
	t.Helper()
	e = newEnv(t)
	e.cfg.CleanerEnable = background
	e.cfg.CleanerBackoff = time.Millisecond
	logs = &logCapture{}
	e.cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	d = e.open(t)
	t.Cleanup(func() { _ = d.Close() })
	compact := map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"}
	createTopic(t, d, "good", 1, compact)
	createTopic(t, d, "bad", 1, map[string]string{"cleanup.policy": "delete", "segment.bytes": "1024"})
	good, bad = partition(t, d, "good", 0), partition(t, d, "bad", 0)
	ts := e.clock.Now().UnixMilli()
	for i := range 40 {
		put(t, good, ts, fmt.Sprintf("k%d", i%4), fmt.Sprint(i), false)
		put(t, bad, ts, fmt.Sprintf("k%d", i%4), fmt.Sprint(i), false)
	}
	require.NoError(t, good.Roll(context.Background()))
	require.NoError(t, bad.Roll(context.Background()))
	flipMagic(t, e.mem, bad)
	_, err := d.AlterTopicConfig(context.Background(), "bad", compact)
	require.NoError(t, err)
	return e, d, logs, good, bad
}

// latestOnly checks that l is cleaned up to its active segment and holds
// only one record of each key there.
func latestOnly(t *testing.T, l *Log) {
	t.Helper()
	require.Equal(t, l.local.active().BaseOffset(), l.FirstDirtyOffset())
	seen := map[string]bool{}
	for _, r := range readAll(t, l) {
		if r.off < l.FirstDirtyOffset() {
			require.False(t, seen[r.key], "key %s twice", r.key)
			seen[r.key] = true
		}
	}
}

// TestCompactionUncleanablePartition: a log whose round fails (a corrupt
// batch) no longer blocks the others. As Kafka's LogCleaner marks the
// partition uncleanable (LogCleanerManager.markPartitionUncleanable) and
// grabFilthiestCompactedLog skips it, CleanNow cleans the other logs and
// returns the failure; later calls skip it without an error; the warning is
// logged once. Repairing the segment does not make it cleanable in the same
// Dir (Kafka keeps it uncleanable until the partition leaves the broker or
// the broker restarts); a reopened Dir cleans it.
func TestCompactionUncleanablePartition(t *testing.T) {
	e, d, logs, good, bad := uncleanableEnv(t, false)
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.Equal(t, 1, rounds, "the healthy log is cleaned")
	require.ErrorIs(t, err, record.ErrUnsupportedMagic)
	var pe *PartitionError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "bad", pe.Topic)
	latestOnly(t, good)
	require.Zero(t, bad.FirstDirtyOffset())
	un := d.UncleanablePartitions()
	require.Len(t, un, 1)
	require.ErrorIs(t, un[TopicPartition{Topic: "bad"}], record.ErrUnsupportedMagic)
	require.Equal(t, 1, d.Stats().UncleanablePartitions)
	require.Equal(t, 1, logs.count(uncleanableWarning))

	// Both logs get dirty again: the healthy one is cleaned, the other
	// skipped, without an error or another warning.
	ts := e.clock.Now().UnixMilli()
	for i := range 20 {
		put(t, good, ts, fmt.Sprintf("k%d", i%4), "again", false)
		put(t, bad, ts, fmt.Sprintf("k%d", i%4), "again", false)
	}
	require.NoError(t, good.Roll(context.Background()))
	require.NoError(t, bad.Roll(context.Background()))
	cleaned, err = d.CleanNow(context.Background())
	rounds = cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	latestOnly(t, good)
	require.Equal(t, 1, logs.count(uncleanableWarning))

	// Repaired on disk, it stays uncleanable until the Dir is reopened.
	flipMagic(t, e.mem, bad)
	cleaned, err = d.CleanNow(context.Background())
	rounds = cleaned.Rounds
	require.NoError(t, err)
	require.Zero(t, rounds)
	require.NoError(t, d.Close())
	d = e.open(t)
	defer d.Close()
	require.Empty(t, d.UncleanablePartitions())
	cleaned, err = d.CleanNow(context.Background())
	rounds = cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	latestOnly(t, partition(t, d, "bad", 0))
}

// TestCompactionUncleanableDeletedPartition: a deleted partition leaves the
// uncleanable set (Kafka's maintainUncleanablePartitions); a topic created
// again under its name is cleaned.
func TestCompactionUncleanableDeletedPartition(t *testing.T) {
	e, d, _, _, _ := uncleanableEnv(t, false)
	_, err := d.CleanNow(context.Background())
	require.ErrorIs(t, err, record.ErrUnsupportedMagic)
	require.Len(t, d.UncleanablePartitions(), 1)
	require.NoError(t, d.DeleteTopic(context.Background(), "bad"))
	require.Empty(t, d.UncleanablePartitions())
	createTopic(t, d, "bad", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
	bad := partition(t, d, "bad", 0)
	for i := range 40 {
		put(t, bad, e.clock.Now().UnixMilli(), fmt.Sprintf("k%d", i%4), fmt.Sprint(i), false)
	}
	require.NoError(t, bad.Roll(context.Background()))
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	latestOnly(t, bad)
	require.Empty(t, d.UncleanablePartitions())
}

// TestCompactionUncleanableBackground: the cleaner goroutines mark the
// corrupt log uncleanable and keep cleaning the healthy one, round after
// round.
func TestCompactionUncleanableBackground(t *testing.T) {
	e, d, logs, good, _ := uncleanableEnv(t, true)
	require.Eventually(t, func() bool {
		return len(d.UncleanablePartitions()) == 1 && good.FirstDirtyOffset() == good.LogEndOffset()
	}, 10*time.Second, time.Millisecond)
	for range 3 {
		for i := range 20 {
			put(t, good, e.clock.Now().UnixMilli(), fmt.Sprintf("k%d", i%4), fmt.Sprint(i), false)
		}
		require.NoError(t, good.Roll(context.Background()))
		require.Eventually(t, func() bool { return good.FirstDirtyOffset() == good.LogEndOffset() }, 10*time.Second, time.Millisecond)
	}
	latestOnly(t, good)
	require.NoError(t, d.Close())
	require.Equal(t, 1, logs.count(uncleanableWarning))
}

// TestCompactionDirtiestFirst: of two eligible logs the one with the
// higher dirty ratio is cleaned first (Kafka's grabFilthiestCompactedLog),
// whatever their order in the Dir.
func TestCompactionDirtiestFirst(t *testing.T) {
	e, d, less := compactEnv(t, nil) // topic "c"
	ts := e.clock.Now().UnixMilli()
	for i := range 60 {
		put(t, less, ts, fmt.Sprintf("k%d", i%10), fmt.Sprint(i), false)
	}
	require.NoError(t, less.Roll(context.Background()))
	_, err := d.CleanNow(context.Background())
	require.NoError(t, err)
	for i := range 10 {
		put(t, less, ts, fmt.Sprintf("k%d", i), "again", false)
	}
	require.NoError(t, less.Roll(context.Background()))
	createTopic(t, d, "z", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
	more := partition(t, d, "z", 0)
	for i := range 30 {
		put(t, more, ts, fmt.Sprintf("k%d", i%10), fmt.Sprint(i), false)
	}
	require.NoError(t, more.Roll(context.Background()))
	tcLess, err := newToClean(less)
	require.NoError(t, err)
	tcMore, err := newToClean(more)
	require.NoError(t, err)
	require.Equal(t, 1.0, tcMore.ratio)
	require.Less(t, tcLess.ratio, 0.9)
	require.Greater(t, tcLess.ratio, 0.01)

	c, err := compaction.NewCleaner(d.compactionConfig(cleanerSettingsOf(d.Config())))
	require.NoError(t, err)
	for _, want := range []*Log{more, less, nil} {
		got, failed, err := d.cleanFilthiest(context.Background(), c, nil)
		require.NoError(t, err)
		require.Empty(t, failed)
		require.Same(t, want, got)
	}
	st, _ := more.CleanerStats()
	require.Equal(t, 1.0, st.DirtyRatio)
	st, _ = less.CleanerStats()
	require.Equal(t, tcLess.ratio, st.DirtyRatio)
}

// txnRecordBatch builds a transactional batch of one record.
func txnRecordBatch(t *testing.T, pid int64, seq int32, ts int64, key, value string) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithTransactional(true),
		ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq}, record.DefaultLevel)
	require.NoError(t, b.Append(ts, []byte(key), []byte(value), nil))
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

// TestCompactionStopsAtLastStableOffset: with a transaction open, nothing at
// or past the last stable offset is cleaned (the round ends at the base of
// the segment holding it) and no record there is used to clean what comes
// before; once the transaction commits, the rest is cleaned.
func TestCompactionStopsAtLastStableOffset(t *testing.T) {
	compactMatrix(t, nil, func(t *testing.T, e *env, d *Dir, l *Log) {
		ts := e.clock.Now().UnixMilli()
		for i := range 30 {
			put(t, l, ts, "k", fmt.Sprint(i), false)
		}
		in := access.Internal{}
		require.NoError(t, l.VerifyTransaction(in, 5, 0))
		res, err := l.Append(txnRecordBatch(t, 5, 0, ts, "k", "txn"))
		require.NoError(t, err)
		lso := res.BaseOffset
		for i := range 30 {
			put(t, l, ts, "k", fmt.Sprint(31+i), false)
		}
		require.NoError(t, l.Roll(context.Background()))
		require.Equal(t, lso, l.LastStableOffset())
		before := readAll(t, l)

		cleaned, err := d.CleanNow(context.Background())
		rounds := cleaned.Rounds

		require.NoError(t, err)
		require.Equal(t, 1, rounds)
		end := l.FirstDirtyOffset()
		require.Positive(t, end)
		require.LessOrEqual(t, end, lso)
		var holding int64 // base of the segment holding the LSO
		for _, s := range l.local.segs() {
			if s.BaseOffset() <= lso {
				holding = s.BaseOffset()
			}
		}
		require.Equal(t, holding, end)
		got := readAll(t, l)
		// Below: only k's latest record of the cleaned section.
		require.Equal(t, kv{off: end - 1, key: "k", value: fmt.Sprint(end - 1)}, got[0])
		// From the segment holding the LSO on: every record, untouched.
		var rest []kv
		for _, r := range before {
			if r.off >= end {
				rest = append(rest, r)
			}
		}
		require.Equal(t, rest, got[1:])

		_, err = l.AppendTxnMarker(in, 5, 0, record.EndTxnMarker{Type: record.ControlCommit})
		require.NoError(t, err)
		require.NoError(t, l.Roll(context.Background()))
		_, err = d.CleanNow(context.Background())
		require.NoError(t, err)
		require.Equal(t, l.LogEndOffset(), l.FirstDirtyOffset())
		require.Equal(t, []kv{{off: 60, key: "k", value: "60"}}, readAll(t, l))
	})
}

// TestCompactionAbortedRound: retention or truncation during a round makes
// the swap find the log changed: the round returns ErrAborted, leaves no
// .cleaned or .swap file, and does not mark the log uncleanable. CleanNow
// treats it as no failure: it picks the log again and cleans it.
func TestCompactionAbortedRound(t *testing.T) {
	for name, change := range map[string]func(l *Log) error{
		"truncation": func(l *Log) error { return l.TruncateTo(l.LogEndOffset() - 1) },
		"retention": func(l *Log) error {
			_, err := l.DeleteRecordsBefore(l.local.segs()[1].BaseOffset())
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			fault := vfs.NewFaultFS(e.mem)
			e.cfg.FS = fault
			e.cfg.CleanerEnable = false
			d := e.open(t)
			defer d.Close()
			createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
			l := partition(t, d, "c", 0)
			for i := range 80 {
				put(t, l, e.clock.Now().UnixMilli(), fmt.Sprintf("k%d", i%5), fmt.Sprint(i), false)
			}
			require.NoError(t, l.Roll(context.Background()))
			var fired atomic.Int32
			arm := func() {
				fired.Store(0)
				fault.OnOp(func(op vfs.Op, path string) {
					// The log changes while the round writes its first
					// cleaned segment.
					if op == vfs.OpCreate && strings.HasSuffix(path, ".log.cleaned") && fired.Add(1) == 1 {
						require.NoError(t, change(l))
					}
				})
			}
			leftovers := func() []string {
				es, err := e.mem.List(l.Dir())
				require.NoError(t, err)
				var out []string
				for _, e := range es {
					if strings.HasSuffix(e.Name, ".cleaned") || strings.HasSuffix(e.Name, ".swap") {
						out = append(out, e.Name)
					}
				}
				return out
			}

			arm()
			c, err := compaction.NewCleaner(d.compactionConfig(cleanerSettingsOf(d.Config())))
			require.NoError(t, err)
			got, failed, err := d.cleanFilthiest(context.Background(), c, nil)
			require.Same(t, l, got)
			require.ErrorIs(t, err, compaction.ErrAborted)
			require.Empty(t, failed)
			require.Equal(t, int32(1), fired.Load())
			require.Empty(t, leftovers())
			require.Empty(t, d.UncleanablePartitions())
			_, ok := l.CleanerStats()
			require.False(t, ok, "no round completed")

			arm()
			cleaned, err := d.CleanNow(context.Background())
			rounds := cleaned.Rounds
			fault.OnOp(nil)
			require.NoError(t, err)
			require.Equal(t, 1, rounds, "aborted once, then cleaned")
			require.Positive(t, fired.Load())
			require.Empty(t, leftovers())
			require.Empty(t, d.UncleanablePartitions())
			latestOnly(t, l)
		})
	}
}

// TestCompactionNullKeysAfterPolicyChange: records without a key, written
// while the topic had cleanup.policy=delete, are counted as invalid and
// removed once it is compacted, as Kafka's cleaner does
// (Cleaner.shouldRetainRecord: stats.invalidMessage(), not retained).
func TestCompactionNullKeysAfterPolicyChange(t *testing.T) {
	e := newEnv(t)
	e.cfg.CleanerEnable = false
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "delete", "segment.bytes": "1024"})
	l := partition(t, d, "c", 0)
	ts := e.clock.Now().UnixMilli()
	for i := range 30 {
		var b record.Builder
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
		var key []byte
		if i%3 != 0 {
			key = fmt.Appendf(nil, "k%d", i%2)
		}
		require.NoError(t, b.Append(ts, key, []byte(fmt.Sprint(i)), nil))
		batch, err := b.Build()
		require.NoError(t, err)
		_, err = l.Append(bytes.Clone(batch))
		require.NoError(t, err)
	}
	require.NoError(t, l.Roll(context.Background()))
	_, err := d.AlterTopicConfig(context.Background(), "c", map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
	require.NoError(t, err)
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	st, _ := l.CleanerStats()
	require.Equal(t, int64(10), st.InvalidRecords)
	require.Equal(t, int64(30), st.RecordsRead)
	require.Equal(t, int64(2), st.RecordsRetained)
	require.Equal(t, 2, st.MapKeys, "null keys are not mapped")
	require.Equal(t, []kv{{off: 28, key: "k0", value: "28"}, {off: 29, key: "k1", value: "29"}}, readAll(t, l))
}

// TestCompactionThrottled: log.cleaner.io.max.bytes.per.second reaches the
// Dir's throttler, and a round through the Dir goes through it: with a rate
// of 1 byte/s and a clock that moves 1 s per reading, each call of n bytes
// is its own check window and sleeps n−1 seconds, so the sleeps account
// for every byte the stats report (no real sleep).
func TestCompactionThrottled(t *testing.T) {
	require.True(t, compaction.NewThrottler(DefaultConfig().CleanerIOMaxBytesPerSecond, nil, nil).Unlimited())
	e := newEnv(t)
	e.cfg.CleanerEnable = false
	e.cfg.CleanerIOMaxBytesPerSecond = 1
	d := e.open(t)
	defer d.Close()
	require.False(t, d.cleaner.throttler.Unlimited())
	// The same rate, with a test clock and sleeper.
	var mu sync.Mutex
	clk := newClock()
	var sleeps []time.Duration
	d.cleaner.throttler = compaction.NewThrottler(d.cfg.CleanerIOMaxBytesPerSecond,
		func() time.Time { clk.Add(time.Second); return clk.Now() },
		func(_ context.Context, dur time.Duration) error {
			mu.Lock()
			sleeps = append(sleeps, dur)
			mu.Unlock()
			clk.Add(dur)
			return nil
		})
	createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
	l := partition(t, d, "c", 0)
	for i := range 50 {
		// A key of its own every 5 records: every cleaned segment keeps
		// bytes (a call of 0 bytes would not end a check window).
		key := fmt.Sprintf("k%d", i%3)
		if i%5 == 0 {
			key = fmt.Sprintf("u%d", i)
		}
		put(t, l, e.clock.Now().UnixMilli(), key, fmt.Sprint(i), false)
	}
	require.NoError(t, l.Roll(context.Background()))
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	st, _ := l.CleanerStats()
	for _, s := range l.local.segs() {
		if s.BaseOffset() < st.EndOffset {
			require.Positive(t, s.Size())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(sleeps), 3)
	var slept time.Duration
	for _, s := range sleeps {
		require.Positive(t, s)
		slept += s
	}
	require.Equal(t, st.MapBytesRead+st.BytesRead+st.BytesWritten, int64(slept/time.Second)+int64(len(sleeps)))
}

// TestCompactionRoundStats checks Log.CleanerStats against a log of known
// bytes: every sealed segment read once by each pass, the cleaned segments'
// bytes written, one group per cleaned segment.
func TestCompactionRoundStats(t *testing.T) {
	e, d, l := compactEnv(t, nil)
	ts := e.clock.Now().UnixMilli()
	for i := range 60 {
		put(t, l, ts, fmt.Sprintf("k%d", i%3), fmt.Sprint(i), false)
	}
	require.NoError(t, l.Roll(context.Background()))
	sealedBytes := func() (n int64, count int) {
		segs := l.local.segs()
		for _, s := range segs[:len(segs)-1] {
			n += s.Size()
		}
		return n, len(segs) - 1
	}
	read, _ := sealedBytes()
	res, err := d.CleanNow(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Rounds)
	written, cleaned := sealedBytes()
	st, ok := l.CleanerStats()
	require.True(t, ok)
	require.Positive(t, st.MapDuration)
	require.Positive(t, st.CleanDuration)
	st.MapDuration, st.CleanDuration = 0, 0
	budget := d.cfg.CleanerDedupeBufferSize / int64(d.cfg.CleanerThreads+1) / compaction.SlotBytes * compaction.SlotBytes
	const slots = 67 // 60 offsets at load factor 0.9: int(60/0.9) + 1
	require.Equal(t, CleanerStats{
		Stats: compaction.Stats{
			MapBytesRead: read, MapRecordsRead: 60,
			BytesRead: read, RecordsRead: 60,
			BytesWritten: written, RecordsRetained: 3,
			MapKeys: 3, MapSlots: slots, MapMemoryBytes: slots * compaction.SlotBytes, MapBudgetBytes: budget,
			FirstDirtyOffset: 0, EndOffset: 60, Groups: cleaned,
		},
		DirtyRatio: 1, Rounds: 1, Finished: e.clock.Now(),
	}, st)
	require.Less(t, written, read)
}

// TestCleanNowSaysWhyRecordsWait: CleanNow returned 0 and nil when every
// dirty record was in the active segment, which the cleaner never cleans,
// and a user took it for a cleaner that did nothing. Its result lists each
// compacted partition with dirty records left and why: the active
// segment, an open transaction, min.compaction.lag.ms, or
// min.cleanable.dirty.ratio; a rolled log is cleaned and no longer listed.
func TestCleanNowSaysWhyRecordsWait(t *testing.T) {
	ctx := context.Background()
	tp := TopicPartition{Topic: "c", Partition: 0}
	t.Run("active segment", func(t *testing.T) {
		compactMatrix(t, map[string]string{"segment.bytes": "1048576"}, func(t *testing.T, e *env, d *Dir, l *Log) {
			for i := range 20 {
				put(t, l, e.clock.Now().UnixMilli(), "k", fmt.Sprint(i), false)
			}
			res, err := d.CleanNow(ctx)
			require.NoError(t, err)
			require.Equal(t, CleanResult{Waiting: []CleanWaiting{{TopicPartition: tp, FirstDirtyOffset: 0, Reason: WaitActiveSegment}}}, res)
			require.Contains(t, res.Waiting[0].Reason.String(), "active segment")
			require.NoError(t, l.Roll(ctx))
			res, err = d.CleanNow(ctx)
			require.NoError(t, err)
			require.Equal(t, CleanResult{Rounds: 1}, res)
			require.Len(t, readAll(t, l), 1)
		})
	})
	t.Run("open transaction", func(t *testing.T) {
		_, d, l := compactEnv(t, nil)
		ts := time.Now().UnixMilli()
		appendTxn(t, l, txnRecordBatch(t, 5, 0, ts, "k", "txn"))
		for i := range 20 {
			put(t, l, ts, "k", fmt.Sprint(i), false)
		}
		require.NoError(t, l.Roll(ctx))
		res, err := d.CleanNow(ctx)
		require.NoError(t, err)
		require.Equal(t, CleanResult{Waiting: []CleanWaiting{{TopicPartition: tp, FirstDirtyOffset: 0, Reason: WaitOpenTransaction}}}, res)
	})
	t.Run("compaction lag", func(t *testing.T) {
		e, d, l := compactEnv(t, map[string]string{"min.compaction.lag.ms": "3600000"})
		for i := range 20 {
			put(t, l, e.clock.Now().UnixMilli(), "k", fmt.Sprint(i), false)
		}
		require.NoError(t, l.Roll(ctx))
		res, err := d.CleanNow(ctx)
		require.NoError(t, err)
		require.Equal(t, CleanResult{Waiting: []CleanWaiting{{TopicPartition: tp, FirstDirtyOffset: 0, Reason: WaitCompactionLag}}}, res)
		e.clock.Add(2 * time.Hour)
		res, err = d.CleanNow(ctx)
		require.NoError(t, err)
		require.Equal(t, CleanResult{Rounds: 1}, res)
	})
	t.Run("dirty ratio", func(t *testing.T) {
		e, d, l := compactEnv(t, map[string]string{"min.cleanable.dirty.ratio": "0.9"})
		for i := range 40 {
			put(t, l, e.clock.Now().UnixMilli(), fmt.Sprint("k", i), "v", false)
		}
		require.NoError(t, l.Roll(ctx))
		res, err := d.CleanNow(ctx) // ratio 1: cleaned
		require.NoError(t, err)
		require.Equal(t, 1, res.Rounds)
		dirty := l.LogEndOffset()
		put(t, l, e.clock.Now().UnixMilli(), "k0", "v2", false)
		require.NoError(t, l.Roll(ctx))
		res, err = d.CleanNow(ctx)
		require.NoError(t, err)
		require.Equal(t, CleanResult{Waiting: []CleanWaiting{{TopicPartition: tp, FirstDirtyOffset: dirty, Reason: WaitDirtyRatio}}}, res)
	})
}
