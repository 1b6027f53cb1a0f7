package txncodec

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
)

// readGolden returns the bytes of testdata/golden/name.
func readGolden(t testing.TB, name string) []byte { return golden.Read(t, name) }

// h decodes inline hex with spaces.
func h(s string) []byte { return golden.Hex(s) }

// requireDecodeError checks that err is a *DecodeError matching ErrCorrupt
// and returns it.
func requireDecodeError(t testing.TB, err error) *DecodeError {
	t.Helper()
	return golden.RequireError[*DecodeError](t, err, ErrCorrupt)
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
