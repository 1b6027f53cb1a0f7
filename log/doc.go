// Package log is the object a user opens: a log directory in Kafka's layout,
// holding topics, each with partitions, each a Kafka partition log. The open
// [Dir] plays the broker (Kafka's LogManager): one per directory per
// process, enforced by a lock. A [Log] is one partition (Kafka's
// UnifiedLog): it appends as leader or replica, reads, rolls, retains and
// recovers.
//
// # Directory layout
//
//	<dir>/
//	  .lock                              held (flock; on Linux a record lock too, as Kafka's) while a Dir is open
//	  meta.properties                    version=1, cluster.id, node.id, directory.id
//	  .kafka_cleanshutdown               only between a clean Close and the next Open
//	  recovery-point-offset-checkpoint   per partition: offset below which all is fsynced
//	  log-start-offset-checkpoint        per partition, where above the first segment
//	  replication-offset-checkpoint      per partition: high watermark (= log end offset)
//	  kafkalite-topics.json              kafkalite's topic ids, partition counts, configs
//	  kafkalite-group-configs.json       groups' configuration overrides (only once one is set)
//	  kafkalite-scram-credentials.json   users' SCRAM credentials: salt, stored and server keys (once one is set)
//	  kafkalite-client-quotas.json       users' and client ids' quotas (once one is set)
//	  <topic>-<partition>/
//	    00000000000000000000.log         batches (RecordBatch v2)
//	    00000000000000000000.index       offset index
//	    00000000000000000000.timeindex   time index
//	    partition.metadata               topic id
//	    leader-epoch-checkpoint          0 <first offset>
//
// Everything but the kafkalite-*.json files is byte for byte what a Kafka
// broker writes, so Kafka's tools read the directory; Kafka ignores the
// extra files. A directory a broker wrote is adopted when Config.AdoptBrokerDirectory
// asks (any other non-empty directory without kafkalite-topics.json is
// refused with ErrNotLogDir): its topics get the directory's default
// configuration (a broker keeps topic overrides in its
// metadata log), but for __consumer_offsets and __transaction_state, which
// get the compacted configuration Kafka gives them. As Kafka's LogManager, kafkalite
// leaves the KRaft metadata log (__cluster_metadata-0, the raft client's)
// and tiered storage's remote-log-index-cache directory alone.
//
// # Durability: what is on disk when a call returns
//
//   - [Log.Append] (and a producer with acks=1): the batch is in the
//     operating system's page cache. It is readable at once and survives a
//     crash of the process (kill -9), not a power loss or kernel crash. If the
//     topic sets flush.messages, every flush.messages-th record's append also
//     fsyncs; flush.ms makes the Dir fsync in the background.
//   - [Log.AppendDurable], [Log.Sync] (and acks=all): the batch, and every
//     batch appended before it, is fsynced, and so is the partition directory
//     if a segment was created or removed. Concurrent durable appends share
//     fsyncs (group commit). If the context ends while waiting, the call
//     returns the context's error: the batch was appended and will be
//     durable after the next flush, but was not acknowledged as durable.
//   - [Log.Flush]: everything appended so far is fsynced.
//   - [Dir.CreateTopic], [Dir.DeleteTopic], [Dir.AlterTopicConfig],
//     [Dir.AddPartitions], [Dir.AlterGroupConfig]: the change is durable
//     when they return.
//   - [Dir.Close]: every partition flushed, checkpoints written, and the
//     clean-shutdown marker written last, so the next Open skips recovery.
//
// After a crash, Open recovers every partition from its recovery point:
// segments are rescanned, a torn or corrupt tail truncated (and later
// segments removed), indexes rebuilt. Whatever was fsynced is there; what
// was only in the page cache may be there in part, always as a clean prefix
// of whole batches.
//
// A failed write or fsync makes its partition refuse appends ([ErrStorage])
// until the directory is reopened: a failed fsync is never retried on the
// same pages, because the kernel may have dropped them. What was
// acknowledged stays readable.
//
// # Damage below the recovery point
//
// What recovery does not rescan (everything after a clean shutdown, the
// segments below the recovery point after a crash) is checked as it is
// used, and damage there costs only what it destroyed: no segment is
// truncated or deleted for it, and nothing is served that was not
// written. The rules, with "Damage" in segment.Segment's doc for details:
//
//   - A sealed segment's .index or .timeindex that fails its checks, or a
//     missing .index, is rebuilt from the .log on first use, crash-safely,
//     with a warning; [PartitionStats.IndexRebuilds] counts them.
//   - A batch whose offsets cannot be true (its base offset lost a bit
//     outside the CRC, say) is never served: a read of an offset it may
//     hold fails with an error matching record.ErrCorrupt (a
//     [*segment.Error] naming the .log and the batch's position, whose
//     NextOffset is the base offset of the batch after it); reads of later
//     offsets get the later batches, so a consumer can seek past it.
//   - A sealed segment's .log that stops holding batches before its end
//     (cut short, overwritten, zeroed) is readable up to its last whole
//     batch; a read of an offset past that point, up to the next segment's
//     base offset, fails with the same kind of error, naming the position
//     where the readable part ends (NextOffset: the next segment's base
//     offset), and [PartitionStats.DamagedSegments] counts the segment.
//     The later segments read as usual. A read never returns part of a
//     batch.
//   - [Log.ReadRecords], [Log.ReadCommittedRecords] and [Log.ReadRecord]
//     check every batch's CRC (Kafka's check.crcs) and fail with an error
//     matching record.ErrCRC naming file and position; [Log.Fetch] (and
//     [Log.Read]), a broker's raw read, does not, as a Kafka broker's
//     fetch does not.
//     Only the first batch of a read fails it: damage after the first
//     batch ends the read early, and the next read reports it.
//   - A .txnindex is checked when the log loads (whole 34-byte entries of
//     version 0, offsets inside their segment, in order) and, the first
//     time a read_committed read uses it, against its segment's ABORT
//     markers; one that fails, a missing one, and those of the segments
//     recovery rescans, are rebuilt from the ABORT markers by a replay of
//     the producer state, so that read_committed never returns an aborted
//     record. [PartitionStats.TxnIndexRebuilds] counts the rebuilds.
//   - A log-start-offset-checkpoint entry past the log end is ignored with
//     a warning, counted in [RecoveryStats.CorruptLogStartOffsets]; one
//     below the first segment is stale (retention ran after it was
//     written) and the first segment's base offset is the start, as in
//     Kafka.
//   - A meta.properties that does not parse, or names no node, is
//     [ErrCorruptMetaProperties].
//
// # Single node
//
// There is no replication: the high watermark is the log end offset, the
// leader epoch is the one in leader-epoch-checkpoint (0 for a new
// directory), and [Log.AppendAsReplica] and [Log.TruncateTo] exist for
// brokers built on kafkalite that replicate themselves.
package log
