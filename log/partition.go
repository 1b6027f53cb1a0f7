package log

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/segment"
)

// Log is one partition of a topic: Kafka's UnifiedLog. It appends batches
// as the partition leader (validating them, assigning offsets) or as a
// replica (keeping their offsets), serves reads from any offset at either
// isolation level ([Log.Fetch]), rolls, flushes and retains segments by
// the topic's configuration.
//
// As Kafka's UnifiedLog, it is made of services, each a type with its own
// fields: the local segments (roll, flush, recovery point, truncation:
// Kafka's LocalLog), the producer state (ProducerStateManager), the leader
// epochs (LeaderEpochFileCache), the validation of client batches
// (LogValidator) and, for a tiered topic, the Dir's remote log manager.
// The Log orders them under its write lock and keeps the log start offset.
//
// A Log is safe for concurrent use: appends are serialised by the log's
// write lock; reads take a snapshot of the segment list and run alongside.
// Single node: the high watermark is the log end offset.
//
// A Log belongs to its [Dir], which opens it, hands it out through
// [Dir.Partition] and closes it in [Dir.Close] or [Dir.DeleteTopic]: it has
// no Close of its own, and a *Log stays valid for as long as its Dir is
// open and its topic exists (after that its calls return [ErrClosed] or
// [ErrTopicDeleted]).
type Log struct {
	tp       TopicPartition
	internal bool // an internal topic: users may not append
	logger   *slog.Logger
	now      func() time.Time

	// mu is the partition's write lock (Kafka's UnifiedLog lock): appends,
	// rolls, truncation, retention, cleaned segments' swaps. It guards the
	// state of local, producers and validator, which have no lock of their
	// own (as Kafka's LocalLog and ProducerStateManager rely on UnifiedLog's).
	mu sync.Mutex

	local     *localLog             // the segments: roll, flush, recovery point, truncation
	producers *producerStateManager // idempotence and transactions, snapshots, the last stable offset
	epochs    *leaderEpochCache     // leader-epoch-checkpoint and the epoch appends stamp
	validator *logValidator         // client batches' validation and recompression
	remote    remoteLog             // the Dir's tiered storage, as this partition uses it
	txnRepair *txnIndexRepair       // checks and rebuilds of damaged .txnindex files
	cleaning  logCleaning           // where the cleaner is and what its last round did
	notify    dataNotifier          // readers waiting for data
	overlap   *overlapAppend        // the overlapped append's state, reused under mu; nil until the first

	logStartOffset atomic.Int64
}

// Topic returns the log's topic.
func (l *Log) Topic() string { return l.tp.Topic }

// Partition returns the log's partition number.
func (l *Log) Partition() int32 { return l.tp.Partition }

// Dir returns the partition directory's path.
func (l *Log) Dir() string { return l.local.dir }

// Config returns the topic configuration the log applies.
func (l *Log) Config() TopicConfig { return l.local.cfg() }

// LogStartOffset returns the first offset a reader may ask for.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// LogEndOffset returns the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.local.logEndOffset.Load() }

// HighWatermark returns the offset up to which records are readable by
// consumers. On a single node with no replication every appended record is
// "replicated", so it equals the log end offset (Kafka's leader advances it
// once the in-sync replicas have the data).
func (l *Log) HighWatermark() int64 { return l.local.logEndOffset.Load() }

// RecoveryPoint returns the offset below which everything is fsynced, the
// indexes of its segments included (Kafka's recovery point): after a crash
// the log is rescanned from there. It is at most DurableOffset.
func (l *Log) RecoveryPoint() int64 { return l.local.recoveryPoint.Load() }

// DurableOffset returns the offset below which every record is fsynced:
// what a crash cannot lose ([Log.Sync] moves it; the indexes of the active
// segment may lag, see RecoveryPoint).
func (l *Log) DurableOffset() int64 { return l.local.durable.Load() }

// loadOptions describe how to load a partition directory.
type loadOptions struct {
	topic          string
	partition      int32
	dir            string
	fsys           vfs.FS
	config         TopicConfig
	logger         *slog.Logger
	now            func() time.Time
	clean          bool  // the directory had Kafka's clean-shutdown marker
	recoveryPoint  int64 // from recovery-point-offset-checkpoint, 0 if absent
	logStartOffset int64 // from log-start-offset-checkpoint, 0 if absent
	topicID        checkpoint.TopicID
	create         bool   // a new partition: create the directory
	onAppend       func() // called after every append (the Dir's notifier)
	tier           func() *tierManager
	// producerIDExpiration mirrors producer.id.expiration.ms.
	producerIDExpiration time.Duration
	// cleanerOffset is the cleaner-offset-checkpoint entry, -1 if none.
	cleanerOffset int64
	overlapBytes  int
}

// recoveryStats report what loading a partition did.
type recoveryStats struct {
	segments       int
	recovered      int
	bytesScanned   int64
	bytesTruncated int64
	// corruptLogStart: the log-start-offset-checkpoint entry lay past the
	// log end and was ignored.
	corruptLogStart bool
}

// loadLog opens (or, with create, makes) a partition directory as Kafka's
// LogLoader does: its segments (localLog.open), then the log start offset,
// the leader epochs, the .txnindex files and the producer state.
func loadLog(o loadOptions) (*Log, recoveryStats, error) {
	var st recoveryStats
	tp := TopicPartition{Topic: o.topic, Partition: o.partition}
	l := &Log{tp: tp, logger: o.logger, now: o.now, internal: IsInternalTopic(o.topic),
		local:     newLocalLog(tp, o.dir, o.fsys, o.config, o.logger, o.now),
		producers: newProducerStateManager(tp, o.dir, o.fsys, o.logger, o.now, o.producerIDExpiration),
		validator: newLogValidator(tp, o.now, o.overlapBytes),
		remote:    remoteLog{manager: o.tier},
		notify:    dataNotifier{onAppend: o.onAppend}}
	l.txnRepair = &txnIndexRepair{local: l.local, writeMu: &l.mu}
	l.cleaning.checkpoint.Store(o.cleanerOffset)
	if o.create {
		if err := o.fsys.MkdirAll(o.dir); err != nil {
			return nil, st, err
		}
		if err := o.fsys.SyncDir(filepath.Dir(o.dir)); err != nil {
			return nil, st, err
		}
	}
	id, err := loadTopicID(tp, o.fsys, o.dir, o.topicID, o.logger)
	if err != nil {
		return nil, st, err
	}
	l.remote.key = tierKey{topicID: remote.UUID(id), partition: tp.Partition}
	recovered := map[*segment.Segment]bool{}
	if err := l.local.open(o, &st, recovered); err != nil {
		return nil, st, err
	}
	segs, next := l.local.segs(), l.LogEndOffset()
	start := o.logStartOffset
	if start > next {
		// The log start never passes the log end: the entry is damaged
		// (or the segments were removed by hand). Kafka would delete every
		// segment; the segments are what is known, so they decide.
		l.logger.Warn("ignoring a log-start-offset-checkpoint entry past the log end", "partition", tp,
			"logStartOffset", start, "logEndOffset", next, "firstSegment", segs[0].BaseOffset())
		st.corruptLogStart = true
		start = 0
	}
	// An entry below the first segment is stale (retention removed
	// segments after it was written), as after any crash: the first
	// segment's base offset is the start. Not for a tiered topic, whose
	// segments below may be in remote storage: the Dir checks the entry
	// against the copies once it has replayed their metadata
	// (tierManager.settleStart).
	if o.config.RemoteStorageEnable {
		l.logStartOffset.Store(min(max(start, 0), next))
	} else {
		l.logStartOffset.Store(min(max(start, segs[0].BaseOffset()), next))
	}
	epochs, err := openLeaderEpochCache(tp, o.fsys, o.dir, o.logger, next)
	if err != nil {
		return nil, st, closeAll(segs, err)
	}
	l.epochs = epochs
	if err := l.txnRepair.repairAtLoad(recovered); err != nil {
		return nil, st, closeAll(l.local.segs(), err)
	}
	created, err := l.producers.reload(l.local.segs(), l.LogStartOffset(), next)
	l.local.dirDirty = l.local.dirDirty || created
	if err != nil {
		return nil, st, closeAll(segs, fmt.Errorf("loading the producer state: %w", err))
	}
	return l, st, nil
}

// loadTopicID returns the topic id of the partition directory's
// partition.metadata, writing want there if it has none (or an unreadable
// one, which is logged).
func loadTopicID(tp TopicPartition, fsys vfs.FS, dir string, want checkpoint.TopicID, logger *slog.Logger) (checkpoint.TopicID, error) {
	path := filepath.Join(dir, checkpoint.PartitionMetadataFile)
	id, err := checkpoint.ReadPartitionMetadata(fsys, path)
	switch {
	case err == nil:
		return id, nil
	case !isNotExist(err):
		logger.Warn("rewriting an unreadable partition.metadata", "partition", tp, "err", err)
	}
	return want, checkpoint.WritePartitionMetadata(fsys, path, want)
}

// close flushes the log and closes its segments. It does not write the
// directory's checkpoints (the Dir does). A second Close returns nil.
func (l *Log) close() error {
	if l.local.closed.Swap(true) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.flushLocked(l.LogEndOffset())
	if err == nil && l.local.failed == nil && !l.local.deleted.Load() {
		// The snapshot at the log end offset spares the next Open a replay.
		_, err = l.producers.snapshot(l.LogEndOffset(), true)
	}
	segs := l.local.segs()
	if len(segs) > 0 {
		err = errors.Join(err, closeAll(segs, nil))
	}
	l.notify.wake()
	return err
}

// dataNotifier wakes the readers waiting for data: a partition's
// ([Log.WaitForData]) at every append to it and when it closes or its
// topic is deleted, then through onAppend the Dir's ([Dir.Changed]).
type dataNotifier struct {
	onAppend func() // called after each wake: a partition's calls its Dir's; nil for none

	mu sync.Mutex
	ch chan struct{} // closed at the next wake; nil while nobody waits
}

// next returns the channel the next wake closes.
func (n *dataNotifier) next() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// wake releases every reader waiting, then calls onAppend.
func (n *dataNotifier) wake() {
	n.mu.Lock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
	if n.onAppend != nil {
		n.onAppend()
	}
}

// WaitForData returns when the log end offset is above offset, the log is
// closed or deleted ([ErrClosed], [ErrTopicDeleted]), or ctx ends. It does not
// poll: appends wake the waiters. It follows the log end offset, not the
// last stable offset: a read_committed reader waiting at an open
// transaction should wait for the offset after the last append, and check
// [Log.LastStableOffset] again when woken (every append, markers included,
// wakes it).
func (l *Log) WaitForData(ctx context.Context, offset int64) error {
	for {
		ch := l.notify.next()
		switch {
		case l.local.deleted.Load():
			return ErrTopicDeleted
		case l.local.closed.Load():
			return ErrClosed
		case l.LogEndOffset() > offset:
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// logCleaning is where the cleaner is in a compacted log: where the next
// round starts (cleaner-offset-checkpoint, -1: the log start offset), the
// last round's stats, and gen, bumped by truncation under the Log's write
// lock so that a round started before it never swaps in.
type logCleaning struct {
	checkpoint atomic.Int64
	stats      atomic.Pointer[CleanerStats]
	gen        uint64 // under Log.mu
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
