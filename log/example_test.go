package log_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// Open a directory, create a topic, append a batch durably and read it back.
func Example() {
	dir, _ := os.MkdirTemp("", "kafkalite-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "orders", 3, map[string]string{"retention.ms": "86400000"}); err != nil {
		panic(err)
	}
	p, _ := d.Partition("orders", 0)

	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	_ = b.Append(time.Now().UnixMilli(), []byte("order-1"), []byte(`{"total":"9.99"}`), nil)
	batch, _ := b.Build()
	res, err := p.AppendDurable(ctx, batch)
	if err != nil {
		panic(err)
	}
	fmt.Println("appended at offset", res.BaseOffset)

	_, err = p.ReadRecords(0, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
		fmt.Printf("read %s = %s at offset %d\n", rec.Key, rec.Value, rec.Offset)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// appended at offset 0
	// read order-1 = {"total":"9.99"} at offset 0
}
