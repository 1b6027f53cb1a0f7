package record

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// seedBatches adds every batch in testdata to a fuzz corpus.
func seedBatches(f *testing.F) {
	for _, b := range testdataBatches(f) {
		f.Add(b)
	}
}

// testdataBatches returns every batch in testdata: the worked example, the
// golden files and the interop fixtures.
func testdataBatches(f *testing.F) [][]byte {
	paths, _ := filepath.Glob("testdata/*.hex")
	more, _ := filepath.Glob("testdata/*/*.hex")
	var batches [][]byte
	for _, p := range append(paths, more...) {
		batches = append(batches, golden.ReadFile(f, p))
	}
	return batches
}

// FuzzDecode feeds arbitrary bytes to the decoder. Invariants:
//   - Reset and Next never panic and every failure is a typed error
//     (ErrCorrupt, ErrTruncated or ErrTooLarge);
//   - decoding is bounded (the reader's limit is 1 MiB here);
//   - Validate never panics either;
//   - a batch that decodes re-encodes to a batch that decodes to the same
//     header fields and records; re-encoding that again gives the same
//     bytes (the encoder's output is a fixed point), and for uncompressed
//     input whose encoding is canonical the bytes come back unchanged.
func FuzzDecode(f *testing.F) {
	seedBatches(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The CRC is checked apart, so that mutations reach the decoder
		// behind it.
		if _, err := Validate(data); err != nil {
			require.Truef(t, isTyped(err), "untyped error %v", err)
		}
		r := NewReader(ReaderOptions{MaxDecompressedBytes: 1 << 20, SkipCRC: true})
		h, recs, err := decodeFuzz(r, data)
		// Skim accepts exactly what Next accepts, record for record.
		if r.Reset(data) == nil {
			n := 0
			for _, _, _, ok := r.Skim(); ok; _, _, _, ok = r.Skim() {
				n++
			}
			require.Equal(t, err == nil, r.Err() == nil, "Skim and Next disagree: %v / %v", r.Err(), err)
			if err == nil {
				require.Len(t, recs, n)
			}
		}
		if err != nil {
			require.Truef(t, isTyped(err), "untyped error %v", err)
			return
		}
		// Kafka writes 0 as a record's attributes and so does the encoder:
		// that byte is the one field a re-encoding normalises.
		for i := range recs {
			recs[i].Attributes = 0
		}
		y, ok := reencode(t, h, recs)
		if !ok {
			return
		}
		h2, recs2, err := decodeFuzz(r, y)
		require.NoError(t, err)
		requireHeaderKept(t, h, h2)
		requireSameRecords(t, recs, recs2)
		z, ok := reencode(t, h2, recs2)
		require.True(t, ok)
		require.Equal(t, y, z, "the encoder's output is a fixed point")
	})
}

// FuzzRoundTrip builds a batch from fuzzed fields and checks that it decodes
// to exactly what was appended, for every codec.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(0), int64(1700000000000), int64(5), []byte("k"), []byte("v"), []byte("hk"), []byte("hv"), uint8(3), true)
	f.Add(uint8(4), int64(-1), int64(0), []byte(nil), []byte(nil), []byte(""), []byte(nil), uint8(1), false)
	f.Add(uint8(2), int64(0), int64(-300), []byte{}, []byte("a longer value that compresses compresses compresses"), []byte("x"), []byte{}, uint8(40), true)
	f.Fuzz(func(t *testing.T, codec uint8, ts, step int64, key, value, hk, hv []byte, n uint8, nullKey bool) {
		c := Compression(codec % 5)
		if nullKey {
			key = nil
		}
		if hk == nil {
			hk = []byte{}
		}
		h := producerHeader()
		h.Attributes = h.Attributes.WithCompression(c)
		var b Builder
		b.Reset(h, DefaultLevel)
		var want []Record
		for i := 0; i < int(n%64)+1; i++ {
			rts := ts + int64(i)*step
			if ts < 0 || rts < 0 {
				rts = NoTimestamp
			}
			var hdrs []Header
			if i%2 == 0 {
				hdrs = []Header{{Key: hk, Value: hv}}
			}
			require.NoError(t, b.Append(rts, key, value, hdrs))
			want = append(want, Record{Offset: int64(i), OffsetDelta: int32(i), Timestamp: rts, Key: key, Value: value, Headers: hdrs})
		}
		batch, err := b.Build()
		require.NoError(t, err)
		_, got := decodeAll(t, batch)
		requireSameRecords(t, want, got)
	})
}

func decodeFuzz(r *Reader, data []byte) (BatchHeader, []Record, error) {
	if err := r.Reset(data); err != nil {
		return BatchHeader{}, nil, err
	}
	var recs []Record
	for r.Next() {
		recs = append(recs, r.Record().Clone())
	}
	return r.Header(), recs, r.Err()
}

func isTyped(err error) bool {
	for _, k := range []error{ErrCorrupt, ErrTruncated, ErrTooLarge} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// reencode encodes a decoded batch again. It reports false for decoded
// contents the encoder refuses by design (offset deltas that do not
// increase, timestamps below -1).
func reencode(t *testing.T, h BatchHeader, recs []Record) ([]byte, bool) {
	var b Builder
	b.Reset(h, DefaultLevel)
	if len(recs) == 0 {
		return AppendEmptyBatch(nil, h), h.Attributes.Compression() == None && !h.Attributes.HasDeleteHorizon() && h.BaseTimestamp == NoTimestamp
	}
	for _, r := range recs {
		if b.AppendWithOffsetDelta(r.OffsetDelta, r.Timestamp, r.Key, r.Value, r.Headers) != nil {
			return nil, false
		}
	}
	if b.SetLastOffsetDelta(h.LastOffsetDelta) != nil {
		return nil, false
	}
	out, err := b.Build()
	require.NoError(t, err)
	return append([]byte(nil), out...), true
}

func requireHeaderKept(t *testing.T, want, got BatchHeader) {
	require.Equal(t, want.BaseOffset, got.BaseOffset)
	require.Equal(t, want.PartitionLeaderEpoch, got.PartitionLeaderEpoch)
	require.Equal(t, want.Attributes&0x7f, got.Attributes&0x7f)
	require.Equal(t, want.LastOffsetDelta, got.LastOffsetDelta)
	require.Equal(t, want.ProducerID, got.ProducerID)
	require.Equal(t, want.ProducerEpoch, got.ProducerEpoch)
	require.Equal(t, want.BaseSequence, got.BaseSequence)
	require.Equal(t, want.RecordsCount, got.RecordsCount)
}
