package producer

import "errors"

// Sentinel errors. Compare with errors.Is. Errors from the log (an unknown
// topic, a record the log refuses, a storage failure) come through as the
// log package's errors, wrapped.
var (
	// ErrClosed: Send after Close, or a record still buffered when Close's
	// context ended.
	ErrClosed = errors.New("producer: closed")
	// ErrRecordTooLarge: a record whose batch would exceed max.request.size
	// or buffer.memory.
	ErrRecordTooLarge = errors.New("producer: record too large")
	// ErrDeliveryTimeout: a batch waited longer than delivery.timeout.ms to
	// be appended.
	ErrDeliveryTimeout = errors.New("producer: delivery timeout expired")
	// ErrInvalidRecord: a record without a topic, with a negative timestamp
	// or a partition outside the topic.
	ErrInvalidRecord = errors.New("producer: invalid record")
	// ErrSerialization: a typed producer's serializer failed.
	ErrSerialization = errors.New("producer: serialization failed")
	// ErrProducerFenced: another producer with the same transactional.id
	// called InitTransactions, or the coordinator aborted a transaction
	// that outlived transaction.timeout.ms. Fatal: close the producer
	// (Kafka's ProducerFencedException).
	ErrProducerFenced = errors.New("producer: fenced by a newer producer with the same transactional.id")
	// ErrTransactionState: a transactional method called out of order
	// (Send outside a transaction, CommitTransaction before
	// BeginTransaction, ...) or after a send of the transaction failed
	// (Kafka's IllegalStateException and abortable errors).
	ErrTransactionState = errors.New("producer: invalid transaction state")
	// ErrProducerBroken: the log refused a batch's sequence or transaction
	// state, which a correct producer never causes. Fatal: close the
	// producer.
	ErrProducerBroken = errors.New("producer: producer state out of step with the log")
)
