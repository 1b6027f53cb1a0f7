package log

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/segment"
)

// pendingDelete is a segment renamed to .deleted, removed after
// file.delete.delay.ms.
type pendingDelete struct {
	seg *segment.Segment
	at  time.Time
}

// RetentionResult says what one retention pass did.
type RetentionResult struct {
	SegmentsDeleted int
	BytesDeleted    int64
	LogStartOffset  int64
}

// EnforceRetention deletes the oldest segments as Kafka's retention task
// does (UnifiedLog.deleteOldSegments), in this order: segments entirely
// below the log start offset; then, with cleanup.policy delete, segments
// beyond retention.bytes and segments whose largest timestamp (or, without
// timestamps, the .log's modification time) is older than retention.ms. The
// walk stops at the first segment that stays. When every segment would go,
// the active one is rolled first, so the log keeps an empty active segment
// at its end offset and a quiet topic's data still expires. The log start
// offset moves to the first remaining segment. Deleted segments are renamed
// to .deleted and removed after file.delete.delay.ms (see
// [Log.RemoveDeleted]).
//
// A tiered topic's (remote.storage.enable) retention is Kafka's for
// remote-storage topics: total retention (retention.ms, retention.bytes,
// with cleanup.policy delete) applies to its copies, over the copies and
// the local segments not copied yet, and moves the log start offset past
// the expired ones; local segments go only by local retention
// (local.retention.ms, local.retention.bytes, whatever the cleanup.policy)
// and only once copied, or once the log start offset has passed them, so
// that nothing is deleted before it is in remote storage. An active
// segment beyond local retention is rolled, so that the next tiering pass
// copies it and a later retention deletes it.
//
// The Dir runs this every log.retention.check.interval.ms; it is exported
// for tests and for brokers that schedule it themselves.
func (l *Log) EnforceRetention() (RetentionResult, error) {
	// Tiered: the copies total retention expires are recorded as being
	// deleted (durably, before the log start offset passes them, so that a
	// crash cannot bring them back), outside the log's lock: it is I/O on
	// another partition.
	var expiredStart int64 = -1
	if t := l.tiering(); t != nil && l.Config().CleanupPolicy.Delete {
		var err error
		if expiredStart, err = t.expireCopies(l, l.Config(), l.now()); err != nil {
			return RetentionResult{LogStartOffset: l.LogStartOffset()}, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	res := RetentionResult{LogStartOffset: l.LogStartOffset()}
	if err := l.writableLocked(); err != nil {
		return res, err
	}
	c := l.Config()
	now := l.now()
	t := l.tiering()
	if t != nil && expiredStart > l.LogStartOffset() {
		// The oldest data is in copies: total retention moves the log
		// start past the expired ones (the next tiering pass deletes them
		// from the store); local segments below it go next.
		l.moveStartLocked(expiredStart, &res)
		l.logger.Info("tiered storage: retention passed remote segments", "partition", l.tp(), "logStartOffset", expiredStart)
	}
	start := l.LogStartOffset()
	n, err := l.deleteWhileLocked(func(s, next *segment.Segment) (bool, error) {
		return next != nil && next.BaseOffset() <= start, nil
	}, &res)
	if err != nil {
		return res, err
	}
	if t != nil {
		m, err := l.deleteLocalCopiesLocked(t, c, now, &res)
		l.logDeletedLocked(n+m, &res)
		return res, err
	}
	if !c.CleanupPolicy.Delete {
		l.logDeletedLocked(n, &res)
		return res, nil
	}
	if c.RetentionBytes >= 0 {
		var total int64
		for _, s := range l.segs() {
			total += s.Size()
		}
		excess := total - c.RetentionBytes
		if excess > 0 {
			m, err := l.deleteWhileLocked(func(s, _ *segment.Segment) (bool, error) {
				if excess-s.Size() < 0 {
					return false, nil
				}
				excess -= s.Size()
				return true, nil
			}, &res)
			n += m
			if err != nil {
				return res, err
			}
		}
	}
	if c.Retention >= 0 {
		m, err := l.deleteWhileLocked(func(s, _ *segment.Segment) (bool, error) {
			ts, err := l.largestTimestamp(s)
			if err != nil {
				return false, err
			}
			return now.Sub(time.UnixMilli(ts)) > c.Retention, nil
		}, &res)
		n += m
		if err != nil {
			return res, err
		}
	}
	l.logDeletedLocked(n, &res)
	return res, nil
}

// logDeletedLocked logs what retention deleted, if anything.
func (l *Log) logDeletedLocked(n int, res *RetentionResult) {
	if n > 0 {
		l.logger.Info("deleted segments by retention", "partition", l.tp(), "segments", res.SegmentsDeleted,
			"bytes", res.BytesDeleted, "logStartOffset", res.LogStartOffset)
	}
}

// largestTimestamp is Kafka's LogSegment.largestTimestamp: the max record
// timestamp, or the .log's modification time when no batch has one.
func (l *Log) largestTimestamp(s *segment.Segment) (int64, error) {
	ts, err := s.MaxTimestamp()
	if err != nil || ts >= 0 {
		return ts, err
	}
	fi, err := l.fsys.Stat(s.LogFile())
	if err != nil {
		return 0, err
	}
	return fi.ModTime.UnixMilli(), nil
}

// deleteWhileLocked deletes segments from the oldest while pred holds,
// never an empty last segment; if all would go, it rolls first.
func (l *Log) deleteWhileLocked(pred func(s, next *segment.Segment) (bool, error), res *RetentionResult) (int, error) {
	segs := l.segs()
	var deletable int
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
			return 0, l.perr(err)
		}
		if !ok {
			break
		}
		deletable++
	}
	if deletable == 0 {
		return 0, nil
	}
	if deletable == len(segs) {
		if err := l.rollLocked(l.LogEndOffset()); err != nil {
			return 0, err
		}
		segs = l.segs()
	}
	return deletable, l.deleteSegmentsLocked(segs[:deletable], res)
}

// moveStartLocked moves the log start offset up to start, past copies in
// remote storage (at most to the high watermark); the local segments below
// it are the caller's to delete.
func (l *Log) moveStartLocked(start int64, res *RetentionResult) {
	start = min(start, l.HighWatermark())
	if start <= l.LogStartOffset() {
		return
	}
	l.logStartOffset.Store(start)
	l.epochs.TruncateFromStart(start)
	l.persistEpochsLocked()
	l.pstate.truncateHead(start)
	res.LogStartOffset = start
}

// deleteLocalCopiesLocked applies a tiered partition's local retention
// (local.retention.bytes, then local.retention.ms), as Kafka's
// deletableSegments does for a remote-storage topic: from the oldest local
// segment on, while each is beyond one of them, it goes if it is copied
// (its last offset at or below the highest copied one) or the log start
// offset has passed it; the walk stops at the first that stays. The log
// start offset stays: the deleted offsets are read from the copies. If the
// walk reaches a non-empty active segment beyond local retention, the
// active segment is rolled, so that the next tiering pass copies it.
func (l *Log) deleteLocalCopiesLocked(t *tierManager, c TopicConfig, now time.Time, res *RetentionResult) (int, error) {
	ms, limit := c.localRetention()
	if ms < 0 && limit < 0 {
		return 0, nil
	}
	copied := t.copiedEnd(tierKey{topicID: remote.UUID(l.topicID), partition: l.partition})
	start := l.LogStartOffset()
	segs := l.segs()
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
	var gone []*segment.Segment
	roll := false
	for i, s := range segs {
		old := false
		if ms >= 0 {
			ts, err := l.largestTimestamp(s)
			if err != nil {
				return 0, l.perr(err)
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
			roll = s.Size() > 0
			break
		}
		next := segs[i+1].BaseOffset()
		if next-1 > copied && start < next {
			break // not copied yet
		}
		gone = append(gone, s)
	}
	if roll {
		if err := l.rollLocked(l.LogEndOffset()); err != nil {
			return 0, err
		}
		l.logger.Info("tiered storage: rolled the active segment, beyond local retention, to copy it", "partition", l.tp(),
			"offset", l.LogEndOffset())
	}
	if len(gone) == 0 {
		return 0, nil
	}
	if err := l.removeSegmentsLocked(gone, res, true); err != nil {
		return len(gone), err
	}
	l.logger.Info("tiered storage: deleted local segments that are in remote storage", "partition", l.tp(),
		"segments", len(gone), "localLogStartOffset", l.segs()[0].BaseOffset(), "logStartOffset", l.LogStartOffset())
	return len(gone), nil
}

// deleteSegmentsLocked removes the first segments from the list, renames
// their files to .deleted and schedules their removal.
func (l *Log) deleteSegmentsLocked(gone []*segment.Segment, res *RetentionResult) error {
	return l.removeSegmentsLocked(gone, res, false)
}

// removeSegmentsLocked is deleteSegmentsLocked; with keepStart the log
// start offset stays where it is (below the segments left, which a tiered
// partition's copies hold).
func (l *Log) removeSegmentsLocked(gone []*segment.Segment, res *RetentionResult, keepStart bool) error {
	segs := l.segs()
	rest := append([]*segment.Segment(nil), segs[len(gone):]...)
	l.setSegments(rest)
	if start := rest[0].BaseOffset(); start > l.LogStartOffset() && !keepStart {
		l.logStartOffset.Store(start)
	}
	l.epochs.TruncateFromStart(l.LogStartOffset())
	l.persistEpochsLocked()
	l.pstate.truncateHead(l.LogStartOffset())
	res.LogStartOffset = l.LogStartOffset()
	// Snapshots below the first segment left describe nothing readable.
	if err := l.deleteSnapshotsLocked(rest[0].BaseOffset(), math.MaxInt64); err != nil {
		l.logger.Warn("deleting old producer snapshots failed", "partition", l.tp(), "err", err)
	}
	var errs []error
	at := l.now().Add(l.Config().FileDeleteDelay)
	for _, s := range gone {
		res.SegmentsDeleted++
		res.BytesDeleted += s.Size()
		if err := s.RenameForDeletion(); err != nil {
			errs = append(errs, err)
		}
		l.pending = append(l.pending, pendingDelete{seg: s, at: at})
	}
	l.dirDirty = true
	if err := errors.Join(errs...); err != nil {
		return l.perr(fmt.Errorf("%w: %w", ErrStorage, err))
	}
	return nil
}

// RemoveDeleted removes the files of segments deleted at least
// file.delete.delay.ms ago (all of them with force). Files still read by a
// live slice go when it is released.
func (l *Log) RemoveDeleted(force bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var keep []pendingDelete
	var errs []error
	for _, p := range l.pending {
		if !force && now.Before(p.at) {
			keep = append(keep, p)
			continue
		}
		errs = append(errs, p.seg.Remove())
	}
	l.pending = keep
	return errors.Join(errs...)
}

// DeleteRecordsBefore moves the log start offset up to offset (Kafka's
// DeleteRecords): records below it are no longer readable, and segments
// entirely below it are deleted now. offset must not pass the high
// watermark. The partitions of internal topics refuse it with
// [ErrInternalTopic], as Kafka's ReplicaManager refuses it: the
// coordinators' state lives there, and deleting it erases every group's
// commits or an open transaction's state at the next load.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	if l.internal {
		return l.LogStartOffset(), l.perr(fmt.Errorf("%w: records of %s cannot be deleted", ErrInternalTopic, l.topic))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return 0, err
	}
	if offset > l.HighWatermark() || offset < 0 {
		return l.LogStartOffset(), &OffsetOutOfRangeError{Topic: l.topic, Partition: l.partition, Offset: offset,
			LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	}
	if offset <= l.LogStartOffset() {
		return l.LogStartOffset(), nil
	}
	l.logStartOffset.Store(offset)
	var res RetentionResult
	_, err := l.deleteWhileLocked(func(s, next *segment.Segment) (bool, error) {
		return next != nil && next.BaseOffset() <= offset, nil
	}, &res)
	l.epochs.TruncateFromStart(offset)
	l.persistEpochsLocked()
	l.pstate.truncateHead(offset)
	return l.LogStartOffset(), err
}

// persistEpochsLocked rewrites leader-epoch-checkpoint if the cache changed.
func (l *Log) persistEpochsLocked() {
	if !l.epochs.Dirty() {
		return
	}
	if err := l.epochs.Write(l.fsys, filepath.Join(l.dir, checkpoint.LeaderEpochFile)); err != nil {
		l.logger.Warn("updating leader-epoch-checkpoint failed", "partition", l.tp(), "err", err)
	}
}
