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
// A [Segment] owns these files. [Create] makes a new active segment with
// indexes preallocated to segment.index.bytes; [Open] loads an existing one,
// trusting its indexes after Kafka's sanity checks and ours (a sealed
// segment rebuilds indexes that fail them: see "Damage");
// [Segment.Recover] rescans the .log after an unclean shutdown, truncates a
// torn or corrupt tail and rebuilds the indexes. [Segment.Append] adds a validated batch and
// index entries every index.interval.bytes, exactly as Kafka's LogSegment
// does; [Segment.Read] returns whole batches from an offset as a [Slice] (a
// reference-counted file range a broker can send without copying);
// [Segment.Seal] trims the indexes when the log rolls to a new segment.
//
// What is where when a call returns:
//
//   - Append: the batch is in the .log through the OS page cache (or the
//     memory FS) and readable; index entries likewise. Nothing is durable.
//   - [LogHooks.AppendOverlapped]: as Append when it returns nil; the batch without
//     its first 12 bytes (base offset, length) is written past the
//     segment's size while the caller's check runs, so a crash before the
//     12 bytes follow leaves a zero batch length in front of it, which
//     recovery cuts off. A refused batch is taken back (the file ends at
//     the size again, or holds zeros past it when preallocated).
//   - Publish: [LogHooks.ReadableSize], the bound a log gives its readers,
//     covers what was appended so far. It starts at the size the segment
//     was created or opened with.
//   - Flush: the .log, then the indexes, are fsynced.
//   - Seal and Close: the indexes are trimmed to their entries (the last
//     time-index slot takes the segment's max timestamp); not fsynced.
//   - RenameForDeletion: the files carry the .deleted suffix; the caller
//     syncs the directory. Remove deletes them once no Slice is live.
//
// # Memory-mapped reads
//
// On the operating system's filesystem the .log is also mapped read-only,
// for readers that look at bytes in place: [Slice.View], and
// [Segment.Read] for the batch headers it walks. Elsewhere, or where
// mapping fails, they copy with ReadAt. No read through the mapping can
// touch a page the file no longer has (the argument is in mmap.go):
// truncating, sealing and closing wait for the views in flight, never for
// a Slice to be released, and a Slice whose batches were truncated away
// is no longer viewed (View returns false); its ReadAt reports
// [ErrCutUnderRead].
//
// Locks, in the order they may be taken: the mutex of the segment's index
// rebuild, its .log's mapMu, then its mu (lazy index handles, references,
// state), then the index files' locks. A View callback must not call back
// into the segment.
//
// Bad input and its handling, per case (each is a test):
//
//   - a partial batch at the end (a torn write), a zero-filled tail (a
//     preallocated file after a crash), a CRC mismatch, garbage, offsets
//     that cannot be true (see below): Recover truncates from the first
//     such batch on and says why in RecoverResult.Cause (record.ErrTruncated
//     for a torn tail, record.ErrCorrupt for damage), as Kafka does;
//   - a legacy magic 0/1 batch: Recover stops with ErrLegacyFormat naming the
//     file and position, and truncates nothing;
//   - the active segment's index that fails its checks, or its missing
//     .index: Open reports index.ErrCorruptIndex or fs.ErrNotExist, and
//     Recover rebuilds it; a missing .timeindex: Open creates it empty;
//   - a sealed segment's damage, which no Recover rescans: see "Damage";
//   - a file name that is not 20 digits: ParseFileName fails with
//     ErrBadFileName.
//
// # Damage
//
// After a clean shutdown, and below a log's recovery point, segments are
// opened without a scan of their .log (a log recovers only from its
// recovery point on). Damage found there is worked around without
// truncating or deleting anything, so that it costs only what it
// destroyed:
//
//   - Offsets. A batch's base offset and length lie outside its CRC. Every
//     walk over batch headers (reads, the recovery scan, the tail scan, the
//     rebuild scan) serves a batch only if its offsets can be true: it
//     starts above the batch before it, fits the relative offsets of the
//     indexes, ends below the next segment's base offset
//     ([LogHooks.SetNextBaseOffset]) and the segment's next offset, and the
//     batch after it starts above its last offset (when that one does not
//     but the one after it does, the one in between is the odd one). A
//     batch that fails is stepped over: a read of an offset it may hold (up
//     to the next good batch's base offset) fails with [ErrCorruptLog]
//     naming the file and the batch's position; reads of later offsets get
//     the later batches. Recover truncates at such a batch instead.
//   - Indexes. A sealed segment's .index or .timeindex that fails Kafka's
//     sanity checks or ours (the last .index entry must point at a batch
//     ending at its offset, the last .timeindex entry at a batch of its
//     offset whose max timestamp it names), a missing .index, and an entry
//     that a read finds pointing at a batch with another last offset, make
//     the segment rebuild both files from its .log, crash-safely (written
//     under a temporary name, synced, renamed, the directory synced: a
//     crash leaves the old file, which is rebuilt again, or the new one),
//     and tell the log (Config.OnIndexRebuild). The rebuild indexes the
//     batches whose header, CRC and offsets pass, and steps over the
//     others. It never races the writer: a rebuild begun before the
//     segment is made active again (TruncateTo, Recover) is discarded, and
//     a read that met a mismatch while the writer changed the segment
//     fails with ErrCutUnderRead instead of rebuilding. A segment rebuilds
//     at most once.
//   - The .log. Bytes that do not parse as a batch header where a batch
//     must start (a .log cut short, overwritten, zeroed) end the readable
//     part of a sealed segment where the tail scan or a rebuild meets them:
//     [LogHooks.Damage] returns the error reads past there return
//     ([ErrCorruptLog], naming the file and the position where the
//     readable part ends), [Segment.Size] becomes that position, and the
//     log hears of it (Config.OnLogDamage). A read that meets such bytes
//     elsewhere fails the same way, unless an index entry past them leads
//     to a batch holding the offset asked for. Reads never return a partial
//     batch. The file is left as it is, so that the damage is found again
//     after a restart; TruncateTo and Recover cut it off. A .log cut
//     exactly at a batch boundary is found by the rebuild of its index,
//     whose last entry names an offset past the new end: the segment's
//     readable part ends there the same way, but only until the directory
//     is reopened, since the rebuilt index leaves nothing to find (the
//     segment then ends there, as one the cleaner shortened would).
//   - CRCs. [Slice.VerifyCRC] checks a slice's batches for readers that
//     decode them, remembering what it verified, and the batches this
//     process appended, until the .log is cut.
//   - The .txnindex. [LogHooks.CheckTxnIndex] checks it
//     ([index.TxnIndex.Validate]), [LogHooks.AppendAbortMarkers] lists the
//     ABORT markers to check it against, and [LogHooks.ReplaceTxnIndex]
//     installs the entries the log rebuilt from them, crash-safely.
package segment
