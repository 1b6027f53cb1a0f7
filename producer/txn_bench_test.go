package producer

import (
	"context"
	"fmt"
	"testing"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// BenchmarkTransaction measures whole transactions of 1, 100 and 10,000
// 100-byte records to one partition (Begin, Send×n, Commit: the
// coordinator's state records, AddPartitions, the COMMIT marker), against
// the same records sent by an idempotent producer without a transaction
// (Send×n, Flush). The directory is on the memory filesystem, so fsync
// costs nothing and the figures are the protocol's own cost. One op is one
// transaction (or one flushed group of n records); records/s is reported.
func BenchmarkTransaction(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		for _, txn := range []bool{true, false} {
			name := fmt.Sprintf("records=%d/idempotent", n)
			if txn {
				name = fmt.Sprintf("records=%d/transactional", n)
			}
			b.Run(name, func(b *testing.B) { benchTransaction(b, n, txn) })
		}
	}
}

func benchTransaction(b *testing.B, n int, txn bool) {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	d, err := log.Open(ctx, "/data", cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "t", 1, map[string]string{"segment.bytes": fmt.Sprint(1 << 30)}); err != nil {
		b.Fatal(err)
	}
	pcfg := DefaultConfig()
	pcfg.BatchSize = 256 << 10 // linger.ms stays 5: Commit and Flush send at once
	if txn {
		pcfg.TransactionalID = "bench"
	}
	p, err := New(d, pcfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	if txn {
		if err := p.InitTransactions(ctx); err != nil {
			b.Fatal(err)
		}
	}
	zero := int32(0)
	r := &Record{Topic: "t", Partition: &zero, Value: make([]byte, 100)}
	b.SetBytes(int64(100 * n))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if txn {
			if err := p.BeginTransaction(); err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			if _, err := p.Send(ctx, r, nil); err != nil {
				b.Fatal(err)
			}
		}
		if txn {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.Flush(ctx)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txns/s")
}
