package logdir

import (
	"errors"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/remotecodec"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// ErrCorrupt is matched by the error of a file that breaks its format (or
// a __remote_log_metadata record that does not decode). A missing file is
// an error matching fs.ErrNotExist, except where a reader says otherwise.
var ErrCorrupt = errors.New("logdir: corrupt file")

// corruptError marks an error of the internal readers as [ErrCorrupt],
// keeping its text.
type corruptError struct{ err error }

func (e *corruptError) Error() string { return e.err.Error() }
func (e *corruptError) Unwrap() error { return e.err }

func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }

// mark returns err, matching ErrCorrupt if a reader found the file corrupt.
func mark(err error) error {
	if errors.Is(err, checkpoint.ErrCorrupt) || errors.Is(err, snapshot.ErrCorrupt) || errors.Is(err, remotecodec.ErrCorrupt) {
		return &corruptError{err}
	}
	return err
}

// MetaProperties is a log directory's meta.properties.
type MetaProperties struct {
	// Version is 1 for a KRaft directory ("version"), 0 for an old one.
	Version int
	// ClusterID is "cluster.id"; "" for none (version 0 only).
	ClusterID string
	// NodeID is "node.id" (version 1) or "broker.id" (version 0, -1 for
	// none).
	NodeID int32
	// DirectoryID is "directory.id" (since Kafka 3.7); "" for none.
	DirectoryID string
}

// ReadMetaProperties reads a meta.properties file.
func ReadMetaProperties(path string) (MetaProperties, error) {
	mp, err := checkpoint.ReadMetaProperties(vfs.Default, path)
	if err != nil {
		return MetaProperties{}, mark(err)
	}
	return MetaProperties{Version: mp.Version, ClusterID: mp.ClusterID, NodeID: mp.NodeID, DirectoryID: mp.DirectoryID}, nil
}

// ReadCleanShutdown reports whether the log directory dir has a
// clean-shutdown marker (.kafka_cleanshutdown) and the broker epoch in it.
// A missing marker is (false, -1, nil). A marker is found whatever it
// holds, as Kafka decides "clean" on its existence alone; contents that do
// not give a broker epoch return (true, -1, err) with err matching
// [ErrCorrupt].
func ReadCleanShutdown(dir string) (found bool, brokerEpoch int64, err error) {
	found, brokerEpoch, err = checkpoint.ReadCleanShutdown(vfs.Default, dir)
	return found, brokerEpoch, mark(err)
}

// ReadOffsetCheckpoint reads an offset checkpoint file
// (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
// replication-offset-checkpoint, cleaner-offset-checkpoint): an offset per
// partition. A missing file is no checkpoint: an empty map and no error,
// as for an empty file.
func ReadOffsetCheckpoint(path string) (map[log.TopicPartition]int64, error) {
	offsets, err := checkpoint.ReadOffsets(vfs.Default, path)
	if err != nil {
		return nil, mark(err)
	}
	out := make(map[log.TopicPartition]int64, len(offsets))
	for tp, off := range offsets {
		out[log.TopicPartition(tp)] = off
	}
	return out, nil
}

// EpochEntry is an entry of leader-epoch-checkpoint: a leader epoch and
// the first offset written in it.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// ReadLeaderEpochCheckpoint reads a partition's leader-epoch-checkpoint,
// its entries in the file's order (Kafka writes them by ascending epoch).
// A missing file has no entries and no error, as an empty one.
func ReadLeaderEpochCheckpoint(path string) ([]EpochEntry, error) {
	entries, err := checkpoint.ReadLeaderEpochs(vfs.Default, path)
	if err != nil {
		return nil, mark(err)
	}
	out := make([]EpochEntry, len(entries))
	for i, e := range entries {
		out[i] = EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	return out, nil
}

// ReadPartitionMetadata reads a partition's partition.metadata and returns
// its topic id, as Kafka writes it (log.TopicDescription.ID has the same
// form).
func ReadPartitionMetadata(path string) (topicID string, err error) {
	id, err := checkpoint.ReadPartitionMetadata(vfs.Default, path)
	if err != nil {
		return "", mark(err)
	}
	return id.String(), nil
}

// ProducerSnapshotSuffix ends the name of a producer-state snapshot, whose
// base is the 20-digit offset it was taken at (segment.FileName makes the
// name).
const ProducerSnapshotSuffix = ".snapshot"

// ProducerSnapshotEntry is one producer's state in a snapshot, with
// Kafka's field names (ProducerSnapshot.json): the metadata of the
// producer's last data batch only.
type ProducerSnapshotEntry struct {
	ProducerID    int64
	ProducerEpoch int16
	// LastSequence and LastOffset are the last sequence and offset of the
	// producer's last data batch, -1 if none; OffsetDelta is LastOffset
	// minus that batch's first offset.
	LastSequence int32
	LastOffset   int64
	OffsetDelta  int32
	// Timestamp is the max timestamp of the producer's last batch or
	// transaction marker, in milliseconds since the epoch.
	Timestamp int64
	// CoordinatorEpoch is that of the producer's last transaction marker,
	// -1 initially.
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction, -1 if none.
	CurrentTxnFirstOffset int64
}

// ReadProducerSnapshot reads a producer-state snapshot (a file ending in
// [ProducerSnapshotSuffix]), its entries in the file's order.
func ReadProducerSnapshot(path string) ([]ProducerSnapshotEntry, error) {
	entries, err := snapshot.Read(vfs.Default, path)
	if err != nil {
		return nil, mark(err)
	}
	out := make([]ProducerSnapshotEntry, len(entries))
	for i, e := range entries {
		out[i] = ProducerSnapshotEntry(e)
	}
	return out, nil
}
