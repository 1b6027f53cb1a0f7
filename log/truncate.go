package log

import (
	"errors"
	"math"

	"github.com/kafkalite/kafkalite/segment"
)

// TruncateTo removes every record at or above offset, as a replica does
// when it diverges from its leader: later segments are deleted, the one
// holding offset is cut at the batch that holds it (Kafka truncates at batch
// boundaries, so offset should be a batch's base offset), and the log end
// offset becomes that batch's base. Truncating to the log end offset or
// beyond does nothing; below the log start offset, the log is emptied and
// restarts at offset. Readers of the removed data get errors or an
// [*OffsetOutOfRangeError].
func (l *Log) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if offset >= l.LogEndOffset() {
		return nil
	}
	if offset < 0 {
		return &OffsetOutOfRangeError{Topic: l.topic, Partition: l.partition, Offset: offset,
			LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	}
	// A cleaning round in progress must not swap in segments cut here, and
	// the next one starts no later than the new end (Kafka's
	// maybeTruncateCheckpoint).
	l.segGen++
	if cp := l.cleanerCheckpoint.Load(); cp > offset {
		l.cleanerCheckpoint.Store(offset)
	}
	segs := l.segs()
	keep := 0
	for keep < len(segs) && segs[keep].BaseOffset() <= offset {
		keep++
	}
	var res RetentionResult
	if keep == 0 || offset < l.LogStartOffset() {
		// Nothing survives: start over at offset with an empty segment.
		s, err := segment.Create(l.fsys, l.dir, offset, l.segmentConfig(), l.rollJitter())
		if err != nil {
			return l.perr(err)
		}
		l.setSegments(append(append([]*segment.Segment(nil), segs...), s))
		err = l.deleteSegmentsLocked(segs, &res)
		l.logStartOffset.Store(offset)
		l.logEndOffset.Store(offset)
		l.recoveryPoint.Store(min(l.recoveryPoint.Load(), offset))
		l.durable.Store(min(l.durable.Load(), offset))
		l.epochs.TruncateFromEnd(offset)
		l.persistEpochsLocked()
		// The producer state starts over with the log.
		return errors.Join(err, l.deleteSnapshotsLocked(math.MaxInt64, -1), l.reloadProducerStateLocked())
	}
	// Remove the later segments from the end.
	tail := segs[keep:]
	l.setSegments(append([]*segment.Segment(nil), segs[:keep]...))
	var errs []error
	for _, s := range tail {
		errs = append(errs, s.RenameForDeletion())
		l.pending = append(l.pending, pendingDelete{seg: s, at: l.now().Add(l.Config().FileDeleteDelay)})
	}
	last := segs[keep-1]
	if _, err := last.TruncateTo(offset); err != nil {
		errs = append(errs, err)
	}
	next, err := last.NextOffset()
	errs = append(errs, err)
	l.logEndOffset.Store(next)
	l.recoveryPoint.Store(min(l.recoveryPoint.Load(), next))
	l.durable.Store(min(l.durable.Load(), next))
	l.epochs.TruncateFromEnd(next)
	l.persistEpochsLocked()
	l.dirDirty = true
	// The producer state goes back to the newest snapshot at or below the
	// new end, replayed up to it (Kafka's truncateAndReload).
	errs = append(errs, l.reloadProducerStateLocked())
	if err := errors.Join(errs...); err != nil {
		return l.failLocked("truncating failed", "", err)
	}
	return nil
}
