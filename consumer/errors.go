package consumer

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
)

// Sentinel errors. Compare with errors.Is.
var (
	// ErrClosed: a call after Close; also Poll and CommitSync once the
	// consumer's log.Dir is closed (those errors match log.ErrClosed
	// too).
	ErrClosed = errors.New("consumer: closed")
	// ErrConcurrentUse: two goroutines called the consumer at once. A
	// Consumer, like Kafka's, is for one goroutine at a time.
	ErrConcurrentUse = errors.New("consumer: used from two goroutines at once")
	// ErrNoOffset: a partition has no committed offset and
	// auto.offset.reset is none.
	ErrNoOffset = errors.New("consumer: no offset for partition")
	// ErrNotAssigned: an operation on a partition the consumer is not
	// assigned.
	ErrNotAssigned = errors.New("consumer: partition not assigned")
	// ErrNoGroup: an operation that needs group.id.
	ErrNoGroup = errors.New("consumer: no group.id configured")
	// ErrIllegalState: Subscribe and Assign mixed, as Kafka forbids.
	ErrIllegalState = errors.New("consumer: illegal state")
	// ErrInvalidReset: a [ResetTo] that says nothing (its zero value) or
	// names a negative offset or timestamp.
	ErrInvalidReset = errors.New("consumer: invalid offset reset")
)

// Errors of the group coordinator, as Kafka's group error codes. They are
// the coordinator's own values, so errors.Is matches what CommitSync,
// Poll and the group functions return.
var (
	// ErrIllegalGeneration: a commit from a member of an older generation
	// (the partitions may belong to someone else now).
	ErrIllegalGeneration = coordinator.ErrIllegalGeneration
	// ErrUnknownMember: the member was dropped from its group.
	ErrUnknownMember = coordinator.ErrUnknownMember
	// ErrRebalanceInProgress: the group is rebalancing; the next Poll rejoins.
	ErrRebalanceInProgress = coordinator.ErrRebalanceInProgress
	// ErrInconsistentGroupProtocol: the member shares no assignor with its
	// group.
	ErrInconsistentGroupProtocol = coordinator.ErrInconsistentProtocol
	// ErrGroupNotEmpty: deleting or resetting a group that has members.
	ErrGroupNotEmpty = coordinator.ErrGroupNotEmpty
	// ErrUnknownGroup: no such group.
	ErrUnknownGroup = coordinator.ErrUnknownGroup
	// ErrFencedInstanceID: a member with the consumer's group.instance.id
	// is in the group already (see [Config.GroupInstanceID]).
	ErrFencedInstanceID = coordinator.ErrFencedInstanceID
)

// NoOffsetError names the partitions without a committed offset under
// auto.offset.reset=none. It matches ErrNoOffset.
type NoOffsetError struct{ Partitions []TopicPartition }

func (e *NoOffsetError) Error() string {
	return fmt.Sprintf("consumer: no committed offset and auto.offset.reset=none for %v", e.Partitions)
}

// Is matches ErrNoOffset.
func (e *NoOffsetError) Is(target error) bool { return target == ErrNoOffset }

// CorruptRecordError is a fetched batch or record that does not decode: a
// CRC mismatch (with check.crcs, the default), a record that does not
// parse, a batch cut short, or damaged bytes the log found where the
// partition's next batch should be (a batch whose offsets cannot be true,
// a sealed segment that ends early). It is Kafka's CorruptRecordException: Poll
// returns it, and again at every Poll, until a Seek moves the position past
// the damage. It matches record.ErrCorrupt, and Err (a *record.CorruptError
// for a decoding failure) says more.
type CorruptRecordError struct {
	Partition TopicPartition
	// Offset is the partition's position: the first record not returned.
	Offset int64
	// ResumeAt is the first offset after the damage where reading can go
	// on (Seek there to skip it), or -1 where the consumer cannot tell:
	// the offset after the batch that failed to decode, or where the log
	// says its readable batches continue after damaged bytes.
	ResumeAt int64
	Err      error
}

func (e *CorruptRecordError) Error() string {
	if e.ResumeAt >= 0 {
		return fmt.Sprintf("consumer: %s: corrupt record at or after offset %d (seek to %d to go on): %v", e.Partition, e.Offset, e.ResumeAt, e.Err)
	}
	return fmt.Sprintf("consumer: %s: corrupt record at or after offset %d (seek past it to go on): %v", e.Partition, e.Offset, e.Err)
}

// Unwrap returns Err.
func (e *CorruptRecordError) Unwrap() error { return e.Err }

// Is matches record.ErrCorrupt, whatever Err is.
func (e *CorruptRecordError) Is(target error) bool { return target == record.ErrCorrupt }

// dirClosed makes an error of the consumer's closed log.Dir
// (log.ErrClosed) match ErrClosed as well: a consumer whose directory
// closed is closed.
func dirClosed(err error) error {
	if errors.Is(err, log.ErrClosed) && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}
