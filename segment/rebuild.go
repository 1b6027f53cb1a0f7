package segment

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/crc"
	"github.com/kafkalite/kafkalite/record"
)

// TmpSuffix ends the names of the files a segment writes before renaming
// them into place: a rebuilt index ("<base>.index.tmp"). A crash leaves at
// most such a file, which the log removes when it loads the directory, as
// it removes every temporary file.
const TmpSuffix = ".tmp"

// checkIndexes applies Kafka's sanity checks to freshly opened indexes,
// and two of ours, which catch an index that does not describe its .log
// (a .log cut short, an index of garbage that Kafka's checks pass):
//
//   - the last .index entry points inside the .log, at a batch whose last
//     offset it names (unless the .log is what is damaged there: bytes
//     that do not parse as a batch where batches end, or a batch whose own
//     offsets fail checkOffsets);
//   - the last .timeindex entry names an offset of a batch of the segment
//     whose max timestamp it names (the entry is the segment's max
//     timestamp and the last offset of the batch that holds it).
//
// Both cost a few header reads, once per segment and process.
//
// REQUIRES: s.mu held (the .log is read through the file, not the mapping).
func (s *Segment) checkIndexes(oi *index.OffsetIndex, ti *index.TimeIndex) error {
	if err := errors.Join(oi.SanityCheck(), ti.SanityCheck()); err != nil {
		return err
	}
	size := s.log.size.Load()
	sc := newScanner(s.log.f, size, scanWindow)
	defer sc.release()
	if n := oi.Entries(); n > 0 {
		last, err := oi.Entry(n - 1)
		if err != nil {
			return err
		}
		if last.Position < 0 || int64(last.Position) >= size {
			return &pastEndError{CorruptIndexError: &index.CorruptIndexError{File: oi.Name(),
				Reason: fmt.Sprintf("last entry %v points past the end of the .log (%d bytes)", last, size)}, entry: last}
		}
		h, err := sc.header(int64(last.Position))
		switch {
		case err != nil && !isFormatError(err):
			return &Error{File: s.LogFile(), Position: int64(last.Position), Err: err}
		case err != nil && !atBatchBoundary(sc, oi, last),
			// A batch whose own offsets fail the checks is what is
			// damaged there, not the entry: reads step over it.
			err == nil && h.LastOffset() != last.Offset && s.checkOffsets(&h, s.base-1, s.offsetBound()) == nil:
			return &index.CorruptIndexError{File: oi.Name(), Reason: fmt.Sprintf("last entry %v does not point at a batch ending at that offset", last)}
		}
	}
	if ti.Entries() == 0 {
		return nil
	}
	te := ti.LastEntry()
	e, err := oi.Lookup(te.Offset)
	if err != nil {
		return err
	}
	bound, prev := s.offsetBound(), s.base-1
	for pos := int64(e.Position); pos < size; {
		h, err := sc.header(pos)
		if err != nil && !isFormatError(err) {
			return &Error{File: s.LogFile(), Position: pos, Err: err}
		}
		if err != nil {
			return nil // the .log is damaged before the entry's batch: loadTail finds it
		}
		next := pos + int64(h.Size())
		if s.checkOffsets(&h, prev, bound) != nil || !followedInOrder(sc, &h, next, size) {
			pos = next // stepped over, as reads and the rebuild do
			continue
		}
		prev = h.LastOffset()
		if h.LastOffset() >= te.Offset {
			if h.BaseOffset > te.Offset || h.MaxTimestamp != te.Timestamp {
				break
			}
			return nil
		}
		pos = next
	}
	return &index.CorruptIndexError{File: ti.Name(), Reason: fmt.Sprintf("last entry %v names no batch of the segment with that max timestamp", te)}
}

// pastEndError is the check failure of an .index whose last entry points
// past the end of the .log. Unlike an index of garbage, it is evidence
// that the .log lost bytes, when the offset the entry names is one the
// segment could hold and the rebuilt segment ends before it: the entry was
// written for a batch that was there.
type pastEndError struct {
	*index.CorruptIndexError
	entry index.OffsetPosition
}

func (e *pastEndError) Unwrap() error { return e.CorruptIndexError }

// rebuildable reports whether err, from opening or using the indexes, is
// one that a rebuild from the .log repairs: an index that fails its
// checks, or a missing .index, of an inactive segment (the active one is
// the log's to recover, since appends use its indexes) still in its log
// (a segment renamed for deletion may have handed its names on).
func (s *Segment) rebuildable(err error) bool {
	if !errors.Is(err, index.ErrCorruptIndex) && !isNotExist(err) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.active && !s.closed && !s.deleted
}

// rebuildIndexes rebuilds the .index and .timeindex of an inactive segment
// from its .log, because of cause, and opens them; stale is the offset
// index the caller found damaged (nil if none was open), so that a rebuild
// another reader finished meanwhile is not done twice.
//
// Crash safety: both files are written under temporary names, synced,
// then renamed over the old ones and the directory synced. A crash leaves
// the old file or the complete new one under each name (the temporary
// files go when the log loads next); an old one left fails its checks
// again and is rebuilt again.
//
// The rebuild scan indexes every batch whose header parses, whose CRC
// matches and whose offsets pass checkOffsets, with Kafka's spacing; other
// batches are stepped over (reads of their offsets fail, as they would
// anyway). It stops at the first bytes that do not parse as a batch
// header: if those are not the end of the .log, the segment is damaged
// there (setDamage).
func (s *Segment) rebuildIndexes(stale *index.OffsetIndex, cause error) (*index.OffsetIndex, *index.TimeIndex, error) {
	damage, rebuilt, err := s.rebuild.run(s, stale, cause)
	if err != nil {
		return nil, nil, err
	}
	// The log hears of it with no lock of the segment held.
	if cb := s.cfg.OnIndexRebuild; rebuilt && cb != nil {
		cb(s.LogFile(), cause)
	}
	if cb := s.cfg.OnLogDamage; damage != nil && cb != nil {
		cb(damage)
	}
	return s.openIndexes()
}

// indexRebuild is a sealed segment's rebuild of its .index and .timeindex
// from its .log (rebuildIndexes): mu serialises rebuilds and protects
// done, which says that one was made (there is no second). Its steps
// (write, scan, install) run under mu.
type indexRebuild struct {
	mu   sync.Mutex
	done bool
}

// run is rebuildIndexes' work, under r.mu: it reports whether it rebuilt
// the files of s (not if another reader did) and the damage it recorded.
func (r *indexRebuild) run(s *Segment, stale *index.OffsetIndex, cause error) (*Error, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.mu.Lock()
	current := s.offsetIndex
	s.mu.Unlock()
	if current != stale {
		return nil, false, nil // another reader rebuilt them
	}
	if r.done {
		// Indexes this segment rebuilt fail the checks again: rebuilding
		// once more would give the same files. Never loop.
		return nil, false, &index.CorruptIndexError{File: s.path(IndexSuffix), Reason: "the rebuilt indexes fail their checks"}
	}
	act := s.activations.Load()
	scan, err := r.write(s)
	if err != nil {
		return nil, false, err
	}
	damage := scan.damage
	var pe *pastEndError
	if limit := s.limit.Load(); damage == nil && errors.As(cause, &pe) && pe.entry.Offset >= scan.next && pe.entry.Offset < limit {
		// The .log ends at a batch boundary before batches its index
		// named: they were cut off (see pastEndError).
		damage = corruptAt(s.LogFile(), scan.end, fmt.Errorf("%w: the .log ends at byte %d, but its index named offset %d at byte %d",
			record.ErrTruncated, scan.end, pe.entry.Offset, pe.entry.Position))
	}
	if err := r.install(s, act); err != nil {
		return nil, false, err
	}
	r.done = true
	if damage != nil && !s.setDamage(damage, act) {
		damage = nil
	}
	// Opened before r.mu is released, so that a reader waiting for it
	// finds them open and does not rebuild them again.
	if _, _, err := s.openIndexes(); err != nil {
		return nil, false, err
	}
	return damage, true, nil
}

// rebuildScan is what the scan of a rebuild found.
type rebuildScan struct {
	damage *Error // bytes that do not parse as a batch, or nil
	end    int64  // where the scan stopped: the .log's readable end
	next   int64  // the offset after the last batch indexed
}

// write writes the rebuilt indexes of s under their temporary names,
// synced and closed, and returns what the scan found.
//
// REQUIRES: r.mu held.
func (r *indexRebuild) write(s *Segment) (rebuildScan, error) {
	idx, tim := s.path(IndexSuffix)+TmpSuffix, s.path(TimeIndexSuffix)+TmpSuffix
	for _, name := range []string{idx, tim} {
		if err := s.fsys.Remove(name); err != nil && !isNotExist(err) {
			return rebuildScan{}, err // a leftover of an earlier rebuild that cannot go
		}
	}
	oi, err := index.CreateOffsetIndex(s.fsys, idx, s.base, s.cfg.MaxIndexBytes)
	if err != nil {
		return rebuildScan{}, err
	}
	ti, err := index.CreateTimeIndex(s.fsys, tim, s.base, s.cfg.MaxIndexBytes)
	if err != nil {
		return rebuildScan{}, errors.Join(err, oi.Close(), s.fsys.Remove(idx))
	}
	scan, err := r.scan(s, oi, ti)
	if err == nil {
		err = errors.Join(oi.TrimToValidSize(), ti.TrimToValidSize())
	}
	if err == nil {
		err = errors.Join(oi.Flush(), ti.Flush())
	}
	err = errors.Join(err, oi.Close(), ti.Close())
	if err != nil {
		return rebuildScan{}, errors.Join(err, s.fsys.Remove(idx), s.fsys.Remove(tim))
	}
	return scan, nil
}

// scan fills oi and ti from the .log of s (see rebuildIndexes).
//
// REQUIRES: r.mu held.
func (r *indexRebuild) scan(s *Segment, oi *index.OffsetIndex, ti *index.TimeIndex) (rebuildScan, error) {
	size := s.log.size.Load()
	bound := int64(math.MaxInt64)
	if l := s.limit.Load(); l > 0 {
		bound = l
	}
	b := indexBuilder{oi: oi, ti: ti, interval: s.cfg.IndexIntervalBytes, maxTS: record.NoTimestamp, offMax: s.base}
	sc := newScanner(s.log.f, size, s.cfg.recoveryWindow(size))
	defer sc.release()
	prev := s.base - 1
	scan := rebuildScan{next: s.base}
	for pos := int64(0); pos < size; {
		scan.end = pos
		h, err := sc.header(pos)
		switch {
		case errors.Is(err, ErrLegacyFormat):
			// Valid data this library does not read: indexed up to it,
			// and reads that reach it say so; not damage.
			return scan, b.finish()
		case err != nil && !isFormatError(err):
			return rebuildScan{}, &Error{File: s.LogFile(), Position: pos, Err: err}
		case err != nil:
			scan.damage = corruptAt(s.LogFile(), pos, err)
			return scan, b.finish()
		}
		next := pos + int64(h.Size())
		err = checkBatch(sc, pos, &h)
		if err == nil {
			err = s.checkOffsets(&h, prev, bound)
		}
		if err == nil && !followedInOrder(sc, &h, next, size) {
			err = ErrOffsetOrder
		}
		switch {
		case err == nil:
			if err := b.add(pos, &h); err != nil {
				return rebuildScan{}, err
			}
			prev, scan.next = h.LastOffset(), h.NextOffset()
		case !isFormatError(err) && !errors.Is(err, ErrOffsetOrder):
			return rebuildScan{}, &Error{File: s.LogFile(), Position: pos, Err: err} // I/O
		}
		pos = next
	}
	scan.end = size
	return scan, b.finish()
}

// install renames the rebuilt files of s over the old ones and syncs the
// directory, unless the segment was closed or renamed for deletion
// meanwhile (its names may belong to a cleaned segment now), or made
// active since the rebuild began (act is the activation count then: the
// writer may have changed the .log, and owns the indexes now). The old
// handles, if any were open, are retired: readers may still be using
// them.
//
// REQUIRES: r.mu held.
func (r *indexRebuild) install(s *Segment, act uint32) error {
	idx, tim := s.path(IndexSuffix), s.path(TimeIndexSuffix)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed || s.deleted:
		return errors.Join(ErrClosed, s.fsys.Remove(idx+TmpSuffix), s.fsys.Remove(tim+TmpSuffix))
	case s.active || s.activations.Load() != act:
		return errors.Join(&Error{File: s.LogFile(), Err: ErrCutUnderRead}, s.fsys.Remove(idx+TmpSuffix), s.fsys.Remove(tim+TmpSuffix))
	}
	if err := s.fsys.Rename(idx+TmpSuffix, idx); err != nil {
		return err
	}
	if err := s.fsys.Rename(tim+TmpSuffix, tim); err != nil {
		return err
	}
	if err := s.fsys.SyncDir(s.dir); err != nil {
		return err
	}
	if s.offsetIndex != nil {
		s.retired = append(s.retired, s.offsetIndex, s.timeIndex)
		s.offsetIndex, s.timeIndex = nil, nil
	}
	return nil
}

// Damage implements [LogHooks.Damage].
func (logHooks) Damage(s *Segment) error {
	if d := s.damage.Load(); d != nil {
		return d
	}
	return nil
}

// setDamage records that the inactive segment is readable only up to
// d.Position, lowering its size there (logFile.lower, as every shrink of
// the size), unless the segment was made active since act (the activation
// count when the scan that found the damage began: the writer owns the
// segment then, and what the scan read may be gone). It reports whether
// that changed anything: a damage found further on than one already known
// does not. The caller tells the log (OnLogDamage).
func (s *Segment) setDamage(d *Error, act uint32) bool {
	d.NextOffset = s.limit.Load()
	return s.log.lower(d.Position, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.active || s.activations.Load() != act {
			return false
		}
		if old := s.damage.Load(); old != nil && old.Position <= d.Position {
			return false
		}
		s.damage.Store(d)
		return true
	})
}

// checkBatch checks what recovery checks of a batch besides its offsets:
// codec, record count and CRC.
func checkBatch(sc *scanner, pos int64, h *record.BatchHeader) error {
	if !h.Attributes.Compression().Valid() {
		return &record.CorruptError{BaseOffset: h.BaseOffset, Position: 21, Section: "batch", Kind: record.ErrUnknownCodec}
	}
	if h.RecordsCount < 0 {
		return &record.CorruptError{BaseOffset: h.BaseOffset, Position: 57, Section: "batch", Kind: record.ErrRecordCount,
			Detail: fmt.Sprintf("recordsCount %d", h.RecordsCount)}
	}
	sum, err := sc.crc(pos, h.Size(), crc.Update)
	if err != nil {
		return err
	}
	if sum != h.CRC {
		return crcError(h, sum)
	}
	return nil
}

func crcError(h *record.BatchHeader, computed uint32) error {
	return &record.CorruptError{BaseOffset: h.BaseOffset, Position: 17, Section: "batch", Kind: record.ErrCRC,
		Detail: fmt.Sprintf("stored %#08x, computed %#08x", h.CRC, computed)}
}

// followedInOrder reports whether the batch after h, at next, starts
// above h's last offset, as it must, or cannot be read (its own problem).
// A batch followed by one starting at or below its last offset is
// suspect: either its offsets are too high or the next one's too low.
// The batch after that one decides: if it starts above h's last offset,
// the next batch is the odd one and h is fine.
func followedInOrder(sc *scanner, h *record.BatchHeader, next, end int64) bool {
	if next >= end {
		return true
	}
	hn, err := sc.header(next)
	if err != nil || hn.BaseOffset > h.LastOffset() {
		return true
	}
	after := next + int64(hn.Size())
	if after >= end {
		return false
	}
	ha, err := sc.header(after)
	return err == nil && ha.BaseOffset > h.LastOffset()
}

// indexBuilder adds index entries for a scan of batches, as Append adds
// them: an offset entry and a time entry once more than
// index.interval.bytes were scanned since the last ones.
type indexBuilder struct {
	oi       *index.OffsetIndex
	ti       *index.TimeIndex
	interval int

	lastEntry     int64 // position of the last entries
	maxTS, offMax int64 // the max timestamp so far and its batch's last offset
	firstTS       int64 // the first batch's max timestamp
	batches       int
}

func (b *indexBuilder) add(pos int64, h *record.BatchHeader) error {
	if h.MaxTimestamp > b.maxTS {
		b.maxTS, b.offMax = h.MaxTimestamp, h.LastOffset()
	}
	if b.batches == 0 {
		b.firstTS = h.MaxTimestamp
	}
	if pos-b.lastEntry > int64(b.interval) {
		err := errors.Join(b.oi.Append(h.LastOffset(), index.Position(pos)), b.ti.MaybeAppend(b.maxTS, b.offMax, false))
		if err != nil && !errors.Is(err, index.ErrIndexFull) {
			return err
		}
		b.lastEntry = pos
	}
	b.batches++
	return nil
}

// finish adds the final time index entry, as a roll does.
func (b *indexBuilder) finish() error {
	if b.maxTS < 0 {
		return nil
	}
	return b.ti.MaybeAppend(b.maxTS, b.offMax, true)
}
