package groupcodec

// The record types of share groups (KIP-932; Kafka's CoordinatorRecordType).
// These are part of the wire format.
//
// Kafka 4.4's group coordinator writes a share group's state as these
// records: one member's subscription (10), the group's epoch (11), the
// target assignment's epoch (12) and one member's part of it (13), one
// member's current assignment and epochs (14), and which share-partitions'
// state the share coordinator initialized, is initializing or is deleting
// (15). Type 9, ShareGroupPartitionMetadata, is no longer in Kafka 4.4's
// schemas; the share coordinator's own records are sharecodec's.
const (
	TypeShareGroupMemberMetadata           RecordType = 10
	TypeShareGroupMetadata                 RecordType = 11
	TypeShareGroupTargetAssignmentMetadata RecordType = 12
	TypeShareGroupTargetAssignmentMember   RecordType = 13
	TypeShareGroupCurrentMemberAssignment  RecordType = 14
	TypeShareGroupStatePartitionMetadata   RecordType = 15
)

// shareGroupTypes are Kafka's names of the types above.
var shareGroupTypes = map[RecordType]string{
	TypeShareGroupMemberMetadata:           "ShareGroupMemberMetadata",
	TypeShareGroupMetadata:                 "ShareGroupMetadata",
	TypeShareGroupTargetAssignmentMetadata: "ShareGroupTargetAssignmentMetadata",
	TypeShareGroupTargetAssignmentMember:   "ShareGroupTargetAssignmentMember",
	TypeShareGroupCurrentMemberAssignment:  "ShareGroupCurrentMemberAssignment",
	TypeShareGroupStatePartitionMetadata:   "ShareGroupStatePartitionMetadata",
}

// shareKeyHasMember says whether a share group key of type t holds a
// member id after the group id (types 10, 13 and 14).
func shareKeyHasMember(t RecordType) bool {
	return t == TypeShareGroupMemberMetadata || t == TypeShareGroupTargetAssignmentMember || t == TypeShareGroupCurrentMemberAssignment
}

// ShareGroupKey is the key of a share group record, types 10 to 15. Every
// key holds the group id; those of types 10, 13 and 14 a member id too.
// Keys are not flexible: their strings have int16 lengths.
type ShareGroupKey struct {
	// Type is the record type, one of the share group types.
	Type RecordType
	// Group is the group id (groupId).
	Group string
	// Member is the member id (memberId) of types 10, 13 and 14; empty
	// otherwise.
	Member string
}

// AppendShareGroupKey appends k as a __consumer_offsets record key:
//
//	00 TT | len(2) group [| len(2) member]
//
// It fails with [ErrInvalid], appending nothing, when Type is not a share
// group type, when Member is set where the type has no member id, or when
// a string is longer than 32767 bytes.
func AppendShareGroupKey(dst []byte, k ShareGroupKey) ([]byte, error) {
	w := newWriter(dst, "ShareGroupKey")
	name, ok := shareGroupTypes[k.Type]
	if !ok {
		w.Fail("type", "record type %d is not a share group type (10-15)", k.Type)
		return w.Finish(dst)
	}
	w.What = name + "Key"
	member := shareKeyHasMember(k.Type)
	if !member && k.Member != "" {
		w.Fail("memberId", "type %d has no member id", k.Type)
	}
	w.Int16(int16(k.Type))
	w.String("groupId", k.Group, false)
	if member {
		w.String("memberId", k.Member, false)
	}
	return w.Finish(dst)
}

// ParseShareGroupKey decodes a record key of a share group type (the whole
// key, type prefix included). Bytes after the key are ignored, as Kafka
// ignores them. Errors are [*DecodeError]s.
func ParseShareGroupKey(b []byte) (ShareGroupKey, error) {
	r := newReader(b, "ShareGroupKey")
	t := RecordType(r.Int16("type"))
	name, ok := shareGroupTypes[t]
	if r.OK() && !ok {
		r.FailAt(0, "type", "record type %d is not a share group type (10-15)", t)
	}
	if !r.OK() {
		return ShareGroupKey{}, r.error()
	}
	r.Name = name + "Key"
	k := readShareGroupKey(&r, t)
	if !r.OK() {
		return ShareGroupKey{}, r.error()
	}
	return k, nil
}

// readShareGroupKey reads a key's fields, after the type t.
func readShareGroupKey(r *reader, t RecordType) ShareGroupKey {
	k := ShareGroupKey{Type: t, Group: r.String("groupId", false)}
	if shareKeyHasMember(t) {
		k.Member = r.String("memberId", false)
	}
	return k
}

// ShareGroupValueVersion is the only version of every share group record
// value (validVersions "0" in Kafka 4.4's schemas), which is flexible:
// compact strings and arrays, tagged fields.
const ShareGroupValueVersion = 0

// ShareGroupMemberMetadataValue is the value of type 10: what a member
// sent when it joined or changed its subscription.
type ShareGroupMemberMetadataValue struct {
	// RackID is the member's client.rack; nil when not set.
	RackID     *string
	ClientID   string
	ClientHost string
	// SubscribedTopicNames is the subscription, by name.
	SubscribedTopicNames []string
}

// ShareGroupMetadataValue is the value of type 11: the group's epoch and
// the hash of its subscribed topics' metadata (an ordinary field here, not
// a tagged one as in [ConsumerGroupMetadataValue]).
type ShareGroupMetadataValue struct {
	Epoch        int32
	MetadataHash int64
}

// ShareGroupTargetAssignmentMetadataValue is the value of type 12: the
// epoch of the group's target assignment.
type ShareGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32
	// AssignmentTimestamp is when the target assignment was computed, in
	// milliseconds (tagged field 0, written when not 0).
	AssignmentTimestamp int64
}

// ShareGroupTargetAssignmentMemberValue is the value of type 13: one
// member's part of the target assignment. Its partitions'
// AssignmentEpochs are empty (the schema has no such field).
type ShareGroupTargetAssignmentMemberValue struct {
	TopicPartitions []ConsumerGroupTopicPartitions
}

// ShareGroupCurrentMemberAssignmentValue is the value of type 14: a
// member's epochs, its state and the partitions assigned to it. The
// partitions' AssignmentEpochs are empty (the schema has no such field).
type ShareGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	// State is the member's MemberState (0 stable, 1 unrevoked
	// partitions, 2 unreleased partitions, 3 unknown).
	State              int8
	AssignedPartitions []ConsumerGroupTopicPartitions
}

// ShareGroupStatePartitionMetadataValue is the value of type 15: the
// topics whose share-partitions' state (sharecodec's records) the group
// coordinator asked the share coordinator to initialize, those it
// initialized, and those whose state is being deleted.
type ShareGroupStatePartitionMetadataValue struct {
	InitializingTopics []ShareGroupTopicPartitionsInfo
	InitializedTopics  []ShareGroupTopicPartitionsInfo
	DeletingTopics     []ShareGroupTopicInfo
}

// ShareGroupTopicPartitionsInfo is a topic and some of its partitions
// (TopicPartitionsInfo).
type ShareGroupTopicPartitionsInfo struct {
	TopicID    [16]byte
	TopicName  string
	Partitions []int32
}

// ShareGroupTopicInfo is a topic (TopicInfo).
type ShareGroupTopicInfo struct {
	TopicID   [16]byte
	TopicName string
}

// Tags of the share group values' tagged fields.
const tagShareAssignmentTimestamp = 0

// AppendShareGroupValue appends v, which must be one of the share group
// value types above (not a pointer), at version 0, the only one. It fails
// with [ErrInvalid], appending nothing, when v is another type, when a
// string is longer than 32767 bytes, or when partitions carry
// AssignmentEpochs.
func AppendShareGroupValue(dst []byte, v any) ([]byte, error) {
	w := newWriter(dst, "ShareGroupValue")
	w.Int16(ShareGroupValueVersion)
	switch v := v.(type) {
	case ShareGroupMemberMetadataValue:
		w.What = "ShareGroupMemberMetadataValue"
		w.NullableString("rackId", v.RackID, true)
		w.String("clientId", v.ClientID, true)
		w.String("clientHost", v.ClientHost, true)
		writeStrings(&w, "subscribedTopicNames", v.SubscribedTopicNames)
		w.NoTaggedFields()
	case ShareGroupMetadataValue:
		w.What = "ShareGroupMetadataValue"
		w.Int32(v.Epoch)
		w.Int64(v.MetadataHash)
		w.NoTaggedFields()
	case ShareGroupTargetAssignmentMetadataValue:
		w.What = "ShareGroupTargetAssignmentMetadataValue"
		w.Int32(v.AssignmentEpoch)
		writeTaggedInt64(&w, tagShareAssignmentTimestamp, v.AssignmentTimestamp)
	case ShareGroupTargetAssignmentMemberValue:
		w.What = "ShareGroupTargetAssignmentMemberValue"
		writeTopicPartitions(&w, "topicPartitions", v.TopicPartitions, false)
		w.NoTaggedFields()
	case ShareGroupCurrentMemberAssignmentValue:
		w.What = "ShareGroupCurrentMemberAssignmentValue"
		w.Int32(v.MemberEpoch)
		w.Int32(v.PreviousMemberEpoch)
		w.Int8(v.State)
		writeTopicPartitions(&w, "assignedPartitions", v.AssignedPartitions, false)
		w.NoTaggedFields()
	case ShareGroupStatePartitionMetadataValue:
		w.What = "ShareGroupStatePartitionMetadataValue"
		writeTopicPartitionsInfo(&w, "initializingTopics", v.InitializingTopics)
		writeTopicPartitionsInfo(&w, "initializedTopics", v.InitializedTopics)
		w.ArrayLen("deletingTopics", len(v.DeletingTopics), true)
		for i, t := range v.DeletingTopics {
			w.Arr, w.Idx = "deletingTopics", i
			w.B = append(w.B, t.TopicID[:]...)
			w.String("topicName", t.TopicName, true)
			w.NoTaggedFields()
		}
		w.Arr = ""
		w.NoTaggedFields()
	default:
		w.Fail("value", "%T is not a share group value", v)
	}
	return w.Finish(dst)
}

// writeTopicPartitionsInfo appends a compact array of topics with names
// and partitions.
func writeTopicPartitionsInfo(w *writer, field string, a []ShareGroupTopicPartitionsInfo) {
	w.ArrayLen(field, len(a), true)
	for i, t := range a {
		w.Arr, w.Idx = field, i
		w.B = append(w.B, t.TopicID[:]...)
		w.String("topicName", t.TopicName, true)
		w.Int32Array("partitions", t.Partitions, true)
		w.NoTaggedFields()
	}
	w.Arr = ""
}

// ParseShareGroupValue decodes a non-null value of the share group record
// type t (from the key) and returns it as one of the value types above
// (not a pointer). Only version 0 is read, as Kafka 4.4 reads only it;
// unknown tagged fields are skipped by their size; bytes after the value
// are ignored, as Kafka ignores them. Errors are [*DecodeError]s; a
// version other than 0 also matches [ErrUnsupportedVersion].
func ParseShareGroupValue(t RecordType, b []byte) (any, error) {
	v, _, err := parseShareGroupValue(t, b)
	return v, err
}

// parseShareGroupValue also returns the version read.
func parseShareGroupValue(t RecordType, b []byte) (any, int16, error) {
	r, version, err := valueReader(t, b, shareGroupTypes, "ShareGroup", "share group", "10-15")
	if err != nil {
		return nil, version, err
	}
	var v any
	switch t {
	case TypeShareGroupMemberMetadata:
		m := ShareGroupMemberMetadataValue{
			RackID:               r.NullableString("rackId", true),
			ClientID:             r.String("clientId", true),
			ClientHost:           r.String("clientHost", true),
			SubscribedTopicNames: readStrings(&r, "subscribedTopicNames"),
		}
		r.TaggedFields(nil)
		v = m
	case TypeShareGroupMetadata:
		m := ShareGroupMetadataValue{Epoch: r.Int32("epoch"), MetadataHash: r.Int64("metadataHash")}
		r.TaggedFields(nil)
		v = m
	case TypeShareGroupTargetAssignmentMetadata:
		m := ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: r.Int32("assignmentEpoch")}
		r.TaggedFields(func(tag uint32, at int, data []byte) {
			if tag == tagShareAssignmentTimestamp {
				m.AssignmentTimestamp = taggedInt64(&r, at, "assignmentTimestamp", data)
			}
		})
		v = m
	case TypeShareGroupTargetAssignmentMember:
		m := ShareGroupTargetAssignmentMemberValue{TopicPartitions: readTopicPartitions(&r, "topicPartitions", false)}
		r.TaggedFields(nil)
		v = m
	case TypeShareGroupCurrentMemberAssignment:
		m := ShareGroupCurrentMemberAssignmentValue{
			MemberEpoch:         r.Int32("memberEpoch"),
			PreviousMemberEpoch: r.Int32("previousMemberEpoch"),
			State:               r.Int8("state"),
		}
		m.AssignedPartitions = readTopicPartitions(&r, "assignedPartitions", false)
		r.TaggedFields(nil)
		v = m
	case TypeShareGroupStatePartitionMetadata:
		var m ShareGroupStatePartitionMetadataValue
		m.InitializingTopics = readTopicPartitionsInfo(&r, "initializingTopics")
		m.InitializedTopics = readTopicPartitionsInfo(&r, "initializedTopics")
		// A topic takes at least 16 + 1 + 1 bytes.
		if n := r.ArrayLen("deletingTopics", true, false, 18); n > 0 {
			m.DeletingTopics = make([]ShareGroupTopicInfo, n)
			for i := range m.DeletingTopics {
				r.Arr, r.Idx = "deletingTopics", i
				m.DeletingTopics[i].TopicID = readUUID(&r, "topicId")
				m.DeletingTopics[i].TopicName = r.String("topicName", true)
				r.TaggedFields(nil)
			}
			r.Arr = ""
		}
		r.TaggedFields(nil)
		v = m
	}
	if !r.OK() {
		return nil, version, r.error()
	}
	return v, version, nil
}

// readTopicPartitionsInfo reads a compact array of topics with names and
// partitions (nil when empty).
func readTopicPartitionsInfo(r *reader, field string) []ShareGroupTopicPartitionsInfo {
	// A topic takes at least 16 + 1 + 1 + 1 bytes.
	n := r.ArrayLen(field, true, false, 19)
	if n <= 0 {
		return nil
	}
	a := make([]ShareGroupTopicPartitionsInfo, n)
	for i := range a {
		r.Arr, r.Idx = field, i
		a[i].TopicID = readUUID(r, "topicId")
		a[i].TopicName = r.String("topicName", true)
		a[i].Partitions = r.Int32Array("partitions", true)
		r.TaggedFields(nil)
	}
	r.Arr = ""
	return a
}
