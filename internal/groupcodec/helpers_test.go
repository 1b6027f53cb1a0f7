package groupcodec

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
)

// readGolden returns the bytes of testdata/golden/name.
func readGolden(t testing.TB, name string) []byte { return golden.Read(t, name) }

// requireDecodeError checks that err is a *DecodeError matching ErrCorrupt
// and returns it.
func requireDecodeError(t testing.TB, err error) *DecodeError {
	t.Helper()
	return golden.RequireError[*DecodeError](t, err, ErrCorrupt)
}

func ptr[T any](v T) *T { return &v }

// The values of the golden files (testdata/README).
var (
	goldenTopicID = [16]byte{0xb1, 0xc4, 0x0e, 0x5a, 0x7c, 0x2f, 0x4d, 0x3e, 0x9a, 0x1b, 0x6c, 0x8d, 0x2e, 0x4f, 0x70, 0x81}

	goldenOffsetCommitKey = OffsetCommitKey{Group: "orders-app", Topic: "orders", Partition: 3}

	// goldenOffsetCommit has every field of every version set.
	goldenOffsetCommit = OffsetCommitValue{
		Offset:          4711,
		LeaderEpoch:     5,
		Metadata:        "m1",
		CommitTimestamp: 1700000000000,
		ExpireTimestamp: 1700604800000,
		TopicID:         goldenTopicID,
	}

	// The smallest consumer protocol values: a subscription to topic "t" and
	// an assignment of its partition 0 (subscription-v3-minimal.hex and
	// assignment-v3-minimal.hex).
	minimalSubscription = Subscription{Topics: []string{"t"}, GenerationID: NoGenerationID}
	minimalAssignment   = Assignment{Partitions: []TopicPartitions{{Topic: "t", Partitions: []int32{0}}}}

	goldenSubscription = Subscription{
		Topics:          []string{"orders", "payments"},
		UserData:        []byte{0, 0, 0, 7},
		OwnedPartitions: []TopicPartitions{{Topic: "orders", Partitions: []int32{0, 2}}},
		GenerationID:    7,
		RackID:          ptr("rack-a"),
	}

	goldenAssignment = Assignment{Partitions: []TopicPartitions{
		{Topic: "orders", Partitions: []int32{0, 2}},
		{Topic: "payments", Partitions: []int32{1}},
	}}

	goldenSticky = StickyUserData{
		PreviousAssignment: []TopicPartitions{{Topic: "orders", Partitions: []int32{0, 2}}},
		Generation:         7,
	}
)

// offsetCommitAt returns goldenOffsetCommit as version decodes it.
func offsetCommitAt(version int16) OffsetCommitValue {
	return offsetCommitAsRead(goldenOffsetCommit, version)
}

// offsetCommitAsRead returns v as version decodes it: the fields the
// version lacks at their defaults.
func offsetCommitAsRead(v OffsetCommitValue, version int16) OffsetCommitValue {
	if version < 3 {
		v.LeaderEpoch = NoLeaderEpoch
	}
	if version != 1 {
		v.ExpireTimestamp = NoExpireTimestamp
	}
	if version < 4 {
		v.TopicID = [16]byte{}
	}
	return v
}

// goldenGroup returns the group of the group-metadata-value-v*.hex files
// as version decodes it (4: every field).
func goldenGroup(version int16) GroupMetadataValue {
	sub, err := AppendSubscription(nil, minimalSubscription)
	if err != nil {
		panic(err)
	}
	asg, err := AppendAssignment(nil, minimalAssignment)
	if err != nil {
		panic(err)
	}
	v := GroupMetadataValue{
		ProtocolType:          ProtocolTypeConsumer,
		Generation:            7,
		Protocol:              ptr(AssignorRange),
		Leader:                ptr("m1"),
		CurrentStateTimestamp: 1700000000000,
		Members: []MemberMetadata{
			{MemberID: "m1", GroupInstanceID: ptr("i1"), ClientID: "c1", ClientHost: "/10.0.0.1",
				RebalanceTimeout: 300000, SessionTimeout: 45000, Subscription: sub, Assignment: asg},
			{MemberID: "m2", ClientID: "c2", ClientHost: "/10.0.0.2",
				RebalanceTimeout: 300000, SessionTimeout: 45000, Subscription: []byte{1, 2, 3}, Assignment: []byte{}},
		},
	}
	return groupAsRead(v, version)
}

// groupAsRead returns v as version decodes it: the fields the version lacks
// at their defaults.
func groupAsRead(v GroupMetadataValue, version int16) GroupMetadataValue {
	v.Members = append([]MemberMetadata(nil), v.Members...)
	if version < 2 {
		v.CurrentStateTimestamp = NoCurrentStateTimestamp
	}
	for i := range v.Members {
		if version < 3 {
			v.Members[i].GroupInstanceID = nil
		}
		if version < 1 {
			v.Members[i].RebalanceTimeout = 0
		}
	}
	return v
}

// subscriptionAt returns goldenSubscription as version decodes it.
func subscriptionAt(version int16) Subscription {
	return subscriptionAsRead(goldenSubscription, version)
}

// subscriptionAsRead returns s as version decodes it: the fields the
// version lacks at their defaults.
func subscriptionAsRead(s Subscription, version int16) Subscription {
	if version < 3 {
		s.RackID = nil
	}
	if version < 2 {
		s.GenerationID = NoGenerationID
	}
	if version < 1 {
		s.OwnedPartitions = nil
	}
	return s
}
