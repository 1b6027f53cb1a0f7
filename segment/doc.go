// Package segment manages one segment of a Kafka partition: a .log file of
// RecordBatch v2 batches back to back (no header, no padding) and its sparse
// indexes, all named by the segment's base offset zero-padded to 20 digits
// (Kafka's LogSegment and LogFileUtils):
//
//	00000000000000368769.log        batches, offsets ≥ 368769
//	00000000000000368769.index      offset → position, 8-byte entries
//	00000000000000368769.timeindex  timestamp → offset, 12-byte entries
//	00000000000000368769.txnindex   aborted transactions (only once one aborts)
//
// A [Segment] owns these files. A broker keeps a partition as a list of
// segments, the last one active:
//
//   - [Create] makes a new active segment; [Open] loads an existing one,
//     trusting its indexes after Kafka's sanity checks and ours;
//     [Segment.Recover] rescans one after an unclean shutdown and cuts off
//     a torn or corrupt tail.
//   - [Segment.Append] adds a validated batch, and index entries every
//     index.interval.bytes as Kafka's LogSegment adds them;
//     [Segment.ShouldRoll] says when the next segment is due, and
//     [Segment.Seal] trims the old one's indexes.
//   - [Segment.Read] returns whole batches from an offset as a [Slice], a
//     reference-counted file range that a broker sends to a socket without
//     copying or reads into memory; [Segment.FindOffsetByTimestamp] finds
//     the first record at or after a timestamp.
//   - [Segment.Flush] makes it durable, [Segment.TruncateTo] cuts it,
//     [Segment.Remove] deletes it once no Slice is live, and
//     [Segment.Close] closes it.
//
// Bad input is never a panic: errors name the file and position
// ([*Error]), and a segment reads past damage below a log's recovery
// point without cutting anything off (see [Segment] for what each call
// leaves on disk and what each kind of damage does).
//
// The log package uses a few operations more ([LogHooks]), which code
// outside this module cannot reach.
package segment
