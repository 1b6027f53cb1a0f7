package segment

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// scanner reads a .log sequentially through a window buffer, so that walking
// batch headers costs one read per window rather than one per batch.
type scanner struct {
	f      vfs.File
	end    int64  // scan limit: the .log size when the scan started
	buf    []byte // window
	bufPos int64  // file position of buf[0]
	n      int    // valid bytes in buf
	ahead  int    // bytes to read at the next refill: grows from 4 KiB to len(buf)
	mapped bool   // buf is the mapped .log (mappedScanner), not a window
}

// scanWindow is the window of the pooled scanners that reads use.
const scanWindow = 64 << 10

var scanBufs = sync.Pool{New: func() any { return new([scanWindow]byte) }}

// newScanner returns a scanner with a window of the given size; windows of
// scanWindow bytes come from a pool and go back with release.
func newScanner(f vfs.File, end int64, window int) *scanner {
	if window == scanWindow {
		return &scanner{f: f, end: end, buf: scanBufs.Get().(*[scanWindow]byte)[:]}
	}
	return &scanner{f: f, end: end, buf: make([]byte, window)}
}

// mappedScanner returns a scanner over b, the .log's bytes in place: its
// window is all of b, so it never reads. It must not be used once b is
// gone (see Segment.view), and needs no release.
func mappedScanner(b []byte) *scanner {
	return &scanner{end: int64(len(b)), buf: b, n: len(b), mapped: true}
}

// release returns a pooled window; the scanner is unusable afterwards.
func (sc *scanner) release() {
	if !sc.mapped && len(sc.buf) == scanWindow {
		scanBufs.Put((*[scanWindow]byte)(sc.buf))
	}
	sc.buf = nil
}

// bytes returns the file's bytes [pos, pos+n), n ≤ len(sc.buf), reading a
// new window if they are not all in the current one. The result is valid
// until the next call.
func (sc *scanner) bytes(pos int64, n int) ([]byte, error) {
	if pos >= sc.bufPos && pos+int64(n) <= sc.bufPos+int64(sc.n) {
		off := int(pos - sc.bufPos)
		return sc.buf[off : off+n], nil
	}
	if sc.mapped {
		return nil, io.ErrUnexpectedEOF // past the end: nothing to read
	}
	// Read ahead little at first (a point lookup needs one header) and
	// more as the scan goes on (a fetch or recovery walks many batches).
	if sc.ahead == 0 {
		sc.ahead = min(4096, len(sc.buf))
	}
	want := int(min(int64(max(sc.ahead, n)), sc.end-pos))
	sc.ahead = min(2*sc.ahead, len(sc.buf))
	if want < n {
		return nil, io.ErrUnexpectedEOF
	}
	got, err := sc.f.ReadAt(sc.buf[:want], pos)
	if got < want {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		sc.n = 0
		return nil, err
	}
	sc.bufPos, sc.n = pos, want
	return sc.buf[:n], nil
}

// header reads the batch header at pos and checks what a log scanner checks
// (Kafka's FileLogInputStream): enough bytes for the header, a sane length
// and magic 2, and that the whole batch lies before the end. It does not
// check the CRC.
func (sc *scanner) header(pos int64) (record.BatchHeader, error) {
	left := sc.end - pos
	if left < record.HeaderSizeUpToMagic {
		return record.BatchHeader{}, &record.CorruptError{BaseOffset: -1, Position: int(left), Section: "batch", Kind: record.ErrTruncated, Detail: "partial batch header at the end"}
	}
	b, err := sc.bytes(pos, int(min(left, record.BatchHeaderLen)))
	if err != nil {
		return record.BatchHeader{}, err
	}
	size, err := record.BatchSize(b)
	if err != nil {
		if m := int8(b[16]); errors.Is(err, record.ErrUnsupportedMagic) && (m == 0 || m == 1) {
			return record.BatchHeader{}, fmt.Errorf("%w (magic %d): %w", ErrLegacyFormat, m, record.ErrUnsupportedMagic)
		}
		return record.BatchHeader{}, err
	}
	if int64(size) > left {
		return record.BatchHeader{}, &record.CorruptError{BaseOffset: -1, Position: int(left), Section: "batch", Kind: record.ErrTruncated, Detail: "batch runs past the end of the file"}
	}
	return record.ParseHeader(b)
}

// crc computes the CRC-32C of the bytes [pos+21, pos+size) of the batch at
// pos, window by window.
func (sc *scanner) crc(pos int64, size int, update func(uint32, []byte) uint32) (uint32, error) {
	var sum uint32
	const crcStart = 21
	for p, end := pos+crcStart, pos+int64(size); p < end; {
		n := int(min(int64(len(sc.buf)), end-p))
		b, err := sc.bytes(p, n)
		if err != nil {
			return 0, err
		}
		sum = update(sum, b)
		p += int64(n)
	}
	return sum, nil
}
