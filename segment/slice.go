package segment

import (
	"errors"
	"io"

	"github.com/kafkalite/kafkalite/internal/fileio"
	"github.com/kafkalite/kafkalite/record"
)

// Slice is a run of whole batches of a segment's .log: a file position and
// a length, not a copy. A broker can hand it to a socket with WriteTo; a
// consumer reads it into memory with ReadAt or Bytes. A Slice holds a
// reference on its segment: the segment's files are not removed while it is
// live, so Release it when done. A Slice is safe for concurrent reads.
type Slice struct {
	seg *Segment
	// Position is the byte position of the first batch in the .log.
	Position int64
	// Size is the length of the slice in bytes.
	Size int64
	// FirstOffset is the base offset of the first batch; LastOffset the last
	// offset of the last batch.
	FirstOffset, LastOffset int64
	released                bool
}

// LogFile returns the path of the .log file the slice is part of.
func (sl *Slice) LogFile() string { return sl.seg.LogFile() }

// ReadAt reads from the slice; off counts from the slice's start. As
// io.ReaderAt, it returns io.EOF when p reaches past the slice's end; a file
// that ends before the slice does (the segment was truncated while the
// slice was held) gives an error matching [ErrCutUnderRead], never io.EOF,
// so that a caller cannot take the bytes it did not get for read.
func (sl *Slice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= sl.Size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), sl.Size-off))
	got, err := sl.seg.log.f.ReadAt(p[:n], sl.Position+off)
	switch {
	case got < n && (err == nil || errors.Is(err, io.EOF)):
		return got, &Error{File: sl.seg.LogFile(), Position: sl.Position + off + int64(got), Err: ErrCutUnderRead}
	case err == nil && n < len(p):
		err = io.EOF
	}
	return got, err
}

// Bytes appends the slice's bytes to dst. On an error it returns dst as it
// was.
func (sl *Slice) Bytes(dst []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, sl.Size)...)
	if _, err := sl.ReadAt(dst[start:], 0); err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// CutAt shortens the slice to its batches whose base offset is below
// offset, as a read_committed fetch stops at the last stable offset: it
// reads their headers (through a pooled window, not their records), and
// sets Size and LastOffset to the kept batches'. A slice whose first batch
// starts at or past offset is left with Size 0. It must not run while
// others read the slice. A header that cannot be read is an error: the
// slice is then as it was.
func (sl *Slice) CutAt(offset int64) error {
	if sl.released {
		return ErrClosed
	}
	if sl.LastOffset < offset {
		return nil
	}
	end := sl.Position + sl.Size
	sc := newScanner(sl.seg.log.f, end, scanWindow)
	defer sc.release()
	pos, last := sl.Position, sl.FirstOffset-1
	for pos < end {
		h, err := sc.header(pos)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = ErrCutUnderRead // the .log ends before the slice
			}
			return &Error{File: sl.seg.LogFile(), Position: pos, Err: err}
		}
		if h.BaseOffset >= offset {
			break
		}
		pos, last = pos+int64(h.Size()), h.LastOffset()
	}
	sl.Size, sl.LastOffset = pos-sl.Position, last
	return nil
}

// Batches reads the slice into buf (reused, grown as needed, and returned)
// and calls fn for each batch in it with its header: the decoded view of a
// read, for callers that want batches rather than bytes. batch references
// buf. It stops at fn's first error.
func (sl *Slice) Batches(buf []byte, fn func(h *record.BatchHeader, batch []byte) error) ([]byte, error) {
	buf, err := sl.Bytes(buf[:0])
	if err != nil {
		return buf, err
	}
	for pos := 0; pos < len(buf); {
		n, err := record.BatchSize(buf[pos:])
		if err != nil || pos+n > len(buf) {
			return buf, &Error{File: sl.seg.LogFile(), Position: sl.Position + int64(pos), Err: errors.Join(err, record.ErrTruncated)}
		}
		h, err := record.ParseHeader(buf[pos : pos+n])
		if err != nil {
			return buf, &Error{File: sl.seg.LogFile(), Position: sl.Position + int64(pos), Err: err}
		}
		if err := fn(&h, buf[pos:pos+n]); err != nil {
			return buf, err
		}
		pos += n
	}
	return buf, nil
}

// View calls fn with the slice's bytes in place, without copying them,
// where the segment's .log is memory-mapped, and returns true and fn's
// error. It returns false without calling fn where the bytes cannot be
// viewed in place: the .log is not mapped (a memory filesystem, a system
// without mmap or without a unified buffer cache, or a mapping failed), or
// the slice's batches were truncated away since the read. The caller reads
// with ReadAt or Bytes instead, which are always correct.
//
// b is read-only memory valid only while fn runs: fn must not write to it
// (the process would crash) nor keep it or any part of it (copy what it
// needs, as [record.Record.Clone] does). While fn runs, truncating,
// sealing and closing the segment wait for it: keep fn short, and do not
// call View or segment methods that change the segment from it.
func (sl *Slice) View(fn func(b []byte) error) (bool, error) {
	if sl.released {
		return false, ErrClosed
	}
	return sl.seg.log.view(sl.Position, sl.Size, fn)
}

// WriteTo writes the slice's bytes to w without copying them through a
// user-space buffer where the platform allows: sendfile(2) to a socket on
// Linux, a copy elsewhere.
func (sl *Slice) WriteTo(w io.Writer) (int64, error) {
	return fileio.CopyRange(w, sl.seg.log.f, sl.Position, sl.Size)
}

// Release gives the slice's reference on its segment back. A second call
// does nothing.
func (sl *Slice) Release() {
	if sl.released {
		return
	}
	sl.released = true
	sl.seg.release()
}
