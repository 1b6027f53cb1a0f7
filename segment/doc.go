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
//   - Prewrite: the batch without its first 12 bytes (base offset, length)
//     is in the .log past the segment's size, which does not change; a
//     crash leaves a zero batch length in front of it, which recovery cuts
//     off. AppendPrewritten writes the 12 bytes and is then an Append;
//     DiscardPrewrite takes the bytes back (the file ends at the size
//     again, or holds zeros past it when preallocated).
//   - Publish: [Segment.ReadableSize], the bound a log gives its readers,
//     covers what was appended so far; a segment never published is
//     readable up to its size.
//   - Flush: the .log, then the indexes, are fsynced.
//   - Seal and Close: the indexes are trimmed to their entries (the last
//     time-index slot takes the segment's max timestamp); not fsynced.
//   - RenameForDeletion: the files carry the .deleted suffix; the caller
//     syncs the directory. Remove deletes them once no Slice is live.
//
// # Memory-mapped reads
//
// On the operating system's filesystem the .log is also mapped read-only
// ([vfs.MapGrowing]) the first time a reader looks at bytes in place:
// [Slice.View], which the log's point reads use, and [Segment.Read] for the
// batch headers it walks. An active segment is mapped up to segment.bytes,
// so that what is appended later shows in the same mapping; an inactive one
// at its size. Elsewhere (the memory filesystem, the fault injector, systems
// without mmap or a unified buffer cache), or where mapping fails, readers
// copy with ReadAt as before; so do ReadAt, Bytes and WriteTo everywhere.
//
// No access through the mapping can reach unmapped memory or a page past
// the end of the file (either would kill the process, the latter with
// SIGBUS), by construction:
//
//   - Mapped bytes are touched only inside the segment's view function,
//     holding the segment's mapMu (a sync.RWMutex) shared, and only bytes
//     below the segment's size as it is under that lock. They never leave
//     it: View's callback must copy what it keeps (the log clones the
//     record it returns).
//   - The size shrinks only with mapMu held exclusively (TruncateTo,
//     Recover, cutting a failed append off), lowered before the file is
//     truncated; at all other times the file is at least that long, since
//     an append writes its batch before it raises the size. So while a
//     reader holds mapMu, every byte below the size it saw is in the file.
//   - The mapping is unmapped only with mapMu held exclusively: when the
//     segment turns inactive or active again (Seal, TruncateTo, Recover;
//     the next reader maps it at the size that suits it) and when the .log
//     closes, which happens only once no Slice is live (Close without
//     readers, or the last Release after Close). Read takes its reference
//     before it looks at the mapping.
//   - Deletion renames and then unlinks the files; a mapping of an
//     unlinked file stays valid until it is unmapped.
//
// So truncating, sealing and closing wait only for the views in flight (a
// view parses a few headers or decodes one record), never for a Slice to
// be released; a Slice whose batches were truncated away is no longer
// viewed (View returns false) and ReadAt reports [ErrCutUnderRead]. Another
// process truncating the files is not guarded against; the log's directory
// lock keeps other kafkalite processes out.
//
// Locks, in the order they may be taken: the segment's mapMu, then its mu
// (lazy index handles, references, state), then the index files' locks.
// A View callback must not call back into the segment.
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
