package log

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/compaction"
	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// This file is the log's side of compaction (Kafka's LogCleanerManager):
// which log to clean and from where, the swap of cleaned segments into a
// log's list, cleaner-offset-checkpoint, and the Dir's cleaner goroutines.
// The compaction package does the cleaning itself.

// cleanerState is the Dir's cleaner: its goroutines (cleaners.go) and their
// shared throttler, the logs being cleaned, and the synchronous cleaner of
// CleanNow.
type cleanerState struct {
	ctx    context.Context // cancelled by Dir.Close
	cancel context.CancelFunc
	// rounds counts the cleaning rounds running: one joins only while the
	// cleaner is not closed (under mu), and Dir.Close waits for them once
	// ctx is cancelled, so no round outlives the Dir's logs.
	rounds    sync.WaitGroup
	throttler *compaction.Throttler

	mu         sync.Mutex // protects the fields below
	inProgress map[*Log]bool
	// uncleanable holds the logs whose cleaning failed, with the error
	// (Kafka's uncleanablePartitions): no cleaner picks them again. An
	// entry goes when its log leaves the Dir (a deleted topic; a topic
	// created again under the same name is a new log); reopening the Dir
	// starts with none.
	uncleanable map[*Log]error
	closed      bool

	syncMu  sync.Mutex // serialises CleanNow; protects syncCln and syncCfg
	syncCln *compaction.Cleaner
	syncCfg compaction.Config // syncCln's

	pool cleanerPool // the cleaner goroutines
}

// CleanerStats describe a log's last cleaning round.
type CleanerStats struct {
	compaction.Stats
	// DirtyRatio is the cleanable ratio that made the log eligible:
	// dirty bytes / (clean + dirty bytes) before the round.
	DirtyRatio float64
	// Rounds counts the rounds run on this log since it was opened.
	Rounds int
	// Finished is when the last round ended.
	Finished time.Time
}

// CleanerStats returns the log's last cleaning round's stats; ok is false
// if no round ran since the log was opened.
func (l *Log) CleanerStats() (st CleanerStats, ok bool) {
	p := l.cleaning.stats.Load()
	if p == nil {
		return CleanerStats{}, false
	}
	return *p, true
}

// FirstDirtyOffset returns where the next cleaning round of a compacted log
// starts: the end of the last round (cleaner-offset-checkpoint), or the log
// start offset.
func (l *Log) FirstDirtyOffset() int64 {
	cp := l.cleaning.checkpoint.Load()
	if cp < l.LogStartOffset() || cp > l.LogEndOffset() {
		return l.LogStartOffset()
	}
	return cp
}

// maxAbortedRounds is how many rounds of one log may abort in one CleanNow
// call (retention or truncation changed the log under them) before CleanNow
// leaves that log for later.
const maxAbortedRounds = 3

// CleanResult is what [Dir.CleanNow] did, and why the compacted
// partitions it left with records not yet cleaned were not cleanable.
type CleanResult struct {
	// Rounds is the number of cleaning rounds completed.
	Rounds int
	// Waiting lists, sorted, the compacted partitions that still have
	// dirty records (past the cleaner's checkpoint) and why a round would
	// not clean them now. A partition that is uncleanable, or whose rounds
	// were aborted, is not listed.
	Waiting []CleanWaiting
}

// CleanWaiting is a compacted partition with dirty records that no round
// cleans yet.
type CleanWaiting struct {
	TopicPartition
	// FirstDirtyOffset is where the next round would start.
	FirstDirtyOffset int64
	Reason           CleanWaitReason
}

// CleanWaitReason says why a compacted partition's dirty records wait.
type CleanWaitReason int8

const (
	// WaitActiveSegment: every dirty record is in the active segment,
	// which the cleaner never cleans (as Kafka's): the records become
	// cleanable once the segment rolls (segment.bytes, segment.ms, or
	// [Log.Roll]).
	WaitActiveSegment CleanWaitReason = iota + 1
	// WaitOpenTransaction: the dirty records after the cleaned ones are
	// at or past the last stable offset (a transaction is open).
	WaitOpenTransaction
	// WaitCompactionLag: the dirty segments are younger than
	// min.compaction.lag.ms.
	WaitCompactionLag
	// WaitDirtyRatio: the dirty share of the log is at or below
	// min.cleanable.dirty.ratio, and max.compaction.lag.ms has not passed.
	WaitDirtyRatio
)

func (r CleanWaitReason) String() string {
	switch r {
	case WaitActiveSegment:
		return "every dirty record is in the active segment"
	case WaitOpenTransaction:
		return "the dirty records are past the last stable offset"
	case WaitCompactionLag:
		return "the dirty segments are younger than min.compaction.lag.ms"
	case WaitDirtyRatio:
		return "the dirty ratio is at or below min.cleanable.dirty.ratio"
	}
	return fmt.Sprintf("CleanWaitReason(%d)", int8(r))
}

// CleanNow runs cleaning rounds synchronously, the filthiest eligible log
// first, until no compacted log is eligible (dirty ratio above
// min.cleanable.dirty.ratio, or max.compaction.lag.ms passed), and returns
// what it did: the rounds completed and the compacted partitions whose
// dirty records it left, with why. The cleaner goroutines do the same in
// the background; CleanNow is for tests and for callers that want a log
// compacted at a known moment. It works whatever log.cleaner.enable says,
// with its own share of log.cleaner.dedupe.buffer.size (under the settings
// in effect when it is called: [Dir.AlterBrokerConfig] changes them).
//
// As Kafka's cleaner, it never cleans the active segment: records appended
// since the last roll wait for it ([WaitActiveSegment]); roll first
// ([Log.Roll]) to clean everything written so far.
//
// A log whose round fails is marked uncleanable, as the cleaner goroutines
// mark it (see [Dir.UncleanablePartitions]), and CleanNow goes on with the
// other logs; it returns the failures it met, joined, with the rounds that
// completed. A round that retention or truncation aborted is not a failure:
// the log is picked again (at most 3 aborted rounds per log per call, then
// it is left for later). CleanNow stops when ctx ends, returning ctx's
// error among the others, and returns [ErrClosed] once the Dir is closed.
func (d *Dir) CleanNow(ctx context.Context) (CleanResult, error) {
	d.cleaner.syncMu.Lock()
	defer d.cleaner.syncMu.Unlock()
	var res CleanResult
	if cfg := d.compactionConfig(cleanerSettingsOf(d.Config())); d.cleaner.syncCln == nil || d.cleaner.syncCfg != cfg {
		c, err := compaction.NewCleaner(cfg)
		if err != nil {
			return res, err
		}
		d.cleaner.syncCln, d.cleaner.syncCfg = c, cfg
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.cleaner.ctx, cancel)
	defer stop()
	var errs []error
	skip := map[*Log]bool{}
	aborted := map[*Log]int{}
	for range 1_000_000 {
		l, failed, err := d.cleanFilthiest(ctx, d.cleaner.syncCln, skip)
		errs = append(errs, failed...)
		switch {
		case l == nil:
			if err == nil {
				res.Waiting = d.cleanWaiting(skip)
			}
			return res, errors.Join(append(errs, err)...)
		case err == nil:
			res.Rounds++
		case ctx.Err() != nil:
			return res, errors.Join(append(errs, err)...)
		case errors.Is(err, compaction.ErrAborted):
			aborted[l]++
			if aborted[l] >= maxAbortedRounds {
				skip[l] = true
			}
		default:
			// Marked uncleanable; its error is among failed.
			skip[l] = true
		}
	}
	return res, errors.Join(errs...)
}

// cleanWaiting lists the compacted logs with dirty records left, but those
// in skip and the uncleanable ones, with why they wait.
func (d *Dir) cleanWaiting(skip map[*Log]bool) []CleanWaiting {
	logs := d.allLogs()
	d.cleaner.mu.Lock()
	defer d.cleaner.mu.Unlock()
	var out []CleanWaiting
	for _, l := range logs {
		if _, bad := d.cleaner.uncleanable[l]; bad || skip[l] || !l.Config().CleanupPolicy.Compact || l.local.checkOpen() != nil {
			continue
		}
		tc, err := newToClean(l)
		if err != nil || tc.firstDirty >= l.LogEndOffset() {
			continue
		}
		reason := WaitDirtyRatio
		if tc.cleanableBytes == 0 {
			reason = tc.limit
		}
		out = append(out, CleanWaiting{TopicPartition: l.tp, FirstDirtyOffset: tc.firstDirty, Reason: reason})
	}
	return out
}

// UncleanablePartitions returns the partitions the cleaner no longer cleans
// because a round failed on them (a corrupt batch, an I/O error), each with
// its error: Kafka's uncleanable partitions (metric
// uncleanable-partitions-count). The failure is logged once, at warn
// level. A partition stays uncleanable until it is deleted (a topic created
// again under the same name is cleaned) or the Dir is reopened; other
// partitions are cleaned meanwhile.
func (d *Dir) UncleanablePartitions() map[TopicPartition]error {
	logs := d.allLogs()
	d.cleaner.mu.Lock()
	defer d.cleaner.mu.Unlock()
	d.pruneUncleanableLocked(logs)
	out := make(map[TopicPartition]error, len(d.cleaner.uncleanable))
	for l, err := range d.cleaner.uncleanable {
		out[l.tp] = err
	}
	return out
}

// pruneUncleanableLocked forgets the uncleanable logs that left the Dir
// (Kafka's maintainUncleanablePartitions); logs are the Dir's logs.
//
// REQUIRES: d.cleaner.mu is held.
func (d *Dir) pruneUncleanableLocked(logs []*Log) {
	if len(d.cleaner.uncleanable) == 0 {
		return
	}
	open := make(map[*Log]bool, len(logs))
	for _, l := range logs {
		open[l] = !l.local.deleted.Load()
	}
	for l := range d.cleaner.uncleanable {
		if !open[l] {
			delete(d.cleaner.uncleanable, l)
		}
	}
}

// markUncleanableLocked marks l uncleanable after err, and logs it.
//
// REQUIRES: d.cleaner.mu is held.
func (d *Dir) markUncleanableLocked(l *Log, err error) {
	if _, ok := d.cleaner.uncleanable[l]; ok {
		return
	}
	d.cleaner.uncleanable[l] = err
	d.logger.Warn("log cleaning failed; the partition is marked uncleanable and is not cleaned until it is deleted or the directory reopened",
		"partition", l.tp, "err", err)
}

// toClean is a compacted log's dirtiness (Kafka's LogToClean).
type toClean struct {
	l                            *Log
	firstDirty, firstUncleanable int64
	cleanBytes, cleanableBytes   int64
	ratio                        float64
	needNow                      bool
	segs                         []*segment.Segment // below firstUncleanable
	limit                        CleanWaitReason    // what set firstUncleanable
}

// cleanFilthiest cleans the eligible log with the highest dirty ratio that
// no other cleaner holds and that is neither uncleanable nor in skip. It
// returns the log it ran a round on (nil if none was eligible; the error is
// then nil, or ErrClosed once the Dir is closed), the round's error, and
// the errors of the logs it marked uncleanable: a failed round's log (the
// round's error is then among them), or a log whose dirtiness could not be
// measured. A round that ends because ctx ended, or because its log
// changed, was closed or deleted under it, returns an error matching
// [compaction.ErrAborted] and marks nothing.
func (d *Dir) cleanFilthiest(ctx context.Context, c *compaction.Cleaner, skip map[*Log]bool) (*Log, []error, error) {
	if !d.cleaner.enterRound() {
		return nil, nil, ErrClosed
	}
	defer d.cleaner.rounds.Done()
	logs := d.allLogs()
	var best *toClean
	var failed []error
	d.cleaner.mu.Lock()
	if d.cleaner.closed {
		d.cleaner.mu.Unlock()
		return nil, nil, ErrClosed
	}
	d.pruneUncleanableLocked(logs)
	for _, l := range logs {
		if _, bad := d.cleaner.uncleanable[l]; bad || skip[l] || !l.Config().CleanupPolicy.Compact || d.cleaner.inProgress[l] || l.local.checkOpen() != nil {
			continue
		}
		tc, err := newToClean(l)
		if err != nil {
			// Kafka's grabFilthiestCompactedLog fails the same way, and
			// its cleaner thread marks the partition uncleanable.
			err = l.tp.wrap(fmt.Errorf("measuring the log's dirtiness: %w", err))
			d.markUncleanableLocked(l, err)
			failed = append(failed, err)
			continue
		}
		if tc.cleanableBytes == 0 || !(tc.needNow || tc.ratio > l.Config().MinCleanableDirtyRatio) {
			continue
		}
		if best == nil || tc.ratio > best.ratio {
			best = tc
		}
	}
	if best == nil {
		d.cleaner.mu.Unlock()
		return nil, failed, nil
	}
	d.cleaner.inProgress[best.l] = true
	d.cleaner.mu.Unlock()
	err := best.clean(ctx, c)
	d.cleaner.mu.Lock()
	delete(d.cleaner.inProgress, best.l)
	switch {
	case err == nil || errors.Is(err, compaction.ErrAborted):
	case ctx.Err() != nil || best.l.local.checkOpen() != nil:
		err = fmt.Errorf("%w: %w", compaction.ErrAborted, err)
	default:
		d.markUncleanableLocked(best.l, err)
		failed = append(failed, err)
	}
	d.cleaner.mu.Unlock()
	if err != nil {
		return best.l, failed, err
	}
	if err := d.writeCleanerCheckpoint(); err != nil {
		d.logger.Warn("writing cleaner-offset-checkpoint failed", "err", err)
	}
	return best.l, failed, nil
}

// newToClean measures a compacted log's dirtiness as Kafka's
// LogCleanerManager does.
func newToClean(l *Log) (*toClean, error) {
	c := l.Config()
	now := l.now()
	segs := l.local.segs()
	tc := &toClean{l: l, firstDirty: l.FirstDirtyOffset()}
	active := segs[len(segs)-1]
	fu := active.BaseOffset()
	tc.limit = WaitActiveSegment
	if lso := l.LastStableOffset(); lso < fu {
		fu, tc.limit = lso, WaitOpenTransaction
	}
	nonActive := segs[:len(segs)-1]
	if c.MinCompactionLag > 0 {
		for i, s := range nonActive {
			if i+1 < len(segs) && segs[i+1].BaseOffset() <= tc.firstDirty {
				continue
			}
			ts, err := l.local.largestTimestamp(s)
			if err != nil {
				return nil, err
			}
			if ts > now.Add(-c.MinCompactionLag).UnixMilli() {
				if s.BaseOffset() < fu {
					fu, tc.limit = s.BaseOffset(), WaitCompactionLag
				}
				break
			}
		}
	}
	// Cleaning stops at a segment boundary.
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > fu }) - 1
	if i >= 0 {
		fu = segs[i].BaseOffset()
	}
	tc.firstUncleanable = fu
	for i, s := range segs {
		end := l.LogEndOffset()
		if i+1 < len(segs) {
			end = segs[i+1].BaseOffset()
		}
		if s.BaseOffset() < tc.firstDirty {
			tc.cleanBytes += s.Size()
		}
		if s.BaseOffset() < fu && end > tc.firstDirty {
			tc.cleanableBytes += s.Size()
		}
		if s.BaseOffset() < fu {
			tc.segs = append(tc.segs, s)
		}
	}
	if fu <= tc.firstDirty {
		tc.cleanableBytes = 0
	}
	if total := tc.cleanBytes + tc.cleanableBytes; total > 0 {
		tc.ratio = float64(tc.cleanableBytes) / float64(total)
	}
	if c.MaxCompactionLag != Unlimited && tc.cleanableBytes > 0 {
		for i, s := range nonActive {
			if i+1 < len(segs) && segs[i+1].BaseOffset() <= tc.firstDirty {
				continue
			}
			ts, err := firstBatchTimestamp(s)
			if err != nil {
				return nil, err
			}
			tc.needNow = ts >= 0 && now.Sub(time.UnixMilli(ts)) >= c.MaxCompactionLag
			break
		}
	}
	return tc, nil
}

// firstBatchTimestamp returns the max timestamp of the segment's first
// batch, -1 if it has none.
func firstBatchTimestamp(s *segment.Segment) (int64, error) {
	sl, err := s.Read(s.BaseOffset(), 1, s.Size(), true)
	if err != nil || sl == nil {
		return record.NoTimestamp, err
	}
	defer sl.Release()
	var hdr [record.BatchHeaderLen]byte
	if _, err := sl.ReadAt(hdr[:], 0); err != nil {
		return record.NoTimestamp, err
	}
	h, err := record.ParseHeader(hdr[:])
	if err != nil {
		return record.NoTimestamp, err
	}
	return h.MaxTimestamp, nil
}

// clean runs one round on the log.
func (tc *toClean) clean(ctx context.Context, c *compaction.Cleaner) error {
	l := tc.l
	cfg := l.Config()
	l.mu.Lock()
	gen := l.cleaning.gen
	producers := l.producers.lastRecords()
	l.mu.Unlock()
	in := &compaction.Log{
		FS: l.local.fsys, Dir: l.local.dir, Segments: tc.segs,
		FirstDirtyOffset: tc.firstDirty, FirstUncleanableOffset: tc.firstUncleanable,
		Now: l.now(), DeleteRetention: cfg.DeleteRetention,
		SegmentBytes: cfg.SegmentBytes, MaxIndexBytes: cfg.SegmentIndexBytes, IndexIntervalBytes: cfg.IndexIntervalBytes,
		Producers: producers,
		// Compacted topics are never tiered: the aborted transactions
		// are the local segments'.
		AbortedTxns: func(from, to int64) ([]index.AbortedTxn, error) {
			return l.local.appendAbortedTxns(nil, from, to, l.txnRepair.verify)
		},
		Replace: func(old []*segment.Segment, base int64) error {
			return l.replaceCleaned(old, base, gen)
		},
	}
	st, err := c.Clean(ctx, in)
	if err != nil {
		return l.tp.wrap(err)
	}
	prev, _ := l.CleanerStats()
	l.cleaning.checkpoint.Store(st.EndOffset)
	l.cleaning.stats.Store(&CleanerStats{Stats: st, DirtyRatio: tc.ratio, Rounds: prev.Rounds + 1, Finished: l.now()})
	l.logger.Info("cleaned log", "partition", l.tp, "firstDirtyOffset", st.FirstDirtyOffset, "endOffset", st.EndOffset,
		"bytesRead", st.BytesRead, "bytesWritten", st.BytesWritten, "recordsRemoved", st.RecordsRemoved(),
		"dirtyRatio", tc.ratio, "duration", st.MapDuration+st.CleanDuration)
	return nil
}

// replaceCleaned swaps the cleaned segment at base in for old (Kafka's
// UnifiedLog.replaceSegments), unless the log changed since the round
// began (retention or truncation removed or cut segments): then it returns
// compaction.ErrAborted.
func (l *Log) replaceCleaned(old []*segment.Segment, base int64, gen uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return fmt.Errorf("%w: %w", compaction.ErrAborted, err)
	}
	if l.cleaning.gen != gen {
		return errLogChanged
	}
	if err := l.local.replaceSegmentsLocked(old, base); err != nil {
		return err
	}
	if l.producers.removeReplacedSnapshots(old, base) {
		l.local.dirDirty = true
	}
	return nil
}

// writeCleanerCheckpoint writes cleaner-offset-checkpoint with the first
// dirty offset of every compacted log that was cleaned (the offset
// checkpoint format of the internal/checkpoint package doc; Kafka's
// OffsetCheckpointFile).
func (d *Dir) writeCleanerCheckpoint() error {
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	m := d.cleanerOffsets()
	if len(m) == 0 {
		return nil
	}
	return checkpoint.WriteOffsets(d.fsys, filepath.Join(d.path, checkpoint.CleanerOffsetFile), checkpointOffsets(m))
}

func (d *Dir) cleanerOffsets() map[TopicPartition]int64 {
	m := map[TopicPartition]int64{}
	for _, l := range d.allLogs() {
		if cp := l.cleaning.checkpoint.Load(); cp >= 0 && !l.local.deleted.Load() && l.Config().CleanupPolicy.Compact {
			m[l.tp] = cp
		}
	}
	return m
}

// lastRecords returns the active producers' last records, for the cleaner
// (Kafka's lastRecordsOfActiveProducers).
func (ps *producerState) lastRecords() map[int64]compaction.LastRecord {
	out := make(map[int64]compaction.LastRecord, len(ps.producers))
	for pid, e := range ps.producers {
		lr := compaction.LastRecord{LastDataOffset: -1, ProducerEpoch: e.epoch}
		if n := len(e.batches); n > 0 {
			lr.LastDataOffset = e.batches[n-1].lastOffset
		}
		out[pid] = lr
	}
	return out
}
