// Package record reads and writes Kafka's RecordBatch v2, the unit of
// everything kafkalite stores: a .log segment is batches back to back, a
// producer seals them, a consumer decodes them. The bytes are Kafka's, so a
// batch written here is read by Kafka and its clients, and one written by
// Kafka's Java client, librdkafka or franz-go is read here. The
// repository's docs/FORMAT.md describes every byte layout kafkalite reads
// and writes, each fact with the Kafka source file or KIP it comes from.
//
// A batch (all integers big-endian; Kafka's DefaultRecordBatch):
//
//	 0                   8          12                 16    17     21     23
//	+-------------------+----------+------------------+-----+------+------+
//	| baseOffset int64  | length32 | leaderEpoch int32|magic| crc  | attr |
//	+-------------------+----------+------------------+-----+------+------+
//	 23                 27                 35                43
//	+------------------+------------------+-----------------+
//	| lastOffsetDelta  | baseTimestamp    | maxTimestamp    |
//	+------------------+------------------+-----------------+
//	 43                 51        53             57           61
//	+------------------+---------+--------------+------------+------------
//	| producerId int64 | epoch16 | baseSequence | recordsCnt | records...
//	+------------------+---------+--------------+------------+------------
//
// length counts the bytes after itself; the CRC-32C covers bytes 21 to the
// end (so the log can rewrite baseOffset and leaderEpoch without touching
// it); the records section is compressed as a whole when attr names a
// codec. Each record inside is
//
//	length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
//	keyLength varint | key | valueLength varint | value |
//	headerCount varint | (headerKeyLength varint | headerKey | headerValueLength varint | headerValue)*
//
// with varints zig-zag encoded and a length of -1 meaning null (Kafka's
// DefaultRecord). A producer writes offsetDelta 0, 1, 2, … and timestamp
// deltas from baseTimestamp, the first record's timestamp; maxTimestamp is
// the largest record timestamp.
//
// The package offers:
//
//   - [Builder]: appends records into a reusable buffer and seals a batch
//     (lengths, deltas, compression, CRC), allocation-free once warm.
//   - [Reader]: validates a batch and iterates its records without allocating
//     per record; decompression is bounded by [ReaderOptions].
//   - [Validate], [ParseHeader], [BatchSize]: header-level checks without
//     decompressing, as a log scanner needs.
//   - [SetBaseOffset], [SetPartitionLeaderEpoch], [SetLogAppendTime],
//     [SetMaxTimestamp]: the in-place rewrites a log performs on append.
//   - Control records: [AppendEndTxnMarkerBatch], [ParseControlKey],
//     [ParseEndTxnMarker]; [AppendEmptyBatch] for the cleaner's empty batches.
//
// Bad input never panics: every decoding failure is a [*CorruptError] that
// matches one of the package's sentinels with errors.Is, and [ErrCorrupt]
// for anything that is damage rather than a short read ([ErrTruncated]) or a
// limit ([ErrTooLarge]).
//
// Legacy message formats (magic 0 and 1) are not supported: they fail with
// [ErrUnsupportedMagic].
//
// # Compression
//
// With a codec in attr (bits 0–2: 1 gzip, 2 snappy, 3 lz4, 4 zstd), bytes
// [61, end) are one compressed stream whose content is the records; the
// header is never compressed and the CRC covers the compressed bytes as
// stored. gzip is a standard gzip member and zstd a standard zstd frame
// (readers accept several concatenated members or frames). Two codecs have
// a framing of Kafka's Java producer, which this package writes:
//
//   - snappy in snappy-java's xerial stream format (Kafka's
//     SnappyCompression, snappy-java's SnappyOutputStream): a 16-byte
//     header, the magic 82 'S' 'N' 'A' 'P' 'P' 'Y' 00 then version 1 and
//     compatible version 1 as big-endian int32s, then chunks, each an int32
//     compressed length and one raw snappy block of at most 32 KiB of
//     input. Readers take a section shorter than the header or not starting
//     with the magic as one raw snappy block (what librdkafka and franz-go
//     write), and a chunk length equal to the magic's first four bytes as
//     the start of a concatenated stream.
//   - LZ4 as an LZ4 frame (Kafka's Lz4BlockOutputStream; little-endian):
//     magic 04 22 4d 18, FLG 0x60 (version 1, independent blocks, no block
//     or content checksum, no content size), BD 0x40 (64 KiB blocks), the
//     header checksum (xxHash32(FLG, BD) >> 8) & 0xff, then blocks, each a
//     uint32 size (bit 31 set: stored uncompressed) and the block, and an
//     end mark of four zero bytes. Readers also accept the optional
//     checksums, a content size and other block sizes.
//
// # Worked example
//
// testdata/worked_example.hex is one batch computed by hand, field by
// field, from the layout above: one record, key "k", value "v", timestamp
// 1700000000000, offset 0, CreateTime, no compression, no producer id,
// leader epoch -1; 70 bytes, batchLength 58, crc 0xE99B8DD8. Its comment
// lines name each field.
package record
