package sharecodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireDecodeError checks that err is a *DecodeError matching ErrInvalid
// and ErrCorrupt.
func requireDecodeError(t testing.TB, err error) *DecodeError {
	t.Helper()
	require.Error(t, err)
	var de *DecodeError
	require.True(t, errors.As(err, &de), "%T %v", err, err)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, err, ErrCorrupt)
	require.NotErrorIs(t, err, ErrTombstone)
	return de
}

// TestEncoderRefuses: what Kafka's format cannot hold fails with
// ErrInvalid, not ErrCorrupt, and appends nothing.
func TestEncoderRefuses(t *testing.T) {
	prefix := []byte("keep")
	for name, k := range map[string]Key{
		"type 2":        {Type: 2, GroupID: "g"},
		"type -1":       {Type: -1, GroupID: "g"},
		"long group id": {Type: TypeShareSnapshot, GroupID: strings.Repeat("g", 32768)},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := AppendKey(prefix, k)
			require.ErrorIs(t, err, ErrInvalid)
			require.NotErrorIs(t, err, ErrCorrupt)
			require.Equal(t, []byte("keep"), got)
		})
	}
	// The longest group id Kafka writes is accepted.
	_, err := AppendKey(nil, Key{Type: TypeShareUpdate, GroupID: strings.Repeat("g", 32767)})
	require.NoError(t, err)
}

// TestDecoderRefuses: malformed keys and values fail with a *DecodeError
// matching ErrInvalid (and ErrUnknownType or ErrUnsupportedVersion where
// they apply), never a panic or a made-up value.
func TestDecoderRefuses(t *testing.T) {
	snap := readKafkaRecord(t, "share-snapshot")
	upd := readKafkaRecord(t, "share-update")
	withVersion := func(b []byte, v int16) []byte {
		c := bytes.Clone(b)
		binary.BigEndian.PutUint16(c, uint16(v))
		return c
	}
	// The snapshot's fixed fields end at byte 2+4+4+4+8+8+8 = 38, where its
	// state batch count is.
	const snapBatches = 38
	batchesOver := func(n uint64) []byte {
		b := bytes.Clone(snap.value[:snapBatches])
		b = binary.AppendUvarint(b, n+1)
		for range n {
			b = append(b, make([]byte, 19)...)
			b = append(b, 0)
		}
		return append(b, 0)
	}
	tagsOver := func(n uint64) []byte {
		// The empty snapshot ends with 00 (no batches) 00 (no tags).
		b := bytes.Clone(readKafkaRecord(t, "share-snapshot-empty").value)
		b = binary.AppendUvarint(b[:len(b)-1], n)
		for range n {
			b = append(b, 9, 0) // unknown tag 9, empty
		}
		return b
	}
	for name, c := range map[string]struct {
		typ         RecordType // key when -1
		b           []byte
		unsupported bool
		unknownType bool
	}{
		"empty key":                        {typ: -1, b: []byte{}},
		"key of one byte":                  {typ: -1, b: []byte{0}},
		"key of type 2":                    {typ: -1, b: append([]byte{0, 2}, snap.key[2:]...), unknownType: true},
		"key of type -1":                   {typ: -1, b: append([]byte{0xff, 0xff}, snap.key[2:]...), unknownType: true},
		"key cut in its topic":             {typ: -1, b: snap.key[:20]},
		"key cut in its partition":         {typ: -1, b: snap.key[:len(snap.key)-1]},
		"key with a null group":            {typ: -1, b: append([]byte{0, 0, 0xff, 0xff}, make([]byte, 20)...)},
		"key with a group past the end":    {typ: -1, b: []byte{0, 1, 0x7f, 0xff, 'g'}},
		"empty snapshot value":             {typ: TypeShareSnapshot, b: []byte{}},
		"snapshot version 1":               {typ: TypeShareSnapshot, b: withVersion(snap.value, 1), unsupported: true},
		"snapshot version -1":              {typ: TypeShareSnapshot, b: withVersion(snap.value, -1), unsupported: true},
		"update version 1":                 {typ: TypeShareUpdate, b: withVersion(upd.value, 1), unsupported: true},
		"snapshot cut":                     {typ: TypeShareSnapshot, b: snap.value[:len(snap.value)-1]},
		"snapshot cut in a batch":          {typ: TypeShareSnapshot, b: snap.value[:snapBatches+30]},
		"update cut":                       {typ: TypeShareUpdate, b: upd.value[:len(upd.value)-1]},
		"update without batches":           {typ: TypeShareUpdate, b: upd.value[:18]},
		"null state batches":               {typ: TypeShareSnapshot, b: append(bytes.Clone(snap.value[:snapBatches]), 0, 0)},
		"batch count past the end":         {typ: TypeShareSnapshot, b: batchesOver(1000)[:snapBatches+2+999*20]},
		"batch count over Kafka's limit":   {typ: TypeShareSnapshot, b: batchesOver(1_000_001)},
		"tagged fields over Kafka's limit": {typ: TypeShareSnapshot, b: tagsOver(10_001)},
		"delivery complete count of 2 bytes": {typ: TypeShareUpdate,
			b: append(bytes.Clone(upd.value[:len(upd.value)-1]), 1, 0, 2, 0, 7)},
		"delivery complete count of 8 bytes": {typ: TypeShareSnapshot,
			b: append(bytes.Clone(snap.value[:len(snap.value)-7]), 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7)},
		"tag size past the end": {typ: TypeShareUpdate, b: append(bytes.Clone(upd.value[:len(upd.value)-1]), 1, 5, 9, 0)},
		"varint of 6 bytes":     {typ: TypeShareUpdate, b: append(bytes.Clone(upd.value[:18]), 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			switch c.typ {
			case -1:
				var k Key
				k, err = DecodeKey(c.b)
				require.Equal(t, Key{}, k)
			case TypeShareSnapshot:
				var v Snapshot
				v, err = DecodeSnapshot(c.b)
				require.Zero(t, v.StateBatches)
			default:
				var v Update
				v, err = DecodeUpdate(c.b)
				require.Zero(t, v.StateBatches)
			}
			de := requireDecodeError(t, err)
			if strings.Contains(name, "limit") {
				require.Contains(t, de.Reason, "limit")
			}
			require.Equal(t, c.unsupported, errors.Is(err, ErrUnsupportedVersion), "%v", err)
			require.Equal(t, c.unknownType, errors.Is(err, ErrUnknownType), "%v", err)
		})
	}
}

// TestDecoderAcceptsWhatKafkaAccepts: Kafka's limits themselves, unknown
// tagged fields (skipped by size) and bytes after the key or value
// (ignored, as Kafka ignores them) decode.
func TestDecoderAcceptsWhatKafkaAccepts(t *testing.T) {
	snap := readKafkaRecord(t, "share-snapshot")
	want, err := DecodeSnapshot(snap.value)
	require.NoError(t, err)

	k, err := DecodeKey(append(bytes.Clone(snap.key), 1, 2, 3))
	require.NoError(t, err)
	require.Equal(t, kafkaRecords()["share-snapshot"].key, k)
	v, err := DecodeSnapshot(append(bytes.Clone(snap.value), 0xff))
	require.NoError(t, err)
	require.Equal(t, want, v)

	// Tag 0 and an unknown tag 7 of three bytes.
	b := append(bytes.Clone(snap.value[:len(snap.value)-7]), 2, 7, 3, 1, 2, 3, 0, 4, 0, 0, 0, 7)
	v, err = DecodeSnapshot(b)
	require.NoError(t, err)
	require.Equal(t, want, v)

	// 1,000,000 state batches and 10,000 empty tagged fields: Kafka's
	// limits.
	b = bytes.Clone(snap.value[:38])
	b = binary.AppendUvarint(b, 1_000_000+1)
	for range 1_000_000 {
		b = append(b, make([]byte, 19)...)
		b = append(b, 0)
	}
	v, err = DecodeSnapshot(append(b, 0))
	require.NoError(t, err)
	require.Len(t, v.StateBatches, 1_000_000)

	// 10,000 empty tagged fields.
	empty := readKafkaRecord(t, "share-snapshot-empty").value
	b = binary.AppendUvarint(bytes.Clone(empty[:len(empty)-1]), 10_000)
	for range 10_000 {
		b = append(b, 9, 0)
	}
	u, err := DecodeSnapshot(b)
	require.NoError(t, err)
	require.Equal(t, kafkaRecords()["share-snapshot-empty"].value, u)
}

func TestTombstone(t *testing.T) {
	_, err := DecodeSnapshot(nil)
	require.ErrorIs(t, err, ErrTombstone)
	require.NotErrorIs(t, err, ErrInvalid)
	_, err = DecodeUpdate(nil)
	require.ErrorIs(t, err, ErrTombstone)
	require.NotErrorIs(t, err, ErrCorrupt)
}
