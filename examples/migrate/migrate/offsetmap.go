package migrate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// A run maps N consecutive copied records: the source records at offsets
// Src, Src+1, ... Src+N-1 became the target records at Tgt ... Tgt+N-1.
// Offsets in the source that no record holds (compaction gaps, transaction
// markers, aborted records) end a run.
type run struct {
	Src, Tgt, N int64
}

// offsetMap is one partition's map from source to target offsets: the
// closed runs, in offset order, and the open one the copy extends.
type offsetMap struct {
	closed []run
	open   run
	// pending are closed runs not yet appended to the map file.
	pending []run
}

// add records that the source record at src became the target record at
// tgt. Calls come in increasing src and tgt order.
func (m *offsetMap) add(src, tgt int64) {
	if m.open.N > 0 && src == m.open.Src+m.open.N && tgt == m.open.Tgt+m.open.N {
		m.open.N++
		return
	}
	if m.open.N > 0 {
		m.closed = append(m.closed, m.open)
		m.pending = append(m.pending, m.open)
	}
	m.open = run{Src: src, Tgt: tgt, N: 1}
}

// runs returns every run, the open one last.
func (m *offsetMap) runs() []run {
	if m.open.N == 0 {
		return m.closed
	}
	return append(m.closed[:len(m.closed):len(m.closed)], m.open)
}

// identical reports whether every copied record kept its offset.
func (m *offsetMap) identical() bool {
	for _, r := range m.runs() {
		if r.Src != r.Tgt {
			return false
		}
	}
	return true
}

// count returns the number of records mapped.
func (m *offsetMap) count() int64 {
	var n int64
	for _, r := range m.runs() {
		n += r.N
	}
	return n
}

// lookup returns the target offset of the source record at src, if it was
// copied.
func (m *offsetMap) lookup(src int64) (int64, bool) {
	rs := m.runs()
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Src+rs[i].N > src })
	if i == len(rs) || src < rs[i].Src {
		return 0, false
	}
	return rs[i].Tgt + src - rs[i].Src, true
}

// translate turns a consumer position in the source (the offset of the next
// record to read, as a committed offset is) into the position in the target
// that has the same records ahead of it: the target offset of the first
// copied record at or after pos, or end (the target offset after the last
// copied record) when none is.
func (m *offsetMap) translate(pos, end int64) int64 {
	rs := m.runs()
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Src+rs[i].N > pos })
	if i == len(rs) {
		return end
	}
	if pos <= rs[i].Src {
		return rs[i].Tgt
	}
	return rs[i].Tgt + pos - rs[i].Src
}

// writeRuns appends runs to w, a line each: "src tgt n".
func writeRuns(w io.Writer, runs []run) (int64, error) {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "%d %d %d\n", r.Src, r.Tgt, r.N)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// readRuns reads the first size bytes of a map file (what the state says
// is there; a crash may have left more, which is dropped).
func readRuns(path string, size int64) ([]run, error) {
	if size == 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	defer f.Close()
	var runs []run
	sc := bufio.NewScanner(io.LimitReader(f, size))
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		var vals [3]int64
		if len(fields) != 3 {
			return nil, fmt.Errorf("%w: %s line %d: want \"src tgt n\"", ErrState, path, line)
		}
		for i, f := range fields {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%w: %s line %d: %q is not an offset", ErrState, path, line, f)
			}
			vals[i] = v
		}
		r := run{Src: vals[0], Tgt: vals[1], N: vals[2]}
		if r.N == 0 || (len(runs) > 0 && (r.Src < runs[len(runs)-1].Src+runs[len(runs)-1].N || r.Tgt < runs[len(runs)-1].Tgt+runs[len(runs)-1].N)) {
			return nil, fmt.Errorf("%w: %s line %d: runs out of order", ErrState, path, line)
		}
		runs = append(runs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrState, path, err)
	}
	return runs, nil
}
