package groupcodec

import "encoding/binary"

// The record types of consumer groups of the KIP-848 protocol (Kafka's
// CoordinatorRecordType). These are part of the wire format.
//
// Kafka 4.4 writes a group's state as these records: its epoch (3), one
// member's subscription (5), the target assignment's epoch (6) and one
// member's part of it (7), one member's current assignment and epoch (8)
// and the topics a subscribed regular expression matched (16). Type 4, the
// subscribed topics' metadata, was written before Kafka 4.1 (KIP-1101
// replaced it by the metadata hash of type 3); Kafka 4.1+ reads it and
// writes only its tombstone.
const (
	TypeConsumerGroupMetadata                 RecordType = 3
	TypeConsumerGroupPartitionMetadata        RecordType = 4
	TypeConsumerGroupMemberMetadata           RecordType = 5
	TypeConsumerGroupTargetAssignmentMetadata RecordType = 6
	TypeConsumerGroupTargetAssignmentMember   RecordType = 7
	TypeConsumerGroupCurrentMemberAssignment  RecordType = 8
	TypeConsumerGroupRegularExpression        RecordType = 16
)

// consumerGroupTypes are Kafka's names of the types above.
var consumerGroupTypes = map[RecordType]string{
	TypeConsumerGroupMetadata:                 "ConsumerGroupMetadata",
	TypeConsumerGroupPartitionMetadata:        "ConsumerGroupPartitionMetadata",
	TypeConsumerGroupMemberMetadata:           "ConsumerGroupMemberMetadata",
	TypeConsumerGroupTargetAssignmentMetadata: "ConsumerGroupTargetAssignmentMetadata",
	TypeConsumerGroupTargetAssignmentMember:   "ConsumerGroupTargetAssignmentMember",
	TypeConsumerGroupCurrentMemberAssignment:  "ConsumerGroupCurrentMemberAssignment",
	TypeConsumerGroupRegularExpression:        "ConsumerGroupRegularExpression",
}

// keyFields says what a consumer group key of type t holds after the group
// id: a member id (types 5, 7 and 8), a regular expression (16) or nothing.
func keyFields(t RecordType) (member, regex bool) {
	switch t {
	case TypeConsumerGroupMemberMetadata, TypeConsumerGroupTargetAssignmentMember, TypeConsumerGroupCurrentMemberAssignment:
		return true, false
	case TypeConsumerGroupRegularExpression:
		return false, true
	}
	return false, false
}

// ConsumerGroupKey is the key of a consumer group record, types 3 to 8 and
// 16. Every key holds the group id; those of types 5, 7 and 8 a member id
// too, and that of type 16 a regular expression. Keys are not flexible:
// their strings have int16 lengths.
type ConsumerGroupKey struct {
	// Type is the record type, one of the consumer group types.
	Type RecordType
	// Group is the group id (groupId).
	Group string
	// Member is the member id (memberId) of types 5, 7 and 8; empty
	// otherwise.
	Member string
	// RegularExpression is the subscribed expression (regularExpression)
	// of type 16; empty otherwise.
	RegularExpression string
}

// AppendConsumerGroupKey appends k as a __consumer_offsets record key:
//
//	00 TT | len(2) group [| len(2) member or regularExpression]
//
// It fails with [ErrInvalid], appending nothing, when Type is not a
// consumer group type, when Member or RegularExpression is set where the
// type has no such field, or when a string is longer than 32767 bytes.
func AppendConsumerGroupKey(dst []byte, k ConsumerGroupKey) ([]byte, error) {
	w := newWriter(dst, "ConsumerGroupKey")
	name, ok := consumerGroupTypes[k.Type]
	if !ok {
		w.Fail("type", "record type %d is not a consumer group type (3-8, 16)", k.Type)
		return w.Finish(dst)
	}
	w.What = name + "Key"
	member, regex := keyFields(k.Type)
	if !member && k.Member != "" {
		w.Fail("memberId", "type %d has no member id", k.Type)
	}
	if !regex && k.RegularExpression != "" {
		w.Fail("regularExpression", "type %d has no regular expression", k.Type)
	}
	w.Int16(int16(k.Type))
	w.String("groupId", k.Group, false)
	if member {
		w.String("memberId", k.Member, false)
	}
	if regex {
		w.String("regularExpression", k.RegularExpression, false)
	}
	return w.Finish(dst)
}

// ParseConsumerGroupKey decodes a record key of a consumer group type (the
// whole key, type prefix included). Bytes after the key are ignored, as
// Kafka ignores them. Errors are [*DecodeError]s.
func ParseConsumerGroupKey(b []byte) (ConsumerGroupKey, error) {
	r := newReader(b, "ConsumerGroupKey")
	k := ConsumerGroupKey{Type: RecordType(r.Int16("type"))}
	name, ok := consumerGroupTypes[k.Type]
	if r.OK() && !ok {
		r.FailAt(0, "type", "record type %d is not a consumer group type (3-8, 16)", k.Type)
	}
	if !r.OK() {
		return ConsumerGroupKey{}, r.error()
	}
	r.Name = name + "Key"
	k = readConsumerGroupKey(&r, k.Type)
	if !r.OK() {
		return ConsumerGroupKey{}, r.error()
	}
	return k, nil
}

// readConsumerGroupKey reads a key's fields, after the type t.
func readConsumerGroupKey(r *reader, t RecordType) ConsumerGroupKey {
	k := ConsumerGroupKey{Type: t, Group: r.String("groupId", false)}
	member, regex := keyFields(t)
	if member {
		k.Member = r.String("memberId", false)
	}
	if regex {
		k.RegularExpression = r.String("regularExpression", false)
	}
	return k
}

// ConsumerGroupValueVersion is the only version of every consumer group
// record value (validVersions "0" in Kafka 4.4's schemas), which is
// flexible: compact strings and arrays, tagged fields.
const ConsumerGroupValueVersion = 0

// ConsumerGroupMetadataValue is the value of type 3: the group's epoch.
type ConsumerGroupMetadataValue struct {
	// Epoch is the group epoch.
	Epoch int32
	// MetadataHash is the hash of the subscribed topics' metadata
	// (KIP-1101; tagged field 0, written when not 0).
	MetadataHash int64
}

// ConsumerGroupPartitionMetadataValue is the value of type 4, the
// subscribed topics' metadata Kafka wrote before 4.1.
type ConsumerGroupPartitionMetadataValue struct {
	Topics []ConsumerGroupTopicMetadata
}

// ConsumerGroupTopicMetadata is one topic of a
// [ConsumerGroupPartitionMetadataValue].
type ConsumerGroupTopicMetadata struct {
	TopicID       [16]byte
	TopicName     string
	NumPartitions int32
	// PartitionMetadata lists the racks of each partition's replicas.
	PartitionMetadata []ConsumerGroupPartitionRacks
}

// ConsumerGroupPartitionRacks is one partition's racks.
type ConsumerGroupPartitionRacks struct {
	Partition int32
	Racks     []string
}

// ConsumerGroupMemberMetadataValue is the value of type 5: what a member
// sent when it joined or changed its subscription.
type ConsumerGroupMemberMetadataValue struct {
	// InstanceID is the static member's group.instance.id; nil for a
	// dynamic member.
	InstanceID *string
	// RackID is the member's client.rack; nil when not set.
	RackID     *string
	ClientID   string
	ClientHost string
	// SubscribedTopicNames is the subscription by name.
	SubscribedTopicNames []string
	// SubscribedTopicRegex is the subscription by regular expression; nil
	// when the member subscribes by name.
	SubscribedTopicRegex *string
	// RebalanceTimeoutMs is the member's rebalance timeout (Kafka's
	// default -1 when unknown).
	RebalanceTimeoutMs int32
	// ServerAssignor is the assignor the member asked for
	// (group.remote.assignor); nil for the group's default.
	ServerAssignor *string
	// Classic is set for a member that uses the classic protocol in a
	// consumer group (tagged field 0); nil for a member of the consumer
	// protocol.
	Classic *ClassicMemberMetadata
}

// ClassicMemberMetadata is what a consumer group keeps of a member that
// joined with the classic protocol.
type ClassicMemberMetadata struct {
	SessionTimeoutMs   int32
	SupportedProtocols []ClassicProtocol
}

// ClassicProtocol is one protocol (assignor) a classic member supports,
// with its metadata (a [Subscription] for consumers).
type ClassicProtocol struct {
	Name     string
	Metadata []byte
}

// ConsumerGroupTargetAssignmentMetadataValue is the value of type 6: the
// epoch of the group's target assignment.
type ConsumerGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32
	// AssignmentTimestamp is when the target assignment was computed, in
	// milliseconds (tagged field 0, written when not 0).
	AssignmentTimestamp int64
}

// ConsumerGroupTargetAssignmentMemberValue is the value of type 7: one
// member's part of the target assignment. Its partitions' AssignmentEpochs
// are empty (the schema has no such field).
type ConsumerGroupTargetAssignmentMemberValue struct {
	TopicPartitions []ConsumerGroupTopicPartitions
}

// ConsumerGroupCurrentMemberAssignmentValue is the value of type 8: a
// member's epochs, its reconciliation state and the partitions it owns and
// must revoke.
type ConsumerGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	// State is the member's MemberState (0 stable, 1
	// unrevoked partitions, 2 unreleased partitions, 3 unknown).
	State                       int8
	AssignedPartitions          []ConsumerGroupTopicPartitions
	PartitionsPendingRevocation []ConsumerGroupTopicPartitions
}

// ConsumerGroupTopicPartitions is partitions of one topic, named by its id.
type ConsumerGroupTopicPartitions struct {
	TopicID    [16]byte
	Partitions []int32
	// AssignmentEpochs, in a current member assignment only, are the
	// epochs at which each partition was assigned, one per partition
	// (tagged field 0, written when not empty).
	AssignmentEpochs []int32
}

// ConsumerGroupRegularExpressionValue is the value of type 16: the topics
// a subscribed regular expression matched, at which metadata version and
// when.
type ConsumerGroupRegularExpressionValue struct {
	Topics    []string
	Version   int64
	Timestamp int64
}

// Tags of the values' tagged fields.
const (
	tagMetadataHash        = 0
	tagClassicMember       = 0
	tagAssignmentTimestamp = 0
	tagAssignmentEpochs    = 0
)

// AppendConsumerGroupValue appends v, which must be one of the consumer
// group value types above (not a pointer), at version 0, the only one. It
// fails with [ErrInvalid], appending nothing, when v is another type, when
// a string is longer than 32767 bytes, or when a target assignment's
// partitions carry AssignmentEpochs or a current assignment's carry a
// number of them other than none or one per partition.
func AppendConsumerGroupValue(dst []byte, v any) ([]byte, error) {
	w := newWriter(dst, "ConsumerGroupValue")
	w.Int16(ConsumerGroupValueVersion)
	switch v := v.(type) {
	case ConsumerGroupMetadataValue:
		w.What = "ConsumerGroupMetadataValue"
		w.Int32(v.Epoch)
		writeTaggedInt64(&w, tagMetadataHash, v.MetadataHash)
	case ConsumerGroupPartitionMetadataValue:
		w.What = "ConsumerGroupPartitionMetadataValue"
		w.ArrayLen("topics", len(v.Topics), true)
		for i, t := range v.Topics {
			w.Arr, w.Idx = "topics", i
			w.B = append(w.B, t.TopicID[:]...)
			w.String("topicName", t.TopicName, true)
			w.Int32(t.NumPartitions)
			w.ArrayLen("partitionMetadata", len(t.PartitionMetadata), true)
			for _, p := range t.PartitionMetadata {
				w.Int32(p.Partition)
				writeStrings(&w, "racks", p.Racks)
				w.NoTaggedFields()
			}
			w.NoTaggedFields()
		}
		w.Arr = ""
		w.NoTaggedFields()
	case ConsumerGroupMemberMetadataValue:
		w.What = "ConsumerGroupMemberMetadataValue"
		w.NullableString("instanceId", v.InstanceID, true)
		w.NullableString("rackId", v.RackID, true)
		w.String("clientId", v.ClientID, true)
		w.String("clientHost", v.ClientHost, true)
		writeStrings(&w, "subscribedTopicNames", v.SubscribedTopicNames)
		w.NullableString("subscribedTopicRegex", v.SubscribedTopicRegex, true)
		w.Int32(v.RebalanceTimeoutMs)
		w.NullableString("serverAssignor", v.ServerAssignor, true)
		if c := v.Classic; c != nil {
			// The tagged field's size is the size of its data: write
			// the data after the size's place and move it in. A
			// nullable structure starts with 1 (present) or -1 (null).
			w.Uvarint(1)
			w.Uvarint(tagClassicMember)
			at := len(w.B)
			w.Int8(1)
			w.Int32(c.SessionTimeoutMs)
			w.ArrayLen("supportedProtocols", len(c.SupportedProtocols), true)
			for i, p := range c.SupportedProtocols {
				w.Arr, w.Idx = "supportedProtocols", i
				w.String("name", p.Name, true)
				w.Bytes("metadata", p.Metadata, true, false)
				w.NoTaggedFields()
			}
			w.Arr = ""
			w.NoTaggedFields()
			data := append([]byte(nil), w.B[at:]...)
			w.B = append(binary.AppendUvarint(w.B[:at], uint64(len(data))), data...)
		} else {
			w.NoTaggedFields()
		}
	case ConsumerGroupTargetAssignmentMetadataValue:
		w.What = "ConsumerGroupTargetAssignmentMetadataValue"
		w.Int32(v.AssignmentEpoch)
		writeTaggedInt64(&w, tagAssignmentTimestamp, v.AssignmentTimestamp)
	case ConsumerGroupTargetAssignmentMemberValue:
		w.What = "ConsumerGroupTargetAssignmentMemberValue"
		writeTopicPartitions(&w, "topicPartitions", v.TopicPartitions, false)
		w.NoTaggedFields()
	case ConsumerGroupCurrentMemberAssignmentValue:
		w.What = "ConsumerGroupCurrentMemberAssignmentValue"
		w.Int32(v.MemberEpoch)
		w.Int32(v.PreviousMemberEpoch)
		w.Int8(v.State)
		writeTopicPartitions(&w, "assignedPartitions", v.AssignedPartitions, true)
		writeTopicPartitions(&w, "partitionsPendingRevocation", v.PartitionsPendingRevocation, true)
		w.NoTaggedFields()
	case ConsumerGroupRegularExpressionValue:
		w.What = "ConsumerGroupRegularExpressionValue"
		writeStrings(&w, "topics", v.Topics)
		w.Int64(v.Version)
		w.Int64(v.Timestamp)
		w.NoTaggedFields()
	default:
		w.Fail("value", "%T is not a consumer group value", v)
	}
	return w.Finish(dst)
}

// writeTaggedInt64 appends a tagged-field section holding v as the int64
// tagged field tag, or no field when v is 0 (the fields' default).
func writeTaggedInt64(w *writer, tag uint32, v int64) {
	if v == 0 {
		w.NoTaggedFields()
		return
	}
	w.Uvarint(1)
	w.Uvarint(tag)
	w.Uvarint(8)
	w.Int64(v)
}

// writeStrings appends a compact array of compact strings.
func writeStrings(w *writer, field string, a []string) {
	w.ArrayLen(field, len(a), true)
	for _, s := range a {
		w.String(field, s, true)
	}
}

// writeTopicPartitions appends a compact array of topic partitions, with
// the assignment epochs' tagged field where epochs says the schema has it.
func writeTopicPartitions(w *writer, field string, a []ConsumerGroupTopicPartitions, epochs bool) {
	w.ArrayLen(field, len(a), true)
	for i, tp := range a {
		w.Arr, w.Idx = field, i
		w.B = append(w.B, tp.TopicID[:]...)
		w.Int32Array("partitions", tp.Partitions, true)
		switch {
		case len(tp.AssignmentEpochs) == 0:
			w.NoTaggedFields()
		case !epochs:
			w.Fail("assignmentEpochs", "%s has no assignment epochs", w.What)
		case len(tp.AssignmentEpochs) != len(tp.Partitions):
			w.Fail("assignmentEpochs", "%d epochs for %d partitions", len(tp.AssignmentEpochs), len(tp.Partitions))
		default:
			w.Uvarint(1)
			w.Uvarint(tagAssignmentEpochs)
			n := len(binary.AppendUvarint(nil, uint64(len(tp.AssignmentEpochs)+1)))
			w.Uvarint(uint32(n + 4*len(tp.AssignmentEpochs)))
			w.Int32Array("assignmentEpochs", tp.AssignmentEpochs, true)
		}
	}
	w.Arr = ""
}

// ParseConsumerGroupValue decodes a non-null value of the consumer group
// record type t (from the key) and returns it as one of the value types
// above (not a pointer). Only version 0 is read, as Kafka 4.4 reads only
// it; unknown tagged fields are skipped by their size; bytes after the
// value are ignored, as Kafka ignores them. Errors are [*DecodeError]s; a
// version other than 0 also matches [ErrUnsupportedVersion].
func ParseConsumerGroupValue(t RecordType, b []byte) (any, error) {
	v, _, err := parseConsumerGroupValue(t, b)
	return v, err
}

// parseConsumerGroupValue also returns the version read.
func parseConsumerGroupValue(t RecordType, b []byte) (any, int16, error) {
	r, version, err := valueReader(t, b, consumerGroupTypes, "ConsumerGroup", "consumer group", "3-8, 16")
	if err != nil {
		return nil, version, err
	}
	var v any
	switch t {
	case TypeConsumerGroupMetadata:
		m := ConsumerGroupMetadataValue{Epoch: r.Int32("epoch")}
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			if tag == tagMetadataHash {
				m.MetadataHash = taggedInt64(&r, at, "metadataHash", data)
			}
		})
		v = m
	case TypeConsumerGroupPartitionMetadata:
		var m ConsumerGroupPartitionMetadataValue
		// A topic takes at least 16 + 1 + 4 + 1 + 1 bytes.
		if n := r.ArrayLen("topics", true, false, 23); n > 0 {
			m.Topics = make([]ConsumerGroupTopicMetadata, n)
			for i := range m.Topics {
				r.Arr, r.Idx = "topics", i
				tm := &m.Topics[i]
				tm.TopicID = readUUID(&r, "topicId")
				tm.TopicName = r.String("topicName", true)
				tm.NumPartitions = r.Int32("numPartitions")
				// A partition takes at least 4 + 1 + 1 bytes.
				if n := r.ArrayLen("partitionMetadata", true, false, 6); n > 0 {
					tm.PartitionMetadata = make([]ConsumerGroupPartitionRacks, n)
					for j := range tm.PartitionMetadata {
						tm.PartitionMetadata[j].Partition = r.Int32("partition")
						tm.PartitionMetadata[j].Racks = readStrings(&r, "racks")
						r.TaggedFields(nil)
					}
				}
				r.TaggedFields(nil)
			}
			r.Arr = ""
		}
		r.TaggedFields(nil)
		v = m
	case TypeConsumerGroupMemberMetadata:
		m := ConsumerGroupMemberMetadataValue{
			InstanceID:           r.NullableString("instanceId", true),
			RackID:               r.NullableString("rackId", true),
			ClientID:             r.String("clientId", true),
			ClientHost:           r.String("clientHost", true),
			SubscribedTopicNames: readStrings(&r, "subscribedTopicNames"),
			SubscribedTopicRegex: r.NullableString("subscribedTopicRegex", true),
			RebalanceTimeoutMs:   r.Int32("rebalanceTimeoutMs"),
			ServerAssignor:       r.NullableString("serverAssignor", true),
		}
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			if tag == tagClassicMember {
				m.Classic = readClassicMember(&r, at, data)
			}
		})
		v = m
	case TypeConsumerGroupTargetAssignmentMetadata:
		m := ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: r.Int32("assignmentEpoch")}
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			if tag == tagAssignmentTimestamp {
				m.AssignmentTimestamp = taggedInt64(&r, at, "assignmentTimestamp", data)
			}
		})
		v = m
	case TypeConsumerGroupTargetAssignmentMember:
		m := ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: readTopicPartitions(&r, "topicPartitions", false)}
		r.TaggedFields(nil)
		v = m
	case TypeConsumerGroupCurrentMemberAssignment:
		m := ConsumerGroupCurrentMemberAssignmentValue{
			MemberEpoch:         r.Int32("memberEpoch"),
			PreviousMemberEpoch: r.Int32("previousMemberEpoch"),
			State:               r.Int8("state"),
		}
		m.AssignedPartitions = readTopicPartitions(&r, "assignedPartitions", true)
		m.PartitionsPendingRevocation = readTopicPartitions(&r, "partitionsPendingRevocation", true)
		r.TaggedFields(nil)
		v = m
	case TypeConsumerGroupRegularExpression:
		m := ConsumerGroupRegularExpressionValue{Topics: readStrings(&r, "topics")}
		m.Version = r.Int64("version")
		m.Timestamp = r.Int64("timestamp")
		r.TaggedFields(nil)
		v = m
	}
	if !r.OK() {
		return nil, version, r.error()
	}
	return v, version, nil
}

// readUUID reads a uuid's 16 bytes.
func readUUID(r *reader, field string) (id [16]byte) {
	hi, lo := r.Int64(field), r.Int64(field)
	binary.BigEndian.PutUint64(id[:8], uint64(hi))
	binary.BigEndian.PutUint64(id[8:], uint64(lo))
	return id
}

// readStrings reads a compact array of compact strings (nil when empty).
func readStrings(r *reader, field string) []string {
	n := r.ArrayLen(field, true, false, 1)
	if n <= 0 {
		return nil
	}
	a := make([]string, n)
	for i := range a {
		a[i] = r.String(field, true)
	}
	return a
}

// readTopicPartitions reads a compact array of topic partitions, with the
// assignment epochs' tagged field where epochs says the schema has it.
func readTopicPartitions(r *reader, field string, epochs bool) []ConsumerGroupTopicPartitions {
	// A topic takes at least 16 + 1 + 1 bytes.
	n := r.ArrayLen(field, true, false, 18)
	if n <= 0 {
		return nil
	}
	a := make([]ConsumerGroupTopicPartitions, n)
	for i := range a {
		r.Arr, r.Idx = field, i
		a[i].TopicID = readUUID(r, "topicId")
		a[i].Partitions = r.Int32Array("partitions", true)
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			if !epochs || tag != tagAssignmentEpochs {
				return
			}
			sub := reader{r.Reader}
			sub.B, sub.Pos = data, 0
			n := sub.ArrayLen("assignmentEpochs", true, true, 4)
			var e []int32
			if n > 0 {
				e = make([]int32, n)
				for j := range e {
					e[j] = sub.Int32("assignmentEpochs")
				}
			}
			if sub.OK() && sub.Pos != len(data) {
				sub.FailAt(sub.Pos, "assignmentEpochs", "tagged field 0 has %d bytes after its array", len(data)-sub.Pos)
			}
			if !sub.OK() {
				r.FailAt(at+sub.Err.Offset, "assignmentEpochs", "%s", sub.Err.Reason)
				return
			}
			a[i].AssignmentEpochs = e
		})
	}
	r.Arr = ""
	return a
}

// taggedInt64 decodes a tagged int64 at byte at.
func taggedInt64(r *reader, at int, field string, data []byte) int64 {
	if len(data) != 8 {
		r.FailAt(at, field, "tagged field (an int64) has %d bytes, not 8", len(data))
		return 0
	}
	return int64(binary.BigEndian.Uint64(data))
}

// readClassicMember decodes the classic member metadata of tagged field 0
// at byte at.
func readClassicMember(r *reader, at int, data []byte) *ClassicMemberMetadata {
	sub := reader{r.Reader}
	sub.B, sub.Pos, sub.Arr = data, 0, ""
	// A nullable structure starts with 1 (present) or -1 (null).
	switch present := sub.Int8("classicMemberMetadata"); {
	case !sub.OK():
	case present == -1 && len(data) == 1:
		return nil
	case present != 1:
		sub.FailAt(0, "classicMemberMetadata", "presence byte %d is neither 1 nor -1 alone", present)
	}
	c := &ClassicMemberMetadata{SessionTimeoutMs: sub.Int32("classicMemberMetadata.sessionTimeoutMs")}
	// A protocol takes at least 1 + 1 + 1 bytes.
	if n := sub.ArrayLen("classicMemberMetadata.supportedProtocols", true, false, 3); n > 0 {
		c.SupportedProtocols = make([]ClassicProtocol, n)
		for i := range c.SupportedProtocols {
			sub.Arr, sub.Idx = "classicMemberMetadata.supportedProtocols", i
			c.SupportedProtocols[i].Name = sub.String("name", true)
			c.SupportedProtocols[i].Metadata = sub.Bytes("metadata", true, false)
			sub.TaggedFields(nil)
		}
		sub.Arr = ""
	}
	sub.TaggedFields(nil)
	if sub.OK() && sub.Pos != len(data) {
		sub.FailAt(sub.Pos, "classicMemberMetadata", "tagged field 0 has %d bytes after its structure", len(data)-sub.Pos)
	}
	if !sub.OK() {
		r.FailAt(at+sub.Err.Offset, "classicMemberMetadata", "%s", sub.Err.Reason)
		return nil
	}
	return c
}
