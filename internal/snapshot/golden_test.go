package snapshot

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readHex reads a hex file of testdata/: '#' starts a comment, white space
// is ignored.
func readHex(t testing.TB, name string) []byte {
	t.Helper()
	return golden.ReadFile(t, filepath.Join("testdata", name))
}

// goldenTwo are the entries of testdata/two-entries.hex.
var goldenTwo = []Entry{
	{ProducerID: 1000, ProducerEpoch: 0, LastSequence: 4, LastOffset: 41, OffsetDelta: 4,
		Timestamp: 1700000000000, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
	{ProducerID: 1001, ProducerEpoch: 3, LastSequence: 9, LastOffset: 99, OffsetDelta: 9,
		Timestamp: 1700000000500, CoordinatorEpoch: 7, CurrentTxnFirstOffset: 90},
}

// TestGolden compares Encode's bytes with the hand-built files in testdata/
// (see testdata/README), checks their CRC with hash/crc32 independently of
// package crc, and decodes them back.
func TestGolden(t *testing.T) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for _, tc := range []struct {
		file    string
		entries []Entry
		size    int
	}{
		{file: "empty.hex", entries: []Entry{}, size: 10},
		{file: "two-entries.hex", entries: goldenTwo, size: 102},
	} {
		t.Run(tc.file, func(t *testing.T) {
			golden := readHex(t, tc.file)
			require.Len(t, golden, tc.size)
			require.Equal(t, crc32.Checksum(golden[6:], castagnoli), binary.BigEndian.Uint32(golden[2:6]),
				"the file's CRC is CRC-32C of bytes [6, EOF)")

			assert.Equal(t, hex.EncodeToString(golden), hex.EncodeToString(Encode(nil, tc.entries)))
			prefix := []byte("prefix")
			assert.Equal(t, append([]byte("prefix"), golden...), Encode(prefix, tc.entries), "appends to dst")

			got, err := Decode(golden)
			require.NoError(t, err)
			assert.Equal(t, tc.entries, got)
		})
	}
}
