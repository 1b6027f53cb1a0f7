package wire

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var errTest = errors.New("test: value not representable")

// TestRoundTrip writes every primitive in both encodings and reads it back.
func TestRoundTrip(t *testing.T) {
	for _, flexible := range []bool{false, true} {
		w := Writer{What: "S", Invalid: errTest}
		s := "héllo"
		w.Int8(-3)
		w.Int16(-300)
		w.Int32(-70000)
		w.Int64(math.MinInt64)
		w.Uvarint(math.MaxUint32)
		w.String("s", "abc", flexible)
		w.NullableString("n", nil, flexible)
		w.NullableString("m", &s, flexible)
		w.Bytes("b", nil, flexible, true)
		w.Bytes("e", nil, flexible, false)
		w.Bytes("c", []byte{1, 2}, flexible, false)
		w.Int32Array("a", []int32{1, -1}, flexible)
		w.ArrayLen("null", -1, flexible)
		w.NoTaggedFields()
		out, err := w.Finish(nil)
		require.NoError(t, err)

		r := NewReader(out, "S")
		require.Equal(t, int8(-3), r.Int8("i8"))
		require.Equal(t, int16(-300), r.Int16("i16"))
		require.Equal(t, int32(-70000), r.Int32("i32"))
		require.Equal(t, int64(math.MinInt64), r.Int64("i64"))
		require.Equal(t, uint32(math.MaxUint32), r.Uvarint("u"))
		require.Equal(t, "abc", r.String("s", flexible))
		require.Nil(t, r.NullableString("n", flexible))
		require.Equal(t, &s, r.NullableString("m", flexible))
		require.Nil(t, r.Bytes("b", flexible, true))
		require.Equal(t, []byte{}, r.Bytes("e", flexible, false))
		require.Equal(t, []byte{1, 2}, r.Bytes("c", flexible, false))
		require.Equal(t, []int32{1, -1}, r.Int32Array("a", flexible))
		require.Equal(t, -1, r.ArrayLen("null", flexible, true, 1))
		r.TaggedFields(nil)
		require.True(t, r.OK(), "%+v", r.Err)
		require.Zero(t, r.Remaining())
	}
}

// TestReaderFailures: each malformed input fails with a Failure naming the
// field and the byte where it starts; the first failure sticks.
func TestReaderFailures(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		read   func(r *Reader)
		what   string
		offset int
		reason string
	}{
		{"short int32", []byte{0, 1}, func(r *Reader) { r.Int32("x") }, "S: x", 0, "needs 4 bytes, 2 left"},
		{"uvarint too long", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0}, func(r *Reader) { r.Uvarint("u") }, "S: u", 0, "longer than 5 bytes"},
		{"uvarint over 32 bits", []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, func(r *Reader) { r.Uvarint("u") }, "S: u", 0, "does not fit in 32 bits"},
		{"negative length", []byte{0xff, 0xfe}, func(r *Reader) { r.String("s", false) }, "S: s", 0, "negative length -2"},
		{"null string", []byte{0xff, 0xff}, func(r *Reader) { r.String("s", false) }, "S: s", 0, "null (length -1)"},
		{"string past the end", []byte{0, 5, 'a'}, func(r *Reader) { r.String("s", false) }, "S: s", 0, "past the end"},
		{"null array", []byte{0}, func(r *Reader) { r.ArrayLen("a", true, false, 1) }, "S: a", 0, "null (count 0)"},
		{"array count too large", []byte{0, 0, 0, 9, 1, 2}, func(r *Reader) { r.Int32Array("a", false) }, "S: a", 0, "array count 9 needs at least 36 bytes"},
		{"tagged field past the end", []byte{1, 0, 9}, func(r *Reader) { r.TaggedFields(nil) }, "S: taggedFields", 2, "size 9 past the end"},
		{"element field", []byte{0}, func(r *Reader) { r.Arr, r.Idx = "members", 2; r.Int16("host") }, "S: members[2].host", 0, "needs 2 bytes"},
		{"first failure sticks", []byte{0}, func(r *Reader) { r.Int16("a"); r.Int8("b"); r.FailAt(0, "c", "later") }, "S: a", 0, "needs 2 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(tc.in, "S")
			tc.read(&r)
			require.False(t, r.OK())
			require.Equal(t, tc.what, r.Err.What)
			require.Equal(t, tc.offset, r.Err.Offset)
			require.Contains(t, r.Err.Reason, tc.reason)
			require.False(t, r.Err.UnsupportedVersion)
		})
	}
	r := NewReader([]byte{0, 9}, "S")
	r.FailVersion(r.Int16("version"), "0-3")
	require.True(t, r.Err.UnsupportedVersion)
	require.Equal(t, "S: version", r.Err.What)
}

// TestWriterFailures: a string over Kafka's limit is refused with the
// codec's sentinel, the field's name, and nothing appended.
func TestWriterFailures(t *testing.T) {
	w := Writer{B: []byte("keep"), What: "S", Arr: "topics", Idx: 1, Invalid: errTest}
	w.String("name", strings.Repeat("x", MaxStringLen+1), true)
	w.String("later", "y", true)
	out, err := w.Finish([]byte("keep"))
	require.ErrorIs(t, err, errTest)
	require.Contains(t, err.Error(), "S.topics[1].name: string of 32768 bytes")
	require.Equal(t, []byte("keep"), out)
}
