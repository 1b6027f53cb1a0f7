package server

import (
	"context"
	"errors"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// Kafka's error codes that the server answers with (Kafka's
// org.apache.kafka.common.protocol.Errors).
const (
	errNone                     int16 = 0
	errUnknownServerError       int16 = -1
	errOffsetOutOfRange         int16 = 1
	errCorruptMessage           int16 = 2
	errUnknownTopicOrPartition  int16 = 3
	errLeaderNotAvailable       int16 = 5
	errNotLeaderOrFollower      int16 = 6
	errRequestTimedOut          int16 = 7
	errMessageTooLarge          int16 = 10
	errInvalidTopic             int16 = 17
	errTopicAuthorization       int16 = 29
	errInvalidRequiredAcks      int16 = 21
	errInvalidTimestamp         int16 = 32
	errUnsupportedVersion       int16 = 35
	errTopicAlreadyExists       int16 = 36
	errInvalidPartitions        int16 = 37
	errInvalidReplicationFactor int16 = 38
	errInvalidReplicaAssignment int16 = 39
	errInvalidConfig            int16 = 40
	errInvalidRequest           int16 = 42
	errPolicyViolation          int16 = 44
	errOutOfOrderSequence       int16 = 45
	errInvalidProducerEpoch     int16 = 47
	errInvalidTxnState          int16 = 48
	errCoordinatorFenced        int16 = 52
	errKafkaStorageError        int16 = 56
	errLogDirNotFound           int16 = 57
	errElectionNotNeeded        int16 = 84
	errInvalidRecord            int16 = 87
	errInvalidUpdateVersion     int16 = 95
	errUnknownTopicID           int16 = 100
	errResourceNotFound         int16 = 91
	errDuplicateResource        int16 = 92
	errUnacceptableCredential   int16 = 93
	errRebootstrapRequired      int16 = 129
)

// codeOf maps an error of kafkalite's log to Kafka's error code.
func codeOf(err error) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, log.ErrUnknownTopicOrPartition), errors.Is(err, log.ErrTopicDeleted):
		return errUnknownTopicOrPartition
	case errors.Is(err, log.ErrOffsetOutOfRange):
		return errOffsetOutOfRange
	case errors.Is(err, log.ErrInternalTopic):
		// Kafka's answer to a Produce or a DeleteRecords of an internal
		// topic (ReplicaManager); kafkalite gives it to every write or
		// deletion it refuses there.
		return errInvalidTopic
	case errors.Is(err, record.ErrCRC), errors.Is(err, record.ErrCorrupt), errors.Is(err, record.ErrTruncated):
		return errCorruptMessage
	case errors.Is(err, log.ErrRecordTooLarge), errors.Is(err, record.ErrTooLarge):
		return errMessageTooLarge
	case errors.Is(err, log.ErrInvalidTimestamp):
		return errInvalidTimestamp
	case errors.Is(err, log.ErrInvalidRecord):
		return errInvalidRecord
	case errors.Is(err, log.ErrOutOfOrderSequence):
		return errOutOfOrderSequence
	case errors.Is(err, log.ErrInvalidProducerEpoch):
		return errInvalidProducerEpoch
	case errors.Is(err, log.ErrInvalidTxnState):
		return errInvalidTxnState
	case errors.Is(err, log.ErrTransactionCoordinatorFenced):
		return errCoordinatorFenced
	case errors.Is(err, log.ErrTopicExists):
		return errTopicAlreadyExists
	case errors.Is(err, log.ErrInvalidTopicName):
		return errInvalidTopic
	case errors.Is(err, log.ErrInvalidConfig), errors.Is(err, log.ErrUnknownProperty):
		return errInvalidConfig
	case errors.Is(err, ErrTooManyPartitions):
		return errPolicyViolation
	case errors.Is(err, log.ErrStorage):
		return errKafkaStorageError
	case errors.Is(err, log.ErrClosed):
		// The directory is closing under the request: the partition is
		// no longer served here, a retriable answer (Kafka's when a
		// broker stops hosting a partition).
		return errNotLeaderOrFollower
	case errors.Is(err, context.DeadlineExceeded):
		return errRequestTimedOut
	}
	return errUnknownServerError
}

// messageOf is the error's text for responses that carry one.
func messageOf(err error) *string {
	if err == nil {
		return nil
	}
	m := err.Error()
	return &m
}
