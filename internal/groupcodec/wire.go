package groupcodec

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Primitive encodings of Kafka's generated messages (KAFKA_FORMAT §7.2).
// These limits are part of the wire format and must not change.
const (
	// maxStringLen is the longest string Kafka writes or reads: the
	// generated code refuses longer strings in every version, flexible or
	// not, because the non-flexible length prefix is an int16.
	maxStringLen = math.MaxInt16
	// maxUvarintLen is the longest unsigned varint Kafka reads for a
	// length, count or tag (an int32 in Java): 5 bytes.
	maxUvarintLen = 5
)

// reader decodes one structure from b. The first error is sticky: after it
// every read returns zero values and ok reports false, so decoders read
// straight through and check once.
type reader struct {
	b    []byte
	pos  int
	name string // structure, for errors: "OffsetCommitValue"
	ver  int    // its version once read, for errors; -1 before
	arr  string // the array whose element is being read, for errors
	idx  int    // the element's index in arr
	err  *DecodeError
}

func newReader(b []byte, name string) reader {
	return reader{b: b, name: name, ver: -1}
}

func (r *reader) ok() bool { return r.err == nil }

// error returns the first error as an error interface (nil when none: a
// nil *DecodeError must not become a non-nil error).
func (r *reader) error() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

func (r *reader) remaining() int { return len(r.b) - r.pos }

// failAt records the first error, at byte at, about field (which may be
// empty when the problem is not one field's).
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

// unsupportedVersion fails on the version prefix at byte 0.
func (r *reader) unsupportedVersion(v int16, readable string) {
	if r.err != nil {
		return
	}
	r.failAt(0, "version", "version %d is not one Kafka reads (%s)", v, readable)
	r.err.unsupported = true
}

// need reports whether n more bytes are present, failing if not.
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

// uvarint reads Kafka's unsigned varint: at most 5 bytes, value at most
// 2^32-1 (Java reads it into an int).
func (r *reader) uvarint(field string) uint32 {
	if r.err != nil {
		return 0
	}
	start := r.pos
	var v uint64
	for i := 0; i < maxUvarintLen; i++ {
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

// length reads a string, bytes or array length: an int16 (short) or int32
// (!short) in non-flexible versions, uvarint(n+1) in flexible ones. It
// returns -1 for null; any other negative value fails.
func (r *reader) length(field string, flexible, short bool) int {
	start := r.pos
	var n int
	switch {
	case flexible:
		u := r.uvarint(field)
		n = int(int64(u) - 1)
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

// nullMark describes the null marker of a length, for errors.
func nullMark(flexible bool) string {
	if flexible {
		return "0"
	}
	return "-1"
}

// str reads a string. A null string fails unless nullable; isNull reports
// one. Strings are Go strings of the stored bytes, not checked as UTF-8.
func (r *reader) str(field string, flexible, nullable bool) (s string, isNull bool) {
	start := r.pos
	n := r.length(field, flexible, true)
	if r.err != nil {
		return "", false
	}
	if n == -1 {
		if !nullable {
			r.failAt(start, field, "null (length %s) in a non-nullable string", nullMark(flexible))
		}
		return "", true
	}
	if n > maxStringLen {
		r.failAt(start, field, "string length %d over Kafka's limit of %d", n, maxStringLen)
		return "", false
	}
	if n > r.remaining() {
		r.failAt(start, field, "string length %d past the end (%d bytes left)", n, r.remaining())
		return "", false
	}
	s = string(r.b[r.pos : r.pos+n])
	r.pos += n
	return s, false
}

func (r *reader) string(field string, flexible bool) string {
	s, _ := r.str(field, flexible, false)
	return s
}

func (r *reader) nullableString(field string, flexible bool) *string {
	s, isNull := r.str(field, flexible, true)
	if isNull || r.err != nil {
		return nil
	}
	return &s
}

// bytes reads a byte field into a new slice (never aliasing the input). A
// null fails unless nullable, which returns nil; an empty field is a
// non-nil empty slice.
func (r *reader) bytes(field string, flexible, nullable bool) []byte {
	start := r.pos
	n := r.length(field, flexible, false)
	if r.err != nil {
		return nil
	}
	if n == -1 {
		if !nullable {
			r.failAt(start, field, "null (length %s) in non-nullable bytes", nullMark(flexible))
		}
		return nil
	}
	if n > r.remaining() {
		r.failAt(start, field, "bytes length %d past the end (%d bytes left)", n, r.remaining())
		return nil
	}
	b := make([]byte, n)
	copy(b, r.b[r.pos:])
	r.pos += n
	return b
}

// arrayLen reads a non-nullable array's element count and checks that
// count elements of at least minElem bytes each fit in what is left, so
// callers can allocate count elements without trusting the input.
func (r *reader) arrayLen(field string, flexible bool, minElem int) int {
	start := r.pos
	n := r.length(field, flexible, false)
	if r.err != nil {
		return 0
	}
	if n == -1 {
		r.failAt(start, field, "null (count %s) in a non-nullable array", nullMark(flexible))
		return 0
	}
	if int64(n)*int64(minElem) > int64(r.remaining()) {
		r.failAt(start, field, "array count %d needs at least %d bytes, %d left", n, int64(n)*int64(minElem), r.remaining())
		return 0
	}
	return n
}

// int32Array reads a non-nullable array of int32 (nil when empty).
func (r *reader) int32Array(field string, flexible bool) []int32 {
	n := r.arrayLen(field, flexible, 4)
	if n == 0 || r.err != nil {
		return nil
	}
	a := make([]int32, n)
	for i := range a {
		a[i] = r.int32(field)
	}
	return a
}

// taggedFields reads a flexible structure's tagged-field section and calls
// fn for each field with its tag, the position of its data and the data
// (aliasing the input). fn may call failAt. Unknown tags are fn's to skip.
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

// writer appends one structure to b. The first error is sticky; the
// encoder then returns the caller's slice unchanged with the error.
type writer struct {
	b    []byte
	what string // structure, for errors: "OffsetCommitValue"
	arr  string // the array whose element is being written, for errors
	idx  int    // the element's index in arr
	err  error
}

func (w *writer) fail(field, format string, args ...any) {
	if w.err != nil {
		return
	}
	if w.arr != "" {
		field = fmt.Sprintf("%s[%d].%s", w.arr, w.idx, field)
	}
	w.err = invalidf("%s.%s: %s", w.what, field, fmt.Sprintf(format, args...))
}

func (w *writer) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

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

func (w *writer) nullableString(field string, s *string, flexible bool) {
	if s == nil {
		w.length(-1, flexible, true)
		return
	}
	w.string(field, *s, flexible)
}

// bytes appends b; nil is null when nullable and empty otherwise.
func (w *writer) bytes(field string, b []byte, flexible, nullable bool) {
	if b == nil && nullable {
		w.length(-1, flexible, false)
		return
	}
	if int64(len(b)) > math.MaxInt32 {
		w.fail(field, "%d bytes over the limit of %d", len(b), math.MaxInt32)
		return
	}
	w.length(len(b), flexible, false)
	w.b = append(w.b, b...)
}

// arrayLen appends a non-nullable array's count.
func (w *writer) arrayLen(field string, n int, flexible bool) {
	if int64(n) > math.MaxInt32 {
		w.fail(field, "%d elements over the limit of %d", n, math.MaxInt32)
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

// noTaggedFields appends an empty tagged-field section.
func (w *writer) noTaggedFields() { w.uvarint(0) }

// finish returns the appended bytes, or dst unchanged and the error.
func (w *writer) finish(dst []byte) ([]byte, error) {
	if w.err != nil {
		return dst, w.err
	}
	return w.b, nil
}
