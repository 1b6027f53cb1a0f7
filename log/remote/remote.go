// Package remote is tiered storage's seam, split as Kafka splits it
// (KIP-405): a [StorageManager] holds the copies of sealed segments (their
// .log, indexes, producer snapshot and leader epochs) in another store, and
// the segments' metadata, with the states a copy and a deletion go through,
// is kept by the log in the internal topic __remote_log_metadata in Kafka's
// record schemas, so that the directory stays Kafka's.
//
// This package has the filesystem store ([FileStore]: another directory,
// such as a mounted volume), and the nested module log/remote/s3store an
// S3 store. A user may implement StorageManager for another store, keeping
// the contracts on its methods; package remotetest checks them.
//
// A directory copies its tiered topics' sealed segments to the store given
// as log.Config.RemoteStorage (with remote.log.storage.system.enable),
// records each copy in __remote_log_metadata (log.Dir.TierNow, and a
// background loop), deletes local segments once copied and beyond the
// topic's local retention, and reads the offsets below its first local
// segment back from the copies, through a bounded cache.
package remote

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

var (
	// ErrNotFound means the store has no (complete) copy of the segment or
	// of the asked index: Kafka's RemoteResourceNotFoundException.
	ErrNotFound = errors.New("remote: segment not found")
	// ErrCorrupt means what the store returned is not what was copied: a
	// size or checksum that does not match the copy's.
	ErrCorrupt = errors.New("remote: corrupt segment data")
	// ErrStorage means the store failed (Kafka's RemoteStorageException);
	// the operation may succeed if retried.
	ErrStorage = errors.New("remote: storage error")
)

// UUID is a Kafka Uuid: 16 bytes, written in Kafka's URL-safe base64
// without padding.
type UUID [16]byte

func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// SegmentID identifies one copy of a segment: Kafka's RemoteLogSegmentId
// (the partition, by topic name and id, and a random id per copy, so that
// a segment copied again after a failed attempt is a different object).
type SegmentID struct {
	Topic     string
	TopicID   UUID
	Partition int32
	ID        UUID
}

func (id SegmentID) String() string {
	return fmt.Sprintf("%s-%d:%s", id.Topic, id.Partition, id.ID)
}

// SegmentState is the state of a segment's copy: Kafka's
// RemoteLogSegmentState, numbered as in __remote_log_metadata.
type SegmentState int8

const (
	// CopySegmentStarted: the copy began; the store may hold part of it.
	CopySegmentStarted SegmentState = 0
	// CopySegmentFinished: the copy is complete and readable.
	CopySegmentFinished SegmentState = 1
	// DeleteSegmentStarted: the deletion began; the segment is not read.
	DeleteSegmentStarted SegmentState = 2
	// DeleteSegmentFinished: the store holds nothing of the segment.
	DeleteSegmentFinished SegmentState = 3
)

func (s SegmentState) String() string {
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
	return fmt.Sprintf("SegmentState(%d)", int8(s))
}

// EpochStart is a leader epoch and the first offset written in it.
type EpochStart struct {
	LeaderEpoch int32
	StartOffset int64
}

// SegmentMetadata describes a segment's copy: Kafka's
// RemoteLogSegmentMetadata.
type SegmentMetadata struct {
	ID SegmentID
	// StartOffset is the segment's base offset, EndOffset its last offset
	// (inclusive, as Kafka's).
	StartOffset, EndOffset int64
	// MaxTimestamp is the largest timestamp of the segment's batches.
	MaxTimestamp int64
	// LeaderEpochs are the epochs of the segment's batches with the first
	// offset of each, in order.
	LeaderEpochs []EpochStart
	// SizeInBytes is the size of the segment's .log.
	SizeInBytes int32
	// TxnIndexEmpty is set when the segment has no aborted transactions.
	TxnIndexEmpty bool
	State         SegmentState
	// EventTimestamp is when this state was reached (ms), BrokerID the
	// node that reached it.
	EventTimestamp int64
	BrokerID       int32
	// CustomMetadata is what the store returned from the copy, nil if
	// nothing.
	CustomMetadata []byte
}

// IndexType names an index of a segment's copy: Kafka's
// RemoteStorageManager.IndexType.
type IndexType int8

const (
	OffsetIndex IndexType = iota
	TimeIndex
	ProducerSnapshot
	TransactionIndex
	LeaderEpochIndex
)

func (t IndexType) String() string {
	switch t {
	case OffsetIndex:
		return "OFFSET"
	case TimeIndex:
		return "TIMESTAMP"
	case ProducerSnapshot:
		return "PRODUCER_SNAPSHOT"
	case TransactionIndex:
		return "TRANSACTION"
	case LeaderEpochIndex:
		return "LEADER_EPOCH"
	}
	return fmt.Sprintf("IndexType(%d)", int8(t))
}

// Source is one file of a segment to copy: read with ReadAt (a store may
// read it more than once, to retry), Size bytes long.
type Source struct {
	R    io.ReaderAt
	Size int64
}

// SegmentData is what a segment's copy holds: Kafka's LogSegmentData.
// TransactionIndex has a nil R when the segment has none.
type SegmentData struct {
	Log              Source
	OffsetIndex      Source
	TimeIndex        Source
	TransactionIndex Source
	ProducerSnapshot Source
	// LeaderEpochIndex is the segment's leader-epoch-checkpoint, in the
	// file's text format.
	LeaderEpochIndex []byte
}

// A StorageManager keeps segments' copies: Kafka's RemoteStorageManager.
// Its methods are safe for concurrent use, for different segments; the
// log never copies, fetches and deletes one segment at once.
type StorageManager interface {
	// CopyLogSegmentData stores the segment's files under m.ID. It is
	// idempotent: a copy of the same ID again (after a failure or a
	// crash) replaces what an earlier attempt left. When it returns nil
	// the copy is complete and durable in the store; when it fails the
	// store may hold part of it, which DeleteLogSegmentData removes. It may
	// return custom metadata to keep with the segment's metadata.
	CopyLogSegmentData(ctx context.Context, m SegmentMetadata, data SegmentData) (customMetadata []byte, err error)
	// FetchLogSegment returns the bytes of the segment's .log from start
	// up to end (exclusive; -1 for the end of the file). It fails with
	// ErrNotFound if the copy is missing or incomplete, and with
	// ErrCorrupt if the store's object does not have the copied size (or,
	// for a read of the whole file, its checksum).
	FetchLogSegment(ctx context.Context, m SegmentMetadata, start, end int64) (io.ReadCloser, error)
	// FetchIndex returns one index of the segment whole, checked against
	// what was copied (ErrCorrupt otherwise); ErrNotFound for a missing copy
	// or, for TransactionIndex, a segment copied without one.
	FetchIndex(ctx context.Context, m SegmentMetadata, t IndexType) (io.ReadCloser, error)
	// DeleteLogSegmentData removes everything the store holds of the
	// segment's copy, complete or not; a missing copy is not an error.
	DeleteLogSegmentData(ctx context.Context, m SegmentMetadata) error
	// Close releases the store's resources.
	Close() error
}
