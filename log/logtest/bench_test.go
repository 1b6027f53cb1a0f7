package logtest_test

import (
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
