package sharecodec

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// RecordType is the int16 that starts every __share_group_state key: the
// kind of record (Kafka's CoordinatorRecordType of the share coordinator).
// These values are part of the wire format.
type RecordType int16

const (
	// TypeShareSnapshot is a share-partition's whole state (ShareSnapshotKey
	// and ShareSnapshotValue).
	TypeShareSnapshot RecordType = 0
	// TypeShareUpdate is a change to the state of the last snapshot
	// (ShareUpdateKey and ShareUpdateValue).
	TypeShareUpdate RecordType = 1
)

// String returns Kafka's name of t ("ShareSnapshot", "ShareUpdate"), or
// "type N" for another type.
func (t RecordType) String() string {
	switch t {
	case TypeShareSnapshot:
		return "ShareSnapshot"
	case TypeShareUpdate:
		return "ShareUpdate"
	}
	return "type " + strconv.Itoa(int(t))
}

// ValueVersion is the only version of both values (ShareSnapshotValue and
// ShareUpdateValue: validVersions 0, flexible), the one Kafka 4.4 writes
// and the only one it reads.
const ValueVersion = 0

// maxCollection is the largest element count Kafka's generated readers
// accept for an array (they refuse more with "exceeds the maximum allowed
// size of 1000000").
const maxCollection = 1_000_000

// maxTaggedFields is the largest tagged-field count Kafka's generated
// readers accept in one structure.
const maxTaggedFields = 10_000

// tagDeliveryCompleteCount is the tag of both values' tagged field
// deliveryCompleteCount.
const tagDeliveryCompleteCount = 0

// NoDeliveryCompleteCount is the default of DeliveryCompleteCount (-1,
// unknown): Kafka omits the tagged field for it, and a value without the
// field decodes to it.
const NoDeliveryCompleteCount = -1

// The delivery states of a [StateBatch] (Kafka's RecordState ids). Kafka
// persists a batch's in-flight state id as it is; the share coordinator
// does not check it, and neither does this package.
const (
	StateAvailable    int8 = 0 // AVAILABLE: may be acquired by a consumer
	StateAcquired     int8 = 1 // ACQUIRED: delivered to a consumer, under its acquisition lock
	StateAcknowledged int8 = 2 // ACKNOWLEDGED: processed (accepted)
	StateArchiving    int8 = 3 // ARCHIVING: being moved to ARCHIVED
	StateArchived     int8 = 4 // ARCHIVED: rejected or delivered too often; never delivered again
)

// unknownType is the Also of a DecodeError about the record type.
var unknownType = errors.Join(ErrInvalid, ErrUnknownType)

// Key is the key of a __share_group_state record: a share-partition, the
// state of one topic partition for one share group. ShareSnapshotKey and
// ShareUpdateKey have the same fields; keys are never flexible.
type Key struct {
	// Type is the record type, the key's int16 prefix.
	Type RecordType
	// GroupID is the share group's id (groupId).
	GroupID string
	// TopicID is the topic's id (topicId).
	TopicID [16]byte
	// Partition is the partition index (partition).
	Partition int32
}

// AppendKey appends k as a record key:
//
//	type(2) | len(2) groupId | topicId(16) | partition(4)
//
// It fails with [ErrInvalid], appending nothing, when Type is not one of
// the two types or GroupID is longer than 32767 bytes.
func AppendKey(dst []byte, k Key) ([]byte, error) {
	w := newWriter(dst, "Key")
	if k.Type != TypeShareSnapshot && k.Type != TypeShareUpdate {
		w.Fail("type", "record type %d is neither ShareSnapshot (0) nor ShareUpdate (1)", k.Type)
		return w.Finish(dst)
	}
	w.What = k.Type.String() + "Key"
	w.Int16(int16(k.Type))
	w.String("groupId", k.GroupID, false)
	w.B = append(w.B, k.TopicID[:]...)
	w.Int32(k.Partition)
	return w.Finish(dst)
}

// DecodeKey decodes a record key (type prefix included). Bytes after the
// key are ignored, as Kafka ignores them. A type other than 0 and 1 fails
// with a [*DecodeError] matching [ErrUnknownType]; every failure matches
// [ErrInvalid].
func DecodeKey(b []byte) (Key, error) {
	r := newReader(b, "Key")
	k := Key{Type: RecordType(r.Int16("type"))}
	if !r.OK() {
		return Key{}, r.error(ErrInvalid)
	}
	if k.Type != TypeShareSnapshot && k.Type != TypeShareUpdate {
		r.FailAt(0, "type", "record type %d is neither ShareSnapshot (0) nor ShareUpdate (1)", k.Type)
		return Key{}, r.error(unknownType)
	}
	r.Name = k.Type.String() + "Key"
	k.GroupID = r.String("groupId", false)
	k.TopicID = readUUID(&r, "topicId")
	k.Partition = r.Int32("partition")
	if !r.OK() {
		return Key{}, r.error(ErrInvalid)
	}
	return k, nil
}

// StateBatch is the state of a range of offsets of a share-partition.
type StateBatch struct {
	// FirstOffset and LastOffset are the range's first and last offsets,
	// both included.
	FirstOffset, LastOffset int64
	// DeliveryState is the records' state, one of the State constants.
	DeliveryState int8
	// DeliveryCount is how many times the records were delivered.
	DeliveryCount int16
}

// Snapshot is the value of a [TypeShareSnapshot] record
// (ShareSnapshotValue v0): a share-partition's whole state.
type Snapshot struct {
	// SnapshotEpoch counts the snapshots of the share-partition.
	SnapshotEpoch int32
	// StateEpoch is the share-partition's state epoch.
	StateEpoch int32
	// LeaderEpoch is the share-partition's leader epoch.
	LeaderEpoch int32
	// StartOffset is the share-partition start offset.
	StartOffset int64
	// DeliveryCompleteCount is the number of offsets at or after
	// StartOffset whose delivery is complete: tagged field 0, written
	// when not [NoDeliveryCompleteCount] (-1), which a value without the
	// field decodes to. The zero value 0 is written.
	DeliveryCompleteCount int32
	// CreateTimestamp is when the state was created, in milliseconds.
	CreateTimestamp int64
	// WriteTimestamp is when the state was written or rewritten, in
	// milliseconds.
	WriteTimestamp int64
	// StateBatches are the in-flight ranges' states.
	StateBatches []StateBatch
}

// Update is the value of a [TypeShareUpdate] record (ShareUpdateValue v0):
// a change to the share-partition's state since the last snapshot.
type Update struct {
	// SnapshotEpoch is the epoch of the snapshot the update applies to.
	SnapshotEpoch int32
	// LeaderEpoch is the share-partition's leader epoch.
	LeaderEpoch int32
	// StartOffset is the new share-partition start offset, or -1 when the
	// update does not change it.
	StartOffset int64
	// DeliveryCompleteCount is as in [Snapshot]: tagged field 0, written
	// when not [NoDeliveryCompleteCount].
	DeliveryCompleteCount int32
	// StateBatches are the changed ranges' states.
	StateBatches []StateBatch
}

// AppendSnapshot appends v as a record value at version 0, the one Kafka
// 4.4 writes:
//
//	00 00 | snapshotEpoch(4) | stateEpoch(4) | leaderEpoch(4) |
//	startOffset(8) | createTimestamp(8) | writeTimestamp(8) |
//	stateBatches compact array | tagged fields (0: deliveryCompleteCount)
//
// It fails with [ErrInvalid], appending nothing, only for more than
// 2^31-2 state batches.
func AppendSnapshot(dst []byte, v Snapshot) ([]byte, error) {
	w := newWriter(dst, "ShareSnapshotValue")
	w.Int16(ValueVersion)
	w.Int32(v.SnapshotEpoch)
	w.Int32(v.StateEpoch)
	w.Int32(v.LeaderEpoch)
	w.Int64(v.StartOffset)
	w.Int64(v.CreateTimestamp)
	w.Int64(v.WriteTimestamp)
	writeBatches(&w, v.StateBatches)
	writeDeliveryCompleteCount(&w, v.DeliveryCompleteCount)
	return w.Finish(dst)
}

// AppendUpdate appends v as a record value at version 0, the one Kafka
// 4.4 writes:
//
//	00 00 | snapshotEpoch(4) | leaderEpoch(4) | startOffset(8) |
//	stateBatches compact array | tagged fields (0: deliveryCompleteCount)
//
// It fails with [ErrInvalid], appending nothing, only for more than
// 2^31-2 state batches.
func AppendUpdate(dst []byte, v Update) ([]byte, error) {
	w := newWriter(dst, "ShareUpdateValue")
	w.Int16(ValueVersion)
	w.Int32(v.SnapshotEpoch)
	w.Int32(v.LeaderEpoch)
	w.Int64(v.StartOffset)
	writeBatches(&w, v.StateBatches)
	writeDeliveryCompleteCount(&w, v.DeliveryCompleteCount)
	return w.Finish(dst)
}

// writeBatches appends a compact array of state batches, each ending with
// an empty tagged-field section.
func writeBatches(w *writer, a []StateBatch) {
	w.ArrayLen("stateBatches", len(a), true)
	for _, b := range a {
		w.Int64(b.FirstOffset)
		w.Int64(b.LastOffset)
		w.Int8(b.DeliveryState)
		w.Int16(b.DeliveryCount)
		w.NoTaggedFields()
	}
}

// writeDeliveryCompleteCount appends the value's tagged-field section:
// deliveryCompleteCount unless it is its default.
func writeDeliveryCompleteCount(w *writer, n int32) {
	if n == NoDeliveryCompleteCount {
		w.NoTaggedFields()
		return
	}
	w.Uvarint(1)
	w.Uvarint(tagDeliveryCompleteCount)
	w.Uvarint(4)
	w.Int32(n)
}

// DecodeSnapshot decodes the value of a [TypeShareSnapshot] record. A nil
// b is a tombstone and returns [ErrTombstone]. A version other than 0
// fails with a [*DecodeError] matching [ErrUnsupportedVersion]; every
// failure matches [ErrInvalid]. Bytes after the value are ignored, as
// Kafka ignores them.
func DecodeSnapshot(b []byte) (Snapshot, error) {
	if b == nil {
		return Snapshot{}, ErrTombstone
	}
	r := newReader(b, "ShareSnapshotValue")
	if !readVersion(&r) {
		return Snapshot{}, r.error(ErrInvalid)
	}
	v := Snapshot{
		SnapshotEpoch:         r.Int32("snapshotEpoch"),
		StateEpoch:            r.Int32("stateEpoch"),
		LeaderEpoch:           r.Int32("leaderEpoch"),
		StartOffset:           r.Int64("startOffset"),
		DeliveryCompleteCount: NoDeliveryCompleteCount,
		CreateTimestamp:       r.Int64("createTimestamp"),
		WriteTimestamp:        r.Int64("writeTimestamp"),
	}
	v.StateBatches = readBatches(&r)
	readDeliveryCompleteCount(&r, &v.DeliveryCompleteCount)
	if !r.OK() {
		return Snapshot{}, r.error(ErrInvalid)
	}
	return v, nil
}

// DecodeUpdate decodes the value of a [TypeShareUpdate] record, as
// [DecodeSnapshot] does a snapshot.
func DecodeUpdate(b []byte) (Update, error) {
	if b == nil {
		return Update{}, ErrTombstone
	}
	r := newReader(b, "ShareUpdateValue")
	if !readVersion(&r) {
		return Update{}, r.error(ErrInvalid)
	}
	v := Update{
		SnapshotEpoch:         r.Int32("snapshotEpoch"),
		LeaderEpoch:           r.Int32("leaderEpoch"),
		StartOffset:           r.Int64("startOffset"),
		DeliveryCompleteCount: NoDeliveryCompleteCount,
	}
	v.StateBatches = readBatches(&r)
	readDeliveryCompleteCount(&r, &v.DeliveryCompleteCount)
	if !r.OK() {
		return Update{}, r.error(ErrInvalid)
	}
	return v, nil
}

// readVersion reads the value's version prefix, failing unless it is 0.
func readVersion(r *reader) bool {
	version := r.Int16("version")
	if r.OK() && version != ValueVersion {
		r.FailVersion(version, "0")
	}
	if !r.OK() {
		return false
	}
	r.Ver = int(version)
	return true
}

// batchSize is a state batch's size: two offsets, state, count and an
// empty tagged-field section.
const batchSize = 8 + 8 + 1 + 2 + 1

// readBatches reads a compact array of state batches (nil when empty).
func readBatches(r *reader) []StateBatch {
	at := r.Pos
	// A batch takes at least batchSize bytes.
	n := r.ArrayLen("stateBatches", true, false, batchSize)
	if n > maxCollection {
		r.FailAt(at, "stateBatches", "%d state batches over Kafka's limit of %d", n, maxCollection)
	}
	if n <= 0 || !r.OK() {
		return nil
	}
	a := make([]StateBatch, n)
	for i := range a {
		r.Arr, r.Idx = "stateBatches", i
		a[i] = StateBatch{
			FirstOffset:   r.Int64("firstOffset"),
			LastOffset:    r.Int64("lastOffset"),
			DeliveryState: r.Int8("deliveryState"),
			DeliveryCount: r.Int16("deliveryCount"),
		}
		readTaggedFields(r, nil)
	}
	r.Arr = ""
	return a
}

// readDeliveryCompleteCount reads the value's tagged-field section,
// setting *n from tagged field 0 when present.
func readDeliveryCompleteCount(r *reader, n *int32) {
	readTaggedFields(r, func(tag uint32, at int, data []byte) {
		if tag != tagDeliveryCompleteCount {
			return
		}
		if len(data) != 4 {
			r.FailAt(at, "deliveryCompleteCount", "tagged field (an int32) has %d bytes, not 4", len(data))
			return
		}
		*n = int32(binary.BigEndian.Uint32(data))
	})
}

// readTaggedFields reads a tagged-field section, refusing more fields
// than Kafka reads in one structure.
func readTaggedFields(r *reader, fn func(tag uint32, at int, data []byte)) {
	if !r.OK() {
		return
	}
	// Peek at the count to apply Kafka's limit before the shared reader
	// walks the fields.
	if count, n := binary.Uvarint(r.B[r.Pos:]); n > 0 && count > maxTaggedFields {
		r.FailAt(r.Pos, "taggedFields", "%d tagged fields over Kafka's limit of %d", count, maxTaggedFields)
		return
	}
	r.TaggedFields(fn)
}

// readUUID reads a uuid's 16 bytes.
func readUUID(r *reader, field string) (id [16]byte) {
	hi, lo := r.Int64(field), r.Int64(field)
	binary.BigEndian.PutUint64(id[:8], uint64(hi))
	binary.BigEndian.PutUint64(id[8:], uint64(lo))
	return id
}
