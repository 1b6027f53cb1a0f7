package consumer

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with errors.Is.
var (
	// ErrClosed: a call after Close.
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
)

// NoOffsetError names the partitions without a committed offset under
// auto.offset.reset=none. It matches ErrNoOffset.
type NoOffsetError struct{ Partitions []TopicPartition }

func (e *NoOffsetError) Error() string {
	return fmt.Sprintf("consumer: no committed offset and auto.offset.reset=none for %v", e.Partitions)
}

// Is matches ErrNoOffset.
func (e *NoOffsetError) Is(target error) bool { return target == ErrNoOffset }
