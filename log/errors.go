package log

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kafkalite/kafkalite/segment"
)

// Sentinel errors of the log package. Compare with errors.Is; several come
// inside a typed error that carries the topic, partition or offsets.
var (
	// ErrOffsetOutOfRange: a read or a truncation outside [log start offset,
	// log end offset]. Returned as an [*OffsetOutOfRangeError].
	ErrOffsetOutOfRange = errors.New("log: offset out of range")
	// ErrInvalidRecord: a well-formed batch the log refuses (Kafka's
	// INVALID_RECORD, from LogValidator): a client batch with a non-zero base
	// offset, a record count that disagrees with its offsets, a control
	// batch from a client, a producer id without a sequence, a record
	// without a key on a compacted topic. Bytes that are not a valid batch
	// (a CRC mismatch, a malformed record, an unknown codec: Kafka's
	// CORRUPT_MESSAGE) do not match it: they match record.ErrCorrupt. A
	// batch claiming LogAppendTime is [ErrInvalidTimestamp].
	ErrInvalidRecord = errors.New("log: invalid record batch")
	// ErrRecordTooLarge: a batch above the topic's max.message.bytes, or
	// above segment.bytes.
	ErrRecordTooLarge = errors.New("log: record batch too large")
	// ErrInvalidTimestamp: a record timestamp outside the topic's
	// message.timestamp.before.max.ms / after.max.ms window.
	ErrInvalidTimestamp = errors.New("log: invalid timestamp")
	// ErrClosed: the log or its directory was closed.
	ErrClosed = errors.New("log: closed")
	// ErrTopicDeleted: the topic was deleted while the caller held it.
	ErrTopicDeleted = errors.New("log: topic deleted")
	// ErrUnknownTopicOrPartition: no such topic or partition.
	ErrUnknownTopicOrPartition = errors.New("log: unknown topic or partition")
	// ErrTopicExists: CreateTopic of a name in use (or colliding with one
	// after '.' and '_' are made equal, as Kafka rules).
	ErrTopicExists = errors.New("log: topic already exists")
	// ErrInternalTopic: a caller other than kafkalite's coordinators may
	// not create, delete, append to, delete records of, add partitions to
	// or reconfigure an internal topic such as __consumer_offsets (Kafka's
	// INVALID_TOPIC_EXCEPTION on the wire).
	ErrInternalTopic = errors.New("log: internal topic")
	// ErrDirLocked: another Dir, in this process or another, has the
	// directory open.
	ErrDirLocked = errors.New("log: directory is in use by another process or Dir")
	// ErrStorage: a write or fsync failed; the partition refuses appends
	// until the directory is reopened (Kafka takes the log dir offline).
	ErrStorage = errors.New("log: storage error")
	// ErrNotSupported: a feature kafkalite leaves out, named in the error.
	ErrNotSupported = errors.New("log: not supported")
	// ErrOutOfOrderSequence: an idempotent producer's batch does not follow
	// its previous one (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER).
	ErrOutOfOrderSequence = errors.New("log: out of order sequence number")
	// ErrInvalidProducerEpoch: a batch or marker of a producer epoch older
	// than the partition has seen; the producer was fenced by a newer
	// instance with the same transactional id (Kafka's
	// INVALID_PRODUCER_EPOCH).
	ErrInvalidProducerEpoch = errors.New("log: invalid producer epoch")
	// ErrInvalidTxnState: a transactional batch without a transaction the
	// coordinator registered, or a non-transactional batch inside an open
	// transaction (Kafka's INVALID_TXN_STATE).
	ErrInvalidTxnState = errors.New("log: invalid transaction state")
	// ErrTransactionCoordinatorFenced: a marker from a coordinator epoch
	// older than one the partition has seen (Kafka's
	// TRANSACTION_COORDINATOR_FENCED).
	ErrTransactionCoordinatorFenced = errors.New("log: transaction coordinator fenced")
	// ErrCorruptMetaProperties: the directory's meta.properties is not a
	// valid file (the error names it).
	ErrCorruptMetaProperties = errors.New("log: corrupt meta.properties")
	// ErrNotLogDir: [Open] of a directory that is neither empty nor a
	// kafkalite log directory (it has no topic store), without
	// Config.AdoptBrokerDirectory; or, with it, one without meta.properties
	// (Kafka refuses an unformatted log directory too). Open wrote nothing
	// into it.
	ErrNotLogDir = errors.New("log: not a kafkalite log directory")
	// ErrIncompleteTopic: a broker's directory being adopted holds some
	// partitions of a topic but not all of 0 to n-1 (a broker of a cluster
	// holds only its replicas). kafkalite does not invent the missing
	// ones; the error names the topic and what the directory holds.
	ErrIncompleteTopic = errors.New("log: adopted directory holds part of a topic")
)

// ErrCutUnderRead: the bytes of a read's slice ([FetchResult.Slice]) were
// truncated away ([Log.TruncateTo]) while they were copied out; read again.
// It is segment.ErrCutUnderRead under the log's name, so that a reader of
// the log matches it without naming the segment package.
var ErrCutUnderRead = segment.ErrCutUnderRead

// ResumeOffset returns, for an error of a read that met corrupt bytes (it
// matches record.ErrCorrupt), the first offset past them that reads can
// find, where the log knows it (the [segment.Error]'s NextOffset): a
// reader that skips the damage seeks there. ok is false when err names
// none.
func ResumeOffset(err error) (offset int64, ok bool) {
	var se *segment.Error
	if errors.As(err, &se) && se.NextOffset > 0 {
		return se.NextOffset, true
	}
	return 0, false
}

// OffsetOutOfRangeError says which offset was asked for and the valid
// range. It matches [ErrOffsetOutOfRange].
type OffsetOutOfRangeError struct {
	Topic          string
	Partition      int32
	Offset         int64
	LogStartOffset int64
	LogEndOffset   int64
}

func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("log: offset %d out of range [%d, %d] for %s-%d", e.Offset, e.LogStartOffset, e.LogEndOffset, e.Topic, e.Partition)
}

// Is matches ErrOffsetOutOfRange.
func (e *OffsetOutOfRangeError) Is(target error) bool { return target == ErrOffsetOutOfRange }

// PartitionError attaches a topic and partition to an error.
type PartitionError struct {
	Topic     string
	Partition int32
	Err       error
}

func (e *PartitionError) Error() string { return fmt.Sprintf("%s-%d: %v", e.Topic, e.Partition, e.Err) }

func (e *PartitionError) Unwrap() error { return e.Err }

// wrap attaches the partition to err ([PartitionError]).
func (tp TopicPartition) wrap(err error) error {
	return &PartitionError{Topic: tp.Topic, Partition: tp.Partition, Err: err}
}

// RecordError is one record a batch was refused for (Kafka's RecordError,
// KIP-467): its index in the batch and Kafka's message of why.
type RecordError struct {
	Index   int32
	Message string
}

// RecordValidationError is the refusal of a batch for some of its records,
// as Kafka's LogValidator refuses it (RecordValidationException): every
// record refused, each for its first fault (a missing key on a compacted
// topic, then its timestamp). It matches [ErrInvalidTimestamp] when a
// timestamp is among the faults, else [ErrInvalidRecord]; Message is
// Kafka's message for the whole batch.
type RecordValidationError struct {
	Partition TopicPartition
	Records   []RecordError
}

// timestamps reports whether a record was refused for its timestamp.
func (e *RecordValidationError) timestamps() bool {
	for _, r := range e.Records {
		if strings.HasPrefix(r.Message, "Timestamp ") {
			return true
		}
	}
	return false
}

// Message is Kafka's message for the refusal (its
// RecordValidationException's cause): about the timestamps if any record
// has a bad one, else the count of records refused and the first three.
func (e *RecordValidationError) Message() string {
	if e.timestamps() {
		return "One or more records have been rejected due to invalid timestamp"
	}
	shown := make([]string, 0, 3)
	for _, r := range e.Records[:min(len(e.Records), 3)] {
		shown = append(shown, fmt.Sprintf("RecordError(batchIndex=%d, message='%s')", r.Index, r.Message))
	}
	return fmt.Sprintf("One or more records have been rejected due to %d record errors in total, and only showing the first three errors at most: [%s]",
		len(e.Records), strings.Join(shown, ", "))
}

func (e *RecordValidationError) Error() string {
	return fmt.Sprintf("%v: %s: %s", e.sentinel(), e.Partition, e.Message())
}

func (e *RecordValidationError) sentinel() error {
	if e.timestamps() {
		return ErrInvalidTimestamp
	}
	return ErrInvalidRecord
}

// Unwrap returns ErrInvalidTimestamp or ErrInvalidRecord.
func (e *RecordValidationError) Unwrap() error { return e.sentinel() }
