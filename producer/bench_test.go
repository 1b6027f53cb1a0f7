package producer

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// BenchmarkSend sends 100-byte records from one goroutine to one partition
// of a directory on the real filesystem (page cache), through the whole
// producer: accumulator, buffer pool, sender, log append. One op is one
// record; allocs/op is per record. The "defaults" cases are what a user
// gets: Kafka's batch.size (16384) and linger.ms (5), a callback per
// record; the others batch 256 KiB without callbacks.
func BenchmarkSend(b *testing.B) {
	cases := []struct {
		name     string
		codec    record.Compression
		acks     Acks
		defaults bool
	}{
		{"none/acks=1", record.None, AcksLeader, false},
		{"lz4/acks=1", record.LZ4, AcksLeader, false},
		{"none/acks=all", record.None, AcksAll, false},
		{"defaults/none/acks=1", record.None, AcksLeader, true},
		{"defaults/lz4/acks=1", record.LZ4, AcksLeader, true},
		{"defaults/zstd/acks=1", record.Zstd, AcksLeader, true},
		{"defaults/none/acks=all", record.None, AcksAll, true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			d, err := log.Open(context.Background(), b.TempDir(), log.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			if _, err := d.CreateTopic(context.Background(), "bench", 1, map[string]string{"segment.bytes": fmt.Sprint(512 << 20)}); err != nil {
				b.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.Acks = tc.acks
			cfg.EnableIdempotence = tc.acks == AcksAll
			cfg.CompressionType = tc.codec
			var cb Callback
			var acked atomic.Int64
			if tc.defaults {
				cb = func(_ RecordMetadata, err error) {
					if err == nil {
						acked.Add(1)
					}
				}
			} else {
				cfg.BatchSize = 256 << 10
				cfg.Linger = 5 * time.Millisecond
			}
			p, err := New(d, cfg)
			if err != nil {
				b.Fatal(err)
			}
			r := &Record{Topic: "bench", Value: make([]byte, 100)}
			ctx := context.Background()
			b.SetBytes(100)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := p.Send(ctx, r, cb); err != nil {
					b.Fatal(err)
				}
			}
			// Close waits for the sender to append (and, with acks=all,
			// fsync) what is still buffered: the rate counts it.
			if err := p.Close(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			if st := p.Stats(); st.Errors > 0 {
				b.Fatal(st.Errors, "errors")
			}
			if cb != nil && acked.Load() != int64(b.N) {
				b.Fatalf("%d records acknowledged of %d", acked.Load(), b.N)
			}
		})
	}
}
