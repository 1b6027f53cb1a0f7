package remotecodec

import "strconv"

// The apiKeys of the four records (the "apiKey" of each schema, Kafka's
// MetadataRecordType). They are part of the wire format.
const (
	APIKeyRemoteLogSegmentMetadataRecord         int16 = 0
	APIKeyRemoteLogSegmentMetadataUpdateRecord   int16 = 1
	APIKeyRemotePartitionDeleteMetadataRecord    int16 = 2
	APIKeyRemoteLogSegmentMetadataSnapshotRecord int16 = 3
)

// FrameVersion is the first unsigned varint of every value
// (AbstractApiMessageSerde.DEFAULT_FRAME_VERSION). Kafka writes 1 and reads
// nothing else; frame version 0 was the KRaft preview of Kafka 2.8.
const FrameVersion = 1

// RemoteLogSegmentState is the state of a segment in remote storage
// (RemoteLogSegmentState.id()). A segment goes COPY_SEGMENT_STARTED →
// COPY_SEGMENT_FINISHED → DELETE_SEGMENT_STARTED → DELETE_SEGMENT_FINISHED,
// or straight from COPY_SEGMENT_STARTED to DELETE_SEGMENT_STARTED when a
// copy fails; Kafka also accepts a state repeated (a retried update).
type RemoteLogSegmentState int8

// The segment states, as Kafka numbers them. Any other id fails to decode,
// as it fails Kafka's RemoteLogMetadataSerde.
const (
	CopySegmentStarted    RemoteLogSegmentState = 0 // COPY_SEGMENT_STARTED
	CopySegmentFinished   RemoteLogSegmentState = 1 // COPY_SEGMENT_FINISHED
	DeleteSegmentStarted  RemoteLogSegmentState = 2 // DELETE_SEGMENT_STARTED
	DeleteSegmentFinished RemoteLogSegmentState = 3 // DELETE_SEGMENT_FINISHED
)

// Valid reports whether s is one of the four states Kafka knows.
func (s RemoteLogSegmentState) Valid() bool {
	return s >= CopySegmentStarted && s <= DeleteSegmentFinished
}

// String returns Kafka's name of the state, or the number for an unknown
// id.
func (s RemoteLogSegmentState) String() string {
	switch s {
	case CopySegmentStarted:
		return "COPY_SEGMENT_STARTED"
	case CopySegmentFinished:
		return "COPY_SEGMENT_FINISHED"
	case DeleteSegmentStarted:
		return "DELETE_SEGMENT_STARTED"
	case DeleteSegmentFinished:
		return "DELETE_SEGMENT_FINISHED"
	}
	return "RemoteLogSegmentState(" + strconv.Itoa(int(s)) + ")"
}

// RemotePartitionDeleteState is the state of the deletion of a partition's
// remote data (RemotePartitionDeleteState.id()): MARKED by the controller
// side, STARTED and FINISHED by the partition's leader.
type RemotePartitionDeleteState int8

// The partition deletion states, as Kafka numbers them. Any other id fails
// to decode, as it fails Kafka's RemoteLogMetadataSerde.
const (
	DeletePartitionMarked   RemotePartitionDeleteState = 0 // DELETE_PARTITION_MARKED
	DeletePartitionStarted  RemotePartitionDeleteState = 1 // DELETE_PARTITION_STARTED
	DeletePartitionFinished RemotePartitionDeleteState = 2 // DELETE_PARTITION_FINISHED
)

// Valid reports whether s is one of the three states Kafka knows.
func (s RemotePartitionDeleteState) Valid() bool {
	return s >= DeletePartitionMarked && s <= DeletePartitionFinished
}

// String returns Kafka's name of the state, or the number for an unknown
// id.
func (s RemotePartitionDeleteState) String() string {
	switch s {
	case DeletePartitionMarked:
		return "DELETE_PARTITION_MARKED"
	case DeletePartitionStarted:
		return "DELETE_PARTITION_STARTED"
	case DeletePartitionFinished:
		return "DELETE_PARTITION_FINISHED"
	}
	return "RemotePartitionDeleteState(" + strconv.Itoa(int(s)) + ")"
}

// TopicIdPartition is a user topic's partition (TopicIdPartitionEntry).
type TopicIdPartition struct {
	// Name is the topic name (Name).
	Name string
	// ID is the topic id (Id), Kafka's Uuid: the most significant 8 bytes
	// first.
	ID [16]byte
	// Partition is the partition number (Partition).
	Partition int32
}

// RemoteLogSegmentID names one segment copied to remote storage
// (RemoteLogSegmentIdEntry): the partition it belongs to and a uuid the
// broker draws for each copy.
type RemoteLogSegmentID struct {
	// TopicIdPartition is the segment's partition (TopicIdPartition).
	TopicIdPartition TopicIdPartition
	// ID is the segment's uuid (Id).
	ID [16]byte
}

// SegmentLeaderEpoch is one element of SegmentLeaderEpochs
// (SegmentLeaderEpochEntry): the first offset written under a leader epoch
// within the segment.
type SegmentLeaderEpoch struct {
	// LeaderEpoch is the leader epoch (LeaderEpoch).
	LeaderEpoch int32
	// Offset is its start offset (Offset).
	Offset int64
}

// Record is one of the four record types of __remote_log_metadata:
// [RemoteLogSegmentMetadataRecord], [RemoteLogSegmentMetadataUpdateRecord],
// [RemotePartitionDeleteMetadataRecord] and
// [RemoteLogSegmentMetadataSnapshotRecord] (or pointers to them, for the
// encoders). [ParseValue] returns the values, not pointers.
type Record interface {
	// APIKey returns the record type's apiKey, written in the value's
	// frame.
	APIKey() int16
	record()
}

// RemoteLogSegmentMetadataRecord (apiKey 0) announces a segment: Kafka's
// TopicBasedRemoteLogMetadataManager writes one in state
// [CopySegmentStarted] before it copies the segment to remote storage
// (addRemoteLogSegmentMetadata).
type RemoteLogSegmentMetadataRecord struct {
	// RemoteLogSegmentID identifies the segment (RemoteLogSegmentId).
	RemoteLogSegmentID RemoteLogSegmentID
	// StartOffset is the segment's first offset (StartOffset); Kafka refuses
	// a negative one.
	StartOffset int64
	// EndOffset is the segment's last offset, inclusive (EndOffset); Kafka
	// refuses one below StartOffset.
	EndOffset int64
	// BrokerID is the broker that wrote the event (BrokerId).
	BrokerID int32
	// MaxTimestampMs is the largest record timestamp in the segment
	// (MaxTimestampMs).
	MaxTimestampMs int64
	// EventTimestampMs is when the event happened (EventTimestampMs).
	EventTimestampMs int64
	// SegmentLeaderEpochs maps the leader epochs in the segment to their
	// start offsets (SegmentLeaderEpochs); Kafka refuses an empty list,
	// writes the epochs in ascending order, and keeps the last offset of an
	// epoch listed twice when it reads.
	SegmentLeaderEpochs []SegmentLeaderEpoch
	// SegmentSizeInBytes is the segment's size (SegmentSizeInBytes).
	SegmentSizeInBytes int32
	// CustomMetadata is what the RemoteStorageManager plugin returned for
	// the segment (CustomMetadata, nullable): nil is null, which Kafka writes
	// when there is none; a non-nil empty slice is empty bytes.
	CustomMetadata []byte
	// RemoteLogSegmentState is the segment's state (RemoteLogSegmentState).
	RemoteLogSegmentState RemoteLogSegmentState
	// TxnIndexEmpty says the segment's transaction index is empty (tagged
	// field 0, every version; written only when true).
	TxnIndexEmpty bool
	// BrokerLeaderEpoch is the partition leader epoch of the uploading
	// broker (tagged field 1, version 1 only, written only when not 0).
	// Version 1 is in Kafka's development branch, not in Kafka 4.4.0, which
	// writes and reads version 0 only: leave it 0 for a log that Kafka 4.4
	// replays.
	BrokerLeaderEpoch int32
}

// RemoteLogSegmentMetadataUpdateRecord (apiKey 1) moves a segment to another
// state (updateRemoteLogSegmentMetadata): [CopySegmentFinished] with the
// plugin's custom metadata after the copy, then [DeleteSegmentStarted] and
// [DeleteSegmentFinished] around its deletion.
type RemoteLogSegmentMetadataUpdateRecord struct {
	// RemoteLogSegmentID identifies the segment (RemoteLogSegmentId).
	RemoteLogSegmentID RemoteLogSegmentID
	// BrokerID is the broker that wrote the event (BrokerId).
	BrokerID int32
	// EventTimestampMs is when the event happened (EventTimestampMs).
	EventTimestampMs int64
	// CustomMetadata is the plugin's custom metadata (CustomMetadata,
	// nullable): nil is null.
	CustomMetadata []byte
	// RemoteLogSegmentState is the new state (RemoteLogSegmentState).
	RemoteLogSegmentState RemoteLogSegmentState
}

// RemotePartitionDeleteMetadataRecord (apiKey 2) records a step of deleting
// a partition's remote data (putRemotePartitionDeleteMetadata).
type RemotePartitionDeleteMetadataRecord struct {
	// TopicIdPartition is the partition (TopicIdPartition).
	TopicIdPartition TopicIdPartition
	// BrokerID is the broker (or controller) that wrote the event
	// (BrokerId).
	BrokerID int32
	// EventTimestampMs is when the event happened (EventTimestampMs).
	EventTimestampMs int64
	// RemotePartitionDeleteState is the deletion's state
	// (RemotePartitionDeleteState).
	RemotePartitionDeleteState RemotePartitionDeleteState
}

// RemoteLogSegmentMetadataSnapshotRecord (apiKey 3) is a segment's metadata
// without its partition (RemoteLogSegmentMetadataSnapshot), for snapshots
// of a partition's remote segments. Kafka's serde reads and writes it, but
// nothing in Kafka 4.4.0 publishes one to the topic.
type RemoteLogSegmentMetadataSnapshotRecord struct {
	// SegmentID is the segment's uuid (SegmentId).
	SegmentID [16]byte
	// StartOffset is the segment's first offset (StartOffset).
	StartOffset int64
	// EndOffset is the segment's last offset, inclusive (EndOffset).
	EndOffset int64
	// BrokerID is the broker that wrote the event (BrokerId).
	BrokerID int32
	// MaxTimestampMs is the largest record timestamp in the segment
	// (MaxTimestampMs).
	MaxTimestampMs int64
	// EventTimestampMs is when the event happened (EventTimestampMs).
	EventTimestampMs int64
	// SegmentLeaderEpochs are the segment's leader epochs and their start
	// offsets (SegmentLeaderEpochs); Kafka refuses an empty list.
	SegmentLeaderEpochs []SegmentLeaderEpoch
	// SegmentSizeInBytes is the segment's size (SegmentSizeInBytes).
	SegmentSizeInBytes int32
	// CustomMetadata is the plugin's custom metadata (CustomMetadata,
	// nullable): nil is null.
	CustomMetadata []byte
	// RemoteLogSegmentState is the segment's state (RemoteLogSegmentState).
	RemoteLogSegmentState RemoteLogSegmentState
	// TxnIndexEmpty says the segment's transaction index is empty (tagged
	// field 0; written only when true).
	TxnIndexEmpty bool
}

// APIKey returns 0.
func (RemoteLogSegmentMetadataRecord) APIKey() int16 { return APIKeyRemoteLogSegmentMetadataRecord }

// APIKey returns 1.
func (RemoteLogSegmentMetadataUpdateRecord) APIKey() int16 {
	return APIKeyRemoteLogSegmentMetadataUpdateRecord
}

// APIKey returns 2.
func (RemotePartitionDeleteMetadataRecord) APIKey() int16 {
	return APIKeyRemotePartitionDeleteMetadataRecord
}

// APIKey returns 3.
func (RemoteLogSegmentMetadataSnapshotRecord) APIKey() int16 {
	return APIKeyRemoteLogSegmentMetadataSnapshotRecord
}

func (RemoteLogSegmentMetadataRecord) record()         {}
func (RemoteLogSegmentMetadataUpdateRecord) record()   {}
func (RemotePartitionDeleteMetadataRecord) record()    {}
func (RemoteLogSegmentMetadataSnapshotRecord) record() {}

// recordName returns the schema name of an apiKey.
func recordName(apiKey int16) string {
	switch apiKey {
	case APIKeyRemoteLogSegmentMetadataRecord:
		return "RemoteLogSegmentMetadataRecord"
	case APIKeyRemoteLogSegmentMetadataUpdateRecord:
		return "RemoteLogSegmentMetadataUpdateRecord"
	case APIKeyRemotePartitionDeleteMetadataRecord:
		return "RemotePartitionDeleteMetadataRecord"
	case APIKeyRemoteLogSegmentMetadataSnapshotRecord:
		return "RemoteLogSegmentMetadataSnapshotRecord"
	}
	return "RemoteLogMetadata"
}
