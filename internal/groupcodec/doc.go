// Package groupcodec encodes and decodes the records of consumer-group state
// in Kafka's internal topic __consumer_offsets — committed offsets, classic
// group metadata and the records of consumer groups of the KIP-848
// protocol and of share groups (KIP-932) — and the classic consumer protocol bytes stored inside the
// classic group's, exactly as Kafka 4.x writes and reads them (Kafka's
// schemas and classes named under "Versions written" below). It does no
// I/O: a coordinator frames the keys and values produced here as ordinary
// records (the record package), sends each group to its partition
// ([PartitionFor]) and replays what it reads back.
//
// # Topic and partitioning
//
// A group's records all live in partition
// abs(javaStringHashCode(groupId)) % offsets.topic.num.partitions (50 by
// default, [DefaultOffsetsTopicPartitions]); see [PartitionFor]. The topic
// is compacted, keyed by the full key bytes, so the latest record for a key
// wins and a record with a null value (a tombstone) deletes the key.
//
// # Record framing
//
// Key and value each start with a big-endian int16. For the key it is the
// record type ([RecordType]: 0 and 1 committed offset, 2 classic group
// metadata, 3–8 and 16 KIP-848 consumer groups ([ConsumerGroupKey]), 10–15
// share groups ([ShareGroupKey]), others streams groups); for the
// value, its version within that type. Then the struct follows at that
// version:
//
//	key:   type int16 | key fields (never flexible)
//	value: version int16 | value fields, or a null value = tombstone
//
// Non-flexible versions write strings as int16 length + UTF-8 bytes (-1 =
// null), bytes and arrays with an int32 length or count (-1 = null).
// Flexible versions (OffsetCommitValue and GroupMetadataValue 4+, every
// consumer and share group value) write
// uvarint(n+1) instead (0 = null) and end every struct — the value and each
// array element — with tagged fields: uvarint count, then per field uvarint
// tag, uvarint size, data; readers skip tags they do not know by size.
// Fixed-width integers are big-endian in both.
//
// # Versions written, and why
//
//	record                        writes                 reads          Kafka's rule
//	OffsetCommitKey               type 1                 types 0, 1     OffsetCommitKey.json (apiKey 1)
//	OffsetCommitValue             4; 1 if it expires     0–4            GroupCoordinatorRecordHelpers.offsetCommitValueVersion
//	GroupMetadataKey              type 2                 type 2         GroupMetadataKey.json (apiKey 2)
//	GroupMetadataValue            3                      0–4            GroupCoordinatorRecordHelpers.GROUP_METADATA_VALUE_VERSION
//	ConsumerProtocolSubscription  3                      0–3; >3 as 3   ConsumerProtocol.serializeSubscription (HIGHEST_SUPPORTED_VERSION)
//	ConsumerProtocolAssignment    3                      0–3; >3 as 3   ConsumerProtocol.serializeAssignment (HIGHEST_SUPPORTED_VERSION)
//	StickyAssignor user data      1                      1, else 0      StickyAssignor.serializeTopicPartitionAssignment
//	ConsumerGroup*Key             types 3–8, 16          3–8, 16        ConsumerGroup*Key.json (apiKey 3–8, 16)
//	ConsumerGroup*Value           0                      0              ConsumerGroup*Value.json (validVersions 0, flexible)
//	ShareGroup*Key                types 10–15            10–15          ShareGroup*Key.json (apiKey 10–15)
//	ShareGroup*Value              0                      0              ShareGroup*Value.json (validVersions 0, flexible)
//
// Kafka 4.0 (and every 3.x KRaft broker) writes OffsetCommitValue version 3;
// Kafka 4.1 (KAFKA-19141) added the topicId tagged field and writes version
// 4, the first flexible one. Every 3.x and 4.x broker reads both.
// [AppendOffsetCommitValueVersion] writes any version, 3 included.
//
// # Layouts
//
// OffsetCommitKey (type 1; type 0 has the same fields):
//
//	+-------+-----------------+-----------------+--------------+
//	| 00 01 | len(2) group    | len(2) topic    | partition(4) |
//	+-------+-----------------+-----------------+--------------+
//
// OffsetCommitValue ("—" = absent from that version):
//
//	version  offset  leaderEpoch  metadata            commitTimestamp  expireTimestamp  tagged fields
//	0        int64   —            string              int64            —                —
//	1        int64   —            string              int64            int64            —
//	2        int64   —            string              int64            —                —
//	3        int64   int32        string              int64            —                —
//	4        int64   int32        compact string      int64            —                tag 0 topicId (uuid)
//
// GroupMetadataKey (type 2):
//
//	+-------+-----------------+
//	| 00 02 | len(2) group    |
//	+-------+-----------------+
//
// GroupMetadataValue (v4 uses the compact forms and adds tagged fields
// after each member and at the end):
//
//	version | protocolType string | generation int32 | protocol string? |
//	leader string? | currentStateTimestamp int64 (v2+) | members count |
//	  per member: memberId string | groupInstanceId string? (v3+) |
//	  clientId string | clientHost string | rebalanceTimeout int32 (v1+) |
//	  sessionTimeout int32 | subscription bytes | assignment bytes
//
// ConsumerProtocolSubscription and ConsumerProtocolAssignment (the
// [MemberMetadata] Subscription and Assignment bytes of a group whose
// protocol type is "consumer"; never flexible):
//
//	subscription: version | topics [string] | userData bytes? |
//	              ownedPartitions [topic string, partitions [int32]] (v1+) |
//	              generationId int32 (v2+) | rackId string? (v3+)
//	assignment:   version | assignedPartitions [topic string, partitions [int32]] |
//	              userData bytes?
//
// The sticky and cooperative-sticky assignors' user data, without a
// version prefix, is described at [StickyUserData] and
// [AppendCooperativeStickyUserData].
//
// # Tombstones
//
// A record whose value is null deletes its key: an offset commit tombstone
// removes the committed offset (offset deletion, expiry), a group metadata
// tombstone removes the group. The record package gives a null value as a
// nil slice; [ParseValue] reports Tombstone for a nil value. An empty
// non-nil value is not a tombstone and does not decode.
//
// # Errors
//
// Decoders never panic and never trust a length: each length and array
// count is checked against the bytes present before anything is allocated.
// Every decoding failure is a [*DecodeError] matching [ErrCorrupt] (and
// [ErrUnsupportedVersion] for a version Kafka does not read). Encoders fail
// with [ErrInvalid] only for values Kafka's format cannot hold: a string
// over 32767 bytes, bytes or an array over 2^31-1.
//
// Nothing in the package holds state; every function is safe for
// concurrent use.
package groupcodec
