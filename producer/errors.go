package producer

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
)

// Sentinel errors. Compare with errors.Is. Errors from the log (an unknown
// topic, a record the log refuses, a storage failure) come through as the
// log package's errors, wrapped.
var (
	// ErrClosed: Send after Close, or a record still buffered when Close's
	// context ended; also Send, and the records' outcomes, once the
	// producer's log.Dir is closed (those errors match log.ErrClosed
	// too).
	ErrClosed = errors.New("producer: closed")
	// ErrRecordTooLarge: a record whose batch would exceed max.request.size
	// or buffer.memory.
	ErrRecordTooLarge = errors.New("producer: record too large")
	// ErrDeliveryTimeout: a batch waited longer than delivery.timeout.ms to
	// be appended.
	ErrDeliveryTimeout = errors.New("producer: delivery timeout expired")
	// ErrInvalidRecord: a record without a topic, with a negative timestamp
	// or a nil header key. (A partition outside its topic is
	// log.ErrUnknownTopicOrPartition, as Kafka answers
	// UNKNOWN_TOPIC_OR_PARTITION; a record the log refuses on append is
	// log.ErrInvalidRecord, through the Future.)
	ErrInvalidRecord = errors.New("producer: invalid record")
	// ErrSerialization: a typed producer's serializer failed.
	ErrSerialization = errors.New("producer: serialization failed")
	// ErrProducerFenced: another producer with the same transactional.id
	// called InitTransactions, or the coordinator aborted a transaction
	// that outlived transaction.timeout.ms. Fatal: close the producer
	// (Kafka's ProducerFencedException). The records in flight when the
	// fencing is found fail with it too: a record the log refused for its
	// stale epoch with an error that also matches
	// log.ErrInvalidProducerEpoch (Kafka turns INVALID_PRODUCER_EPOCH and
	// PRODUCER_FENCED produce responses into ProducerFencedException),
	// the records not yet appended with the producer's fatal error.
	ErrProducerFenced = errors.New("producer: fenced by a newer producer with the same transactional.id")
	// ErrTransactionState: a transactional method called out of order
	// (Send outside a transaction, CommitTransaction before
	// BeginTransaction, ...) or after a send of the transaction failed
	// (Kafka's IllegalStateException and abortable errors). The producer
	// finds it itself, without asking the coordinator; compare
	// [ErrInvalidTxnState].
	ErrTransactionState = errors.New("producer: invalid transaction state")
	// ErrProducerBroken: the log refused a batch's sequence or transaction
	// state, which a correct producer never causes. Fatal: close the
	// producer. The refused batch's records fail with it, wrapping the
	// log's error (log.ErrOutOfOrderSequence or log.ErrInvalidTxnState).
	ErrProducerBroken = errors.New("producer: producer state out of step with the log")
)

// Errors of the transaction coordinator, as Kafka's transaction error
// codes. They are the coordinator's own values, so errors.Is matches what
// InitTransactions, SendOffsetsToTransaction, CommitTransaction,
// AbortTransaction and the records of a transaction return. The
// coordinator's fencing error comes wrapped in [ErrProducerFenced]; a
// partition added to a transaction that does not exist matches
// log.ErrUnknownTopicOrPartition; the group coordinator's errors from
// SendOffsetsToTransaction match the consumer package's (for instance
// consumer.ErrIllegalGeneration).
var (
	// ErrInvalidTransactionTimeout (Kafka's INVALID_TRANSACTION_TIMEOUT,
	// InvalidTxnTimeoutException): transaction.timeout.ms is 0 or above
	// the directory's transaction.max.timeout.ms. InitTransactions fails
	// with it; the producer cannot start transactions with this
	// configuration.
	ErrInvalidTransactionTimeout = coordinator.ErrInvalidTransactionTimeout
	// ErrConcurrentTransactions (CONCURRENT_TRANSACTIONS): the
	// transactional id's previous transaction is still being completed,
	// which outlives a call only when writing its markers failed. Retry
	// later.
	ErrConcurrentTransactions = coordinator.ErrConcurrentTransactions
	// ErrTransactionalIDNotFound (TRANSACTIONAL_ID_NOT_FOUND,
	// TransactionalIdNotFoundException): the coordinator has no state for
	// the producer's transactional.id, for instance because it expired
	// after transactional.id.expiration.ms.
	ErrTransactionalIDNotFound = coordinator.ErrTransactionalIDNotFound
	// ErrInvalidTxnState (INVALID_TXN_STATE, InvalidTxnStateException): the
	// coordinator refused a request that does not fit the transaction's
	// state there, such as committing a transaction it is aborting, or
	// offsets for a group not added to the transaction. It is not
	// log.ErrInvalidTxnState (a partition's refusal, reported as
	// [ErrProducerBroken]) nor [ErrTransactionState] (the producer's own
	// check of the order of calls).
	ErrInvalidTxnState = coordinator.ErrInvalidTxnState
)

// dirClosed makes an error of the producer's closed log.Dir
// (log.ErrClosed) match ErrClosed as well: a producer whose directory
// closed is closed.
func dirClosed(err error) error {
	if errors.Is(err, log.ErrClosed) && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}
