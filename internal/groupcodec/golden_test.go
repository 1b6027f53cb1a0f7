package groupcodec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenCase is one file of testdata/golden, written by hand from Kafka's
// schemas (testdata/README): what it decodes to and, where the encoder can
// produce it, how.
type goldenCase struct {
	file   string
	decode func(b []byte) (any, error)
	want   any
	// encode produces the file's bytes with this package's encoders; nil for
	// files that are decoded only (legacy type 0, unknown tags, future
	// versions, sticky v0).
	encode func() ([]byte, error)
}

func goldenCases() []goldenCase {
	decOCKey := func(b []byte) (any, error) { return ParseOffsetCommitKey(b) }
	decOC := func(b []byte) (any, error) { return ParseOffsetCommitValue(b) }
	decGM := func(b []byte) (any, error) { return ParseGroupMetadataValue(b) }
	decSub := func(b []byte) (any, error) { return ParseSubscription(b) }
	decAsg := func(b []byte) (any, error) { return ParseAssignment(b) }
	decSticky := func(b []byte) (any, error) { return ParseStickyUserData(b) }

	cases := []goldenCase{
		{file: "offset-commit-key-v1.hex", decode: decOCKey, want: goldenOffsetCommitKey,
			encode: func() ([]byte, error) { return AppendOffsetCommitKey(nil, goldenOffsetCommitKey) }},
		{file: "offset-commit-key-v0.hex", decode: decOCKey, want: goldenOffsetCommitKey},
		{file: "group-metadata-key-v2.hex",
			decode: func(b []byte) (any, error) { return ParseGroupMetadataKey(b) },
			want:   GroupMetadataKey{Group: "orders-app"},
			encode: func() ([]byte, error) { return AppendGroupMetadataKey(nil, GroupMetadataKey{Group: "orders-app"}) }},

		// The versions Kafka 4.1+ writes, from the default encoder.
		{file: "offset-commit-value-v4.hex", decode: decOC, want: offsetCommitAt(4),
			encode: func() ([]byte, error) { return AppendOffsetCommitValue(nil, offsetCommitAt(4)) }},
		{file: "offset-commit-value-v1.hex", decode: decOC, want: offsetCommitAt(1),
			encode: func() ([]byte, error) { return AppendOffsetCommitValue(nil, offsetCommitAt(1)) }},
		{file: "offset-commit-value-v4-no-topic-id.hex", decode: decOC, want: NewOffsetCommitValue(4711, "", 1700000000000),
			encode: func() ([]byte, error) {
				return AppendOffsetCommitValue(nil, NewOffsetCommitValue(4711, "", 1700000000000))
			}},
		{file: "offset-commit-value-v4-kafka-4.1.hex", decode: decOC, want: NewOffsetCommitValue(2217128, "", 1758335260726),
			encode: func() ([]byte, error) {
				return AppendOffsetCommitValue(nil, NewOffsetCommitValue(2217128, "", 1758335260726))
			}},
		{file: "offset-commit-value-v4-unknown-tag.hex", decode: decOC, want: offsetCommitAt(4)},

		{file: "group-metadata-value-v3.hex", decode: decGM, want: goldenGroup(3),
			encode: func() ([]byte, error) { return AppendGroupMetadataValue(nil, goldenGroup(4)) }},
		{file: "group-metadata-value-v3-empty.hex", decode: decGM,
			want: GroupMetadataValue{CurrentStateTimestamp: NoCurrentStateTimestamp},
			encode: func() ([]byte, error) {
				return AppendGroupMetadataValue(nil, GroupMetadataValue{CurrentStateTimestamp: NoCurrentStateTimestamp})
			}},

		{file: "subscription-v3-minimal.hex", decode: decSub, want: minimalSubscription,
			encode: func() ([]byte, error) { return AppendSubscription(nil, minimalSubscription) }},
		{file: "subscription-v5-future.hex", decode: decSub, want: minimalSubscription},
		{file: "assignment-v3-minimal.hex", decode: decAsg, want: minimalAssignment,
			encode: func() ([]byte, error) { return AppendAssignment(nil, minimalAssignment) }},
		{file: "subscription-v3.hex", decode: decSub, want: goldenSubscription,
			encode: func() ([]byte, error) { return AppendSubscription(nil, goldenSubscription) }},
		{file: "assignment-v3.hex", decode: decAsg, want: goldenAssignment,
			encode: func() ([]byte, error) { return AppendAssignment(nil, goldenAssignment) }},

		{file: "sticky-user-data-v1.hex", decode: decSticky, want: goldenSticky,
			encode: func() ([]byte, error) { return AppendStickyUserData(nil, goldenSticky) }},
		{file: "sticky-user-data-v0.hex", decode: decSticky,
			want: StickyUserData{PreviousAssignment: goldenSticky.PreviousAssignment, Generation: NoGenerationID}},
		{file: "cooperative-sticky-user-data.hex",
			decode: func(b []byte) (any, error) { return ParseCooperativeStickyUserData(b) },
			want:   int32(7),
			encode: func() ([]byte, error) { return AppendCooperativeStickyUserData(nil, 7), nil }},
	}

	// Every version, from the explicit-version encoders, starting from a
	// value with every field set: the encoder must drop what the version
	// lacks.
	for v := range int16(OffsetCommitValueMaxVersion + 1) {
		cases = append(cases, goldenCase{file: fmt.Sprintf("offset-commit-value-v%d.hex", v), decode: decOC, want: offsetCommitAt(v),
			encode: func() ([]byte, error) { return AppendOffsetCommitValueVersion(nil, goldenOffsetCommit, v) }})
	}
	for v := range int16(GroupMetadataValueMaxVersion + 1) {
		cases = append(cases, goldenCase{file: fmt.Sprintf("group-metadata-value-v%d.hex", v), decode: decGM, want: goldenGroup(v),
			encode: func() ([]byte, error) { return AppendGroupMetadataValueVersion(nil, goldenGroup(4), v) }})
	}
	for v := range int16(ConsumerProtocolVersion + 1) {
		cases = append(cases,
			goldenCase{file: fmt.Sprintf("subscription-v%d.hex", v), decode: decSub, want: subscriptionAt(v),
				encode: func() ([]byte, error) { return AppendSubscriptionVersion(nil, goldenSubscription, v) }},
			goldenCase{file: fmt.Sprintf("assignment-v%d.hex", v), decode: decAsg, want: goldenAssignment,
				encode: func() ([]byte, error) { return AppendAssignmentVersion(nil, goldenAssignment, v) }})
	}
	return cases
}

// TestGolden decodes every golden file to its value and, where the encoder
// can produce it, compares the encoder's bytes with the file byte for byte.
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range goldenCases() {
		name := tc.file
		if tc.encode == nil {
			name += "/decode-only"
		}
		t.Run(name, func(t *testing.T) {
			seen[tc.file] = true
			b := readGolden(t, tc.file)
			got, err := tc.decode(b)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			if tc.encode != nil {
				enc, err := tc.encode()
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("% x", b), fmt.Sprintf("% x", enc), "encoder output differs from %s", tc.file)
			}
		})
	}
	// Every file in testdata/golden is checked.
	names, err := filepath.Glob(filepath.Join("testdata", "golden", "*.hex"))
	require.NoError(t, err)
	for _, n := range names {
		require.True(t, seen[filepath.Base(n)], "%s is not in goldenCases", n)
	}
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
