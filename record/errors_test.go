package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/internal/crc"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// fixCRC recomputes the CRC after a test edited a batch, so that the decoder
// reaches the damage past the CRC check.
func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[offCRC:], crc.Checksum(b[offAttributes:]))
	return b
}

// setLength rewrites batchLength to match len(b).
func setLength(b []byte) []byte {
	binary.BigEndian.PutUint32(b[offBatchLength:], uint32(len(b)-LogOverhead))
	return b
}

func oneRecordBatch(t *testing.T) []byte {
	t.Helper()
	b, err := AppendBatch(nil, producerHeader(), DefaultLevel, []Record{{Timestamp: 1, Key: []byte("k"), Value: []byte("v")}})
	require.NoError(t, err)
	return b
}

// withRecords builds a batch header for n records around a raw records
// section, with lengths and CRC right.
func withRecords(t *testing.T, n int32, section []byte) []byte {
	t.Helper()
	b := append(oneRecordBatch(t)[:BatchHeaderLen:BatchHeaderLen], section...)
	binary.BigEndian.PutUint32(b[offRecordsCount:], uint32(n))
	return fixCRC(setLength(b))
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		batch   func(t *testing.T) []byte
		want    error
		corrupt bool // also matches ErrCorrupt
	}{
		{"empty input", func(t *testing.T) []byte { return nil }, ErrTruncated, false},
		{"16 bytes", func(t *testing.T) []byte { return oneRecordBatch(t)[:16] }, ErrTruncated, false},
		{"header cut", func(t *testing.T) []byte { return oneRecordBatch(t)[:40] }, ErrTruncated, false},
		{"records cut", func(t *testing.T) []byte { b := oneRecordBatch(t); return b[:len(b)-1] }, ErrTruncated, false},
		{"trailing bytes after batch", func(t *testing.T) []byte { return append(oneRecordBatch(t), 0) }, ErrTrailingBytes, true},
		{"zero filled", func(t *testing.T) []byte { return make([]byte, 70) }, ErrBadLength, true},
		{"legacy length with magic 1", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			b[offMagic] = 1
			binary.BigEndian.PutUint32(b[offBatchLength:], 20)
			return b
		}, ErrUnsupportedMagic, true},
		{"magic 1", func(t *testing.T) []byte { b := oneRecordBatch(t); b[offMagic] = 1; return b }, ErrUnsupportedMagic, true},
		{"magic 0", func(t *testing.T) []byte { b := oneRecordBatch(t); b[offMagic] = 0; return b }, ErrUnsupportedMagic, true},
		{"magic 3", func(t *testing.T) []byte { b := oneRecordBatch(t); b[offMagic] = 3; return b }, ErrUnsupportedMagic, true},
		{"length below minimum", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			binary.BigEndian.PutUint32(b[offBatchLength:], 48)
			return b
		}, ErrBadLength, true},
		{"negative length", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			binary.BigEndian.PutUint32(b[offBatchLength:], 0xffffffff)
			return b
		}, ErrBadLength, true},
		{"huge length", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			binary.BigEndian.PutUint32(b[offBatchLength:], 1<<31-1)
			return b
		}, ErrTruncated, false},
		{"bad CRC", func(t *testing.T) []byte { b := oneRecordBatch(t); b[len(b)-2] ^= 1; return b }, ErrCRC, true},
		{"unknown codec", func(t *testing.T) []byte { b := oneRecordBatch(t); b[offAttributes+1] |= 5; return fixCRC(b) }, ErrUnknownCodec, true},
		{"negative count", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			binary.BigEndian.PutUint32(b[offRecordsCount:], 0xffffffff)
			return fixCRC(b)
		}, ErrRecordCount, true},
		{"count too high", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			binary.BigEndian.PutUint32(b[offRecordsCount:], 2)
			return fixCRC(b)
		}, ErrRecordCount, true},
		{"count too low", func(t *testing.T) []byte {
			b := oneRecordBatch(t)
			binary.BigEndian.PutUint32(b[offRecordsCount:], 0)
			return fixCRC(b)
		}, ErrTrailingBytes, true},
		{"overlong varint", func(t *testing.T) []byte {
			return withRecords(t, 1, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
		}, ErrVarint, true},
		{"varint past 32 bits", func(t *testing.T) []byte {
			return withRecords(t, 1, []byte{0xff, 0xff, 0xff, 0xff, 0x1f})
		}, ErrVarint, true},
		{"record length past section", func(t *testing.T) []byte { return withRecords(t, 1, []byte{0x20, 0, 0, 0}) }, ErrBadRecord, true},
		{"negative record length", func(t *testing.T) []byte { return withRecords(t, 1, []byte{0x03, 0, 0, 0}) }, ErrBadRecord, true},
		{"empty record body", func(t *testing.T) []byte { return withRecords(t, 1, []byte{0x00}) }, ErrBadRecord, true},
		{"record length longer than fields", func(t *testing.T) []byte {
			// length 9 but the fields (as in the worked example) take 8
			return withRecords(t, 1, []byte{0x12, 0, 0, 0, 2, 'k', 2, 'v', 0, 0})
		}, ErrBadRecord, true},
		{"record length shorter than fields", func(t *testing.T) []byte {
			return withRecords(t, 1, []byte{0x0e, 0, 0, 0, 2, 'k', 2, 'v', 0})
		}, ErrVarint, true}, // the header count lies outside the declared length
		{"key length -2", func(t *testing.T) []byte { return withRecords(t, 1, []byte{0x0a, 0, 0, 0, 3, 2, 'v', 0}) }, ErrBadRecord, true},
		{"negative header count", func(t *testing.T) []byte {
			return withRecords(t, 1, []byte{0x10, 0, 0, 0, 2, 'k', 2, 'v', 1})
		}, ErrBadRecord, true},
		{"header flood", func(t *testing.T) []byte {
			// claims 1,000,000 headers in a 10-byte record
			return withRecords(t, 1, []byte{0x14, 0, 0, 0, 2, 'k', 2, 'v', 0x80, 0x89, 0x7a})
		}, ErrBadRecord, true},
		{"null header key", func(t *testing.T) []byte {
			return withRecords(t, 1, []byte{0x14, 0, 0, 0, 2, 'k', 2, 'v', 2, 1, 1})
		}, ErrBadRecord, true},
		{"garbage gzip", func(t *testing.T) []byte {
			b := withRecords(t, 1, []byte("this is not gzip"))
			b[offAttributes+1] |= byte(Gzip)
			return fixCRC(b)
		}, ErrCompression, true},
		{"garbage snappy", func(t *testing.T) []byte {
			b := withRecords(t, 1, []byte{0x10, 0xff, 0xff, 0xff, 0x0f, 1, 2})
			b[offAttributes+1] |= byte(Snappy)
			return fixCRC(b)
		}, ErrCompression, true},
		{"garbage lz4", func(t *testing.T) []byte {
			b := withRecords(t, 1, []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00, 1, 2, 3})
			b[offAttributes+1] |= byte(LZ4)
			return fixCRC(b)
		}, ErrCompression, true},
		{"garbage zstd", func(t *testing.T) []byte {
			b := withRecords(t, 1, []byte{0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff})
			b[offAttributes+1] |= byte(Zstd)
			return fixCRC(b)
		}, ErrCompression, true},
		{"empty snappy section", func(t *testing.T) []byte {
			b := withRecords(t, 1, nil)
			b[offAttributes+1] |= byte(Snappy)
			return fixCRC(b)
		}, ErrCompression, true},
		{"xerial chunk past end", func(t *testing.T) []byte {
			section := append(append([]byte{}, xerialMagic[:]...), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 5)
			b := withRecords(t, 1, section)
			b[offAttributes+1] |= byte(Snappy)
			return fixCRC(b)
		}, ErrCompression, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.batch(t)
			r := NewReader(ReaderOptions{})
			err := r.Reset(b)
			if err == nil {
				for r.Next() {
				}
				err = r.Err()
			}
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, tc.corrupt, errors.Is(err, ErrCorrupt), "ErrCorrupt match: %v", err)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			require.NotEmpty(t, ce.Error())
		})
	}
}

func TestSkipCRC(t *testing.T) {
	b := oneRecordBatch(t)
	b[offCRC] ^= 0xff
	r := NewReader(ReaderOptions{SkipCRC: true})
	require.NoError(t, r.Reset(b))
	require.True(t, r.Next())
	require.ErrorIs(t, NewReader(ReaderOptions{}).Reset(b), ErrCRC)
}

func TestBatchSize(t *testing.T) {
	b := oneRecordBatch(t)
	n, err := BatchSize(b[:HeaderSizeUpToMagic])
	require.NoError(t, err)
	require.Equal(t, len(b), n)
	_, err = BatchSize(b[:16])
	require.ErrorIs(t, err, ErrTruncated)
	b[offMagic] = 1
	_, err = BatchSize(b)
	require.ErrorIs(t, err, ErrUnsupportedMagic)
}

// TestDecompressionBomb: batches whose records section expands past the
// limit fail with ErrTooLarge for every codec, without allocating the
// expansion.
func TestDecompressionBomb(t *testing.T) {
	const limit = 1 << 20
	huge := bytes.Repeat([]byte{'a'}, 8<<20)
	for _, c := range []Compression{Gzip, Snappy, LZ4, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			h := producerHeader()
			h.Attributes = h.Attributes.WithCompression(c)
			batch, err := AppendBatch(nil, h, DefaultLevel, []Record{{Timestamp: 1, Value: huge}})
			require.NoError(t, err)
			require.Less(t, len(batch), len(huge)/10)

			r := NewReader(ReaderOptions{MaxDecompressedBytes: limit})
			err = r.Reset(batch)
			require.ErrorIs(t, err, ErrTooLarge)
			require.False(t, errors.Is(err, ErrCorrupt))
			require.LessOrEqual(t, cap(r.buf), 2*limit+(256<<10), "decompression buffer stayed near the limit")

			big := NewReader(ReaderOptions{MaxDecompressedBytes: 16 << 20})
			require.NoError(t, big.Reset(batch), "a larger limit reads it")
		})
	}
}

// TestGzipMultiMember: concatenated gzip members are one stream, as Java's
// GZIPInputStream reads them.
func TestGzipMultiMember(t *testing.T) {
	var raw []byte
	want := []Record{{Timestamp: 5, Key: []byte("a"), Value: []byte("1")}, {OffsetDelta: 1, Offset: 1, Timestamp: 6, Key: []byte("b"), Value: []byte("2")}}
	for _, r := range want {
		raw = appendRecord(raw, encodedBodyLen(r.OffsetDelta, r.Timestamp-5, r.Key, r.Value, nil), r.OffsetDelta, r.Timestamp-5, r.Key, r.Value, nil)
	}
	var section bytes.Buffer
	for _, part := range [][]byte{raw[:5], raw[5:]} {
		w := gzip.NewWriter(&section)
		_, err := w.Write(part)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}
	b := withRecords(t, 2, section.Bytes())
	binary.BigEndian.PutUint64(b[offBaseTimestamp:], 5)
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 1)
	b[offAttributes+1] |= byte(Gzip)
	_, got := decodeAll(t, fixCRC(b))
	requireSameRecords(t, want, got)
}

func TestCorruptErrorText(t *testing.T) {
	err := NewReader(ReaderOptions{}).Reset([]byte(strings.Repeat("x", 20)))
	require.ErrorIs(t, err, ErrUnsupportedMagic)
	require.Contains(t, err.Error(), "position 16")
}

// TestZstdWithoutContentSize: a zstd stream that does not state its content
// size (as Java's streaming writer leaves it) is bounded by the limit too,
// and one that fits decodes whatever its window.
func TestZstdWithoutContentSize(t *testing.T) {
	raw := appendRecord(nil, encodedBodyLen(0, 0, nil, bytes.Repeat([]byte("z"), 4<<20), nil), 0, 0, nil, bytes.Repeat([]byte("z"), 4<<20), nil)
	var section bytes.Buffer
	w, err := zstd.NewWriter(&section, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	require.NoError(t, err)
	_, err = w.Write(raw)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	var fh zstd.Header
	require.NoError(t, fh.Decode(section.Bytes()))
	require.False(t, fh.HasFCS, "streaming writes no content size")

	b := withRecords(t, 1, section.Bytes())
	b[offAttributes+1] |= byte(Zstd)
	b = fixCRC(b)
	err = NewReader(ReaderOptions{MaxDecompressedBytes: 1 << 20}).Reset(b)
	require.ErrorIs(t, err, ErrTooLarge)
	require.NoError(t, NewReader(ReaderOptions{MaxDecompressedBytes: 5 << 20}).Reset(b))
}
