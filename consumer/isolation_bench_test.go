package consumer

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPollTransactional polls 100-byte records of one partition
// written as committed transactions of 1,000 records (one batch, then the
// COMMIT marker), from a directory on the real filesystem (page cache), at
// each isolation level. One op is one record. With aborts=true every
// fourth transaction is aborted, so that read_committed fetches load
// aborted transactions from the .txnindex and skip their batches (the
// skipped records are not counted).
func BenchmarkPollTransactional(b *testing.B) {
	for _, aborts := range []bool{false, true} {
		b.Run(fmt.Sprintf("aborts=%v", aborts), func(b *testing.B) { benchPollTransactional(b, aborts) })
	}
}

func benchPollTransactional(b *testing.B, aborts bool) {
	d := benchDir(b)
	const txns, perTxn = 2_000, 1_000
	w := newTxnWriter(b, d, "t", 0)
	values := make([]string, perTxn)
	for i := range values {
		values[i] = fmt.Sprintf("%0100d", i)
	}
	ts := time.Now().UnixMilli()
	for i := range txns {
		w.batch("A", ts, values...)
		w.end("A", !aborts || i%4 != 3)
	}
	last := w.l.LogEndOffset() - 2 // the last record, before the last marker (the last transaction commits)
	if aborts {
		w.batch("A", ts, values...)
		w.end("A", true)
		last = w.l.LogEndOffset() - 2
	}
	for _, level := range []IsolationLevel{ReadUncommitted, ReadCommitted} {
		b.Run(level.String(), func(b *testing.B) {
			pollFromStart(b, d, level, last)
		})
	}
}
