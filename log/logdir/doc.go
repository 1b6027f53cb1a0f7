// Package logdir reads, without opening it, what a Kafka log directory
// holds beside its segments: meta.properties, the clean-shutdown marker,
// the offset checkpoints, each partition's leader-epoch-checkpoint,
// partition.metadata and producer-state snapshots, and the segment copies
// that tiered storage recorded in __remote_log_metadata. It is for tools
// that inspect a directory a broker or a log.Dir may hold open (kafkalite's
// dumplog is one); the log writes these files, and a log.Dir reads them
// itself when it opens.
//
// Each reader takes a path and applies the rules kafkalite's log applies
// when it reads the file (Kafka's readers' rules, in docs/FORMAT.md):
// a file that breaks its format is an error matching [ErrCorrupt], with
// the file and what is wrong in its text. The segments and their indexes
// are packages segment's and index's.
//
//	<log dir>/
//	    meta.properties                  ReadMetaProperties
//	    .kafka_cleanshutdown             ReadCleanShutdown
//	    recovery-point-offset-checkpoint ReadOffsetCheckpoint (and the other three)
//	    <topic>-<partition>/
//	        leader-epoch-checkpoint      ReadLeaderEpochCheckpoint
//	        partition.metadata           ReadPartitionMetadata
//	        <20 digits>.snapshot         ReadProducerSnapshot
//	    __remote_log_metadata-<n>/       ReadRemoteSegments
package logdir
