package log

import (
	"errors"
	"fmt"
	"math"
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
	if err := l.local.writableLocked(); err != nil {
		return err
	}
	if offset >= l.LogEndOffset() {
		return nil
	}
	if offset < 0 {
		return &OffsetOutOfRangeError{Topic: l.tp.Topic, Partition: l.tp.Partition, Offset: offset,
			LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	}
	// A cleaning round in progress must not swap in segments cut here, and
	// the next one starts no later than the new end (Kafka's
	// maybeTruncateCheckpoint).
	l.cleaning.gen++
	if cp := l.cleaning.checkpoint.Load(); cp > offset {
		l.cleaning.checkpoint.Store(offset)
	}
	// The producer state goes back to the newest snapshot at or below the
	// new end, replayed up to it (Kafka's truncateAndReload).
	reload := func() error {
		created, err := l.producers.reload(l.local.segs(), l.LogStartOffset(), l.LogEndOffset())
		l.local.dirDirty = l.local.dirDirty || created
		if err != nil {
			return fmt.Errorf("reloading the producer state: %w", err)
		}
		return nil
	}
	if segs := l.local.segs(); segs[0].BaseOffset() > offset || offset < l.LogStartOffset() {
		// Nothing survives: start over at offset with an empty segment.
		if err := l.local.startAtLocked(offset); err != nil {
			return err
		}
		var res RetentionResult
		err := l.deleteOldestLocked(len(segs), -1, &res)
		l.logStartOffset.Store(offset)
		l.local.endAtLocked(offset)
		l.epochs.truncateFromEnd(offset)
		// The producer state starts over with the log.
		return errors.Join(err, l.producers.deleteSnapshots(math.MaxInt64, -1), reload())
	}
	next, err := l.local.truncateToLocked(offset)
	l.epochs.truncateFromEnd(next)
	if err := errors.Join(err, reload()); err != nil {
		return l.local.failLocked("truncating failed", "", err)
	}
	return nil
}
