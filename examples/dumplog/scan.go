package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// batchInfo is one batch found in a .log: its position and header.
type batchInfo struct {
	pos int64
	h   record.BatchHeader
}

// logScan is what a scan of a .log found.
type logScan struct {
	path    string
	base    int64
	size    int64 // file size
	end     int64 // position after the last whole batch
	batches []batchInfo
	byPos   map[int64]int // batch start position → index in batches
	byLast  map[int64]int // batch last offset → index in batches
	// stop, if set, is why the scan stopped before end of file at end:
	// bytes that cannot be a batch header.
	stop error
	// zeroTail is set when the bytes after end are all zero (a
	// preallocated .log, or a crash before data reached the disk).
	zeroTail bool
}

// lastOffset returns the last offset of the segment's last batch, or base−1.
func (s *logScan) lastOffset() int64 {
	if len(s.batches) == 0 {
		return s.base - 1
	}
	return s.batches[len(s.batches)-1].h.LastOffset()
}

// scanLog reads the .log at path batch by batch, as Kafka's
// FileLogInputStream does: each batch's length and magic from its first 17
// bytes, then the batch. It stops at a partial batch at the end (a torn or
// in-progress write: not an error, the scan's end says where) and at a header
// that cannot be a batch (logScan.stop). visit, if not nil, gets every whole
// batch's bytes, valid until it returns; with a nil visit only headers are
// read.
func scanLog(path string, base int64, visit func(pos int64, batch []byte, h *record.BatchHeader) error) (*logScan, error) {
	f, err := vfs.Default.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	s := &logScan{path: path, base: base, size: size, byPos: make(map[int64]int), byLast: make(map[int64]int)}
	var hdr [record.BatchHeaderLen]byte
	var buf []byte
	pos := int64(0)
	for pos+record.HeaderSizeUpToMagic <= s.size {
		n := int64(len(hdr))
		if s.size-pos < n {
			n = s.size - pos
		}
		got, err := f.ReadAt(hdr[:n], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return s, err
		}
		n = int64(got) // a file cut while it is read ends here
		size, err := record.BatchSize(hdr[:n])
		if err != nil {
			s.stop = err
			break
		}
		if pos+int64(size) > s.size {
			break // a partial batch at the end
		}
		h, err := record.ParseHeader(hdr[:n])
		if err != nil {
			s.stop = err
			break
		}
		if visit != nil {
			if cap(buf) < size {
				buf = make([]byte, size)
			}
			buf = buf[:size]
			got, err := f.ReadAt(buf, pos)
			if err != nil && !errors.Is(err, io.EOF) {
				return s, err
			}
			if got < size {
				break // the file was cut while it was read
			}
			if err := visit(pos, buf, &h); err != nil {
				return s, err
			}
		}
		s.byPos[pos] = len(s.batches)
		s.byLast[h.LastOffset()] = len(s.batches)
		s.batches = append(s.batches, batchInfo{pos: pos, h: h})
		pos += int64(size)
	}
	s.end = pos
	if s.end < s.size {
		s.zeroTail = allZero(f, s.end, s.size)
		if s.zeroTail {
			s.stop = nil
		}
	}
	return s, nil
}

// allZero reports whether f holds only zero bytes in [from, to).
func allZero(f vfs.File, from, to int64) bool {
	buf := make([]byte, 64<<10)
	zero := make([]byte, len(buf))
	for from < to {
		n := min(int64(len(buf)), to-from)
		got, err := f.ReadAt(buf[:n], from)
		if err != nil && !errors.Is(err, io.EOF) || int64(got) < n {
			return false
		}
		if !bytes.Equal(buf[:n], zero[:n]) {
			return false
		}
		from += n
	}
	return true
}

// trailing describes the bytes after the last whole batch, or "".
func (s *logScan) trailing() string {
	n := s.size - s.end
	switch {
	case n == 0:
		return ""
	case s.zeroTail:
		return fmt.Sprintf("%d zero bytes (a preallocated or unsynced tail) at the end of %s", n, s.path)
	case s.stop != nil:
		return fmt.Sprintf("%d invalid bytes at the end of %s, from position %d: %v", n, s.path, s.end, s.stop)
	default:
		return fmt.Sprintf("%d invalid bytes at the end of %s: a partial batch at position %d", n, s.path, s.end)
	}
}
