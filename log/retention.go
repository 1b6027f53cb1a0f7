package log

import (
	"fmt"
	"math"
	"time"

	"github.com/kafkalite/kafkalite/segment"
)

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
	if t := l.remote.tiering(l.Config()); t != nil && l.Config().CleanupPolicy.Delete {
		var err error
		if expiredStart, err = t.expireCopies(l, l.Config(), l.now()); err != nil {
			return RetentionResult{LogStartOffset: l.LogStartOffset()}, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	res := RetentionResult{LogStartOffset: l.LogStartOffset()}
	if err := l.local.writableLocked(); err != nil {
		return res, err
	}
	c := l.Config()
	now := l.now()
	t := l.remote.tiering(c)
	if t != nil && expiredStart > l.LogStartOffset() {
		// The oldest data is in copies: total retention moves the log
		// start past the expired ones (the next tiering pass deletes them
		// from the store); local segments below it go next.
		if err := l.deleteOldestLocked(0, min(expiredStart, l.HighWatermark()), &res); err != nil {
			return res, err
		}
		l.logger.Info("tiered storage: retention passed remote segments", "partition", l.tp, "logStartOffset", expiredStart)
	}
	logDeleted := func() {
		if res.SegmentsDeleted > 0 {
			l.logger.Info("deleted segments by retention", "partition", l.tp, "segments", res.SegmentsDeleted,
				"bytes", res.BytesDeleted, "logStartOffset", res.LogStartOffset)
		}
	}
	// deleteWhile deletes the segments from the oldest while pred holds
	// (all of them after a roll).
	deleteWhile := func(pred func(s, next *segment.Segment) (bool, error)) error {
		n, err := l.local.countWhile(pred)
		if err != nil || n == 0 {
			return err
		}
		return l.deleteOldestLocked(n, -1, &res)
	}
	start := l.LogStartOffset()
	if err := deleteWhile(func(s, next *segment.Segment) (bool, error) {
		return next != nil && next.BaseOffset() <= start, nil
	}); err != nil {
		return res, err
	}
	if t != nil {
		// Local retention (local.retention.bytes, local.retention.ms),
		// over the segments copied to remote storage: the log start offset
		// stays, the deleted offsets are read from the copies. An active
		// segment beyond it is rolled, so that the next tiering pass
		// copies it.
		n, roll, err := l.local.localRetention(c, now, t.copiedEnd(l.remote.key), l.LogStartOffset())
		if err == nil && roll {
			if err = l.rollLocked(l.LogEndOffset()); err == nil {
				l.logger.Info("tiered storage: rolled the active segment, beyond local retention, to copy it", "partition", l.tp,
					"offset", l.LogEndOffset())
			}
		}
		if err == nil && n > 0 {
			if err = l.deleteOldestLocked(n, l.LogStartOffset(), &res); err == nil {
				l.logger.Info("tiered storage: deleted local segments that are in remote storage", "partition", l.tp,
					"segments", n, "localLogStartOffset", l.local.startOffset(), "logStartOffset", l.LogStartOffset())
			}
		}
		logDeleted()
		return res, err
	}
	if !c.CleanupPolicy.Delete {
		logDeleted()
		return res, nil
	}
	if c.RetentionBytes >= 0 {
		var total int64
		for _, s := range l.local.segs() {
			total += s.Size()
		}
		excess := total - c.RetentionBytes
		if excess > 0 {
			if err := deleteWhile(func(s, _ *segment.Segment) (bool, error) {
				if excess-s.Size() < 0 {
					return false, nil
				}
				excess -= s.Size()
				return true, nil
			}); err != nil {
				return res, err
			}
		}
	}
	if c.Retention >= 0 {
		if err := deleteWhile(func(s, _ *segment.Segment) (bool, error) {
			ts, err := l.local.largestTimestamp(s)
			if err != nil {
				return false, err
			}
			return now.Sub(time.UnixMilli(ts)) > c.Retention, nil
		}); err != nil {
			return res, err
		}
	}
	logDeleted()
	return res, nil
}

// deleteOldestLocked deletes the n oldest segments, rolling first when
// they are all of them (Kafka's UnifiedLog.deleteSegments), and moves the
// log start offset up to start, or, when start is negative, up to the
// first segment left (Kafka's maybeIncrementLogStartOffset); then the
// leader epochs and the producers before the log start offset go, and the
// producer snapshots below the first segment. A start above the current
// one is stored before the segments go, so that a reader of a deleted
// segment finds its offset out of range. With n 0 and no start to move,
// it does nothing.
func (l *Log) deleteOldestLocked(n int, start int64, res *RetentionResult) error {
	if n == 0 && start <= l.LogStartOffset() {
		return nil
	}
	if start > l.LogStartOffset() {
		l.logStartOffset.Store(start)
	}
	var err error
	if n > 0 {
		if n == len(l.local.segs()) {
			if err := l.rollLocked(l.LogEndOffset()); err != nil {
				return err
			}
		}
		var first int64
		first, err = l.local.removeOldestLocked(n, res)
		if start < 0 && first > l.LogStartOffset() {
			l.logStartOffset.Store(first)
		}
		// Snapshots below the first segment left describe nothing readable.
		defer func() {
			if err := l.producers.deleteSnapshots(first, math.MaxInt64); err != nil {
				l.logger.Warn("deleting old producer snapshots failed", "partition", l.tp, "err", err)
			}
		}()
	}
	start = l.LogStartOffset()
	l.epochs.truncateFromStart(start)
	l.producers.truncateHead(start)
	res.LogStartOffset = start
	return err
}

// RemoveDeleted removes the files of segments deleted at least
// file.delete.delay.ms ago (all of them with force). Files still read by a
// live slice go when it is released.
func (l *Log) RemoveDeleted(force bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.local.removeDeletedLocked(force)
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
		return l.LogStartOffset(), l.tp.wrap(fmt.Errorf("%w: records of %s cannot be deleted", ErrInternalTopic, l.tp.Topic))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return 0, err
	}
	if offset > l.HighWatermark() || offset < 0 {
		return l.LogStartOffset(), &OffsetOutOfRangeError{Topic: l.tp.Topic, Partition: l.tp.Partition, Offset: offset,
			LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	}
	if offset <= l.LogStartOffset() {
		return l.LogStartOffset(), nil
	}
	n, err := l.local.countWhile(func(s, next *segment.Segment) (bool, error) {
		return next != nil && next.BaseOffset() <= offset, nil
	})
	if err == nil {
		var res RetentionResult
		err = l.deleteOldestLocked(n, offset, &res)
	}
	return l.LogStartOffset(), err
}
