package consumer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
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
	d, err := log.Open(context.Background(), b.TempDir(), log.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(context.Background(), "t", 1, nil); err != nil {
		b.Fatal(err)
	}
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
			cfg := DefaultConfig()
			cfg.AutoOffsetReset = OffsetResetEarliest
			cfg.MaxPollRecords = 2000
			cfg.IsolationLevel = level
			c, err := New(d, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(context.Background())
			if err := c.Assign([]TopicPartition{{Topic: "t", Partition: 0}}); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.SetBytes(100)
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; {
				recs, err := c.Poll(ctx)
				if err != nil {
					b.Fatal(err)
				}
				n += len(recs)
				if len(recs) > 0 && recs[len(recs)-1].Offset == last {
					b.StopTimer()
					if err := c.SeekToBeginning(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
