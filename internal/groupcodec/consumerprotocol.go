package groupcodec

// Versions of the classic consumer protocol (ConsumerProtocolSubscription
// and ConsumerProtocolAssignment, validVersions 0-3, never flexible). These
// are part of the wire format.
const (
	// ConsumerProtocolVersion is the version the Java consumer writes for
	// both (ConsumerProtocol.serializeSubscription and serializeAssignment
	// use HIGHEST_SUPPORTED_VERSION), and so [AppendSubscription] and
	// [AppendAssignment].
	ConsumerProtocolVersion = 3
)

// NoGenerationID is Subscription.GenerationID when the member has no
// generation (AbstractStickyAssignor.DEFAULT_GENERATION), and what versions 0
// and 1 decode to.
const NoGenerationID = -1

// TopicPartitions is one topic's partitions in a subscription's owned
// partitions, an assignment, or sticky assignor user data. The Java client
// writes one entry per topic.
type TopicPartitions struct {
	// Topic is the topic name (topic).
	Topic string
	// Partitions are the partition indexes (partitions), nil when empty.
	Partitions []int32
}

// Subscription is what a consumer sends in JoinGroup as its metadata for
// each assignor it supports, and what a classic group's
// [MemberMetadata.Subscription] stores for the chosen one
// (ConsumerProtocolSubscription).
type Subscription struct {
	// Topics are the subscribed topics (topics); the Java client sorts
	// them.
	Topics []string
	// UserData is the assignor's data (userData), nil for null: the sticky
	// assignor's [StickyUserData], cooperative-sticky's generation (see
	// [AppendCooperativeStickyUserData]), nothing for range and round-robin.
	UserData []byte
	// OwnedPartitions are the partitions the member owns (ownedPartitions,
	// version 1+); the Java client sorts them by topic, then partition.
	OwnedPartitions []TopicPartitions
	// GenerationID is the generation the member's owned partitions belong
	// to (generationId, version 2+), or [NoGenerationID].
	GenerationID int32
	// RackID is the consumer's client.rack (rackId, version 3+); nil when
	// unset.
	RackID *string
}

// Assignment is what a classic group's leader assigns a member in
// SyncGroup, stored in [MemberMetadata.Assignment]
// (ConsumerProtocolAssignment; versions 0–3 have the same layout).
type Assignment struct {
	// Partitions are the assigned partitions (assignedPartitions).
	Partitions []TopicPartitions
	// UserData is the assignor's data (userData), nil for null.
	UserData []byte
}

// AppendSubscription appends s at [ConsumerProtocolVersion] (3), as the
// Java consumer writes it (integers big-endian):
//
//	00 03 | count(4) (len(2) topic)* | len(4)/ff ff ff ff userData |
//	count(4) (len(2) topic | count(4) partition(4)*)* |
//	generationId(4) | len(2)/ff ff rackId
//
// Topics and owned partitions are written in the order given. It fails with
// [ErrInvalid], appending nothing, when a string is longer than 32767 bytes.
func AppendSubscription(dst []byte, s Subscription) ([]byte, error) {
	return AppendSubscriptionVersion(dst, s, ConsumerProtocolVersion)
}

// AppendSubscriptionVersion appends s at the given version, 0 to 3. Fields
// the version lacks are dropped silently, as the Java client drops them:
// OwnedPartitions below 1, GenerationID below 2, RackID below 3. It fails
// with [ErrUnsupportedVersion] for another version and with [ErrInvalid]
// for a string longer than 32767 bytes, appending nothing.
func AppendSubscriptionVersion(dst []byte, s Subscription, version int16) ([]byte, error) {
	if version < 0 || version > ConsumerProtocolVersion {
		return dst, unsupportedf("ConsumerProtocolSubscription version %d (valid: 0-%d)", version, ConsumerProtocolVersion)
	}
	w := newWriter(dst, "ConsumerProtocolSubscription")
	w.Int16(version)
	w.ArrayLen("topics", len(s.Topics), false)
	for i, t := range s.Topics {
		w.Arr, w.Idx = "topics", i
		w.String("topic", t, false)
	}
	w.Arr = ""
	w.Bytes("userData", s.UserData, false, true)
	if version >= 1 {
		w.topicPartitions("ownedPartitions", s.OwnedPartitions)
	}
	if version >= 2 {
		w.Int32(s.GenerationID)
	}
	if version >= 3 {
		w.NullableString("rackId", s.RackID, false)
	}
	return w.Finish(dst)
}

// topicPartitions appends a non-flexible array of TopicPartitions.
func (w *writer) topicPartitions(field string, tps []TopicPartitions) {
	w.ArrayLen(field, len(tps), false)
	for i := range tps {
		w.Arr, w.Idx = field, i
		w.String("topic", tps[i].Topic, false)
		w.Int32Array("partitions", tps[i].Partitions, false)
	}
	w.Arr = ""
}

// ParseSubscription decodes consumer protocol subscription bytes of any
// version. As the Java client reads them (ConsumerProtocol): a negative
// version fails, and a version above 3 is read as version 3, since later
// versions may only append fields; bytes after the fields are ignored.
// Fields the version lacks get their defaults (nil OwnedPartitions,
// [NoGenerationID], nil RackID). UserData is a copy, not a view of b. Errors
// are [*DecodeError]s.
func ParseSubscription(b []byte) (Subscription, error) {
	s, _, _, err := parseSubscription(b)
	return s, err
}

// parseSubscription also returns the version prefix and the bytes consumed.
func parseSubscription(b []byte) (Subscription, int16, int, error) {
	s := Subscription{GenerationID: NoGenerationID}
	r := newReader(b, "ConsumerProtocolSubscription")
	version := r.consumerProtocolVersion()
	if !r.OK() {
		return Subscription{}, version, 0, r.error()
	}
	if n := r.ArrayLen("topics", false, false, 2); n > 0 {
		s.Topics = make([]string, n)
		r.Arr = "topics"
		for i := range s.Topics {
			r.Idx = i
			s.Topics[i] = r.String("topic", false)
		}
		r.Arr = ""
	}
	s.UserData = r.Bytes("userData", false, true)
	if version >= 1 {
		s.OwnedPartitions = r.topicPartitions("ownedPartitions")
	}
	if version >= 2 {
		s.GenerationID = r.Int32("generationId")
	}
	if version >= 3 {
		s.RackID = r.NullableString("rackId", false)
	}
	if !r.OK() {
		return Subscription{}, version, 0, r.error()
	}
	return s, version, r.Pos, nil
}

// consumerProtocolVersion reads the version prefix of consumer protocol
// bytes, fails on a negative one and sets r.Ver to the version the fields
// are read at (at most 3).
func (r *reader) consumerProtocolVersion() int16 {
	version := r.Int16("version")
	if r.OK() && version < 0 {
		r.FailVersion(version, "0 and up; above 3 read as 3")
	}
	r.Ver = int(min(version, ConsumerProtocolVersion))
	return version
}

// topicPartitions reads a non-flexible array of TopicPartitions (nil when
// empty).
func (r *reader) topicPartitions(field string) []TopicPartitions {
	n := r.ArrayLen(field, false, false, 2+4)
	if n == 0 || !r.OK() {
		return nil
	}
	tps := make([]TopicPartitions, n)
	r.Arr = field
	for i := range tps {
		r.Idx = i
		tps[i].Topic = r.String("topic", false)
		tps[i].Partitions = r.Int32Array("partitions", false)
		if !r.OK() {
			break
		}
	}
	r.Arr = ""
	return tps
}

// AppendAssignment appends a at [ConsumerProtocolVersion] (3), as the Java
// consumer writes it (integers big-endian):
//
//	00 03 | count(4) (len(2) topic | count(4) partition(4)*)* |
//	len(4)/ff ff ff ff userData
//
// Partitions are written in the order given. It fails with [ErrInvalid],
// appending nothing, when a topic name is longer than 32767 bytes.
func AppendAssignment(dst []byte, a Assignment) ([]byte, error) {
	return AppendAssignmentVersion(dst, a, ConsumerProtocolVersion)
}

// AppendAssignmentVersion appends a at the given version, 0 to 3 (all have
// the same layout after the version prefix). It fails with
// [ErrUnsupportedVersion] for another version and with [ErrInvalid] for a
// topic name longer than 32767 bytes, appending nothing.
func AppendAssignmentVersion(dst []byte, a Assignment, version int16) ([]byte, error) {
	if version < 0 || version > ConsumerProtocolVersion {
		return dst, unsupportedf("ConsumerProtocolAssignment version %d (valid: 0-%d)", version, ConsumerProtocolVersion)
	}
	w := newWriter(dst, "ConsumerProtocolAssignment")
	w.Int16(version)
	w.topicPartitions("assignedPartitions", a.Partitions)
	w.Bytes("userData", a.UserData, false, true)
	return w.Finish(dst)
}

// ParseAssignment decodes consumer protocol assignment bytes of any
// version, with the rules of [ParseSubscription]: a negative version fails,
// one above 3 is read as 3, trailing bytes are ignored. UserData is a copy,
// not a view of b. Errors are [*DecodeError]s.
func ParseAssignment(b []byte) (Assignment, error) {
	a, _, _, err := parseAssignment(b)
	return a, err
}

// parseAssignment also returns the version prefix and the bytes consumed.
func parseAssignment(b []byte) (Assignment, int16, int, error) {
	var a Assignment
	r := newReader(b, "ConsumerProtocolAssignment")
	version := r.consumerProtocolVersion()
	a.Partitions = r.topicPartitions("assignedPartitions")
	a.UserData = r.Bytes("userData", false, true)
	if !r.OK() {
		return Assignment{}, version, 0, r.error()
	}
	return a, version, r.Pos, nil
}
