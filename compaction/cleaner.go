package compaction

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// Sentinel errors. Compare with errors.Is.
var (
	// ErrAborted means a cleaning round stopped because the log changed
	// under it (retention or truncation removed segments it was cleaning)
	// or its context ended. Nothing is lost: the cleaned files are removed
	// and the next round starts again from the checkpoint.
	ErrAborted = errors.New("compaction: cleaning aborted")
	// ErrConfig means an invalid cleaner configuration.
	ErrConfig = errors.New("compaction: invalid configuration")
)

// Config holds the cleaner's broker settings.
type Config struct {
	// DedupeBufferBytes is this cleaner's share of
	// log.cleaner.dedupe.buffer.size (134217728 in all, divided by
	// log.cleaner.threads): the most the offset map may use.
	DedupeBufferBytes int64
	// LoadFactor mirrors log.cleaner.io.buffer.load.factor (0.9): how full
	// the offset map may get.
	LoadFactor float64
	// IOBufferBytes mirrors log.cleaner.io.buffer.size (524288): the size
	// of the cleaner's reads and writes (at least one batch is read).
	IOBufferBytes int
	// Throttler, shared by the cleaners of a Dir, applies
	// log.cleaner.io.max.bytes.per.second; nil never throttles.
	Throttler *Throttler
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.DedupeBufferBytes < 2*SlotBytes:
		return fmt.Errorf("%w: dedupe buffer of %d bytes holds no key", ErrConfig, c.DedupeBufferBytes)
	case !(c.LoadFactor > 0 && c.LoadFactor <= 1):
		return fmt.Errorf("%w: load factor %v is not in (0, 1]", ErrConfig, c.LoadFactor)
	case c.IOBufferBytes < 0:
		return fmt.Errorf("%w: I/O buffer of %d bytes", ErrConfig, c.IOBufferBytes)
	}
	return nil
}

// Log describes one cleaning round of a partition: what the log hands the
// cleaner. The log fills it under its write lock and the cleaner reads the
// segments without it (they are sealed: only the cleaner replaces them).
type Log struct {
	// FS and Dir are the partition directory's filesystem and path.
	FS  vfs.FS
	Dir string
	// Segments are the log's segments below FirstUncleanableOffset, oldest
	// first; never the active segment.
	Segments []*segment.Segment
	// FirstDirtyOffset is where the last round ended (the
	// cleaner-offset-checkpoint entry, or the log start offset).
	FirstDirtyOffset int64
	// FirstUncleanableOffset is the base offset of the first segment not
	// to clean: the active one, the one holding the last stable offset, or
	// the first one with records younger than min.compaction.lag.ms.
	FirstUncleanableOffset int64
	// Now is the cleaner's time for delete horizons.
	Now time.Time
	// DeleteRetention mirrors delete.retention.ms: how long tombstones and
	// transaction markers stay after a round first sees them.
	DeleteRetention time.Duration
	// SegmentBytes, MaxIndexBytes and IndexIntervalBytes mirror
	// segment.bytes, segment.index.bytes and index.interval.bytes.
	SegmentBytes       int64
	MaxIndexBytes      int
	IndexIntervalBytes int
	// Producers are the active producers' last records.
	Producers map[int64]LastRecord
	// AbortedTxns returns the aborted transactions overlapping [from,
	// upper), from the .txnindex files (Kafka's collectAbortedTransactions).
	AbortedTxns func(from, upper int64) ([]index.AbortedTxn, error)
	// Replace swaps the cleaned segment at base (its .cleaned files written
	// and fsynced) in for old, with [CommitSwap] and the log's segment
	// list. It returns an error matching ErrAborted if old is no longer the
	// log's; the cleaner then removes the cleaned files.
	Replace func(old []*segment.Segment, base int64) error
}

// Stats describe a cleaning round (Kafka's CleanerStats).
type Stats struct {
	// MapBytesRead and MapRecordsRead count the first pass (the offset
	// map); BytesRead, RecordsRead the second (the rewrite).
	MapBytesRead, MapRecordsRead int64
	BytesRead, RecordsRead       int64
	// BytesWritten and RecordsRetained count what the cleaned segments
	// hold.
	BytesWritten, RecordsRetained int64
	// InvalidRecords counts records without a key, which are dropped.
	InvalidRecords int64
	// MapDuration and CleanDuration time the two passes.
	MapDuration, CleanDuration time.Duration
	// MapKeys, MapSlots and MapMemoryBytes describe the offset map;
	// MapBudgetBytes is the most it may use.
	MapKeys, MapSlots              int
	MapMemoryBytes, MapBudgetBytes int64
	// FirstDirtyOffset and EndOffset delimit the dirty section cleaned:
	// the next round starts at EndOffset.
	FirstDirtyOffset, EndOffset int64
	// Groups counts the cleaned segments swapped in.
	Groups int
}

// RecordsRemoved returns RecordsRead − RecordsRetained.
func (s Stats) RecordsRemoved() int64 { return s.RecordsRead - s.RecordsRetained }

// Cleaner runs cleaning rounds, one at a time, with its own offset map and
// buffers (one per cleaner goroutine, as Kafka has one Cleaner per
// thread). A Cleaner is not safe for concurrent use.
type Cleaner struct {
	cfg     Config
	m       *OffsetMap
	reader  *record.Reader
	builder record.Builder
	rbuf    []byte
	out     []byte
	now     func() time.Time
}

// NewCleaner returns a cleaner. It allocates its offset map lazily, sized
// to the dirty section and never beyond the budget.
func NewCleaner(cfg Config) (*Cleaner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.IOBufferBytes == 0 {
		cfg.IOBufferBytes = 512 << 10
	}
	cfg.IOBufferBytes = max(cfg.IOBufferBytes, 64<<10)
	return &Cleaner{cfg: cfg, m: NewOffsetMap(cfg.DedupeBufferBytes, cfg.LoadFactor),
		reader: record.NewReader(record.ReaderOptions{SkipCRC: true}), now: time.Now}, nil
}

// round is one round's state.
type round struct {
	l     *Log
	ctx   context.Context
	now   int64 // unix ms
	upper int64 // FirstUncleanableOffset: Kafka's upperBoundOffsetOfCleaningRound
	txn   *txnTracker
	w     *cleanedWriter
	st    *Stats
}

// Clean runs one cleaning round (Kafka's Cleaner.doClean): it maps key →
// latest offset over [FirstDirtyOffset, FirstUncleanableOffset), stopping
// when the map is full, then rewrites the segments below the map's end in
// groups, keeping the latest record of each key, and swaps each group in
// with l.Replace. The stats say where the round ended (EndOffset): the next
// round starts there.
func (c *Cleaner) Clean(ctx context.Context, l *Log) (st Stats, err error) {
	st = Stats{FirstDirtyOffset: l.FirstDirtyOffset, EndOffset: l.FirstDirtyOffset, MapBudgetBytes: int64(c.m.BudgetSlots()) * SlotBytes}
	if l.FirstUncleanableOffset <= l.FirstDirtyOffset {
		return st, nil
	}
	start := c.now()
	end, err := c.buildOffsetMap(ctx, l, &st)
	st.MapDuration = c.now().Sub(start)
	st.MapKeys, st.MapSlots, st.MapMemoryBytes = c.m.Size(), c.m.Slots(), c.m.MemoryBytes()
	if err != nil {
		return st, err
	}
	st.EndOffset = end
	start = c.now()
	// st is the named result: the deferred assignment reaches the caller.
	defer func() { st.CleanDuration = c.now().Sub(start) }()
	r := &round{l: l, ctx: ctx, now: l.Now.UnixMilli(), upper: l.FirstUncleanableOffset, txn: newTxnTracker(), st: &st}
	r.txn.keep = func(t index.AbortedTxn) error { return r.w.appendAbortedTxn(t) }
	for _, g := range groupSegments(l.Segments, end, l.SegmentBytes, l.FirstUncleanableOffset) {
		if err := c.cleanGroup(r, g); err != nil {
			return st, err
		}
		st.Groups++
	}
	return st, nil
}

// buildOffsetMap is the first pass. It returns the offset after the last
// one mapped.
func (c *Cleaner) buildOffsetMap(ctx context.Context, l *Log, st *Stats) (int64, error) {
	startOff, end := l.FirstDirtyOffset, l.FirstUncleanableOffset
	c.m.Reset(end - startOff)
	txn := newTxnTracker()
	aborted, err := l.AbortedTxns(startOff, end)
	if err != nil {
		return 0, err
	}
	txn.add(aborted)
	for i, s := range l.Segments {
		next := end
		if i+1 < len(l.Segments) {
			next = min(l.Segments[i+1].BaseOffset(), end)
		}
		if next <= startOff || s.BaseOffset() >= end {
			continue
		}
		full := false
		err := c.eachBatch(ctx, s, max(startOff, s.BaseOffset()), &st.MapBytesRead, func(h *record.BatchHeader, batch []byte) (bool, error) {
			if h.Attributes.IsControl() {
				st.MapRecordsRead++
				// A marker read here only ends its transaction; its type
				// matters when cleaning.
				typ, empty, err := c.controlType(h, batch)
				if err != nil {
					return false, err
				}
				if _, err := txn.onControl(h, typ, empty); err != nil {
					return false, err
				}
			} else if txn.onData(h) {
				st.MapRecordsRead += int64(h.RecordsCount)
			} else {
				if err := c.reader.Reset(batch); err != nil {
					return false, err
				}
				for c.reader.Next() {
					rec := c.reader.Record()
					if rec.Key != nil && rec.Offset >= startOff {
						if !c.m.Put(rec.Key, rec.Offset) {
							full = true
							return true, nil
						}
					}
					st.MapRecordsRead++
				}
				if err := c.reader.Err(); err != nil {
					return false, err
				}
			}
			if h.LastOffset() >= startOff {
				c.m.UpdateLatestOffset(h.LastOffset())
			}
			return false, nil
		})
		if err != nil {
			return 0, err
		}
		if full {
			break
		}
		// Offsets a cleaner left as gaps at the segment's end are covered.
		c.m.UpdateLatestOffset(next - 1)
	}
	return c.m.LatestOffset() + 1, nil
}

// controlType returns the type of a control batch's first record, and
// whether the batch is empty.
func (c *Cleaner) controlType(h *record.BatchHeader, batch []byte) (record.ControlType, bool, error) {
	if h.RecordsCount == 0 {
		return 0, true, nil
	}
	if err := c.reader.Reset(batch); err != nil {
		return 0, false, err
	}
	if !c.reader.Next() {
		return 0, true, c.reader.Err()
	}
	typ, err := record.ParseControlKey(c.reader.Record().Key)
	if err != nil {
		return record.ControlType(-1), false, nil // an unknown control record is kept
	}
	return typ, false, nil
}

var errStop = errors.New("stop")

// eachBatch calls fn for each batch of s from the one holding from on,
// reading IOBufferBytes at a time, until fn returns true or the segment
// ends. read counts the bytes read.
func (c *Cleaner) eachBatch(ctx context.Context, s *segment.Segment, from int64, read *int64, fn func(h *record.BatchHeader, batch []byte) (bool, error)) error {
	off := from
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrAborted, ctx.Err())
		}
		sl, err := s.Read(off, c.cfg.IOBufferBytes, s.Size(), true)
		if err != nil {
			return err
		}
		if sl == nil {
			return nil
		}
		n := sl.Size
		last := off
		c.rbuf, err = sl.Batches(c.rbuf, func(h *record.BatchHeader, batch []byte) error {
			last = h.NextOffset()
			stop, err := fn(h, batch)
			if err == nil && stop {
				err = errStop
			}
			return err
		})
		sl.Release()
		*read += n
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := c.cfg.Throttler.MaybeThrottle(ctx, n); err != nil {
			return fmt.Errorf("%w: %w", ErrAborted, err)
		}
		if last <= off {
			return nil
		}
		off = last
	}
}

// groupSegments groups the segments overlapping [0, end) as Kafka's
// groupSegmentsBySize does: consecutive segments whose .log files add up to
// at most segmentBytes and whose offsets fit one segment's relative
// offsets. (Kafka also bounds the sum of the index files by
// segment.index.bytes; the cleaned segment's indexes are written with
// Kafka's spacing and stop adding entries if they fill up.)
func groupSegments(segs []*segment.Segment, end, segmentBytes, firstUncleanable int64) [][]*segment.Segment {
	var cand []*segment.Segment
	for _, s := range segs {
		if s.BaseOffset() < end {
			cand = append(cand, s)
		}
	}
	var groups [][]*segment.Segment
	for len(cand) > 0 {
		g := []*segment.Segment{cand[0]}
		size := cand[0].Size()
		cand = cand[1:]
		for len(cand) > 0 {
			next := cand[0]
			lastOff := firstUncleanable - 1
			if len(cand) > 1 {
				lastOff = cand[1].BaseOffset() - 1
			}
			if size+next.Size() > segmentBytes || (next.Size() > 0 && lastOff-g[0].BaseOffset() > math.MaxInt32) {
				break
			}
			g = append(g, next)
			size += next.Size()
			cand = cand[1:]
		}
		groups = append(groups, g)
	}
	return groups
}

// cleanGroup rewrites a group into one cleaned segment and swaps it in.
func (c *Cleaner) cleanGroup(r *round, g []*segment.Segment) error {
	l := r.l
	base := g[0].BaseOffset()
	w, err := createCleaned(l.FS, l.Dir, base, l.IndexIntervalBytes, l.MaxIndexBytes, c.cfg.IOBufferBytes)
	if err != nil {
		return err
	}
	r.w = w
	fail := func(err error) error { return errors.Join(err, w.abort()) }
	for i, s := range g {
		upper := r.upper
		if i+1 < len(g) {
			upper = g[i+1].BaseOffset()
		} else if n, err := s.NextOffset(); err == nil {
			upper = n
		}
		aborted, err := l.AbortedTxns(s.BaseOffset(), upper)
		if err != nil {
			return fail(err)
		}
		r.txn.add(aborted)
		err = c.eachBatch(r.ctx, s, s.BaseOffset(), &r.st.BytesRead, func(h *record.BatchHeader, batch []byte) (bool, error) {
			return false, c.cleanBatch(r, h, batch)
		})
		if err != nil {
			return fail(err)
		}
	}
	written := w.written + int64(len(w.buf))
	if err := w.finish(); err != nil {
		return fail(err)
	}
	if err := c.cfg.Throttler.MaybeThrottle(r.ctx, written); err != nil {
		return fail(fmt.Errorf("%w: %w", ErrAborted, err))
	}
	r.st.BytesWritten += written
	if err := l.Replace(g, base); err != nil {
		if errors.Is(err, ErrAborted) {
			removeCleaned(l.FS, l.Dir, base)
		}
		return err
	}
	return nil
}

// cleanBatch applies Kafka's log cleaner filter (MemoryRecords.filterTo
// with Cleaner.cleanInto's RecordFilter) to one batch and writes what
// stays.
func (c *Cleaner) cleanBatch(r *round, h *record.BatchHeader, batch []byte) error {
	control := h.Attributes.IsControl()
	var canDiscard bool
	if control {
		typ, empty, err := c.controlType(h, batch)
		if err != nil {
			return err
		}
		if canDiscard, err = r.txn.onControl(h, typ, empty); err != nil {
			return err
		}
	} else {
		canDiscard = r.txn.onData(h)
	}
	hasHorizon := h.Attributes.HasDeleteHorizon()
	horizon := h.BaseTimestamp
	discardRecords := canDiscard
	if control {
		discardRecords = canDiscard && hasHorizon && horizon <= r.now
	}
	isLastOfProducer := false
	if lr, ok := r.l.Producers[h.ProducerID]; ok && h.ProducerID >= 0 {
		if lr.LastDataOffset >= 0 {
			isLastOfProducer = h.LastOffset() == lr.LastDataOffset
		} else {
			isLastOfProducer = control && h.ProducerEpoch == lr.ProducerEpoch
		}
	}
	retention := deleteEmpty
	switch {
	case isLastOfProducer:
		retention = retainEmpty
	case h.NextOffset() == r.upper:
		// The round's last batch stays, even empty, so that the last
		// offset survives.
		retention = retainEmpty
	case discardRecords:
		retention = deleteBatch
	}
	markerForEmptyTxn := canDiscard && control
	r.st.RecordsRead += int64(h.RecordsCount)
	if retention == deleteBatch {
		return nil
	}
	// One pass decides and builds; a second is needed only when the
	// batch gets its delete horizon now (its timestamps are re-based).
	setHorizon := !hasHorizon && markerForEmptyTxn
	kept, all, tombstones, err := c.filterRecords(r, h, batch, discardRecords, hasHorizon || setHorizon, c.horizon(r, h, setHorizon))
	if err != nil {
		return err
	}
	if kept > 0 && tombstones && !hasHorizon && !setHorizon {
		setHorizon = true
		if kept, all, _, err = c.filterRecords(r, h, batch, discardRecords, true, c.horizon(r, h, true)); err != nil {
			return err
		}
	}
	r.st.RecordsRetained += int64(kept)
	switch {
	case kept > 0 && all && !setHorizon:
		return r.w.append(batch, h)
	case kept > 0:
		if err := c.builder.SetLastOffsetDelta(h.LastOffsetDelta); err != nil {
			return err
		}
		out, err := c.builder.Build()
		if err != nil {
			return err
		}
		nh := c.builder.Header()
		return r.w.append(out, &nh)
	case retention == retainEmpty:
		c.out = record.AppendEmptyBatch(c.out[:0], *h)
		eh := *h
		eh.BatchLength = record.MinBatchLength
		return r.w.append(c.out, &eh)
	}
	return nil
}

// horizon returns the delete horizon a rebuilt batch carries: the batch's
// own, or now + delete.retention.ms when it gets one now.
func (c *Cleaner) horizon(r *round, h *record.BatchHeader, set bool) int64 {
	if set {
		return r.now + r.l.DeleteRetention.Milliseconds()
	}
	return h.BaseTimestamp
}

// filterRecords decides for each record whether it stays and appends those
// that do to c.builder (reset here, with the delete horizon if withHorizon).
// It returns how many stay, whether all did, and whether a tombstone did.
func (c *Cleaner) filterRecords(r *round, h *record.BatchHeader, batch []byte, discard, withHorizon bool, horizon int64) (kept int, all, tombstones bool, err error) {
	attrs := h.Attributes.WithDeleteHorizon(withHorizon)
	c.builder.Reset(record.BatchHeader{BaseOffset: h.BaseOffset, PartitionLeaderEpoch: h.PartitionLeaderEpoch, Attributes: attrs,
		BaseTimestamp: horizon, MaxTimestamp: h.MaxTimestamp, ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch,
		BaseSequence: h.BaseSequence}, record.DefaultLevel)
	if err := c.reader.Reset(batch); err != nil {
		return 0, false, false, err
	}
	all = true
	control := h.Attributes.IsControl()
	latest := c.m.LatestOffset()
	for c.reader.Next() {
		rec := c.reader.Record()
		keep := false
		switch {
		case discard:
		case control:
			keep = true
		case rec.Offset > latest:
			keep = true
		case rec.Key == nil:
			r.st.InvalidRecords++
		default:
			keep = rec.Offset >= c.m.Get(rec.Key) &&
				(rec.Value != nil || !h.Attributes.HasDeleteHorizon() || r.now < h.BaseTimestamp)
		}
		if !keep {
			all = false
			continue
		}
		kept++
		tombstones = tombstones || (rec.Value == nil && !control)
		if err := c.builder.AppendWithOffsetDelta(int32(rec.Offset-h.BaseOffset), rec.Timestamp, rec.Key, rec.Value, rec.Headers); err != nil {
			return 0, false, false, err
		}
	}
	return kept, all, tombstones, c.reader.Err()
}
