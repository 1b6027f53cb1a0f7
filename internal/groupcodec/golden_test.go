package groupcodec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// goldenCases are the files of testdata/golden, written by hand from
// Kafka's schemas (testdata/README). Encode is nil for files that are
// decoded only (legacy type 0, unknown tags, future versions, sticky v0).
func goldenCases() []golden.Case {
	decOCKey := func(b []byte) (any, error) { return ParseOffsetCommitKey(b) }
	decOC := func(b []byte) (any, error) { return ParseOffsetCommitValue(b) }
	decGM := func(b []byte) (any, error) { return ParseGroupMetadataValue(b) }
	decSub := func(b []byte) (any, error) { return ParseSubscription(b) }
	decAsg := func(b []byte) (any, error) { return ParseAssignment(b) }
	decSticky := func(b []byte) (any, error) { return ParseStickyUserData(b) }

	cases := []golden.Case{
		{File: "offset-commit-key-v1.hex", Decode: decOCKey, Want: goldenOffsetCommitKey,
			Encode: func() ([]byte, error) { return AppendOffsetCommitKey(nil, goldenOffsetCommitKey) }},
		{File: "offset-commit-key-v0.hex", Decode: decOCKey, Want: goldenOffsetCommitKey},
		{File: "group-metadata-key-v2.hex",
			Decode: func(b []byte) (any, error) { return ParseGroupMetadataKey(b) },
			Want:   GroupMetadataKey{Group: "orders-app"},
			Encode: func() ([]byte, error) { return AppendGroupMetadataKey(nil, GroupMetadataKey{Group: "orders-app"}) }},

		// The versions Kafka 4.1+ writes, from the default encoder.
		{File: "offset-commit-value-v4.hex", Decode: decOC, Want: offsetCommitAt(4),
			Encode: func() ([]byte, error) { return AppendOffsetCommitValue(nil, offsetCommitAt(4)) }},
		{File: "offset-commit-value-v1.hex", Decode: decOC, Want: offsetCommitAt(1),
			Encode: func() ([]byte, error) { return AppendOffsetCommitValue(nil, offsetCommitAt(1)) }},
		{File: "offset-commit-value-v4-no-topic-id.hex", Decode: decOC, Want: NewOffsetCommitValue(4711, "", 1700000000000),
			Encode: func() ([]byte, error) {
				return AppendOffsetCommitValue(nil, NewOffsetCommitValue(4711, "", 1700000000000))
			}},
		{File: "offset-commit-value-v4-kafka-4.1.hex", Decode: decOC, Want: NewOffsetCommitValue(2217128, "", 1758335260726),
			Encode: func() ([]byte, error) {
				return AppendOffsetCommitValue(nil, NewOffsetCommitValue(2217128, "", 1758335260726))
			}},
		{File: "offset-commit-value-v4-unknown-tag.hex", Decode: decOC, Want: offsetCommitAt(4)},

		{File: "group-metadata-value-v3.hex", Decode: decGM, Want: goldenGroup(3),
			Encode: func() ([]byte, error) { return AppendGroupMetadataValue(nil, goldenGroup(4)) }},
		{File: "group-metadata-value-v3-empty.hex", Decode: decGM,
			Want: GroupMetadataValue{CurrentStateTimestamp: NoCurrentStateTimestamp},
			Encode: func() ([]byte, error) {
				return AppendGroupMetadataValue(nil, GroupMetadataValue{CurrentStateTimestamp: NoCurrentStateTimestamp})
			}},

		{File: "subscription-v3-minimal.hex", Decode: decSub, Want: minimalSubscription,
			Encode: func() ([]byte, error) { return AppendSubscription(nil, minimalSubscription) }},
		{File: "subscription-v5-future.hex", Decode: decSub, Want: minimalSubscription},
		{File: "assignment-v3-minimal.hex", Decode: decAsg, Want: minimalAssignment,
			Encode: func() ([]byte, error) { return AppendAssignment(nil, minimalAssignment) }},
		{File: "subscription-v3.hex", Decode: decSub, Want: goldenSubscription,
			Encode: func() ([]byte, error) { return AppendSubscription(nil, goldenSubscription) }},
		{File: "assignment-v3.hex", Decode: decAsg, Want: goldenAssignment,
			Encode: func() ([]byte, error) { return AppendAssignment(nil, goldenAssignment) }},

		{File: "sticky-user-data-v1.hex", Decode: decSticky, Want: goldenSticky,
			Encode: func() ([]byte, error) { return AppendStickyUserData(nil, goldenSticky) }},
		{File: "sticky-user-data-v0.hex", Decode: decSticky,
			Want: StickyUserData{PreviousAssignment: goldenSticky.PreviousAssignment, Generation: NoGenerationID}},
		{File: "cooperative-sticky-user-data.hex",
			Decode: func(b []byte) (any, error) { return ParseCooperativeStickyUserData(b) },
			Want:   int32(7),
			Encode: func() ([]byte, error) { return AppendCooperativeStickyUserData(nil, 7), nil }},
	}

	// Every version, from the explicit-version encoders, starting from a
	// value with every field set: the encoder must drop what the version
	// lacks.
	for v := range int16(OffsetCommitValueMaxVersion + 1) {
		cases = append(cases, golden.Case{File: fmt.Sprintf("offset-commit-value-v%d.hex", v), Decode: decOC, Want: offsetCommitAt(v),
			Encode: func() ([]byte, error) { return AppendOffsetCommitValueVersion(nil, goldenOffsetCommit, v) }})
	}
	for v := range int16(GroupMetadataValueMaxVersion + 1) {
		cases = append(cases, golden.Case{File: fmt.Sprintf("group-metadata-value-v%d.hex", v), Decode: decGM, Want: goldenGroup(v),
			Encode: func() ([]byte, error) { return AppendGroupMetadataValueVersion(nil, goldenGroup(4), v) }})
	}
	for v := range int16(ConsumerProtocolVersion + 1) {
		cases = append(cases,
			golden.Case{File: fmt.Sprintf("subscription-v%d.hex", v), Decode: decSub, Want: subscriptionAt(v),
				Encode: func() ([]byte, error) { return AppendSubscriptionVersion(nil, goldenSubscription, v) }},
			golden.Case{File: fmt.Sprintf("assignment-v%d.hex", v), Decode: decAsg, Want: goldenAssignment,
				Encode: func() ([]byte, error) { return AppendAssignmentVersion(nil, goldenAssignment, v) }})
	}
	return cases
}

// TestGolden decodes every golden file to its value and, where the encoder
// can produce it, compares the encoder's bytes with the file byte for byte.
func TestGolden(t *testing.T) {
	golden.Check(t, goldenCases())
}

// TestGoldenKeysAndValues decodes the golden keys and values through the
// generic ParseKey and ParseValue.
func TestGoldenKeysAndValues(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		wantType   RecordType
		version    int16
	}{
		{"offset-commit-key-v1.hex", "offset-commit-value-v4.hex", TypeOffsetCommit, 4},
		{"offset-commit-key-v1.hex", "offset-commit-value-v3.hex", TypeOffsetCommit, 3},
		{"offset-commit-key-v0.hex", "offset-commit-value-v0.hex", TypeLegacyOffsetCommit, 0},
		{"group-metadata-key-v2.hex", "group-metadata-value-v3.hex", TypeGroupMetadata, 3},
		{"group-metadata-key-v2.hex", "group-metadata-value-v4.hex", TypeGroupMetadata, 4},
	} {
		t.Run(tc.key+"+"+tc.value, func(t *testing.T) {
			k, err := ParseKey(readGolden(t, tc.key))
			require.NoError(t, err)
			require.Equal(t, tc.wantType, k.Type)
			require.Nil(t, k.Body)
			v, err := ParseValue(k.Type, readGolden(t, tc.value))
			require.NoError(t, err)
			require.Equal(t, tc.wantType, v.Type)
			require.False(t, v.Tombstone)
			require.Equal(t, tc.version, v.Version)
			require.Nil(t, v.Body)
			if k.Type == TypeGroupMetadata {
				require.Equal(t, GroupMetadataKey{Group: "orders-app"}, k.GroupMetadata)
				require.Equal(t, goldenGroup(tc.version), v.GroupMetadata)
			} else {
				require.Equal(t, goldenOffsetCommitKey, k.OffsetCommit)
				require.Equal(t, offsetCommitAt(tc.version), v.OffsetCommit)
			}
		})
	}
}

// TestGoldenREADME checks that testdata/README mentions every golden file.
func TestGoldenREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("testdata", "README"))
	require.NoError(t, err)
	names, err := filepath.Glob(filepath.Join("testdata", "golden", "*.hex"))
	require.NoError(t, err)
	for _, n := range names {
		require.Contains(t, string(readme), filepath.Base(n))
	}
}
