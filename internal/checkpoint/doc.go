// Package checkpoint reads and writes Kafka's small per-directory and
// per-partition files byte for byte (Kafka's CheckpointFile,
// OffsetCheckpointFile, LeaderEpochCheckpointFile, LeaderEpochFileCache,
// PartitionMetadataFile, MetaProperties and CleanShutdownFileHandler):
//
//	<log.dir>/
//	  meta.properties                    directory identity     [ReadMetaProperties]
//	  .kafka_cleanshutdown               clean shutdown marker  [ReadCleanShutdown]
//	  recovery-point-offset-checkpoint   offsets per partition  [ReadOffsets]
//	  log-start-offset-checkpoint        offsets per partition  [ReadOffsets]
//	  replication-offset-checkpoint      offsets per partition  [ReadOffsets]
//	  cleaner-offset-checkpoint          offsets per partition  [ReadOffsets]
//	  <topic>-<partition>/
//	    leader-epoch-checkpoint          epoch → start offset   [ReadLeaderEpochs]
//	    partition.metadata               topic id               [ReadPartitionMetadata]
//
// Every file is text (ASCII in practice) and small. This package reads and
// writes whole files; naming the directories, and deciding when to write,
// are the log's job.
//
// # Writing: temporary file, sync, rename, sync the directory
//
// Every writer goes through [WriteFileAtomic]: the new contents go to
// <name>.tmp, which is synced and renamed over <name>, and the directory is
// synced. When a writer returns nil its file is durable; a crash at any
// point leaves the old file or the new one, never a torn one, plus maybe a
// stale <name>.tmp that readers ignore and the next write removes. Kafka
// does the same (Utils.atomicMoveWithFallback) for all but the clean
// shutdown marker, which it writes in place.
//
// # Checkpoint files: version, count, entries
//
//	0\n                        version: 0 for every file here
//	3\n                        number of entry lines
//	orders 0 1200\n            entry lines, fields separated by a space
//	orders 1 980\n
//	payments 0 42\n
//
// Lines end in "\n" ("\r\n" and "\r" are accepted on read, as Java's
// readLine accepts them). Entries are split on whitespace: a topic name has
// none (only [a-zA-Z0-9._-]). The number of entry lines must equal the
// count. An empty file, or one with only the version line, has no entries.
// The four offset files have entries "<topic> <partition> <offset>"
// ([ReadOffsets], [WriteOffsets]); this package writes them sorted by topic
// and partition, Kafka in hash order: readers must not care. What each
// holds:
//
//	recovery-point-offset-checkpoint   every partition of the directory: the offset
//	                                   below which its data is known flushed; after
//	                                   an unclean shutdown Kafka recovers from the
//	                                   segment holding it
//	log-start-offset-checkpoint        the partitions whose log start offset is above
//	                                   their first segment's base offset
//	replication-offset-checkpoint      each partition's high watermark
//	cleaner-offset-checkpoint          each compacted partition's first dirty offset
//	                                   (where the last cleaning round ended)
//
// leader-epoch-checkpoint has entries "<leaderEpoch> <startOffset>" by
// ascending epoch, start offsets ascending too ([ReadLeaderEpochs],
// [WriteLeaderEpochs]); [LeaderEpochCache] keeps them by Kafka's rules.
// A partition written by one process with a constant leader epoch 0 has the
// single entry "0 <first offset>".
//
// # partition.metadata
//
//	version: 0\ntopic_id: <22-character topic id>      (no final newline)
//
// The topic id is a [TopicID] printed as URL-safe base64 without padding.
// A KRaft broker treats a partition directory without this file, or with a
// topic id its metadata does not know, as a stray replica.
//
// # meta.properties
//
//	#\n
//	#Fri Mar 06 12:00:00 UTC 2026\n            Date.toString() of the write
//	cluster.id=XzqcDhKrTH2OnwARIjOquw\n
//	directory.id=DH4dKzpPTl2ci3ppWEc2JQ\n
//	node.id=1\n
//	version=1\n
//
// Java's properties format: Properties.store's header, key=value lines with
// Java's escapes; readers also take key:value and "key value", comments
// ('#', '!'), continuations and \uXXXX escapes ([ReadMetaProperties]).
// The order of the keys depends on Kafka's JDK (hash order before JDK 18,
// sorted from JDK 18 on); this package writes them sorted, and readers take
// any order.
//
// The keys of version 1, the KRaft layout: version (1), cluster.id (the
// cluster's id, a 22-character base64 id in practice), node.id (an int32)
// and directory.id (this log directory's id, since Kafka 3.7; unique per
// directory). Version 0, the ZooKeeper-era layout, has broker.id instead of
// node.id. All log directories of a node must agree on cluster.id and
// node.id.
//
// # .kafka_cleanshutdown
//
//	{"version":0,"brokerEpoch":42}             (no final newline)
//
// Present only between a clean shutdown and the next startup, which removes
// it ([RemoveCleanShutdown]) before loading the logs. With the marker Kafka
// recovers nothing: it trusts the indexes, producer snapshots and
// checkpoints as they are, and the recovery point is the log end offset.
// Without it, every segment from a partition's recovery point on is
// recovered (Kafka's LogLoader and LogSegment.recover): its indexes are
// rebuilt from the .log, every batch's CRC is checked, the producer state
// and the leader epoch cache are rebuilt, the .log is truncated at the
// first invalid or partial batch and the later segments are deleted. So
// write the marker ([WriteCleanShutdown]) only when the indexes, producer
// snapshots and checkpoints of the directory are exact.
//
// # When Kafka writes each file
//
//	recovery-point-offset-checkpoint   every log.flush.offset.checkpoint.interval.ms (60 s),
//	                                   and at shutdown; recovery point ≤ log end offset
//	log-start-offset-checkpoint        every log.flush.start.offset.checkpoint.interval.ms
//	                                   (60 s), for logs whose start moved past their first
//	                                   segment
//	replication-offset-checkpoint      every replica.high.watermark.checkpoint.interval.ms
//	                                   (5 s): high watermarks
//	cleaner-offset-checkpoint          after each cleaning round (first dirty offset)
//	leader-epoch-checkpoint            at once when an appended batch starts a new
//	                                   leader epoch; after truncations (in the background)
//	partition.metadata                 when the log is created, before any append
//	meta.properties                    when the directory is formatted or its ids change
//	.kafka_cleanshutdown               at clean shutdown, last; removed at startup
//
// # Reading: Kafka's rules, bounded, never a panic
//
// Readers accept what Kafka's readers accept, and a little less where Kafka
// would accept what it never writes (an invalid topic name, a negative
// partition or epoch); each reader's doc says which. Whatever they read,
// the matching writer writes back, and it reads back equal. A file that
// breaks the format is a [*FormatError] matching [ErrCorrupt], never a
// panic; files are size-checked before they are read (256 MiB for
// checkpoints, 1 MiB for the others) and nothing is allocated from a count
// read in a file. What a missing file means differs per file and is said
// by each reader.
//
// Functions of this package are safe for concurrent use on different
// files; writes to one file must be serialised by the caller.
package checkpoint
