package index

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanIndexAndToRelative(t *testing.T) {
	tests := []struct {
		name       string
		base, off  int64
		want       RelativeOffset
		overflowed bool
	}{
		{name: "base itself", base: 100, off: 100, want: 0},
		{name: "inside", base: 100, off: 150, want: 50},
		{name: "largest", base: 100, off: 100 + math.MaxInt32, want: MaxRelativeOffset},
		{name: "one past largest", base: 100, off: 101 + math.MaxInt32, overflowed: true},
		{name: "below base", base: 100, off: 99, overflowed: true},
		{name: "zero base", base: 0, off: math.MaxInt32, want: MaxRelativeOffset},
		{name: "hostile min", base: math.MaxInt64, off: math.MinInt64, overflowed: true},
		{name: "hostile max", base: math.MinInt64, off: math.MaxInt64, overflowed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, !tc.overflowed, CanIndex(tc.base, tc.off))
			rel, err := ToRelative(tc.base, tc.off)
			if tc.overflowed {
				require.ErrorIs(t, err, ErrOffsetOverflow)
				var oe *OffsetOverflowError
				require.True(t, errors.As(err, &oe))
				assert.Equal(t, tc.base, oe.BaseOffset)
				assert.Equal(t, tc.off, oe.Offset)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, rel)
			assert.Equal(t, tc.off, rel.Absolute(tc.base))
		})
	}
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "+42", RelativeOffset(42).String())
	assert.Equal(t, "@4096", Position(4096).String())
	assert.Equal(t, "1042@4096", OffsetPosition{Offset: 1042, Position: 4096}.String())
	assert.Equal(t, "-1:1000", TimestampOffset{Timestamp: NoTimestamp, Offset: 1000}.String())
	assert.Equal(t, "ReadOnly", ReadOnly.String())
	assert.Equal(t, "ReadWrite", ReadWrite.String())
	assert.Equal(t, "Mode(7)", Mode(7).String())
	assert.Equal(t,
		"AbortedTxn(producerId=7, firstOffset=10, lastOffset=20, lastStableOffset=21)",
		AbortedTxn{ProducerID: 7, FirstOffset: 10, LastOffset: 20, LastStableOffset: 21}.String())

	err := &CorruptIndexError{File: "x.index", Reason: "why"}
	assert.Equal(t, "index: corrupt index x.index: why", err.Error())
	assert.ErrorIs(t, err, ErrCorruptIndex)
	oe := &OffsetOverflowError{File: "x.index", BaseOffset: 1, Offset: 0}
	assert.Equal(t, "index: offset 0 overflows a relative offset from base offset 1 (x.index)", oe.Error())
}
