package segment

import (
	"errors"
	"fmt"
	"math"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// Read returns the whole batches that start at or after the batch holding
// startOffset, at most maxBytes of them and none starting at or beyond
// maxPosition (the log passes the high watermark's position, or the
// segment's size). If the first batch alone exceeds maxBytes it is returned
// anyway when minOneBatch is set (Kafka's minOneMessage), else nothing is.
// Read returns nil and no error when the segment holds no batch with an
// offset at or after startOffset.
//
// Read walks batch headers from the offset index's entry, and serves a
// batch only if its header parses and its offsets can be true: it starts
// above the batch before it, ends below the next segment's base offset and
// the segment's next offset, fits the indexes' relative offsets, and the
// batch after it starts above its last offset (see checkOffsets). The base
// offset lies outside the CRC, so nothing else would catch a flipped bit
// there. A batch that fails is stepped over where its length allows: a
// read of an offset it may hold fails with [ErrCorruptLog] naming the file
// and the batch's position, and reads beyond it find the batches after
// it. Bytes that do not parse as a batch header stop the walk: reads that
// reach them fail the same way. The first batch of a read is the only one
// whose damage is an error; damage after it ends the slice early, for the
// next read to report.
//
// A sealed segment whose readable part ends before its file does
// ([LogHooks.Damage]) answers a read past that end with the damage error.
// One whose index entry names another offset than the batch at its
// position (an index damaged in a way its checks on open missed) rebuilds
// its indexes and reads again.
func (s *Segment) Read(startOffset int64, maxBytes int, maxPosition int64, minOneBatch bool) (*Slice, error) {
	// The reference is taken first: it keeps the .log open (and mapped)
	// while the headers are read, and becomes the Slice's.
	if err := s.acquire(); err != nil {
		return nil, err
	}
	gen, act := s.log.cutGen.Load(), s.activations.Load()
	sl, oi, err := s.read(startOffset, maxBytes, maxPosition, minOneBatch)
	if err != nil && errors.Is(err, index.ErrCorruptIndex) && s.rebuildable(err) {
		if s.log.cutGen.Load() != gen || s.activations.Load() != act {
			// The writer changed the segment during the read: the entry
			// and the batch it found may belong to different moments.
			err = &Error{File: s.LogFile(), Err: ErrCutUnderRead}
		} else if _, _, err = s.rebuildIndexes(oi, err); err == nil {
			sl, _, err = s.read(startOffset, maxBytes, maxPosition, minOneBatch)
		}
	}
	if sl == nil {
		s.release()
	}
	return sl, err
}

// read is Read once, with the caller's reference; it also returns the
// offset index it used.
func (s *Segment) read(startOffset int64, maxBytes int, maxPosition int64, minOneBatch bool) (*Slice, *index.OffsetIndex, error) {
	gen := s.log.cutGen.Load()
	f := fetch{s: s, start: startOffset, maxBytes: maxBytes, size: min(s.log.size.Load(), maxPosition), minOne: minOneBatch}
	oi, e, err := s.lookup(startOffset)
	if err != nil {
		return nil, oi, err
	}
	f.oi = oi
	sl, err := f.readFrom(e)
	if err != nil && errors.Is(err, ErrCorruptLog) {
		sl, err = f.readPastDamage(e, err)
	}
	switch {
	case err != nil && errors.Is(err, ErrCorruptLog) && s.log.cutGen.Load() != gen:
		// Cut while it was read: what looked corrupt may be a batch
		// half overwritten by the appends after the cut.
		return nil, oi, &Error{File: s.LogFile(), Position: f.size, Err: ErrCutUnderRead}
	case err == nil && sl == nil:
		if d := s.damage.Load(); d != nil && maxPosition >= d.Position {
			return nil, oi, d
		}
	}
	return sl, oi, err
}

// fetch is one read of a segment's .log up to size bytes: the batches from
// the one holding start, at most maxBytes of them (the first one anyway
// if minOne), found through the offset index oi.
type fetch struct {
	s        *Segment
	oi       *index.OffsetIndex
	start    int64
	maxBytes int
	size     int64
	minOne   bool
}

// readPastDamage answers a read whose walk from the index entry e met bytes
// that are not a batch (err): an index entry past them still leads to the
// batches after them, and if the first batch it leads to holds f.start,
// that is the answer. Otherwise f.start lies in what the damage
// destroyed, and err stands.
func (f *fetch) readPastDamage(e index.OffsetPosition, err error) (*Slice, error) {
	s := f.s
	var se *Error
	if !errors.As(err, &se) || se.File != s.LogFile() || se.Position < int64(e.Position) {
		return nil, err
	}
	if se.NextOffset == 0 {
		se.NextOffset = s.limit.Load()
	}
	e2, ok, ierr := f.oi.FetchUpperBoundOffset(e, int(min(se.Position-int64(e.Position)+1, math.MaxInt32)))
	if ierr != nil || !ok || int64(e2.Position) <= se.Position {
		return nil, err
	}
	sl, err2 := f.readFrom(e2)
	if err2 != nil || (sl != nil && sl.FirstOffset <= f.start) {
		return sl, err2
	}
	if sl != nil && se.NextOffset == s.limit.Load() {
		se.NextOffset = sl.FirstOffset // the batches the entry leads to
	}
	return nil, err
}

// readFrom walks the .log from the offset index's entry e, in place where
// the .log is mapped (the index was looked up before, to keep the view
// short), else through a window.
func (f *fetch) readFrom(e index.OffsetPosition) (*Slice, error) {
	var sl *Slice
	var err error
	mapped, _ := f.s.log.view(0, f.size, func(b []byte) error {
		sl, err = f.readWith(mappedScanner(b), e)
		return nil
	})
	if !mapped {
		sc := newScanner(f.s.log.f, f.size, scanWindow)
		sl, err = f.readWith(sc, e)
		sc.release()
	}
	return sl, err
}

// readWith is the read with a scanner over the .log's first f.size bytes
// from the offset index's entry e for f.start; it returns a Slice that
// takes over the caller's reference, or nil.
func (f *fetch) readWith(sc *scanner, e index.OffsetPosition) (*Slice, error) {
	s := f.s
	pos, h, err := s.walkTo(sc, f.oi, e, f.start, f.size)
	if err != nil || pos < 0 {
		return nil, err
	}
	end, last := pos+int64(h.Size()), h.LastOffset()
	if end-pos > int64(f.maxBytes) && !f.minOne {
		return nil, nil
	}
	bound := s.offsetBound()
	for end < f.size {
		hp, err := sc.header(end)
		if err != nil || s.checkOffsets(&hp, last, bound) != nil {
			break // damage after the first batch: the next read reports it
		}
		next := end + int64(hp.Size())
		if next-pos > int64(f.maxBytes) || !followedInOrder(sc, &hp, next, f.size) {
			break
		}
		end, last = next, hp.LastOffset()
	}
	return &Slice{seg: s, Position: pos, Size: end - pos, FirstOffset: h.BaseOffset, LastOffset: last}, nil
}

// translateOffset finds the first batch whose last offset is at least
// offset, searching from the offset index's entry for it; it returns
// position -1 if there is none before limit.
func (s *Segment) translateOffset(offset, limit int64) (int64, record.BatchHeader, error) {
	oi, e, err := s.lookup(offset)
	if err != nil {
		return -1, record.BatchHeader{}, err
	}
	sc := newScanner(s.log.f, limit, scanWindow)
	defer sc.release()
	return s.walkTo(sc, oi, e, offset, limit)
}

// lookup returns the offset index and its entry for offset.
func (s *Segment) lookup(offset int64) (*index.OffsetIndex, index.OffsetPosition, error) {
	oi, _, err := s.indexes()
	if err != nil {
		return nil, index.OffsetPosition{}, err
	}
	e, err := oi.Lookup(offset)
	return oi, e, err
}

// walkTo is translateOffset from the index entry e that oi gave for
// offset. It serves only batches that pass checkOffsets and are followed in
// order (see Read): one that fails is stepped over, and if offset may lie
// in it (offset is below the next good batch's base offset, or no good
// batch follows) walkTo returns its corruption error.
func (s *Segment) walkTo(sc *scanner, oi *index.OffsetIndex, e index.OffsetPosition, offset, limit int64) (int64, record.BatchHeader, error) {
	bound := s.offsetBound()
	prev := s.base - 1 // the last offset of the batch before pos, as far as known
	var bad *Error     // the first batch stepped over since the last good one
	for pos := int64(e.Position); pos < limit; {
		h, err := sc.header(pos)
		if err != nil && pos == int64(e.Position) && e.Position > 0 && isFormatError(err) && !atBatchBoundary(sc, oi, e) {
			// No batch where the entry points, and no batch ends there:
			// the entry is wrong. (Where batches do end there, the .log is
			// what is damaged, and reads report it.)
			return -1, h, &Error{File: oi.Name(), Position: pos, Err: &index.CorruptIndexError{File: oi.Name(),
				Reason: fmt.Sprintf("entry %v, but no batch header parses there: %v", e, err)}}
		}
		if err != nil {
			return -1, h, s.log.walkError(pos, err)
		}
		next := pos + int64(h.Size())
		err = s.checkOffsets(&h, prev, bound)
		if err == nil && pos == int64(e.Position) && e.Position > 0 && h.LastOffset() != e.Offset {
			// An entry names the last offset of the batch at its position.
			// The batch's own offsets are sane, so the entry is what is
			// wrong, and trusting it could skip batches.
			return -1, h, &Error{File: oi.Name(), Position: pos, Err: &index.CorruptIndexError{File: oi.Name(),
				Reason: fmt.Sprintf("entry %v, but the batch there ends at offset %d", e, h.LastOffset())}}
		}
		if err == nil && h.LastOffset() >= offset && !followedInOrder(sc, &h, next, limit) {
			err = fmt.Errorf("%w: %w: the next batch starts at or below this one's last offset %d", ErrCorruptLog, ErrOffsetOrder, h.LastOffset())
		}
		if err != nil {
			if bad == nil {
				bad = &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			pos = next
			continue
		}
		if bad != nil && offset < h.BaseOffset {
			bad.NextOffset = h.BaseOffset
			return -1, h, bad // offset lies in the damaged batch's range
		}
		bad = nil
		if h.LastOffset() >= offset {
			return pos, h, nil
		}
		prev = h.LastOffset()
		pos = next
	}
	if bad != nil {
		bad.NextOffset = s.limit.Load()
		return -1, record.BatchHeader{}, bad
	}
	return -1, record.BatchHeader{}, nil
}

// atBatchBoundary reports whether the position of the offset index's entry
// e is where a batch starts, as far as the .log tells: walking the batches
// from the entry before it either lands on it (true) or steps over it
// (false, the entry is wrong); a walk that meets bytes that are not a
// batch first cannot tell, and counts as landing (the .log is damaged).
func atBatchBoundary(sc *scanner, oi *index.OffsetIndex, e index.OffsetPosition) bool {
	prev, err := oi.Lookup(e.Offset - 1)
	if err != nil || prev.Position >= e.Position {
		return true
	}
	p := int64(prev.Position)
	for p < int64(e.Position) {
		h, err := sc.header(p)
		if err != nil {
			return true
		}
		p += int64(h.Size())
	}
	return p == int64(e.Position)
}

// TimestampOffset is a record's timestamp and offset.
type TimestampOffset struct {
	Timestamp int64
	Offset    int64
}

// FindOffsetByTimestamp returns the first record at or after startingOffset
// whose timestamp is at least ts (Kafka's LogSegment.findOffsetByTimestamp):
// the time index narrows the search to a batch, whose records are then
// decoded. As Kafka's FileRecords.searchForTimestamp, it looks at every
// batch, control batches too: a transaction marker at or after ts answers
// with its offset and its record's timestamp. ok is false if the segment
// holds no such record.
func (s *Segment) FindOffsetByTimestamp(ts, startingOffset int64) (TimestampOffset, bool, error) {
	oi, ti, err := s.indexes()
	if err != nil {
		return TimestampOffset{}, false, err
	}
	te, err := ti.Lookup(ts)
	if err != nil {
		return TimestampOffset{}, false, err
	}
	e, err := oi.Lookup(max(te.Offset, startingOffset))
	if err != nil {
		return TimestampOffset{}, false, err
	}
	size := s.log.size.Load()
	bound := s.offsetBound()
	sc := newScanner(s.log.f, size, scanWindow)
	defer sc.release()
	r := record.NewReader(record.ReaderOptions{})
	prev := s.base - 1
	for pos := int64(e.Position); pos < size; {
		h, err := sc.header(pos)
		if err != nil {
			return TimestampOffset{}, false, s.log.walkError(pos, err)
		}
		if s.checkOffsets(&h, prev, bound) != nil || !followedInOrder(sc, &h, pos+int64(h.Size()), size) {
			pos += int64(h.Size()) // offsets that cannot be true: not an answer
			continue
		}
		prev = h.LastOffset()
		if h.MaxTimestamp >= ts && h.LastOffset() >= startingOffset {
			batch := make([]byte, h.Size())
			if _, err := s.log.f.ReadAt(batch, pos); err != nil {
				return TimestampOffset{}, false, &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			if err := r.Reset(batch); err != nil {
				return TimestampOffset{}, false, &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			for r.Next() {
				rec := r.Record()
				if rec.Timestamp >= ts && rec.Offset >= startingOffset {
					return TimestampOffset{Timestamp: rec.Timestamp, Offset: rec.Offset}, true, nil
				}
			}
			if err := r.Err(); err != nil {
				return TimestampOffset{}, false, &Error{File: s.LogFile(), Position: pos, Err: err}
			}
		}
		pos += int64(h.Size())
	}
	return TimestampOffset{}, false, nil
}
