package log

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// kv is one record as the tests see it.
type kv struct {
	off        int64
	key, value string
	tombstone  bool
}

// keyedBatch builds a producer batch of records key→value; a value "" with
// tombstone set is a null value.
func keyedBatch(t testing.TB, ts int64, recs ...kv) []byte {
	t.Helper()
	return codecBatch(t, record.None, ts, recs...)
}

// codecBatch is keyedBatch with the batch compressed by codec.
func codecBatch(t testing.TB, codec record.Compression, ts int64, recs ...kv) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(codec)}, record.DefaultLevel)
	for _, r := range recs {
		var v []byte
		if !r.tombstone {
			v = []byte(r.value)
		}
		require.NoError(t, b.Append(ts, []byte(r.key), v, nil))
	}
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

// put appends one record and returns its offset.
func put(t testing.TB, l *Log, ts int64, key, value string, tombstone bool) int64 {
	t.Helper()
	res, err := l.Append(keyedBatch(t, ts, kv{key: key, value: value, tombstone: tombstone}))
	require.NoError(t, err)
	return res.BaseOffset
}

// readAll returns every data record of the log. With appends running, a
// read at the last offsets can find nothing for a moment: the log end
// offset moves before the batch is published to readers (see
// appendedLocked), so a read that makes no progress is tried again, and
// fails the test only if it stays stuck for seconds.
func readAll(t testing.TB, l *Log) []kv {
	t.Helper()
	var out []kv
	var stuckSince time.Time
	for from := l.LogStartOffset(); from < l.LogEndOffset(); {
		next, err := l.ReadRecords(from, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
			out = append(out, kv{off: rec.Offset, key: string(rec.Key), value: string(rec.Value), tombstone: rec.Value == nil})
			return nil
		})
		require.NoError(t, err)
		if next == from {
			if stuckSince.IsZero() {
				stuckSince = time.Now()
			}
			require.Less(t, time.Since(stuckSince), 5*time.Second, "no progress at offset %d, log end offset %d", from, l.LogEndOffset())
			runtime.Gosched()
			continue
		}
		require.Greater(t, next, from)
		stuckSince, from = time.Time{}, next
	}
	return out
}

// compactEnv is an env whose Dir has one compacted partition "c" with
// small segments, cleaned only by CleanNow.
func compactEnv(t *testing.T, props map[string]string) (*env, *Dir, *Log) {
	t.Helper()
	e := newEnv(t)
	e.cfg.CleanerEnable = false
	d := e.open(t)
	t.Cleanup(func() { _ = d.Close() })
	p := map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"}
	for k, v := range props {
		p[k] = v
	}
	createTopic(t, d, "c", 1, p)
	return e, d, partition(t, d, "c", 0)
}

// compactMatrix runs body once per codec on compactEnv's partition, whose
// topic compresses every batch with that codec (compression.type;
// "producer" for none keeps the tests' uncompressed batches), so that the
// cleaner reads and rewrites batches of every codec.
func compactMatrix(t *testing.T, props map[string]string, body func(t *testing.T, e *env, d *Dir, l *Log)) {
	t.Helper()
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		p := maps.Clone(props)
		if p == nil {
			p = map[string]string{}
		}
		p["compression.type"] = "producer"
		if codec != record.None {
			p["compression.type"] = codec.String()
		}
		e, d, l := compactEnv(t, p)
		body(t, e, d, l)
	})
}

func TestCompactionKeepsLatestValuePerKey(t *testing.T) {
	compactMatrix(t, nil, func(t *testing.T, e *env, d *Dir, l *Log) {
		ts := e.clock.Now().UnixMilli()
		for i := range 200 {
			put(t, l, ts, fmt.Sprintf("k%d", i%10), fmt.Sprintf("v%d", i), false)
		}
		require.NoError(t, l.Roll(context.Background()))
		before := l.Stats()
		cleaned, err := d.CleanNow(context.Background())
		rounds := cleaned.Rounds
		require.NoError(t, err)
		require.Equal(t, 1, rounds)
		got := readAll(t, l)
		require.Len(t, got, 10)
		for i, r := range got {
			require.Equal(t, int64(190+i), r.off, "offsets never change")
			require.Equal(t, fmt.Sprintf("k%d", i), r.key)
			require.Equal(t, fmt.Sprintf("v%d", 190+i), r.value)
		}
		st, ok := l.CleanerStats()
		require.True(t, ok)
		require.Equal(t, int64(200), st.RecordsRead)
		require.Equal(t, int64(190), st.RecordsRemoved())
		require.Equal(t, int64(200), st.EndOffset)
		require.Greater(t, st.DirtyRatio, 0.99)
		require.Less(t, l.Stats().Size, before.Size)
		require.Equal(t, int64(200), l.LogEndOffset())
		require.Equal(t, int64(200), l.FirstDirtyOffset())

		// Nothing dirty: no round.
		cleaned, err = d.CleanNow(context.Background())
		rounds = cleaned.Rounds
		require.NoError(t, err)
		require.Zero(t, rounds)

		// The checkpoint and the cleaned log survive a reopen.
		require.NoError(t, d.Close())
		cp, err := checkpoint.ReadOffsets(e.mem, filepath.Join("/data", checkpoint.CleanerOffsetFile))
		require.NoError(t, err)
		require.Equal(t, map[checkpoint.TopicPartition]int64{{Topic: "c", Partition: 0}: 200}, cp)
		d = e.open(t)
		defer d.Close()
		l = partition(t, d, "c", 0)
		require.Equal(t, got, readAll(t, l))
		require.Equal(t, int64(200), l.FirstDirtyOffset())
	})
}

func TestCompactionNullKeyRejected(t *testing.T) {
	_, _, l := compactEnv(t, nil)
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, b.Append(1, nil, []byte("v"), nil))
	batch, err := b.Build()
	require.NoError(t, err)
	_, err = l.Append(batch)
	require.ErrorIs(t, err, ErrInvalidRecord)
	var pe *PartitionError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "c", pe.Topic)
}

// TestCompactionProperty: for random histories of puts and deletes, the
// cleaned part of the log holds exactly the latest record of each key (the
// latest put, or a tombstone within its horizon), every key's latest put is
// readable at its original offset, and once the delete horizon passed and
// another round ran, the cleaned part holds no tombstone. Every fourth
// history mixes batches of every codec, which the cleaner decompresses and
// writes again compressed.
func TestCompactionProperty(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 79))
			e := newEnv(t)
			e.cfg.CleanerEnable = false
			if seed%2 == 1 {
				e.cfg.CleanerDedupeBufferSize = 2048 // ≈ 40 keys a round: several rounds
			}
			d := e.open(t)
			defer d.Close()
			createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": fmt.Sprint(300 + rng.IntN(2000)),
				"min.cleanable.dirty.ratio": "0", "delete.retention.ms": "1000"})
			l := partition(t, d, "c", 0)
			keys := 5 + rng.IntN(150)
			type last struct {
				off       int64
				value     string
				tombstone bool
			}
			latest := map[string]last{}
			history := map[int64]kv{}
			steps := 50 + rng.IntN(300)
			for i := range steps {
				ts := e.clock.Now().UnixMilli()
				n := 1 + rng.IntN(4)
				recs := make([]kv, n)
				for j := range recs {
					recs[j] = kv{key: fmt.Sprintf("key-%d", rng.IntN(keys)), value: fmt.Sprintf("v%d.%d", i, j), tombstone: rng.IntN(5) == 0}
				}
				codec := record.None
				if seed%4 == 2 {
					codec = record.Compression(rng.IntN(5))
				}
				res, err := l.Append(codecBatch(t, codec, ts, recs...))
				require.NoError(t, err)
				for j, r := range recs {
					r.off = res.BaseOffset + int64(j)
					if r.tombstone {
						r.value = ""
					}
					history[r.off] = r
					latest[r.key] = last{r.off, r.value, r.tombstone}
				}
				if rng.IntN(40) == 0 {
					_, err := d.CleanNow(context.Background())
					require.NoError(t, err)
				}
			}
			require.NoError(t, l.Roll(context.Background()))
			check := func(tombstonesGone bool) {
				cleanEnd := l.FirstDirtyOffset()
				seen := map[string]bool{}
				for _, r := range readAll(t, l) {
					require.Equal(t, history[r.off], r, "offset %d changed", r.off)
					if r.off >= cleanEnd {
						continue
					}
					require.False(t, seen[r.key], "key %s twice in the cleaned part", r.key)
					seen[r.key] = true
					require.Equal(t, latest[r.key].off, r.off, "key %s: not its latest record", r.key)
					if tombstonesGone {
						require.False(t, r.tombstone, "tombstone of %s past its horizon", r.key)
					}
				}
				for k, lt := range latest {
					if !lt.tombstone {
						require.True(t, seen[k] || lt.off >= cleanEnd, "key %s lost", k)
					}
				}
			}
			_, err := d.CleanNow(context.Background())
			require.NoError(t, err)
			require.Equal(t, l.LogEndOffset(), l.FirstDirtyOffset())
			check(false)
			// Past the horizon, a new round (made due by new data) drops
			// the tombstones.
			e.clock.Add(2 * time.Second)
			off := put(t, l, e.clock.Now().UnixMilli(), "other", "x", false)
			history[off] = kv{off: off, key: "other", value: "x"}
			latest["other"] = last{off: off, value: "x"}
			require.NoError(t, l.Roll(context.Background()))
			_, err = d.CleanNow(context.Background())
			require.NoError(t, err)
			check(true)
		})
	}
}

func TestCompactionTombstoneHorizon(t *testing.T) {
	compactMatrix(t, map[string]string{"delete.retention.ms": "60000"}, func(t *testing.T, e *env, d *Dir, l *Log) {
		ts := e.clock.Now().UnixMilli()
		put(t, l, ts, "a", "1", false)
		put(t, l, ts, "b", "1", false)
		put(t, l, ts, "a", "", true)
		require.NoError(t, l.Roll(context.Background()))
		_, err := d.CleanNow(context.Background())
		require.NoError(t, err)
		got := readAll(t, l)
		require.Equal(t, []kv{{off: 1, key: "b", value: "1"}, {off: 2, key: "a", tombstone: true}}, got)
		// The tombstone's batch now carries the delete horizon.
		res, err := l.Read(2, 1<<20, true)
		require.NoError(t, err)
		var hdr [record.BatchHeaderLen]byte
		_, err = res.Slice.ReadAt(hdr[:], 0)
		res.Release()
		require.NoError(t, err)
		h, err := record.ParseHeader(hdr[:])
		require.NoError(t, err)
		require.True(t, h.Attributes.HasDeleteHorizon())
		require.Equal(t, ts+60000, h.BaseTimestamp)

		// Before the horizon another round keeps it; after, it goes.
		e.clock.Add(30 * time.Second)
		put(t, l, e.clock.Now().UnixMilli(), "c", "1", false)
		require.NoError(t, l.Roll(context.Background()))
		_, err = d.CleanNow(context.Background())
		require.NoError(t, err)
		require.Contains(t, readAll(t, l), kv{off: 2, key: "a", tombstone: true})
		e.clock.Add(31 * time.Second)
		put(t, l, e.clock.Now().UnixMilli(), "d", "1", false)
		require.NoError(t, l.Roll(context.Background()))
		_, err = d.CleanNow(context.Background())
		require.NoError(t, err)
		require.NotContains(t, readAll(t, l), kv{off: 2, key: "a", tombstone: true})
	})
}

func TestCompactionMinLagAndActiveSegment(t *testing.T) {
	e, d, l := compactEnv(t, map[string]string{"min.compaction.lag.ms": "10000"})
	ts := e.clock.Now().UnixMilli()
	for i := range 20 {
		put(t, l, ts, "k", fmt.Sprint(i), false)
	}
	// Everything is in the active segment: nothing to clean.
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.NoError(t, err)
	require.Zero(t, rounds)
	require.NoError(t, l.Roll(context.Background()))
	// Sealed, but younger than min.compaction.lag.ms.
	cleaned, err = d.CleanNow(context.Background())
	rounds = cleaned.Rounds
	require.NoError(t, err)
	require.Zero(t, rounds)
	e.clock.Add(11 * time.Second)
	cleaned, err = d.CleanNow(context.Background())
	rounds = cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	require.Equal(t, []kv{{off: 19, key: "k", value: "19"}}, readAll(t, l))
}

func TestCompactionMaxLagForcesCleaning(t *testing.T) {
	e, d, l := compactEnv(t, map[string]string{"min.cleanable.dirty.ratio": "0.99", "max.compaction.lag.ms": "5000"})
	ts := e.clock.Now().UnixMilli()
	for i := range 20 {
		put(t, l, ts, fmt.Sprintf("k%d", i%5), fmt.Sprint(i), false)
	}
	require.NoError(t, l.Roll(context.Background()))
	put(t, l, ts, "z", "z", false)
	for i := range 20 {
		put(t, l, ts, fmt.Sprintf("k%d", i%5), fmt.Sprint(i), false)
	}
	require.NoError(t, l.Roll(context.Background()))
	_, err := d.CleanNow(context.Background())
	require.NoError(t, err)
	_, ok := l.CleanerStats()
	require.True(t, ok, "first round: the whole log is dirty (ratio 1)")
	for i := range 4 {
		put(t, l, ts, fmt.Sprintf("k%d", i), "again", false)
	}
	require.NoError(t, l.Roll(context.Background()))
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.NoError(t, err)
	require.Zero(t, rounds, "dirty ratio below 0.99 and the lag not passed")
	e.clock.Add(6 * time.Second)
	cleaned, err = d.CleanNow(context.Background())
	rounds = cleaned.Rounds
	require.NoError(t, err)
	require.Equal(t, 1, rounds)
}

// TestCompactionMaxLagRollsTheActiveSegment: a compacted topic's active
// segment rolls once its records span max.compaction.lag.ms when that is
// shorter than segment.ms (Kafka's LogConfig.maxSegmentMs), so that its
// records reach a sealed segment, which the cleaner may clean, within the
// lag; a topic that is not compacted rolls by segment.ms alone. Each case
// appends at the first timestamp, then at +rollAfter (no roll: Kafka rolls
// only past it), then at +rollAfter+1 ms (a roll).
func TestCompactionMaxLagRollsTheActiveSegment(t *testing.T) {
	for _, tc := range []struct {
		name      string
		props     map[string]string
		broker    map[string]string // dynamic cluster defaults, set after the topic is created
		rollAfter time.Duration
	}{
		{"compact", map[string]string{"cleanup.policy": "compact", "segment.ms": "10000", "max.compaction.lag.ms": "100"}, nil, 100 * time.Millisecond},
		{"compact,delete", map[string]string{"cleanup.policy": "compact,delete", "segment.ms": "10000", "max.compaction.lag.ms": "100"}, nil, 100 * time.Millisecond},
		{"delete ignores the lag", map[string]string{"cleanup.policy": "delete", "segment.ms": "10000", "max.compaction.lag.ms": "100"}, nil, 10 * time.Second},
		{"segment.ms shorter", map[string]string{"cleanup.policy": "compact", "segment.ms": "100", "max.compaction.lag.ms": "10000"}, nil, 100 * time.Millisecond},
		{"no lag", map[string]string{"cleanup.policy": "compact", "segment.ms": "10000"}, nil, 10 * time.Second},
		{"broker default lag", map[string]string{"cleanup.policy": "compact", "segment.ms": "10000"},
			map[string]string{"log.cleaner.max.compaction.lag.ms": "100"}, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.CleanerEnable = false
			d := e.open(t)
			defer d.Close()
			createTopic(t, d, "c", 1, tc.props)
			if tc.broker != nil {
				require.NoError(t, d.AlterBrokerConfig(context.Background(), ClusterDefault, tc.broker))
			}
			l := partition(t, d, "c", 0)
			ts := e.clock.Now().UnixMilli()
			put(t, l, ts, "k", "0", false)
			put(t, l, ts+tc.rollAfter.Milliseconds(), "k", "1", false)
			require.Len(t, l.local.segs(), 1, "records spanning exactly %s stay in the active segment", tc.rollAfter)
			off := put(t, l, ts+tc.rollAfter.Milliseconds()+1, "k", "2", false)
			segs := l.local.segs()
			require.Len(t, segs, 2, "records spanning more than %s roll the active segment", tc.rollAfter)
			require.Equal(t, off, segs[1].BaseOffset())
		})
	}
}

// TestCompactionMoreKeysThanTheMapHolds cleans 600 distinct keys with a
// map of about 40 entries: many rounds, each ending where its map filled.
func TestCompactionMoreKeysThanTheMapHolds(t *testing.T) {
	e := newEnv(t)
	e.cfg.CleanerEnable = false
	e.cfg.CleanerDedupeBufferSize = 2048
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "4096", "min.cleanable.dirty.ratio": "0"})
	l := partition(t, d, "c", 0)
	ts := e.clock.Now().UnixMilli()
	for round := range 3 {
		for i := range 600 {
			put(t, l, ts, fmt.Sprintf("k%d", i), fmt.Sprint(round), false)
		}
	}
	require.NoError(t, l.Roll(context.Background()))
	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds
	require.NoError(t, err)
	require.Greater(t, rounds, 15)
	st, _ := l.CleanerStats()
	require.LessOrEqual(t, st.MapMemoryBytes, st.MapBudgetBytes)
	require.LessOrEqual(t, st.MapBudgetBytes, int64(1024))
	got := readAll(t, l)
	require.Len(t, got, 600)
	for i, r := range got {
		require.Equal(t, int64(1200+i), r.off)
		require.Equal(t, "2", r.value)
	}
}

// TestCompactionGapReads: a consumer positioned inside a range the cleaner
// emptied reads on from the next offset present.
func TestCompactionGapReads(t *testing.T) {
	compactMatrix(t, nil, func(t *testing.T, e *env, d *Dir, l *Log) {
		ts := e.clock.Now().UnixMilli()
		for i := range 50 {
			put(t, l, ts, "dup", fmt.Sprint(i), false)
		}
		put(t, l, ts, "other", "x", false)
		require.NoError(t, l.Roll(context.Background()))
		_, err := d.CleanNow(context.Background())
		require.NoError(t, err)
		// A read returns one segment's batches (Kafka's fetch too): with
		// gzip's and snappy's larger batches 49 and 50 are in two.
		var got []int64
		for from := int64(10); from < l.LogEndOffset(); {
			next, err := l.ReadRecords(from, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
				got = append(got, rec.Offset)
				return nil
			})
			require.NoError(t, err)
			require.Greater(t, next, from)
			from = next
		}
		require.Equal(t, []int64{49, 50}, got)
		res, err := l.Read(5, 1<<20, true)
		require.NoError(t, err)
		defer res.Release()
		require.NotNil(t, res.Slice)
		require.Equal(t, int64(49), res.Slice.FirstOffset)
	})
}

// TestCompactionWithDeletePolicy: compact,delete applies retention too.
func TestCompactionWithDeletePolicy(t *testing.T) {
	compactMatrix(t, map[string]string{"cleanup.policy": "compact,delete", "retention.ms": "60000"}, func(t *testing.T, e *env, d *Dir, l *Log) {
		ts := e.clock.Now().UnixMilli()
		for i := range 30 {
			put(t, l, ts, fmt.Sprintf("k%d", i%3), fmt.Sprint(i), false)
		}
		require.NoError(t, l.Roll(context.Background()))
		_, err := d.CleanNow(context.Background())
		require.NoError(t, err)
		require.Len(t, readAll(t, l), 3)
		e.clock.Add(2 * time.Minute)
		put(t, l, e.clock.Now().UnixMilli(), "k0", "new", false)
		_, err = l.EnforceRetention()
		require.NoError(t, err)
		require.Equal(t, []kv{{off: 30, key: "k0", value: "new"}}, readAll(t, l))
	})
}

// TestCompactionTransactions: records of aborted transactions go, the last
// batch of a producer stays (emptied), markers go once their transaction
// has no data left and their horizon passed, and .txnindex entries are
// rewritten.
func TestCompactionTransactions(t *testing.T) {
	compactMatrix(t, map[string]string{"delete.retention.ms": "1000"}, func(t *testing.T, e *env, d *Dir, l *Log) {
		ts := e.clock.Now().UnixMilli()
		in := access.Internal{}
		// Producer 1 aborts a write of a; producer 2 commits b then overwrites
		// it outside any transaction.
		appendTxn(t, l, txnRecordBatch(t, 1, 0, ts, "a", "aborted"))                          // 0
		appendTxn(t, l, txnRecordBatch(t, 2, 0, ts, "b", "committed"))                        // 1
		_, err := l.AppendTxnMarker(in, 1, 0, record.EndTxnMarker{Type: record.ControlAbort}) // 2
		require.NoError(t, err)
		_, err = l.AppendTxnMarker(in, 2, 0, record.EndTxnMarker{Type: record.ControlCommit}) // 3
		require.NoError(t, err)
		put(t, l, ts, "b", "plain", false) // 4
		put(t, l, ts, "a", "plain", false) // 5
		require.NoError(t, l.Roll(context.Background()))
		aborted, err := l.AbortedTransactions(0, l.LogEndOffset())
		require.NoError(t, err)
		require.Len(t, aborted, 1)

		_, err = d.CleanNow(context.Background())
		require.NoError(t, err)
		// The aborted record went; the producers' last batches stay as empty
		// batches (their sequences), markers stay until their horizon.
		require.Equal(t, []kv{{off: 4, key: "b", value: "plain"}, {off: 5, key: "a", value: "plain"}}, readAll(t, l))
		headers := func() []record.BatchHeader {
			var out []record.BatchHeader
			for _, s := range l.local.segs() {
				sl, err := s.Read(s.BaseOffset(), 1<<20, s.Size(), true)
				require.NoError(t, err)
				if sl == nil {
					continue
				}
				_, err = sl.Batches(nil, func(h *record.BatchHeader, _ []byte) error { out = append(out, *h); return nil })
				sl.Release()
				require.NoError(t, err)
			}
			return out
		}
		hs := headers()
		require.Len(t, hs, 6)
		require.Equal(t, int32(0), hs[0].RecordsCount, "producer 1's last batch, emptied")
		require.Equal(t, int64(1), hs[0].ProducerID)
		require.Equal(t, int32(0), hs[1].RecordsCount, "producer 2's last batch, emptied")
		require.True(t, hs[2].Attributes.IsControl())
		require.Equal(t, int32(1), hs[2].RecordsCount)
		// The ABORT marker's entry stays: its (emptied) batch was seen.
		aborted, err = l.AbortedTransactions(0, l.LogEndOffset())
		require.NoError(t, err)
		require.Len(t, aborted, 1)
		// The producer state is unchanged: sequences continue.
		require.Equal(t, 2, len(l.Producers()))

		// The committed values read the same at read_committed.
		require.Equal(t, []string{"plain", "plain"}, values(t, l, true))

		// While the producers are active their emptied batches stay, and with
		// them the markers of their transactions. Once they expire, a few
		// rounds (each made due by new data) remove the batches, then the
		// markers after their horizon, and the .txnindex entry with them.
		e.clock.Add(25 * time.Hour)
		require.Equal(t, 2, l.ExpireProducers())
		for i := range 4 {
			e.clock.Add(2 * time.Second)
			put(t, l, e.clock.Now().UnixMilli(), "c", fmt.Sprint(i), false)
			require.NoError(t, l.Roll(context.Background()))
			_, err = d.CleanNow(context.Background())
			require.NoError(t, err)
		}
		for _, h := range headers() {
			require.False(t, h.Attributes.IsControl(), "a marker past its horizon is gone: %v", h)
			require.NotEqual(t, int32(0), h.RecordsCount, "%v", h)
		}
		aborted, err = l.AbortedTransactions(0, l.LogEndOffset())
		require.NoError(t, err)
		require.Empty(t, aborted)
		require.Equal(t, []string{"plain", "plain", "3"}, values(t, l, true))
	})
}

// TestCompactionConcurrentAppendsAndReads: while rounds run, appends go on
// and a reader scanning the log always finds, for every key, a value at
// least as new as the newest one written before its scan began.
func TestCompactionConcurrentAppendsAndReads(t *testing.T) {
	compactMatrix(t, map[string]string{"min.cleanable.dirty.ratio": "0", "segment.bytes": "8192"}, func(t *testing.T, e *env, d *Dir, l *Log) {
		const keys = 20
		var mu sync.Mutex
		written := map[string]int64{}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		// A failing check below ends the test at once: the goroutines
		// stop first, so that they report nothing after it ended.
		defer func() { cancel(); wg.Wait() }()
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				k := fmt.Sprintf("k%d", i%keys)
				res, err := l.Append(keyedBatch(t, e.clock.Now().UnixMilli(), kv{key: k, value: fmt.Sprint(i)}))
				if err != nil {
					t.Error(err)
					return
				}
				off := res.BaseOffset
				mu.Lock()
				written[k] = off
				mu.Unlock()
				if i%50 == 0 {
					_ = l.Roll(context.Background())
				}
			}
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := d.CleanNow(ctx); err != nil && !errors.Is(err, context.Canceled) {
					t.Error(err)
					return
				}
			}
		}()
		deadline := time.Now().Add(30 * time.Second)
		for i := 0; time.Now().Before(deadline); i++ {
			if st, ok := l.CleanerStats(); ok && st.Rounds >= 5 && i >= 30 {
				break
			}
			mu.Lock()
			want := make(map[string]int64, len(written))
			for k, v := range written {
				want[k] = v
			}
			mu.Unlock()
			newest := map[string]int64{}
			for _, r := range readAll(t, l) {
				newest[r.key] = max(newest[r.key], r.off)
			}
			for k, off := range want {
				require.GreaterOrEqual(t, newest[k], off, "key %s: a committed record went missing", k)
			}
		}
		cancel()
		wg.Wait()
		st, ok := l.CleanerStats()
		require.True(t, ok)
		require.Positive(t, st.Rounds)
	})
}

// TestCompactionBackgroundCleaner: the Dir's cleaner goroutines clean a
// compacted topic without being asked.
func TestCompactionBackgroundCleaner(t *testing.T) {
	e := newEnv(t)
	e.cfg.CleanerBackoff = time.Millisecond
	e.cfg.CleanerThreads = 2
	d := e.open(t)
	createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
	createTopic(t, d, "__consumer_offsets_like", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024"})
	l := partition(t, d, "c", 0)
	for i := range 100 {
		put(t, l, e.clock.Now().UnixMilli(), "k", fmt.Sprint(i), false)
	}
	require.NoError(t, l.Roll(context.Background()))
	require.Eventually(t, func() bool { return l.FirstDirtyOffset() == 100 }, 10*time.Second, time.Millisecond)
	require.Equal(t, []kv{{off: 99, key: "k", value: "99"}}, readAll(t, l))
	require.NoError(t, d.Close())
}

// TestCompactionInternalTopicsAreCleaned: __consumer_offsets is compacted
// like any compacted topic.
func TestCompactionInternalTopicsAreCleaned(t *testing.T) {
	e := newEnv(t)
	e.cfg.CleanerEnable = false
	d := e.open(t)
	defer d.Close()
	logs, err := d.InternalTopic(access.Internal{}, context.Background(), "__consumer_offsets", 1,
		map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024"})
	require.NoError(t, err)
	l := logs[0]
	for i := range 100 {
		_, err := l.AppendInternal(access.Internal{}, keyedBatch(t, e.clock.Now().UnixMilli(), kv{key: "group/topic/0", value: fmt.Sprint(i)}))
		require.NoError(t, err)
	}
	require.NoError(t, l.Roll(context.Background()))
	_, err = d.CleanNow(context.Background())
	require.NoError(t, err)
	require.Equal(t, []kv{{off: 99, key: "group/topic/0", value: "99"}}, readAll(t, l))
}

// TestCompactionCrashAtEveryStep crashes (keeping only synced data and
// directory entries) before every filesystem operation of cleaning and
// checks that the reopened log reads the records before cleaning, or those
// after, or — between groups or rounds — the groups swapped so far cleaned
// and the rest not (as in Kafka): every record read is one written, none of
// what cleaning keeps is missing, and no .cleaned or .swap file is left.
// The histories: puts and tombstones cleaned in one round; more keys than
// the offset map holds (several rounds in one CleanNow); and transactions,
// some aborted, whose data, markers and .txnindex entries the rounds
// rewrite. Without KAFKALITE_FAULT_EXHAUSTIVE about 320 crash points of
// each history are checked, spread over it.
func TestCompactionCrashAtEveryStep(t *testing.T) {
	in := access.Internal{}
	tests := []struct {
		name      string
		dedupe    int64 // log.cleaner.dedupe.buffer.size; 0: the default
		write     func(t *testing.T, l *Log, ts int64)
		minRounds int
	}{
		{"one round", 0, func(t *testing.T, l *Log, ts int64) {
			for i := range 60 {
				put(t, l, ts, fmt.Sprintf("k%d", i%7), fmt.Sprint(i), i%11 == 0)
			}
		}, 1},
		{"several rounds", 2048, func(t *testing.T, l *Log, ts int64) { // about 40 keys a round
			for i := range 150 {
				put(t, l, ts, fmt.Sprintf("k%d", i%90), fmt.Sprint(i), i%13 == 0)
			}
		}, 2},
		{"transactions", 0, func(t *testing.T, l *Log, ts int64) {
			for i := range 24 {
				pid := int64(1 + i%3)
				require.NoError(t, l.VerifyTransaction(in, pid, 0))
				_, err := l.Append(txnRecordBatch(t, pid, int32(i/3), ts, fmt.Sprintf("k%d", i%5), fmt.Sprint(i)))
				require.NoError(t, err)
				if i%3 == 2 { // end the three producers' transactions: commit, abort, commit
					for p := int64(1); p <= 3; p++ {
						typ := record.ControlCommit
						if p == 2 {
							typ = record.ControlAbort
						}
						_, err := l.AppendTxnMarker(in, p, 0, record.EndTxnMarker{Type: typ})
						require.NoError(t, err)
					}
				}
				put(t, l, ts, fmt.Sprintf("k%d", i%5), fmt.Sprintf("plain%d", i), false)
			}
		}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			fault := vfs.NewFaultFS(mem)
			clk := newClock()
			cfg := DefaultConfig()
			cfg.FS, cfg.Now, cfg.CleanerEnable, cfg.RetentionCheckInterval = fault, clk.Now, false, time.Hour
			if tc.dedupe > 0 {
				cfg.CleanerDedupeBufferSize = tc.dedupe
			}
			d, err := Open(context.Background(), "/data", cfg)
			require.NoError(t, err)
			createTopic(t, d, "c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "500", "min.cleanable.dirty.ratio": "0"})
			l := partition(t, d, "c", 0)
			tc.write(t, l, clk.Now().UnixMilli())
			require.NoError(t, l.Roll(context.Background()))
			require.NoError(t, l.Flush(context.Background()))
			before := readAll(t, l)

			var clones []*vfs.MemFS
			var ops []string
			fault.OnOp(func(op vfs.Op, path string) {
				if strings.Contains(path, "/c-0") && op != vfs.OpRead && op != vfs.OpStat {
					clones = append(clones, mem.CrashClone())
					ops = append(ops, op.String()+" "+path)
				}
			})
			cleaned, err := d.CleanNow(context.Background())
			rounds := cleaned.Rounds
			fault.OnOp(nil)
			require.NoError(t, err)
			require.GreaterOrEqual(t, rounds, tc.minRounds)
			after := readAll(t, l)
			require.NotEqual(t, before, after)
			clones = append(clones, mem.CrashClone())
			ops = append(ops, "end")
			require.NoError(t, d.Close())
			require.Greater(t, len(clones), 10)

			var sawBefore, sawAfter, checked int
			step := faultStride(len(clones), 320)
			for i, c := range clones {
				if i%step != 0 && i != len(clones)-1 {
					continue
				}
				checked++
				ccfg := cfg
				ccfg.FS = c
				d, err := Open(context.Background(), "/data", ccfg)
				require.NoError(t, err, "crash before %s", ops[i])
				got := readAll(t, partition(t, d, "c", 0))
				if !(subsetKVs(got, before) && subsetKVs(after, got)) {
					t.Fatalf("crash before op %d (%s): read %v\nbefore %v\nafter %v", i, ops[i], got, before, after)
				}
				if equalKVs(got, before) {
					sawBefore++
				} else if equalKVs(got, after) {
					sawAfter++
				}
				entries, err := c.List("/data/c-0")
				require.NoError(t, err)
				for _, e := range entries {
					require.False(t, strings.HasSuffix(e.Name, ".swap") || strings.HasSuffix(e.Name, ".cleaned"), "leftover %s", e.Name)
				}
				require.NoError(t, d.Close())
			}
			require.Positive(t, sawBefore)
			require.Positive(t, sawAfter)
			t.Logf("%d rounds, %d crash points, %d checked", rounds, len(clones), checked)
		})
	}
}

// subsetKVs reports whether every record of a is in b.
func subsetKVs(a, b []kv) bool {
	in := map[kv]bool{}
	for _, r := range b {
		in[r] = true
	}
	for _, r := range a {
		if !in[r] {
			return false
		}
	}
	return true
}

func equalKVs(a, b []kv) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCompactionRemovesSnapshotsOfMergedSegments: when the cleaner swaps
// one cleaned segment in for several, the producer snapshots named by the
// segments it replaced go, as Kafka's UnifiedLog.replaceSegments removes
// them (deleteProducerSnapshots of the old segments no new segment has the
// base offset of): the directory holds a snapshot at each segment's base
// offset and at the log end, as a broker's does. The producer state is
// unchanged.
func TestCompactionRemovesSnapshotsOfMergedSegments(t *testing.T) {
	e, d, l := compactEnv(t, nil)
	ts := e.clock.Now().UnixMilli()
	for seg := range 3 {
		_, err := l.Append(idemBatch(t, 4, 0, int32(5*seg), 5, false, fmt.Sprint("s", seg)))
		require.NoError(t, err)
		require.NoError(t, l.Roll(context.Background()))
	}
	put(t, l, ts, "k", "active", false)
	before := l.Producers()
	list := func() []int64 {
		offs, err := snapshot.List(e.mem, "/data/c-0")
		require.NoError(t, err)
		return offs
	}
	require.Equal(t, []int64{5, 10, 15}, list(), "a snapshot at every roll")

	cleaned, err := d.CleanNow(context.Background())
	rounds := cleaned.Rounds

	require.NoError(t, err)
	require.Equal(t, 1, rounds)
	segs := l.local.segs()
	require.Len(t, segs, 2, "the three sealed segments were cleaned into one")
	require.Equal(t, int64(0), segs[0].BaseOffset())
	require.Equal(t, []int64{15}, list(), "the snapshots at 5 and 10 named merged segments")
	require.Equal(t, before, l.Producers())

	require.NoError(t, d.Close())
	require.Equal(t, []int64{15, 16}, list(), "and the one at the log end, written at close")
	d = e.open(t)
	defer d.Close()
	require.Equal(t, before, partition(t, d, "c", 0).Producers())
}
