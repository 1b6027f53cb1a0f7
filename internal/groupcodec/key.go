package groupcodec

import (
	"encoding/binary"
	"strconv"
)

// RecordType is the int16 that starts every __consumer_offsets key: the
// kind of record (Kafka's CoordinatorRecordType, the key's apiKey; before
// Kafka 4.0 it was called the key version). The value's own int16 prefix is
// its version within that type.
type RecordType int16

// The record types of committed offsets and classic groups. These are part
// of the wire format. Those of consumer groups of the KIP-848 protocol, 3–8
// and 16, are with [ConsumerGroupKey]; those of share groups, 10–15, with
// [ShareGroupKey].
//
// Kafka's other group coordinator records are types 17 and up (streams
// groups, Kafka 4.1+). [ParseKey] and [ParseValue] report their type
// without decoding them; Kafka skips types it does not know when it loads
// the partition.
const (
	// TypeLegacyOffsetCommit is a committed offset written by Kafka 0.8.2
	// (LegacyOffsetCommitKey). Its key has the layout of type 1.
	TypeLegacyOffsetCommit RecordType = 0
	// TypeOffsetCommit is a committed offset (OffsetCommitKey): the type
	// Kafka writes.
	TypeOffsetCommit RecordType = 1
	// TypeGroupMetadata is a classic group's metadata (GroupMetadataKey).
	TypeGroupMetadata RecordType = 2
)

// String returns Kafka's name of t, or "type N" for the types this package
// does not decode.
func (t RecordType) String() string {
	switch t {
	case TypeLegacyOffsetCommit:
		return "LegacyOffsetCommit"
	case TypeOffsetCommit:
		return "OffsetCommit"
	case TypeGroupMetadata:
		return "GroupMetadata"
	}
	if name, ok := consumerGroupTypes[t]; ok {
		return name
	}
	if name, ok := shareGroupTypes[t]; ok {
		return name
	}
	return "type " + strconv.Itoa(int(t))
}

// Decoded reports whether this package decodes keys and values of type t:
// 0, 1 and 2, the consumer group types 3–8 and 16 and the share group
// types 10–15.
func (t RecordType) Decoded() bool {
	_, consumerGroup := consumerGroupTypes[t]
	_, shareGroup := shareGroupTypes[t]
	return t == TypeLegacyOffsetCommit || t == TypeOffsetCommit || t == TypeGroupMetadata || consumerGroup || shareGroup
}

// Key is a decoded __consumer_offsets record key.
type Key struct {
	// Type is the record type, the key's int16 prefix.
	Type RecordType
	// OffsetCommit is the key when Type is 0 or 1.
	OffsetCommit OffsetCommitKey
	// GroupMetadata is the key when Type is 2.
	GroupMetadata GroupMetadataKey
	// ConsumerGroup is the key when Type is a consumer group type.
	ConsumerGroup ConsumerGroupKey
	// ShareGroup is the key when Type is a share group type.
	ShareGroup ShareGroupKey
	// Body is the key after the type prefix when Type is one this package
	// does not decode, aliasing the input; nil otherwise.
	Body []byte
}

// ParseKey decodes a __consumer_offsets record key. Types 0, 1 and 2, the
// consumer group types and the share group types are decoded; any other type is reported in Key.Type, with the rest of the key
// in Key.Body, and is not an error (Kafka skips such records when loading).
// A key shorter than its type prefix, or a malformed key of a decoded type, fails
// with a [*DecodeError]. Bytes after a decoded key are ignored, as Kafka
// ignores them.
func ParseKey(b []byte) (Key, error) {
	r := newReader(b, "key")
	k := Key{Type: RecordType(r.Int16("type"))}
	if !r.OK() {
		return Key{}, r.error()
	}
	switch k.Type {
	case TypeLegacyOffsetCommit, TypeOffsetCommit:
		r.Name = "OffsetCommitKey"
		k.OffsetCommit = readOffsetCommitKey(&r)
	case TypeGroupMetadata:
		r.Name = "GroupMetadataKey"
		k.GroupMetadata = GroupMetadataKey{Group: r.String("group", false)}
	default:
		if name, ok := consumerGroupTypes[k.Type]; ok {
			r.Name = name + "Key"
			k.ConsumerGroup = readConsumerGroupKey(&r, k.Type)
			break
		}
		if name, ok := shareGroupTypes[k.Type]; ok {
			r.Name = name + "Key"
			k.ShareGroup = readShareGroupKey(&r, k.Type)
			break
		}
		k.Body = b[2:]
	}
	if !r.OK() {
		return Key{}, r.error()
	}
	return k, nil
}

// Value is a decoded __consumer_offsets record value.
type Value struct {
	// Type is the record type, from the record's key.
	Type RecordType
	// Tombstone is true when the record's value is null: the record deletes
	// what its key names (a committed offset, a group).
	Tombstone bool
	// Version is the value's version prefix; -1 for a tombstone, and for a
	// value of an undecoded type shorter than two bytes.
	Version int16
	// OffsetCommit is the value when Type is 0 or 1.
	OffsetCommit OffsetCommitValue
	// GroupMetadata is the value when Type is 2.
	GroupMetadata GroupMetadataValue
	// ConsumerGroup is the value when Type is a consumer group type: a
	// ConsumerGroupMetadataValue, ConsumerGroupPartitionMetadataValue,
	// ConsumerGroupMemberMetadataValue,
	// ConsumerGroupTargetAssignmentMetadataValue,
	// ConsumerGroupTargetAssignmentMemberValue,
	// ConsumerGroupCurrentMemberAssignmentValue or
	// ConsumerGroupRegularExpressionValue; nil for a tombstone.
	ConsumerGroup any
	// ShareGroup is the value when Type is a share group type: a
	// ShareGroupMemberMetadataValue, ShareGroupMetadataValue,
	// ShareGroupTargetAssignmentMetadataValue,
	// ShareGroupTargetAssignmentMemberValue,
	// ShareGroupCurrentMemberAssignmentValue or
	// ShareGroupStatePartitionMetadataValue; nil for a tombstone.
	ShareGroup any
	// Body is the whole value, version prefix included, when Type is one
	// this package does not decode, aliasing the input; nil otherwise.
	Body []byte
}

// ParseValue decodes the value of a __consumer_offsets record whose key has
// type t (from [ParseKey]).
//
// A nil b is a null value, a tombstone: ParseValue returns Tombstone true
// and no error. The record package returns a nil Record.Value exactly for a
// null value (length -1); an empty but non-nil value (length 0) is not a
// tombstone, and fails here as Kafka fails on it.
//
// Types 0 and 1 decode as [OffsetCommitValue] (versions 0–4; Kafka 4.x reads
// a type 0 value as LegacyOffsetCommitValue, which has the layout of
// version 0), type 2 as [GroupMetadataValue] (versions 0–4), the consumer
// group types as [ParseConsumerGroupValue] does and the share group types
// as [ParseShareGroupValue] does (version 0). Other types
// are not decoded and never fail: Body holds the value. Errors are
// [*DecodeError]s.
func ParseValue(t RecordType, b []byte) (Value, error) {
	v := Value{Type: t, Version: -1}
	if b == nil {
		v.Tombstone = true
		return v, nil
	}
	var err error
	switch t {
	case TypeLegacyOffsetCommit, TypeOffsetCommit:
		v.OffsetCommit, v.Version, _, err = parseOffsetCommitValue(b)
	case TypeGroupMetadata:
		v.GroupMetadata, v.Version, _, err = parseGroupMetadataValue(b)
	default:
		if _, ok := consumerGroupTypes[t]; ok {
			v.ConsumerGroup, v.Version, err = parseConsumerGroupValue(t, b)
			break
		}
		if _, ok := shareGroupTypes[t]; ok {
			v.ShareGroup, v.Version, err = parseShareGroupValue(t, b)
			break
		}
		if len(b) >= 2 {
			v.Version = int16(binary.BigEndian.Uint16(b))
		}
		v.Body = b
		return v, nil
	}
	if err != nil {
		return Value{}, err
	}
	return v, nil
}
