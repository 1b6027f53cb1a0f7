package groupcodec

// Sentinels of OffsetCommitValue fields (Kafka's defaults).
const (
	// NoLeaderEpoch is LeaderEpoch when the commit carries none
	// (RecordBatch.NO_PARTITION_LEADER_EPOCH), and what versions 0–2 decode
	// to.
	NoLeaderEpoch = -1
	// NoExpireTimestamp is ExpireTimestamp when the commit carries none
	// (OffsetCommitRequest.DEFAULT_TIMESTAMP), and what every version but 1
	// decodes to.
	NoExpireTimestamp = -1
)

// Versions of OffsetCommitValue. These are part of the wire format.
const (
	// OffsetCommitValueMaxVersion is the highest OffsetCommitValue version
	// Kafka 3.x and 4.x read (OffsetCommitValue.json, validVersions 0-4).
	OffsetCommitValueMaxVersion = 4
	// offsetCommitValueFlexible is the first flexible version.
	offsetCommitValueFlexible = 4
	// offsetCommitValueTagTopicID is the tag of the topicId tagged field.
	offsetCommitValueTagTopicID = 0
)

// OffsetCommitKey is the key of a committed offset: record type 1 (and the
// legacy type 0, same layout). Two commits for the same group, topic and
// partition have the same key bytes, so compaction keeps the last.
type OffsetCommitKey struct {
	// Group is the group id (OffsetCommitKey.group).
	Group string
	// Topic is the topic name (OffsetCommitKey.topic).
	Topic string
	// Partition is the partition index (OffsetCommitKey.partition).
	Partition int32
}

// AppendOffsetCommitKey appends k as a __consumer_offsets record key of type
// 1, the one Kafka writes (the key's int16 prefix is the record type):
//
//	00 01 | len(2) group | len(2) topic | partition(4)
//
// It fails with [ErrInvalid], appending nothing, when a string is longer
// than 32767 bytes.
func AppendOffsetCommitKey(dst []byte, k OffsetCommitKey) ([]byte, error) {
	w := newWriter(dst, "OffsetCommitKey")
	w.Int16(int16(TypeOffsetCommit))
	w.String("group", k.Group, false)
	w.String("topic", k.Topic, false)
	w.Int32(k.Partition)
	return w.Finish(dst)
}

// ParseOffsetCommitKey decodes a record key of type 0 or 1 (the whole key,
// type prefix included). Bytes after the key are ignored, as Kafka ignores
// them. Errors are [*DecodeError]s.
func ParseOffsetCommitKey(b []byte) (OffsetCommitKey, error) {
	r := newReader(b, "OffsetCommitKey")
	t := RecordType(r.Int16("type"))
	if r.OK() && t != TypeLegacyOffsetCommit && t != TypeOffsetCommit {
		r.FailAt(0, "type", "record type %d is not an offset commit (0 or 1)", t)
	}
	k := readOffsetCommitKey(&r)
	return k, r.error()
}

// readOffsetCommitKey reads the key's fields, after the type.
func readOffsetCommitKey(r *reader) OffsetCommitKey {
	var k OffsetCommitKey
	k.Group = r.String("group", false)
	k.Topic = r.String("topic", false)
	k.Partition = r.Int32("partition")
	return k
}

// OffsetCommitValue is the value of a committed offset. A null record value
// instead (a tombstone) deletes the commit: see [ParseValue].
//
// The zero value has LeaderEpoch 0 and ExpireTimestamp 0, which are real
// values (the latter selects version 1): start from [NewOffsetCommitValue].
type OffsetCommitValue struct {
	// Offset is the committed offset (offset).
	Offset int64
	// LeaderEpoch is the leader epoch of the last consumed record
	// (leaderEpoch, version 3+), or [NoLeaderEpoch].
	LeaderEpoch int32
	// Metadata is the client's metadata string (metadata); Kafka stores ""
	// for none. Non-nullable.
	Metadata string
	// CommitTimestamp is when the commit was appended, in milliseconds
	// since the epoch (commitTimestamp).
	CommitTimestamp int64
	// ExpireTimestamp is when the offset expires, in milliseconds since the
	// epoch (expireTimestamp, version 1 only), or [NoExpireTimestamp]. Kafka
	// sets it only when an OffsetCommit request (API versions 2–4) carried a
	// retention time, and then writes version 1.
	ExpireTimestamp int64
	// TopicID is the committed topic's id (topicId, tagged field 0 of
	// version 4+, added in Kafka 4.1 by KAFKA-19141), a Kafka Uuid: the most
	// significant long, then the least significant one, big-endian (the
	// layout of checkpoint.TopicID). All zero (Uuid.ZERO_UUID) means none,
	// and is not written.
	TopicID [16]byte
}

// NewOffsetCommitValue returns a value with no leader epoch, no expire
// timestamp and no topic id, which [AppendOffsetCommitValue] writes as
// version 4.
func NewOffsetCommitValue(offset int64, metadata string, commitTimestamp int64) OffsetCommitValue {
	return OffsetCommitValue{
		Offset:          offset,
		LeaderEpoch:     NoLeaderEpoch,
		Metadata:        metadata,
		CommitTimestamp: commitTimestamp,
		ExpireTimestamp: NoExpireTimestamp,
	}
}

// OffsetCommitValueVersion returns the version Kafka 4.1 and later write for
// v, and so [AppendOffsetCommitValue]: 1 when v has an expire timestamp
// (ExpireTimestamp is not [NoExpireTimestamp]), since only version 1 stores
// one, and 4 otherwise.
//
// Kafka's rule is GroupCoordinatorRecordHelpers.offsetCommitValueVersion.
// Kafka 4.0 (and 3.x in KRaft mode) wrote 3 where 4.1 writes 4; version 4
// is version 3 in the flexible encoding plus the topicId tagged field, and
// every 3.x and 4.x broker reads it. Use [AppendOffsetCommitValueVersion]
// with 3 to write what Kafka 4.0 writes.
//
// Basis: the 4.0 source (1 with an expire timestamp, else 3, "until a
// tagged field is introduced"); KAFKA-19141 (apache/kafka#19683, Kafka
// 4.1), which introduced the topicId tagged field; and bytes a 4.1.0 broker
// wrote, version 4 with no tag (testdata/golden/
// offset-commit-value-v4-kafka-4.1.hex), which this package reproduces. The
// expire-timestamp branch is carried over from 4.0: only version 1 can hold
// the field.
func OffsetCommitValueVersion(v OffsetCommitValue) int16 {
	if v.ExpireTimestamp != NoExpireTimestamp {
		return 1
	}
	return 4
}

// AppendOffsetCommitValue appends v at [OffsetCommitValueVersion](v), the
// version Kafka 4.1+ writes. Version 4 (all integers big-endian):
//
//	00 04 | offset(8) | leaderEpoch(4) | uvarint(len+1) metadata |
//	commitTimestamp(8) | tagged fields: 00, or 01 00 10 topicId(16)
//
// and version 1:
//
//	00 01 | offset(8) | len(2) metadata | commitTimestamp(8) | expireTimestamp(8)
//
// It fails with [ErrInvalid], appending nothing, when Metadata is longer
// than 32767 bytes.
func AppendOffsetCommitValue(dst []byte, v OffsetCommitValue) ([]byte, error) {
	return AppendOffsetCommitValueVersion(dst, v, OffsetCommitValueVersion(v))
}

// AppendOffsetCommitValueVersion appends v at the given version, 0 to 4.
// Fields the version lacks are dropped silently, as Kafka drops ignorable
// fields: LeaderEpoch below 3, ExpireTimestamp outside 1, TopicID below 4.
// It fails with [ErrUnsupportedVersion] for another version and with
// [ErrInvalid] when Metadata is longer than 32767 bytes, appending nothing.
func AppendOffsetCommitValueVersion(dst []byte, v OffsetCommitValue, version int16) ([]byte, error) {
	if version < 0 || version > OffsetCommitValueMaxVersion {
		return dst, unsupportedf("OffsetCommitValue version %d (valid: 0-%d)", version, OffsetCommitValueMaxVersion)
	}
	flexible := version >= offsetCommitValueFlexible
	w := newWriter(dst, "OffsetCommitValue")
	w.Int16(version)
	w.Int64(v.Offset)
	if version >= 3 {
		w.Int32(v.LeaderEpoch)
	}
	w.String("metadata", v.Metadata, flexible)
	w.Int64(v.CommitTimestamp)
	if version == 1 {
		w.Int64(v.ExpireTimestamp)
	}
	if flexible {
		if v.TopicID == ([16]byte{}) {
			w.NoTaggedFields()
		} else {
			w.Uvarint(1)
			w.Uvarint(offsetCommitValueTagTopicID)
			w.Uvarint(16)
			w.B = append(w.B, v.TopicID[:]...)
		}
	}
	return w.Finish(dst)
}

// ParseOffsetCommitValue decodes a non-null OffsetCommitValue of any version
// Kafka reads, 0 to 4. Fields the version lacks get their defaults
// ([NoLeaderEpoch], [NoExpireTimestamp], a zero TopicID). In version 4,
// unknown tagged fields are skipped by their size; a topicId whose size is
// not 16 fails. Bytes after the value are ignored, as Kafka ignores them.
// Errors are [*DecodeError]s; a version above 4 also matches
// [ErrUnsupportedVersion].
func ParseOffsetCommitValue(b []byte) (OffsetCommitValue, error) {
	v, _, _, err := parseOffsetCommitValue(b)
	return v, err
}

// parseOffsetCommitValue also returns the version and the bytes consumed.
func parseOffsetCommitValue(b []byte) (OffsetCommitValue, int16, int, error) {
	v := OffsetCommitValue{LeaderEpoch: NoLeaderEpoch, ExpireTimestamp: NoExpireTimestamp}
	r := newReader(b, "OffsetCommitValue")
	version := r.Int16("version")
	if r.OK() && (version < 0 || version > OffsetCommitValueMaxVersion) {
		r.FailVersion(version, "0-4")
	}
	if !r.OK() {
		return OffsetCommitValue{}, version, 0, r.error()
	}
	r.Ver = int(version)
	flexible := version >= offsetCommitValueFlexible
	v.Offset = r.Int64("offset")
	if version >= 3 {
		v.LeaderEpoch = r.Int32("leaderEpoch")
	}
	v.Metadata = r.String("metadata", flexible)
	v.CommitTimestamp = r.Int64("commitTimestamp")
	if version == 1 {
		v.ExpireTimestamp = r.Int64("expireTimestamp")
	}
	if flexible {
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			if tag != offsetCommitValueTagTopicID {
				return
			}
			if len(data) != 16 {
				r.FailAt(at, "topicId", "tagged field 0 (topicId, a uuid) has %d bytes, not 16", len(data))
				return
			}
			copy(v.TopicID[:], data)
		})
	}
	if !r.OK() {
		return OffsetCommitValue{}, version, 0, r.error()
	}
	return v, version, r.Pos, nil
}
