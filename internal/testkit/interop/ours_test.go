package interop

import (
	"bytes"
	"testing"

	"github.com/golang/snappy"
	"github.com/kafkalite/kafkalite/record"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Ours → kmsg: batches built by record.Builder, decoded by kmsg and the
// independent codecs of codecs_test.go.

func (s batchSpec) recordHeader() record.BatchHeader {
	return record.BatchHeader{
		BaseOffset:           s.BaseOffset,
		PartitionLeaderEpoch: s.PartitionLeaderEpoch,
		Attributes:           record.Attributes(s.Attributes),
		BaseTimestamp:        s.BaseTimestamp,
		MaxTimestamp:         s.MaxTimestamp,
		ProducerID:           s.ProducerID,
		ProducerEpoch:        s.ProducerEpoch,
		BaseSequence:         s.BaseSequence,
	}
}

// producerSpec is a non-idempotent producer's batch: producer id, epoch,
// base sequence and leader epoch all -1.
func producerSpec() batchSpec {
	return batchSpec{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
}

func idempotentSpec(baseSequence int32) batchSpec {
	return batchSpec{PartitionLeaderEpoch: -1, ProducerID: 4242, ProducerEpoch: 3, BaseSequence: baseSequence}
}

// codecVariants are the codecs and levels every builder case runs with.
var codecVariants = []struct {
	name  string
	codec int16
	level int
}{
	{name: "none", codec: 0, level: record.DefaultLevel},
	{name: "gzip", codec: attrGzip, level: record.DefaultLevel},
	{name: "gzip-1", codec: attrGzip, level: 1},
	{name: "gzip-9", codec: attrGzip, level: 9},
	{name: "snappy", codec: attrSnappy, level: record.DefaultLevel},
	{name: "lz4", codec: attrLZ4, level: record.DefaultLevel},
	{name: "lz4-hc-17", codec: attrLZ4, level: 17},
	{name: "zstd", codec: attrZstd, level: record.DefaultLevel},
	{name: "zstd-1", codec: attrZstd, level: 1},
	{name: "zstd-19", codec: attrZstd, level: 19},
}

func TestOursToKmsg(t *testing.T) {
	simple := []testRecord{
		{OffsetDelta: 0, Timestamp: ts0, Key: []byte("a"), Value: []byte("1")},
		{OffsetDelta: 1, Timestamp: ts0 + 10, Key: []byte("b"), Value: []byte("2")},
		{OffsetDelta: 2, Timestamp: ts0 + 5, Key: nil, Value: []byte("3")},
	}
	withSpec := func(s batchSpec, f func(*batchSpec)) batchSpec { f(&s); return s }

	tests := []struct {
		name    string
		spec    batchSpec // as given to Builder.Reset, without the codec
		records []testRecord
		// lastOffsetDelta, when above the last record's, goes to
		// SetLastOffsetDelta; logAppendTime, when set, to SetLogAppendTime
		// after Build.
		lastOffsetDelta int32
		logAppendTime   int64
		// multiBlock: the section must span several LZ4 blocks and xerial
		// chunks; storedBlock: the LZ4 frame must hold an uncompressed block.
		multiBlock, storedBlock bool
	}{
		{name: "mixed", spec: producerSpec(), records: mixedRecords()},
		{name: "single record", spec: producerSpec(), records: []testRecord{{Timestamp: ts0, Key: []byte("k"), Value: []byte("v")}}},
		{name: "idempotent", spec: idempotentSpec(17), records: simple},
		{name: "idempotent sequence wrap", spec: idempotentSpec(2147483646), records: simple},
		{name: "transactional", spec: withSpec(idempotentSpec(0), func(s *batchSpec) { s.Attributes = attrTransactional }), records: mixedRecords()},
		{
			name:    "log append time rewrite",
			spec:    withSpec(producerSpec(), func(s *batchSpec) { s.BaseOffset, s.PartitionLeaderEpoch = 1000, 7 }),
			records: mixedRecords(), logAppendTime: logAppendTime,
		},
		{
			name: "log append time builder",
			spec: withSpec(producerSpec(), func(s *batchSpec) {
				s.Attributes, s.MaxTimestamp, s.BaseOffset = attrLogAppendTime, logAppendTime, 77
			}),
			records: simple,
		},
		{
			name: "offset delta gaps",
			spec: withSpec(idempotentSpec(100), func(s *batchSpec) { s.BaseOffset, s.PartitionLeaderEpoch = 500, 2 }),
			records: []testRecord{
				{OffsetDelta: 0, Timestamp: ts0, Key: []byte("a"), Value: []byte("kept")},
				{OffsetDelta: 3, Timestamp: ts0 + 3, Key: []byte("b"), Value: []byte("kept")},
				{OffsetDelta: 7, Timestamp: ts0 + 1, Key: []byte("c"), Value: nil},
			},
			lastOffsetDelta: 12,
		},
		{
			name: "delete horizon",
			spec: withSpec(producerSpec(), func(s *batchSpec) {
				s.Attributes, s.BaseTimestamp, s.BaseOffset = attrDeleteHorizon, ts0+86400000, 9000
			}),
			records: mixedRecords(),
		},
		{name: "large json", spec: idempotentSpec(0), records: largeRecords(), multiBlock: true},
		{
			name: "incompressible",
			spec: producerSpec(),
			records: []testRecord{
				{OffsetDelta: 0, Timestamp: ts0, Key: []byte("random"), Value: pseudoRandomBytes(1, 3000)},
			},
			storedBlock: true,
		},
	}
	for _, tc := range tests {
		for _, cv := range codecVariants {
			t.Run(tc.name+"/"+cv.name, func(t *testing.T) {
				t.Parallel() // the record package pools its codecs: let -race see them shared
				in := tc.spec
				in.Attributes |= cv.codec
				var bld record.Builder
				bld.Reset(in.recordHeader(), cv.level)
				for _, r := range tc.records {
					require.NoError(t, bld.AppendWithOffsetDelta(r.OffsetDelta, r.Timestamp, r.Key, r.Value, r.recordHeaders()))
				}
				if tc.lastOffsetDelta > 0 {
					require.NoError(t, bld.SetLastOffsetDelta(tc.lastOffsetDelta))
				}
				built, err := bld.Build()
				require.NoError(t, err)
				b := bytes.Clone(built)

				want := specFor(in, tc.records)
				want.LastOffsetDelta = max(want.LastOffsetDelta, tc.lastOffsetDelta)
				if tc.logAppendTime != 0 {
					require.NoError(t, record.SetLogAppendTime(b, tc.logAppendTime))
					want.Attributes |= attrLogAppendTime
					want.MaxTimestamp = tc.logAppendTime
				}

				kb := requireKmsgHeader(t, b, want)
				section, fr := decodeOurSection(t, cv.codec, kb.Records)
				switch cv.codec {
				case attrLZ4:
					require.Equal(t, tc.multiBlock, fr.blocks > 1, "LZ4 blocks: %d", fr.blocks)
					if tc.storedBlock { // small inputs are often stored too
						require.Positive(t, fr.stored, "stored LZ4 blocks")
					}
				case attrSnappy:
					require.Equal(t, tc.multiBlock, fr.blocks > 2, "xerial chunks: %d", fr.blocks)
				}
				requireKmsgRecords(t, section, want.BaseTimestamp, tc.records)
				require.Equal(t, kmsgRecords(tc.records, want.BaseTimestamp), section, "records section differs from kmsg's encoding")
				// kmsg re-encodes the whole batch (for a compressed batch:
				// around our compressed section) byte for byte.
				if cv.codec == 0 {
					require.Equal(t, kmsgBatch(want, kmsgRecords(tc.records, want.BaseTimestamp)), b)
				} else {
					require.Equal(t, kmsgBatch(want, kb.Records), b)
				}
				requireOurRecords(t, b, want, tc.records)
			})
		}
	}
}

// decodeOurSection decompresses the records section of a batch that
// record.Builder wrote, with the independent decoder for its codec, and
// checks that the framing is what Kafka's Java producer writes (record
// package doc, "Compression"). It also says how the section was framed.
func decodeOurSection(t *testing.T, codec int16, section []byte) ([]byte, framing) {
	t.Helper()
	var fr framing
	switch codec {
	case 0:
		return section, fr
	case attrGzip:
		hdrs, parts, err := gzipMembers(section)
		require.NoError(t, err)
		require.Len(t, parts, 1, "one gzip member")
		require.Equal(t, []byte{0x1F, 0x8B, 0x08}, section[:3], "gzip ID1 ID2 CM")
		require.Empty(t, hdrs[0].Name)
		require.Empty(t, hdrs[0].Comment)
		require.Empty(t, hdrs[0].Extra)
		return parts[0], fr
	case attrSnappy:
		chunks, streams, err := xerialChunks(section)
		require.NoError(t, err)
		require.Equal(t, 1, streams, "one xerial stream")
		require.Equal(t, xerialHeader, section[:16])
		var out []byte
		for i, c := range chunks {
			d, err := snappy.Decode(nil, c)
			require.NoError(t, err, "chunk %d", i)
			if i < len(chunks)-1 {
				require.Len(t, d, 32<<10, "chunk %d: xerial chunks hold 32 KiB", i)
			} else {
				require.True(t, len(d) > 0 && len(d) <= 32<<10, "last chunk holds %d bytes", len(d))
			}
			out = append(out, d...)
		}
		fr.blocks = len(chunks)
		return out, fr
	case attrLZ4:
		require.Equal(t, []byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82}, section[:7], "Kafka's LZ4 frame header")
		f, err := parseLZ4Frame(section)
		require.NoError(t, err)
		require.Equal(t, len(section), f.size, "one LZ4 frame and nothing after it")
		require.Nil(t, f.contentSize)
		require.Nil(t, f.contentChecksum)
		out, err := f.decode()
		require.NoError(t, err)
		// Every block but the last holds 64 KiB; a compressed block also
		// decodes with pierrec/lz4's block decoder.
		var pos int
		for i, blk := range f.blocks {
			n := min(len(out)-pos, 64<<10)
			if i < len(f.blocks)-1 {
				require.Equal(t, 64<<10, n, "block %d", i)
			}
			if !blk.stored {
				d := make([]byte, 64<<10)
				m, err := lz4.UncompressBlock(blk.data, d)
				require.NoError(t, err, "block %d", i)
				require.Equal(t, out[pos:pos+n], d[:m], "block %d", i)
			} else {
				require.Equal(t, out[pos:pos+n], blk.data, "block %d", i)
				fr.stored++
			}
			pos += n
		}
		require.Equal(t, len(out), pos)
		fr.blocks = len(f.blocks)
		return out, fr
	case attrZstd:
		frames, err := zstdFrames(section)
		require.NoError(t, err)
		require.Len(t, frames, 1, "one zstd frame")
		out, err := zstdDecodeStdlib(section)
		require.NoError(t, err)
		if frames[0].hasContentSize {
			require.Equal(t, uint64(len(out)), frames[0].contentSize)
		}
		return out, fr
	}
	t.Fatalf("codec %d", codec)
	return nil, fr
}

// framing counts the blocks of an LZ4 frame (and how many are stored
// uncompressed) or the chunks of a xerial stream.
type framing struct{ blocks, stored int }

func TestOursControlAndEmptyToKmsg(t *testing.T) {
	const pid, epoch = int64(4242), int16(3)
	tests := []struct {
		name    string
		build   func() ([]byte, error)
		want    batchSpec
		records []testRecord
		marker  *kmsg.EndTxnMarker // for COMMIT/ABORT: the value kmsg must read
		typ     kmsg.ControlRecordKeyType
	}{
		{
			name: "commit marker",
			build: func() ([]byte, error) {
				return record.AppendEndTxnMarkerBatch(nil, 1200, 5, pid, epoch, ts0+999,
					record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 9})
			},
			want: batchSpec{
				BaseOffset: 1200, PartitionLeaderEpoch: 5, Attributes: attrControl | attrTransactional,
				BaseTimestamp: ts0 + 999, MaxTimestamp: ts0 + 999, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, NumRecords: 1,
			},
			records: []testRecord{{Timestamp: ts0 + 999, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 9}}},
			marker:  &kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 9},
			typ:     1,
		},
		{
			name: "abort marker",
			build: func() ([]byte, error) {
				return record.AppendEndTxnMarkerBatch(nil, 0, -1, pid, epoch, ts0,
					record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 2147483647})
			},
			want: batchSpec{
				BaseOffset: 0, PartitionLeaderEpoch: -1, Attributes: attrControl | attrTransactional,
				BaseTimestamp: ts0, MaxTimestamp: ts0, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, NumRecords: 1,
			},
			records: []testRecord{{Timestamp: ts0, Key: []byte{0, 0, 0, 0}, Value: []byte{0, 0, 0x7F, 0xFF, 0xFF, 0xFF}}},
			marker:  &kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 2147483647},
			typ:     0,
		},
		{
			name: "empty batch",
			build: func() ([]byte, error) {
				return record.AppendEmptyBatch(nil, record.BatchHeader{
					BaseOffset: 3000, PartitionLeaderEpoch: 4, LastOffsetDelta: 9,
					// Codec and delete horizon must be dropped; the base
					// timestamp and count must be replaced.
					Attributes:    record.Attributes(attrTransactional | attrDeleteHorizon | attrZstd),
					BaseTimestamp: ts0, MaxTimestamp: ts0 + 50, RecordsCount: 10,
					ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 40,
				}), nil
			},
			want: batchSpec{
				BaseOffset: 3000, PartitionLeaderEpoch: 4, Attributes: attrTransactional, LastOffsetDelta: 9,
				BaseTimestamp: -1, MaxTimestamp: ts0 + 50, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 40,
			},
		},
		{
			name: "empty control batch",
			build: func() ([]byte, error) {
				return record.AppendEmptyBatch(nil, record.BatchHeader{
					BaseOffset: 10, PartitionLeaderEpoch: -1,
					Attributes:   record.Attributes(attrControl | attrTransactional | attrLogAppendTime),
					MaxTimestamp: logAppendTime, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1,
				}), nil
			},
			want: batchSpec{
				BaseOffset: 10, PartitionLeaderEpoch: -1, Attributes: attrControl | attrTransactional | attrLogAppendTime,
				BaseTimestamp: -1, MaxTimestamp: logAppendTime, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.build()
			require.NoError(t, err)
			kb := requireKmsgHeader(t, b, tc.want)
			requireKmsgRecords(t, kb.Records, tc.want.BaseTimestamp, tc.records)
			require.Equal(t, kmsgBatch(tc.want, kmsgRecords(tc.records, tc.want.BaseTimestamp)), b)
			requireOurRecords(t, b, tc.want, tc.records)
			if len(tc.records) == 0 {
				require.Len(t, b, 61)
				return
			}
			require.Len(t, b, 78, "a transaction marker batch is 78 bytes")
			var key kmsg.ControlRecordKey
			require.NoError(t, key.ReadFrom(tc.records[0].Key))
			require.Equal(t, tc.typ, key.Type)
			var m kmsg.EndTxnMarker
			require.NoError(t, m.ReadFrom(tc.records[0].Value))
			require.Equal(t, *tc.marker, m)
			// And kmsg's encoding of the key and value is what we wrote.
			require.Equal(t, tc.records[0].Key, (&kmsg.ControlRecordKey{Type: tc.typ}).AppendTo(nil))
			require.Equal(t, tc.records[0].Value, tc.marker.AppendTo(nil))
		})
	}
}
