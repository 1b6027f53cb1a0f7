package txncodec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Primitive encodings of Kafka's generated messages, as in groupcodec
// (whose helpers are unexported). These limits are part of the wire format.
const (
	// maxStringLen is the longest string Kafka writes or reads.
	maxStringLen = math.MaxInt16
	// maxUvarintLen is the longest unsigned varint Kafka reads (an int32).
	maxUvarintLen = 5
)

// reader decodes one structure from b. The first error is sticky: after it
// every read returns zero values, so decoders read straight through and
// check once.
type reader struct {
	b    []byte
	pos  int
	name string // structure, for errors
	ver  int    // its version once read, -1 before
	arr  string // array whose element is being read, for errors
	idx  int    // that element's index
	err  *DecodeError
}

func newReader(b []byte, name string) reader { return reader{b: b, name: name, ver: -1} }

func (r *reader) ok() bool { return r.err == nil }

// error returns the first error, or a nil error (never a typed nil).
func (r *reader) error() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

func (r *reader) remaining() int { return len(r.b) - r.pos }

func (r *reader) failAt(at int, field, format string, args ...any) {
	if r.err != nil {
		return
	}
	what := r.name
	if r.ver >= 0 {
		what += " v" + strconv.Itoa(r.ver)
	}
	if field != "" {
		if r.arr != "" {
			field = fmt.Sprintf("%s[%d].%s", r.arr, r.idx, field)
		}
		what += ": " + field
	}
	r.err = &DecodeError{What: what, Offset: at, Reason: fmt.Sprintf(format, args...)}
}

func (r *reader) unsupportedVersion(v int16, readable string) {
	if r.err != nil {
		return
	}
	r.failAt(0, "version", "version %d is not one Kafka reads (%s)", v, readable)
	r.err.unsupported = true
}

func (r *reader) need(field string, n int) bool {
	if r.err != nil {
		return false
	}
	if r.remaining() < n {
		r.failAt(r.pos, field, "needs %d bytes, %d left", n, r.remaining())
		return false
	}
	return true
}

func (r *reader) int8(field string) int8 {
	if !r.need(field, 1) {
		return 0
	}
	v := int8(r.b[r.pos])
	r.pos++
	return v
}

func (r *reader) int16(field string) int16 {
	if !r.need(field, 2) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b[r.pos:]))
	r.pos += 2
	return v
}

func (r *reader) int32(field string) int32 {
	if !r.need(field, 4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.pos:]))
	r.pos += 4
	return v
}

func (r *reader) int64(field string) int64 {
	if !r.need(field, 8) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b[r.pos:]))
	r.pos += 8
	return v
}

// uvarint reads Kafka's unsigned varint: at most 5 bytes, at most 2^32-1.
func (r *reader) uvarint(field string) uint32 {
	if r.err != nil {
		return 0
	}
	start := r.pos
	var v uint64
	for i := range maxUvarintLen {
		if r.pos >= len(r.b) {
			r.failAt(start, field, "unsigned varint runs past the end")
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if v > math.MaxUint32 {
				r.failAt(start, field, "unsigned varint %d does not fit in 32 bits", v)
				return 0
			}
			return uint32(v)
		}
	}
	r.failAt(start, field, "unsigned varint longer than %d bytes", maxUvarintLen)
	return 0
}

// length reads a length or count: int16 (short) or int32 in non-flexible
// versions, uvarint(n+1) in flexible ones. It returns -1 for null; any other
// negative value fails.
func (r *reader) length(field string, flexible, short bool) int {
	start := r.pos
	var n int
	switch {
	case flexible:
		n = int(int64(r.uvarint(field)) - 1)
	case short:
		n = int(r.int16(field))
	default:
		n = int(r.int32(field))
	}
	if r.err != nil {
		return 0
	}
	if n < -1 {
		r.failAt(start, field, "negative length %d", n)
		return 0
	}
	return n
}

func nullMark(flexible bool) string {
	if flexible {
		return "0"
	}
	return "-1"
}

// string reads a non-nullable string (the stored bytes, not checked as
// UTF-8).
func (r *reader) string(field string, flexible bool) string {
	start := r.pos
	n := r.length(field, flexible, true)
	switch {
	case r.err != nil:
		return ""
	case n == -1:
		r.failAt(start, field, "null (length %s) in a non-nullable string", nullMark(flexible))
		return ""
	case n > maxStringLen:
		r.failAt(start, field, "string length %d over Kafka's limit of %d", n, maxStringLen)
		return ""
	case n > r.remaining():
		r.failAt(start, field, "string length %d past the end (%d bytes left)", n, r.remaining())
		return ""
	}
	s := string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s
}

// arrayLen reads an array count (-1 for null, failing unless nullable) and
// checks that count elements of at least minElem bytes fit in what is left,
// so callers may allocate count elements without trusting the input.
func (r *reader) arrayLen(field string, flexible, nullable bool, minElem int) int {
	start := r.pos
	n := r.length(field, flexible, false)
	if r.err != nil {
		return 0
	}
	if n == -1 {
		if !nullable {
			r.failAt(start, field, "null (count %s) in a non-nullable array", nullMark(flexible))
		}
		return -1
	}
	if int64(n)*int64(minElem) > int64(r.remaining()) {
		r.failAt(start, field, "array count %d needs at least %d bytes, %d left", n, int64(n)*int64(minElem), r.remaining())
		return 0
	}
	return n
}

// int32Array reads a non-nullable array of int32 (nil when empty).
func (r *reader) int32Array(field string, flexible bool) []int32 {
	n := r.arrayLen(field, flexible, false, 4)
	if n <= 0 || r.err != nil {
		return nil
	}
	a := make([]int32, n)
	for i := range a {
		a[i] = r.int32(field)
	}
	return a
}

// taggedFields reads a tagged-field section and calls fn (if not nil) for
// each field with its tag, the position of its data and the data (aliasing
// the input). Unknown tags are fn's to ignore; they are skipped by size.
func (r *reader) taggedFields(fn func(tag uint32, at int, data []byte)) {
	start := r.pos
	count := r.uvarint("taggedFields")
	if r.err != nil {
		return
	}
	// Each field takes at least two bytes (tag and size).
	if int64(count)*2 > int64(r.remaining()) {
		r.failAt(start, "taggedFields", "%d tagged fields cannot fit in %d bytes", count, r.remaining())
		return
	}
	for range count {
		tag := r.uvarint("taggedFields")
		sizeAt := r.pos
		size := r.uvarint("taggedFields")
		if r.err != nil {
			return
		}
		if int64(size) > int64(r.remaining()) {
			r.failAt(sizeAt, "taggedFields", "tag %d size %d past the end (%d bytes left)", tag, size, r.remaining())
			return
		}
		at := r.pos
		data := r.b[at : at+int(size)]
		r.pos += int(size)
		if fn != nil {
			fn(tag, at, data)
		}
		if r.err != nil {
			return
		}
	}
}

// writer appends one structure to b. The first error is sticky; finish then
// returns the caller's slice unchanged with the error.
type writer struct {
	b    []byte
	what string // structure, for errors
	err  error
}

func (w *writer) fail(field, format string, args ...any) {
	if w.err == nil {
		w.err = invalidf("%s.%s: %s", w.what, field, fmt.Sprintf(format, args...))
	}
}

func (w *writer) int8(v int8)      { w.b = append(w.b, byte(v)) }
func (w *writer) int16(v int16)    { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32)    { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64)    { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) uvarint(v uint32) { w.b = binary.AppendUvarint(w.b, uint64(v)) }

// length appends a length or count n (-1 for null).
func (w *writer) length(n int, flexible, short bool) {
	switch {
	case flexible:
		w.uvarint(uint32(n + 1))
	case short:
		w.int16(int16(n))
	default:
		w.int32(int32(n))
	}
}

func (w *writer) string(field, s string, flexible bool) {
	if len(s) > maxStringLen {
		w.fail(field, "string of %d bytes over Kafka's limit of %d", len(s), maxStringLen)
		return
	}
	w.length(len(s), flexible, true)
	w.b = append(w.b, s...)
}

// arrayLen appends an array count; n is -1 for null.
func (w *writer) arrayLen(field string, n int, flexible bool) {
	if int64(n) >= math.MaxInt32 {
		// uvarint(n+1) must also fit in an int32.
		w.fail(field, "%d elements over the limit of %d", n, math.MaxInt32-1)
		return
	}
	w.length(n, flexible, false)
}

func (w *writer) int32Array(field string, a []int32, flexible bool) {
	w.arrayLen(field, len(a), flexible)
	for _, v := range a {
		w.int32(v)
	}
}

func (w *writer) finish(dst []byte) ([]byte, error) {
	if w.err != nil {
		return dst, w.err
	}
	return w.b, nil
}
