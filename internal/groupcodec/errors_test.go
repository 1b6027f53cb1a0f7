package groupcodec

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/kafkalite/kafkalite/internal/wire"
	"github.com/stretchr/testify/require"
)

// h decodes space-separated hex, for hand-written bad inputs.
func h(s string) []byte { return golden.Hex(s) }

// decoders maps a name to each decoder, for tests that feed all of them.
var decoders = map[string]func([]byte) error{
	"ParseKey":                 func(b []byte) error { _, err := ParseKey(b); return err },
	"ParseOffsetCommitKey":     func(b []byte) error { _, err := ParseOffsetCommitKey(b); return err },
	"ParseGroupMetadataKey":    func(b []byte) error { _, err := ParseGroupMetadataKey(b); return err },
	"ParseOffsetCommitValue":   func(b []byte) error { _, err := ParseOffsetCommitValue(b); return err },
	"ParseGroupMetadataValue":  func(b []byte) error { _, err := ParseGroupMetadataValue(b); return err },
	"ParseSubscription":        func(b []byte) error { _, err := ParseSubscription(b); return err },
	"ParseAssignment":          func(b []byte) error { _, err := ParseAssignment(b); return err },
	"ParseStickyUserData":      func(b []byte) error { _, err := ParseStickyUserData(b); return err },
	"ParseCooperativeSticky":   func(b []byte) error { _, err := ParseCooperativeStickyUserData(b); return err },
	"ParseValue/OffsetCommit":  func(b []byte) error { _, err := ParseValue(TypeOffsetCommit, b); return err },
	"ParseValue/GroupMetadata": func(b []byte) error { _, err := ParseValue(TypeGroupMetadata, b); return err },
}

// TestDecodeBadInput feeds hand-made bad inputs to each decoder and checks
// the error: a *DecodeError matching ErrCorrupt, at the right byte, naming
// the field.
func TestDecodeBadInput(t *testing.T) {
	for _, tc := range []struct {
		name        string
		decode      func([]byte) error
		in          []byte
		offset      int
		what        string // substring of DecodeError.What
		unsupported bool
	}{
		// Short input.
		{"empty value", decoders["ParseOffsetCommitValue"], nil, 0, "OffsetCommitValue: version", false},
		{"one byte value", decoders["ParseGroupMetadataValue"], h("00"), 0, "GroupMetadataValue: version", false},
		{"empty key", decoders["ParseKey"], []byte{}, 0, "key: type", false},
		{"value cut in offset", decoders["ParseOffsetCommitValue"], h("0003 0000 0000"), 2, "OffsetCommitValue v3: offset", false},
		{"key cut in partition", decoders["ParseOffsetCommitKey"], h("0001 0001 67 0001 74 0000"), 8, "OffsetCommitKey: partition", false},
		{"empty subscription", decoders["ParseSubscription"], h(""), 0, "ConsumerProtocolSubscription: version", false},
		{"cooperative sticky too short", decoders["ParseCooperativeSticky"], h("000007"), 0, "generation", false},

		// Versions.
		{"offset commit value v5", decoders["ParseOffsetCommitValue"], h("0005 0000000000000001"), 0, "OffsetCommitValue: version", true},
		{"offset commit value v-1", decoders["ParseOffsetCommitValue"], h("ffff"), 0, "OffsetCommitValue: version", true},
		{"group metadata value v5", decoders["ParseGroupMetadataValue"], h("0005"), 0, "GroupMetadataValue: version", true},
		{"subscription v-1", decoders["ParseSubscription"], h("ffff 00000000 ffffffff"), 0, "ConsumerProtocolSubscription: version", true},
		{"assignment v-2", decoders["ParseAssignment"], h("fffe 00000000 ffffffff"), 0, "ConsumerProtocolAssignment: version", true},
		{"offset commit key of type 2", decoders["ParseOffsetCommitKey"], h("0002 0001 67"), 0, "OffsetCommitKey: type", false},
		{"group metadata key of type 1", decoders["ParseGroupMetadataKey"], h("0001 0001 67"), 0, "GroupMetadataKey: type", false},

		// Negative lengths other than null, nulls where forbidden.
		{"string length -2", decoders["ParseOffsetCommitValue"], h("0003 0000000000000001 00000000 fffe"), 14, "v3: metadata", false},
		{"null metadata", decoders["ParseOffsetCommitValue"], h("0000 0000000000000001 ffff 0000000000000000"), 10, "v0: metadata", false},
		{"null group in key", decoders["ParseKey"], h("0001 ffff"), 2, "OffsetCommitKey: group", false},
		{"null protocolType", decoders["ParseGroupMetadataValue"], h("0003 ffff"), 2, "v3: protocolType", false},
		{"bytes length -2", decoders["ParseSubscription"], h("0000 00000000 fffffffe"), 6, "v0: userData", false},
		{"null members", decoders["ParseGroupMetadataValue"], h("0003 0000 00000000 ffff ffff ffffffffffffffff ffffffff"), 20, "v3: members", false},
		{"members count -2", decoders["ParseGroupMetadataValue"], h("0003 0000 00000000 ffff ffff ffffffffffffffff fffffffe"), 20, "v3: members", false},
		{"null subscription of a member", decoders["ParseGroupMetadataValue"],
			h("0001 0000 00000000 ffff ffff 00000001  0001 6d 0000 0000 00000000 00000000 ffffffff 00000000"), 31, "v1: members[0].subscription", false},
		{"null topic in topics", decoders["ParseSubscription"], h("0000 00000001 ffff"), 6, "topics[0].topic", false},
		{"null owned partitions", decoders["ParseSubscription"], h("0001 00000000 ffffffff ffffffff"), 10, "v1: ownedPartitions", false},
		{"null partitions array", decoders["ParseAssignment"], h("0000 00000001 0001 74 ffffffff"), 9, "assignedPartitions[0].partitions", false},
		{"flexible null metadata", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 00"), 14, "v4: metadata", false},
		{"flexible null clientId", decoders["ParseGroupMetadataValue"],
			h("0004 01 00000000 00 00 ffffffffffffffff 02  01 00 00 01 00000000 00000000 01 01 00 00"), 20, "v4: members[0].clientId", false},

		// Lengths past the end.
		{"metadata past the end", decoders["ParseOffsetCommitValue"], h("0000 0000000000000001 0005 6d31"), 10, "v0: metadata", false},
		{"group past the end", decoders["ParseGroupMetadataKey"], h("0002 00ff 6f"), 2, "GroupMetadataKey: group", false},
		{"assignment bytes past the end", decoders["ParseGroupMetadataValue"],
			h("0000 0000 00000000 ffff ffff 00000001  0001 6d 0000 0000 00000000 00000000 00000010 0102"), 31, "v0: members[0].assignment", false},
		{"userData past the end", decoders["ParseAssignment"], h("0003 00000000 00000009 01"), 6, "v3: userData", false},
		{"compact string past the end", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 10 6d31"), 14, "v4: metadata", false},
		{"compact string over 32767", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 818002"), 14, "v4: metadata", false},

		// Array counts beyond the bytes present: refused before allocating.
		{"members count 2^31-1", decoders["ParseGroupMetadataValue"], h("0003 0000 00000000 ffff ffff 0000000000000000 7fffffff"), 20, "v3: members", false},
		{"topics count too big", decoders["ParseSubscription"], h("0003 00000005 0001 74 0001 74 0001 74"), 2, "v3: topics", false},
		{"partitions count too big", decoders["ParseAssignment"], h("0000 00000001 0001 74 00000002 00000000"), 9, "assignedPartitions[0].partitions", false},
		{"owned partitions too big", decoders["ParseSubscription"], h("0001 00000000 ffffffff 00000002 0000 00000000"), 10, "v1: ownedPartitions", false},
		{"sticky previous assignment too big", decoders["ParseStickyUserData"], h("10000000 0001 74"), 0, "previous_assignment", false},
		{"flexible members count 2^32-2", decoders["ParseGroupMetadataValue"], h("0004 01 00000000 00 00 0000000000000000 ffffffff0f"), 17, "v4: members", false},

		// Malformed varints and tagged fields.
		{"uvarint over 5 bytes", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 8080808080 01"), 14, "v4: metadata", false},
		{"uvarint over 32 bits", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 8080808010"), 14, "v4: metadata", false},
		{"uvarint cut", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 80"), 14, "v4: metadata", false},
		{"missing tagged fields", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 01 0000000000000000"), 23, "v4: taggedFields", false},
		{"tag count too big", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 01 0000000000000000 05 0000"), 23, "v4: taggedFields", false},
		{"tag size past the end", decoders["ParseOffsetCommitValue"], h("0004 0000000000000001 ffffffff 01 0000000000000000 01 07 05 aabb"), 25, "v4: taggedFields", false},
		{"topicId of 15 bytes", decoders["ParseOffsetCommitValue"],
			h("0004 0000000000000001 ffffffff 01 0000000000000000 01 00 0f 000102030405060708090a0b0c0d0e"), 26, "v4: topicId", false},
		{"member tags missing", decoders["ParseGroupMetadataValue"],
			h("0004 01 00000000 00 00 0000000000000000 02  01 00 01 01 00000000 00000000 01 01 05"), 32, "v4: members[0].taggedFields", false},

		// An empty non-null value is not a tombstone.
		{"empty value is not a tombstone", decoders["ParseValue/OffsetCommit"], []byte{}, 0, "OffsetCommitValue: version", false},
		{"empty group value", decoders["ParseValue/GroupMetadata"], []byte{}, 0, "GroupMetadataValue: version", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode(tc.in)
			de := requireDecodeError(t, err)
			require.Equal(t, tc.offset, de.Offset, "offset; error: %v", err)
			require.Contains(t, de.What, tc.what, "error: %v", err)
			require.NotEmpty(t, de.Reason)
			require.Equal(t, tc.unsupported, errors.Is(err, ErrUnsupportedVersion), "error: %v", err)
			require.NotErrorIs(t, err, ErrInvalid)
			require.Contains(t, err.Error(), "groupcodec: corrupt ")
		})
	}
}

// TestDecodeTruncated cuts every golden file at every length short of what
// its decoder consumes and requires an error.
func TestDecodeTruncated(t *testing.T) {
	for _, tc := range goldenCases() {
		b := readGolden(t, tc.File)
		need := len(b)
		switch tc.File {
		case "sticky-user-data-v1.hex", "subscription-v5-future.hex":
			// Sticky user data v1 without its generation is v0 (with up to
			// three ignored bytes); the future subscription's last field is
			// ignored.
			need -= 4
		}
		for n := range need {
			_, err := tc.Decode(b[:n])
			require.Error(t, err, "%s cut at %d", tc.File, n)
			requireDecodeError(t, err)
		}
	}
}

// TestDecodeBoundsAllocation checks that huge counts and lengths in tiny
// inputs fail without allocating for them.
func TestDecodeBoundsAllocation(t *testing.T) {
	inputs := [][]byte{
		h("0003 0000 00000000 ffff ffff 0000000000000000 7fffffff"),
		h("0004 01 00000000 00 00 0000000000000000 ffffffff0f"),
		h("0003 7fffffff 0001 74"),
		h("0000 00000001 0001 74 7fffffff"),
		h("7fffffff 0001 74"),
		h("0000 00000000 7fffffff"),
	}
	for _, in := range inputs {
		for name, dec := range decoders {
			// The error value and its message, nothing sized by the claimed
			// counts (up to 2^31): a few small allocations and a few
			// hundred bytes a call. The bounds leave room for the race
			// detector, which adds allocations of its own.
			allocs := testing.AllocsPerRun(10, func() { _ = dec(in) })
			require.LessOrEqual(t, allocs, 32.0, "%s(% x)", name, in)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				_ = dec(in)
			}
			runtime.ReadMemStats(&after)
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "%s(% x)", name, in)
		}
	}
}

func TestEncodeInvalid(t *testing.T) {
	long := strings.Repeat("x", wire.MaxStringLen+1)
	dst := []byte("prefix")
	for _, tc := range []struct {
		name   string
		encode func(dst []byte) ([]byte, error)
	}{
		{"offset commit key group", func(d []byte) ([]byte, error) {
			return AppendOffsetCommitKey(d, OffsetCommitKey{Group: long})
		}},
		{"offset commit key topic", func(d []byte) ([]byte, error) {
			return AppendOffsetCommitKey(d, OffsetCommitKey{Group: "g", Topic: long})
		}},
		{"group metadata key", func(d []byte) ([]byte, error) {
			return AppendGroupMetadataKey(d, GroupMetadataKey{Group: long})
		}},
		{"offset commit metadata v4", func(d []byte) ([]byte, error) {
			return AppendOffsetCommitValue(d, NewOffsetCommitValue(1, long, 2))
		}},
		{"offset commit metadata v3", func(d []byte) ([]byte, error) {
			return AppendOffsetCommitValueVersion(d, NewOffsetCommitValue(1, long, 2), 3)
		}},
		{"member client host", func(d []byte) ([]byte, error) {
			return AppendGroupMetadataValue(d, GroupMetadataValue{Members: []MemberMetadata{{}, {ClientHost: long}}})
		}},
		{"member group instance id v4", func(d []byte) ([]byte, error) {
			return AppendGroupMetadataValueVersion(d, GroupMetadataValue{Members: []MemberMetadata{{GroupInstanceID: &long}}}, 4)
		}},
		{"subscription topic", func(d []byte) ([]byte, error) {
			return AppendSubscription(d, Subscription{Topics: []string{"a", long}})
		}},
		{"subscription rack", func(d []byte) ([]byte, error) { return AppendSubscription(d, Subscription{RackID: &long}) }},
		{"assignment topic", func(d []byte) ([]byte, error) {
			return AppendAssignment(d, Assignment{Partitions: []TopicPartitions{{Topic: long}}})
		}},
		{"sticky topic", func(d []byte) ([]byte, error) {
			return AppendStickyUserData(d, StickyUserData{PreviousAssignment: []TopicPartitions{{Topic: long}}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.encode(dst)
			require.ErrorIs(t, err, ErrInvalid)
			require.NotErrorIs(t, err, ErrCorrupt)
			require.Equal(t, "prefix", string(out), "nothing appended")
		})
	}

	// The longest string Kafka allows is accepted and round-trips.
	ok := strings.Repeat("y", wire.MaxStringLen)
	for _, version := range []int16{3, 4} {
		b, err := AppendOffsetCommitValueVersion(nil, NewOffsetCommitValue(1, ok, 2), version)
		require.NoError(t, err)
		v, err := ParseOffsetCommitValue(b)
		require.NoError(t, err)
		require.Equal(t, ok, v.Metadata)
	}
}

func TestEncodeUnsupportedVersion(t *testing.T) {
	dst := []byte("prefix")
	for _, version := range []int16{-1, 5, 32767} {
		out, err := AppendOffsetCommitValueVersion(dst, goldenOffsetCommit, version)
		require.ErrorIs(t, err, ErrUnsupportedVersion)
		require.NotErrorIs(t, err, ErrCorrupt)
		require.Equal(t, dst, out)
		_, err = AppendGroupMetadataValueVersion(dst, goldenGroup(4), version)
		require.ErrorIs(t, err, ErrUnsupportedVersion)
	}
	for _, version := range []int16{-1, 4} {
		_, err := AppendSubscriptionVersion(dst, goldenSubscription, version)
		require.ErrorIs(t, err, ErrUnsupportedVersion)
		_, err = AppendAssignmentVersion(dst, goldenAssignment, version)
		require.ErrorIs(t, err, ErrUnsupportedVersion)
	}
}
