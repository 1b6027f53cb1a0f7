package logtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/producer"
)

// BenchmarkOpenProduceConsume1000 is a unit test's whole use of a Broker:
// open it on the memory filesystem, produce 1,000 keyed 100-byte records to a
// one-partition topic through the shared producer (acks=all, idempotent),
// read them back with ConsumeAll, and close. The goal is under 20 ms.
func BenchmarkOpenProduceConsume1000(b *testing.B) {
	const n = 1000
	recs := make([]*producer.Record, n)
	for i := range recs {
		recs[i] = logtest.KV(fmt.Sprintf("key-%d", i), fmt.Sprintf("%0100d", i))
	}
	b.ReportAllocs()
	b.SetBytes(n * 100)
	for b.Loop() {
		br := logtest.New(b)
		br.Produce("events", recs...)
		if got := len(br.ConsumeAll("events")); got != n {
			b.Fatalf("consumed %d records, want %d", got, n)
		}
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendAndWait is one record sent through a producer and waited
// for, as a test that checks each record's outcome does: through the
// Broker's shared producer (linger.ms 0) and through one with
// producer.DefaultConfig() (linger.ms 5), on the same Broker.
func BenchmarkSendAndWait(b *testing.B) {
	br := logtest.New(b, logtest.Topics("events"))
	dflt, err := producer.New(br.Dir(), producer.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = dflt.Close(context.Background()) })
	for _, c := range []struct {
		name string
		p    *producer.Producer
	}{{"logtest", br.Producer()}, {"DefaultConfig", dflt}} {
		b.Run(c.name, func(b *testing.B) {
			r := logtest.KV("k", "v")
			r.Topic = "events"
			for b.Loop() {
				f, err := c.p.Send(context.Background(), r, nil)
				if err == nil {
					_, err = f.Wait(context.Background())
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
