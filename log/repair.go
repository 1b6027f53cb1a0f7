package log

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// This file holds what the log does about damaged .txnindex files below
// its recovery point, which no recovery rescans (see "Damage below the
// recovery point" in the package doc): it checks and rebuilds them, which
// takes the producer state before their segment. The indexes a segment
// rebuilt and a .log found damaged are the localLog's to hear of.

// eachBatch calls fn for every batch of segs[first:last+1] from offset
// from on, in offset order, with the index of its segment. What reads
// refuse is stepped over without calling fn: a batch whose offsets cannot
// be true or whose bytes do not parse as a batch (offset by offset until a
// read answers again), and the part of a damaged segment past its last
// readable batch (segment.Segment.Damage). It stops at fn's first error
// or a read's other errors.
func eachBatch(segs []*segment.Segment, from int64, last int, fn func(i int, batch []byte, h *record.BatchHeader) error) error {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > from }) - 1
	var buf []byte
	for i = max(i, 0); i <= last && i < len(segs); i++ {
		s := segs[i]
		end, err := s.NextOffset()
		if err != nil {
			return err
		}
		if i+1 < len(segs) {
			end = max(end, segs[i+1].BaseOffset())
		}
		for pos := max(from, s.BaseOffset()); pos < end; {
			sl, err := s.Read(pos, 1<<20, s.Size(), true)
			if d := segHooks.Damage(s); err != nil && err == d {
				break // nothing readable in this segment from here
			}
			if errors.Is(err, record.ErrCorrupt) {
				pos++
				continue
			}
			if err != nil {
				return err
			}
			if sl == nil {
				break
			}
			next := pos
			buf, err = sl.Batches(buf, func(h *record.BatchHeader, batch []byte) error {
				next = h.NextOffset()
				return fn(i, batch, h)
			})
			sl.Release()
			if err != nil {
				return err
			}
			if next <= pos {
				break
			}
			pos = next
		}
	}
	return nil
}

// applyBatch records a batch in ps, as appends and recovery do (data
// batches of producers with an id, end-transaction markers), and returns
// the .txnindex entry of the transaction an ABORT marker in it ended, if
// it ended one with data here. r decodes the marker.
func applyBatch(ps *producerState, r *record.Reader, batch []byte, h *record.BatchHeader) (index.AbortedTxn, bool, error) {
	if h.ProducerID < 0 {
		return index.AbortedTxn{}, false, nil
	}
	if !h.Attributes.IsControl() {
		ps.onData(h)
		return index.AbortedTxn{}, false, nil
	}
	if h.RecordsCount == 0 || !h.Attributes.IsTransactional() {
		return index.AbortedTxn{}, false, nil // a marker the cleaner emptied, or a KRaft control batch
	}
	m, err := parseMarker(r, batch)
	if err != nil {
		return index.AbortedTxn{}, false, err
	}
	if m.Type != record.ControlCommit && m.Type != record.ControlAbort {
		return index.AbortedTxn{}, false, nil
	}
	done, ok := ps.onMarker(h.ProducerID, h.ProducerEpoch, m, h.BaseOffset, h.MaxTimestamp)
	if !ok || !done.aborted {
		return index.AbortedTxn{}, false, nil
	}
	t := index.AbortedTxn{ProducerID: done.producerID, FirstOffset: done.firstOffset, LastOffset: done.lastOffset, LastStableOffset: done.lastOffset + 1}
	if fu := ps.firstUnstableOffset(); fu >= 0 {
		t.LastStableOffset = fu
	}
	return t, true, nil
}

// txnIndexRepair checks a partition's .txnindex files and rebuilds those
// that are damaged or incomplete from the log's ABORT markers: all of them
// at load (repairAtLoad), and each other one against its markers the
// first time a read_committed read uses it (verify). Kafka rebuilds the
// .txnindex of the segments its recovery rescans only; a sealed segment's
// file, which no recovery rescans, could otherwise lose an entry unseen
// and let a read_committed reader deliver an aborted transaction.
//
// Its lock, mu, serialises the checks; a check takes the Log's write lock
// (writeMu) after it, for the comparison and the rebuild, so that the
// segments stay in the log and no append adds to the file meanwhile.
type txnIndexRepair struct {
	local    *localLog
	writeMu  *sync.Mutex  // the Log's write lock
	rebuilds atomic.Int64 // .txnindex files rebuilt since Open

	mu sync.Mutex // serialises verify
}

// entriesFromLog computes the .txnindex of segs[k] from the log, as
// Kafka's recovery does for a segment it recovers: the producer state
// before the segment (the newest readable snapshot at or below its base
// offset, or none) is replayed up to the segment's end, and every ABORT
// marker of the segment that ends a transaction with data gives an entry.
// It reads the log only, so readers may run alongside; the segments must
// stay in the log meanwhile (the caller holds the write lock, or loads).
func (r *txnIndexRepair) entriesFromLog(segs []*segment.Segment, k int) ([]index.AbortedTxn, error) {
	ll := r.local
	base := segs[k].BaseOffset()
	ps := newProducerState()
	from := segs[0].BaseOffset()
	offsets, err := snapshot.List(ll.fsys, ll.dir)
	if err != nil {
		return nil, err
	}
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		if off > base || off < from {
			continue
		}
		entries, err := snapshot.Read(ll.fsys, filepath.Join(ll.dir, snapshot.FileName(off)))
		if errors.Is(err, snapshot.ErrCorrupt) {
			continue // loading deletes it; an older one serves
		}
		if err != nil {
			return nil, err
		}
		ps.load(entries)
		from = off
		break
	}
	rd := record.NewReader(record.ReaderOptions{SkipCRC: true})
	var out []index.AbortedTxn
	err = eachBatch(segs, from, k, func(i int, batch []byte, h *record.BatchHeader) error {
		if h.LastOffset() < from {
			return nil
		}
		t, aborted, err := applyBatch(ps, rd, batch, h)
		if err == nil && aborted && i == k {
			out = append(out, t)
		}
		return err
	})
	return out, err
}

// rebuildLocked makes segs[k]'s .txnindex the one the log's ABORT markers
// give (entriesFromLog). A file that passes its checks and already holds
// exactly those entries is kept (a marker may end a transaction without
// data here, which makes no entry); otherwise the file is replaced, which
// the stats count and the log warns of, with cause (why it was suspect) if
// known. Either way the file is verified afterwards.
//
// REQUIRES: the Log's write lock held, or the log loading.
func (r *txnIndexRepair) rebuildLocked(segs []*segment.Segment, k int, cause error) error {
	ll := r.local
	s := segs[k]
	want, err := r.entriesFromLog(segs, k)
	if err != nil {
		return fmt.Errorf("rebuilding the .txnindex of %s: %w", s.LogFile(), err)
	}
	have, err := segHooks.TxnIndexEntries(s)
	if err == nil {
		err = segHooks.CheckTxnIndex(s, ll.segmentEnd(segs, k))
	}
	if err == nil && slices.Equal(have, want) {
		segHooks.MarkTxnIndexVerified(s)
		return nil
	}
	switch {
	case err != nil:
		cause = err
	case cause == nil:
		cause = fmt.Errorf("%w: %d entries, the ABORT markers give %d", index.ErrCorruptIndex, len(have), len(want))
	}
	if err := segHooks.ReplaceTxnIndex(s, want); err != nil {
		return fmt.Errorf("rebuilding the .txnindex of %s: %w", s.LogFile(), err)
	}
	ll.dirDirty = true
	r.rebuilds.Add(1)
	ll.logger.Warn("rebuilt the .txnindex of a segment from its ABORT markers", "partition", ll.tp, "segment", s.LogFile(),
		"cause", cause, "entries", len(want))
	return nil
}

// repairAtLoad runs at load, before the producer state is replayed: every
// .txnindex is checked (segment.Segment.CheckTxnIndex), and rebuilt from
// the log if it fails; the segments recovery rescanned that hold
// transactional markers or a .txnindex are compared with what the log
// gives (Kafka's recovery rebuilds the .txnindex of every segment it
// recovers). The others are checked against their ABORT markers on first
// use (verify).
func (r *txnIndexRepair) repairAtLoad(recovered map[*segment.Segment]bool) error {
	segs := r.local.segs()
	for k, s := range segs {
		cause := segHooks.CheckTxnIndex(s, r.local.segmentEnd(segs, k))
		if cause == nil && !recovered[s] {
			continue
		}
		if err := r.rebuildLocked(segs, k, cause); err != nil {
			return err
		}
	}
	return nil
}

// verify checks a segment's .txnindex against its ABORT markers the first
// time a read_committed read uses it: every ABORT marker must have its
// entry, or the transaction it ended had no data here, which the rebuild
// that a missing entry leads to tells (a file lost, or cut at an entry
// boundary, passes every check of the file alone). The markers are found
// by a walk of the segment's batch headers, without the write lock for
// what the segment holds when it starts; the rest, the comparison and a
// rebuild run under it.
func (r *txnIndexRepair) verify(s *segment.Segment) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if segHooks.TxnIndexVerified(s) {
		return nil
	}
	markers, pos, err := segHooks.AppendAbortMarkers(s, nil, 0)
	if err != nil {
		return err
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	segs := r.local.segs()
	k := slices.Index(segs, s)
	if k < 0 {
		return nil // retention or the cleaner removed it meanwhile
	}
	if markers, _, err = segHooks.AppendAbortMarkers(s, markers, pos); err != nil {
		return err
	}
	entries, err := segHooks.TxnIndexEntries(s)
	if err == nil {
		err = segHooks.CheckTxnIndex(s, r.local.segmentEnd(segs, k))
	}
	if err == nil {
		for _, m := range markers {
			if !slices.ContainsFunc(entries, func(t index.AbortedTxn) bool { return t.LastOffset == m.Offset && t.ProducerID == m.ProducerID }) {
				err = fmt.Errorf("%w: no entry for the %v", index.ErrCorruptIndex, m)
				break
			}
		}
	}
	if err == nil {
		segHooks.MarkTxnIndexVerified(s)
		return nil
	}
	if !errors.Is(err, index.ErrCorruptIndex) {
		return err
	}
	return r.rebuildLocked(segs, k, err)
}
