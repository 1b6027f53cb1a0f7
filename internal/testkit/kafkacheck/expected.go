package kafkacheck

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kafkalite/kafkalite/record"
)

// Expected is what [WriteFeatureDir] wrote: for every partition of the
// directory, the batches and records it holds after the directory was
// closed, and the state of its consumer groups and transactional ids. It is
// built from what the builder sent and the offsets and timestamps the
// producer and the Dir's clock gave, not by reading the directory back (but
// for the producer ids the Dir hands out, taken from each producer's first
// batch or state record), so a reader of the directory (Kafka's tools, a
// broker serving it) is checked against it.
type Expected struct {
	// Topics are the directory's topics with the properties they were
	// created with (kafkalite-topics.json holds them; a broker that adopts
	// the partitions needs them given again).
	Topics map[string]TopicSpec
	// Partitions holds every partition's content, internal topics
	// (__consumer_offsets-0, __transaction_state-0) included.
	Partitions map[TopicPartition]*PartitionContent
	// Groups are the committed offsets of each consumer group, as a
	// consumer of the group would fetch them: the latest commit of each
	// partition, transactional commits only when their transaction
	// committed.
	Groups map[string]map[TopicPartition]CommittedOffset
	// Transactions is the final state of each transactional id (the last
	// __transaction_state record written for it).
	Transactions map[string]TxnState
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// TopicSpec is a topic as created: its partition count and properties.
// kafkalite accepts a segment.bytes below Kafka 4's minimum of 1 MiB
// (TopicSegments has 1024, TopicCodecs 106496); a broker takes such
// values as internal.segment.bytes.
type TopicSpec struct {
	Partitions int32
	Config     map[string]string
}

// PartitionContent is one partition: its batches in offset order as they are
// in the directory, and the aborted transactions its .txnindex files list.
type PartitionContent struct {
	// Batches are the partition's batches in offset order, after cleaning
	// for compacted topics.
	Batches []Batch
	// Appended are the batches as they were appended, before any
	// cleaning: the history the producer state (and its .snapshot files)
	// was built from. The same as Batches for a topic that was not
	// cleaned.
	Appended []Batch
	// Aborted are the entries of the partition's .txnindex files, in
	// order (each lives in the .txnindex of the segment holding its
	// ABORT marker).
	Aborted []AbortedTxn
	// LogEndOffset is the offset after the last batch.
	LogEndOffset int64
	// Cleaned says the partition's log was compacted by the cleaner.
	Cleaned bool
}

// Batch is one RecordBatch v2 as written.
type Batch struct {
	BaseOffset, LastOffset int64
	// BaseSequence is -1 for a producer without idempotence and for
	// markers.
	BaseSequence int32
	// ProducerID and ProducerEpoch are -1 for a producer without
	// idempotence.
	ProducerID           int64
	ProducerEpoch        int16
	PartitionLeaderEpoch int32
	Transactional        bool
	Control              bool
	// DeleteHorizonMs is the delete horizon the cleaner set, -1 if the
	// batch has none.
	DeleteHorizonMs int64
	TimestampType   record.TimestampType
	// MaxTimestamp is the batch's max timestamp: the largest record
	// timestamp for CreateTime, the time of the append for LogAppendTime
	// (and the original batch's for an emptied batch).
	MaxTimestamp int64
	Codec        record.Compression
	// Records are the batch's records; none for an empty batch (the
	// cleaner keeps those for the producer state).
	Records []Record
}

// Record is one record of a batch. Exactly one of the payload groups is
// set: Key/Value/Headers for a data record, Marker for a control record,
// and for the records of the internal topics the decoded key and value
// (OffsetCommit or GroupMetadata in __consumer_offsets, Txn in
// __transaction_state) instead of their bytes.
type Record struct {
	Offset    int64
	Timestamp int64
	// Key and Value are nil for null, empty but not nil for empty.
	Key, Value []byte
	Headers    []record.Header

	Marker       *Marker
	OffsetCommit *OffsetCommit
	Group        *GroupMetadata
	Txn          *TxnState
}

// Marker is the value of a COMMIT or ABORT control record.
type Marker struct {
	Type             record.ControlType
	CoordinatorEpoch int32
}

// AbortedTxn is an entry of a .txnindex.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// CommittedOffset is a group's committed offset of one partition.
type CommittedOffset struct {
	Offset      int64
	LeaderEpoch int32
	Metadata    string
}

// OffsetCommit is an offset commit record of __consumer_offsets (key:
// group, topic, partition; value: the commit).
type OffsetCommit struct {
	Group     string
	Topic     string
	Partition int32
	CommittedOffset
	CommitTimestamp int64
}

// GroupMetadata is a group metadata record of __consumer_offsets, in the
// classic protocol's terms.
type GroupMetadata struct {
	Group        string
	ProtocolType string
	Generation   int32
	// Protocol and Leader are empty for a group without members.
	Protocol              string
	Leader                string
	CurrentStateTimestamp int64
	Members               []GroupMember
}

// GroupMember is a member of a group metadata record, its subscription and
// assignment decoded.
type GroupMember struct {
	MemberID         string
	ClientID         string
	ClientHost       string
	RebalanceTimeout int32
	SessionTimeout   int32
	// Topics is the subscription; Assignment the partitions per topic.
	Topics     []string
	Assignment map[string][]int32
}

// TxnState is a __transaction_state record: a transactional id's state.
type TxnState struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	// Status is Kafka's name: Empty, Ongoing, PrepareCommit,
	// PrepareAbort, CompleteCommit, CompleteAbort.
	Status string
	// Partitions are the transaction's partitions per topic; nil for the
	// Empty state, whose record holds null.
	Partitions       map[string][]int32
	LastUpdateTimeMs int64
	StartTimeMs      int64
	// ClientTransactionVersion is the transaction's version (0, or 2 for
	// transactions version 2), printed when not 0.
	ClientTransactionVersion int16
}

// ConsumerView returns the data records of tp a consumer reads from the
// start of the log, in offset order: markers never, and with
// readCommitted the records of aborted transactions neither (Kafka's
// read_committed; every transaction in the directory is decided).
func (e *Expected) ConsumerView(tp TopicPartition, readCommitted bool) []Record {
	var out []Record
	for _, b := range e.ConsumerBatches(tp, readCommitted) {
		out = append(out, b.Records...)
	}
	return out
}

// ConsumerBatches returns the batches whose records ConsumerView returns,
// for a reader that needs their batch fields (leader epoch, timestamp
// type).
func (e *Expected) ConsumerBatches(tp TopicPartition, readCommitted bool) []Batch {
	p := e.Partitions[tp]
	if p == nil {
		return nil
	}
	var out []Batch
	for _, b := range p.Batches {
		if b.Control || (readCommitted && b.Transactional && p.abortedAt(b.ProducerID, b.BaseOffset)) {
			continue
		}
		out = append(out, b)
	}
	return out
}

// abortedAt reports whether the transaction of producerID that holds offset
// was aborted: the next marker of that producer after offset, in the batches
// as appended, is an ABORT.
func (p *PartitionContent) abortedAt(producerID, offset int64) bool {
	for _, b := range p.Appended {
		if b.Control && b.ProducerID == producerID && b.BaseOffset > offset && len(b.Records) == 1 {
			return b.Records[0].Marker.Type == record.ControlAbort
		}
	}
	return false
}

// SnapshotEntry is what a producer-state .snapshot holds for one producer
// (Kafka's ProducerStateEntry with its last batch).
type SnapshotEntry struct {
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction, -1 if none.
	CurrentTxnFirstOffset int64
	LastTimestamp         int64
	// FirstSequence, LastSequence, LastOffset and OffsetDelta describe the
	// producer's last data batch.
	FirstSequence, LastSequence int32
	LastOffset                  int64
	OffsetDelta                 int32
}

// ProducerStateAt returns the producer state a snapshot at offset holds:
// Kafka's ProducerStateManager rules applied to the batches appended below
// offset. For each producer id: its latest epoch; its last data batch's
// sequences, last offset and offset delta (none after a marker of a
// newer epoch); the max timestamp of its latest
// batch or marker; the coordinator epoch of its latest marker (-1 before
// one); the first offset of its open transaction. Sorted by producer id.
func (p *PartitionContent) ProducerStateAt(offset int64) []SnapshotEntry {
	state := map[int64]*SnapshotEntry{}
	for _, b := range p.Appended {
		if b.BaseOffset >= offset {
			break
		}
		if b.ProducerID < 0 {
			continue
		}
		e := state[b.ProducerID]
		if e == nil {
			e = &SnapshotEntry{ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1,
				FirstSequence: -1, LastSequence: -1, LastOffset: -1}
			state[b.ProducerID] = e
		}
		if b.ProducerEpoch != e.ProducerEpoch {
			// A new epoch (a marker of transactions version 2 brings one)
			// drops the batches' metadata: no sequence, no last offset.
			e.FirstSequence, e.LastSequence, e.LastOffset, e.OffsetDelta = -1, -1, -1, 0
		}
		e.ProducerEpoch = b.ProducerEpoch
		e.LastTimestamp = b.MaxTimestamp
		if b.Control {
			e.CoordinatorEpoch = b.Records[0].Marker.CoordinatorEpoch
			e.CurrentTxnFirstOffset = -1
			continue
		}
		e.FirstSequence = b.BaseSequence
		e.LastSequence = b.BaseSequence + int32(b.LastOffset-b.BaseOffset)
		e.LastOffset = b.LastOffset
		e.OffsetDelta = int32(b.LastOffset - b.BaseOffset)
		if b.Transactional && e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = b.BaseOffset
		}
	}
	var out []SnapshotEntry
	for _, e := range state {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b SnapshotEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}
