package txncodec_test

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/internal/txncodec"
)

// A transaction coordinator records that a transactional id has an
// ongoing transaction: one __transaction_state record in
// the partition PartitionFor picks, keyed by TransactionLogKey v0, its
// value a TransactionLogValue v1 (the form a Kafka 4.x cluster at
// transaction.version 1 or more writes). The value's first 17 bytes are
// version 1, producerId 4000, producerEpoch 0, transactionTimeoutMs 60000
// and transactionStatus 1 (Ongoing). Replaying the record gives the state
// back.
func Example_roundTrip() {
	id := "payments-writer"
	key, err := txncodec.AppendKey(nil, txncodec.Key{TransactionalID: id})
	if err != nil {
		panic(err)
	}
	v := txncodec.NewValue(4000, 0, 60000, 1700000000000)
	v.TransactionStatus = txncodec.StatusOngoing
	v.TransactionStartTimestampMs = 1700000000000
	v.TransactionPartitions = []txncodec.TopicPartitions{{Topic: "payments", Partitions: []int32{0, 2}}}
	v.ClientTransactionVersion = 2 // a tagged field, written because it is not 0
	value, err := txncodec.AppendValue(nil, v)
	if err != nil {
		panic(err)
	}
	fmt.Printf("partition %d of %d\n", txncodec.PartitionFor(id, txncodec.DefaultTransactionStateTopicPartitions),
		txncodec.DefaultTransactionStateTopicPartitions)
	fmt.Printf("key   % x\n", key)
	fmt.Printf("value %d bytes, % x ...\n", len(value), value[:17])

	k, err := txncodec.ParseKey(key)
	if err != nil {
		panic(err)
	}
	got, err := txncodec.ParseValue(value)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: producer %d epoch %d, status %d, partitions %v, client transaction version %d\n", k.TransactionalID,
		got.ProducerID, got.ProducerEpoch, got.TransactionStatus, got.TransactionPartitions, got.ClientTransactionVersion)
	// Output:
	// partition 15 of 50
	// key   00 00 00 0f 70 61 79 6d 65 6e 74 73 2d 77 72 69 74 65 72
	// value 58 bytes, 00 01 00 00 00 00 00 00 0f a0 00 00 00 00 ea 60 01 ...
	// payments-writer: producer 4000 epoch 0, status 1, partitions [{payments [0 2]}], client transaction version 2
}

// Replaying __transaction_state: a null value is a tombstone (the id
// expired), not a decoding failure; bad bytes are a *DecodeError that
// matches ErrCorrupt and says where the value broke.
func ExampleParseValue() {
	_, err := txncodec.ParseValue(nil)
	fmt.Println(errors.Is(err, txncodec.ErrTombstone), errors.Is(err, txncodec.ErrCorrupt))

	_, err = txncodec.ParseValue([]byte{0x00, 0x02, 0x00})
	fmt.Println(errors.Is(err, txncodec.ErrCorrupt), errors.Is(err, txncodec.ErrUnsupportedVersion))
	fmt.Println(err)
	// Output:
	// true false
	// true true
	// txncodec: corrupt TransactionLogValue: version at byte 0: version 2 is not one Kafka reads (0-1)
}
