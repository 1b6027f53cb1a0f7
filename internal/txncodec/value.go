package txncodec

import "fmt"

// TransactionStatus codes, as Kafka numbers them (TransactionState.fromId).
// Any other value fails to decode, as it fails Kafka's load.
const (
	StatusEmpty             int8 = 0 // after InitProducerId; partitions null
	StatusOngoing           int8 = 1
	StatusPrepareCommit     int8 = 2
	StatusPrepareAbort      int8 = 3
	StatusCompleteCommit    int8 = 4
	StatusCompleteAbort     int8 = 5
	StatusDead              int8 = 6 // not written: expiry writes a tombstone
	StatusPrepareEpochFence int8 = 7 // not written as far as verified
)

// Defaults of the value's fields, which Kafka's schema names.
const (
	// NoProducerID is the default of PreviousProducerID and NextProducerID
	// (RecordBatch.NO_PRODUCER_ID); a tagged field equal to it is not written.
	NoProducerID = -1
	// NoProducerEpoch is the default of NextProducerEpoch
	// (RecordBatch.NO_PRODUCER_EPOCH); not written when equal.
	NoProducerEpoch = -1
	// NoTransactionStartTimestamp is TransactionStartTimestampMs while no
	// transaction has started (state Empty).
	NoTransactionStartTimestamp = -1
)

// Versions and tags of TransactionLogValue (TransactionLogValue.json). These
// are part of the wire format.
const (
	// ValueMaxVersion is the highest value version Kafka 3.x and 4.x read
	// (validVersions 0-1).
	ValueMaxVersion = 1
	// DefaultValueVersion is the version [AppendValue] writes: 1, what a
	// Kafka 4.0+ cluster at transaction.version 1 or 2 writes (2 is the
	// latest production level; see the package documentation).
	DefaultValueVersion = 1

	valueFlexible = 1 // first flexible version

	tagPreviousProducerID       = 0 // int64, default -1
	tagNextProducerID           = 1 // int64, default -1
	tagClientTransactionVersion = 2 // int16, default 0
	tagNextProducerEpoch        = 3 // int16, default -1
)

// TopicPartitions is one element of TransactionPartitions: a topic and the
// partitions of it in the transaction (PartitionsSchema).
type TopicPartitions struct {
	// Topic is the topic name (topic).
	Topic string
	// Partitions are the partition ids (partitionIds); nil decodes from an
	// empty array.
	Partitions []int32
}

// Value is a __transaction_state record value (TransactionLogValue): the
// state of one transactional id. A null record value instead (a tombstone)
// removes the id: see [ParseValue].
//
// The zero Value has PreviousProducerID, NextProducerID and
// NextProducerEpoch 0, which are real values and are written as tagged
// fields in version 1 (and refused at version 0): start from [NewValue].
type Value struct {
	// ProducerID is the producer id in use (producerId).
	ProducerID int64
	// PreviousProducerID is the producer id of the last committed
	// transaction (tagged field 0, version 1), or [NoProducerID].
	PreviousProducerID int64
	// NextProducerID is the latest producer id sent to the producer (tagged
	// field 1, version 1), or [NoProducerID].
	NextProducerID int64
	// ProducerEpoch is the epoch of ProducerID (producerEpoch).
	ProducerEpoch int16
	// NextProducerEpoch is the epoch of NextProducerID (tagged field 3,
	// version 1), or [NoProducerEpoch].
	NextProducerEpoch int16
	// TransactionTimeoutMs is the transaction timeout (transactionTimeoutMs).
	TransactionTimeoutMs int32
	// TransactionStatus is one of the Status constants (transactionStatus).
	TransactionStatus int8
	// TransactionPartitions are the partitions in the transaction
	// (transactionPartitions, nullable): nil is null, which Kafka writes in
	// state Empty; a non-nil empty slice is an empty array.
	TransactionPartitions []TopicPartitions
	// TransactionLastUpdateTimestampMs is when the state last changed.
	TransactionLastUpdateTimestampMs int64
	// TransactionStartTimestampMs is when the transaction started, or
	// [NoTransactionStartTimestamp].
	TransactionStartTimestampMs int64
	// ClientTransactionVersion is the transaction version the client uses
	// (tagged field 2, version 1; default 0, e.g. 2 for KIP-890 clients).
	ClientTransactionVersion int16
}

// NewValue returns the value Kafka writes after InitProducerId: state Empty,
// partitions null, no transaction start, and every tagged field at its
// default.
func NewValue(producerID int64, producerEpoch int16, transactionTimeoutMs int32, lastUpdateTimestampMs int64) Value {
	return Value{
		ProducerID:                       producerID,
		PreviousProducerID:               NoProducerID,
		NextProducerID:                   NoProducerID,
		ProducerEpoch:                    producerEpoch,
		NextProducerEpoch:                NoProducerEpoch,
		TransactionTimeoutMs:             transactionTimeoutMs,
		TransactionStatus:                StatusEmpty,
		TransactionLastUpdateTimestampMs: lastUpdateTimestampMs,
		TransactionStartTimestampMs:      NoTransactionStartTimestamp,
	}
}

// AppendValue appends v at [DefaultValueVersion] (1). Version 1, all
// integers big-endian:
//
//	00 01 | producerId(8) | producerEpoch(2) | transactionTimeoutMs(4) |
//	transactionStatus(1) | uvarint(n+1) or 00 for null | per topic:
//	uvarint(len+1) topic, uvarint(k+1), int32 each, 00 |
//	lastUpdateTimestampMs(8) | startTimestampMs(8) | tagged fields
//
// where the tagged fields are a uvarint count and then, in ascending tag
// order, each non-default field as uvarint tag, uvarint size, data: tag 0
// PreviousProducerID (8 bytes), 1 NextProducerID (8), 2
// ClientTransactionVersion (2), 3 NextProducerEpoch (2). With none: 00.
//
// It fails as [AppendValueVersion] does.
func AppendValue(dst []byte, v Value) ([]byte, error) {
	return AppendValueVersion(dst, v, DefaultValueVersion)
}

// AppendValueVersion appends v at version 0 or 1. Version 0, what Kafka
// writes at transaction.version 0 (every 3.x cluster):
//
//	00 00 | producerId(8) | producerEpoch(2) | transactionTimeoutMs(4) |
//	transactionStatus(1) | count(4) or ff ff ff ff for null | per topic:
//	len(2) topic, count(4), int32 each | lastUpdateTimestampMs(8) |
//	startTimestampMs(8)
//
// Version 0 has no tagged fields: a tagged field that is not at its default
// fails with [ErrInvalid] rather than being lost. It also fails with
// [ErrInvalid] for a status outside 0–7, a string over 32767 bytes or an
// array over 2^31-2 elements, and with [ErrUnsupportedVersion] for another
// version; nothing is appended then.
func AppendValueVersion(dst []byte, v Value, version int16) ([]byte, error) {
	if version < 0 || version > ValueMaxVersion {
		return dst, invalidVersion(version)
	}
	w := newWriter(dst, "TransactionLogValue")
	if v.TransactionStatus < StatusEmpty || v.TransactionStatus > StatusPrepareEpochFence {
		w.Fail("transactionStatus", "status %d is not one Kafka knows (0-7)", v.TransactionStatus)
	}
	flexible := version >= valueFlexible
	if !flexible {
		switch {
		case v.PreviousProducerID != NoProducerID:
			w.Fail("previousProducerId", "%d cannot be written at version 0 (tagged field, version 1 only)", v.PreviousProducerID)
		case v.NextProducerID != NoProducerID:
			w.Fail("nextProducerId", "%d cannot be written at version 0 (tagged field, version 1 only)", v.NextProducerID)
		case v.ClientTransactionVersion != 0:
			w.Fail("clientTransactionVersion", "%d cannot be written at version 0 (tagged field, version 1 only)", v.ClientTransactionVersion)
		case v.NextProducerEpoch != NoProducerEpoch:
			w.Fail("nextProducerEpoch", "%d cannot be written at version 0 (tagged field, version 1 only)", v.NextProducerEpoch)
		}
	}
	w.Int16(version)
	w.Int64(v.ProducerID)
	w.Int16(v.ProducerEpoch)
	w.Int32(v.TransactionTimeoutMs)
	w.Int8(v.TransactionStatus)
	if v.TransactionPartitions == nil {
		w.ArrayLen("transactionPartitions", -1, flexible)
	} else {
		w.ArrayLen("transactionPartitions", len(v.TransactionPartitions), flexible)
		for _, tp := range v.TransactionPartitions {
			w.String("transactionPartitions.topic", tp.Topic, flexible)
			w.Int32Array("transactionPartitions.partitionIds", tp.Partitions, flexible)
			if flexible {
				w.Uvarint(0) // the element's tagged fields: none
			}
		}
	}
	w.Int64(v.TransactionLastUpdateTimestampMs)
	w.Int64(v.TransactionStartTimestampMs)
	if flexible {
		writeTaggedFields(&w, v)
	}
	return w.Finish(dst)
}

func writeTaggedFields(w *writer, v Value) {
	n := uint32(0)
	prev := v.PreviousProducerID != NoProducerID
	next := v.NextProducerID != NoProducerID
	ctv := v.ClientTransactionVersion != 0
	nextEpoch := v.NextProducerEpoch != NoProducerEpoch
	for _, set := range []bool{prev, next, ctv, nextEpoch} {
		if set {
			n++
		}
	}
	w.Uvarint(n)
	if prev {
		w.Uvarint(tagPreviousProducerID)
		w.Uvarint(8)
		w.Int64(v.PreviousProducerID)
	}
	if next {
		w.Uvarint(tagNextProducerID)
		w.Uvarint(8)
		w.Int64(v.NextProducerID)
	}
	if ctv {
		w.Uvarint(tagClientTransactionVersion)
		w.Uvarint(2)
		w.Int16(v.ClientTransactionVersion)
	}
	if nextEpoch {
		w.Uvarint(tagNextProducerEpoch)
		w.Uvarint(2)
		w.Int16(v.NextProducerEpoch)
	}
}

// ParseValue decodes a non-null TransactionLogValue of version 0 or 1.
// Fields a version lacks get their defaults ([NoProducerID],
// [NoProducerEpoch], ClientTransactionVersion 0). In version 1, unknown
// tagged fields (at the top level and in each partitions element) are
// skipped by their size; a known tag of the wrong size fails. Bytes after
// the value are ignored, as Kafka ignores them.
//
// A nil b is a tombstone: ParseValue returns [ErrTombstone], which is not a
// decoding failure. An empty non-nil b is not a tombstone and fails. Other
// errors are [*DecodeError]s matching [ErrCorrupt]; a version outside 0–1
// also matches [ErrUnsupportedVersion].
func ParseValue(b []byte) (Value, error) {
	v, _, _, err := parseValue(b)
	return v, err
}

// parseValue also returns the version and the bytes consumed.
func parseValue(b []byte) (Value, int16, int, error) {
	if b == nil {
		return Value{}, -1, 0, ErrTombstone
	}
	v := Value{
		PreviousProducerID: NoProducerID,
		NextProducerID:     NoProducerID,
		NextProducerEpoch:  NoProducerEpoch,
	}
	r := newReader(b, "TransactionLogValue")
	version := r.Int16("version")
	if r.OK() && (version < 0 || version > ValueMaxVersion) {
		r.FailVersion(version, "0-1")
	}
	if !r.OK() {
		return Value{}, version, 0, r.error()
	}
	r.Ver = int(version)
	flexible := version >= valueFlexible
	v.ProducerID = r.Int64("producerId")
	v.ProducerEpoch = r.Int16("producerEpoch")
	v.TransactionTimeoutMs = r.Int32("transactionTimeoutMs")
	statusAt := r.Pos
	v.TransactionStatus = r.Int8("transactionStatus")
	if r.OK() && (v.TransactionStatus < StatusEmpty || v.TransactionStatus > StatusPrepareEpochFence) {
		r.FailAt(statusAt, "transactionStatus", "status %d is not one Kafka knows (0-7)", v.TransactionStatus)
	}
	// Smallest element: empty topic, empty partitions (and, flexible, no
	// tags): 2+4 bytes, or 1+1+1.
	minElem := 6
	if flexible {
		minElem = 3
	}
	n := r.ArrayLen("transactionPartitions", flexible, true, minElem)
	if r.OK() && n >= 0 {
		v.TransactionPartitions = make([]TopicPartitions, n)
		r.Arr = "transactionPartitions"
		for i := range v.TransactionPartitions {
			r.Idx = i
			tp := &v.TransactionPartitions[i]
			tp.Topic = r.String("topic", flexible)
			tp.Partitions = r.Int32Array("partitionIds", flexible)
			if flexible {
				r.TaggedFields(nil)
			}
			if !r.OK() {
				break
			}
		}
		r.Arr = ""
	}
	v.TransactionLastUpdateTimestampMs = r.Int64("transactionLastUpdateTimestampMs")
	v.TransactionStartTimestampMs = r.Int64("transactionStartTimestampMs")
	if flexible {
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			readTaggedField(&r, &v, tag, at, data)
		})
	}
	if !r.OK() {
		return Value{}, version, 0, r.error()
	}
	return v, version, r.Pos, nil
}

// readTaggedField sets v's field for a known tag; unknown tags are skipped.
func readTaggedField(r *reader, v *Value, tag uint32, at int, data []byte) {
	var name string
	var size int
	switch tag {
	case tagPreviousProducerID:
		name, size = "previousProducerId", 8
	case tagNextProducerID:
		name, size = "nextProducerId", 8
	case tagClientTransactionVersion:
		name, size = "clientTransactionVersion", 2
	case tagNextProducerEpoch:
		name, size = "nextProducerEpoch", 2
	default:
		return
	}
	if len(data) != size {
		r.FailAt(at, name, "tagged field %d has %d bytes, not %d", tag, len(data), size)
		return
	}
	sub := newReader(data, "")
	switch tag {
	case tagPreviousProducerID:
		v.PreviousProducerID = sub.Int64(name)
	case tagNextProducerID:
		v.NextProducerID = sub.Int64(name)
	case tagClientTransactionVersion:
		v.ClientTransactionVersion = sub.Int16(name)
	case tagNextProducerEpoch:
		v.NextProducerEpoch = sub.Int16(name)
	}
}

func invalidVersion(version int16) error {
	return fmt.Errorf("%w: TransactionLogValue version %d (valid: 0-%d)", ErrUnsupportedVersion, version, ValueMaxVersion)
}
