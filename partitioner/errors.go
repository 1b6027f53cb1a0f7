package partitioner

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with [errors.Is].
var (
	// ErrUnknownPartitioner means [ByClassName] was given a class name that
	// names no built-in partitioner. Returned as an
	// [*UnknownPartitionerError].
	ErrUnknownPartitioner = errors.New("partitioner: unknown partitioner class")

	// ErrInvalidConfig means a configuration value is out of range, such as
	// a negative batch.size.
	ErrInvalidConfig = errors.New("partitioner: invalid configuration")
)

// UnknownPartitionerError reports a partitioner.class value that names no
// built-in partitioner. It matches [ErrUnknownPartitioner] under
// [errors.Is].
type UnknownPartitionerError struct {
	// Name is the class name as given.
	Name string
}

func (e *UnknownPartitionerError) Error() string {
	return fmt.Sprintf("partitioner: unknown partitioner class %q (known: %s, %s, %s, or empty for the default)",
		e.Name, RoundRobinClass, UniformStickyClass, LegacyDefaultClass)
}

// Unwrap returns [ErrUnknownPartitioner].
func (e *UnknownPartitionerError) Unwrap() error { return ErrUnknownPartitioner }
