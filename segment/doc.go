// Package segment manages one segment of a Kafka partition: a .log file of
// RecordBatch v2 batches back to back (no header, no padding) and its sparse
// indexes, all named by the segment's base offset zero-padded to 20 digits
// (KAFKA_FORMAT §3):
//
//	00000000000000368769.log        batches, offsets ≥ 368769
//	00000000000000368769.index      offset → position, 8-byte entries
//	00000000000000368769.timeindex  timestamp → offset, 12-byte entries
//	00000000000000368769.txnindex   aborted transactions (only once one aborts)
//
// A [Segment] owns these files. [Create] makes a new active segment with
// indexes preallocated to segment.index.bytes; [Open] loads an existing one,
// trusting its indexes after Kafka's sanity checks; [Segment.Recover]
// rescans the .log after an unclean shutdown, truncates a torn or corrupt
// tail and rebuilds the indexes. [Segment.Append] adds a validated batch and
// index entries every index.interval.bytes, exactly as Kafka's LogSegment
// does; [Segment.Read] returns whole batches from an offset as a [Slice] (a
// reference-counted file range a broker can send without copying);
// [Segment.Seal] trims the indexes when the log rolls to a new segment.
//
// What is where when a call returns:
//
//   - Append: the batch is in the .log through the OS page cache (or the
//     memory FS) and readable; index entries likewise. Nothing is durable.
//   - Flush: the .log, then the indexes, are fsynced.
//   - Seal and Close: the indexes are trimmed to their entries (the last
//     time-index slot takes the segment's max timestamp); not fsynced.
//   - RenameForDeletion: the files carry the .deleted suffix; the caller
//     syncs the directory. Remove deletes them once no Slice is live.
//
// Bad input and its handling, per case (each is a test):
//
//   - a partial batch at the end (a torn write), a zero-filled tail (a
//     preallocated file after a crash), a CRC mismatch, garbage, offsets that
//     go backwards: Recover truncates from the first such batch on and says
//     why in RecoverResult.Cause (record.ErrTruncated for a torn tail,
//     record.ErrCorrupt or ErrOffsetOrder for damage), as Kafka does;
//   - a legacy magic 0/1 batch: Recover stops with ErrLegacyFormat naming the
//     file and position, and truncates nothing;
//   - an index that fails Kafka's sanity checks or points past the end of
//     the .log: the first use reports index.ErrCorruptIndex, and Recover
//     rebuilds it; a missing .index: Open reports fs.ErrNotExist, and Recover
//     rebuilds it; a missing .timeindex: Open creates it empty;
//   - a file name that is not 20 digits: ParseFileName fails with
//     ErrBadFileName.
package segment
