package groupcodec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOffsetCommitValueVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    OffsetCommitValue
		want int16
	}{
		{"no expire timestamp", NewOffsetCommitValue(1, "", 2), 4},
		{"leader epoch and topic id", offsetCommitAt(4), 4},
		{"expire timestamp", offsetCommitAt(1), 1},
		{"zero value: expire timestamp 0 is one", OffsetCommitValue{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, OffsetCommitValueVersion(tc.v))
			b, err := AppendOffsetCommitValue(nil, tc.v)
			require.NoError(t, err)
			require.Equal(t, []byte{0, byte(tc.want)}, b[:2])
		})
	}
}

func TestNewOffsetCommitValue(t *testing.T) {
	require.Equal(t, OffsetCommitValue{Offset: 10, LeaderEpoch: -1, Metadata: "md", CommitTimestamp: 20, ExpireTimestamp: -1},
		NewOffsetCommitValue(10, "md", 20))
}

// TestAppendKeepsDst checks that every encoder appends after what dst holds.
func TestAppendKeepsDst(t *testing.T) {
	prefix := []byte{0xde, 0xad}
	for name, enc := range map[string]func([]byte) ([]byte, error){
		"OffsetCommitKey":    func(d []byte) ([]byte, error) { return AppendOffsetCommitKey(d, goldenOffsetCommitKey) },
		"GroupMetadataKey":   func(d []byte) ([]byte, error) { return AppendGroupMetadataKey(d, GroupMetadataKey{Group: "g"}) },
		"OffsetCommitValue":  func(d []byte) ([]byte, error) { return AppendOffsetCommitValue(d, goldenOffsetCommit) },
		"GroupMetadataValue": func(d []byte) ([]byte, error) { return AppendGroupMetadataValue(d, goldenGroup(3)) },
		"Subscription":       func(d []byte) ([]byte, error) { return AppendSubscription(d, goldenSubscription) },
		"Assignment":         func(d []byte) ([]byte, error) { return AppendAssignment(d, goldenAssignment) },
		"StickyUserData":     func(d []byte) ([]byte, error) { return AppendStickyUserData(d, goldenSticky) },
		"CooperativeSticky":  func(d []byte) ([]byte, error) { return AppendCooperativeStickyUserData(d, 7), nil },
	} {
		alone, err := enc(nil)
		require.NoError(t, err, name)
		after, err := enc(append([]byte(nil), prefix...))
		require.NoError(t, err, name)
		require.Equal(t, append(append([]byte(nil), prefix...), alone...), after, name)
	}
}

func TestParseKeyOtherTypes(t *testing.T) {
	for _, typ := range []int16{9, 17, 24, 1000, -1, math.MinInt16} {
		b := []byte{byte(uint16(typ) >> 8), byte(typ), 0, 1, 'g', 0xff}
		k, err := ParseKey(b)
		require.NoError(t, err, "type %d", typ)
		require.Equal(t, RecordType(typ), k.Type)
		require.False(t, k.Type.Decoded())
		require.Equal(t, b[2:], k.Body)
		require.Equal(t, OffsetCommitKey{}, k.OffsetCommit)
		require.Equal(t, GroupMetadataKey{}, k.GroupMetadata)

		// A value of such a type is passed through, whatever it holds.
		for _, val := range [][]byte{{0, 7, 1, 2, 3}, {9}, {}} {
			v, err := ParseValue(k.Type, val)
			require.NoError(t, err)
			require.Equal(t, k.Type, v.Type)
			require.False(t, v.Tombstone)
			require.Equal(t, val, v.Body)
			if len(val) >= 2 {
				require.Equal(t, int16(7), v.Version)
			} else {
				require.Equal(t, int16(-1), v.Version)
			}
		}
	}
	// Just the type is a valid key of an undecoded type.
	k, err := ParseKey([]byte{0, 9})
	require.NoError(t, err)
	require.Equal(t, RecordType(9), k.Type)
	require.Empty(t, k.Body)
}

func TestRecordTypeString(t *testing.T) {
	require.Equal(t, "LegacyOffsetCommit", TypeLegacyOffsetCommit.String())
	require.Equal(t, "OffsetCommit", TypeOffsetCommit.String())
	require.Equal(t, "GroupMetadata", TypeGroupMetadata.String())
	require.Equal(t, "type 9", RecordType(9).String())
	require.Equal(t, "type -1", RecordType(-1).String())
	for _, typ := range []RecordType{0, 1, 2} {
		require.True(t, typ.Decoded())
	}
}

func TestParseValueTombstone(t *testing.T) {
	for _, typ := range []RecordType{TypeLegacyOffsetCommit, TypeOffsetCommit, TypeGroupMetadata, 3, 99} {
		v, err := ParseValue(typ, nil)
		require.NoError(t, err)
		require.Equal(t, Value{Type: typ, Tombstone: true, Version: -1}, v)
	}
}

// TestTrailingBytesIgnored: Kafka reads a struct from the start of the buffer
// and ignores what follows; so do the decoders.
func TestTrailingBytesIgnored(t *testing.T) {
	extra := []byte{0xca, 0xfe}
	for _, tc := range goldenCases() {
		b := append(readGolden(t, tc.File), extra...)
		got, err := tc.Decode(b)
		require.NoError(t, err, tc.File)
		require.Equal(t, tc.Want, got, tc.File)
	}
}

func TestNullAndEmptyUserData(t *testing.T) {
	for _, ud := range [][]byte{nil, {}, {1}} {
		b, err := AppendSubscription(nil, Subscription{UserData: ud, GenerationID: NoGenerationID})
		require.NoError(t, err)
		s, err := ParseSubscription(b)
		require.NoError(t, err)
		require.Equal(t, ud, s.UserData)
		require.Equal(t, ud == nil, s.UserData == nil)

		b, err = AppendAssignment(nil, Assignment{UserData: ud})
		require.NoError(t, err)
		a, err := ParseAssignment(b)
		require.NoError(t, err)
		require.Equal(t, ud == nil, a.UserData == nil)
	}
	// Non-nullable member bytes: nil is written as empty.
	b, err := AppendGroupMetadataValue(nil, GroupMetadataValue{Members: []MemberMetadata{{}}})
	require.NoError(t, err)
	v, err := ParseGroupMetadataValue(b)
	require.NoError(t, err)
	require.Equal(t, []byte{}, v.Members[0].Subscription)
	require.Equal(t, []byte{}, v.Members[0].Assignment)
}

// TestDecodedBytesAreCopies: decoded byte slices do not alias the input.
func TestDecodedBytesAreCopies(t *testing.T) {
	b := readGolden(t, "group-metadata-value-v3.hex")
	v, err := ParseGroupMetadataValue(b)
	require.NoError(t, err)
	want := goldenGroup(3)
	for i := range b {
		b[i] = 0xee
	}
	require.Equal(t, want, v)
}

// requireVersionsRoundTrip encodes v at every version up to maxVersion and
// checks that parse reads all of it back, at that version, as asRead says
// the version keeps v.
func requireVersionsRoundTrip[V any](t *testing.T, v V, maxVersion int16,
	appendVersion func([]byte, V, int16) ([]byte, error),
	parse func([]byte) (V, int16, int, error),
	asRead func(V, int16) V,
) {
	t.Helper()
	for version := range maxVersion + 1 {
		b, err := appendVersion(nil, v, version)
		require.NoError(t, err)
		got, gotVersion, n, err := parse(b)
		require.NoError(t, err)
		require.Equal(t, version, gotVersion)
		require.Equal(t, len(b), n)
		require.Equal(t, asRead(v, version), got)
	}
}

// TestRoundTripRandom encodes random values at every version and decodes
// them back; the seed is logged so a failure can be replayed.
func TestRoundTripRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	str := func() string {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	nstr := func() *string {
		if rng.IntN(3) == 0 {
			return nil
		}
		return ptr(str())
	}
	byts := func(nullable bool) []byte {
		if nullable && rng.IntN(3) == 0 {
			return nil
		}
		return []byte(str())
	}
	tps := func() []TopicPartitions {
		var out []TopicPartitions
		for range rng.IntN(4) {
			tp := TopicPartitions{Topic: str()}
			for range rng.IntN(5) {
				tp.Partitions = append(tp.Partitions, rng.Int32())
			}
			out = append(out, tp)
		}
		return out
	}
	for range 2000 {
		oc := OffsetCommitValue{Offset: rng.Int64() - math.MaxInt64/2, LeaderEpoch: rng.Int32() - math.MaxInt32/2, Metadata: str(),
			CommitTimestamp: rng.Int64(), ExpireTimestamp: rng.Int64()}
		if rng.IntN(2) == 0 {
			oc.ExpireTimestamp = NoExpireTimestamp
		}
		if rng.IntN(2) == 0 {
			for i := range oc.TopicID {
				oc.TopicID[i] = byte(rng.IntN(256))
			}
		}
		requireVersionsRoundTrip(t, oc, OffsetCommitValueMaxVersion, AppendOffsetCommitValueVersion, parseOffsetCommitValue, offsetCommitAsRead)

		gm := GroupMetadataValue{ProtocolType: str(), Generation: rng.Int32(), Protocol: nstr(), Leader: nstr(), CurrentStateTimestamp: rng.Int64()}
		for range rng.IntN(4) {
			gm.Members = append(gm.Members, MemberMetadata{MemberID: str(), GroupInstanceID: nstr(), ClientID: str(), ClientHost: str(),
				RebalanceTimeout: rng.Int32(), SessionTimeout: rng.Int32(), Subscription: byts(false), Assignment: byts(false)})
		}
		requireVersionsRoundTrip(t, gm, GroupMetadataValueMaxVersion, AppendGroupMetadataValueVersion, parseGroupMetadataValue, groupAsRead)

		sub := Subscription{UserData: byts(true), OwnedPartitions: tps(), GenerationID: rng.Int32(), RackID: nstr()}
		for range rng.IntN(4) {
			sub.Topics = append(sub.Topics, str())
		}
		for version := range int16(ConsumerProtocolVersion + 1) {
			b, err := AppendSubscriptionVersion(nil, sub, version)
			require.NoError(t, err)
			got, err := ParseSubscription(b)
			require.NoError(t, err)
			require.Equal(t, subscriptionAsRead(sub, version), got)
		}

		asg := Assignment{Partitions: tps(), UserData: byts(true)}
		b, err := AppendAssignment(nil, asg)
		require.NoError(t, err)
		gotAsg, err := ParseAssignment(b)
		require.NoError(t, err)
		require.Equal(t, asg, gotAsg)

		st := StickyUserData{PreviousAssignment: tps(), Generation: rng.Int32()}
		b, err = AppendStickyUserData(nil, st)
		require.NoError(t, err)
		gotSt, err := ParseStickyUserData(b)
		require.NoError(t, err)
		require.Equal(t, st, gotSt)
	}
}
