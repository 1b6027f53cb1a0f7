package txncodec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPartitionFor(t *testing.T) {
	// Java: "".hashCode() == 0; "a".hashCode() == 97; "orders-txn" checked
	// by the rule itself: h = 31*h + c in int32.
	require.Equal(t, int32(0), PartitionFor("", 50))
	require.Equal(t, int32(97%50), PartitionFor("a", 50))
	var h int32
	for _, c := range "orders-txn" {
		h = 31*h + c
	}
	if h < 0 {
		h = -h
	}
	require.Equal(t, h%50, PartitionFor("orders-txn", 50))
	require.Equal(t, int32(-1), PartitionFor("x", 0))
}

func TestTombstone(t *testing.T) {
	_, err := ParseValue(nil)
	require.ErrorIs(t, err, ErrTombstone)
	require.NotErrorIs(t, err, ErrCorrupt)

	// An empty non-nil value is not a tombstone.
	_, err = ParseValue([]byte{})
	de := requireDecodeError(t, err)
	require.Equal(t, 0, de.Offset)
}

func TestUnsupportedVersions(t *testing.T) {
	_, err := ParseKey(h("00 01 00 00"))
	requireDecodeError(t, err)
	require.ErrorIs(t, err, ErrUnsupportedVersion)

	for _, b := range [][]byte{h("00 02"), h("ff ff")} {
		_, err := ParseValue(b)
		requireDecodeError(t, err)
		require.ErrorIs(t, err, ErrUnsupportedVersion)
	}

	dst := []byte{1, 2}
	out, err := AppendValueVersion(dst, goldenOngoing(), 2)
	require.ErrorIs(t, err, ErrUnsupportedVersion)
	require.Equal(t, dst, out)
}

func TestDecodeErrors(t *testing.T) {
	v1 := readGolden(t, "value-v1.hex")
	v0 := readGolden(t, "value-v0.hex")
	cases := []struct {
		name   string
		b      []byte
		what   string
		offset int
	}{
		{"key truncated", h("00 00 00 05 61"), "TransactionLogKey v0: transactionalId", 2},
		{"key null", h("00 00 ff ff"), "TransactionLogKey v0: transactionalId", 2},
		{"value truncated", v1[:16], "TransactionLogValue v1: transactionStatus", 16},
		{"bad status", append(append([]byte{}, v1[:16]...), append([]byte{8}, v1[17:]...)...),
			"TransactionLogValue v1: transactionStatus", 16},
		// A count of 2^31-2 partitions elements in a short input must fail
		// before allocating.
		{"lying v0 count", append(append([]byte{}, v0[:17]...), 0x7f, 0xff, 0xff, 0xfe),
			"TransactionLogValue v0: transactionPartitions", 17},
		{"lying v1 count", append(append([]byte{}, v1[:17]...), 0xff, 0xff, 0xff, 0xff, 0x07),
			"TransactionLogValue v1: transactionPartitions", 17},
		{"lying partition ids", append(append([]byte{}, v0[:29]...), 0x10, 0, 0, 0),
			"TransactionLogValue v0: transactionPartitions[0].partitionIds", 29},
		{"negative count", append(append([]byte{}, v0[:17]...), 0xff, 0xff, 0xff, 0xfe),
			"TransactionLogValue v0: transactionPartitions", 17},
		{"lying tag count", append(append([]byte{}, v1[:len(v1)-1]...), 0x7f),
			"TransactionLogValue v1: taggedFields", len(v1) - 1},
		{"tag size wrong", append(append([]byte{}, v1[:len(v1)-1]...), 0x01, 0x02, 0x01, 0x00, 0x02),
			"TransactionLogValue v1: clientTransactionVersion", len(v1) + 2},
		{"varint too long", append(append([]byte{}, v1[:len(v1)-1]...), 0x80, 0x80, 0x80, 0x80, 0x80, 0x01),
			"TransactionLogValue v1: taggedFields", len(v1) - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if strings.HasPrefix(c.name, "key") {
				_, err = ParseKey(c.b)
			} else {
				_, err = ParseValue(c.b)
			}
			de := requireDecodeError(t, err)
			require.Equal(t, c.what, de.What, de.Error())
			require.Equal(t, c.offset, de.Offset, de.Error())
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	dst := []byte{9}
	check := func(out []byte, err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrInvalid)
		require.NotErrorIs(t, err, ErrCorrupt)
		require.Equal(t, dst, out)
	}
	check(AppendKey(dst, Key{TransactionalID: strings.Repeat("x", 32768)}))

	v := goldenOngoing()
	v.TransactionPartitions[0].Topic = strings.Repeat("x", 32768)
	check(AppendValue(dst, v))

	v = goldenOngoing()
	v.TransactionStatus = 8
	check(AppendValue(dst, v))

	// Version 0 has no tagged fields: non-defaults are refused.
	check(AppendValueVersion(dst, goldenTagged(), 0))
	check(AppendValueVersion(dst, goldenEmpty(), 0))
	check(AppendValueVersion(dst, Value{}, 0))
}

func TestRoundTrip(t *testing.T) {
	values := []Value{
		goldenOngoing(), goldenTagged(), goldenEmpty(),
		NewValue(1, 2, 3, 4),
		// A non-null empty partitions array is kept apart from null.
		func() Value { v := NewValue(1, 2, 3, 4); v.TransactionPartitions = []TopicPartitions{}; return v }(),
		func() Value {
			v := goldenOngoing()
			v.TransactionPartitions = append(v.TransactionPartitions, TopicPartitions{Topic: ""})
			return v
		}(),
	}
	for i, v := range values {
		for version := int16(0); version <= ValueMaxVersion; version++ {
			b, err := AppendValueVersion([]byte{0xaa}, v, version)
			if version == 0 && v.ClientTransactionVersion != 0 {
				require.ErrorIs(t, err, ErrInvalid)
				continue
			}
			require.NoError(t, err, i)
			require.Equal(t, byte(0xaa), b[0])
			got, err := ParseValue(b[1:])
			require.NoError(t, err, i)
			require.Equal(t, v, got, i)
		}
	}
}

func TestTrailingBytesIgnored(t *testing.T) {
	b := append(readGolden(t, "value-v0.hex"), 1, 2, 3)
	v, err := ParseValue(b)
	require.NoError(t, err)
	require.Equal(t, goldenOngoing(), v)
	k, err := ParseKey(append(readGolden(t, "key-v0.hex"), 0))
	require.NoError(t, err)
	require.Equal(t, "orders-txn", k.TransactionalID)
}
