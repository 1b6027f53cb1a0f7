package log

import (
	"errors"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log/vfs"
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
	return l.producers.infos()
}

// ExpireProducers drops the producer ids of this partition whose latest
// batch is at least producer.id.expiration.ms old and that have no open
// transaction (Kafka's rule); the Dir runs it every
// producer.id.expiration.check.interval.ms. It returns how many went.
func (l *Log) ExpireProducers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.producers.expire(l.now(), l.producers.expiration)
}

// producerStateManager is a partition's producer state with its snapshots
// (Kafka's ProducerStateManager): the producerState it keeps up to date
// with every batch appended or replayed, the .txnindex entries of the
// transactions aborts end, the <offset>.snapshot files it writes at rolls
// and at close and reloads from at open and after a truncation, and the
// first unstable offset, published for readers.
//
// As Kafka's relies on UnifiedLog's lock, it has no lock of its own: every
// method runs under its Log's write lock (Log.mu), but firstUnstable,
// which readers load without one.
type producerStateManager struct {
	producerState

	tp     TopicPartition
	dir    string
	fsys   vfs.FS
	logger *slog.Logger
	now    func() time.Time
	// expiration mirrors producer.id.expiration.ms.
	expiration time.Duration

	snapshotOffset   int64          // offset of the newest snapshot this process wrote or loaded, -1 for none
	unsyncedSnapshot int64          // offset of a snapshot written at a roll and not yet synced, -1 for none
	markerReader     *record.Reader // decodes end-transaction markers

	// firstUnstable is the first offset of the earliest open transaction,
	// -1 for none; readers derive the last stable offset from it.
	firstUnstable atomic.Int64
}

func newProducerStateManager(tp TopicPartition, dir string, fsys vfs.FS, logger *slog.Logger, now func() time.Time, expiration time.Duration) *producerStateManager {
	m := &producerStateManager{producerState: *newProducerState(), tp: tp, dir: dir, fsys: fsys, logger: logger, now: now,
		expiration: expiration, snapshotOffset: -1, unsyncedSnapshot: -1,
		markerReader: record.NewReader(record.ReaderOptions{SkipCRC: true})}
	m.firstUnstable.Store(-1)
	return m
}

// lastStable returns the last stable offset for the high watermark hw:
// the first offset of the earliest open transaction, or hw if none is
// open (or it is at or past hw).
func (m *producerStateManager) lastStable(hw int64) int64 {
	if fu := m.firstUnstable.Load(); fu >= 0 && fu < hw {
		return fu
	}
	return hw
}

// infos describes the producers, ordered by producer id.
func (m *producerStateManager) infos() []ProducerInfo {
	entries := m.entries()
	out := make([]ProducerInfo, len(entries))
	for i, e := range entries {
		out[i] = ProducerInfo{ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, LastSequence: e.LastSequence,
			LastTimestamp: e.Timestamp, CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnStartOffset: e.CurrentTxnFirstOffset}
	}
	return out
}

// update records an appended batch: data batches of idempotent producers,
// and end-transaction markers, whose aborted transactions go to the
// .txnindex of seg (the segment that holds the marker). During recovery
// (replay) an entry already in the index is not added again. created says
// that the entry created seg's .txnindex, whose directory entry the next
// flush must sync.
func (m *producerStateManager) update(seg *segment.Segment, batch []byte, h *record.BatchHeader, replay bool) (created bool, err error) {
	if h.ProducerID < 0 {
		return false, nil
	}
	t, aborted, err := applyBatch(&m.producerState, m.markerReader, batch, h)
	if err != nil {
		return false, err
	}
	fu := m.firstUnstableOffset()
	if !aborted {
		m.firstUnstable.Store(fu)
		return false, nil
	}
	// The last stable offset moves past an aborted transaction only once
	// its .txnindex entry is there: a reader that sees the new LSO must
	// also find the entry, or it would deliver the aborted records.
	defer m.firstUnstable.Store(fu)
	if replay {
		have, _, err := seg.AppendAbortedTxns(nil, t.LastOffset, t.LastOffset+1)
		if err != nil {
			return false, err
		}
		for _, a := range have {
			if a.LastOffset >= t.LastOffset {
				return false, nil
			}
		}
	}
	return true, seg.AppendAbortedTxn(t)
}

// reload builds the state from the directory and segs, as Kafka's
// loadProducerState does at load and its truncateAndReload after a
// truncation: from the newest snapshot at or below the log end offset leo
// (newer ones, left by a crash after a truncation, are deleted; corrupt
// ones are deleted and the state is rebuilt from the log), then by
// replaying the batches after it, from start at the earliest. Without any
// snapshot the whole log is replayed. created says that the replay
// created a .txnindex.
func (m *producerStateManager) reload(segs []*segment.Segment, start, leo int64) (created bool, err error) {
	m.producerState = *newProducerState()
	offsets, err := snapshot.List(m.fsys, m.dir)
	if err != nil {
		return false, err
	}
	from := start
	m.snapshotOffset = -1
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		path := filepath.Join(m.dir, snapshot.FileName(off))
		if off > leo {
			if err := m.fsys.Remove(path); err != nil && !isNotExist(err) {
				return false, err
			}
			continue
		}
		entries, err := snapshot.Read(m.fsys, path)
		if errors.Is(err, snapshot.ErrCorrupt) {
			m.logger.Warn("deleting a corrupt producer snapshot", "partition", m.tp, "file", path, "err", err)
			if err := m.fsys.Remove(path); err != nil && !isNotExist(err) {
				return false, err
			}
			continue
		}
		if err != nil {
			return false, err
		}
		m.load(entries)
		m.snapshotOffset = off
		from = max(from, off)
		break
	}
	if from < leo {
		// Replayed as recovery does: no sequence checks, missing .txnindex
		// entries restored. What reads refuse (damage below the recovery
		// point) is stepped over: the state misses what it cannot read.
		err = eachBatch(segs, from, len(segs)-1, func(i int, batch []byte, h *record.BatchHeader) error {
			if h.LastOffset() < from {
				return nil
			}
			c, err := m.update(segs[i], batch, h, true)
			created = created || c
			return err
		})
		if err != nil {
			return created, err
		}
	}
	m.expire(m.now(), m.expiration)
	m.firstUnstable.Store(m.firstUnstableOffset())
	return created, nil
}

// snapshot writes the state to <leo>.snapshot, unless that snapshot is
// already written. With durable false (a roll, as Kafka's roll does) the
// file is not synced now: the next flush of the log syncs it
// (takeUnsyncedLocked), and until then a machine crash costs at most a
// longer replay at the next load (a damaged snapshot is deleted and the
// state rebuilt). With durable true (Close) it is synced at once. written
// says that a file was created, whose directory entry the next flush must
// sync.
func (m *producerStateManager) snapshot(leo int64, durable bool) (written bool, err error) {
	if m.snapshotOffset == leo && (!durable || m.unsyncedSnapshot != leo) {
		return false, nil
	}
	entries := m.entries()
	if !durable {
		if err := snapshot.WriteUnsynced(m.fsys, m.dir, leo, entries); err != nil {
			return false, err
		}
		m.snapshotOffset, m.unsyncedSnapshot = leo, leo
		return true, nil
	}
	if err := snapshot.Write(m.fsys, m.dir, leo, entries); err != nil {
		return false, err
	}
	m.snapshotOffset, m.unsyncedSnapshot = leo, -1
	return false, nil
}

// takeUnsyncedLocked returns the offset of the snapshot the last roll
// wrote without syncing it, -1 for none, for the flush that syncs it.
func (m *producerStateManager) takeUnsyncedLocked() int64 {
	off := m.unsyncedSnapshot
	m.unsyncedSnapshot = -1
	return off
}

// deleteSnapshots removes the snapshots below from and above to.
func (m *producerStateManager) deleteSnapshots(from, to int64) error {
	offsets, err := snapshot.List(m.fsys, m.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, off := range offsets {
		if off < from || off > to {
			if err := m.fsys.Remove(filepath.Join(m.dir, snapshot.FileName(off))); err != nil && !isNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	if m.snapshotOffset > to || m.snapshotOffset < from {
		m.snapshotOffset = -1
	}
	return errors.Join(errs...)
}

// removeReplacedSnapshots removes the snapshots named by the old segments
// a cleaned segment at base replaced, but base's own, as Kafka's
// UnifiedLog.replaceSegments does (deleteProducerSnapshots of the old
// segments no new segment has the base offset of), so that the directory
// holds Kafka's files. Offsets do not change in cleaning, so the snapshots
// were still right: a failure to remove one is only logged. removed says
// whether a file went, whose directory entry the next flush must sync.
func (m *producerStateManager) removeReplacedSnapshots(old []*segment.Segment, base int64) (removed bool) {
	for _, s := range old {
		off := s.BaseOffset()
		if off == base {
			continue
		}
		if err := m.fsys.Remove(filepath.Join(m.dir, snapshot.FileName(off))); err != nil {
			if !isNotExist(err) {
				m.logger.Warn("removing the producer snapshot of a cleaned segment failed", "partition", m.tp, "offset", off, "err", err)
			}
			continue
		}
		removed = true
	}
	return removed
}
