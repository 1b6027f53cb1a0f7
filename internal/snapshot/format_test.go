package snapshot

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/crc"
)

// requireCorrupt checks that err is a *CorruptError matching ErrCorrupt
// whose reason contains want.
func requireCorrupt(t *testing.T, err error, want string) {
	t.Helper()
	require.ErrorIs(t, err, ErrCorrupt)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Reason, want)
}

// resum rewrites b's CRC so that only the rule under test is broken.
func resum(b []byte) []byte {
	binary.BigEndian.PutUint32(b[crcOffset:], crc.Checksum(b[countOffset:]))
	return b
}

func TestDecodeErrors(t *testing.T) {
	two := func() []byte { return Encode(nil, goldenTwo) }
	for _, tc := range []struct {
		name string
		data func() []byte
		want string
	}{
		{name: "empty input", data: func() []byte { return nil }, want: "0 bytes, shorter than the 10-byte header"},
		{name: "short header", data: func() []byte { return two()[:9] }, want: "9 bytes, shorter"},
		{name: "version 0", data: func() []byte {
			b := two()
			b[1] = 0
			return b
		}, want: "unknown version 0"},
		{name: "version 2", data: func() []byte {
			b := two()
			b[1] = 2
			return b
		}, want: "unknown version 2"},
		{name: "version -1", data: func() []byte {
			b := two()
			b[0], b[1] = 0xff, 0xff
			return b
		}, want: "unknown version -1"},
		{name: "bad CRC", data: func() []byte {
			b := two()
			b[2] ^= 0x01
			return b
		}, want: "CRC mismatch"},
		{name: "flipped entry bit", data: func() []byte {
			b := two()
			b[60] ^= 0x80
			return b
		}, want: "CRC mismatch"},
		{name: "torn: last entry cut", data: func() []byte { return two()[:80] }, want: "CRC mismatch"},
		{name: "count larger than bytes", data: func() []byte {
			b := two()
			binary.BigEndian.PutUint32(b[countOffset:], 3)
			return resum(b)
		}, want: "entry count 3, but only 92 bytes of entries (2 entries)"},
		{name: "huge count, no entries", data: func() []byte {
			b := Encode(nil, nil)
			binary.BigEndian.PutUint32(b[countOffset:], math.MaxInt32)
			return resum(b)
		}, want: "entry count 2147483647, but only 0 bytes"},
		{name: "negative count", data: func() []byte {
			b := two()
			binary.BigEndian.PutUint32(b[countOffset:], 0xffffffff)
			return resum(b)
		}, want: "negative entry count -1"},
		{name: "count smaller than bytes", data: func() []byte {
			b := two()
			binary.BigEndian.PutUint32(b[countOffset:], 1)
			return resum(b)
		}, want: "46 trailing bytes after 1 entries"},
		{name: "trailing byte", data: func() []byte { return resum(append(two(), 0)) }, want: "1 trailing bytes after 2 entries"},
		{name: "partial entry", data: func() []byte { return resum(two()[:100]) }, want: "entry count 2, but only 90 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.data())
			requireCorrupt(t, err, tc.want)
			assert.Nil(t, got)
			assert.Contains(t, err.Error(), "snapshot: corrupt producer snapshot: ")
		})
	}
}

func TestRoundTrip(t *testing.T) {
	extremes := Entry{
		ProducerID: math.MaxInt64, ProducerEpoch: math.MaxInt16, LastSequence: math.MaxInt32,
		LastOffset: math.MaxInt64, OffsetDelta: math.MaxInt32, Timestamp: math.MaxInt64,
		CoordinatorEpoch: math.MaxInt32, CurrentTxnFirstOffset: math.MaxInt64,
	}
	negative := Entry{
		ProducerID: math.MinInt64, ProducerEpoch: math.MinInt16, LastSequence: math.MinInt32,
		LastOffset: math.MinInt64, OffsetDelta: math.MinInt32, Timestamp: math.MinInt64,
		CoordinatorEpoch: math.MinInt32, CurrentTxnFirstOffset: math.MinInt64,
	}
	noBatch := Entry{ProducerID: 5, ProducerEpoch: 1, LastSequence: -1, LastOffset: -1, Timestamp: 1,
		CoordinatorEpoch: 2, CurrentTxnFirstOffset: -1} // only a marker left
	many := make([]Entry, 1000)
	for i := range many {
		many[i] = Entry{ProducerID: int64(i), ProducerEpoch: int16(i % 7), LastSequence: int32(i * 3),
			LastOffset: int64(i * 10), OffsetDelta: int32(i % 5), Timestamp: int64(i) << 20,
			CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
	}
	for _, tc := range []struct {
		name    string
		entries []Entry
	}{
		{"none", []Entry{}},
		{"golden", goldenTwo},
		{"unsorted order kept", []Entry{goldenTwo[1], goldenTwo[0]}},
		{"extremes", []Entry{extremes, negative, noBatch}},
		{"1000 producers", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Encode(nil, tc.entries)
			require.Len(t, b, headerLen+entryLen*len(tc.entries))
			got, err := Decode(b)
			require.NoError(t, err)
			require.Equal(t, tc.entries, got)
			require.Equal(t, b, Encode(nil, got))
		})
	}
}

func TestDecodeNilEntriesIsEmpty(t *testing.T) {
	got, err := Decode(Encode(nil, nil))
	require.NoError(t, err)
	require.NotNil(t, got)
	require.Empty(t, got)
}
