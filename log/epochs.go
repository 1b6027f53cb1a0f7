package log

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// LeaderEpoch returns the partition's leader epoch (Kafka's
// Partition.leaderEpoch): the PartitionLeaderEpoch that [Log.Append] stamps
// on batches, which a broker puts in its Metadata responses and checks a
// request's CurrentLeaderEpoch against. It is the latest epoch of
// leader-epoch-checkpoint when the log was opened (0 for a new partition),
// raised by [Log.AppendAsReplica] to the epoch of a later batch. It takes
// no lock.
func (l *Log) LeaderEpoch() int32 { return l.epochs.latest.Load() }

// BecomeLeader starts leader epoch epoch at the log end offset, as a
// Kafka broker that becomes a partition's leader records its epoch before
// any record of it (Partition.makeLeader, UnifiedLog's
// maybeAssignEpochStartOffset): [Log.Append] stamps it on the batches that
// follow, [Log.LeaderEpoch] answers it, and [Log.EndOffsetForEpoch] ends
// the previous epoch at the offset where it starts, so a client holding an
// older epoch is fenced. leader-epoch-checkpoint keeps it once a batch of
// the epoch is appended; an epoch no batch has reached is not in the file
// when the log opens again (as Kafka's broker, which learns it again from
// its controller): its owner records it again. An epoch at or below
// LeaderEpoch changes nothing. The error is that of a closed or deleted
// log.
func (l *Log) BecomeLeader(epoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return err
	}
	if epoch <= l.epochs.latest.Load() {
		return nil
	}
	l.epochs.assign(epoch, l.LogEndOffset())
	return nil
}

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
// [Log.LeaderEpoch]. It takes the log's write lock, briefly, so that the
// log end offset and the epochs are of one moment. The error is that of a
// closed or deleted log.
func (l *Log) EndOffsetForEpoch(requestedEpoch int32) (epoch int32, endOffset int64, err error) {
	if err := l.local.checkOpen(); err != nil {
		return checkpoint.UndefinedEpoch, checkpoint.UndefinedEpochOffset, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epochs.endOffsetFor(requestedEpoch, l.LogEndOffset())
}

// EpochForOffset returns the leader epoch of the batch holding offset, from
// the leader epoch cache (the epoch of the last epoch start at or below
// offset, Kafka's LeaderEpochFileCache.epochForOffset), and false if no
// epoch starts at or below it. A broker's ListOffsets answers carry it.
// It takes the epoch cache's lock, briefly.
func (l *Log) EpochForOffset(offset int64) (int32, bool) {
	return l.epochs.epochForOffset(offset)
}

// leaderEpochCache is a partition's leader epochs (Kafka's
// LeaderEpochFileCache): the epochs of its batches and where each starts,
// kept in leader-epoch-checkpoint, which it rewrites at every change, and
// the epoch appends stamp. It has its own lock; the Log calls it under
// its write lock too (Log.mu, then leaderEpochCache.mu), which keeps the
// epochs and the log end offset in step.
type leaderEpochCache struct {
	tp     TopicPartition
	fsys   vfs.FS
	path   string // leader-epoch-checkpoint
	logger *slog.Logger
	// latest is the epoch appends stamp: the latest epoch of the file at
	// load (0 for a new partition), raised by a replica's batch of a later
	// epoch. Written under mu, read without it.
	latest atomic.Int32

	mu    sync.Mutex // protects cache and the file
	cache *checkpoint.LeaderEpochCache
}

// openLeaderEpochCache reads the partition directory's
// leader-epoch-checkpoint (a new cache if it is unreadable, which is
// logged) and drops its entries at or past the log end offset leo.
func openLeaderEpochCache(tp TopicPartition, fsys vfs.FS, dir string, logger *slog.Logger, leo int64) (*leaderEpochCache, error) {
	path := filepath.Join(dir, checkpoint.LeaderEpochFile)
	c, err := checkpoint.OpenLeaderEpochCache(fsys, path)
	if err != nil {
		logger.Warn("rebuilding an unreadable leader-epoch-checkpoint", "partition", tp, "err", err)
		if c, err = checkpoint.NewLeaderEpochCache(nil); err != nil {
			return nil, err
		}
	}
	lc := &leaderEpochCache{tp: tp, fsys: fsys, path: path, logger: logger, cache: c}
	if c.TruncateFromEnd(leo) {
		if err := c.Write(fsys, path); err != nil {
			return nil, err
		}
	}
	if e, ok := c.LatestEpoch(); ok {
		lc.latest.Store(e)
	}
	return lc, nil
}

// assign records that epoch starts at offset (a batch's epoch and base
// offset), as Kafka's LeaderEpochFileCache.assign does, and writes the
// file if that changed it: at once, as Kafka does (see the
// internal/checkpoint package doc). A failure to write it loses nothing
// the log cannot rebuild, so it is logged. A later epoch than the latest
// (a replica's batch) becomes the one appends stamp, as after a reopen.
func (lc *leaderEpochCache) assign(epoch int32, offset int64) {
	if epoch < 0 {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	changed, err := lc.cache.Assign(epoch, offset)
	if err == nil && changed {
		err = lc.cache.Write(lc.fsys, lc.path)
	}
	if err != nil {
		lc.logger.Warn("updating leader-epoch-checkpoint failed", "partition", lc.tp, "err", err)
	}
	if epoch > lc.latest.Load() {
		lc.latest.Store(epoch)
	}
}

// truncateFromStart drops the epochs that end before offset (the new log
// start offset) and starts the first one left there.
func (lc *leaderEpochCache) truncateFromStart(offset int64) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.cache.TruncateFromStart(offset)
	lc.persistLocked()
}

// truncateFromEnd drops the epochs that start at or after offset (the new
// log end offset).
func (lc *leaderEpochCache) truncateFromEnd(offset int64) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.cache.TruncateFromEnd(offset)
	lc.persistLocked()
}

// persistLocked rewrites leader-epoch-checkpoint if the cache changed.
func (lc *leaderEpochCache) persistLocked() {
	if !lc.cache.Dirty() {
		return
	}
	if err := lc.cache.Write(lc.fsys, lc.path); err != nil {
		lc.logger.Warn("updating leader-epoch-checkpoint failed", "partition", lc.tp, "err", err)
	}
}

// endOffsetFor answers an OffsetForLeaderEpoch request with the log end
// offset leo (see [Log.EndOffsetForEpoch]).
func (lc *leaderEpochCache) endOffsetFor(requestedEpoch int32, leo int64) (int32, int64, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	cache, current := lc.cache, lc.latest.Load()
	if latest, ok := cache.LatestEpoch(); !ok || latest < current {
		// A copy with the entry Kafka's leader would have.
		var err error
		if cache, err = checkpoint.NewLeaderEpochCache(cache.Entries()); err == nil {
			_, err = cache.Assign(current, leo)
		}
		if err != nil {
			return checkpoint.UndefinedEpoch, checkpoint.UndefinedEpochOffset, lc.tp.wrap(err)
		}
	}
	epoch, end := cache.EndOffsetFor(requestedEpoch, leo)
	return epoch, end, nil
}

// epochForOffset returns the epoch of the batch holding offset (Kafka's
// LeaderEpochFileCache.epochForOffset).
func (lc *leaderEpochCache) epochForOffset(offset int64) (int32, bool) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.cache.EpochForOffset(offset)
}

// epochsIn returns the leader epochs of the offsets [from, to): the one in
// force at from (starting at from) and those that start later; the latest
// epoch at from when none is known.
func (lc *leaderEpochCache) epochsIn(from, to int64) []remote.EpochStart {
	lc.mu.Lock()
	entries := lc.cache.Entries()
	lc.mu.Unlock()
	var out []remote.EpochStart
	for i, e := range entries {
		if e.StartOffset >= to {
			break
		}
		if i+1 < len(entries) && entries[i+1].StartOffset <= from {
			continue
		}
		out = append(out, remote.EpochStart{LeaderEpoch: e.Epoch, StartOffset: max(e.StartOffset, from)})
	}
	if len(out) == 0 {
		out = append(out, remote.EpochStart{LeaderEpoch: max(lc.latest.Load(), 0), StartOffset: from})
	}
	return out
}

// epochCheckpointText is the leader-epoch-checkpoint file of entries, as a
// copy in remote storage carries it.
func epochCheckpointText(entries []remote.EpochStart) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.LeaderEpoch, e.StartOffset)
	}
	return []byte(b.String())
}
