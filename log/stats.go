package log

import (
	"time"
)

// PartitionStats describe one partition.
type PartitionStats struct {
	Topic     string
	Partition int32
	// Size is the bytes of its segments; Segments how many there are.
	Size     int64
	Segments int
	// LogStartOffset, LogEndOffset, HighWatermark, DurableOffset and
	// RecoveryPoint are the partition's offsets (DurableOffset: every
	// record below is fsynced; RecoveryPoint: its indexes too).
	LogStartOffset, LogEndOffset, HighWatermark, DurableOffset, RecoveryPoint int64
	// LastFlush is when the partition was last flushed whole, indexes
	// included (or opened).
	LastFlush time.Time
	// Failed is the storage error that stopped appends, if any.
	Failed error
	// OverlappedAppends counts the appends since Open whose write
	// overlapped their validation (see Config.OverlapAppendBytes).
	OverlappedAppends int64
	// IndexRebuilds counts the sealed segments whose .index or .timeindex
	// failed its checks and was rebuilt from the .log since Open.
	IndexRebuilds int64
	// TxnIndexRebuilds counts the .txnindex files found damaged or
	// incomplete and rebuilt from the ABORT markers since Open.
	TxnIndexRebuilds int64
	// DamagedSegments counts the segments whose .log holds bytes past its
	// last readable batch: reads there fail with a corruption error.
	DamagedSegments int
	// Tiered storage (remote.storage.enable): RemoteSegments and
	// RemoteBytes are the finished copies in the remote store and their
	// .log bytes; RemoteCopyLagSegments and RemoteCopyLagBytes the sealed
	// segments past the latest copy (not yet copied, or not yet below the
	// last stable offset).
	RemoteSegments        int
	RemoteBytes           int64
	RemoteCopyLagSegments int
	RemoteCopyLagBytes    int64
	// LocalLogStartOffset is the first local segment's base offset (Kafka's
	// localLogStartOffset); below it, down to LogStartOffset, reads are
	// served from copies, RemoteFetchCacheHits of them from the cache of
	// fetched copies and RemoteFetchCacheMisses after a fetch from the
	// store (of the whole copy, or of its transaction index alone for the
	// aborted transactions of a read_committed read).
	LocalLogStartOffset                          int64
	RemoteFetchCacheHits, RemoteFetchCacheMisses int64
}

// Stats describes the partition.
func (l *Log) Stats() PartitionStats {
	segs := l.local.segs()
	st := PartitionStats{Topic: l.tp.Topic, Partition: l.tp.Partition, Segments: len(segs),
		LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset(), HighWatermark: l.HighWatermark(),
		DurableOffset: l.DurableOffset(), RecoveryPoint: l.RecoveryPoint(), LastFlush: time.UnixMilli(l.local.lastFlush.Load()),
		OverlappedAppends: l.validator.overlapped.Load()}
	for _, s := range segs {
		st.Size += s.Size()
		if segHooks.Damage(s) != nil {
			st.DamagedSegments++
		}
	}
	st.IndexRebuilds, st.TxnIndexRebuilds = l.local.indexRebuilds.Load(), l.txnRepair.rebuilds.Load()
	l.mu.Lock()
	st.Failed = l.local.failed
	l.mu.Unlock()
	if t := l.remote.tiering(l.Config()); t != nil {
		t.remoteStats(l, &st)
	}
	return st
}

// DirStats describe a log directory.
type DirStats struct {
	Topics, Partitions int
	// Size is the bytes of every segment.
	Size int64
	// Segments is the number of open segments; each holds its .log file
	// open, and its two index files once used.
	Segments int
	// Recovery is what Open did.
	Recovery RecoveryStats
	// UncleanablePartitions counts the compacted partitions the cleaner
	// skips after a failed round (Kafka's uncleanable-partitions-count);
	// [Dir.UncleanablePartitions] lists them with their errors.
	UncleanablePartitions int
	// PartitionStats per partition, by topic and partition.
	PartitionStats []PartitionStats
}

// Stats describes the directory.
func (d *Dir) Stats() DirStats {
	st := DirStats{Recovery: d.recovery, Topics: len(d.Topics()), UncleanablePartitions: len(d.UncleanablePartitions())}
	for _, l := range d.allLogs() {
		ps := l.Stats()
		st.Partitions++
		st.Size += ps.Size
		st.Segments += ps.Segments
		st.PartitionStats = append(st.PartitionStats, ps)
	}
	return st
}
