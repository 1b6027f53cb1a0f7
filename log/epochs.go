package log

import "github.com/kafkalite/kafkalite/internal/checkpoint"

// LeaderEpoch returns the partition's leader epoch (Kafka's
// Partition.leaderEpoch): the PartitionLeaderEpoch that [Log.Append] stamps
// on batches, which a broker puts in its Metadata responses and checks a
// request's CurrentLeaderEpoch against. It is the latest epoch of
// leader-epoch-checkpoint when the log was opened (0 for a new partition),
// raised by [Log.AppendAsReplica] to the epoch of a later batch. It takes
// no lock.
func (l *Log) LeaderEpoch() int32 { return l.leaderEpoch.Load() }

// EndOffsetForEpoch answers an OffsetForLeaderEpoch request for the
// partition, as Kafka's leader does (Partition.lastOffsetForLeaderEpoch
// over LeaderEpochFileCache.endOffsetFor): the largest epoch of the log
// at or below requestedEpoch, and the end offset of that epoch: the first
// offset of the next higher epoch, or the log end offset for the latest
// epoch. Otherwise:
//
//   - requestedEpoch below every epoch of the log (the records of earlier
//     epochs were deleted): requestedEpoch itself and the first offset of
//     the earliest epoch;
//   - requestedEpoch -1 (undefined), or above the log's leader epoch: -1
//     and -1 (Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET).
//
// The epochs of the log are those of leader-epoch-checkpoint: each starts
// at its first batch, and the first one at the log start offset once
// records before it are deleted.
// Kafka's leader records its epoch when it becomes leader, before any
// record of the epoch; a Log records it with the epoch's first batch. So
// while no batch of [Log.LeaderEpoch] is in the log (a new partition, or
// one truncated below the epoch's first batch), EndOffsetForEpoch answers
// as if the epoch started at the log end offset, as Kafka's leader would.
//
// It checks no CurrentLeaderEpoch: the caller compares it with
// [Log.LeaderEpoch]. It takes the log's write lock, briefly. The error is
// that of a closed or deleted log.
func (l *Log) EndOffsetForEpoch(requestedEpoch int32) (epoch int32, endOffset int64, err error) {
	if err := l.checkOpen(); err != nil {
		return checkpoint.UndefinedEpoch, checkpoint.UndefinedEpochOffset, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cache, leo, current := l.epochs, l.LogEndOffset(), l.leaderEpoch.Load()
	if latest, ok := cache.LatestEpoch(); !ok || latest < current {
		// A copy with the entry Kafka's leader would have.
		if cache, err = checkpoint.NewLeaderEpochCache(cache.Entries()); err == nil {
			_, err = cache.Assign(current, leo)
		}
		if err != nil {
			return checkpoint.UndefinedEpoch, checkpoint.UndefinedEpochOffset, l.perr(err)
		}
	}
	epoch, endOffset = cache.EndOffsetFor(requestedEpoch, leo)
	return epoch, endOffset, nil
}

// EpochForOffset returns the leader epoch of the batch holding offset, from
// the leader epoch cache (the epoch of the last epoch start at or below
// offset, Kafka's LeaderEpochFileCache.epochForOffset), and false if no
// epoch starts at or below it. A broker's ListOffsets answers carry it.
// It takes the log's write lock, briefly.
func (l *Log) EpochForOffset(offset int64) (int32, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epochs.EpochForOffset(offset)
}
