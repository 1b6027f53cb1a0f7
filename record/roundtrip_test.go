package record

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleRecords covers the record shapes a batch can hold: null and empty
// keys and values, headers with null values, and timestamps that go
// backwards (negative deltas).
func sampleRecords() []Record {
	return []Record{
		{Timestamp: 1700000000000, Key: []byte("k0"), Value: []byte("v0")},
		{Timestamp: 1700000000005, Key: nil, Value: []byte("null key")},
		{Timestamp: 1699999999990, Key: []byte("tombstone"), Value: nil},
		{Timestamp: 1700000000001, Key: []byte{}, Value: []byte{}},
		{Timestamp: 1700000000002, Key: []byte("h"), Value: []byte(strings.Repeat("x", 300)), Headers: []Header{
			{Key: []byte("trace-id"), Value: []byte("abc")},
			{Key: []byte("null-value"), Value: nil},
			{Key: []byte(""), Value: []byte{}},
		}},
	}
}

func withOffsets(recs []Record, base int64) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r.OffsetDelta = int32(i)
		r.Offset = base + int64(i)
		out[i] = r
	}
	return out
}

func decodeAll(t *testing.T, batch []byte) (BatchHeader, []Record) {
	t.Helper()
	r := NewReader(ReaderOptions{})
	require.NoError(t, r.Reset(batch))
	var out []Record
	for r.Next() {
		out = append(out, r.Record().Clone())
	}
	require.NoError(t, r.Err())
	return r.Header(), out
}

func requireSameRecords(t *testing.T, want, got []Record) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Truef(t, want[i].Equal(&got[i]), "record %d:\nwant %+v\n got %+v", i, want[i], got[i])
	}
}

func TestRoundTripCodecs(t *testing.T) {
	for _, c := range []Compression{None, Gzip, Snappy, LZ4, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			recs := withOffsets(sampleRecords(), 0)
			h := producerHeader()
			h.Attributes = h.Attributes.WithCompression(c)
			batch, err := AppendBatch(nil, h, DefaultLevel, recs)
			require.NoError(t, err)

			got, decoded := decodeAll(t, batch)
			require.Equal(t, c, got.Attributes.Compression())
			require.Equal(t, int32(len(recs)), got.RecordsCount)
			require.Equal(t, int32(len(recs)-1), got.LastOffsetDelta)
			require.Equal(t, int64(1700000000000), got.BaseTimestamp, "base timestamp is the first record's")
			require.Equal(t, int64(1700000000005), got.MaxTimestamp)
			require.Equal(t, len(batch), got.Size())
			requireSameRecords(t, recs, decoded)
		})
	}
}

func TestRoundTripHeaderFields(t *testing.T) {
	tests := []struct {
		name string
		hdr  BatchHeader
	}{
		{"idempotent", BatchHeader{BaseOffset: 0, PartitionLeaderEpoch: -1, ProducerID: 4711, ProducerEpoch: 3, BaseSequence: 42}},
		{"transactional", BatchHeader{PartitionLeaderEpoch: 7, Attributes: Attributes(0).WithTransactional(true), ProducerID: 9, ProducerEpoch: 0, BaseSequence: 0}},
		{"assigned offsets", BatchHeader{BaseOffset: 1 << 40, PartitionLeaderEpoch: 12, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}},
		{"sequence wraps", BatchHeader{PartitionLeaderEpoch: -1, ProducerID: 1, ProducerEpoch: 1, BaseSequence: 1<<31 - 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs := withOffsets(sampleRecords(), tc.hdr.BaseOffset)
			batch, err := AppendBatch(nil, tc.hdr, DefaultLevel, recs)
			require.NoError(t, err)
			got, decoded := decodeAll(t, batch)
			require.Equal(t, tc.hdr.BaseOffset, got.BaseOffset)
			require.Equal(t, tc.hdr.PartitionLeaderEpoch, got.PartitionLeaderEpoch)
			require.Equal(t, tc.hdr.ProducerID, got.ProducerID)
			require.Equal(t, tc.hdr.ProducerEpoch, got.ProducerEpoch)
			require.Equal(t, tc.hdr.BaseSequence, got.BaseSequence)
			require.Equal(t, tc.hdr.Attributes.IsTransactional(), got.Attributes.IsTransactional())
			requireSameRecords(t, recs, decoded)
		})
	}
}

func TestSequenceAt(t *testing.T) {
	tests := []struct {
		base, delta, want int32
	}{
		{-1, 3, -1},
		{0, 0, 0},
		{10, 5, 15},
		{1<<31 - 1, 0, 1<<31 - 1},
		{1<<31 - 1, 1, 0},
		{1<<31 - 2, 4, 2},
	}
	for _, tc := range tests {
		h := BatchHeader{BaseSequence: tc.base}
		require.Equalf(t, tc.want, h.SequenceAt(tc.delta), "base %d delta %d", tc.base, tc.delta)
	}
}

func TestLogAppendTime(t *testing.T) {
	recs := withOffsets(sampleRecords(), 0)
	batch, err := AppendBatch(nil, producerHeader(), DefaultLevel, recs)
	require.NoError(t, err)
	require.NoError(t, SetLogAppendTime(batch, 1800000000000))

	h, decoded := decodeAll(t, batch) // the CRC was recomputed, so this validates
	require.Equal(t, LogAppendTime, h.Attributes.TimestampType())
	require.Equal(t, int64(1800000000000), h.MaxTimestamp)
	require.Equal(t, int64(1700000000000), h.BaseTimestamp, "base timestamp stays")
	for _, r := range decoded {
		require.Equal(t, int64(1800000000000), r.Timestamp)
	}
}

func TestInPlaceRewrites(t *testing.T) {
	batch, err := AppendBatch(nil, producerHeader(), DefaultLevel, withOffsets(sampleRecords(), 0))
	require.NoError(t, err)
	before, err := Validate(batch)
	require.NoError(t, err)

	require.NoError(t, SetBaseOffset(batch, 1000))
	require.NoError(t, SetPartitionLeaderEpoch(batch, 5))
	after, err := Validate(batch)
	require.NoError(t, err, "base offset and leader epoch are outside the CRC")
	require.Equal(t, before.CRC, after.CRC)
	require.Equal(t, int64(1000), after.BaseOffset)
	require.Equal(t, int64(1004), after.LastOffset())
	require.Equal(t, int32(5), after.PartitionLeaderEpoch)

	require.NoError(t, SetMaxTimestamp(batch, 1900000000000))
	after, err = Validate(batch)
	require.NoError(t, err)
	require.Equal(t, int64(1900000000000), after.MaxTimestamp)

	short := make([]byte, 60)
	for _, f := range []func([]byte) error{
		func(b []byte) error { return SetBaseOffset(b, 1) },
		func(b []byte) error { return SetPartitionLeaderEpoch(b, 1) },
		func(b []byte) error { return SetLogAppendTime(b, 1) },
		func(b []byte) error { return SetMaxTimestamp(b, 1) },
	} {
		require.ErrorIs(t, f(short), ErrTruncated)
	}
}

// TestCompactedBatch reads a batch as the cleaner leaves it: fewer records
// than lastOffsetDelta+1, offset gaps, and an empty batch.
func TestCompactedBatch(t *testing.T) {
	recs := []Record{
		{OffsetDelta: 1, Timestamp: 10, Key: []byte("a"), Value: []byte("1")},
		{OffsetDelta: 4, Timestamp: 9, Key: []byte("b"), Value: nil},
	}
	h := producerHeader()
	h.BaseOffset = 100
	h.LastOffsetDelta = 7
	batch, err := AppendBatch(nil, h, DefaultLevel, recs)
	require.NoError(t, err)
	got, decoded := decodeAll(t, batch)
	require.Equal(t, int32(2), got.RecordsCount)
	require.Equal(t, int64(107), got.LastOffset())
	require.Equal(t, int64(108), got.NextOffset())
	require.Len(t, decoded, 2)
	require.Equal(t, int64(101), decoded[0].Offset)
	require.Equal(t, int64(104), decoded[1].Offset)

	empty := AppendEmptyBatch(nil, BatchHeader{BaseOffset: 200, LastOffsetDelta: 9, MaxTimestamp: 55, PartitionLeaderEpoch: 3,
		ProducerID: 7, ProducerEpoch: 2, BaseSequence: 30, Attributes: Attributes(0).WithTransactional(true).WithDeleteHorizon(true).WithCompression(Zstd)})
	require.Len(t, empty, BatchHeaderLen)
	eh, erecs := decodeAll(t, empty)
	require.Empty(t, erecs)
	require.Equal(t, int32(0), eh.RecordsCount)
	require.Equal(t, int32(MinBatchLength), eh.BatchLength)
	require.Equal(t, int64(209), eh.LastOffset())
	require.Equal(t, NoTimestamp, eh.BaseTimestamp)
	require.Equal(t, int64(55), eh.MaxTimestamp)
	require.True(t, eh.Attributes.IsTransactional())
	require.False(t, eh.Attributes.HasDeleteHorizon(), "empty batches clear the delete horizon")
	require.Equal(t, None, eh.Attributes.Compression())
}

func TestDeleteHorizonBaseTimestamp(t *testing.T) {
	h := producerHeader()
	h.Attributes = h.Attributes.WithDeleteHorizon(true)
	h.BaseTimestamp = 5000
	batch, err := AppendBatch(nil, h, DefaultLevel, []Record{{Timestamp: 5100, Key: []byte("k")}})
	require.NoError(t, err)
	got, decoded := decodeAll(t, batch)
	require.True(t, got.Attributes.HasDeleteHorizon())
	require.Equal(t, int64(5000), got.BaseTimestamp)
	require.Equal(t, int64(5100), decoded[0].Timestamp)
}

func TestControlBatches(t *testing.T) {
	for _, typ := range []ControlType{ControlCommit, ControlAbort} {
		t.Run(typ.String(), func(t *testing.T) {
			b, err := AppendEndTxnMarkerBatch(nil, 0, -1, 77, 4, 1700000000000, EndTxnMarker{Type: typ, CoordinatorEpoch: 12})
			require.NoError(t, err)
			require.Len(t, b, 78)
			h, recs := decodeAll(t, b)
			require.Equal(t, int32(66), h.BatchLength)
			require.True(t, h.Attributes.IsControl())
			require.True(t, h.Attributes.IsTransactional())
			require.Equal(t, int64(77), h.ProducerID)
			require.Equal(t, int16(4), h.ProducerEpoch)
			require.Equal(t, NoSequence, h.BaseSequence)
			require.Equal(t, h.BaseTimestamp, h.MaxTimestamp)
			require.Len(t, recs, 1)
			m, err := ParseEndTxnMarker(recs[0].Key, recs[0].Value)
			require.NoError(t, err)
			require.Equal(t, EndTxnMarker{Type: typ, CoordinatorEpoch: 12}, m)
		})
	}
	_, err := AppendEndTxnMarkerBatch(nil, 0, -1, 1, 1, 0, EndTxnMarker{Type: ControlLeaderChange})
	require.ErrorIs(t, err, ErrBadControlRecord)
}

func TestParseControlKey(t *testing.T) {
	tests := []struct {
		key     []byte
		want    ControlType
		wantErr bool
	}{
		{[]byte{0, 0, 0, 0}, ControlAbort, false},
		{[]byte{0, 0, 0, 1}, ControlCommit, false},
		{[]byte{0, 0, 0, 6}, ControlKRaftVoters, false},
		{[]byte{0, 1, 0, 1}, ControlCommit, false}, // a newer version is read as version 0
		{[]byte{0, 0, 0, 9}, ControlUnknown, false},
		{[]byte{0, 0, 0xff, 0xff}, ControlUnknown, false},
		{[]byte{0xff, 0xff, 0, 1}, ControlUnknown, true},
		{[]byte{0, 0, 0}, ControlUnknown, true},
		{nil, ControlUnknown, true},
	}
	for _, tc := range tests {
		got, err := ParseControlKey(tc.key)
		if tc.wantErr {
			require.ErrorIs(t, err, ErrBadControlRecord, "key %x", tc.key)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "key %x", tc.key)
	}
	_, err := ParseEndTxnMarker([]byte{0, 0, 0, 1}, []byte{0, 0, 0})
	require.ErrorIs(t, err, ErrBadControlRecord)
	_, err = ParseEndTxnMarker([]byte{0, 0, 0, 2}, []byte{0, 0, 0, 0, 0, 0})
	require.ErrorIs(t, err, ErrBadControlRecord)
}

// TestKRaftControlBatch: a control batch without the transactional bit,
// holding several control records, decodes.
func TestKRaftControlBatch(t *testing.T) {
	var b Builder
	b.Reset(BatchHeader{PartitionLeaderEpoch: 1, Attributes: Attributes(0).WithControl(true), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, DefaultLevel)
	require.NoError(t, b.Append(1, AppendControlKey(nil, ControlSnapshotHeader), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, nil))
	require.NoError(t, b.Append(1, AppendControlKey(nil, ControlSnapshotFooter), []byte{0, 0, 0}, nil))
	batch, err := b.Build()
	require.NoError(t, err)
	h, recs := decodeAll(t, batch)
	require.True(t, h.Attributes.IsControl())
	require.False(t, h.Attributes.IsTransactional())
	require.Len(t, recs, 2)
	typ, err := ParseControlKey(recs[1].Key)
	require.NoError(t, err)
	require.Equal(t, ControlSnapshotFooter, typ)
}

func TestBuilderArguments(t *testing.T) {
	var b Builder
	require.Error(t, b.Append(0, nil, nil, nil), "Append before Reset")
	b.Reset(producerHeader(), DefaultLevel)
	_, err := b.Build()
	require.ErrorIs(t, err, ErrNoRecords)
	require.ErrorIs(t, b.Append(-2, nil, nil, nil), ErrInvalidTimestamp)
	require.ErrorIs(t, b.Append(0, nil, nil, []Header{{Key: nil}}), ErrNilHeaderKey)
	require.NoError(t, b.AppendWithOffsetDelta(3, NoTimestamp, nil, nil, nil))
	require.ErrorIs(t, b.AppendWithOffsetDelta(3, 0, nil, nil, nil), ErrOffsetDelta)
	require.ErrorIs(t, b.SetLastOffsetDelta(2), ErrOffsetDelta)
	out, err := b.Build()
	require.NoError(t, err)
	h, err := Validate(out)
	require.NoError(t, err)
	require.Equal(t, NoTimestamp, h.BaseTimestamp)
	require.Equal(t, NoTimestamp, h.MaxTimestamp)
	again, err := b.Build()
	require.NoError(t, err)
	require.Equal(t, out, again, "Build is idempotent")
	require.Error(t, b.Append(0, nil, nil, nil), "Append after Build needs a Reset")

	h2 := producerHeader()
	h2.Attributes = h2.Attributes.WithCompression(Gzip)
	b.Reset(h2, 42)
	require.NoError(t, b.Append(0, nil, []byte("x"), nil))
	_, err = b.Build()
	require.Error(t, err, "gzip level 42")
}

// TestBuilderReuse checks that a reset builder carries nothing over.
func TestBuilderReuse(t *testing.T) {
	var b Builder
	for i, c := range []Compression{Zstd, None, LZ4, None, Gzip, Snappy} {
		h := producerHeader()
		h.Attributes = h.Attributes.WithCompression(c)
		b.Reset(h, DefaultLevel)
		recs := withOffsets(sampleRecords()[:i%5+1], 0)
		for _, r := range recs {
			require.NoError(t, b.Append(r.Timestamp, r.Key, r.Value, r.Headers))
		}
		out, err := b.Build()
		require.NoError(t, err)
		_, decoded := decodeAll(t, bytes.Clone(out))
		requireSameRecords(t, recs, decoded)
	}
}

func TestCompressionLevels(t *testing.T) {
	payload := []byte(strings.Repeat(`{"event":"order_created","id":12345,"amount":"10.50"}`, 50))
	tests := []struct {
		c      Compression
		levels []int
	}{
		{Gzip, []int{-1, 1, 9}},
		{LZ4, []int{1, 9, 10, 17}},
		{Zstd, []int{-5, 1, 3, 19}},
		{Snappy, []int{DefaultLevel}},
	}
	for _, tc := range tests {
		for _, lvl := range tc.levels {
			t.Run(fmt.Sprintf("%s-%d", tc.c, lvl), func(t *testing.T) {
				h := producerHeader()
				h.Attributes = h.Attributes.WithCompression(tc.c)
				batch, err := AppendBatch(nil, h, lvl, []Record{{Timestamp: 1, Value: payload}})
				require.NoError(t, err)
				require.Less(t, len(batch), len(payload)/2, "compressed")
				_, recs := decodeAll(t, batch)
				require.Equal(t, payload, recs[0].Value)
			})
		}
	}
	h := producerHeader()
	h.Attributes = h.Attributes.WithCompression(LZ4)
	_, err := AppendBatch(nil, h, 18, []Record{{Value: payload}})
	require.Error(t, err)
}

func TestParseCompression(t *testing.T) {
	for _, c := range []Compression{None, Gzip, Snappy, LZ4, Zstd} {
		got, err := ParseCompression(c.String())
		require.NoError(t, err)
		require.Equal(t, c, got)
	}
	_, err := ParseCompression("brotli")
	require.ErrorIs(t, err, ErrUnknownCodec)
	require.Equal(t, "codec(6)", Compression(6).String())
}

func TestEstimateRecordSize(t *testing.T) {
	for _, r := range sampleRecords() {
		var b Builder
		b.Reset(producerHeader(), DefaultLevel)
		require.NoError(t, b.Append(r.Timestamp, r.Key, r.Value, r.Headers))
		require.LessOrEqual(t, b.Size()-BatchHeaderLen, EstimateRecordSize(r.Key, r.Value, r.Headers))
	}
}

func TestSkipTo(t *testing.T) {
	recs := []Record{
		{OffsetDelta: 0, Timestamp: 1, Key: []byte("a")},
		{OffsetDelta: 2, Timestamp: 2, Key: []byte("b")},
		{OffsetDelta: 3, Timestamp: 3, Key: []byte("c"), Headers: []Header{{Key: []byte("h")}}},
		{OffsetDelta: 7, Timestamp: 4, Key: []byte("d")},
	}
	h := producerHeader()
	h.BaseOffset = 100
	for _, c := range []Compression{None, Zstd} {
		h.Attributes = h.Attributes.WithCompression(c)
		batch, err := AppendBatch(nil, h, DefaultLevel, recs)
		require.NoError(t, err)
		tests := []struct {
			target int64
			want   []byte // key of the record found, nil for none
		}{
			{0, []byte("a")}, {100, []byte("a")}, {101, []byte("b")}, {102, []byte("b")},
			{103, []byte("c")}, {104, []byte("d")}, {107, []byte("d")}, {108, nil},
		}
		for _, tc := range tests {
			r := NewReader(ReaderOptions{})
			require.NoError(t, r.Reset(batch))
			ok := r.SkipTo(tc.target)
			require.Equal(t, tc.want != nil, ok, "target %d", tc.target)
			if ok {
				require.True(t, r.Next())
				require.Equal(t, tc.want, r.Record().Key)
				for r.Next() {
				}
			}
			require.NoError(t, r.Err())
		}
	}
}

// TestSkimMatchesNext: Skim reports what Next decodes, and accepts and
// rejects exactly what Next accepts and rejects (see also FuzzDecode).
func TestSkimMatchesNext(t *testing.T) {
	for _, c := range []Compression{None, Snappy} {
		h := producerHeader()
		h.Attributes = h.Attributes.WithCompression(c)
		batch, err := AppendBatch(nil, h, DefaultLevel, withOffsets(sampleRecords(), 0))
		require.NoError(t, err)
		full, skim := NewReader(ReaderOptions{}), NewReader(ReaderOptions{})
		require.NoError(t, full.Reset(batch))
		require.NoError(t, skim.Reset(batch))
		for full.Next() {
			d, ts, nullKey, ok := skim.Skim()
			require.True(t, ok)
			rec := full.Record()
			require.Equal(t, rec.OffsetDelta, d)
			require.Equal(t, rec.Timestamp, ts)
			require.Equal(t, rec.Key == nil, nullKey)
		}
		_, _, _, ok := skim.Skim()
		require.False(t, ok)
		require.NoError(t, skim.Err())
	}
}

// TestBuilderResetBuffer: records go into the caller's buffer, which is not
// grown while they fit, and Buffer gives it back.
func TestBuilderResetBuffer(t *testing.T) {
	for _, c := range []Compression{None, LZ4, None, Zstd} {
		var b Builder
		buf := make([]byte, 0, 4096)
		h := producerHeader()
		h.Attributes = h.Attributes.WithCompression(c)
		b.ResetBuffer(h, DefaultLevel, buf)
		require.Equal(t, 4096+BatchHeaderLen*btoi(c != None), b.Cap())
		recs := withOffsets(sampleRecords(), 0)
		for _, r := range recs {
			require.LessOrEqual(t, b.Size()+EstimateRecordSize(r.Key, r.Value, r.Headers), b.Cap())
			require.NoError(t, b.Append(r.Timestamp, r.Key, r.Value, r.Headers))
		}
		out, err := b.Build()
		require.NoError(t, err)
		_, got := decodeAll(t, bytes.Clone(out))
		requireSameRecords(t, recs, got)
		back := b.Buffer()
		require.Equal(t, cap(buf), cap(back))
		require.True(t, &buf[:1][0] == &back[:1][0], "the same memory")
		if c == None {
			require.True(t, &out[0] == &back[:1][0], "an uncompressed batch is built in place")
		}
		// A plain Reset afterwards does not write into the caller's buffer.
		b.Reset(h, DefaultLevel)
		require.NoError(t, b.Append(1, []byte("x"), []byte("y"), nil))
		out2, err := b.Build()
		require.NoError(t, err)
		require.False(t, &out2[0] == &back[:1][0])
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSkipRecords walks a batch's records section in pieces, as a point
// read does.
func TestSkipRecords(t *testing.T) {
	h := producerHeader()
	h.BaseOffset = 50
	batch, err := AppendBatch(nil, h, DefaultLevel, withOffsets(sampleRecords(), 50))
	require.NoError(t, err)
	section := batch[BatchHeaderLen:]
	for target := int64(50); target < 55; target++ {
		// With the whole section at once.
		next, n, skipped, more, err := SkipRecords(section, 0, 50, target)
		require.NoError(t, err)
		require.False(t, more)
		require.Equal(t, int(target-50), skipped)
		r := NewReader(ReaderOptions{})
		require.NoError(t, r.Reset(batch))
		require.True(t, r.SkipTo(target))
		// The record found starts at next and is n bytes long.
		require.Positive(t, n)
		require.LessOrEqual(t, next+n, len(section))
		// Growing prefixes: every cut either asks for more or finds it.
		for cut := 0; cut <= len(section); cut++ {
			pos, total := 0, 0
			for {
				p, l, k, more, err := SkipRecords(section[:cut], pos, 50, target)
				require.NoError(t, err)
				total += k
				if more {
					require.Less(t, cut, next+n, "asks for more only when the record is cut")
					break
				}
				require.Equal(t, next, p)
				require.Equal(t, n, l)
				require.Equal(t, skipped, total)
				break
			}
		}
	}
	_, _, _, more, err := SkipRecords(section, 0, 50, 1000)
	require.NoError(t, err)
	require.True(t, more, "past the last record, more is asked for")
	_, _, _, _, err = SkipRecords([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, 0, 0, 1)
	require.ErrorIs(t, err, ErrVarint)
}

func TestBuilderSetProducer(t *testing.T) {
	for _, codec := range []Compression{None, LZ4} {
		var b Builder
		b.Reset(BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			Attributes: Attributes(0).WithCompression(codec)}, DefaultLevel)
		require.NoError(t, b.Append(1, []byte("k"), []byte("v"), nil))
		require.NoError(t, b.Append(2, []byte("k"), []byte("v"), nil))
		b.SetProducer(42, 3, 17, true)
		out, err := b.Build()
		require.NoError(t, err)
		h, err := Validate(out) // the CRC covers the new fields
		require.NoError(t, err)
		require.Equal(t, int64(42), h.ProducerID)
		require.Equal(t, int16(3), h.ProducerEpoch)
		require.Equal(t, int32(17), h.BaseSequence)
		require.Equal(t, int32(18), h.LastSequence())
		require.True(t, h.Attributes.IsTransactional())
		require.Equal(t, codec, h.Attributes.Compression())
	}
}

// TestResume: a Reader resumed at a place Position reported for the same
// batch goes on with the same records; a place outside the batch is an
// error matching ErrBadRecord.
func TestResume(t *testing.T) {
	var recs []Record
	for i := range 10 {
		recs = append(recs, Record{OffsetDelta: int32(i), Timestamp: int64(i), Key: fmt.Appendf(nil, "k%d", i)})
	}
	batch, err := AppendBatch(nil, producerHeader(), DefaultLevel, recs)
	require.NoError(t, err)
	r := NewReader(ReaderOptions{})
	require.NoError(t, r.Reset(batch))
	for range 4 {
		require.True(t, r.Next())
	}
	pos, n := r.Position()
	require.Equal(t, int32(4), n)

	again := NewReader(ReaderOptions{})
	require.NoError(t, again.Reset(batch))
	require.NoError(t, again.Resume(pos, n))
	for i := 4; i < 10; i++ {
		require.True(t, again.Next())
		require.Equal(t, fmt.Sprintf("k%d", i), string(again.Record().Key))
	}
	require.False(t, again.Next())
	require.NoError(t, again.Err())

	for _, bad := range []struct {
		pos int
		n   int32
	}{{-1, 0}, {len(batch), 0}, {0, -1}, {0, 11}} {
		r := NewReader(ReaderOptions{})
		require.NoError(t, r.Reset(batch))
		require.ErrorIs(t, r.Resume(bad.pos, bad.n), ErrBadRecord, "%+v", bad)
	}
}

// TestBuilderCompress: Compress then SetProducer and Build gives the bytes
// Build alone gives, for every codec, with the builder's own buffer and a
// caller's; no record is appended after it; an empty builder is refused.
func TestBuilderCompress(t *testing.T) {
	for _, c := range []Compression{None, Gzip, Snappy, LZ4, Zstd} {
		for _, external := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/external=%v", c, external), func(t *testing.T) {
				h := producerHeader()
				h.Attributes = h.Attributes.WithCompression(c)
				build := func(early bool) []byte {
					var b Builder
					if external {
						b.ResetBuffer(h, DefaultLevel, make([]byte, 0, 4096))
					} else {
						b.Reset(h, DefaultLevel)
					}
					for _, r := range sampleRecords() {
						require.NoError(t, b.Append(r.Timestamp, r.Key, r.Value, r.Headers))
					}
					if early {
						require.NoError(t, b.Compress())
						require.NoError(t, b.Compress(), "a second time does nothing")
						if c != None {
							require.Error(t, b.Append(1, nil, []byte("late"), nil))
						}
					}
					b.SetProducer(7, 1, 100, false)
					out, err := b.Build()
					require.NoError(t, err)
					require.NoError(t, b.Compress(), "after Build it does nothing")
					return bytes.Clone(out)
				}
				want, got := build(false), build(true)
				require.Equal(t, want, got)
				hdr, recs := decodeAll(t, got)
				require.Equal(t, int64(7), hdr.ProducerID)
				requireSameRecords(t, withOffsets(sampleRecords(), 0), recs)
			})
		}
		var empty Builder
		h := producerHeader()
		h.Attributes = h.Attributes.WithCompression(c)
		empty.Reset(h, DefaultLevel)
		if c == None {
			require.NoError(t, empty.Compress())
		} else {
			require.ErrorIs(t, empty.Compress(), ErrNoRecords)
		}
	}
}
