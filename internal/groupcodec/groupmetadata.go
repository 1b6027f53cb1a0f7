package groupcodec

// Versions of GroupMetadataValue. These are part of the wire format.
const (
	// GroupMetadataValueMaxVersion is the highest GroupMetadataValue
	// version Kafka 3.x and 4.x read (GroupMetadataValue.json, validVersions
	// 0-4).
	GroupMetadataValueMaxVersion = 4
	// GroupMetadataValueVersion is the version Kafka 3.x and 4.x write, and
	// so [AppendGroupMetadataValue] (GroupCoordinatorRecordHelpers,
	// GROUP_METADATA_VALUE_VERSION = 3). Version 4 only changes the
	// encoding to the flexible one; no tagged field is defined.
	GroupMetadataValueVersion = 3
	// groupMetadataValueFlexible is the first flexible version.
	groupMetadataValueFlexible = 4
)

// NoCurrentStateTimestamp is GroupMetadataValue.CurrentStateTimestamp when
// the time of the group's last state change is unknown, and what versions 0
// and 1 decode to.
const NoCurrentStateTimestamp = -1

// ProtocolTypeConsumer is GroupMetadataValue.ProtocolType for groups of
// consumers that use the classic protocol (ConsumerProtocol.PROTOCOL_TYPE);
// their members' Subscription and Assignment are a [Subscription] and an
// [Assignment]. Kafka Connect uses "connect".
const ProtocolTypeConsumer = "consumer"

// GroupMetadataKey is the key of a classic group's metadata, record type 2.
type GroupMetadataKey struct {
	// Group is the group id (GroupMetadataKey.group).
	Group string
}

// AppendGroupMetadataKey appends k as a __consumer_offsets record key of
// type 2:
//
//	00 02 | len(2) group
//
// It fails with [ErrInvalid], appending nothing, when Group is longer than
// 32767 bytes.
func AppendGroupMetadataKey(dst []byte, k GroupMetadataKey) ([]byte, error) {
	w := newWriter(dst, "GroupMetadataKey")
	w.Int16(int16(TypeGroupMetadata))
	w.String("group", k.Group, false)
	return w.Finish(dst)
}

// ParseGroupMetadataKey decodes a record key of type 2 (the whole key, type
// prefix included). Bytes after the key are ignored, as Kafka ignores them.
// Errors are [*DecodeError]s.
func ParseGroupMetadataKey(b []byte) (GroupMetadataKey, error) {
	r := newReader(b, "GroupMetadataKey")
	t := RecordType(r.Int16("type"))
	if r.OK() && t != TypeGroupMetadata {
		r.FailAt(0, "type", "record type %d is not group metadata (2)", t)
	}
	k := GroupMetadataKey{Group: r.String("group", false)}
	return k, r.error()
}

// GroupMetadataValue is the state of a classic group (one that uses the
// JoinGroup/SyncGroup protocol) as its coordinator persists it after each
// rebalance. A null record value instead (a tombstone) deletes the group:
// see [ParseValue].
//
// Kafka first writes a new group "empty": ProtocolType "", Generation 0,
// Protocol and Leader nil, no members.
type GroupMetadataValue struct {
	// ProtocolType is the protocol type the members joined with
	// (protocolType), [ProtocolTypeConsumer] for consumers; "" for an empty
	// group. Non-nullable.
	ProtocolType string
	// Generation is the group's generation id (generation), incremented
	// when a rebalance's join phase ends.
	Generation int32
	// Protocol is the protocol the group chose (protocol), for consumers
	// the assignor's name ("range", "cooperative-sticky", ...); nil for
	// none.
	Protocol *string
	// Leader is the leader's member id (leader); nil for none.
	Leader *string
	// CurrentStateTimestamp is when the group last changed state, in
	// milliseconds since the epoch (currentStateTimestamp, version 2+), or
	// [NoCurrentStateTimestamp].
	CurrentStateTimestamp int64
	// Members are the group's members (members), nil when there are none.
	Members []MemberMetadata
}

// MemberMetadata is one member of a classic group
// (GroupMetadataValue.MemberMetadata).
type MemberMetadata struct {
	// MemberID is the member id the coordinator assigned (memberId).
	MemberID string
	// GroupInstanceID is the static member id, group.instance.id
	// (groupInstanceId, version 3+); nil for a dynamic member.
	GroupInstanceID *string
	// ClientID is the member's client.id (clientId).
	ClientID string
	// ClientHost is the member's address as the broker saw it, such as
	// "/10.0.0.7" (clientHost).
	ClientHost string
	// RebalanceTimeout is the member's rebalance timeout in milliseconds
	// (rebalanceTimeout, version 1+). Version 0 decodes to 0, the schema's
	// default; Kafka's older coordinator used SessionTimeout in its place.
	RebalanceTimeout int32
	// SessionTimeout is the member's session timeout in milliseconds
	// (sessionTimeout).
	SessionTimeout int32
	// Subscription is the member's metadata for the chosen protocol, as
	// sent in JoinGroup (subscription); for consumers, a [Subscription].
	// Non-nullable: nil is written as empty.
	Subscription []byte
	// Assignment is what the leader assigned the member, as sent in
	// SyncGroup (assignment); for consumers, an [Assignment]. Non-nullable:
	// nil is written as empty.
	Assignment []byte
}

// AppendGroupMetadataValue appends v at [GroupMetadataValueVersion] (3), the
// version Kafka 3.x and 4.x write (integers big-endian, len(2)/ff ff = a
// nullable string):
//
//	00 03 | len(2) protocolType | generation(4) | len(2)/ff ff protocol |
//	len(2)/ff ff leader | currentStateTimestamp(8) | memberCount(4) |
//	per member: len(2) memberId | len(2)/ff ff groupInstanceId |
//	len(2) clientId | len(2) clientHost | rebalanceTimeout(4) |
//	sessionTimeout(4) | len(4) subscription | len(4) assignment
//
// It fails with [ErrInvalid], appending nothing, when a string is longer
// than 32767 bytes.
func AppendGroupMetadataValue(dst []byte, v GroupMetadataValue) ([]byte, error) {
	return AppendGroupMetadataValueVersion(dst, v, GroupMetadataValueVersion)
}

// AppendGroupMetadataValueVersion appends v at the given version, 0 to 4.
// Fields the version lacks are dropped silently, as Kafka drops ignorable
// fields: CurrentStateTimestamp below 2, RebalanceTimeout below 1,
// GroupInstanceID below 3. It fails with [ErrUnsupportedVersion] for
// another version and with [ErrInvalid] for a string longer than 32767
// bytes, appending nothing.
func AppendGroupMetadataValueVersion(dst []byte, v GroupMetadataValue, version int16) ([]byte, error) {
	if version < 0 || version > GroupMetadataValueMaxVersion {
		return dst, unsupportedf("GroupMetadataValue version %d (valid: 0-%d)", version, GroupMetadataValueMaxVersion)
	}
	flexible := version >= groupMetadataValueFlexible
	w := newWriter(dst, "GroupMetadataValue")
	w.Int16(version)
	w.String("protocolType", v.ProtocolType, flexible)
	w.Int32(v.Generation)
	w.NullableString("protocol", v.Protocol, flexible)
	w.NullableString("leader", v.Leader, flexible)
	if version >= 2 {
		w.Int64(v.CurrentStateTimestamp)
	}
	w.ArrayLen("members", len(v.Members), flexible)
	w.Arr = "members"
	for i := range v.Members {
		m := &v.Members[i]
		w.Idx = i
		w.String("memberId", m.MemberID, flexible)
		if version >= 3 {
			w.NullableString("groupInstanceId", m.GroupInstanceID, flexible)
		}
		w.String("clientId", m.ClientID, flexible)
		w.String("clientHost", m.ClientHost, flexible)
		if version >= 1 {
			w.Int32(m.RebalanceTimeout)
		}
		w.Int32(m.SessionTimeout)
		w.Bytes("subscription", m.Subscription, flexible, false)
		w.Bytes("assignment", m.Assignment, flexible, false)
		if flexible {
			w.NoTaggedFields()
		}
	}
	w.Arr = ""
	if flexible {
		w.NoTaggedFields()
	}
	return w.Finish(dst)
}

// ParseGroupMetadataValue decodes a non-null GroupMetadataValue of any
// version Kafka reads, 0 to 4. Fields the version lacks get their defaults
// ([NoCurrentStateTimestamp], a nil GroupInstanceID, RebalanceTimeout 0). In
// version 4, tagged fields (none is defined) are skipped by their size.
// Bytes after the value are ignored, as Kafka ignores them. Subscription and
// Assignment are copies, not views of b. Errors are [*DecodeError]s; a
// version above 4 also matches [ErrUnsupportedVersion].
func ParseGroupMetadataValue(b []byte) (GroupMetadataValue, error) {
	v, _, _, err := parseGroupMetadataValue(b)
	return v, err
}

// minMemberBytes returns the smallest encoding of a member at version.
func minMemberBytes(version int16) int {
	switch {
	case version >= groupMetadataValueFlexible:
		// Six one-byte lengths, two int32s, the tagged-field count.
		return 6 + 8 + 1
	case version == 3:
		return 2 + 2 + 2 + 2 + 4 + 4 + 4 + 4
	case version >= 1:
		return 2 + 2 + 2 + 4 + 4 + 4 + 4
	default:
		return 2 + 2 + 2 + 4 + 4 + 4
	}
}

// parseGroupMetadataValue also returns the version and the bytes consumed.
func parseGroupMetadataValue(b []byte) (GroupMetadataValue, int16, int, error) {
	v := GroupMetadataValue{CurrentStateTimestamp: NoCurrentStateTimestamp}
	r := newReader(b, "GroupMetadataValue")
	version := r.Int16("version")
	if r.OK() && (version < 0 || version > GroupMetadataValueMaxVersion) {
		r.FailVersion(version, "0-4")
	}
	if !r.OK() {
		return GroupMetadataValue{}, version, 0, r.error()
	}
	r.Ver = int(version)
	flexible := version >= groupMetadataValueFlexible
	v.ProtocolType = r.String("protocolType", flexible)
	v.Generation = r.Int32("generation")
	v.Protocol = r.NullableString("protocol", flexible)
	v.Leader = r.NullableString("leader", flexible)
	if version >= 2 {
		v.CurrentStateTimestamp = r.Int64("currentStateTimestamp")
	}
	if n := r.ArrayLen("members", flexible, false, minMemberBytes(version)); n > 0 {
		v.Members = make([]MemberMetadata, n)
		r.Arr = "members"
		for i := range v.Members {
			r.Idx = i
			m := &v.Members[i]
			m.MemberID = r.String("memberId", flexible)
			if version >= 3 {
				m.GroupInstanceID = r.NullableString("groupInstanceId", flexible)
			}
			m.ClientID = r.String("clientId", flexible)
			m.ClientHost = r.String("clientHost", flexible)
			if version >= 1 {
				m.RebalanceTimeout = r.Int32("rebalanceTimeout")
			}
			m.SessionTimeout = r.Int32("sessionTimeout")
			m.Subscription = r.Bytes("subscription", flexible, false)
			m.Assignment = r.Bytes("assignment", flexible, false)
			if flexible {
				r.TaggedFields(nil)
			}
			if !r.OK() {
				break
			}
		}
		r.Arr = ""
	}
	if flexible {
		r.TaggedFields(nil)
	}
	if !r.OK() {
		return GroupMetadataValue{}, version, 0, r.error()
	}
	return v, version, r.Pos, nil
}
