package share

import "errors"

var (
	// ErrInvalidRecordState is an acknowledgement of a record the member
	// has not acquired (never delivered to it, acknowledged already, or
	// its acquisition lock expired): Kafka's INVALID_RECORD_STATE (121).
	ErrInvalidRecordState = errors.New("share: invalid record state")
	// ErrInvalidRequest is a malformed acquisition or acknowledgement
	// (ranges out of order or overlapping, a type Kafka does not define):
	// Kafka's INVALID_REQUEST (42).
	ErrInvalidRequest = errors.New("share: invalid request")
	// ErrStateLoading is a call on a share-partition whose state write
	// failed (the directory closing, a full disk): it is dropped from
	// memory and loaded again from its last stored state at the next
	// call, which the caller retries: Kafka's LEADER_NOT_AVAILABLE (5), as
	// Kafka answers for a share-partition still loading.
	ErrStateLoading = errors.New("share: share-partition state being loaded again after a failed write")
)
