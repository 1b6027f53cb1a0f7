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
)
