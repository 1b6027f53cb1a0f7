package consumer_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
)

// A consumer group reads what a producer wrote and commits its offsets.
func Example() {
	dir, _ := os.MkdirTemp("", "kafkalite-consumer-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, _ := log.Open(ctx, dir, log.DefaultConfig())
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "orders", 1, nil)

	p, _ := producer.New(d, producer.DefaultConfig())
	for i := range 3 {
		_, _ = p.Send(ctx, &producer.Record{Topic: "orders", Key: []byte("customer-1"), Value: []byte(fmt.Sprintf("order %d", i))}, nil)
	}
	_ = p.Close(ctx)

	ccfg := consumer.DefaultConfig()
	ccfg.GroupID = "billing"
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	c, _ := consumer.New(d, ccfg)
	defer c.Close(ctx)
	_ = c.Subscribe([]string{"orders"}, nil)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	recs, err := c.Poll(pctx)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("%s-%d@%d %s\n", r.Topic, r.Partition, r.Offset, r.Value)
	}
	_ = c.CommitSync(ctx, nil)
	committed, _ := c.Committed([]consumer.TopicPartition{{Topic: "orders", Partition: 0}})
	fmt.Println("committed", committed[consumer.TopicPartition{Topic: "orders", Partition: 0}].Offset)
	// Output:
	// orders-0@0 order 0
	// orders-0@1 order 1
	// orders-0@2 order 2
	// committed 3
}

// A listener for only some of the rebalance callbacks: RebalanceFuncs
// does nothing for the ones left nil.
func ExampleRebalanceFuncs() {
	dir, _ := os.MkdirTemp("", "kafkalite-consumer-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, _ := log.Open(ctx, dir, log.DefaultConfig())
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "orders", 2, nil)

	cfg := consumer.DefaultConfig()
	cfg.GroupID = "billing"
	c, _ := consumer.New(d, cfg)
	defer c.Close(ctx)
	_ = c.Subscribe([]string{"orders"}, consumer.RebalanceFuncs{
		Assigned: func(_ context.Context, partitions []consumer.TopicPartition) {
			fmt.Println("assigned", partitions)
		},
	})
	pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, _ = c.Poll(pctx) // joins the group; the listener runs inside Poll
	// Output:
	// assigned [orders-0 orders-1]
}

// With isolation.level=read_committed a consumer skips aborted transactions
// and stops before transactions still open; markers are never delivered.
func Example_readCommitted() {
	dir, _ := os.MkdirTemp("", "kafkalite-consumer-rc-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.TransactionStateNumPartitions = 1
	d, _ := log.Open(ctx, dir, cfg)
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "ledger", 1, nil)

	pcfg := producer.DefaultConfig()
	pcfg.TransactionalID = "ledger-writer"
	p, _ := producer.New(d, pcfg)
	defer p.Close(ctx)
	_ = p.InitTransactions(ctx)
	for i, commit := range []bool{false, true} {
		_ = p.BeginTransaction()
		_, _ = p.Send(ctx, &producer.Record{Topic: "ledger", Value: fmt.Appendf(nil, "entry %d", i)}, nil)
		if commit {
			_ = p.CommitTransaction(ctx)
		} else {
			_ = p.AbortTransaction(ctx)
		}
	}
	_ = p.BeginTransaction() // left open: read_committed stops at its first offset
	_, _ = p.Send(ctx, &producer.Record{Topic: "ledger", Value: []byte("pending")}, nil)
	_ = p.Flush(ctx)

	ccfg := consumer.DefaultConfig()
	ccfg.IsolationLevel = consumer.ReadCommitted
	c, _ := consumer.New(d, ccfg)
	defer c.Close(ctx)
	tp := consumer.TopicPartition{Topic: "ledger", Partition: 0}
	_ = c.Assign([]consumer.TopicPartition{tp})
	_ = c.SeekToBeginning(tp)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	recs, err := c.Poll(pctx)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Printf("offset %d: %s\n", r.Offset, r.Value)
	}
	end, _ := c.EndOffsets([]consumer.TopicPartition{tp})
	fmt.Println("end offset (the last stable offset):", end[tp])
	// Output:
	// offset 2: entry 1
	// end offset (the last stable offset): 4
}

// A share consumer acknowledges each record it gets: a record it
// releases comes back (to it or another member of its share group) with
// its delivery count raised.
func ExampleShareConsumer() {
	dir, _ := os.MkdirTemp("", "kafkalite-share-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, _ := log.Open(ctx, dir, log.DefaultConfig())
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "jobs", 1, nil)
	// The group reads from the start of the log (a share group's default,
	// share.auto.offset.reset=latest, reads what is written after its
	// first fetch).
	if _, err := d.AlterGroupConfig(ctx, "workers", map[string]string{"share.auto.offset.reset": "earliest"}); err != nil {
		panic(err)
	}

	props := map[string]string{"group.id": "workers", "share.acknowledgement.mode": "explicit", "max.poll.records": "2"}
	cfg, _, err := consumer.ParseShareConfig(props)
	if err != nil {
		panic(err)
	}
	c, _ := consumer.NewShareConsumer(d, cfg)
	defer c.Close(ctx)
	_ = c.Subscribe([]string{"jobs"})
	pcfg := producer.DefaultConfig()
	pcfg.Linger = time.Minute // one batch, sent by Close: acquired whole, handed out two by two
	p, _ := producer.New(d, pcfg)
	for i := range 3 {
		_, _ = p.Send(ctx, &producer.Record{Topic: "jobs", Value: []byte(fmt.Sprintf("job %d", i))}, nil)
	}
	_ = p.Close(ctx)

	for range 3 {
		recs, err := c.Poll(ctx)
		if err != nil {
			panic(err)
		}
		for _, r := range recs {
			ack := consumer.AcknowledgeAccept
			if string(r.Value) == "job 1" && r.DeliveryCount == 1 {
				ack = consumer.AcknowledgeRelease // not now: again later
			}
			fmt.Printf("%s (delivery %d): %s\n", r.Value, r.DeliveryCount, ack)
			_ = c.Acknowledge(r, ack)
		}
		res, _ := c.CommitSync(ctx)
		fmt.Println("committed:", res)
	}
	// Output:
	// job 0 (delivery 1): accept
	// job 1 (delivery 1): release
	// committed: map[jobs-0:<nil>]
	// job 2 (delivery 1): accept
	// committed: map[jobs-0:<nil>]
	// job 1 (delivery 2): accept
	// committed: map[jobs-0:<nil>]
}
