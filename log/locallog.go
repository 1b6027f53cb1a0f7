package log

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/compaction"
	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// localLog is a partition's segments on the local disk (Kafka's LocalLog):
// the segment list, which readers load without a lock, the log end offset,
// the recovery point and the durable offset, and what changes them: the
// writes to the active segment and their publication, roll, flush,
// truncation, the removal of the oldest segments and of those deleted
// file.delete.delay.ms ago. It keeps the topic configuration the partition
// applies (Kafka's UnifiedLog reads LocalLog's) and the partition's storage
// failure, after which it refuses writes and fsyncs.
//
// As Kafka's LocalLog relies on UnifiedLog's lock, a localLog has no write
// lock of its own: the methods ending in Locked, and the fields marked so,
// are under its Log's write lock (Log.mu). The rest is atomics, read by
// any goroutine, and the group commit, which has its own lock.
type localLog struct {
	tp     TopicPartition
	dir    string // the partition directory
	fsys   vfs.FS
	logger *slog.Logger
	now    func() time.Time

	config atomic.Pointer[TopicConfig]

	segments      atomic.Pointer[[]*segment.Segment] // sorted by base offset; replaced, never changed
	logEndOffset  atomic.Int64
	recoveryPoint atomic.Int64 // every offset below is fsynced, with the indexes of its segments
	durable       atomic.Int64 // every offset below is fsynced (its .log data); at least recoveryPoint
	lastFlush     atomic.Int64 // unix milliseconds of the last full flush
	closed        atomic.Bool
	deleted       atomic.Bool
	indexRebuilds atomic.Int64 // sealed segments' index rebuilds since Open

	// Under the Log's write lock.
	failed            error // sticky storage error
	dirDirty          bool  // a file was created or removed since the last directory sync
	unflushedMessages int64
	pending           []pendingDelete

	commits groupCommit
}

func newLocalLog(tp TopicPartition, dir string, fsys vfs.FS, cfg TopicConfig, logger *slog.Logger, now func() time.Time) *localLog {
	ll := &localLog{tp: tp, dir: dir, fsys: fsys, logger: logger, now: now}
	ll.config.Store(&cfg)
	return ll
}

// pendingDelete is a segment renamed to .deleted, removed after
// file.delete.delay.ms.
type pendingDelete struct {
	seg *segment.Segment
	at  time.Time
}

func (ll *localLog) cfg() TopicConfig { return *ll.config.Load() }

func (ll *localLog) segs() []*segment.Segment { return *ll.segments.Load() }

func (ll *localLog) active() *segment.Segment {
	s := ll.segs()
	return s[len(s)-1]
}

func (ll *localLog) setSegments(s []*segment.Segment) { ll.segments.Store(&s) }

// startOffset returns the base offset of the first segment (Kafka's
// localLogStartOffset).
func (ll *localLog) startOffset() int64 { return ll.segs()[0].BaseOffset() }

func (ll *localLog) segmentConfig() segment.Config {
	c := ll.cfg()
	return segment.Config{
		IndexIntervalBytes: c.IndexIntervalBytes,
		MaxIndexBytes:      c.SegmentIndexBytes,
		Preallocate:        c.Preallocate,
		SegmentBytes:       c.SegmentBytes,
		Now:                ll.now,
		OnIndexRebuild:     ll.onIndexRebuild,
		OnLogDamage:        ll.onLogDamage,
	}
}

// rollJitter picks the random part of segment.jitter.ms for a new segment:
// abs(random) % min(segment.jitter.ms, segment.ms), 0 when jitter is 0.
func (ll *localLog) rollJitter() time.Duration {
	c := ll.cfg()
	if c.SegmentJitter <= 0 {
		return 0
	}
	bound := min(c.SegmentJitter, c.SegmentRollTime)
	if bound <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(bound)))
}

// onIndexRebuild is the segments' OnIndexRebuild: a sealed segment rebuilt
// its .index and .timeindex from its .log.
func (ll *localLog) onIndexRebuild(file string, cause error) {
	ll.indexRebuilds.Add(1)
	ll.logger.Warn("rebuilt the indexes of a segment from its .log", "partition", ll.tp, "segment", file, "cause", cause)
}

// onLogDamage is the segments' OnLogDamage: a sealed segment's .log holds
// bytes past its last readable batch.
func (ll *localLog) onLogDamage(err error) {
	ll.logger.Warn("a segment's .log is damaged: reads past its last readable batch fail", "partition", ll.tp, "err", err)
}

// checkOpen returns the error of a call on a closed log or a deleted
// topic's.
func (ll *localLog) checkOpen() error {
	switch {
	case ll.deleted.Load():
		return ll.tp.wrap(ErrTopicDeleted)
	case ll.closed.Load():
		return ErrClosed
	}
	return nil
}

// writableLocked returns the error of a write to a log that is closed,
// deleted, or failed.
func (ll *localLog) writableLocked() error {
	if err := ll.checkOpen(); err != nil {
		return err
	}
	if ll.failed != nil {
		return ll.tp.wrap(fmt.Errorf("%w: %w", ErrStorage, ll.failed))
	}
	return nil
}

// failLocked makes the partition refuse appends and fsyncs after a
// storage failure (keeping the first cause: what happened first is what
// the disk lost), logs it, and returns the error callers see: ErrStorage
// wrapping prefix and err. Every storage failure of a Log goes through it.
func (ll *localLog) failLocked(what, prefix string, err error) error {
	if ll.failed == nil {
		ll.failed = err
	}
	ll.logger.Error(what+"; the partition refuses appends until its directory is reopened", "partition", ll.tp, "err", err)
	return ll.tp.wrap(fmt.Errorf("%w: %s%w", ErrStorage, prefix, err))
}

// open opens the segments of the partition directory, as Kafka's LogLoader
// does: leftovers of interrupted deletions and cleanings are removed, and
// after an unclean shutdown every segment from the one holding the
// recovery point on is recovered; a truncated segment makes every later
// segment go. An empty directory gets a first segment at start. The
// recovered segments holding transactional markers or a .txnindex go into
// recovered, for txnIndexRepair.repairAtLoad.
func (ll *localLog) open(o loadOptions, st *recoveryStats, recovered map[*segment.Segment]bool) error {
	// A cleaner swap a crash interrupted is completed or rolled back
	// first (Kafka's LogLoader).
	if changed, err := compaction.RecoverDir(ll.fsys, ll.dir); err != nil {
		return err
	} else if changed {
		ll.logger.Warn("finished a cleaner swap interrupted by a crash", "partition", ll.tp)
	}
	entries, err := ll.fsys.List(ll.dir)
	if err != nil {
		return err
	}
	var bases []int64
	indexes := map[int64]bool{}
	for _, e := range entries {
		if e.IsDir {
			ll.logger.Warn("ignoring a directory inside a partition directory", "partition", ll.tp, "name", e.Name)
			continue
		}
		base, suffix, perr := segment.ParseFileName(e.Name)
		switch {
		case strings.HasSuffix(e.Name, segment.DeletedSuffix), strings.HasSuffix(e.Name, segment.CleanedSuffix), strings.HasSuffix(e.Name, ".tmp"):
			// Interrupted deletions and cleanings, and temp files of atomic
			// writes: Kafka removes them all at startup.
			if err := ll.fsys.Remove(filepath.Join(ll.dir, e.Name)); err != nil {
				return err
			}
			ll.dirDirty = true
		case perr != nil:
			if e.Name != checkpoint.PartitionMetadataFile && e.Name != checkpoint.LeaderEpochFile {
				ll.logger.Warn("ignoring a stray file in a partition directory", "partition", ll.tp, "name", e.Name)
			}
		case suffix == segment.LogSuffix:
			bases = append(bases, base)
		case suffix == segment.IndexSuffix || suffix == segment.TimeIndexSuffix || suffix == segment.TxnIndexSuffix:
			indexes[base] = true
		case suffix == segment.SnapshotSuffix:
			// producer-state snapshots: the producerStateManager reads them
		default:
			ll.logger.Warn("ignoring a stray file in a partition directory", "partition", ll.tp, "name", e.Name)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	// Index files without a .log are orphans Kafka deletes.
	for base := range indexes {
		if _, found := slices.BinarySearch(bases, base); !found {
			for _, suf := range []string{segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix} {
				if err := ll.fsys.Remove(filepath.Join(ll.dir, segment.FileName(base, suf))); err != nil && !isNotExist(err) {
					return err
				}
			}
			ll.dirDirty = true
		}
	}
	segs, err := ll.openSegments(bases, o, st, recovered)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		s, err := segment.Create(ll.fsys, ll.dir, max(o.logStartOffset, 0), ll.segmentConfig(), ll.rollJitter())
		if err != nil {
			return err
		}
		segs = []*segment.Segment{s}
		ll.dirDirty = true
	}
	ll.setSegments(segs)
	next, err := segs[len(segs)-1].NextOffset()
	if err != nil {
		return closeAll(segs, err)
	}
	ll.logEndOffset.Store(next)
	rp := next
	if !o.clean {
		rp = min(o.recoveryPoint, next)
		if st.recovered > 0 {
			rp = next // recovered segments were rescanned; what is there is what counts
		}
	}
	ll.recoveryPoint.Store(rp)
	ll.durable.Store(rp)
	ll.lastFlush.Store(ll.now().UnixMilli())
	return nil
}

// openSegments opens the segments, recovering those that need it.
func (ll *localLog) openSegments(bases []int64, o loadOptions, st *recoveryStats, recovered map[*segment.Segment]bool) ([]*segment.Segment, error) {
	cfg := ll.segmentConfig()
	// After an unclean shutdown, recovery starts at the segment holding the
	// recovery point.
	recoverFrom := int64(-1)
	if !o.clean {
		recoverFrom = 0
		for _, b := range bases {
			if b <= o.recoveryPoint {
				recoverFrom = b
			}
		}
	}
	var segs []*segment.Segment
	for i, base := range bases {
		active := i == len(bases)-1
		s, err := segment.Open(ll.fsys, ll.dir, base, cfg, segment.OpenOptions{Active: active, RollJitter: ll.rollJitter()})
		if s == nil {
			return nil, closeAll(segs, err)
		}
		if !active {
			segHooks.SetNextBaseOffset(s, bases[i+1])
		}
		needRecovery := recoverFrom >= 0 && base >= recoverFrom
		if err != nil {
			// The active segment's missing or damaged index, or a damaged
			// tail found while loading it: rebuild from the .log, as Kafka
			// does. (A sealed segment rebuilds its own indexes on first
			// use, without truncating anything: see the package doc.)
			ll.logger.Warn("segment needs recovery", "partition", ll.tp, "segment", s.LogFile(), "reason", err)
			needRecovery = true
		}
		if needRecovery {
			st.recovered++
			st.bytesScanned += s.Size()
			txn := segHooks.HasTxnIndex(s)
			res, err := s.Recover(segment.RecoverOptions{OnBatch: func(_ int64, h *record.BatchHeader) error {
				txn = txn || (h.Attributes.IsControl() && h.Attributes.IsTransactional())
				return nil
			}})
			if err != nil {
				return nil, closeAll(append(segs, s), err)
			}
			if txn {
				recovered[s] = true
			}
			if res.TruncatedBytes > 0 {
				st.bytesTruncated += res.TruncatedBytes
				ll.logger.Warn("truncated the invalid tail of a segment", "partition", ll.tp, "segment", s.LogFile(),
					"validBytes", res.ValidBytes, "truncatedBytes", res.TruncatedBytes, "cause", res.Cause)
				// Everything after the first invalid batch goes: later
				// segments are deleted (Kafka's LogLoader).
				for _, later := range bases[i+1:] {
					for _, suf := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix} {
						if err := ll.fsys.Remove(filepath.Join(ll.dir, segment.FileName(later, suf))); err != nil && !isNotExist(err) {
							return nil, closeAll(append(segs, s), err)
						}
					}
					ll.dirDirty = true
				}
				// Recover left it active: it is the last segment now.
				segs = append(segs, s)
				st.segments = len(segs)
				return segs, nil
			}
			if !active {
				if err := s.Seal(); err != nil {
					return nil, closeAll(append(segs, s), err)
				}
			}
		}
		segs = append(segs, s)
	}
	st.segments = len(segs)
	return segs, nil
}

func closeAll(segs []*segment.Segment, err error) error {
	errs := []error{err}
	for _, s := range segs {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// shouldRollLocked says whether the active segment is due to roll before a
// batch of size bytes with header h ([segment.Segment.ShouldRoll]); an
// empty active segment never is.
func (ll *localLog) shouldRollLocked(h *record.BatchHeader, size int) (bool, error) {
	c := ll.cfg()
	active := ll.active()
	roll, err := active.ShouldRoll(segment.RollParams{BatchBytes: size, MaxTimestamp: h.MaxTimestamp, LastOffset: h.LastOffset(),
		SegmentBytes: c.SegmentBytes, SegmentTime: c.maxSegmentTime(), Now: ll.now()})
	if err != nil {
		return false, ll.tp.wrap(err)
	}
	return roll && active.Size() > 0, nil
}

// rollLocked creates the next segment at base, then seals the active one.
// Creating comes first (Kafka's LocalLog.roll seals first) so that a
// failure to create — no file descriptor left (EMFILE), no space — changes
// nothing: the active segment stays active, the append that rolled fails
// with ErrStorage, and the next append that finds the segment due rolls
// again, so that the partition heals once descriptors come back.
func (ll *localLog) rollLocked(base int64) error {
	segs := ll.segs()
	s, err := segment.Create(ll.fsys, ll.dir, base, ll.segmentConfig(), ll.rollJitter())
	if err != nil {
		ll.logger.Warn("creating a segment failed; the next append rolls again", "partition", ll.tp, "baseOffset", base, "err", err)
		return ll.tp.wrap(fmt.Errorf("%w: rolling a segment at offset %d: %w", ErrStorage, base, err))
	}
	if err := segs[len(segs)-1].Seal(); err != nil {
		// Sealing writes the indexes: like a failed append, a failure
		// leaves the partition refusing appends (the state of the files
		// is no longer known). The new segment goes.
		return ll.failLocked("sealing the active segment failed", "", errors.Join(err, s.Remove()))
	}
	ll.dirDirty = true
	segHooks.SetNextBaseOffset(segs[len(segs)-1], base)
	next := make([]*segment.Segment, len(segs), len(segs)+1)
	copy(next, segs)
	ll.setSegments(append(next, s))
	ll.logger.Debug("rolled a new segment", "partition", ll.tp, "baseOffset", base)
	return nil
}

// publishLocked makes a batch just written to seg, the active segment,
// readable: the log end offset moves past it, then the segment's readable
// size (segment Config.PublishedReads), so that a reader never holds a
// batch beyond the log end offset it can see next (which would make its
// next position out of range). It reports whether flush.messages is
// reached.
func (ll *localLog) publishLocked(seg *segment.Segment, h *record.BatchHeader) bool {
	ll.logEndOffset.Store(h.NextOffset())
	segHooks.Publish(seg)
	ll.unflushedMessages += int64(h.LastOffsetDelta) + 1
	c := ll.cfg()
	return c.FlushMessages > 0 && ll.unflushedMessages >= c.FlushMessages
}

// readResult says how a read of the local segments ended.
type readResult int8

const (
	readDone     readResult = iota // a slice, or nothing at or after the offset
	readAgain                      // a segment of the snapshot was replaced (the cleaner, a truncation): read the new list
	readVanished                   // retention removed the segment after the snapshot: the offset is out of range now
)

// read returns the batches from the one holding offset in the local
// segments: at most maxBytes of them, at least one with minOneBatch, each
// segment bounded by its published size (the high watermark's position
// here). start is the log start offset, below which a segment closed under
// the read means the data is gone.
func (ll *localLog) read(offset int64, maxBytes int, minOneBatch bool, start func() int64) (*segment.Slice, readResult, error) {
	list := ll.segments.Load()
	segs := *list
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > offset }) - 1
	for i = max(i, 0); i < len(segs); i++ {
		s := segs[i]
		sl, err := s.Read(offset, maxBytes, segHooks.ReadableSize(s), minOneBatch)
		if errors.Is(err, segment.ErrClosed) {
			if ll.segments.Load() != list && ll.checkOpen() == nil && offset >= start() {
				return nil, readAgain, nil
			}
			return nil, readVanished, nil
		}
		if err != nil {
			return nil, readDone, ll.tp.wrap(err)
		}
		if sl != nil {
			return sl, readDone, nil
		}
		// Nothing at or after offset in this segment (a gap left by the
		// cleaner, or an empty segment): the next one has it.
	}
	return nil, readDone, nil
}

// offsetForTimestamp returns the first record at or after ts in the local
// segments, from start on (Kafka's LogSegment.findOffsetByTimestamp over
// the segments whose largest timestamp reaches ts).
func (ll *localLog) offsetForTimestamp(ts, start int64) (segment.TimestampOffset, bool, error) {
	for _, s := range ll.segs() {
		maxTS, err := s.MaxTimestamp()
		if err != nil {
			return segment.TimestampOffset{}, false, ll.tp.wrap(err)
		}
		if maxTS < ts {
			continue
		}
		got, ok, err := s.FindOffsetByTimestamp(ts, start)
		if err != nil {
			return segment.TimestampOffset{}, false, ll.tp.wrap(err)
		}
		if ok {
			return got, true, nil
		}
	}
	return segment.TimestampOffset{}, false, nil
}

// maxTimestampOffset finds the record with the largest timestamp: the
// segment with the largest max timestamp, then its first record carrying
// it, from start on. ok is false when no batch has a timestamp.
func (ll *localLog) maxTimestampOffset(start int64) (segment.TimestampOffset, bool, error) {
	var best *segment.Segment
	bestTS := record.NoTimestamp
	for _, s := range ll.segs() {
		ts, err := s.MaxTimestamp()
		if err != nil {
			return segment.TimestampOffset{}, false, ll.tp.wrap(err)
		}
		if ts > bestTS {
			best, bestTS = s, ts
		}
	}
	if best == nil {
		return segment.TimestampOffset{}, false, nil
	}
	return best.FindOffsetByTimestamp(bestTS, start)
}

// largestTimestamp is Kafka's LogSegment.largestTimestamp: the max record
// timestamp, or the .log's modification time when no batch has one.
func (ll *localLog) largestTimestamp(s *segment.Segment) (int64, error) {
	ts, err := s.MaxTimestamp()
	if err != nil || ts >= 0 {
		return ts, err
	}
	fi, err := ll.fsys.Stat(s.LogFile())
	if err != nil {
		return 0, err
	}
	return fi.ModTime.UnixMilli(), nil
}

// countWhile counts the segments from the oldest while pred holds, never
// an empty last segment; next is the segment after s, nil for the last.
func (ll *localLog) countWhile(pred func(s, next *segment.Segment) (bool, error)) (int, error) {
	segs := ll.segs()
	n := 0
	for i, s := range segs {
		var next *segment.Segment
		if i+1 < len(segs) {
			next = segs[i+1]
		}
		if next == nil && s.Size() == 0 {
			break
		}
		ok, err := pred(s, next)
		if err != nil {
			return 0, ll.tp.wrap(err)
		}
		if !ok {
			break
		}
		n++
	}
	return n, nil
}

// localRetention walks the segments as Kafka's deletableSegments does for a
// remote-storage topic under local.retention.bytes and local.retention.ms:
// from the oldest on, while each is beyond one of them, it goes if it is
// copied (its last offset at or below copied) or start has passed it; the
// walk stops at the first that stays. It returns how many go, and whether
// the walk reached a non-empty active segment beyond local retention,
// which should roll so that the next tiering pass copies it.
func (ll *localLog) localRetention(c TopicConfig, now time.Time, copied, start int64) (int, bool, error) {
	ms, limit := c.localRetention()
	if ms < 0 && limit < 0 {
		return 0, false, nil
	}
	segs := ll.segs()
	// Kafka's size walk deletes while the local size less the segments
	// deleted stays at or above local.retention.bytes; a segment that does
	// not keep it there ends the size walk, so excess only goes down.
	var excess int64 = -1
	if limit >= 0 {
		var size int64
		for _, s := range segs {
			size += s.Size()
		}
		excess = size - limit
	}
	n := 0
	for i, s := range segs {
		old := false
		if ms >= 0 {
			ts, err := ll.largestTimestamp(s)
			if err != nil {
				return 0, false, ll.tp.wrap(err)
			}
			old = now.Sub(time.UnixMilli(ts)) > ms
		}
		big := excess >= 0 && excess-s.Size() >= 0
		if !old && !big {
			break
		}
		excess -= s.Size()
		if i+1 == len(segs) {
			// The active segment: never deleted here (it is not copied);
			// rolled if it holds anything, to be copied and deleted later.
			return n, s.Size() > 0, nil
		}
		next := segs[i+1].BaseOffset()
		if next-1 > copied && start < next {
			break // not copied yet
		}
		n++
	}
	return n, false, nil
}

// removeOldestLocked takes the n oldest segments out of the list (the
// caller leaves at least one), renames their files to .deleted and
// schedules their removal after file.delete.delay.ms, counting them in
// res. It returns the base offset of the first segment left.
func (ll *localLog) removeOldestLocked(n int, res *RetentionResult) (int64, error) {
	segs := ll.segs()
	gone, rest := segs[:n], append([]*segment.Segment(nil), segs[n:]...)
	ll.setSegments(rest)
	var errs []error
	at := ll.now().Add(ll.cfg().FileDeleteDelay)
	for _, s := range gone {
		res.SegmentsDeleted++
		res.BytesDeleted += s.Size()
		if err := s.RenameForDeletion(); err != nil {
			errs = append(errs, err)
		}
		ll.pending = append(ll.pending, pendingDelete{seg: s, at: at})
	}
	ll.dirDirty = true
	if err := errors.Join(errs...); err != nil {
		return rest[0].BaseOffset(), ll.tp.wrap(fmt.Errorf("%w: %w", ErrStorage, err))
	}
	return rest[0].BaseOffset(), nil
}

// removeDeletedLocked removes the files of segments deleted at least
// file.delete.delay.ms ago (all of them with force). Files still read by a
// live slice go when it is released.
func (ll *localLog) removeDeletedLocked(force bool) error {
	now := ll.now()
	var keep []pendingDelete
	var errs []error
	for _, p := range ll.pending {
		if !force && now.Before(p.at) {
			keep = append(keep, p)
			continue
		}
		errs = append(errs, p.seg.Remove())
	}
	ll.pending = keep
	return errors.Join(errs...)
}

// startAtLocked appends an empty segment at offset to the list, for a
// truncation that keeps no segment (Kafka's
// LocalLog.truncateFullyAndStartAt): the caller removes the others and
// moves the log end offset (endAtLocked).
func (ll *localLog) startAtLocked(offset int64) error {
	s, err := segment.Create(ll.fsys, ll.dir, offset, ll.segmentConfig(), ll.rollJitter())
	if err != nil {
		return ll.tp.wrap(err)
	}
	ll.setSegments(append(append([]*segment.Segment(nil), ll.segs()...), s))
	return nil
}

// truncateToLocked removes every batch at or above offset from the
// segments holding offsets (Kafka's LocalLog.truncateTo): the later
// segments are scheduled for deletion and the one holding offset is cut at
// that batch. It returns the new log end offset. REQUIRES: the first
// segment's base offset is at or below offset, below the log end offset.
func (ll *localLog) truncateToLocked(offset int64) (int64, error) {
	segs := ll.segs()
	keep := 0
	for keep < len(segs) && segs[keep].BaseOffset() <= offset {
		keep++
	}
	ll.setSegments(append([]*segment.Segment(nil), segs[:keep]...))
	var errs []error
	at := ll.now().Add(ll.cfg().FileDeleteDelay)
	for _, s := range segs[keep:] {
		errs = append(errs, s.RenameForDeletion())
		ll.pending = append(ll.pending, pendingDelete{seg: s, at: at})
	}
	last := segs[keep-1]
	if _, err := last.TruncateTo(offset); err != nil {
		errs = append(errs, err)
	}
	next, err := last.NextOffset()
	errs = append(errs, err)
	ll.endAtLocked(next)
	ll.dirDirty = true
	return next, errors.Join(errs...)
}

// endAtLocked moves the log end offset back to end after a truncation,
// with the recovery point and the durable offset.
func (ll *localLog) endAtLocked(end int64) {
	ll.logEndOffset.Store(end)
	ll.recoveryPoint.Store(min(ll.recoveryPoint.Load(), end))
	ll.durable.Store(min(ll.durable.Load(), end))
}

// errLogChanged aborts a cleaning round whose segments are no longer the
// log's.
var errLogChanged = fmt.Errorf("%w: the log changed during cleaning", compaction.ErrAborted)

// replaceSegmentsLocked swaps the cleaned segment at base in for old
// (Kafka's LocalLog.replaceSegments), unless old is no longer a run of the
// log's segments before the active one: then it returns an error matching
// compaction.ErrAborted, as when the old segments' indexes cannot be
// opened. The old segments are scheduled for deletion.
func (ll *localLog) replaceSegmentsLocked(old []*segment.Segment, base int64) error {
	segs := ll.segs()
	i := slices.Index(segs, old[0])
	if i < 0 || i+len(old) >= len(segs) {
		return errLogChanged
	}
	for k, s := range old {
		if segs[i+k] != s {
			return errLogChanged
		}
		// The cleaned segment takes over these names: readers of the old
		// segment must already hold its indexes open.
		if err := s.LoadIndexes(); err != nil {
			return fmt.Errorf("%w: %w", compaction.ErrAborted, err)
		}
	}
	if err := compaction.CommitSwap(ll.fsys, ll.dir, base, old); err != nil {
		return ll.failLocked("swapping in a cleaned segment failed", "", err)
	}
	ns, err := segment.Open(ll.fsys, ll.dir, base, ll.segmentConfig(), segment.OpenOptions{RollJitter: ll.rollJitter()})
	if err == nil {
		err = ns.LoadIndexes()
	}
	if err != nil {
		if ns != nil {
			err = errors.Join(err, ns.Close())
		}
		return ll.failLocked("opening the cleaned segment failed", "opening the cleaned segment: ", err)
	}
	segHooks.SetNextBaseOffset(ns, segs[i+len(old)].BaseOffset())
	segHooks.MarkTxnIndexVerified(ns) // written by the cleaner from the checked entries
	next := make([]*segment.Segment, 0, len(segs)-len(old)+1)
	next = append(append(append(next, segs[:i]...), ns), segs[i+len(old):]...)
	ll.setSegments(next)
	at := ll.now().Add(ll.cfg().FileDeleteDelay)
	for _, s := range old {
		ll.pending = append(ll.pending, pendingDelete{seg: s, at: at})
	}
	return nil
}

// appendAbortedTxns appends the aborted transactions whose data overlaps
// [fetchOffset, upperBound) from the .txnindex files of the segments from
// the one holding fetchOffset on (Kafka's LogSegment.collectAbortedTxns),
// until an entry says the search is complete. A segment whose .txnindex is
// not yet verified is checked by verify first. On error it returns dst as
// it was.
func (ll *localLog) appendAbortedTxns(dst []index.AbortedTxn, fetchOffset, upperBound int64, verify func(*segment.Segment) error) ([]index.AbortedTxn, error) {
	segs := ll.segs()
	out := dst
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > fetchOffset }) - 1
	for i = max(i, 0); i < len(segs); i++ {
		if !segHooks.TxnIndexVerified(segs[i]) {
			if err := verify(segs[i]); err != nil && !errors.Is(err, segment.ErrClosed) {
				return dst, ll.tp.wrap(err)
			}
		}
		got, done, err := segs[i].AppendAbortedTxns(out, fetchOffset, upperBound)
		if errors.Is(err, segment.ErrClosed) {
			continue // deleted by retention after the snapshot of the list
		}
		if err != nil {
			return dst, ll.tp.wrap(err)
		}
		out = got
		if done {
			break
		}
	}
	return out, nil
}

// segmentEnd returns the offset the batches of segs[k] end below: the next
// segment's base offset, or the log end offset.
func (ll *localLog) segmentEnd(segs []*segment.Segment, k int) int64 {
	if k+1 < len(segs) {
		return segs[k+1].BaseOffset()
	}
	return ll.logEndOffset.Load()
}
