// Package snapshot reads and writes Kafka's producer-state snapshot files,
// <offset>.snapshot in a partition directory, byte for byte (Kafka's
// ProducerSnapshot.json and ProducerStateManager):
//
//	<topic>-<partition>/
//	  00000000000000000000.log
//	  00000000000000001200.snapshot      producer state at offset 1200  [Read]
//
// # File names
//
// The name is the "map end offset" — the next offset after the last batch
// the state reflects — zero-padded to 20 digits, then ".snapshot"
// ([FileName], [ParseFileName]). The log writes one at every segment roll
// (named for the new segment's base offset), at clean shutdown (the log end
// offset) and while loading; deciding when, and deleting old ones, is the
// log's job. [List] returns the offsets of a directory's snapshots and
// ignores everything else, including "<offset>.snapshot.deleted" and the
// "<offset>.snapshot.tmp" a crashed [Write] may leave (Kafka's loader
// deletes stray ".tmp" files).
//
// # Format: version 1, the only version
//
// Big-endian, no padding:
//
//	+---------+---------+------------+---------------------+
//	| version | crc     | entryCount | entries             |
//	| int16=1 | uint32  | int32 = n  | n × 46 bytes        |
//	+---------+---------+------------+---------------------+
//	0         2         6            10                    10+46n
//
// crc is the CRC-32C (Castagnoli) of bytes [6, EOF): the count and the
// entries. A file with no producers is 10 bytes. Each entry:
//
//	off size field                  [Entry] field
//	  0    8 producerId             ProducerID
//	  8    2 epoch                  ProducerEpoch
//	 10    4 lastSequence           LastSequence          (-1: none)
//	 14    8 lastOffset             LastOffset            (-1: none)
//	 22    4 offsetDelta            OffsetDelta
//	 26    8 timestamp              Timestamp
//	 34    4 coordinatorEpoch       CoordinatorEpoch      (-1: initially)
//	 38    8 currentTxnFirstOffset  CurrentTxnFirstOffset (-1: none)
//
// Entry order is not part of the format (Kafka writes hash-map order);
// [Encode] writes the entries in the order given, so callers that sort them
// by producer id get deterministic bytes.
//
// # Reading: corrupt means rebuild
//
// [Decode] accepts exactly what [Encode] writes: version 1, a matching CRC,
// a count that is not negative and equals the number of 46-byte entries
// present (nothing is allocated from the count before that is checked), no
// trailing bytes. Anything else is a [*CorruptError] matching [ErrCorrupt],
// never a panic. Kafka treats a corrupt snapshot by deleting it and
// rebuilding the state from the log; so should the caller. Kafka's own
// reader ignores bytes after the last entry (the CRC covers them, so they
// can only come from a writer other than Kafka's); this package rejects
// them, so that what decodes re-encodes to the same bytes.
//
// # Writing: atomic and durable
//
// [Write] goes through checkpoint.WriteFileAtomic: the bytes go to
// <name>.tmp, which is synced and renamed over <name>, and the directory is
// synced. When Write returns nil the snapshot is durable; a crash before
// that leaves the old file (or none) and never a torn one. (Kafka writes
// the file in place and relies on the CRC to catch a torn write.)
//
// Functions of this package are safe for concurrent use on different
// files; writes to one file must be serialised by the caller.
package snapshot
