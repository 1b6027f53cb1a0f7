package log

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/compaction"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// Log is one partition of a topic: Kafka's UnifiedLog. It appends batches
// as the partition leader (validating them, assigning offsets) or as a
// replica (keeping their offsets), serves reads from any offset, rolls,
// flushes and retains segments by the topic's configuration.
//
// A Log is safe for concurrent use: appends are serialised by the log's
// write lock; reads take a snapshot of the segment list and run alongside.
// Single node: the high watermark is the log end offset.
//
// A Log belongs to its [Dir], which opens it, hands it out through
// [Dir.Partition] and closes it in [Dir.Close] or [Dir.DeleteTopic]: it has
// no Close of its own, and a *Log stays valid for as long as its Dir is
// open and its topic exists (after that its calls return [ErrClosed] or
// [ErrTopicDeleted]).
type Log struct {
	topic     string
	partition int32
	dir       string // the partition directory
	fsys      vfs.FS
	logger    *slog.Logger
	now       func() time.Time
	topicID   checkpoint.TopicID

	config atomic.Pointer[TopicConfig]

	overlapBytes int
	overlapped   atomic.Int64 // appends whose write overlapped their validation

	mu                sync.Mutex // the write lock: appends, rolls, truncation, retention
	epochs            *checkpoint.LeaderEpochCache
	leaderEpoch       atomic.Int32 // written under mu; read by LeaderEpoch without it
	unflushedMessages int64
	failed            error // sticky storage error
	dirDirty          bool  // a segment was created or removed since the last directory sync
	pending           []pendingDelete

	segments       atomic.Pointer[[]*segment.Segment] // sorted by base offset; replaced, never changed
	logStartOffset atomic.Int64
	logEndOffset   atomic.Int64
	recoveryPoint  atomic.Int64 // every offset below is fsynced, with the indexes of its segments
	durable        atomic.Int64 // every offset below is fsynced (its .log data); at least recoveryPoint
	lastFlush      atomic.Int64 // unix milliseconds of the last flush
	closed         atomic.Bool
	deleted        atomic.Bool
	internal       bool                // an internal topic: users may not append
	onAppend       func()              // the Dir's notifier, nil for none
	tier           func() *tierManager // the Dir's tiered storage, nil (or returning nil) for none

	sync syncState // group commit

	notifyMu sync.Mutex
	notifyCh chan struct{} // closed at the next append; nil while nobody waits

	appendReader *record.Reader // validation decoder, under mu
	rebuild      record.Builder // recompression, under mu

	// Producer state (idempotence and transactions), under mu.
	pstate               *producerState
	producerIDExpiration time.Duration // producer.id.expiration.ms
	snapshotOffset       int64         // offset of the newest snapshot this process wrote or loaded, -1 for none
	unsyncedSnapshot     int64         // offset of a snapshot written at a roll and not yet synced, -1 for none
	markerBuf            []byte
	markerReader         *record.Reader
	// firstUnstable is the first offset of the earliest open transaction,
	// -1 for none; readers derive the last stable offset from it.
	firstUnstable atomic.Int64

	// Compaction: where the next cleaning round starts (-1: the log start
	// offset), the last round's stats, and segGen (under mu), bumped by
	// truncation so that a round started before it never swaps in.
	cleanerCheckpoint atomic.Int64
	cleanerStats      atomic.Pointer[CleanerStats]
	segGen            uint64

	// Damage below the recovery point (repair.go): indexes the segments
	// rebuilt and .txnindex files the log rebuilt since Open, and
	// txnRepairMu, which serialises the checks of .txnindex files against
	// their ABORT markers (taken before mu).
	indexRebuilds    atomic.Int64
	txnIndexRebuilds atomic.Int64
	txnRepairMu      sync.Mutex
}

func (l *Log) tp() TopicPartition { return TopicPartition{Topic: l.topic, Partition: l.partition} }

// tiering returns the Dir's tiered storage when this partition uses it,
// else nil.
func (l *Log) tiering() *tierManager {
	if l.tier == nil || !l.Config().RemoteStorageEnable {
		return nil
	}
	return l.tier()
}

// Topic returns the log's topic.
func (l *Log) Topic() string { return l.topic }

// Partition returns the log's partition number.
func (l *Log) Partition() int32 { return l.partition }

// Dir returns the partition directory's path.
func (l *Log) Dir() string { return l.dir }

// Config returns the topic configuration the log applies.
func (l *Log) Config() TopicConfig { return *l.config.Load() }

// LogStartOffset returns the first offset a reader may ask for.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// LogEndOffset returns the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.logEndOffset.Load() }

// HighWatermark returns the offset up to which records are readable by
// consumers. On a single node with no replication every appended record is
// "replicated", so it equals the log end offset (Kafka's leader advances it
// once the in-sync replicas have the data).
func (l *Log) HighWatermark() int64 { return l.logEndOffset.Load() }

// RecoveryPoint returns the offset below which everything is fsynced, the
// indexes of its segments included (Kafka's recovery point): after a crash
// the log is rescanned from there. It is at most DurableOffset.
func (l *Log) RecoveryPoint() int64 { return l.recoveryPoint.Load() }

// DurableOffset returns the offset below which every record is fsynced:
// what a crash cannot lose ([Log.Sync] moves it; the indexes of the active
// segment may lag, see RecoveryPoint).
func (l *Log) DurableOffset() int64 { return l.durable.Load() }

func (l *Log) segs() []*segment.Segment { return *l.segments.Load() }

func (l *Log) activeSegment() *segment.Segment {
	s := l.segs()
	return s[len(s)-1]
}

func (l *Log) setSegments(s []*segment.Segment) { l.segments.Store(&s) }

func (l *Log) segmentConfig() segment.Config {
	c := l.Config()
	return segment.Config{
		IndexIntervalBytes: c.IndexIntervalBytes,
		MaxIndexBytes:      c.SegmentIndexBytes,
		Preallocate:        c.Preallocate,
		SegmentBytes:       c.SegmentBytes,
		Now:                l.now,
		OnIndexRebuild:     l.onIndexRebuild,
		OnLogDamage:        l.onLogDamage,
	}
}

// rollJitter picks the random part of segment.jitter.ms for a new segment:
// abs(random) % min(segment.jitter.ms, segment.ms), 0 when jitter is 0.
func (l *Log) rollJitter() time.Duration {
	c := l.Config()
	if c.SegmentJitter <= 0 {
		return 0
	}
	bound := min(c.SegmentJitter, c.SegmentRollTime)
	if bound <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(bound)))
}

// loadOptions describe how to load a partition directory.
type loadOptions struct {
	topic          string
	partition      int32
	dir            string
	fsys           vfs.FS
	config         TopicConfig
	logger         *slog.Logger
	now            func() time.Time
	clean          bool  // the directory had Kafka's clean-shutdown marker
	recoveryPoint  int64 // from recovery-point-offset-checkpoint, 0 if absent
	logStartOffset int64 // from log-start-offset-checkpoint, 0 if absent
	topicID        checkpoint.TopicID
	create         bool   // a new partition: create the directory
	onAppend       func() // called after every append (the Dir's notifier)
	tier           func() *tierManager
	// producerIDExpiration mirrors producer.id.expiration.ms.
	producerIDExpiration time.Duration
	// cleanerOffset is the cleaner-offset-checkpoint entry, -1 if none.
	cleanerOffset int64
	overlapBytes  int
}

// recoveryStats report what loading a partition did.
type recoveryStats struct {
	segments       int
	recovered      int
	bytesScanned   int64
	bytesTruncated int64
	// corruptLogStart: the log-start-offset-checkpoint entry lay past the
	// log end and was ignored.
	corruptLogStart bool
}

// loadLog opens (or, with create, makes) a partition directory as Kafka's
// LogLoader does: leftovers of interrupted deletions and cleanings are
// removed, segments opened, and after an unclean shutdown every segment from
// the one holding the recovery point on is recovered; a truncated segment
// makes every later segment go.
func loadLog(o loadOptions) (*Log, recoveryStats, error) {
	var st recoveryStats
	l := &Log{topic: o.topic, partition: o.partition, dir: o.dir, fsys: o.fsys, logger: o.logger, now: o.now,
		appendReader: record.NewReader(record.ReaderOptions{SkipCRC: true}), internal: IsInternalTopic(o.topic), onAppend: o.onAppend, tier: o.tier,
		markerReader: record.NewReader(record.ReaderOptions{SkipCRC: true}), producerIDExpiration: o.producerIDExpiration, snapshotOffset: -1,
		unsyncedSnapshot: -1, overlapBytes: o.overlapBytes}
	cfg := o.config
	l.config.Store(&cfg)
	l.cleanerCheckpoint.Store(o.cleanerOffset)
	if o.create {
		if err := o.fsys.MkdirAll(o.dir); err != nil {
			return nil, st, err
		}
		if err := o.fsys.SyncDir(filepath.Dir(o.dir)); err != nil {
			return nil, st, err
		}
	}
	if err := l.loadTopicID(o.topicID); err != nil {
		return nil, st, err
	}
	// A cleaner swap a crash interrupted is completed or rolled back
	// first (Kafka's LogLoader).
	if changed, err := compaction.RecoverDir(o.fsys, o.dir); err != nil {
		return nil, st, err
	} else if changed {
		l.logger.Warn("finished a cleaner swap interrupted by a crash", "partition", l.tp())
	}
	entries, err := o.fsys.List(o.dir)
	if err != nil {
		return nil, st, err
	}
	var bases []int64
	indexes := map[int64]bool{}
	for _, e := range entries {
		if e.IsDir {
			l.logger.Warn("ignoring a directory inside a partition directory", "partition", l.tp(), "name", e.Name)
			continue
		}
		base, suffix, perr := segment.ParseFileName(e.Name)
		switch {
		case strings.HasSuffix(e.Name, segment.DeletedSuffix), strings.HasSuffix(e.Name, segment.CleanedSuffix), strings.HasSuffix(e.Name, ".tmp"):
			// Interrupted deletions and cleanings, and temp files of atomic
			// writes: Kafka removes them all at startup.
			if err := o.fsys.Remove(filepath.Join(o.dir, e.Name)); err != nil {
				return nil, st, err
			}
			l.dirDirty = true
		case perr != nil:
			if e.Name != checkpoint.PartitionMetadataFile && e.Name != checkpoint.LeaderEpochFile {
				l.logger.Warn("ignoring a stray file in a partition directory", "partition", l.tp(), "name", e.Name)
			}
		case suffix == segment.LogSuffix:
			bases = append(bases, base)
		case suffix == segment.IndexSuffix || suffix == segment.TimeIndexSuffix || suffix == segment.TxnIndexSuffix:
			indexes[base] = true
		case suffix == segment.SnapshotSuffix:
			// producer-state snapshots: loadProducerStateLocked reads them
		default:
			l.logger.Warn("ignoring a stray file in a partition directory", "partition", l.tp(), "name", e.Name)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	// Index files without a .log are orphans Kafka deletes.
	for base := range indexes {
		if _, found := slices.BinarySearch(bases, base); !found {
			for _, suf := range []string{segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix} {
				if err := o.fsys.Remove(filepath.Join(o.dir, segment.FileName(base, suf))); err != nil && !isNotExist(err) {
					return nil, st, err
				}
			}
			l.dirDirty = true
		}
	}
	recovered := map[*segment.Segment]bool{}
	segs, err := l.openSegments(bases, o, &st, recovered)
	if err != nil {
		return nil, st, err
	}
	if len(segs) == 0 {
		start := max(o.logStartOffset, 0)
		s, err := segment.Create(o.fsys, o.dir, start, l.segmentConfig(), l.rollJitter())
		if err != nil {
			return nil, st, err
		}
		segs = []*segment.Segment{s}
		l.dirDirty = true
	}
	l.setSegments(segs)
	next, err := segs[len(segs)-1].NextOffset()
	if err != nil {
		return nil, st, closeAll(segs, err)
	}
	l.logEndOffset.Store(next)
	start := o.logStartOffset
	if start > next {
		// The log start never passes the log end: the entry is damaged
		// (or the segments were removed by hand). Kafka would delete every
		// segment; the segments are what is known, so they decide.
		l.logger.Warn("ignoring a log-start-offset-checkpoint entry past the log end", "partition", l.tp(),
			"logStartOffset", start, "logEndOffset", next, "firstSegment", segs[0].BaseOffset())
		st.corruptLogStart = true
		start = 0
	}
	// An entry below the first segment is stale (retention removed
	// segments after it was written), as after any crash: the first
	// segment's base offset is the start. Not for a tiered topic, whose
	// segments below may be in remote storage: the Dir checks the entry
	// against the copies once it has replayed their metadata
	// (tierManager.settleStart).
	if o.config.RemoteStorageEnable {
		l.logStartOffset.Store(min(max(start, 0), next))
	} else {
		l.logStartOffset.Store(min(max(start, segs[0].BaseOffset()), next))
	}
	rp := next
	if !o.clean {
		rp = min(o.recoveryPoint, next)
		if st.recovered > 0 {
			rp = next // recovered segments were rescanned; what is there is what counts
		}
	}
	l.recoveryPoint.Store(rp)
	l.durable.Store(rp)
	l.lastFlush.Store(l.now().UnixMilli())
	if err := l.loadLeaderEpochs(); err != nil {
		return nil, st, closeAll(segs, err)
	}
	if err := l.repairTxnIndexesLocked(recovered); err != nil {
		return nil, st, closeAll(l.segs(), err)
	}
	if err := l.loadProducerStateLocked(); err != nil {
		return nil, st, closeAll(segs, fmt.Errorf("loading the producer state: %w", err))
	}
	return l, st, nil
}

// openSegments opens the segments, recovering those that need it; the
// recovered ones holding transactional markers or a .txnindex go into
// recovered, for repairTxnIndexesLocked.
func (l *Log) openSegments(bases []int64, o loadOptions, st *recoveryStats, recovered map[*segment.Segment]bool) ([]*segment.Segment, error) {
	cfg := l.segmentConfig()
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
		s, err := segment.Open(o.fsys, o.dir, base, cfg, segment.OpenOptions{Active: active, RollJitter: l.rollJitter()})
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
			l.logger.Warn("segment needs recovery", "partition", l.tp(), "segment", s.LogFile(), "reason", err)
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
				l.logger.Warn("truncated the invalid tail of a segment", "partition", l.tp(), "segment", s.LogFile(),
					"validBytes", res.ValidBytes, "truncatedBytes", res.TruncatedBytes, "cause", res.Cause)
				// Everything after the first invalid batch goes: later
				// segments are deleted (Kafka's LogLoader).
				for _, later := range bases[i+1:] {
					for _, suf := range []string{segment.LogSuffix, segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix} {
						if err := o.fsys.Remove(filepath.Join(o.dir, segment.FileName(later, suf))); err != nil && !isNotExist(err) {
							return nil, closeAll(append(segs, s), err)
						}
					}
					l.dirDirty = true
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

func (l *Log) loadTopicID(want checkpoint.TopicID) error {
	path := filepath.Join(l.dir, checkpoint.PartitionMetadataFile)
	id, err := checkpoint.ReadPartitionMetadata(l.fsys, path)
	switch {
	case err == nil:
		l.topicID = id
		return nil
	case !isNotExist(err):
		l.logger.Warn("rewriting an unreadable partition.metadata", "partition", l.tp(), "err", err)
	}
	l.topicID = want
	return checkpoint.WritePartitionMetadata(l.fsys, path, want)
}

// loadLeaderEpochs reads leader-epoch-checkpoint and drops entries past the
// log end. The epoch this process stamps on appends is the latest one seen,
// 0 for a new directory (a single node never changes leader).
func (l *Log) loadLeaderEpochs() error {
	path := filepath.Join(l.dir, checkpoint.LeaderEpochFile)
	c, err := checkpoint.OpenLeaderEpochCache(l.fsys, path)
	if err != nil {
		l.logger.Warn("rebuilding an unreadable leader-epoch-checkpoint", "partition", l.tp(), "err", err)
		if c, err = checkpoint.NewLeaderEpochCache(nil); err != nil {
			return err
		}
	}
	l.epochs = c
	if c.TruncateFromEnd(l.LogEndOffset()) {
		if err := c.Write(l.fsys, path); err != nil {
			return err
		}
	}
	if e, ok := c.LatestEpoch(); ok {
		l.leaderEpoch.Store(e)
	}
	return nil
}

// close flushes the log and closes its segments. It does not write the
// directory's checkpoints (the Dir does). A second Close returns nil.
func (l *Log) close() error {
	if l.closed.Swap(true) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.flushLocked(l.LogEndOffset())
	if err == nil && l.failed == nil && !l.deleted.Load() {
		// The snapshot at the log end offset spares the next Open a replay.
		err = l.snapshotLocked(true)
	}
	segs := l.segs()
	if len(segs) > 0 {
		err = errors.Join(err, closeAll(segs, nil))
	}
	l.wake()
	return err
}

// wake releases every reader waiting for new data, of this partition and
// of the Dir.
func (l *Log) wake() {
	l.notifyMu.Lock()
	if l.notifyCh != nil {
		close(l.notifyCh)
		l.notifyCh = nil
	}
	l.notifyMu.Unlock()
	if l.onAppend != nil {
		l.onAppend()
	}
}

// WaitForData returns when the log end offset is above offset, the log is
// closed or deleted ([ErrClosed], [ErrTopicDeleted]), or ctx ends. It does not
// poll: appends wake the waiters. It follows the log end offset, not the
// last stable offset: a read_committed reader waiting at an open
// transaction should wait for the offset after the last append, and check
// [Log.LastStableOffset] again when woken (every append, markers included,
// wakes it).
func (l *Log) WaitForData(ctx context.Context, offset int64) error {
	for {
		l.notifyMu.Lock()
		if l.notifyCh == nil {
			l.notifyCh = make(chan struct{})
		}
		ch := l.notifyCh
		l.notifyMu.Unlock()
		switch {
		case l.deleted.Load():
			return ErrTopicDeleted
		case l.closed.Load():
			return ErrClosed
		case l.LogEndOffset() > offset:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *Log) checkOpen() error {
	switch {
	case l.deleted.Load():
		return &PartitionError{Topic: l.topic, Partition: l.partition, Err: ErrTopicDeleted}
	case l.closed.Load():
		return ErrClosed
	}
	return nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
