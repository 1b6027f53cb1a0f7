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
//	  .lock                              held (flock) while a Dir is open
//	  meta.properties                    version=1, cluster.id, node.id, directory.id
//	  .kafka_cleanshutdown               only between a clean Close and the next Open
//	  recovery-point-offset-checkpoint   per partition: offset below which all is fsynced
//	  log-start-offset-checkpoint        per partition, where above the first segment
//	  replication-offset-checkpoint      per partition: high watermark (= log end offset)
//	  kafkalite-topics.json              kafkalite's topic ids, partition counts, configs
//	  <topic>-<partition>/
//	    00000000000000000000.log         batches (RecordBatch v2)
//	    00000000000000000000.index       offset index
//	    00000000000000000000.timeindex   time index
//	    partition.metadata               topic id
//	    leader-epoch-checkpoint          0 <first offset>
//
// Everything but kafkalite-topics.json is byte for byte what a Kafka broker
// writes, so Kafka's tools read the directory; Kafka ignores the extra
// file. A directory a broker wrote is adopted: its topics get the
// directory's default configuration.
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
//     [Dir.AddPartitions]: the change is durable when they return.
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
// # Single node
//
// There is no replication: the high watermark is the log end offset, the
// leader epoch is the one in leader-epoch-checkpoint (0 for a new
// directory), and [Log.AppendAsReplica] and [Log.TruncateTo] exist for
// brokers built on kafkalite that replicate themselves.
package log
