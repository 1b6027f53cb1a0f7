// Package index reads and writes a segment's three index files exactly as
// Apache Kafka lays them out (Kafka's AbstractIndex, OffsetIndex,
// TimeIndex, TransactionIndex and AbortedTxn):
//
//	<20-digit base offset>.index       offset → .log position    [OffsetIndex]
//	<20-digit base offset>.timeindex   timestamp → offset        [TimeIndex]
//	<20-digit base offset>.txnindex    aborted transactions      [TxnIndex]
//
// All integers are big-endian and signed; no file has a header or a
// checksum (Kafka rebuilds an index it does not trust from the .log).
// Naming the files, opening them lazily, renaming and deleting them are the
// segment's job; this package is handed a [vfs.FS] and a name.
//
// # .index: offset index, 8-byte entries
//
//	 0               4               8
//	+---------------+---------------+
//	| relativeOffset|   position    |   one entry; the file is entries
//	|   int32       |   int32       |   back to back, nothing else
//	+---------------+---------------+
//
// relativeOffset is the last offset of an indexed batch minus the segment's
// base offset ([RelativeOffset], 0..2^31−1); position is the byte position
// in the .log where that batch starts ([Position]). Offsets strictly
// increase from entry to entry.
//
// # .timeindex: time index, 12-byte entries
//
//	 0                               8               12
//	+-------------------------------+---------------+
//	|          timestamp            | relativeOffset|
//	|          int64 (ms)           |   int32       |
//	+-------------------------------+---------------+
//
// timestamp is the segment's max timestamp when the entry was added;
// relativeOffset is that of the last offset of the batch holding it.
// Timestamps strictly increase, offsets never decrease.
//
// # .txnindex: aborted transactions, 34-byte entries
//
//	 0       2               10              18              26              34
//	+-------+---------------+---------------+---------------+---------------+
//	|version|  producerId   |  firstOffset  |  lastOffset   |lastStableOffs.|
//	| int16 |    int64      |    int64      |    int64      |    int64      |
//	+-------+---------------+---------------+---------------+---------------+
//
// version is 0. lastOffset is the offset of the ABORT marker, which is in
// this segment; firstOffset (the transaction's first offset in the
// partition) may be in an earlier one; lastStableOffset is the partition's
// LSO right after the abort. Entries strictly increase in lastOffset.
//
// A read_committed fetch of [fetchOffset, upperBound) walks the .txnindex
// files of the segments from the one holding fetchOffset on, takes every
// entry with lastOffset ≥ fetchOffset and firstOffset < upperBound, and
// stops after an entry whose lastStableOffset ≥ upperBound: no transaction
// aborted in a later segment can overlap the range
// ([TxnIndex.CollectAbortedTxns]).
//
// # Filling rules
//
// The .index and .timeindex are sparse. The segment adds one entry to each
// when more than index.interval.bytes (4096) bytes were appended to the .log
// since the last entry: offset entry (batch last offset, batch position),
// time entry (max timestamp so far, its batch's last offset). [OffsetIndex.Append]
// rejects an offset not above the last ([ErrInvalidOffset]).
// [TimeIndex.MaybeAppend] skips a timestamp equal to the last (the empty
// index's last entry is (−1, base offset), so timestamps of −1 never make an
// entry) and rejects a smaller timestamp or offset.
//
// Both files are created preallocated, zero-filled to
// roundDown(segment.index.bytes, entrySize) bytes (segment.index.bytes is
// 10 MiB by default: [DefaultMaxIndexBytes]); the count of entries in use is
// kept in memory, not in the file. When the segment rolls or closes, the time index
// gets a final entry (segment max timestamp, its offset) if it is larger
// than the last, in a slot kept for it: [TimeIndex.IsFull] is entries ≥
// maxEntries − 1, [OffsetIndex.IsFull] entries ≥ maxEntries; then both
// files are trimmed to entries × entrySize ([OffsetIndex.TrimToValidSize]).
// A segment whose index is full rolls.
//
// Counting entries on open:
//
//   - [ReadOnly] (an inactive segment, whose files were trimmed): every slot
//     is an entry, entries = size / entrySize, as Kafka counts every file.
//   - [ReadWrite] (the active segment): the file may still carry its
//     zero-filled preallocated tail, after a crash or when it was not
//     trimmed; the entries are the slots up to and including the last one
//     holding a non-zero byte. Kafka itself counts every slot here too, and
//     relies on rebuilding the active segment's indexes after an unclean
//     shutdown; kafkalite recovers the entries instead. The rule is sound
//     because an entry of a Kafka-shaped index is never all zeros except
//     possibly a first offset entry (base offset, 0) or time entry (0, base
//     offset), whose loss changes no lookup's scan start, and because this
//     package zeroes the slots it truncates away. A trimmed file opens full;
//     the segment re-expands it with Resize.
//
// Lookups search the last 8 KiB of entries (Kafka's "warm section") first,
// then the rest, by binary search for the largest entry ≤ the target; below
// the first entry the answer is the segment start: (base offset, 0) for
// [OffsetIndex.Lookup], (−1, base offset) for [TimeIndex.Lookup].
//
// The .txnindex is neither preallocated nor sparse: the segment creates it
// at the first aborted transaction whose ABORT marker it holds and appends
// one entry per such transaction. [TxnIndex.SanityCheck] is Kafka's check;
// [TxnIndex.Validate] checks every rule above (whole entries, version 0,
// offsets in order and inside the segment), since a damaged entry would
// make read_committed readers deliver aborted records.
//
// # Files, mapping and durability
//
// On the operating system's filesystem the .index and .timeindex are
// memory-mapped (read-only for [ReadOnly], read-write for [ReadWrite]), as
// Kafka maps them. Where mapping is not supported (the memory filesystem,
// the fault injector, systems without mmap) the same code reads and writes
// entries with ReadAt and WriteAt. A mapped index writes the entry that
// first reaches into a page of the file with WriteAt and the rest through
// the mapping: the write fault that allocates a file's block costs
// milliseconds on some filesystems, a write microseconds. Either way an
// appended entry is visible to lookups at once and durable only after
// Flush. The .txnindex is always
// read and written through the file.
//
// Nothing read from a file can make this package panic: garbage yields
// entries that are garbage, [ErrCorruptIndex] from SanityCheck, or an error
// from the call that read it.
package index
