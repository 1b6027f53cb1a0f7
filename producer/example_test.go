package producer_test

import (
	"context"
	"fmt"
	"os"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// Send returns a Future (and calls an optional callback, in offset order per
// partition). Keyed records go to the partition Kafka's murmur2 picks.
func Example() {
	dir, _ := os.MkdirTemp("", "kafkalite-producer-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "orders", 3, nil)

	p, err := producer.New(d, producer.DefaultConfig()) // acks=all, idempotent, linger.ms=5
	if err != nil {
		panic(err)
	}
	var futures []producer.Future
	for i := range 3 {
		f, err := p.Send(ctx, &producer.Record{Topic: "orders", Key: []byte("customer-7"), Value: fmt.Appendf(nil, "order %d", i)}, nil)
		if err != nil {
			panic(err)
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		md, err := f.Wait(ctx) // durable: acks=all
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s-%d@%d\n", md.Topic, md.Partition, md.Offset)
	}
	if err := p.Close(ctx); err != nil {
		panic(err)
	}
	// Output:
	// orders-1@0
	// orders-1@1
	// orders-1@2
}

// A transactional producer's records become visible to read_committed
// readers only when the transaction commits; an aborted one's never do.
func Example_transactions() {
	dir, _ := os.MkdirTemp("", "kafkalite-producer-txn-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "payments", 1, nil)

	pcfg := producer.DefaultConfig()
	pcfg.TransactionalID = "payments-writer" // a new instance with this id fences the old one
	p, err := producer.New(d, pcfg)
	if err != nil {
		panic(err)
	}
	defer p.Close(ctx)
	if err := p.InitTransactions(ctx); err != nil {
		panic(err)
	}
	send := func(v string) {
		if _, err := p.Send(ctx, &producer.Record{Topic: "payments", Value: []byte(v)}, nil); err != nil {
			panic(err)
		}
	}

	_ = p.BeginTransaction()
	send("charge 10")
	send("charge 20")
	if err := p.AbortTransaction(ctx); err != nil {
		panic(err)
	}
	_ = p.BeginTransaction()
	send("charge 30")
	if err := p.CommitTransaction(ctx); err != nil {
		panic(err)
	}

	l, _ := d.Partition("payments", 0)
	_, _ = l.ReadCommittedRecords(0, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
		fmt.Printf("committed: %s at offset %d\n", r.Value, r.Offset)
		return nil
	})
	fmt.Println("log end offset", l.LogEndOffset(), "(two aborted records and two markers too)")
	// Output:
	// committed: charge 30 at offset 3
	// log end offset 5 (two aborted records and two markers too)
}
