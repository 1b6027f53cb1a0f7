package record

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVarints checks the encoders against known encodings (0, -1, 1, -64,
// 64, 300 and the int32 limits) and the decoders against encoding/binary
// within Kafka's limits.
func TestVarints(t *testing.T) {
	examples := []struct {
		v    int32
		want []byte
	}{
		{0, []byte{0x00}}, {-1, []byte{0x01}}, {1, []byte{0x02}}, {-64, []byte{0x7f}}, {64, []byte{0x80, 0x01}}, {300, []byte{0xd8, 0x04}},
		{math.MaxInt32, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}}, {math.MinInt32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, ex := range examples {
		require.Equal(t, ex.want, appendVarint(nil, ex.v), "%d", ex.v)
		require.Equal(t, len(ex.want), varintLen(ex.v))
		got, next, ok := readVarint(ex.want, 0)
		require.True(t, ok)
		require.Equal(t, ex.v, got)
		require.Equal(t, len(ex.want), next)
	}
	for _, v := range []int32{0, 1, -1, 63, -64, 64, -65, 8191, 8192, -8193, 1 << 20, math.MaxInt32, math.MinInt32} {
		b := appendVarint(nil, v)
		want, n := binary.Varint(b)
		require.Equal(t, int64(v), want)
		got, next, ok := readVarint(append(b, 0xff), 0) // a following byte must not be read
		require.True(t, ok)
		require.Equal(t, v, got)
		require.Equal(t, n, next)
	}
	for _, v := range []int64{0, -1, 1 << 40, math.MaxInt64, math.MinInt64} {
		b := appendVarlong(nil, v)
		require.Equal(t, len(b), varlongLen(v))
		got, next, ok := readVarlong(b, 0)
		require.True(t, ok)
		require.Equal(t, v, got)
		require.Equal(t, len(b), next)
	}
	bad := [][]byte{
		{}, {0x80}, {0x80, 0x80}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, // short, unterminated, 6 bytes
		{0xff, 0xff, 0xff, 0xff, 0x10}, // bits past 32
	}
	for _, b := range bad {
		_, _, ok := readVarint(b, 0)
		require.False(t, ok, "%x", b)
	}
	_, _, ok := readVarint([]byte{0x80, 0x00}, 0)
	require.True(t, ok, "non-minimal encodings are accepted, as Kafka accepts them")
	_, _, ok = readVarlong([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, 0)
	require.False(t, ok, "a 10th byte above 1 overflows 64 bits")
	_, _, ok = readVarlong([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0)
	require.False(t, ok, "11 bytes")
}
