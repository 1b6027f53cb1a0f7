package interop

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/golang/snappy"
	"github.com/kafkalite/kafkalite/record"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Independent → ours: batches encoded by kmsg and by compressors other than
// the record package's, decoded by record.Reader. The same cases are the
// fixtures of record/testdata/interop (fixtures_test.go).

// indepCase is one batch made without the record package.
type indepCase struct {
	// file is the fixture's name in record/testdata/interop.
	file string
	// desc says what the case is, generator what made the bytes.
	desc, generator string
	// spec holds the header fields set by hand (codec included); the
	// derived ones (count, timestamps, last offset delta) come from records.
	spec    batchSpec
	records []testRecord
	// compress turns the uncompressed records section into the batch's
	// records section; nil for an uncompressed batch.
	compress func(t *testing.T, section []byte) []byte
	// check asserts that a batch of this case (regenerated or read from
	// its fixture) is the variant the case is about, with the independent
	// decoders: two gzip members, no zstd content size, and so on.
	check func(t *testing.T, batch []byte)
	// exact: the bytes are fixed by this module's go.mod alone, so a
	// fixture must equal the regenerated batch byte for byte. Otherwise the
	// encoder is the Go toolchain's or a library the root module also pins
	// (compress/gzip, pierrec/lz4, klauspost zstd), whose output may change
	// with an upgrade; the fixture must then still decode to the same
	// records and pass check.
	exact bool
}

// build encodes the case's batch and returns it with its full header.
func (c *indepCase) build(t *testing.T) ([]byte, batchSpec) {
	t.Helper()
	spec := specFor(c.spec, c.records)
	section := kmsgRecords(c.records, spec.BaseTimestamp)
	if c.compress != nil {
		section = c.compress(t, section)
	}
	return kmsgBatch(spec, section), spec
}

// splitHalf splits b in the middle, which for a records section is inside a
// record: compressed streams are concatenated byte streams, not record
// lists.
func splitHalf(b []byte) ([]byte, []byte) { return b[:len(b)/2], b[len(b)/2:] }

func independentCases() []indepCase {
	const pid, epoch = int64(8001), int16(2)
	txnSpec := batchSpec{BaseOffset: 1000, PartitionLeaderEpoch: 7, Attributes: attrTransactional, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 250}
	withCodec := func(s batchSpec, codec int16) batchSpec { s.Attributes |= codec; return s }
	producer := producerSpec()
	const kmsgGen = "franz-go kmsg: Record.AppendTo for the records, RecordBatch.AppendTo for the header, hash/crc32 (Castagnoli) for the CRC"

	abortKey := (&kmsg.ControlRecordKey{Version: 0, Type: 0}).AppendTo(nil)
	abortValue := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 12}).AppendTo(nil)

	return []indepCase{
		{
			file:      "kmsg-uncompressed.hex",
			desc:      "Uncompressed transactional batch of an idempotent producer (baseOffset 1000, leader epoch 7, producerId 8001, epoch 2, baseSequence 250): headers with empty key, empty and null values; null key; tombstone; empty key and value; negative timestamp deltas; a record with timestamp -1; binary key; 3 KB JSON value.",
			generator: kmsgGen,
			spec:      txnSpec,
			records:   mixedRecords(),
			exact:     true,
		},
		{
			file:      "kmsg-abort-marker.hex",
			desc:      "ABORT transaction marker (control + transactional, baseSequence -1) for producerId 8001 epoch 2, coordinator epoch 12, at offset 1007.",
			generator: kmsgGen + "; kmsg.ControlRecordKey and kmsg.EndTxnMarker for the record's key and value",
			spec:      batchSpec{BaseOffset: 1007, PartitionLeaderEpoch: 7, Attributes: attrControl | attrTransactional, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1},
			records:   []testRecord{{Timestamp: ts0 + 60000, Key: abortKey, Value: abortValue}},
			check: func(t *testing.T, batch []byte) {
				r := record.NewReader(record.ReaderOptions{})
				require.NoError(t, r.Reset(batch))
				require.True(t, r.Header().Attributes.IsControl())
				require.True(t, r.Next())
				m, err := record.ParseEndTxnMarker(r.Record().Key, r.Record().Value)
				require.NoError(t, err)
				require.Equal(t, record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: 12}, m)
			},
			exact: true,
		},
		{
			file:      "kmsg-log-append-time.hex",
			desc:      "Uncompressed LogAppendTime batch as a broker stamps it (baseOffset 42, leader epoch 3): maxTimestamp is the append time and every record's timestamp; the stored deltas stay relative to the producer's baseTimestamp.",
			generator: kmsgGen,
			spec:      batchSpec{BaseOffset: 42, PartitionLeaderEpoch: 3, Attributes: attrLogAppendTime, MaxTimestamp: logAppendTime, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			records: []testRecord{
				{OffsetDelta: 0, Timestamp: ts0, Key: []byte("a"), Value: []byte("first")},
				{OffsetDelta: 1, Timestamp: ts0 - 20, Key: []byte("b"), Value: []byte("second, earlier create time")},
				{OffsetDelta: 2, Timestamp: ts0 + 20, Key: nil, Value: []byte("third")},
			},
			exact: true,
		},
		{
			file:      "gzip-two-members.hex",
			desc:      "gzip records section made of two concatenated gzip members split in the middle of a record; the first (level 9) has an FNAME and OS 3, the second (level 1) an FCOMMENT, an FEXTRA and OS 0.",
			generator: "Go standard library compress/gzip, two Writers with fixed headers (ModTime zero) written back to back",
			spec:      withCodec(producer, attrGzip),
			records:   mixedRecords(),
			compress: func(t *testing.T, section []byte) []byte {
				a, b := splitHalf(section)
				out := gzipMember(t, gzip.Header{Name: "records-part-1", OS: 3}, gzip.BestCompression, a)
				return append(out, gzipMember(t, gzip.Header{Comment: "part 2", Extra: []byte("KL\x02\x00ok"), OS: 0}, gzip.BestSpeed, b)...)
			},
			check: func(t *testing.T, batch []byte) {
				hdrs, parts, err := gzipMembers(batch[61:])
				require.NoError(t, err)
				require.Len(t, parts, 2)
				require.Equal(t, "records-part-1", hdrs[0].Name)
				require.Equal(t, "part 2", hdrs[1].Comment)
			},
		},
		{
			file:      "snappy-xerial.hex",
			desc:      "snappy in xerial framing as Kafka's Java producer writes it, about 70 KiB of JSON in 32 KiB chunks (three chunks); idempotent producer fields.",
			generator: "github.com/golang/snappy Encode for each chunk; the xerial header and chunk lengths written by hand (snappy-java's framing, see the record package doc)",
			spec:      withCodec(batchSpec{BaseOffset: 5000, PartitionLeaderEpoch: 1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 0}, attrSnappy),
			records:   largeRecords(),
			compress:  func(t *testing.T, section []byte) []byte { return xerialEncode(nil, section, 32<<10) },
			check: func(t *testing.T, batch []byte) {
				chunks, streams, err := xerialChunks(batch[61:])
				require.NoError(t, err)
				require.Equal(t, 1, streams)
				require.GreaterOrEqual(t, len(chunks), 3)
			},
			exact: true,
		},
		{
			file:      "snappy-xerial-concat.hex",
			desc:      "Two concatenated xerial snappy streams, split in the middle of a record; the second stream uses 1 KiB chunks.",
			generator: "github.com/golang/snappy Encode for each chunk; xerial framing written by hand, two streams back to back",
			spec:      withCodec(producer, attrSnappy),
			records:   mixedRecords(),
			compress: func(t *testing.T, section []byte) []byte {
				a, b := splitHalf(section)
				return xerialEncode(xerialEncode(nil, a, 32<<10), b, 1<<10)
			},
			check: func(t *testing.T, batch []byte) {
				chunks, streams, err := xerialChunks(batch[61:])
				require.NoError(t, err)
				require.Equal(t, 2, streams)
				require.Greater(t, len(chunks), 2)
			},
			exact: true,
		},
		{
			file:      "snappy-raw.hex",
			desc:      "snappy as one raw block without xerial framing, as librdkafka and franz-go write it.",
			generator: "github.com/golang/snappy Encode over the whole records section",
			spec:      withCodec(producer, attrSnappy),
			records:   mixedRecords(),
			compress:  func(t *testing.T, section []byte) []byte { return snappy.Encode(nil, section) },
			check: func(t *testing.T, batch []byte) {
				require.False(t, bytes.HasPrefix(batch[61:], xerialHeader[:8]))
				_, err := snappy.Decode(nil, batch[61:])
				require.NoError(t, err)
			},
			exact: true,
		},
		{
			file:      "snappy-raw-tiny.hex",
			desc:      "A raw snappy block shorter than the 16-byte xerial header: a reader must not take it for a truncated xerial stream.",
			generator: "github.com/golang/snappy Encode over the whole records section",
			spec:      withCodec(producer, attrSnappy),
			records:   []testRecord{{Timestamp: ts0, Key: nil, Value: []byte("x")}},
			compress:  func(t *testing.T, section []byte) []byte { return snappy.Encode(nil, section) },
			check: func(t *testing.T, batch []byte) {
				require.Less(t, len(batch[61:]), 16)
			},
			exact: true,
		},
		{
			file:      "lz4-checksums.hex",
			desc:      "LZ4 frame with block checksums, content checksum and content size (FLG 0x7C), 64 KiB blocks, about 70 KiB of JSON: two blocks. Kafka's writer sets none of these flags; its reader must accept them.",
			generator: "github.com/pierrec/lz4/v4 Writer with BlockChecksumOption(true), ChecksumOption(true), SizeOption(n), BlockSizeOption(Block64Kb), ConcurrencyOption(1)",
			spec:      withCodec(batchSpec{BaseOffset: 70000, PartitionLeaderEpoch: 12, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, attrLZ4),
			records:   largeRecords(),
			compress: func(t *testing.T, section []byte) []byte {
				return lz4Encode(t, section, lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(true),
					lz4.ChecksumOption(true), lz4.SizeOption(uint64(len(section))))
			},
			check: func(t *testing.T, batch []byte) {
				f, err := parseLZ4Frame(batch[61:])
				require.NoError(t, err)
				require.Equal(t, len(batch)-61, f.size)
				require.Equal(t, byte(0x7C), f.flg)
				require.Equal(t, byte(0x40), f.bd)
				require.NotNil(t, f.contentSize)
				require.NotNil(t, f.contentChecksum)
				require.GreaterOrEqual(t, len(f.blocks), 2)
				_, err = f.decode()
				require.NoError(t, err)
			},
		},
		{
			file:      "lz4-256k-stored-block.hex",
			desc:      "LZ4 frame with 256 KiB maximum block size (BD 0x50) and content checksum whose only block is stored uncompressed (bit 31 of the block size), because its input (2 KB of random bytes) does not compress.",
			generator: "github.com/pierrec/lz4/v4 Writer with BlockSizeOption(Block256Kb), ChecksumOption(true), ConcurrencyOption(1)",
			spec:      withCodec(producer, attrLZ4),
			records: []testRecord{
				{OffsetDelta: 0, Timestamp: ts0, Key: []byte("random"), Value: pseudoRandomBytes(2, 2000)},
				{OffsetDelta: 1, Timestamp: ts0 + 1, Key: []byte("text"), Value: []byte("short")},
			},
			compress: func(t *testing.T, section []byte) []byte {
				return lz4Encode(t, section, lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(true))
			},
			check: func(t *testing.T, batch []byte) {
				f, err := parseLZ4Frame(batch[61:])
				require.NoError(t, err)
				require.Equal(t, byte(0x50), f.bd)
				require.Len(t, f.blocks, 1)
				require.True(t, f.blocks[0].stored)
				_, err = f.decode()
				require.NoError(t, err)
			},
		},
		{
			file:      "zstd-no-content-size.hex",
			desc:      "zstd frame written by a streaming encoder, as zstd-jni's ZstdOutputStream in Kafka's Java producer: no content size in the frame header, content checksum present.",
			generator: "github.com/klauspost/compress/zstd streaming Encoder (Write, Flush, Close), level SpeedDefault, concurrency 1",
			spec:      withCodec(txnSpec, attrZstd),
			records:   mixedRecords(),
			compress:  zstdStream,
			check: func(t *testing.T, batch []byte) {
				frames, err := zstdFrames(batch[61:])
				require.NoError(t, err)
				require.Len(t, frames, 1)
				require.False(t, frames[0].hasContentSize)
				_, err = zstdDecodeStdlib(batch[61:])
				require.NoError(t, err)
			},
		},
		{
			file:      "zstd-two-frames.hex",
			desc:      "Two concatenated zstd frames split in the middle of a record: a streaming frame without content size, then a one-shot single-segment frame with it.",
			generator: "github.com/klauspost/compress/zstd: streaming Encoder for the first frame, EncodeAll (SpeedBetterCompression) for the second, concurrency 1",
			spec:      withCodec(producer, attrZstd),
			records:   mixedRecords(),
			compress: func(t *testing.T, section []byte) []byte {
				a, b := splitHalf(section)
				return append(zstdStream(t, a), zstdOneShot(t, b)...)
			},
			check: func(t *testing.T, batch []byte) {
				frames, err := zstdFrames(batch[61:])
				require.NoError(t, err)
				require.Len(t, frames, 2)
				require.False(t, frames[0].hasContentSize)
				require.True(t, frames[1].hasContentSize)
				_, err = zstdDecodeStdlib(batch[61:])
				require.NoError(t, err)
			},
		},
	}
}

func TestIndependentToOurs(t *testing.T) {
	for _, tc := range independentCases() {
		t.Run(tc.file, func(t *testing.T) {
			b, spec := tc.build(t)
			requireKmsgHeader(t, b, spec)
			if tc.check != nil {
				tc.check(t, b)
			}
			requireIndependentSection(t, b, spec, tc.records)
			requireOurRecords(t, b, spec, tc.records)
		})
	}
}

// requireIndependentSection decodes the records section with the
// independent decoders and kmsg, so that a case cannot pass by a fault
// shared between its encoder and record.Reader.
func requireIndependentSection(t *testing.T, b []byte, spec batchSpec, want []testRecord) {
	t.Helper()
	section := b[61:]
	var err error
	switch spec.Attributes & 7 {
	case attrGzip:
		var parts [][]byte
		_, parts, err = gzipMembers(section)
		section = bytes.Join(parts, nil)
	case attrSnappy:
		if bytes.HasPrefix(section, xerialHeader[:8]) {
			chunks, _, cerr := xerialChunks(section)
			require.NoError(t, cerr)
			var out []byte
			for _, c := range chunks {
				d, derr := snappy.Decode(nil, c)
				require.NoError(t, derr)
				out = append(out, d...)
			}
			section = out
		} else {
			section, err = snappy.Decode(nil, section)
		}
	case attrLZ4:
		var f *lz4Frame
		f, err = parseLZ4Frame(section)
		require.NoError(t, err)
		require.Equal(t, len(section), f.size)
		section, err = f.decode()
	case attrZstd:
		section, err = zstdDecodeStdlib(section)
	}
	require.NoError(t, err)
	requireKmsgRecords(t, section, spec.BaseTimestamp, want)
}
