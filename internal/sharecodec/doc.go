// Package sharecodec encodes and decodes the records of Kafka's internal
// topic __share_group_state, where Kafka's share coordinator (KIP-932)
// keeps the delivery state of every share-partition — one topic partition
// consumed by one share group — exactly as Apache Kafka 4.4 writes and
// reads them (its ShareCoordinatorRecordSerde). It does no I/O: a share
// coordinator frames the keys and values produced here as ordinary records
// (the record package) and replays what it reads back.
//
// # Who writes what
//
// The share coordinator writes two kinds of record for a share-partition,
// both under the same key fields: a [TypeShareSnapshot] record holds the
// whole state ([Snapshot]), written when the state is initialized or
// rewritten, and a [TypeShareUpdate] record ([Update]) holds what a
// WriteShareGroupState request changed since the last snapshot; the
// share-partition's state is the latest snapshot combined with the updates
// written after it.
// Deleting a share-partition's state writes a tombstone (a null value)
// under its snapshot key. The topic is compacted: snapshot and update
// keys differ by their type prefix, so compaction keeps the last of each.
// The group coordinator's own records of share groups (membership,
// assignment, which share-partitions it initialized) live in
// __consumer_offsets and are groupcodec's.
//
// # Key
//
// Key and value each start with a big-endian int16: for the key the record
// type ([RecordType], Kafka's CoordinatorRecordType: 0 ShareSnapshot, 1
// ShareUpdate), for the value its version. ShareSnapshotKey and
// ShareUpdateKey have the same fields and are never flexible:
//
//	+-------+-----------------+-------------+--------------+
//	| type  | len(2) groupId  | topicId(16) | partition(4) |
//	+-------+-----------------+-------------+--------------+
//
// # Values
//
// Both values have only version 0 (validVersions 0), which is flexible:
// arrays are uvarint(n+1) counts, and every structure ends with tagged
// fields (uvarint count, then per field uvarint tag, uvarint size, data).
// Kafka 4.4 writes version 0 and reads only version 0.
//
//	ShareSnapshotValue v0          ShareUpdateValue v0
//	snapshotEpoch int32            snapshotEpoch int32
//	stateEpoch int32               leaderEpoch int32
//	leaderEpoch int32              startOffset int64
//	startOffset int64              stateBatches []StateBatch
//	createTimestamp int64          tagged 0: deliveryCompleteCount int32
//	writeTimestamp int64
//	stateBatches []StateBatch
//	tagged 0: deliveryCompleteCount int32
//
//	StateBatch: firstOffset int64 | lastOffset int64 | deliveryState int8 |
//	            deliveryCount int16 | tagged fields (none known)
//
// deliveryCompleteCount defaults to -1 ([NoDeliveryCompleteCount]) and is
// written only when it differs. deliveryState is one of Kafka's RecordState
// ids ([StateAvailable] 0, [StateAcquired] 1, [StateAcknowledged] 2,
// [StateArchiving] 3, [StateArchived] 4); Kafka's serde does not check it.
//
// # Errors
//
// Decoders never panic and never trust a length: each count is checked
// against the bytes present before anything is allocated, and against
// Kafka's limits (at most 1,000,000 elements in an array, 10,000 tagged
// fields in a structure). Every decoding failure is a [*DecodeError]
// matching [ErrInvalid] and [ErrCorrupt] (and [ErrUnknownType] or
// [ErrUnsupportedVersion] where they apply); bytes after a key or value
// are ignored, as Kafka ignores them. Encoders fail with [ErrInvalid] only
// for what Kafka's format cannot hold. Nothing in the package holds state;
// every function is safe for concurrent use.
package sharecodec
