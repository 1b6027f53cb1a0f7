package compaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// testDir is the partition directory of a testLog.
const testDir = "/p"

// testLog is a partition on a memory FS for cleaning rounds without the log
// package: sealed segments to clean, an active segment whose base offset
// bounds the round (FirstUncleanableOffset), and a Replace that swaps as
// the log does.
type testLog struct {
	t *testing.T
	// fsys is a memory FS behind a fault injector.
	fsys    *vfs.FaultFS
	segs    []*segment.Segment // sealed, oldest first
	active  *segment.Segment
	next    int64
	aborted []index.AbortedTxn
	// codec compresses every data batch the test appends.
	codec record.Compression
	// replace, if set, runs instead of the swap.
	replace func(old []*segment.Segment, base int64) error
	// abortedCalls counts the calls of the round's AbortedTxns; onAborted
	// runs at each, and its error is AbortedTxns's.
	abortedCalls int
	onAborted    func(call int) error
}

func newTestLog(t *testing.T) *testLog {
	t.Helper()
	tl := &testLog{t: t, fsys: vfs.NewFaultFS(vfs.NewMem())}
	require.NoError(t, tl.fsys.MkdirAll(testDir))
	tl.active = tl.create(0)
	t.Cleanup(func() {
		for _, s := range append(tl.segs, tl.active) {
			_ = s.Close()
		}
	})
	return tl
}

// newTestLogs runs fn with a testLog per codec, as subtests named by it.
func newTestLogs(t *testing.T, fn func(t *testing.T, tl *testLog)) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		tl := newTestLog(t)
		tl.codec = codec
		fn(t, tl)
		// A cleaned data batch keeps its codec (an emptied one has no
		// records to compress).
		for _, b := range tl.batches() {
			if !b.h.Attributes.IsControl() && len(b.recs) > 0 {
				require.Equal(t, codec, b.h.Attributes.Compression(), "batch %d", b.h.BaseOffset)
			}
		}
	})
}

func (tl *testLog) create(base int64) *segment.Segment {
	s, err := segment.Create(tl.fsys, testDir, base, segment.DefaultConfig(), 0)
	require.NoError(tl.t, err)
	return s
}

// appendBatch appends a batch of h's kind holding recs (offset deltas 0, 1,
// ...) at the log's end and returns its base offset.
func (tl *testLog) appendBatch(h record.BatchHeader, recs ...record.Record) int64 {
	tl.t.Helper()
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	h.BaseOffset = tl.next
	if !h.Attributes.IsControl() {
		h.Attributes = h.Attributes.WithCompression(tl.codec)
	}
	b, err := record.AppendBatch(nil, h, record.DefaultLevel, recs)
	require.NoError(tl.t, err)
	return tl.appendRaw(b)
}

func (tl *testLog) appendRaw(b []byte) int64 {
	tl.t.Helper()
	require.NoError(tl.t, record.SetBaseOffset(b, tl.next))
	h, err := record.ParseHeader(b)
	require.NoError(tl.t, err)
	require.NoError(tl.t, tl.active.Append(b, &h))
	tl.next = h.NextOffset()
	return h.BaseOffset
}

// put appends a plain (non-idempotent) batch of key=value records; a value
// "" with the key prefixed by "-" is a tombstone, a key "" a null key.
func (tl *testLog) put(kvs ...string) int64 {
	tl.t.Helper()
	var recs []record.Record
	for _, s := range kvs {
		k, v, _ := strings.Cut(s, "=")
		r := record.Record{Timestamp: 1000, Key: []byte(k), Value: []byte(v)}
		if k == "" {
			r.Key = nil
		}
		if strings.HasPrefix(k, "-") {
			r.Key, r.Value = []byte(k[1:]), nil
		}
		recs = append(recs, r)
	}
	return tl.appendBatch(plainHeader(), recs...)
}

func plainHeader() record.BatchHeader {
	return record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
}

// roll seals the active segment and starts the next.
func (tl *testLog) roll() {
	tl.t.Helper()
	require.NoError(tl.t, tl.active.Seal())
	tl.segs = append(tl.segs, tl.active)
	tl.active = tl.create(tl.next)
}

// roundOpts describe one cleaning round of a testLog.
type roundOpts struct {
	firstDirty int64
	now        time.Time
	producers  map[int64]LastRecord
	ctx        context.Context
}

var t0 = time.UnixMilli(1_800_000_000_000)

const testDeleteRetention = time.Minute

func (tl *testLog) clean(c *Cleaner, r roundOpts) (Stats, error) {
	tl.t.Helper()
	if r.now.IsZero() {
		r.now = t0
	}
	if r.ctx == nil {
		r.ctx = context.Background()
	}
	l := &Log{FS: tl.fsys, Dir: testDir, Segments: slices.Clone(tl.segs),
		FirstDirtyOffset: r.firstDirty, FirstUncleanableOffset: tl.active.BaseOffset(),
		Now: r.now, DeleteRetention: testDeleteRetention,
		SegmentBytes: 1 << 20, MaxIndexBytes: 1 << 20, IndexIntervalBytes: 4096,
		Producers: r.producers,
		AbortedTxns: func(from, upper int64) ([]index.AbortedTxn, error) {
			tl.abortedCalls++
			if tl.onAborted != nil {
				if err := tl.onAborted(tl.abortedCalls); err != nil {
					return nil, err
				}
			}
			var out []index.AbortedTxn
			for _, a := range tl.aborted {
				if a.FirstOffset < upper && a.LastOffset >= from {
					out = append(out, a)
				}
			}
			return out, nil
		},
		Replace: tl.swap,
	}
	return c.Clean(r.ctx, l)
}

// swap is the log's Replace: CommitSwap, then the cleaned segment takes the
// old ones' place in the list.
func (tl *testLog) swap(old []*segment.Segment, base int64) error {
	if tl.replace != nil {
		return tl.replace(old, base)
	}
	for _, s := range old {
		if err := s.LoadIndexes(); err != nil {
			return err
		}
	}
	if err := CommitSwap(tl.fsys, testDir, base, old); err != nil {
		return err
	}
	ns, err := segment.Open(tl.fsys, testDir, base, segment.DefaultConfig(), segment.OpenOptions{})
	if err != nil {
		return err
	}
	i := slices.Index(tl.segs, old[0])
	tl.segs = slices.Replace(tl.segs, i, i+len(old), ns)
	for _, s := range old {
		if err := s.Close(); err != nil {
			return err
		}
	}
	return nil
}

// batch is a batch read back: its header, its raw bytes and its records.
type batch struct {
	h    record.BatchHeader
	raw  []byte
	recs []record.Record
}

// batches reads every batch of the sealed segments, checking CRCs.
func (tl *testLog) batches() []batch {
	tl.t.Helper()
	var out []batch
	r := record.NewReader(record.ReaderOptions{})
	for _, s := range tl.segs {
		sl, err := s.Read(s.BaseOffset(), 1<<20, s.Size(), true)
		require.NoError(tl.t, err)
		if sl == nil {
			continue
		}
		_, err = sl.Batches(nil, func(h *record.BatchHeader, b []byte) error {
			bt := batch{h: *h, raw: bytes.Clone(b)}
			if err := r.Reset(b); err != nil {
				return err
			}
			for r.Next() {
				bt.recs = append(bt.recs, r.Record().Clone())
			}
			out = append(out, bt)
			return r.Err()
		})
		sl.Release()
		require.NoError(tl.t, err)
	}
	return out
}

// sizes returns the sealed segments' sizes.
func (tl *testLog) sizes() (total int64, each []int64) {
	for _, s := range tl.segs {
		total += s.Size()
		each = append(each, s.Size())
	}
	return total, each
}

// leftovers returns the .cleaned and .swap files in the directory.
func (tl *testLog) leftovers() []string {
	tl.t.Helper()
	es, err := tl.fsys.List(testDir)
	require.NoError(tl.t, err)
	var out []string
	for _, e := range es {
		if strings.HasSuffix(e.Name, segment.CleanedSuffix) || strings.HasSuffix(e.Name, segment.SwapSuffix) {
			out = append(out, e.Name)
		}
	}
	return out
}

func newTestCleaner(t *testing.T, cfg Config) *Cleaner {
	t.Helper()
	if cfg.DedupeBufferBytes == 0 {
		cfg.DedupeBufferBytes = 1 << 20
	}
	if cfg.LoadFactor == 0 {
		cfg.LoadFactor = 0.9
	}
	c, err := NewCleaner(cfg)
	require.NoError(t, err)
	return c
}

// offsets returns each batch's base offset, last offset and record count.
func offsets(bs []batch) [][3]int64 {
	var out [][3]int64
	for _, b := range bs {
		out = append(out, [3]int64{b.h.BaseOffset, b.h.LastOffset(), int64(b.h.RecordsCount)})
	}
	return out
}

func TestConfigValidate(t *testing.T) {
	ok := Config{DedupeBufferBytes: 1 << 20, LoadFactor: 0.9, IOBufferBytes: 0}
	require.NoError(t, ok.Validate())
	for name, mod := range map[string]func(*Config){
		"dedupe buffer holds no key": func(c *Config) { c.DedupeBufferBytes = 2*SlotBytes - 1 },
		"load factor 0":              func(c *Config) { c.LoadFactor = 0 },
		"load factor above 1":        func(c *Config) { c.LoadFactor = 1.01 },
		"negative I/O buffer":        func(c *Config) { c.IOBufferBytes = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			c := ok
			mod(&c)
			require.ErrorIs(t, c.Validate(), ErrConfig)
			_, err := NewCleaner(c)
			require.ErrorIs(t, err, ErrConfig)
		})
	}
}

// TestCleanStats checks a round's stats against a log of known bytes: three
// segments, each read once by the map and once by the rewrite, rewritten
// into two groups (segment.bytes fits two of them).
func TestCleanStats(t *testing.T) {
	tl := newTestLog(t)
	for i := range 3 {
		for j := range 4 {
			tl.put(fmt.Sprintf("k%d=v%d.%d", j%2, i, j))
		}
		tl.put("=no key")
		tl.roll()
	}
	total, each := tl.sizes()
	c := newTestCleaner(t, Config{})
	tick := t0
	c.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	// Two groups: the first two segments fit segment.bytes together.
	lg := &Log{FS: tl.fsys, Dir: testDir, Segments: slices.Clone(tl.segs), FirstDirtyOffset: 0,
		FirstUncleanableOffset: tl.active.BaseOffset(), Now: t0, DeleteRetention: testDeleteRetention,
		SegmentBytes: each[0] + each[1], MaxIndexBytes: 1 << 20, IndexIntervalBytes: 4096,
		AbortedTxns: func(int64, int64) ([]index.AbortedTxn, error) { return nil, nil }, Replace: tl.swap}
	st, err := c.Clean(context.Background(), lg)
	require.NoError(t, err)
	after, _ := tl.sizes()
	got := tl.batches()
	// k0 and k1's latest records, and the round's last batch, emptied:
	// its null-key record went.
	require.Equal(t, [][3]int64{{12, 12, 1}, {13, 13, 1}, {14, 14, 0}}, offsets(got))
	require.Equal(t, int64(len(got[0].raw)+len(got[1].raw)+record.BatchHeaderLen), after)
	const slots = 17 // Reset for 15 offsets at load factor 0.9: int(15/0.9) + 1
	require.Equal(t, Stats{
		MapBytesRead: total, MapRecordsRead: 15,
		BytesRead: total, RecordsRead: 15,
		BytesWritten: after, RecordsRetained: 2,
		InvalidRecords: 3,
		MapDuration:    time.Second, CleanDuration: time.Second,
		MapKeys: 2, MapSlots: slots, MapMemoryBytes: slots * SlotBytes, MapBudgetBytes: (1 << 20) / SlotBytes * SlotBytes,
		FirstDirtyOffset: 0, EndOffset: 15, Groups: 2,
	}, st)
	require.Equal(t, int64(13), st.RecordsRemoved())
	// The first group's records all went: its cleaned segment is empty.
	require.Len(t, tl.segs, 2)
	require.Zero(t, tl.segs[0].Size())
}

// TestCleanNullKeys: a record without a key can reach the cleaner when a
// topic switched from delete to compact. Kafka's Cleaner.shouldRetainRecord
// counts it as invalid and removes it (unless it lies above the offset
// map's end); the offset map never holds it.
func TestCleanNullKeys(t *testing.T) {
	newTestLogs(t, func(t *testing.T, tl *testLog) {
		tl.put("=x", "a=1") // 0, 1
		tl.put("a=2")       // 2
		tl.put("=y", "b=1") // 3, 4
		tl.roll()
		c := newTestCleaner(t, Config{})
		st, err := tl.clean(c, roundOpts{})
		require.NoError(t, err)
		require.Equal(t, int64(2), st.InvalidRecords)
		require.Equal(t, 2, st.MapKeys)
		got := tl.batches()
		require.Equal(t, [][3]int64{{2, 2, 1}, {3, 4, 1}}, offsets(got))
		require.Equal(t, []byte("b"), got[1].recs[0].Key)
		require.Equal(t, int64(4), got[1].recs[0].Offset)
	})
}

// TestCleanKeepsTheRoundsLastBatch: the batch ending at the round's upper
// bound stays, emptied, when all its records go, so that the log keeps its
// last offset (Kafka's RETAIN_EMPTY for batch.nextOffset ==
// upperBoundOffsetOfCleaningRound); once another batch follows it, the
// emptied batch goes.
func TestCleanKeepsTheRoundsLastBatch(t *testing.T) {
	newTestLogs(t, func(t *testing.T, tl *testLog) {
		tl.put("a=1", "b=1") // 0, 1
		tl.put("a=2")        // 2
		tl.put("=z")         // 3: a null key
		tl.roll()
		c := newTestCleaner(t, Config{})
		st, err := tl.clean(c, roundOpts{})
		require.NoError(t, err)
		require.Equal(t, int64(1), st.InvalidRecords)
		got := tl.batches()
		require.Equal(t, [][3]int64{{0, 1, 1}, {2, 2, 1}, {3, 3, 0}}, offsets(got))
		require.Len(t, got[2].raw, record.BatchHeaderLen)
		require.Equal(t, int64(record.NoTimestamp), got[2].h.BaseTimestamp)
		require.Equal(t, int64(-1), got[2].h.ProducerID)

		tl.put("c=1") // 4
		tl.roll()
		_, err = tl.clean(c, roundOpts{firstDirty: 4})
		require.NoError(t, err)
		require.Equal(t, [][3]int64{{0, 1, 1}, {2, 2, 1}, {4, 4, 1}}, offsets(tl.batches()))
	})
}

// TestCleanKeepsTheLastBatchOfEachProducer: an active producer's batch
// holding its last data offset stays, emptied, so that its sequence
// survives; once the producer expired, it goes.
func TestCleanKeepsTheLastBatchOfEachProducer(t *testing.T) {
	newTestLogs(t, func(t *testing.T, tl *testLog) {
		h := plainHeader()
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = 9, 3, 40
		// Offsets 0 (the producer's), 1 and 2.
		tl.appendBatch(h, record.Record{Timestamp: 1000, Key: []byte("a"), Value: []byte("1")})
		tl.put("a=2")
		tl.put("b=1")
		tl.roll()
		c := newTestCleaner(t, Config{})
		producers := map[int64]LastRecord{9: {LastDataOffset: 0, ProducerEpoch: 3}}
		_, err := tl.clean(c, roundOpts{producers: producers})
		require.NoError(t, err)
		got := tl.batches()
		require.Equal(t, [][3]int64{{0, 0, 0}, {1, 1, 1}, {2, 2, 1}}, offsets(got))
		require.Equal(t, int64(9), got[0].h.ProducerID)
		require.Equal(t, int16(3), got[0].h.ProducerEpoch)
		require.Equal(t, int32(40), got[0].h.BaseSequence)
		require.Len(t, got[0].raw, record.BatchHeaderLen)

		tl.put("c=1")
		tl.roll()
		_, err = tl.clean(c, roundOpts{firstDirty: 3})
		require.NoError(t, err)
		require.Equal(t, [][3]int64{{1, 1, 1}, {2, 2, 1}, {3, 3, 1}}, offsets(tl.batches()))
	})
}

// TestCleanMarkerAsProducersLastEntry follows a COMMIT marker that is its
// producer's last entry (LastRecord.LastDataOffset -1) through rounds, as
// Kafka's cleaner treats it: kept while data of its transaction is seen;
// then given a delete horizon; past the horizon emptied to a 61-byte control
// batch (it holds the producer's epoch, for fencing) while the producer is
// active; the emptied batch (an already cleaned control batch) stays while
// the producer is active and goes once it is not.
func TestCleanMarkerAsProducersLastEntry(t *testing.T) {
	newTestLogs(t, func(t *testing.T, tl *testLog) {
		txn := plainHeader()
		txn.Attributes = txn.Attributes.WithTransactional(true)
		txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence = 7, 2, 0
		tl.appendBatch(txn, record.Record{Timestamp: 1000, Key: []byte("a"), Value: []byte("txn")}) // 0
		marker, err := record.AppendEndTxnMarkerBatch(nil, 0, -1, 7, 2, 1500, record.EndTxnMarker{Type: record.ControlCommit})
		require.NoError(t, err)
		tl.appendRaw(marker) // 1
		tl.put("a=plain")    // 2
		tl.put("z=1")        // 3
		tl.roll()
		c := newTestCleaner(t, Config{})
		producers := map[int64]LastRecord{7: {LastDataOffset: -1, ProducerEpoch: 2}}

		// Round 1: the transaction's data was superseded, but it was seen in
		// this round: the marker stays as it was.
		_, err = tl.clean(c, roundOpts{producers: producers})
		require.NoError(t, err)
		got := tl.batches()
		require.Equal(t, [][3]int64{{1, 1, 1}, {2, 2, 1}, {3, 3, 1}}, offsets(got))
		require.Equal(t, marker, got[0].raw, "copied byte for byte")

		// Round 2: no data of its transaction is left: the marker gets its
		// delete horizon.
		tl.put("y=1") // 4
		tl.roll()
		_, err = tl.clean(c, roundOpts{firstDirty: 4, producers: producers})
		require.NoError(t, err)
		got = tl.batches()
		require.True(t, got[0].h.Attributes.IsControl())
		require.True(t, got[0].h.Attributes.HasDeleteHorizon())
		require.Equal(t, t0.Add(testDeleteRetention).UnixMilli(), got[0].h.BaseTimestamp)
		require.Equal(t, int64(1500), got[0].recs[0].Timestamp, "the record keeps its timestamp")
		typ, err := record.ParseControlKey(got[0].recs[0].Key)
		require.NoError(t, err)
		require.Equal(t, record.ControlCommit, typ)

		// Round 3, past the horizon: the producer is active and this marker is
		// its last entry, so an empty control batch stays in its place.
		tl.put("y=2") // 5
		tl.roll()
		_, err = tl.clean(c, roundOpts{firstDirty: 5, now: t0.Add(testDeleteRetention), producers: producers})
		require.NoError(t, err)
		got = tl.batches()
		require.Equal(t, [][3]int64{{1, 1, 0}, {2, 2, 1}, {3, 3, 1}, {5, 5, 1}}, offsets(got))
		empty := got[0]
		require.Len(t, empty.raw, record.BatchHeaderLen)
		require.True(t, empty.h.Attributes.IsControl())
		require.True(t, empty.h.Attributes.IsTransactional())
		require.False(t, empty.h.Attributes.HasDeleteHorizon())
		require.Equal(t, int64(7), empty.h.ProducerID)
		require.Equal(t, int16(2), empty.h.ProducerEpoch)

		// Round 4: an already emptied control batch stays while it is the
		// active producer's last entry.
		tl.put("y=3") // 6
		tl.roll()
		_, err = tl.clean(c, roundOpts{firstDirty: 6, now: t0.Add(2 * testDeleteRetention), producers: producers})
		require.NoError(t, err)
		got = tl.batches()
		require.Equal(t, empty.raw, got[0].raw)

		// Round 5: the producer expired; the empty batch goes.
		tl.put("y=4") // 7
		tl.roll()
		_, err = tl.clean(c, roundOpts{firstDirty: 7, now: t0.Add(2 * testDeleteRetention)})
		require.NoError(t, err)
		require.Equal(t, [][3]int64{{2, 2, 1}, {3, 3, 1}, {7, 7, 1}}, offsets(tl.batches()))
	})
}

// TestCleanKeepsUnknownControlRecords: a control batch that is not an
// end-transaction marker (a known type such as LEADER_CHANGE, a type the
// cleaner does not know, or a key it cannot parse) is never removed and is
// copied byte for byte, whatever the time. Kafka's
// CleanedTransactionMetadata.onControlBatchRead returns false (keep) for
// every type but ABORT and COMMIT; it throws on a key shorter than 4 bytes,
// which kafkalite keeps instead.
func TestCleanKeepsUnknownControlRecords(t *testing.T) {
	for name, key := range map[string][]byte{
		"leader change": record.AppendControlKey(nil, record.ControlLeaderChange),
		"unknown type":  record.AppendControlKey(nil, record.ControlType(0x4242)),
		"short key":     {0, 0},
		"bad version":   {0x80, 0, 0, 1},
	} {
		t.Run(name, func(t *testing.T) {
			tl := newTestLog(t)
			// Offsets 0, 1 (the control batch) and 2.
			tl.put("a=1")
			h := plainHeader()
			h.Attributes = h.Attributes.WithControl(true)
			tl.appendBatch(h, record.Record{Timestamp: 1000, Key: key, Value: []byte("v")})
			tl.put("a=2")
			tl.roll()
			control := tl.batches()[1].raw
			c := newTestCleaner(t, Config{})
			for i, now := range []time.Time{t0, t0.Add(100 * testDeleteRetention)} {
				st, err := tl.clean(c, roundOpts{now: now, firstDirty: int64(i) * 3})
				require.NoError(t, err)
				got := tl.batches()
				require.Equal(t, [3]int64{1, 1, 1}, offsets(got)[0])
				require.Equal(t, control, got[0].raw)
				require.Zero(t, st.InvalidRecords)
				tl.put("b=1") // 3
				tl.roll()
			}
		})
	}
}

// TestCleanAborted: a round whose swap finds the log changed (Replace
// returns ErrAborted), or whose context ends, returns ErrAborted, leaves no
// .cleaned or .swap file and leaves the log as it was.
func TestCleanAborted(t *testing.T) {
	cases := map[string]func(tl *testLog) context.Context{
		"log changed": func(tl *testLog) context.Context {
			tl.replace = func([]*segment.Segment, int64) error {
				return fmt.Errorf("%w: the log changed during cleaning", ErrAborted)
			}
			return context.Background()
		},
		"context ended while rewriting": func(tl *testLog) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			tl.onAborted = func(call int) error {
				if call == 3 { // the map's, the first segment's, then the second's
					cancel()
				}
				return nil
			}
			return ctx
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			newTestLogs(t, func(t *testing.T, tl *testLog) { testCleanAborted(t, tl, setup) })
		})
	}
}

func testCleanAborted(t *testing.T, tl *testLog, setup func(tl *testLog) context.Context) {
	for i := range 20 {
		tl.put(fmt.Sprintf("k%d=%d", i%3, i))
		if i%5 == 4 {
			tl.roll()
		}
	}
	before := tl.batches()
	ctx := setup(tl)
	c := newTestCleaner(t, Config{})
	_, err := tl.clean(c, roundOpts{ctx: ctx})
	require.ErrorIs(t, err, ErrAborted)
	if ctx.Err() != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	require.Empty(t, tl.leftovers())
	require.Equal(t, before, tl.batches())
}

// TestCleanThrottled: every byte a round reads (map and rewrite) and writes
// goes through the throttler. With a rate of 1 byte/s and a clock that
// moves 1 s per reading, each check window holds one call of n bytes, so
// the throttler sleeps n−1 seconds at each.
func TestCleanThrottled(t *testing.T) {
	tl := newTestLog(t)
	for i := range 30 {
		tl.put(fmt.Sprintf("k%d=%d", i%4, i))
		if i%10 == 9 {
			tl.roll()
		}
	}
	clk := testclock.New(t0)
	var sleeps []time.Duration
	thr := NewThrottler(1, tick(clk, time.Second), func(_ context.Context, d time.Duration) error {
		sleeps = append(sleeps, d)
		clk.Add(d)
		return nil
	})
	c := newTestCleaner(t, Config{Throttler: thr})
	st, err := tl.clean(c, roundOpts{})
	require.NoError(t, err)
	var slept time.Duration
	for _, d := range sleeps {
		slept += d
	}
	// One call per segment read by each pass, one per cleaned segment
	// written (a segment fits one I/O buffer).
	calls := 3 + 3 + st.Groups
	require.Len(t, sleeps, calls)
	require.Equal(t, st.MapBytesRead+st.BytesRead+st.BytesWritten, int64(slept/time.Second)+int64(calls))

	// The sleeper's error ends the round as an abort.
	thr = NewThrottler(1, tick(clk, time.Second), func(ctx context.Context, _ time.Duration) error { return context.Canceled })
	c = newTestCleaner(t, Config{Throttler: thr})
	tl.put("k0=again")
	tl.roll()
	_, err = tl.clean(c, roundOpts{firstDirty: 30})
	require.ErrorIs(t, err, ErrAborted)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, tl.leftovers())
}

// TestCleanFailure: a round that meets an error (a corrupt batch, an I/O
// error) fails with it, not with ErrAborted (the log marks such a partition
// uncleanable), leaves no cleaned files and leaves the log as it was.
func TestCleanFailure(t *testing.T) {
	ioErr := errors.New("disk on fire")
	tests := []struct {
		name  string
		setup func(tl *testLog)
		want  error
	}{
		{"corrupt batch while rewriting", func(tl *testLog) {
			tl.onAborted = func(call int) error {
				if call == 3 { // the map's, the first segment's, the second's
					f, err := tl.fsys.OpenReadWrite(tl.segs[1].LogFile())
					require.NoError(tl.t, err)
					_, err = f.WriteAt([]byte{1}, 16) // the first batch's magic
					require.NoError(tl.t, err)
					require.NoError(tl.t, f.Close())
				}
				return nil
			}
		}, record.ErrUnsupportedMagic},
		{"transaction index while mapping", func(tl *testLog) {
			tl.onAborted = func(int) error { return ioErr }
		}, ioErr},
		{"transaction index while rewriting", func(tl *testLog) {
			tl.onAborted = func(call int) error {
				if call == 3 {
					return ioErr
				}
				return nil
			}
		}, ioErr},
		{"sync of the cleaned segment", func(tl *testLog) {
			tl.fsys.Inject(vfs.EIO(vfs.OpSync, segment.LogSuffix+segment.CleanedSuffix, 1))
		}, syscall.EIO},
		{"swap", func(tl *testLog) {
			tl.fsys.Inject(vfs.EIO(vfs.OpRename, segment.CleanedSuffix, 1))
		}, ErrSwap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTestLog(t)
			for i := range 10 {
				tl.put(fmt.Sprintf("k%d=%d", i%2, i))
				if i%5 == 4 {
					tl.roll()
				}
			}
			before := tl.batches()
			tc.setup(tl)
			c := newTestCleaner(t, Config{})
			_, err := tl.clean(c, roundOpts{})
			require.ErrorIs(t, err, tc.want)
			require.NotErrorIs(t, err, ErrAborted)
			tl.fsys.Clear()
			if !errors.Is(err, ErrSwap) { // a failed swap is for RecoverDir
				require.Empty(t, tl.leftovers())
			}
			tl.onAborted = nil
			if errors.Is(err, record.ErrUnsupportedMagic) {
				return
			}
			require.Equal(t, before, tl.batches())
		})
	}
}

// TestCleanNothingDirty: a round with no dirty section does nothing.
func TestCleanNothingDirty(t *testing.T) {
	tl := newTestLog(t)
	tl.put("a=1")
	tl.roll()
	c := newTestCleaner(t, Config{})
	st, err := tl.clean(c, roundOpts{firstDirty: 1})
	require.NoError(t, err)
	require.Equal(t, Stats{FirstDirtyOffset: 1, EndOffset: 1, MapBudgetBytes: (1 << 20) / SlotBytes * SlotBytes}, st)
}
