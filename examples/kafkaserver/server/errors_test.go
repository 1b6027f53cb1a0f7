package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/record"
)

// TestEveryErrorHasItsCode: each error of the log and the coordinators a
// request can meet answers Kafka's code for it, wrapped as the packages
// wrap them, never UNKNOWN_SERVER_ERROR (several did: an internal topic's
// refusal, a transactional batch of a partition not added, a closed
// directory).
func TestEveryErrorHasItsCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code func(error) int16
		want int16
	}{
		{log.ErrOffsetOutOfRange, codeOf, errOffsetOutOfRange},
		{log.ErrInvalidRecord, codeOf, errInvalidRecord},
		{log.ErrRecordTooLarge, codeOf, errMessageTooLarge},
		{record.ErrTooLarge, codeOf, errMessageTooLarge},
		{log.ErrInvalidTimestamp, codeOf, errInvalidTimestamp},
		{log.ErrClosed, codeOf, errNotLeaderOrFollower},
		{log.ErrTopicDeleted, codeOf, errUnknownTopicOrPartition},
		{log.ErrUnknownTopicOrPartition, codeOf, errUnknownTopicOrPartition},
		{log.ErrTopicExists, codeOf, errTopicAlreadyExists},
		{log.ErrInternalTopic, codeOf, errInvalidTopic},
		{log.ErrInvalidTopicName, codeOf, errInvalidTopic},
		{log.ErrStorage, codeOf, errKafkaStorageError},
		{log.ErrOutOfOrderSequence, codeOf, errOutOfOrderSequence},
		{log.ErrInvalidProducerEpoch, codeOf, errInvalidProducerEpoch},
		{log.ErrInvalidTxnState, codeOf, errInvalidTxnState},
		{log.ErrTransactionCoordinatorFenced, codeOf, errCoordinatorFenced},
		{log.ErrInvalidConfig, codeOf, errInvalidConfig},
		{log.ErrUnknownProperty, codeOf, errInvalidConfig},
		{record.ErrCRC, codeOf, errCorruptMessage},
		{record.ErrCorrupt, codeOf, errCorruptMessage},
		{record.ErrTruncated, codeOf, errCorruptMessage},
		{coordinator.ErrUnknownMember, groupCode, errUnknownMemberID},
		{coordinator.ErrIllegalGeneration, groupCode, errIllegalGeneration},
		{coordinator.ErrRebalanceInProgress, groupCode, errRebalanceInProgress},
		{coordinator.ErrInconsistentProtocol, groupCode, errInconsistentGroupProto},
		{coordinator.ErrFencedInstanceID, groupCode, errFencedInstanceID},
		{coordinator.ErrGroupNotEmpty, groupCode, errNonEmptyGroup},
		{coordinator.ErrUnknownGroup, groupCode, errGroupIDNotFound},
		{coordinator.ErrGroupMaxCount, groupCode, errGroupMaxSizeReached},
		{coordinator.ErrClosed, groupCode, errCoordinatorNotAvailable},
		{coordinator.ErrFencedMemberEpoch, groupCode, errFencedMemberEpoch},
		{coordinator.ErrStaleMemberEpoch, groupCode, errStaleMemberEpoch},
		{coordinator.ErrUnreleasedInstanceID, groupCode, errUnreleasedInstanceID},
		{coordinator.ErrUnsupportedAssignor, groupCode, errUnsupportedAssignor},
		{coordinator.ErrInvalidRegularExpression, groupCode, errInvalidRegularExpression},
		{coordinator.ErrInvalidHeartbeat, groupCode, errInvalidRequest},
		{coordinator.ErrGroupMaxSize, groupCode, errGroupMaxSizeReached},
		{coordinator.ErrProducerFenced, txnCode, errProducerFenced},
		{coordinator.ErrInvalidTxnState, txnCode, errInvalidTxnState},
		{coordinator.ErrInvalidTransactionTimeout, txnCode, errInvalidTransactionTimeout},
		{coordinator.ErrConcurrentTransactions, txnCode, errConcurrentTransactions},
		{coordinator.ErrTransactionalIDNotFound, txnCode, errTransactionalIDNotFound},
		{coordinator.ErrUnknownTopicOrPartition, txnCode, errUnknownTopicOrPartition},
		{share.ErrInvalidRecordState, shareCode, codeInvalidRecordState},
		{share.ErrInvalidRequest, shareCode, errInvalidRequest},
		{share.ErrStateLoading, shareCode, errLeaderNotAvailable},
		{errShareRequestMalformed, shareCode, errInvalidRequest},
		{log.ErrUnknownTopicOrPartition, shareCode, errUnknownTopicOrPartition},
		{errShareSessionNotFound, sessionCode, codeShareSessionNotFound},
		{errInvalidShareEpoch, sessionCode, codeInvalidShareEpoch},
		{errShareSessionLimit, sessionCode, codeShareSessionLimit},
		{fmt.Errorf("coordinator: adding t-0 to transaction tx: %w", &log.PartitionError{Topic: "t", Err: log.ErrInvalidProducerEpoch}), txnCode, errInvalidProducerEpoch},
	} {
		wrapped := fmt.Errorf("context: %w", &log.PartitionError{Topic: "t", Partition: 0, Err: tc.err})
		require.Equal(t, tc.want, tc.code(wrapped), "%v", tc.err)
	}
}
