package segment

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
)

// Append writes one batch at the end of the .log. The batch must be valid
// (the log validates it, assigns its offsets and stamps it before), its
// CRC included, and described by h: point reads take a batch appended by
// this process as verified ([Slice.VerifyCRC]). Index entries are added as Kafka adds them: an offset
// entry (the batch's last offset at its start position) and a time entry
// (the segment's max timestamp so far and its batch's last offset) once more
// than index.interval.bytes were appended since the last entries.
//
// When Append returns nil the batch is in the operating system's page cache
// (or the memory FS) and visible to readers; it is durable after Flush. A
// failed write is cut off the file again, and the segment refuses further
// appends ([ErrFailed]) because the state of its file is no longer known;
// the log reopens and recovers it.
func (s *Segment) Append(batch []byte, h *record.BatchHeader) error {
	a, err := s.prepareAppend(batch, h)
	if err != nil {
		return err
	}
	if _, err := s.log.f.WriteAt(batch, a.pos); err != nil {
		return s.failAppend(a.pos, err)
	}
	return s.commitAppend(a, batch, h)
}

// pendingAppend is what prepareAppend found for commitAppend.
type pendingAppend struct {
	pos int64
	oi  *index.OffsetIndex
	ti  *index.TimeIndex
}

// prepareAppend checks that batch, described by h, can be appended at the
// end of the .log, and loads what the append needs. It writes nothing.
func (s *Segment) prepareAppend(batch []byte, h *record.BatchHeader) (pendingAppend, error) {
	if s.failed != nil {
		return pendingAppend{}, fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	pos := s.log.size.Load()
	if len(batch) != h.Size() {
		return pendingAppend{}, &Error{File: s.LogFile(), Position: pos, Err: fmt.Errorf("batch of %d bytes, header says %d", len(batch), h.Size())}
	}
	if pos+int64(len(batch)) > maxLogBytes {
		return pendingAppend{}, &Error{File: s.LogFile(), Position: pos, Err: ErrSegmentFull}
	}
	if h.BaseOffset < s.base || !index.CanIndex(s.base, h.LastOffset()) {
		return pendingAppend{}, &Error{File: s.LogFile(), Position: pos, Err: fmt.Errorf("%w: offsets %d-%d, base %d", ErrOffsetOverflow, h.BaseOffset, h.LastOffset(), s.base)}
	}
	next, err := s.NextOffset()
	if err != nil {
		return pendingAppend{}, err
	}
	if h.BaseOffset < next {
		return pendingAppend{}, &Error{File: s.LogFile(), Position: pos, Err: fmt.Errorf("%w: base offset %d, next offset %d", ErrOffsetOrder, h.BaseOffset, next)}
	}
	oi, ti, err := s.indexes()
	if err != nil {
		return pendingAppend{}, err
	}
	if s.firstBatchTimestamp == notLoaded {
		if err := s.loadFirstBatchTimestamp(); err != nil {
			return pendingAppend{}, err
		}
	}
	return pendingAppend{pos: pos, oi: oi, ti: ti}, nil
}

// failAppend fails the segment after a write at pos went wrong, cutting
// the .log back to pos.
func (s *Segment) failAppend(pos int64, err error) error {
	s.failed = err
	if terr := s.log.cut(pos); terr != nil {
		err = errors.Join(err, terr)
	}
	return &Error{File: s.LogFile(), Position: pos, Err: err}
}

// commitAppend does what follows the write of a prepared batch: the
// segment's size, next offset and max timestamp, and index entries.
func (s *Segment) commitAppend(a pendingAppend, batch []byte, h *record.BatchHeader) error {
	pos := a.pos
	if pos == 0 {
		s.firstBatchTimestamp = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestampSoFar.Load() {
		s.offsetOfMaxTimestamp.Store(h.LastOffset())
		s.maxTimestampSoFar.Store(h.MaxTimestamp)
	}
	var ierr error
	if s.bytesSinceLastIndexEntry > s.cfg.IndexIntervalBytes {
		ierr = errors.Join(a.oi.Append(h.LastOffset(), index.Position(pos)),
			a.ti.MaybeAppend(s.maxTimestampSoFar.Load(), s.offsetOfMaxTimestamp.Load(), false))
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += len(batch)
	s.log.rememberVerified(pos)
	s.nextOffset.Store(h.NextOffset())
	s.log.size.Store(pos + int64(len(batch)))
	if ierr != nil && !errors.Is(ierr, index.ErrIndexFull) {
		// The batch is in the .log and readable; an index that cannot take
		// an entry is the segment's problem, not the batch's. Refuse more
		// appends so the log rolls or recovers.
		s.failed = ierr
		return &Error{File: s.LogFile(), Position: pos, Err: ierr}
	}
	return nil
}

// RollParams describe the next append, for [Segment.ShouldRoll].
type RollParams struct {
	// BatchBytes is the size of the incoming batch.
	BatchBytes int
	// MaxTimestamp is the incoming batch's max timestamp.
	MaxTimestamp int64
	// LastOffset is the incoming batch's last offset.
	LastOffset int64
	// SegmentBytes mirrors segment.bytes.
	SegmentBytes int64
	// SegmentTime mirrors segment.ms (Kafka's LogConfig.maxSegmentMs: for
	// a compacted topic, max.compaction.lag.ms when that is shorter).
	SegmentTime time.Duration
	// Now is the log's clock.
	Now time.Time
}

// ShouldRoll reports whether the log must roll a new segment before
// appending the batch p describes (Kafka's LogSegment.shouldRoll): the batch
// would take the segment past segment.bytes; the segment is not empty and
// older than SegmentTime less its jitter (measured between the first batch's
// timestamp and the incoming batch's when the first batch has one, else by
// the clock since the segment was created or loaded); an index is full; or
// the incoming offsets do not fit relative offsets. A clock that goes
// backwards never makes a segment roll early.
func (s *Segment) ShouldRoll(p RollParams) (bool, error) {
	size := s.log.size.Load()
	if size > p.SegmentBytes-int64(p.BatchBytes) {
		return true, nil
	}
	if size > 0 {
		if s.firstBatchTimestamp == notLoaded {
			if err := s.loadFirstBatchTimestamp(); err != nil {
				return false, err
			}
		}
		var waited time.Duration
		if s.firstBatchTimestamp >= 0 {
			waited = time.Duration(p.MaxTimestamp-s.firstBatchTimestamp) * time.Millisecond
		} else {
			waited = p.Now.Sub(s.created)
		}
		if waited > p.SegmentTime-s.rollJitter {
			return true, nil
		}
	}
	oi, ti, err := s.indexes()
	if err != nil {
		return false, err
	}
	return oi.IsFull() || ti.IsFull() || !index.CanIndex(s.base, p.LastOffset), nil
}

// loadFirstBatchTimestamp reads the first batch's max timestamp, Kafka's
// rollingBasedTimestamp.
func (s *Segment) loadFirstBatchTimestamp() error {
	s.firstBatchTimestamp = record.NoTimestamp
	if s.log.size.Load() == 0 {
		return nil
	}
	sc := newScanner(s.log.f, s.log.size.Load(), record.BatchHeaderLen)
	h, err := sc.header(0)
	if err != nil {
		s.firstBatchTimestamp = notLoaded
		return &Error{File: s.LogFile(), Position: 0, Err: err}
	}
	s.firstBatchTimestamp = h.MaxTimestamp
	return nil
}

// Seal makes the segment inactive, as a roll does to the old active
// segment: the final time index entry goes into its reserved slot, both
// indexes are trimmed to their entries and a preallocated .log to its
// batches. The segment stays readable. It does not flush: the log flushes
// sealed segments as its policy says.
func (s *Segment) Seal() error {
	if err := s.finalTimeIndexEntry(); err != nil {
		return err
	}
	oi, ti, err := s.indexes()
	if err != nil {
		return err
	}
	err = errors.Join(oi.TrimToValidSize(), ti.TrimToValidSize())
	s.log.forgetUnreadTables()
	s.mu.Lock()
	s.active = false
	s.mu.Unlock()
	// The mapping, made at the active segment's size, goes (the next
	// reader maps the .log at its size), with a preallocated tail.
	if s.cfg.Preallocate {
		return errors.Join(err, s.log.cut(s.log.size.Load()))
	}
	return errors.Join(err, s.log.unmap())
}

// loadTail finds the next offset and the largest timestamp by scanning the
// batches after the last index entries (Kafka's readNextOffset and
// loadLargestTimestamp). The batches it scans pass the checks reads make
// (checkOffsets): in the active segment, a batch that does not is an
// error (the log recovers the segment); a sealed segment steps over a
// batch with impossible offsets, and records bytes that do not parse as a
// batch as damage (setDamage), its readable part ending there.
func (s *Segment) loadTail() error {
	oi, ti, err := s.indexes()
	if err != nil {
		return err
	}
	lastTime := ti.LastEntry()
	maxTS, offMax := lastTime.Timestamp, lastTime.Offset
	start, err := oi.Lookup(lastTime.Offset)
	if err != nil {
		return err
	}
	if n := oi.Entries(); n > 0 {
		last, err := oi.Entry(n - 1)
		if err != nil {
			return err
		}
		if last.Position < start.Position {
			start = last
		}
	}
	// The batch at an entry's position ends at the entry's offset.
	next := s.base
	if start.Position > 0 {
		next = start.Offset + 1
	}
	bound := int64(math.MaxInt64)
	if l := s.limit.Load(); l > 0 {
		bound = l
	}
	s.mu.Lock()
	active, act := s.active, s.activations.Load()
	s.mu.Unlock()
	size := s.log.size.Load()
	sc := newScanner(s.log.f, size, scanWindow)
	defer sc.release()
	prev := s.base - 1
	for pos := int64(start.Position); pos < size; {
		h, err := sc.header(pos)
		if err != nil {
			if active || !isFormatError(err) {
				return s.log.walkError(pos, err)
			}
			if d := corruptAt(s.LogFile(), pos, err); s.setDamage(d, act) && s.cfg.OnLogDamage != nil {
				s.cfg.OnLogDamage(d)
			}
			break
		}
		err = s.checkOffsets(&h, prev, bound)
		if err == nil && !followedInOrder(sc, &h, pos+int64(h.Size()), size) {
			err = fmt.Errorf("%w: %w: the next batch starts at or below this one's last offset %d", ErrCorruptLog, ErrOffsetOrder, h.LastOffset())
		}
		if err != nil {
			if active {
				return &Error{File: s.LogFile(), Position: pos, Err: err}
			}
			pos += int64(h.Size()) // as reads step over it
			continue
		}
		if h.MaxTimestamp > maxTS {
			maxTS, offMax = h.MaxTimestamp, h.LastOffset()
		}
		next, prev = h.NextOffset(), h.LastOffset()
		pos += int64(h.Size())
	}
	if maxTS < 0 {
		maxTS, offMax = record.NoTimestamp, s.base
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !active && s.activations.Load() != act {
		// A reader's scan of a segment the writer made active since: the
		// writer's own scan (TruncateTo, Recover) decides, and what this
		// one read may be gone.
		return &Error{File: s.LogFile(), Position: size, Err: ErrCutUnderRead}
	}
	s.maxTimestampSoFar.Store(maxTS)
	s.offsetOfMaxTimestamp.Store(offMax)
	s.nextOffset.Store(next)
	return nil
}
