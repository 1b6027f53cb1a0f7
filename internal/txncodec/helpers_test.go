package txncodec

import (
	"errors"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// readGolden returns the bytes of testdata/golden/name.
func readGolden(t testing.TB, name string) []byte { return golden.Read(t, name) }

// parseHex decodes annotated hex (package golden).
func parseHex(raw []byte) ([]byte, error) { return golden.ParseHex(raw) }

// h decodes inline hex with spaces.
func h(s string) []byte {
	b, err := parseHex([]byte(s))
	if err != nil {
		panic(err)
	}
	return b
}

func requireDecodeError(t testing.TB, err error) *DecodeError {
	t.Helper()
	require.ErrorIs(t, err, ErrCorrupt)
	var de *DecodeError
	require.True(t, errors.As(err, &de), "%v is not a *DecodeError", err)
	return de
}

// goldenOngoing is the transaction of the golden files.
func goldenOngoing() Value {
	v := NewValue(4000, 3, 60000, 1700000000000)
	v.TransactionStatus = StatusOngoing
	v.TransactionPartitions = []TopicPartitions{
		{Topic: "orders", Partitions: []int32{0, 2}},
		{Topic: "payments", Partitions: []int32{1}},
	}
	v.TransactionStartTimestampMs = 1699999990000
	return v
}

func goldenTagged() Value {
	v := goldenOngoing()
	v.PreviousProducerID = 3999
	v.NextProducerID = 4001
	v.ClientTransactionVersion = 2
	v.NextProducerEpoch = 0
	return v
}

func goldenEmpty() Value {
	v := NewValue(4000, 0, 60000, 1700000000000)
	v.ClientTransactionVersion = 2
	return v
}
