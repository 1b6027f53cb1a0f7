package segment

import "sync/atomic"

// BatchMarks say where some records of a batch start, so that a point
// read into a large uncompressed batch jumps near its record instead of
// walking from the first: Pos[j] is the position in the batch's records
// section, and N[j] the index in the batch, of the first record whose
// offset delta is at least j*Step. The log's point reads make them; the
// segment only keeps them (see [Slice.Marks]).
type BatchMarks struct {
	Step int32
	Pos  []int32
	N    []int32
}

// Marks returns the marks remembered for the slice's first batch, or nil.
// Like the CRC table (see [Slice.VerifyCRC]) the segment forgets them when
// the .log is cut, and keeps one batch's marks per slot of a table sized
// by the .log (one slot per 8 KiB, 256 to 16,384 slots), made only for
// segments that serve point reads; a collision replaces the older marks.
func (sl *Slice) Marks() *BatchMarks {
	if sl.released {
		return nil
	}
	e := sl.seg.marksFor().slot(sl.Position).Load()
	if e == nil || e.gen != sl.seg.cutGen.Load() || e.pos != sl.Position {
		return nil
	}
	return e.marks
}

// RememberMarks keeps m for the slice's first batch. m must not change
// afterwards; a later call with more marks replaces it.
func (sl *Slice) RememberMarks(m *BatchMarks) {
	if sl.released || m == nil {
		return
	}
	sl.seg.marksFor().slot(sl.Position).Store(&marksEntry{gen: sl.seg.cutGen.Load(), pos: sl.Position, marks: m})
}

type marksEntry struct {
	gen   uint32
	pos   int64
	marks *BatchMarks
}

type marksTable struct {
	forSize int64
	shift   uint
	slots   []atomic.Pointer[marksEntry]
}

// marksFor returns the segment's table, making one (or a larger one, once
// the segment grew to four times the size the last was made for), as
// crcCacheFor does.
func (s *Segment) marksFor() *marksTable {
	size := s.size.Load()
	t := s.marks.Load()
	if t != nil && !tableOutgrown(t.forSize, size, len(t.slots)) {
		return t
	}
	n := tableBits(size)
	nt := &marksTable{forSize: size, shift: uint(64 - n), slots: make([]atomic.Pointer[marksEntry], 1<<n)}
	if s.marks.CompareAndSwap(t, nt) {
		return nt
	}
	return s.marks.Load()
}

func (t *marksTable) slot(pos int64) *atomic.Pointer[marksEntry] {
	return &t.slots[(uint64(pos)*0x9e3779b97f4a7c15)>>t.shift]
}
