package log

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// ProducerInfo describes one producer id's state in a partition, as Kafka's
// DescribeProducers reports it.
type ProducerInfo struct {
	ProducerID    int64
	ProducerEpoch int16
	// LastSequence is the last sequence number the log accepted, -1 if
	// none is remembered.
	LastSequence int32
	// LastTimestamp is the max timestamp of the producer's latest batch or
	// marker.
	LastTimestamp    int64
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is the first offset of the producer's open
	// transaction here, -1 if none.
	CurrentTxnStartOffset int64
}

// Producers returns the partition's producer state, ordered by producer id.
func (l *Log) Producers() []ProducerInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	entries := l.pstate.entries()
	out := make([]ProducerInfo, len(entries))
	for i, e := range entries {
		out[i] = ProducerInfo{ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, LastSequence: e.LastSequence,
			LastTimestamp: e.Timestamp, CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnStartOffset: e.CurrentTxnFirstOffset}
	}
	return out
}

// updateProducerStateLocked records an appended batch in the producer
// state: data batches of idempotent producers, and end-transaction markers,
// whose aborted transactions go to the .txnindex of seg (the segment that
// holds the marker). During recovery (replay) an entry already in the
// index is not added again.
func (l *Log) updateProducerStateLocked(seg *segment.Segment, batch []byte, h *record.BatchHeader, replay bool) error {
	if h.ProducerID < 0 {
		return nil
	}
	t, aborted, err := applyBatch(l.pstate, l.markerReader, batch, h)
	if err != nil {
		return err
	}
	fu := l.pstate.firstUnstableOffset()
	if !aborted {
		l.firstUnstable.Store(fu)
		return nil
	}
	// The last stable offset moves past an aborted transaction only once
	// its .txnindex entry is there: a reader that sees the new LSO must
	// also find the entry, or it would deliver the aborted records.
	defer l.firstUnstable.Store(fu)
	if replay {
		have, _, err := seg.AppendAbortedTxns(nil, t.LastOffset, t.LastOffset+1)
		if err != nil {
			return err
		}
		for _, a := range have {
			if a.LastOffset >= t.LastOffset {
				return nil
			}
		}
	}
	// The first entry creates the segment's .txnindex, whose directory
	// entry the next flush must sync.
	l.dirDirty = true
	return seg.AppendAbortedTxn(t)
}

// loadProducerState builds the producer state at load: from the newest
// snapshot at or below the log end offset (newer ones, left by a crash
// after a truncation, are deleted; corrupt ones are deleted and the state
// is rebuilt from the log), then by replaying the batches after it. Without
// any snapshot the whole log is replayed.
func (l *Log) loadProducerStateLocked() error {
	l.pstate = newProducerState()
	leo := l.LogEndOffset()
	offsets, err := snapshot.List(l.fsys, l.dir)
	if err != nil {
		return err
	}
	from := l.LogStartOffset()
	l.snapshotOffset = -1
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		path := filepath.Join(l.dir, snapshot.FileName(off))
		if off > leo {
			if err := l.fsys.Remove(path); err != nil && !isNotExist(err) {
				return err
			}
			continue
		}
		entries, err := snapshot.Read(l.fsys, path)
		if errors.Is(err, snapshot.ErrCorrupt) {
			l.logger.Warn("deleting a corrupt producer snapshot", "partition", l.tp(), "file", path, "err", err)
			if err := l.fsys.Remove(path); err != nil && !isNotExist(err) {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		l.pstate.load(entries)
		l.snapshotOffset = off
		from = max(from, off)
		break
	}
	if err := l.replayLocked(from, leo); err != nil {
		return err
	}
	l.pstate.expire(l.now(), l.producerIDExpiration)
	l.firstUnstable.Store(l.pstate.firstUnstableOffset())
	return nil
}

// reloadProducerStateLocked rebuilds the producer state after a truncation.
func (l *Log) reloadProducerStateLocked() error {
	if err := l.loadProducerStateLocked(); err != nil {
		return fmt.Errorf("reloading the producer state: %w", err)
	}
	return nil
}

// replayLocked feeds the batches from offset from on to the producer
// state, as recovery does: no sequence checks, missing .txnindex entries
// restored. What reads refuse (damage below the recovery point) is
// stepped over: the producer state misses what it cannot read.
func (l *Log) replayLocked(from, to int64) error {
	if from >= to {
		return nil
	}
	segs := l.segs()
	return eachBatch(segs, from, len(segs)-1, func(i int, batch []byte, h *record.BatchHeader) error {
		if h.LastOffset() < from {
			return nil
		}
		return l.updateProducerStateLocked(segs[i], batch, h, true)
	})
}

// snapshotLocked writes the producer state to <offset>.snapshot, offset
// being the log end offset, unless that snapshot is already written. With
// durable false (a roll, as Kafka's roll does) the file is not synced now:
// the next flush of the log syncs it, and until then a machine crash costs
// at most a longer replay at the next load (a damaged snapshot is deleted
// and the state rebuilt). With durable true (Close) it is synced at once.
func (l *Log) snapshotLocked(durable bool) error {
	leo := l.LogEndOffset()
	if l.snapshotOffset == leo && (!durable || l.unsyncedSnapshot != leo) {
		return nil
	}
	entries := l.pstate.entries()
	if !durable {
		if err := snapshot.WriteUnsynced(l.fsys, l.dir, leo, entries); err != nil {
			return err
		}
		l.snapshotOffset, l.unsyncedSnapshot, l.dirDirty = leo, leo, true
		return nil
	}
	if err := snapshot.Write(l.fsys, l.dir, leo, entries); err != nil {
		return err
	}
	l.snapshotOffset, l.unsyncedSnapshot = leo, -1
	return nil
}

// deleteSnapshotsLocked removes the snapshots below from and above to.
func (l *Log) deleteSnapshotsLocked(from, to int64) error {
	offsets, err := snapshot.List(l.fsys, l.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, off := range offsets {
		if off < from || off > to {
			if err := l.fsys.Remove(filepath.Join(l.dir, snapshot.FileName(off))); err != nil && !isNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	if l.snapshotOffset > to || l.snapshotOffset < from {
		l.snapshotOffset = -1
	}
	return errors.Join(errs...)
}

// ExpireProducers drops the producer ids of this partition whose latest
// batch is at least producer.id.expiration.ms old and that have no open
// transaction (Kafka's rule); the Dir runs it every
// producer.id.expiration.check.interval.ms. It returns how many went.
func (l *Log) ExpireProducers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pstate.expire(l.now(), l.producerIDExpiration)
}
