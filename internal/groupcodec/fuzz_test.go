package groupcodec

import (
	"bytes"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// The fuzz targets feed arbitrary bytes to the decoders. Invariants checked
// by every target:
//
//   - nothing panics; a failure is a *DecodeError matching ErrCorrupt;
//   - what decodes consumed at most the input, and decoding the consumed
//     prefix alone gives the same value;
//   - for a non-flexible version V, encoding the value at V gives back the
//     consumed bytes exactly (the encoding is canonical);
//   - encoding the value in the version this package writes by default and
//     decoding that gives the same value again (flexible input may differ in
//     bytes: unknown tagged fields are dropped, varints re-encoded
//     minimally).
//
// Seeds: every file in testdata/golden (each target gets them all) and the
// inputs below.

func FuzzOffsetCommitValue(f *testing.F) {
	golden.AddSeeds(f, golden.Dir, nil, []byte{0, 4}, h("0004 0000000000000001 ffffffff 01 0000000000000000 01 00 10 00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, version, n, err := parseOffsetCommitValue(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, n, len(b))
		v2, version2, n2, err := parseOffsetCommitValue(b[:n])
		require.NoError(t, err)
		require.Equal(t, v, v2)
		require.Equal(t, version, version2)
		require.Equal(t, n, n2)

		again, err := AppendOffsetCommitValueVersion(nil, v, version)
		require.NoError(t, err)
		if version < offsetCommitValueFlexible {
			require.Equal(t, b[:n], again)
		}
		v3, err := ParseOffsetCommitValue(again)
		require.NoError(t, err)
		require.Equal(t, v, v3)

		def, err := AppendOffsetCommitValue(nil, v)
		require.NoError(t, err)
		v4, version4, _, err := parseOffsetCommitValue(def)
		require.NoError(t, err)
		require.Equal(t, OffsetCommitValueVersion(v), version4)
		require.Equal(t, v, v4)
	})
}

func FuzzGroupMetadataValue(f *testing.F) {
	golden.AddSeeds(f, golden.Dir, nil, h("0004 01 00000000 00 00 0000000000000000 01 00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, version, n, err := parseGroupMetadataValue(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, n, len(b))
		v2, _, n2, err := parseGroupMetadataValue(b[:n])
		require.NoError(t, err)
		require.Equal(t, v, v2)
		require.Equal(t, n, n2)

		again, err := AppendGroupMetadataValueVersion(nil, v, version)
		require.NoError(t, err)
		if version < groupMetadataValueFlexible {
			require.Equal(t, b[:n], again)
		}
		v3, err := ParseGroupMetadataValue(again)
		require.NoError(t, err)
		require.Equal(t, v, v3)

		def, err := AppendGroupMetadataValue(nil, v)
		require.NoError(t, err)
		v4, version4, _, err := parseGroupMetadataValue(def)
		require.NoError(t, err)
		require.Equal(t, int16(GroupMetadataValueVersion), version4)
		require.Equal(t, v, v4)
	})
}

func FuzzSubscription(f *testing.F) {
	golden.AddSeeds(f, golden.Dir, nil, h("0000 00000000 ffffffff"), h("7fff 00000000 ffffffff 00000000 ffffffff ffff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, version, n, err := parseSubscription(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, n, len(b))
		s2, _, n2, err := parseSubscription(b[:n])
		require.NoError(t, err)
		require.Equal(t, s, s2)
		require.Equal(t, n, n2)

		readAs := min(version, ConsumerProtocolVersion)
		again, err := AppendSubscriptionVersion(nil, s, readAs)
		require.NoError(t, err)
		require.Equal(t, b[2:n], again[2:], "fields after the version")

		def, err := AppendSubscription(nil, s)
		require.NoError(t, err)
		s3, err := ParseSubscription(def)
		require.NoError(t, err)
		require.Equal(t, s, s3)
	})
}

func FuzzAssignment(f *testing.F) {
	golden.AddSeeds(f, golden.Dir, nil, h("0000 00000000 ffffffff"), h("0100 00000001 0000 00000000 00000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, version, n, err := parseAssignment(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, n, len(b))
		a2, _, n2, err := parseAssignment(b[:n])
		require.NoError(t, err)
		require.Equal(t, a, a2)
		require.Equal(t, n, n2)

		again, err := AppendAssignmentVersion(nil, a, min(version, ConsumerProtocolVersion))
		require.NoError(t, err)
		require.Equal(t, b[2:n], again[2:], "fields after the version")

		def, err := AppendAssignment(nil, a)
		require.NoError(t, err)
		a3, err := ParseAssignment(def)
		require.NoError(t, err)
		require.Equal(t, a, a3)
	})
}

// FuzzKey also checks that ParseKey agrees with ParseOffsetCommitKey and
// ParseGroupMetadataKey, and decodes the bytes after the key's type as a
// value of that type: ParseValue must not panic either.
func FuzzKey(f *testing.F) {
	golden.AddSeeds(f, golden.Dir, nil, []byte{0, 3}, h("0010 0001 67 0002 72 65"), h("ffff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKey(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.GreaterOrEqual(t, len(b), 2)
		if v, err := ParseValue(k.Type, b[2:]); err != nil {
			requireDecodeError(t, err)
		} else {
			require.Equal(t, k.Type, v.Type)
		}
		switch k.Type {
		case TypeLegacyOffsetCommit, TypeOffsetCommit:
			ock, err := ParseOffsetCommitKey(b)
			require.NoError(t, err)
			require.Equal(t, k.OffsetCommit, ock)
			again, err := AppendOffsetCommitKey(nil, k.OffsetCommit)
			require.NoError(t, err)
			require.Equal(t, []byte{0, 1}, again[:2])
			require.True(t, bytes.HasPrefix(b[2:], again[2:]), "re-encoded fields are a prefix of the input's")
			k2, err := ParseKey(again)
			require.NoError(t, err)
			require.Equal(t, TypeOffsetCommit, k2.Type)
			require.Equal(t, k.OffsetCommit, k2.OffsetCommit)
		case TypeGroupMetadata:
			gmk, err := ParseGroupMetadataKey(b)
			require.NoError(t, err)
			require.Equal(t, k.GroupMetadata, gmk)
			again, err := AppendGroupMetadataKey(nil, k.GroupMetadata)
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(b, again), "re-encoded key is a prefix of the input")
			k2, err := ParseKey(again)
			require.NoError(t, err)
			require.Equal(t, k, k2)
		case TypeConsumerGroupMetadata, TypeConsumerGroupPartitionMetadata, TypeConsumerGroupMemberMetadata,
			TypeConsumerGroupTargetAssignmentMetadata, TypeConsumerGroupTargetAssignmentMember,
			TypeConsumerGroupCurrentMemberAssignment, TypeConsumerGroupRegularExpression:
			cgk, err := ParseConsumerGroupKey(b)
			require.NoError(t, err)
			require.Equal(t, k.ConsumerGroup, cgk)
			again, err := AppendConsumerGroupKey(nil, k.ConsumerGroup)
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(b, again), "re-encoded key is a prefix of the input")
			k2, err := ParseKey(again)
			require.NoError(t, err)
			require.Equal(t, k, k2)
		default:
			require.False(t, k.Type.Decoded())
			require.Equal(t, b[2:], k.Body)
			_, err := ParseConsumerGroupKey(b)
			requireDecodeError(t, err)
			_, err = ParseOffsetCommitKey(b)
			requireDecodeError(t, err)
			_, err = ParseGroupMetadataKey(b)
			requireDecodeError(t, err)
		}
	})
}

func FuzzStickyUserData(f *testing.F) {
	golden.AddSeeds(f, golden.Dir, nil, h("00000000"), h("00000000 000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, n, err := parseStickyUserData(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		require.LessOrEqual(t, n, len(b))
		again, err := AppendStickyUserData(nil, u)
		require.NoError(t, err)
		if n == len(again) {
			// Version 1 input: canonical.
			require.Equal(t, b[:n], again)
		}
		u2, err := ParseStickyUserData(again)
		require.NoError(t, err)
		require.Equal(t, u, u2)
	})
}
