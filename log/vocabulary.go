package log

import (
	"fmt"
	"strconv"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
)

// The names the clients and the broker side share, defined once here, the
// lowest package that needs them: the consumer, the producer and the
// coordinators use these (consumer.TopicPartition, consumer.OffsetAndMetadata
// and consumer.GroupMetadata are the same types under the consumer's
// names).

// TopicPartition names one partition of a topic: Kafka's TopicPartition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns "<topic>-<partition>", the partition's directory name
// and Kafka's TopicPartition.toString.
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// OffsetAndMetadata is a committed offset: the offset of the next record
// to consume, the leader epoch of the last consumed record (-1 if unknown)
// and free-form metadata. Kafka's OffsetAndMetadata.
type OffsetAndMetadata struct {
	Offset      int64
	LeaderEpoch int32
	Metadata    string
}

// GroupMetadata identifies a consumer's group membership: Kafka's
// ConsumerGroupMetadata. A transactional producer's
// SendOffsetsToTransaction takes it, so that the coordinator can refuse the
// offsets of a member that was fenced by a rebalance (zombie fencing,
// KIP-447).
type GroupMetadata struct {
	// GroupID is group.id.
	GroupID string
	// MemberID is the member id the coordinator gave the consumer; empty
	// for a consumer that is not in a group (Assign) or has not joined.
	MemberID string
	// GenerationID is the group generation the consumer joined, -1 when
	// not in a group.
	GenerationID int32
	// GroupInstanceID mirrors group.instance.id, a static member's id
	// (Kafka's ConsumerGroupMetadata.groupInstanceId), as the consumer
	// was configured. SendOffsetsToTransaction does not read it: a
	// transactional offset commit is checked against MemberID and
	// GenerationID alone.
	GroupInstanceID string
}

// checkpointOffsets converts offsets for the checkpoint files' writer.
func checkpointOffsets(m map[TopicPartition]int64) map[checkpoint.TopicPartition]int64 {
	out := make(map[checkpoint.TopicPartition]int64, len(m))
	for tp, off := range m {
		out[checkpoint.TopicPartition(tp)] = off
	}
	return out
}

// fromCheckpointOffsets converts offsets the checkpoint files' reader
// returned.
func fromCheckpointOffsets(m map[checkpoint.TopicPartition]int64) map[TopicPartition]int64 {
	out := make(map[TopicPartition]int64, len(m))
	for tp, off := range m {
		out[TopicPartition(tp)] = off
	}
	return out
}

// IsolationLevel is how far a read goes in a partition with transactions
// (Kafka's isolation.level, and FetchIsolation on the broker's side); its
// values are Kafka's on the wire. Control batches (transaction markers)
// are data to neither: readers skip them.
type IsolationLevel int8

// The isolation levels.
const (
	// ReadUncommitted ("read_uncommitted", Kafka's default): every batch
	// up to the high watermark, including those of open and aborted
	// transactions.
	ReadUncommitted IsolationLevel = iota
	// ReadCommitted ("read_committed"): the batches up to the last stable
	// offset (the first offset of the earliest open transaction), with
	// the aborted transactions among them, whose batches a reader drops
	// ([AbortFilter]).
	ReadCommitted
)

// String returns Kafka's spelling: "read_uncommitted" or "read_committed".
func (l IsolationLevel) String() string {
	switch l {
	case ReadUncommitted:
		return "read_uncommitted"
	case ReadCommitted:
		return "read_committed"
	}
	return fmt.Sprintf("isolation_level(%d)", int8(l))
}
