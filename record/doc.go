// Package record reads and writes Kafka's RecordBatch v2, the unit of
// everything kafkalite stores: a .log segment is batches back to back, a
// producer seals them, a consumer decodes them. The bytes are Kafka's, so a
// batch written here is read by Kafka and its clients, and one written by
// Kafka's Java client, librdkafka or franz-go is read here.
//
// A batch (all integers big-endian; KAFKA_FORMAT §1):
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
// with varints zig-zag encoded and a length of -1 meaning null.
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
package record
