package groupcodec

import "encoding/binary"

// Assignor names: [GroupMetadataValue.Protocol] of a consumer group, and the
// protocol names a consumer offers in JoinGroup.
const (
	AssignorRange             = "range"
	AssignorRoundRobin        = "roundrobin"
	AssignorSticky            = "sticky"
	AssignorCooperativeSticky = "cooperative-sticky"
)

// StickyUserData is the user data the Java client's StickyAssignor
// ("sticky") puts in its [Subscription]: the member's previous assignment
// and generation, so the leader can keep partitions where they were. It has
// no version prefix; its two versions are told apart by length
// (StickyAssignor.STICKY_ASSIGNOR_USER_DATA_V0 and _V1):
//
//	v0: count(4) (len(2) topic | count(4) partition(4)*)*
//	v1: v0 | generation(4)
//
// The member sends none (null user data) before its first assignment.
type StickyUserData struct {
	// PreviousAssignment is the member's last assignment
	// (previous_assignment), nil when empty.
	PreviousAssignment []TopicPartitions
	// Generation is the generation of that assignment (generation, v1), or
	// [NoGenerationID] when absent (v0). The assignor treats an absent
	// generation as [NoGenerationID].
	Generation int32
}

// AppendStickyUserData appends u as version 1, the only one the Java client
// writes (StickyAssignor.serializeTopicPartitionAssignment). Topics are
// written in the order given. It fails with [ErrInvalid], appending
// nothing, when a topic name is longer than 32767 bytes.
func AppendStickyUserData(dst []byte, u StickyUserData) ([]byte, error) {
	w := newWriter(dst, "StickyAssignorUserData")
	w.topicPartitions("previous_assignment", u.PreviousAssignment)
	w.Int32(u.Generation)
	return w.Finish(dst)
}

// ParseStickyUserData decodes sticky assignor user data as the Java client
// does (StickyAssignor.deserializeTopicPartitionAssignment): as version 1,
// and if that fails, as version 0 (no generation). Bytes after the fields
// are ignored. Where both fail, the Java assignor ignores the data (no
// previous assignment, generation -1); ParseStickyUserData returns a
// [*DecodeError] instead (the assignment array is malformed), and the
// caller may do the same.
func ParseStickyUserData(b []byte) (StickyUserData, error) {
	u, _, err := parseStickyUserData(b)
	return u, err
}

// parseStickyUserData also returns the bytes consumed.
func parseStickyUserData(b []byte) (StickyUserData, int, error) {
	// Version 0 is a prefix of version 1: read it, then the generation if
	// four bytes follow.
	r := newReader(b, "StickyAssignorUserData")
	u := StickyUserData{Generation: NoGenerationID}
	u.PreviousAssignment = r.topicPartitions("previous_assignment")
	if !r.OK() {
		return StickyUserData{}, 0, r.error()
	}
	if r.Remaining() >= 4 {
		u.Generation = r.Int32("generation")
	}
	return u, r.Pos, nil
}

// AppendCooperativeStickyUserData appends the user data the Java client's
// CooperativeStickyAssignor ("cooperative-sticky") puts in its
// [Subscription]: the generation of its owned partitions, a bare int32
// (COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0). The assignor reads the
// generation from [Subscription.GenerationID] instead when the subscription
// is version 2 or later.
func AppendCooperativeStickyUserData(dst []byte, generation int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(generation))
}

// ParseCooperativeStickyUserData decodes cooperative-sticky user data: the
// int32 generation; bytes after it are ignored. Where it fails (fewer than
// four bytes) the Java assignor uses generation -1; this returns a
// [*DecodeError] and the caller may do the same.
func ParseCooperativeStickyUserData(b []byte) (int32, error) {
	r := newReader(b, "CooperativeStickyAssignorUserData")
	g := r.Int32("generation")
	return g, r.error()
}
