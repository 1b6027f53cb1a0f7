package log

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// tierReadCase is a tiered partition whose oldest segments are only in the
// store, with what every read of them gave while they were still local.
type tierReadCase struct {
	d *Dir
	l *Log
	// base is the first batch's timestamp; batch i has base + i*1000.
	base int64
	// remoteEnd is the first local offset: below it, reads use copies.
	remoteEnd int64
	// slices holds Read(offset, 1000, true)'s bytes per offset, records
	// ReadRecords', committed ReadCommittedRecords' (from 0).
	slices    map[int64][]byte
	records   []record.Record
	committed []record.Record
	// byTime holds OffsetForTimestamp(base + i*500) per i.
	byTime []OffsetAndTimestamp
	// aborted holds AbortedTransactions(from, to) per span of spans.
	aborted map[abortSpan][]index.AbortedTxn
}

// abortSpan is a range [from, to) of AbortedTransactions.
type abortSpan struct{ from, to int64 }

// spans are ranges of every length a read can have, from every other
// offset below end.
func spans(end int64) []abortSpan {
	var out []abortSpan
	for from := int64(0); from < end; from += 2 {
		for _, n := range []int64{1, 5, 12, 40} {
			out = append(out, abortSpan{from, from + n})
		}
	}
	return out
}

// newTierReadCase fills a tiered partition with batches of 5 records (one
// segment per 3 of them), every fourth batch a transaction of its own
// producer, aborted every other time, the ABORT marker some batches later
// (in a later segment for some), tiers and trims it, and records what the
// reads gave before the trim.
func newTierReadCase(t *testing.T, e *env, batches int) *tierReadCase {
	t.Helper()
	d := e.open(t)
	t.Cleanup(func() { d.Close() })
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.bytes": "0"})
	l := partition(t, d, "tiered", 0)
	c := &tierReadCase{d: d, l: l, base: e.clock.Now().UnixMilli()}
	type open struct {
		pid   int64
		abort bool
		at    int // batch index to end it after
	}
	var pending []open
	for i := range batches {
		ts := c.base + int64(i)*1000
		if i%4 == 1 {
			pid := int64(100 + i)
			appendTxn(t, l, withTimestamps(t, txnBatch(t, pid, 0, 0, 5), ts))
			pending = append(pending, open{pid: pid, abort: i%8 == 1, at: i + 1 + i%5})
		} else {
			_, err := l.Append(producerBatch(t, 5, 100, ts, record.None))
			require.NoError(t, err)
		}
		for j := 0; j < len(pending); j++ {
			if p := pending[j]; p.at <= i || i == batches-1 {
				typ := record.ControlCommit
				if p.abort {
					typ = record.ControlAbort
				}
				_, err := l.AppendTxnMarker(access.Internal{}, p.pid, 0, record.EndTxnMarker{Type: typ})
				require.NoError(t, err)
				pending = append(pending[:j], pending[j+1:]...)
				j--
			}
		}
	}
	require.Empty(t, pending)
	fill(t, l, 1) // the active segment: local
	c.slices = map[int64][]byte{}
	for off := int64(0); off < l.LogEndOffset(); off++ {
		res, err := l.Read(off, 1000, true)
		require.NoError(t, err)
		b, err := res.Slice.Bytes(nil)
		require.NoError(t, err)
		res.Release()
		c.slices[off] = b
	}
	c.records = records(t, l, 0)
	c.committed = committedRecords(t, l, 0)
	var err error
	for i := range 2 * batches {
		got, ok, err := l.OffsetForTimestamp(c.base + int64(i)*500)
		require.NoError(t, err)
		if !ok {
			got = OffsetAndTimestamp{Offset: -1}
		}
		c.byTime = append(c.byTime, got)
	}
	c.aborted = map[abortSpan][]index.AbortedTxn{}
	for _, sp := range spans(l.LogEndOffset()) {
		c.aborted[sp], err = l.AbortedTransactions(sp.from, sp.to)
		require.NoError(t, err)
	}
	copiedAndTrimmed(t, d, l)
	c.remoteEnd = l.LocalLogStartOffset()
	require.Greater(t, c.remoteEnd, int64(batches)*5/2, "most batches are only in the store")
	return c
}

// withTimestamps rewrites a built batch's records to timestamp ts.
func withTimestamps(t *testing.T, b []byte, ts int64) []byte {
	t.Helper()
	r := record.NewReader(record.ReaderOptions{})
	require.NoError(t, r.Reset(b))
	h := r.Header()
	var bld record.Builder
	bld.Reset(record.BatchHeader{PartitionLeaderEpoch: h.PartitionLeaderEpoch, Attributes: h.Attributes,
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}, record.DefaultLevel)
	for r.Next() {
		rec := r.Record()
		require.NoError(t, bld.Append(ts, rec.Key, rec.Value, nil))
	}
	require.NoError(t, r.Err())
	out, err := bld.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

// firstAtOrAfter returns the first record at or after offset, ok false if
// none.
func firstAtOrAfter(recs []record.Record, offset int64) (record.Record, bool) {
	for _, r := range recs {
		if r.Offset >= offset {
			return r, true
		}
	}
	return record.Record{}, false
}

// readOnce runs one of the five reads of the case's offsets below
// remoteEnd, checking its answer against the one the local segments gave.
func (c *tierReadCase) readOnce(rng *rand.Rand) error {
	l := c.l
	off := rng.Int64N(c.remoteEnd)
	switch op := rng.IntN(5); op {
	case 0:
		res, err := l.Read(off, 1000, true)
		if err != nil {
			return fmt.Errorf("Read(%d): %w", off, err)
		}
		defer res.Release()
		b, err := res.Slice.Bytes(nil)
		if err != nil {
			return fmt.Errorf("Read(%d): %w", off, err)
		}
		if !bytes.Equal(b, c.slices[off]) {
			return fmt.Errorf("Read(%d): %d bytes, want %d", off, len(b), len(c.slices[off]))
		}
	case 1, 2:
		read := l.ReadRecords
		want := c.records
		if op == 2 {
			read, want = l.ReadCommittedRecords, c.committed
		}
		var got []record.Record
		_, err := read(off, 1000, func(r *record.Record, _ *record.BatchHeader) error {
			got = append(got, r.Clone())
			return nil
		})
		if err != nil {
			return fmt.Errorf("read %d (%d): %w", op, off, err)
		}
		first, ok := firstAtOrAfter(want, off)
		if len(got) > 0 && (!ok || got[0].Offset != first.Offset || !bytes.Equal(got[0].Value, first.Value)) {
			return fmt.Errorf("read %d (%d): first record %d, want %d", op, off, got[0].Offset, first.Offset)
		}
	case 3:
		rec, ok, err := l.ReadRecord(off)
		if err != nil {
			return fmt.Errorf("ReadRecord(%d): %w", off, err)
		}
		first, _ := firstAtOrAfter(c.records, off)
		if !ok || rec.Offset != first.Offset {
			return fmt.Errorf("ReadRecord(%d): %d %v, want %d", off, rec.Offset, ok, first.Offset)
		}
	case 4:
		i := rng.IntN(len(c.byTime))
		got, ok, err := l.OffsetForTimestamp(c.base + int64(i)*500)
		if err != nil {
			return fmt.Errorf("OffsetForTimestamp(%d): %w", i, err)
		}
		if !ok {
			got = OffsetAndTimestamp{Offset: -1}
		}
		if got != c.byTime[i] {
			return fmt.Errorf("OffsetForTimestamp(%d): %+v, want %+v", i, got, c.byTime[i])
		}
	}
	return nil
}

// TestTierConcurrentReads: readers of different copies at once, through
// every read (Read, ReadRecords, ReadCommittedRecords, ReadRecord,
// OffsetForTimestamp), with the default cache, one that holds about one
// copy and one smaller than any copy, so that each load evicts a copy
// other readers are using: every read answers as the local segments did,
// none fails (a reader pins the copy it reads; eviction closes it only
// after the last one lets go). After the readers, the cache is back
// within its bound but for its most recently used copy.
func TestTierConcurrentReads(t *testing.T) {
	const readers, reads = 8, 150
	for _, osfs := range []bool{false, true} {
		for _, cache := range []struct {
			name  string
			bytes int64
		}{{"default", DefaultConfig().RemoteLogIndexFileCacheTotalSize}, {"one copy", 2600}, {"tiny", 1}} {
			t.Run(fmt.Sprintf("%s/os=%v", cache.name, osfs), func(t *testing.T) {
				e := tieredEnvOn(t, osfs)
				e.cfg.RemoteLogIndexFileCacheTotalSize = cache.bytes
				c := newTierReadCase(t, e, 24)
				var wg sync.WaitGroup
				errs := make(chan error, readers)
				for g := range readers {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(g), 7))
						for range reads {
							if err := c.readOnce(rng); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				cc := c.d.tier.cache
				cc.mu.Lock()
				defer cc.mu.Unlock()
				require.True(t, cc.size <= cc.limit || len(cc.entries) <= 1, "%d bytes in %d entries, over the bound %d",
					cc.size, len(cc.entries), cc.limit)
			})
		}
	}
}

// countingStore counts a store's fetches: each .log fetch per copy and
// each index fetch per copy and index type.
type countingStore struct {
	remote.StorageManager
	mu      sync.Mutex
	logs    map[remote.UUID]int
	indexes map[remote.IndexType]int
}

func newCountingStore(s remote.StorageManager) *countingStore {
	return &countingStore{StorageManager: s, logs: map[remote.UUID]int{}, indexes: map[remote.IndexType]int{}}
}

func (s *countingStore) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	s.mu.Lock()
	s.logs[m.ID.ID]++
	s.mu.Unlock()
	return s.StorageManager.FetchLogSegment(ctx, m, start, end)
}

func (s *countingStore) FetchIndex(ctx context.Context, m remote.SegmentMetadata, typ remote.IndexType) (io.ReadCloser, error) {
	s.mu.Lock()
	s.indexes[typ]++
	s.mu.Unlock()
	return s.StorageManager.FetchIndex(ctx, m, typ)
}

func (s *countingStore) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.logs)
	clear(s.indexes)
}

// fetches returns the .log fetches in all and of the copy fetched most.
func (s *countingStore) fetches() (total, most int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.logs {
		total += n
		most = max(most, n)
	}
	return total, most
}

// TestTierReadCommittedFetchesOnlyTxnIndexes: a read_committed scan over
// many copies, with a cache of about one copy, fetches each copy's .log
// at most once, as a read_uncommitted scan does: the aborted transactions
// of each read come from the transaction indexes of the copies from the
// one read on (a cached copy's, or the index fetched alone), only up to
// the end of what was read (Kafka's RemoteLogManager.read). The answers
// are the local segments': the records, and the aborted transactions of
// every range, also of a transaction whose ABORT marker is copies after
// its data, past copies without aborts.
func TestTierReadCommittedFetchesOnlyTxnIndexes(t *testing.T) {
	for _, osfs := range []bool{false, true} {
		t.Run(fmt.Sprintf("os=%v", osfs), func(t *testing.T) {
			e := tieredEnvOn(t, osfs)
			store := newCountingStore(e.cfg.RemoteStorage)
			e.cfg.RemoteStorage = store
			e.cfg.RemoteLogIndexFileCacheTotalSize = 2600
			c := newTierReadCase(t, e, 150)
			l := c.l
			copies, err := c.d.RemoteSegments("tiered", 0)
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(copies), 40)

			scan := func(read func(int64, int, func(*record.Record, *record.BatchHeader) error) (int64, error)) []record.Record {
				var out []record.Record
				for off := int64(0); off < c.remoteEnd; {
					next, err := read(off, 1000, func(r *record.Record, _ *record.BatchHeader) error {
						out = append(out, r.Clone())
						return nil
					})
					require.NoError(t, err)
					require.Greater(t, next, off)
					off = next
				}
				return out
			}
			store.reset()
			var rr RecordReader
			scan(func(off int64, n int, fn func(*record.Record, *record.BatchHeader) error) (int64, error) {
				return rr.ReadRecords(l, off, n, fn)
			})
			uncommitted, most := store.fetches()
			require.Equal(t, 1, most)
			require.Equal(t, len(copies), uncommitted, "read_uncommitted: each copy once")

			store.reset()
			got := scan(func(off int64, n int, fn func(*record.Record, *record.BatchHeader) error) (int64, error) {
				return rr.ReadCommittedRecords(l, off, n, fn)
			})
			committed, most := store.fetches()
			t.Logf("%d copies: %d .log fetches read_uncommitted, %d read_committed (and %d transaction indexes)",
				len(copies), uncommitted, committed, store.indexes[remote.TransactionIndex])
			require.Equal(t, 1, most, "read_committed: no copy's .log fetched twice")
			require.Equal(t, uncommitted, committed)
			require.LessOrEqual(t, store.indexes[remote.TransactionIndex], 2*len(copies), "transaction indexes")
			want, _ := splitAt(c.committed, c.remoteEnd)
			require.Equal(t, want, got)

			var spanning int // aborted transactions whose marker is in a later copy
			for _, sp := range spans(c.remoteEnd) {
				got, err := l.AbortedTransactions(sp.from, sp.to)
				require.NoError(t, err)
				require.Equal(t, c.aborted[sp], got, "AbortedTransactions(%d, %d)", sp.from, sp.to)
				for _, a := range got {
					if copyOf(copies, a.FirstOffset) != copyOf(copies, a.LastOffset) {
						spanning++
					}
				}
			}
			require.Positive(t, spanning)
		})
	}
}

// copyOf returns the index of the copy holding offset, -1 if none.
func copyOf(copies []remote.SegmentMetadata, offset int64) int {
	for i, m := range copies {
		if m.StartOffset <= offset && offset <= m.EndOffset {
			return i
		}
	}
	return -1
}

// splitAt splits records at offset.
func splitAt(recs []record.Record, offset int64) (below, rest []record.Record) {
	for i, r := range recs {
		if r.Offset >= offset {
			return recs[:i], recs[i:]
		}
	}
	return recs, nil
}

// TestTierAbortedTxnPastCopiesWithoutAborts: a transaction whose data is
// in one copy and whose ABORT marker is two copies later, the copies
// between having no aborts (no transaction index), is listed for a range
// inside its first copy, as the local segments list it: the search walks
// on until an entry says it is complete (a wire Fetch of that copy,
// read_committed, would otherwise hand its records out as committed).
func TestTierAbortedTxnPastCopiesWithoutAborts(t *testing.T) {
	e := tieredEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.bytes": "0"})
	l := partition(t, d, "tiered", 0)
	const pid = 9
	fill(t, l, 1)
	res := appendTxn(t, l, txnBatch(t, pid, 0, 0, 5))
	fill(t, l, 8)
	_, err := l.AppendTxnMarker(access.Internal{}, pid, 0, record.EndTxnMarker{Type: record.ControlAbort})
	require.NoError(t, err)
	fill(t, l, 4)
	ranges := [][2]int64{{0, res.LastOffset + 1}, {res.BaseOffset, res.BaseOffset + 1}, {res.BaseOffset, l.LastStableOffset()}}
	var want [][]index.AbortedTxn
	for _, r := range ranges {
		got, err := l.AbortedTransactions(r[0], r[1])
		require.NoError(t, err)
		require.Len(t, got, 1)
		want = append(want, got)
	}
	copiedAndTrimmed(t, d, l)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	first := copyOf(copies, res.BaseOffset)
	require.GreaterOrEqual(t, first, 0)
	require.True(t, copies[first].TxnIndexEmpty, "the data's copy has no aborts")
	require.GreaterOrEqual(t, copyOf(copies, want[0][0].LastOffset), first+2, "the marker is copies later")
	for i, r := range ranges {
		got, err := l.AbortedTransactions(r[0], r[1])
		require.NoError(t, err)
		require.Equal(t, want[i], got, "AbortedTransactions(%d, %d)", r[0], r[1])
	}
	var rr RecordReader
	var seen []int64
	for off := int64(0); off < l.LogEndOffset(); {
		next, err := rr.ReadCommittedRecords(l, off, 100, func(r *record.Record, h *record.BatchHeader) error {
			if h.ProducerID == pid {
				seen = append(seen, r.Offset)
			}
			return nil
		})
		require.NoError(t, err)
		off = next
	}
	require.Empty(t, seen, "records of the aborted transaction")
}

// TestTierCachePins: a pinned copy is never closed under its reader. With
// a cache smaller than one copy, two pinned copies both stay (over the
// bound by the pinned ones) and read; released, the cache keeps only the
// most recently used copy. A copy forgotten (deleted from the store) or
// dropped by the Dir's close while pinned still reads, and its files go at
// its release; loads after the close fail with ErrClosed.
func TestTierCachePins(t *testing.T) {
	e := tieredEnv(t)
	e.cfg.RemoteLogIndexFileCacheTotalSize = 1
	c := newTierReadCase(t, e, 12)
	tm, l := c.d.tier, c.l
	copies, err := c.d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(copies), 3)
	readable := func(en *cacheEntry, m remote.SegmentMetadata) {
		t.Helper()
		sl, err := en.seg.Read(m.StartOffset, 1000, segHooks.ReadableSize(en.seg), true)
		require.NoError(t, err)
		require.NotNil(t, sl)
		sl.Release()
		_, _, err = en.seg.FindOffsetByTimestamp(0, m.StartOffset)
		require.NoError(t, err)
	}
	exists := func(dir string) bool {
		_, err := e.mem.Stat(dir)
		return err == nil
	}
	cached := func() int {
		tm.cache.mu.Lock()
		defer tm.cache.mu.Unlock()
		return len(tm.cache.entries)
	}

	a, err := tm.acquire(context.Background(), l, copies[0], wholeCopy)
	require.NoError(t, err)
	b, err := tm.acquire(context.Background(), l, copies[1], wholeCopy)
	require.NoError(t, err)
	tm.cache.release(b)
	require.Equal(t, 2, cached(), "the pinned copy and the most recent one")
	readable(a, copies[0])
	tm.cache.release(a)
	require.Equal(t, 1, cached(), "released: back to the most recent copy")
	require.False(t, exists(a.dir), "the evicted copy's files are gone")
	readable(b, copies[1]) // b was kept, though unpinned: it is still open

	a, err = tm.acquire(context.Background(), l, copies[0], wholeCopy)
	require.NoError(t, err)
	tm.cache.forget(copies[0].ID.ID)
	readable(a, copies[0])
	require.True(t, exists(a.dir))
	tm.cache.release(a)
	require.False(t, exists(a.dir), "forgotten and released: removed")

	b, err = tm.acquire(context.Background(), l, copies[1], wholeCopy)
	require.NoError(t, err)
	withAborts := -1
	for i, m := range copies {
		if i > 1 && !m.TxnIndexEmpty {
			withAborts = i
			break
		}
	}
	require.Positive(t, withAborts, "a copy with aborted transactions")
	txn, err := tm.acquire(context.Background(), l, copies[withAborts], txnIndexOnly)
	require.NoError(t, err)
	require.Nil(t, txn.seg, "the transaction index alone")
	_, _, err = txn.appendAbortedTxns(nil, 0, math.MaxInt64)
	require.NoError(t, err)
	tm.cache.close()
	_, _, err = txn.appendAbortedTxns(nil, 0, math.MaxInt64)
	require.NoError(t, err, "pinned: open after the close")
	tm.cache.release(txn)
	require.False(t, exists(txn.dir))
	_, err = tm.acquire(context.Background(), l, copies[2], wholeCopy)
	require.ErrorIs(t, err, ErrClosed)
	readable(b, copies[1])
	tm.cache.release(b)
	require.False(t, exists(b.dir), "closed and released: removed")
	require.Zero(t, cached())
}

// badTxnIndexStore returns body for every transaction index fetched.
type badTxnIndexStore struct {
	remote.StorageManager
	body []byte
}

func (s *badTxnIndexStore) FetchIndex(ctx context.Context, m remote.SegmentMetadata, typ remote.IndexType) (io.ReadCloser, error) {
	if typ == remote.TransactionIndex {
		return io.NopCloser(bytes.NewReader(s.body)), nil
	}
	return s.StorageManager.FetchIndex(ctx, m, typ)
}

// TestTierDamagedTxnIndex: a transaction index the store returns damaged
// (a partial entry, an entry outside its copy, more entries than the copy
// has offsets) fails the reads that need it with remote.ErrCorrupt, never
// a wrong list: read_committed reads that reach the copy, and reads of the
// copy itself (fetched whole, its .txnindex is checked too, as Kafka's
// index cache loads a copy's indexes together); the copies without aborts
// read as before.
func TestTierDamagedTxnIndex(t *testing.T) {
	outside := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 1 << 40, LastStableOffset: 1})
	for name, body := range map[string][]byte{
		"partial": outside[:20],
		"outside": outside,
		"too big": bytes.Repeat(outside, 1000),
	} {
		t.Run(name, func(t *testing.T) {
			e := tieredEnv(t)
			store := &badTxnIndexStore{StorageManager: e.cfg.RemoteStorage}
			e.cfg.RemoteStorage = store
			c := newTierReadCase(t, e, 12)
			store.body = body
			copies, err := c.d.RemoteSegments("tiered", 0)
			require.NoError(t, err)
			_, err = c.l.AbortedTransactions(0, c.remoteEnd)
			require.ErrorIs(t, err, remote.ErrCorrupt)
			require.NotEqual(t, -1, slices.IndexFunc(copies, func(m remote.SegmentMetadata) bool { return !m.TxnIndexEmpty }))
			_, err = c.l.ReadCommittedRecords(0, 1<<20, func(*record.Record, *record.BatchHeader) error { return nil })
			require.ErrorIs(t, err, remote.ErrCorrupt)
			for _, m := range copies {
				var got []record.Record
				_, err := c.l.ReadRecords(m.StartOffset, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
					got = append(got, r.Clone())
					return nil
				})
				if !m.TxnIndexEmpty {
					require.ErrorIs(t, err, remote.ErrCorrupt)
					continue
				}
				require.NoError(t, err)
				first, _ := firstAtOrAfter(c.records, m.StartOffset)
				require.Equal(t, first, got[0])
			}
		})
	}
}
