package txncodec

import "github.com/kafkalite/kafkalite/internal/groupcodec"

// DefaultTransactionStateTopicPartitions is Kafka's default partition count
// of __transaction_state (transaction.state.log.num.partitions = 50), fixed
// when the topic is created.
const DefaultTransactionStateTopicPartitions = 50

// KeyVersion is the only TransactionLogKey version (TransactionLogKey.json);
// later Kafka calls this int16 prefix the coordinator record type, same
// value.
const KeyVersion = 0

// PartitionFor returns the __transaction_state partition that holds
// transactionalID's records when the topic has numPartitions partitions:
//
//	Utils.abs(transactionalId.hashCode()) % numPartitions
//
// with Java's String.hashCode and Utils.abs(math.MinInt32) = 0
// (TransactionStateManager.partitionFor), the rule of the group
// coordinator; it is [groupcodec.PartitionFor]. It returns -1 when numPartitions is not
// positive.
func PartitionFor(transactionalID string, numPartitions int32) int32 {
	return groupcodec.PartitionFor(transactionalID, numPartitions)
}

// Key is a __transaction_state record key (TransactionLogKey v0). Every
// state change of a transactional id has the same key bytes, so compaction
// keeps the last.
type Key struct {
	// TransactionalID is the producer's transactional.id (transactionalId).
	TransactionalID string
}

// AppendKey appends k as a record key:
//
//	00 00 | len(2) transactionalId
//
// It fails with [ErrInvalid], appending nothing, when TransactionalID is
// longer than 32767 bytes.
func AppendKey(dst []byte, k Key) ([]byte, error) {
	w := newWriter(dst, "TransactionLogKey")
	w.Int16(KeyVersion)
	w.String("transactionalId", k.TransactionalID, false)
	return w.Finish(dst)
}

// ParseKey decodes a record key. A version other than 0 fails with a
// [*DecodeError] matching [ErrCorrupt] and [ErrUnsupportedVersion] (the
// coordinator logs and skips such a record while loading). Bytes after the
// key are ignored, as Kafka ignores them.
func ParseKey(b []byte) (Key, error) {
	k, _, err := parseKey(b)
	return k, err
}

// parseKey also returns the bytes consumed.
func parseKey(b []byte) (Key, int, error) {
	r := newReader(b, "TransactionLogKey")
	version := r.Int16("version")
	if r.OK() && version != KeyVersion {
		r.FailVersion(version, "0")
	}
	if !r.OK() {
		return Key{}, 0, r.error()
	}
	r.Ver = int(version)
	k := Key{TransactionalID: r.String("transactionalId", false)}
	if !r.OK() {
		return Key{}, 0, r.error()
	}
	return k, r.Pos, nil
}
