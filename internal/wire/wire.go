// Package wire holds the primitive encodings of Kafka's generated message
// schemas (the code Kafka's MessageDataGenerator generates) that
// kafkalite's codecs for the internal topics share: groupcodec
// (__consumer_offsets, the consumer protocol) and txncodec
// (__transaction_state). Fixed-size big-endian integers, Kafka's
// unsigned varints, lengths and counts in their flexible (uvarint(n+1)) and
// non-flexible (int16 or int32, -1 for null) forms, strings, bytes, int32
// arrays and tagged-field sections.
//
// A [Reader] and a [Writer] keep their first error and ignore everything
// after it, so that a codec reads or writes a whole structure and checks
// once. A Reader's error is a [Failure], which each codec turns into its
// own error type; a Writer's wraps the codec's sentinel ([Writer.Invalid]).
package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Limits of the wire format; they must not change.
const (
	// MaxStringLen is the longest string Kafka writes or reads: its
	// generated code refuses longer strings in every version, flexible or
	// not, because the non-flexible length prefix is an int16.
	MaxStringLen = math.MaxInt16
	// MaxUvarintLen is the longest unsigned varint Kafka reads for a
	// length, count or tag (an int in Java): 5 bytes.
	MaxUvarintLen = 5
)

// Failure describes the first problem a [Reader] found.
type Failure struct {
	// What names the structure, its version once known and the field:
	// "GroupMetadataValue v3: members[1].clientHost".
	What string
	// Offset is the byte position, from the start of the Reader's input,
	// where the offending field starts.
	Offset int
	// Reason says which rule is broken, with the values found.
	Reason string
	// UnsupportedVersion is set when the problem is the version prefix.
	UnsupportedVersion bool
}

// Reader decodes one structure from B. The first failure is sticky: after
// it every read returns zero values and OK reports false.
type Reader struct {
	B    []byte
	Pos  int
	Name string // the structure, for errors: "OffsetCommitValue"
	Ver  int    // its version once read, for errors; -1 before
	Arr  string // the array whose element is being read, for errors
	Idx  int    // the element's index in Arr
	Err  *Failure
}

// NewReader returns a Reader of b, a structure called name.
func NewReader(b []byte, name string) Reader { return Reader{B: b, Name: name, Ver: -1} }

// OK reports whether nothing failed yet.
func (r *Reader) OK() bool { return r.Err == nil }

// Remaining returns the bytes left to read.
func (r *Reader) Remaining() int { return len(r.B) - r.Pos }

// FailAt records the first failure, at byte at, about field (empty when
// the problem is not one field's).
func (r *Reader) FailAt(at int, field, format string, args ...any) {
	if r.Err != nil {
		return
	}
	what := r.Name
	if r.Ver >= 0 {
		what += " v" + strconv.Itoa(r.Ver)
	}
	if field != "" {
		if r.Arr != "" {
			field = fmt.Sprintf("%s[%d].%s", r.Arr, r.Idx, field)
		}
		what += ": " + field
	}
	r.Err = &Failure{What: what, Offset: at, Reason: fmt.Sprintf(format, args...)}
}

// FailVersion fails on the version prefix at byte 0; readable says which
// versions Kafka reads.
func (r *Reader) FailVersion(v int16, readable string) {
	if r.Err != nil {
		return
	}
	r.FailAt(0, "version", "version %d is not one Kafka reads (%s)", v, readable)
	r.Err.UnsupportedVersion = true
}

// need reports whether n more bytes are present, failing if not.
func (r *Reader) need(field string, n int) bool {
	if r.Err != nil {
		return false
	}
	if r.Remaining() < n {
		r.FailAt(r.Pos, field, "needs %d bytes, %d left", n, r.Remaining())
		return false
	}
	return true
}

// Int8 reads an int8.
func (r *Reader) Int8(field string) int8 {
	if !r.need(field, 1) {
		return 0
	}
	v := int8(r.B[r.Pos])
	r.Pos++
	return v
}

// Int16 reads a big-endian int16.
func (r *Reader) Int16(field string) int16 {
	if !r.need(field, 2) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.B[r.Pos:]))
	r.Pos += 2
	return v
}

// Int32 reads a big-endian int32.
func (r *Reader) Int32(field string) int32 {
	if !r.need(field, 4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.B[r.Pos:]))
	r.Pos += 4
	return v
}

// Int64 reads a big-endian int64.
func (r *Reader) Int64(field string) int64 {
	if !r.need(field, 8) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.B[r.Pos:]))
	r.Pos += 8
	return v
}

// Uvarint reads Kafka's unsigned varint: at most 5 bytes, value at most
// 2^32-1.
func (r *Reader) Uvarint(field string) uint32 {
	if r.Err != nil {
		return 0
	}
	start := r.Pos
	var v uint64
	for i := range MaxUvarintLen {
		if r.Pos >= len(r.B) {
			r.FailAt(start, field, "unsigned varint runs past the end")
			return 0
		}
		c := r.B[r.Pos]
		r.Pos++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if v > math.MaxUint32 {
				r.FailAt(start, field, "unsigned varint %d does not fit in 32 bits", v)
				return 0
			}
			return uint32(v)
		}
	}
	r.FailAt(start, field, "unsigned varint longer than %d bytes", MaxUvarintLen)
	return 0
}

// Length reads a string, bytes or array length: an int16 (short) or int32
// in non-flexible versions, uvarint(n+1) in flexible ones. It returns -1
// for null; any other negative value fails.
func (r *Reader) Length(field string, flexible, short bool) int {
	start := r.Pos
	var n int
	switch {
	case flexible:
		n = int(int64(r.Uvarint(field)) - 1)
	case short:
		n = int(r.Int16(field))
	default:
		n = int(r.Int32(field))
	}
	if r.Err != nil {
		return 0
	}
	if n < -1 {
		r.FailAt(start, field, "negative length %d", n)
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

// Str reads a string. A null fails unless nullable; isNull reports one.
// Strings are Go strings of the stored bytes, not checked as UTF-8.
func (r *Reader) Str(field string, flexible, nullable bool) (s string, isNull bool) {
	start := r.Pos
	n := r.Length(field, flexible, true)
	switch {
	case r.Err != nil:
		return "", false
	case n == -1:
		if !nullable {
			r.FailAt(start, field, "null (length %s) in a non-nullable string", nullMark(flexible))
		}
		return "", true
	case n > MaxStringLen:
		r.FailAt(start, field, "string length %d over Kafka's limit of %d", n, MaxStringLen)
		return "", false
	case n > r.Remaining():
		r.FailAt(start, field, "string length %d past the end (%d bytes left)", n, r.Remaining())
		return "", false
	}
	s = string(r.B[r.Pos : r.Pos+n])
	r.Pos += n
	return s, false
}

// String reads a non-nullable string.
func (r *Reader) String(field string, flexible bool) string {
	s, _ := r.Str(field, flexible, false)
	return s
}

// NullableString reads a nullable string: nil for null.
func (r *Reader) NullableString(field string, flexible bool) *string {
	s, isNull := r.Str(field, flexible, true)
	if isNull || r.Err != nil {
		return nil
	}
	return &s
}

// Bytes reads a byte field into a new slice (never aliasing the input). A
// null fails unless nullable, which returns nil; an empty field is a
// non-nil empty slice.
func (r *Reader) Bytes(field string, flexible, nullable bool) []byte {
	start := r.Pos
	n := r.Length(field, flexible, false)
	switch {
	case r.Err != nil:
		return nil
	case n == -1:
		if !nullable {
			r.FailAt(start, field, "null (length %s) in non-nullable bytes", nullMark(flexible))
		}
		return nil
	case n > r.Remaining():
		r.FailAt(start, field, "bytes length %d past the end (%d bytes left)", n, r.Remaining())
		return nil
	}
	b := make([]byte, n)
	copy(b, r.B[r.Pos:])
	r.Pos += n
	return b
}

// ArrayLen reads an array's element count (-1 for null, which fails
// unless nullable) and checks that count elements of at least minElem
// bytes each fit in what is left, so that callers may allocate count
// elements without trusting the input.
func (r *Reader) ArrayLen(field string, flexible, nullable bool, minElem int) int {
	start := r.Pos
	n := r.Length(field, flexible, false)
	if r.Err != nil {
		return 0
	}
	if n == -1 {
		if !nullable {
			r.FailAt(start, field, "null (count %s) in a non-nullable array", nullMark(flexible))
			return 0
		}
		return -1
	}
	if int64(n)*int64(minElem) > int64(r.Remaining()) {
		r.FailAt(start, field, "array count %d needs at least %d bytes, %d left", n, int64(n)*int64(minElem), r.Remaining())
		return 0
	}
	return n
}

// Int32Array reads a non-nullable array of int32 (nil when empty).
func (r *Reader) Int32Array(field string, flexible bool) []int32 {
	n := r.ArrayLen(field, flexible, false, 4)
	if n <= 0 || r.Err != nil {
		return nil
	}
	a := make([]int32, n)
	for i := range a {
		a[i] = r.Int32(field)
	}
	return a
}

// TaggedFields reads a flexible structure's tagged-field section and calls
// fn (if not nil) for each field with its tag, the position of its data
// and the data (aliasing the input). fn may call FailAt. Unknown tags are
// fn's to skip; they are skipped by size.
func (r *Reader) TaggedFields(fn func(tag uint32, at int, data []byte)) {
	start := r.Pos
	count := r.Uvarint("taggedFields")
	if r.Err != nil {
		return
	}
	// Each field takes at least two bytes (tag and size).
	if int64(count)*2 > int64(r.Remaining()) {
		r.FailAt(start, "taggedFields", "%d tagged fields cannot fit in %d bytes", count, r.Remaining())
		return
	}
	for range count {
		tag := r.Uvarint("taggedFields")
		sizeAt := r.Pos
		size := r.Uvarint("taggedFields")
		if r.Err != nil {
			return
		}
		if int64(size) > int64(r.Remaining()) {
			r.FailAt(sizeAt, "taggedFields", "tag %d size %d past the end (%d bytes left)", tag, size, r.Remaining())
			return
		}
		at := r.Pos
		data := r.B[at : at+int(size)]
		r.Pos += int(size)
		if fn != nil {
			fn(tag, at, data)
		}
		if r.Err != nil {
			return
		}
	}
}

// Writer appends one structure to B. The first error is sticky; Finish
// then returns the caller's slice unchanged with the error.
type Writer struct {
	B       []byte
	What    string // the structure, for errors: "OffsetCommitValue"
	Arr     string // the array whose element is being written, for errors
	Idx     int    // the element's index in Arr
	Invalid error  // the codec's sentinel that errors wrap
	Err     error
}

// Fail records the first error, about field.
func (w *Writer) Fail(field, format string, args ...any) {
	if w.Err != nil {
		return
	}
	if w.Arr != "" {
		field = fmt.Sprintf("%s[%d].%s", w.Arr, w.Idx, field)
	}
	w.Err = fmt.Errorf("%w: %s.%s: %s", w.Invalid, w.What, field, fmt.Sprintf(format, args...))
}

// Int8 appends an int8.
func (w *Writer) Int8(v int8) { w.B = append(w.B, byte(v)) }

// Int16 appends a big-endian int16.
func (w *Writer) Int16(v int16) { w.B = binary.BigEndian.AppendUint16(w.B, uint16(v)) }

// Int32 appends a big-endian int32.
func (w *Writer) Int32(v int32) { w.B = binary.BigEndian.AppendUint32(w.B, uint32(v)) }

// Int64 appends a big-endian int64.
func (w *Writer) Int64(v int64) { w.B = binary.BigEndian.AppendUint64(w.B, uint64(v)) }

// Uvarint appends Kafka's unsigned varint.
func (w *Writer) Uvarint(v uint32) { w.B = binary.AppendUvarint(w.B, uint64(v)) }

// Length appends a length or count n (-1 for null) in the form Reader.Length
// reads.
func (w *Writer) Length(n int, flexible, short bool) {
	switch {
	case flexible:
		w.Uvarint(uint32(n + 1))
	case short:
		w.Int16(int16(n))
	default:
		w.Int32(int32(n))
	}
}

// String appends a string of at most MaxStringLen bytes.
func (w *Writer) String(field, s string, flexible bool) {
	if len(s) > MaxStringLen {
		w.Fail(field, "string of %d bytes over Kafka's limit of %d", len(s), MaxStringLen)
		return
	}
	w.Length(len(s), flexible, true)
	w.B = append(w.B, s...)
}

// NullableString appends s, nil as null.
func (w *Writer) NullableString(field string, s *string, flexible bool) {
	if s == nil {
		w.Length(-1, flexible, true)
		return
	}
	w.String(field, *s, flexible)
}

// Bytes appends b; nil is null when nullable and empty otherwise.
func (w *Writer) Bytes(field string, b []byte, flexible, nullable bool) {
	if b == nil && nullable {
		w.Length(-1, flexible, false)
		return
	}
	if int64(len(b)) >= math.MaxInt32 {
		w.Fail(field, "%d bytes over the limit of %d", len(b), math.MaxInt32-1)
		return
	}
	w.Length(len(b), flexible, false)
	w.B = append(w.B, b...)
}

// ArrayLen appends an array's count; n is -1 for null.
func (w *Writer) ArrayLen(field string, n int, flexible bool) {
	if int64(n) >= math.MaxInt32 {
		// uvarint(n+1) must fit in an int32 too.
		w.Fail(field, "%d elements over the limit of %d", n, math.MaxInt32-1)
		return
	}
	w.Length(n, flexible, false)
}

// Int32Array appends a non-nullable array of int32.
func (w *Writer) Int32Array(field string, a []int32, flexible bool) {
	w.ArrayLen(field, len(a), flexible)
	for _, v := range a {
		w.Int32(v)
	}
}

// NoTaggedFields appends an empty tagged-field section.
func (w *Writer) NoTaggedFields() { w.Uvarint(0) }

// Finish returns the appended bytes, or dst unchanged and the error.
func (w *Writer) Finish(dst []byte) ([]byte, error) {
	if w.Err != nil {
		return dst, w.Err
	}
	return w.B, nil
}
