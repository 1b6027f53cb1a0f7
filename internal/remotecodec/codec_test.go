package remotecodec

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRoundTrip proves every record decodes to itself after encoding, at
// every version it has, whether handed over as a value or a pointer.
func TestRoundTrip(t *testing.T) {
	withBLE := segmentCopyStarted()
	withBLE.BrokerLeaderEpoch = -5
	cases := []struct {
		name    string
		rec     Record
		version int16
	}{
		{"segment", segmentCopyStarted(), 0},
		{"segment txn index empty", segmentTxnIndexEmpty(), 0},
		{"segment v1 no broker leader epoch", segmentTxnIndexEmpty(), 1},
		{"segment v1 broker leader epoch", withBLE, 1},
		{"update", goldenRecords()["update-copy-finished"], 0},
		{"delete", goldenRecords()["delete-partition-marked"], 0},
		{"snapshot", goldenRecords()["snapshot"], 0},
		{"snapshot no custom", goldenRecords()["snapshot-no-custom"], 0},
		{"long name and custom metadata", RemoteLogSegmentMetadataUpdateRecord{
			RemoteLogSegmentID: RemoteLogSegmentID{TopicIdPartition: TopicIdPartition{Name: strings.Repeat("n", 32767), Partition: -1}},
			CustomMetadata:     make([]byte, 70000), RemoteLogSegmentState: DeleteSegmentFinished}, 0},
		{"many epochs", RemoteLogSegmentMetadataRecord{EndOffset: 1 << 40, SegmentLeaderEpochs: func() []SegmentLeaderEpoch {
			es := make([]SegmentLeaderEpoch, 300)
			for i := range es {
				es[i] = SegmentLeaderEpoch{LeaderEpoch: int32(i), Offset: int64(i) << 20}
			}
			return es
		}()}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := AppendValueVersion([]byte{0xaa}, c.rec, c.version)
			require.NoError(t, err)
			require.Equal(t, byte(0xaa), b[0], "appends to dst")
			got, version, err := parseValue(b[1:])
			require.NoError(t, err)
			require.Equal(t, c.version, version)
			require.Equal(t, c.rec, got)

			ptr, err := AppendValueVersion(nil, pointerTo(c.rec), c.version)
			require.NoError(t, err)
			require.Equal(t, b[1:], ptr)
			if c.version == DefaultVersion {
				def, err := AppendValue(nil, c.rec)
				require.NoError(t, err)
				require.Equal(t, b[1:], def)
			}
		})
	}
}

// pointerTo returns a pointer to a copy of rec.
func pointerTo(rec Record) Record {
	switch r := rec.(type) {
	case RemoteLogSegmentMetadataRecord:
		return &r
	case RemoteLogSegmentMetadataUpdateRecord:
		return &r
	case RemotePartitionDeleteMetadataRecord:
		return &r
	case RemoteLogSegmentMetadataSnapshotRecord:
		return &r
	}
	panic("unknown record")
}

// TestFraming proves the value starts with frame version 1, the apiKey and
// the version as unsigned varints, as AbstractApiMessageSerde writes them.
func TestFraming(t *testing.T) {
	for name, rec := range goldenRecords() {
		if name == "segment-v1" {
			continue
		}
		b, err := AppendValue(nil, rec)
		require.NoError(t, err, name)
		require.Equal(t, []byte{FrameVersion, byte(rec.APIKey()), 0}, b[:3], name)
	}
	b, err := AppendValueVersion(nil, segmentCopyStarted(), 1)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 0, 1}, b[:3])
}

// TestAppendInvalid proves the encoders refuse, with ErrInvalid and
// nothing appended, every record Kafka could not build or would fail to
// read back.
func TestAppendInvalid(t *testing.T) {
	seg := func(f func(*RemoteLogSegmentMetadataRecord)) Record {
		s := segmentCopyStarted()
		f(&s)
		return s
	}
	snap := goldenRecords()["snapshot"].(RemoteLogSegmentMetadataSnapshotRecord)
	snap.SegmentLeaderEpochs = []SegmentLeaderEpoch{}
	cases := []struct {
		name string
		rec  Record
		want string
	}{
		{"nil", nil, "nil record"},
		{"nil pointer", (*RemoteLogSegmentMetadataUpdateRecord)(nil), "nil record"},
		{"segment state", seg(func(s *RemoteLogSegmentMetadataRecord) { s.RemoteLogSegmentState = 4 }), "remoteLogSegmentState"},
		{"update state", RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentState: -1}, "remoteLogSegmentState"},
		{"snapshot state", RemoteLogSegmentMetadataSnapshotRecord{RemoteLogSegmentState: 9,
			SegmentLeaderEpochs: []SegmentLeaderEpoch{{}}}, "remoteLogSegmentState"},
		{"delete state", RemotePartitionDeleteMetadataRecord{RemotePartitionDeleteState: 3}, "remotePartitionDeleteState"},
		{"negative start offset", seg(func(s *RemoteLogSegmentMetadataRecord) { s.StartOffset = -1 }), "startOffset"},
		{"end before start", seg(func(s *RemoteLogSegmentMetadataRecord) { s.EndOffset = 1199 }), "endOffset"},
		{"no epochs", seg(func(s *RemoteLogSegmentMetadataRecord) { s.SegmentLeaderEpochs = nil }), "segmentLeaderEpochs"},
		{"snapshot no epochs", snap, "segmentLeaderEpochs"},
		{"broker leader epoch at v0", seg(func(s *RemoteLogSegmentMetadataRecord) { s.BrokerLeaderEpoch = 1 }), "brokerLeaderEpoch"},
		{"long name", RemotePartitionDeleteMetadataRecord{TopicIdPartition: TopicIdPartition{Name: strings.Repeat("n", 32768)}},
			"topicIdPartition.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := []byte{1, 2, 3}
			out, err := AppendValue(dst, c.rec)
			require.ErrorIs(t, err, ErrInvalid)
			require.NotErrorIs(t, err, ErrCorrupt)
			require.Contains(t, err.Error(), c.want)
			require.True(t, strings.HasPrefix(err.Error(), "remotecodec: "), err.Error())
			require.Equal(t, []byte{1, 2, 3}, out)
		})
	}
}

// TestAppendUnsupportedVersion proves a version the record's schema lacks
// is refused with ErrUnsupportedVersion and nothing appended.
func TestAppendUnsupportedVersion(t *testing.T) {
	for _, c := range []struct {
		rec     Record
		version int16
	}{
		{segmentCopyStarted(), 2},
		{segmentCopyStarted(), -1},
		{goldenRecords()["update-copy-finished"], 1},
		{goldenRecords()["delete-partition-marked"], 1},
		{goldenRecords()["snapshot"], 1},
	} {
		out, err := AppendValueVersion([]byte{9}, c.rec, c.version)
		require.ErrorIs(t, err, ErrUnsupportedVersion, "%T v%d", c.rec, c.version)
		require.NotErrorIs(t, err, ErrInvalid)
		require.Equal(t, []byte{9}, out)
	}
}

// TestParseErrors proves each kind of bad input fails with a *DecodeError
// naming the field and byte where it broke, matching the right sentinels.
func TestParseErrors(t *testing.T) {
	update := readGolden(t, "update-delete-started.hex")
	seg := readGolden(t, "segment-copy-started.hex")
	end := func(b []byte, tail string) []byte { return append(append([]byte{}, b[:len(b)-1]...), h(tail)...) }
	cases := []struct {
		name        string
		b           []byte
		what        string
		offset      int
		unsupported bool
		unknownKey  bool
	}{
		{"nil", nil, "RemoteLogMetadata: frameVersion", 0, false, false},
		{"empty", []byte{}, "RemoteLogMetadata: frameVersion", 0, false, false},
		{"frame version 0", h("00 01 00"), "RemoteLogMetadata: frameVersion", 0, true, false},
		{"frame version 2", h("02 01 00"), "RemoteLogMetadata: frameVersion", 0, true, false},
		{"frame version overlong varint", h("ff ff ff ff ff 01"), "RemoteLogMetadata: frameVersion", 0, false, false},
		{"no apiKey", h("01"), "RemoteLogMetadata: apiKey", 1, false, false},
		{"apiKey 4", h("01 04 00"), "RemoteLogMetadata: apiKey", 1, false, true},
		{"apiKey huge", h("01 ff ff ff ff 0f 00"), "RemoteLogMetadata: apiKey", 1, false, true},
		{"update version 1", h("01 01 01"), "RemoteLogSegmentMetadataUpdateRecord: version", 2, true, false},
		{"segment version 2", h("01 00 02"), "RemoteLogSegmentMetadataRecord: version", 2, true, false},
		{"version past int16", h("01 00 80 80 02"), "RemoteLogSegmentMetadataRecord: version", 2, true, false},
		{"trailing byte", append(append([]byte{}, update...), 0), "RemoteLogSegmentMetadataUpdateRecord v0", len(update), false, false},
		{"unknown state", end(update[:len(update)-1], "09 00"), "RemoteLogSegmentMetadataUpdateRecord v0: remoteLogSegmentState",
			len(update) - 2, false, false},
		{"tag 0 of two bytes", end(seg, "01 00 02 01 01"), "RemoteLogSegmentMetadataRecord v0: txnIndexEmpty", len(seg) + 2, false, false},
		{"lying tag count", end(seg, "7f"), "RemoteLogSegmentMetadataRecord v0: taggedFields", len(seg) - 1, false, false},
		{"lying tag size", end(seg, "01 09 7f 00"), "RemoteLogSegmentMetadataRecord v0: taggedFields", len(seg) + 1, false, false},
		{"null name", h("01 02 00 00"), "RemotePartitionDeleteMetadataRecord v0: topicIdPartition.name", 3, false, false},
		{"name past the end", h("01 02 00 09 6f 72"), "RemotePartitionDeleteMetadataRecord v0: topicIdPartition.name", 3, false, false},
		{"short uuid", h("01 02 00 02 74 00 01"), "RemotePartitionDeleteMetadataRecord v0: topicIdPartition.id", 5, false, false},
		// The epochs array of segment-copy-started starts at byte 84.
		{"lying epoch count", append(append([]byte{}, seg[:84]...), h("ff ff ff ff 07")...),
			"RemoteLogSegmentMetadataRecord v0: segmentLeaderEpochs", 84, false, false},
		{"null epochs", append(append([]byte{}, seg[:84]...), 0), "RemoteLogSegmentMetadataRecord v0: segmentLeaderEpochs", 84, false, false},
		{"empty epochs", append(append([]byte{}, seg[:84]...), 1), "RemoteLogSegmentMetadataRecord v0: segmentLeaderEpochs", 84, false, false},
		{"lying epoch tag count", append(append([]byte{}, seg[:97]...), append([]byte{0x7f}, seg[98:]...)...),
			"RemoteLogSegmentMetadataRecord v0: segmentLeaderEpochs[0].taggedFields", 97, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := ParseValue(c.b)
			require.Nil(t, rec)
			de := requireDecodeError(t, err)
			require.Equal(t, c.what, de.What)
			require.Equal(t, c.offset, de.Offset, de.Error())
			require.Equal(t, c.unsupported, errors.Is(err, ErrUnsupportedVersion), de.Error())
			require.Equal(t, c.unknownKey, errors.Is(err, ErrUnknownAPIKey), de.Error())
			require.NotErrorIs(t, err, ErrInvalid)
			require.True(t, strings.HasPrefix(err.Error(), "remotecodec: corrupt "), err.Error())
		})
	}
}

// TestEveryPrefixFails proves no truncated golden value decodes, and none
// panics: each length and count is checked against the bytes present.
func TestEveryPrefixFails(t *testing.T) {
	for name := range goldenRecords() {
		b := readGolden(t, name+".hex")
		for n := range len(b) {
			_, err := ParseValue(b[:n])
			requireDecodeError(t, err)
		}
	}
}

// TestBrokerLeaderEpochOnlyInVersion1 proves tag 1 is BrokerLeaderEpoch at
// version 1 only: at version 0 it is an unknown tag, skipped, as Kafka's
// generated code for version 0 skips it.
func TestBrokerLeaderEpochOnlyInVersion1(t *testing.T) {
	v1 := readGolden(t, "segment-v1.hex")
	require.Equal(t, byte(1), v1[2])
	v0 := append([]byte{}, v1...)
	v0[2] = 0
	rec, err := ParseValue(v0)
	require.NoError(t, err)
	require.Equal(t, segmentCopyStarted(), rec)

	bad := append(append([]byte{}, v1[:len(v1)-4]...), 0, 0, 7) // tag 1 of 3 bytes
	bad[len(bad)-4] = 3
	_, err = ParseValue(bad)
	de := requireDecodeError(t, err)
	require.Equal(t, "RemoteLogSegmentMetadataRecord v1: brokerLeaderEpoch", de.What)
}

// TestStateNames proves the states print with Kafka's enum names.
func TestStateNames(t *testing.T) {
	require.Equal(t, "COPY_SEGMENT_STARTED", CopySegmentStarted.String())
	require.Equal(t, "DELETE_SEGMENT_FINISHED", DeleteSegmentFinished.String())
	require.Equal(t, "RemoteLogSegmentState(4)", RemoteLogSegmentState(4).String())
	require.Equal(t, "DELETE_PARTITION_MARKED", DeletePartitionMarked.String())
	require.Equal(t, "DELETE_PARTITION_FINISHED", DeletePartitionFinished.String())
	require.Equal(t, "RemotePartitionDeleteState(-1)", RemotePartitionDeleteState(-1).String())
	require.True(t, CopySegmentFinished.Valid())
	require.False(t, RemoteLogSegmentState(4).Valid())
	require.False(t, RemotePartitionDeleteState(3).Valid())
}
