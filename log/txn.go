package log

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// This file holds the partition's side of idempotence and transactions
// (Kafka's ProducerStateManager, ProducerAppendInfo, EndTransactionMarker
// and TransactionIndex): producer state checks on append, the
// end-transaction markers the transaction coordinator writes, the .txnindex
// entries of aborted transactions, the last stable offset, producer-state
// snapshots and their reload.

// LastStableOffset returns the offset below which every transaction is
// decided: the first offset of the earliest open transaction, or the high
// watermark if none is open. read_committed readers stop there.
func (l *Log) LastStableOffset() int64 {
	hw := l.HighWatermark()
	if fu := l.firstUnstable.Load(); fu >= 0 && fu < hw {
		return fu
	}
	return hw
}

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

// VerifyTransaction registers that the transaction coordinator added this
// partition to producerID's transaction at producerEpoch: the producer's
// next transactional batch may open a transaction here. A transactional
// batch without it is refused with [ErrInvalidTxnState] (Kafka's
// transaction verification, KIP-890), so a fenced producer's late batch can
// never open a transaction that nobody will end.
func (l *Log) VerifyTransaction(_ access.Internal, producerID int64, producerEpoch int16) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if err := l.pstate.verify(producerID, producerEpoch); err != nil {
		return l.perr(err)
	}
	return nil
}

// AppendTxnMarker appends a COMMIT or ABORT marker for producerID's
// transaction, as the transaction coordinator does at the end of a
// transaction (Kafka's EndTransactionMarker; the batch is the one
// [record.AppendEndTxnMarkerBatch] describes). The marker ends the
// producer's open transaction in this partition, if it has one; an ABORT of
// a transaction with data here adds an entry to the active segment's
// .txnindex. A marker of an older producer epoch or coordinator epoch than
// the partition has seen is refused ([ErrInvalidProducerEpoch],
// [ErrTransactionCoordinatorFenced]). Internal topics take markers too
// (offsets committed in a transaction live in __consumer_offsets).
func (l *Log) AppendTxnMarker(_ access.Internal, producerID int64, producerEpoch int16, m record.EndTxnMarker) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	if m.Type != record.ControlCommit && m.Type != record.ControlAbort {
		return AppendResult{}, l.perr(fmt.Errorf("%w: marker type %s", ErrInvalidRecord, m.Type))
	}
	if err := l.pstate.checkMarker(producerID, producerEpoch, m.CoordinatorEpoch); err != nil {
		return AppendResult{}, l.perr(err)
	}
	base := l.LogEndOffset()
	ts := l.now().UnixMilli()
	var err error
	l.markerBuf, err = record.AppendEndTxnMarkerBatch(l.markerBuf[:0], base, l.leaderEpoch, producerID, producerEpoch, ts, m)
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	h, err := record.ParseHeader(l.markerBuf)
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	if err := l.appendLocked(l.markerBuf, &h); err != nil {
		return AppendResult{}, err
	}
	return AppendResult{BaseOffset: base, LastOffset: base, LogAppendTime: record.NoTimestamp, LogStartOffset: l.LogStartOffset(), Records: 1}, nil
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
		have, _, err := seg.CollectAbortedTxns(t.LastOffset, t.LastOffset+1)
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

// parseMarker decodes the single record of an end-transaction marker
// batch with r.
func parseMarker(r *record.Reader, batch []byte) (record.EndTxnMarker, error) {
	if err := r.Reset(batch); err != nil {
		return record.EndTxnMarker{}, err
	}
	if !r.Next() {
		return record.EndTxnMarker{}, errors.Join(r.Err(), fmt.Errorf("%w: a control batch without a record", ErrInvalidRecord))
	}
	rec := r.Record()
	m, err := record.ParseEndTxnMarker(rec.Key, rec.Value)
	if err != nil {
		typ, kerr := record.ParseControlKey(rec.Key)
		if kerr == nil && typ != record.ControlCommit && typ != record.ControlAbort {
			return record.EndTxnMarker{Type: typ}, nil
		}
	}
	return m, err
}

// AbortedTransactions returns the aborted transactions whose data overlaps
// [fetchOffset, upperBound), from the .txnindex files of the segments from
// the one holding fetchOffset on ([index.TxnIndex.CollectAbortedTxns];
// Kafka's LogSegment.collectAbortedTxns): what a broker puts in
// a read_committed FetchResponse.
func (l *Log) AbortedTransactions(fetchOffset, upperBound int64) ([]index.AbortedTxn, error) {
	return l.AppendAbortedTransactions(nil, fetchOffset, upperBound)
}

// AppendAbortedTransactions is AbortedTransactions appending to dst, for a
// caller that reuses its slice from fetch to fetch: it allocates nothing
// once dst has room. On error it returns dst unchanged.
//
// A segment's .txnindex is checked against the segment's ABORT markers the
// first time a read uses it, unless this process wrote it (or checked it
// at load), and rebuilt from the log if an entry is missing: see
// "Damage below the recovery point" in the package doc.
func (l *Log) AppendAbortedTransactions(dst []index.AbortedTxn, fetchOffset, upperBound int64) ([]index.AbortedTxn, error) {
	segs := l.segs()
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > fetchOffset }) - 1
	out := dst
	for i = max(i, 0); i < len(segs); i++ {
		if !segs[i].TxnIndexVerified() {
			if err := l.verifyTxnIndex(segs[i]); err != nil && !errors.Is(err, segment.ErrClosed) {
				return dst, l.perr(err)
			}
		}
		got, done, err := segs[i].AppendAbortedTxns(out, fetchOffset, upperBound)
		if errors.Is(err, segment.ErrClosed) {
			continue // deleted by retention after the snapshot of the list
		}
		if err != nil {
			return dst, l.perr(err)
		}
		out = got
		if done {
			break
		}
	}
	return out, nil
}

// abortedTxn is one aborted transaction of a fetch: the producer's
// transactional batches from firstOffset up to its ABORT marker at
// lastOffset are dropped.
type abortedTxn struct{ producerID, firstOffset, lastOffset int64 }

// AbortFilter drops the batches of aborted transactions from a
// read_committed fetch, as Kafka's consumer does with the aborted
// transactions of a FetchResponse (CompletedFetch.nextFetchedRecord): after
// [AbortFilter.Reset] for a fetch from an offset below the last stable
// offset, [AbortFilter.Aborted] is asked about every batch of the fetch in
// order. Its slices are reused from fetch to fetch: filtering allocates
// nothing once they have grown. The zero AbortFilter is ready for Reset.
type AbortFilter struct {
	// pending are the fetch's aborted transactions by first offset; those
	// before next have been reached.
	pending []abortedTxn
	next    int
	// active are the transactions reached and not yet ended: at most one
	// per producer (its latest), dropped once a batch of the producer at
	// or after its marker is seen (Kafka's abortedProducerIds).
	active []abortedTxn
	// txns receives the .txnindex entries of a Reset.
	txns []index.AbortedTxn
}

// Reset starts a fetch of l from offset, below lso: the aborted
// transactions overlapping [offset, lso), from the log's .txnindex files.
func (f *AbortFilter) Reset(l *Log, offset, lso int64) error {
	txns, err := l.AppendAbortedTransactions(f.txns[:0], offset, lso)
	if err != nil {
		return err
	}
	f.txns = txns
	f.ResetTxns(txns)
	return nil
}

// ResetTxns starts a fetch whose aborted transactions are txns, in any
// order: those of a FetchResponse, or of .txnindex files read directly
// (a tool reading a directory without opening it).
func (f *AbortFilter) ResetTxns(txns []index.AbortedTxn) {
	f.pending = f.pending[:0]
	for _, t := range txns {
		f.pending = append(f.pending, abortedTxn{producerID: t.ProducerID, firstOffset: t.FirstOffset, lastOffset: t.LastOffset})
	}
	slices.SortFunc(f.pending, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	f.next = 0
	f.active = f.active[:0]
}

// Aborted reports whether the batch h, the next of the fetch in offset
// order, holds data of an aborted transaction. It must see every batch of
// the fetch, control batches included, in order.
func (f *AbortFilter) Aborted(h *record.BatchHeader) bool {
	if h.ProducerID < 0 {
		return false
	}
	for ; f.next < len(f.pending) && f.pending[f.next].firstOffset <= h.LastOffset(); f.next++ {
		t := f.pending[f.next]
		if i := f.find(t.producerID); i >= 0 {
			f.active[i].lastOffset = max(f.active[i].lastOffset, t.lastOffset)
		} else {
			f.active = append(f.active, t)
		}
	}
	i := f.find(h.ProducerID)
	if i < 0 {
		return false
	}
	if h.BaseOffset >= f.active[i].lastOffset {
		// The ABORT marker (a control batch, skipped anyway) or a batch
		// after it: the aborted transaction is over.
		f.active = slices.Delete(f.active, i, i+1)
		return false
	}
	return h.Attributes.IsTransactional() && !h.Attributes.IsControl()
}

func (f *AbortFilter) find(producerID int64) int {
	for i := range f.active {
		if f.active[i].producerID == producerID {
			return i
		}
	}
	return -1
}

// ReadCommittedRecords is [Log.ReadRecords] for isolation.level
// read_committed: it reads no further than the last stable offset, and
// passes fn only the records of committed transactions and of
// non-transactional producers, never those of aborted transactions nor
// control records. It returns the offset to read from next; at the last
// stable offset it returns offset and calls fn for nothing.
func (l *Log) ReadCommittedRecords(offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	var rr RecordReader
	return rr.ReadCommittedRecords(l, offset, maxBytes, fn)
}

// ReadCommittedRecords is [Log.ReadCommittedRecords] on l with rr's
// buffers.
func (rr *RecordReader) ReadCommittedRecords(l *Log, offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	lso := l.LastStableOffset()
	if offset >= lso {
		if err := l.checkOpen(); err != nil {
			return offset, err
		}
		if offset > l.LogEndOffset() || offset < l.LogStartOffset() {
			_, err := l.Read(offset, 0, false)
			return offset, err
		}
		return offset, nil
	}
	var f AbortFilter
	if err := f.Reset(l, offset, lso); err != nil {
		return offset, err
	}
	return l.readBatches(rr, offset, maxBytes, lso, func(h *record.BatchHeader) bool { return !f.Aborted(h) }, fn)
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
