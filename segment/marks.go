package segment

import "sync/atomic"

// BatchMarks say where some records of a batch start, so that a point
// read into a large uncompressed batch jumps near its record instead of
// walking from the first: Pos[j] is the position in the batch's records
// section, and N[j] the index in the batch, of the first record whose
// offset delta is at least j*Step. The log's point reads make them; the
// segment only keeps them (see [LogHooks.Marks]).
type BatchMarks struct {
	Step int32
	Pos  []int32
	N    []int32
}

// Marks implements [LogHooks.Marks].
func (logHooks) Marks(sl *Slice) *BatchMarks {
	if sl.released {
		return nil
	}
	t := sl.seg.log.marksTable()
	if !t.read.Load() {
		t.read.Store(true)
	}
	e := t.slot(sl.Position).Load()
	if e == nil || e.gen != sl.seg.log.cutGen.Load() || e.pos != sl.Position {
		return nil
	}
	return e.marks
}

// RememberSliceMarks implements [LogHooks.RememberSliceMarks].
func (h logHooks) RememberSliceMarks(sl *Slice, m *BatchMarks) {
	if sl.released {
		return
	}
	h.RememberMarks(sl.seg, sl.Position, m)
}

// RememberMarks implements [LogHooks.RememberMarks].
func (logHooks) RememberMarks(s *Segment, pos int64, m *BatchMarks) {
	if m == nil {
		return
	}
	s.log.marksTable().slot(pos).Store(&marksEntry{gen: s.log.cutGen.Load(), pos: pos, marks: m})
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
	// read: a point read used the table (see forgetUnreadTables).
	read atomic.Bool
}

// marksTable returns the file's marks table, making one (or a larger
// one, once the file grew to four times the size the last was made for,
// holding what the last one held), as crcTable does.
func (lf *logFile) marksTable() *marksTable {
	size := lf.size.Load()
	t := lf.marks.Load()
	if t != nil && !tableOutgrown(t.forSize, size, len(t.slots)) {
		return t
	}
	n := tableBits(size)
	nt := &marksTable{forSize: size, shift: uint(64 - n), slots: make([]atomic.Pointer[marksEntry], 1<<n)}
	if t != nil {
		nt.read.Store(t.read.Load())
		for i := range t.slots {
			if e := t.slots[i].Load(); e != nil {
				nt.slot(e.pos).Store(e)
			}
		}
	}
	if lf.marks.CompareAndSwap(t, nt) {
		return nt
	}
	return lf.marks.Load()
}

func (t *marksTable) slot(pos int64) *atomic.Pointer[marksEntry] {
	return &t.slots[(uint64(pos)*0x9e3779b97f4a7c15)>>t.shift]
}

// forgetUnreadTables drops the CRC and marks tables that no point read
// used, as the segment is sealed: what its appender recorded in them is
// kept only where point reads come.
func (lf *logFile) forgetUnreadTables() {
	if c := lf.crcs.Load(); c != nil && !c.read.Load() {
		lf.crcs.CompareAndSwap(c, nil)
	}
	if t := lf.marks.Load(); t != nil && !t.read.Load() {
		lf.marks.CompareAndSwap(t, nil)
	}
}
