package coordinator_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// openDir opens a log directory on a memory filesystem, as the package's
// tests do, with one topic, orders, of two partitions. The internal topics
// get one partition each instead of Kafka's 50.
func openDir() *log.Dir {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions = 1     // __consumer_offsets
	cfg.TransactionStateNumPartitions = 1 // __transaction_state
	d, err := log.Open(ctx, "/data", cfg)
	if err != nil {
		panic(err)
	}
	if _, err := d.CreateTopic(ctx, "orders", 2, nil); err != nil {
		panic(err)
	}
	return d
}

// The group coordinator of a Dir (created on first use, with
// __consumer_offsets): a consumer joins its group, the range assignor
// gives it both partitions, and it commits an offset in its generation,
// durably, which Fetch returns.
func ExampleFor() {
	ctx := context.Background()
	d := openDir()
	defer d.Close() // closes the coordinator too
	c, err := coordinator.For(ctx, d)
	if err != nil {
		panic(err)
	}
	res, err := c.Join(ctx, coordinator.JoinRequest{GroupID: "billing", ClientID: "billing-1", Topics: []string{"orders"},
		Assignors: []assignor.Assignor{assignor.Range()}, SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println("generation", res.Generation, res.Protocol, res.Assignment, "leader:", res.Leader == res.MemberID)

	tp := coordinator.TopicPartition{Topic: "orders", Partition: 1}
	err = c.Commit(ctx, "billing", res.MemberID, res.Generation,
		map[coordinator.TopicPartition]coordinator.OffsetAndMetadata{tp: {Offset: 42, LeaderEpoch: -1}})
	if err != nil {
		panic(err)
	}
	desc, _ := c.Describe("billing")
	fmt.Println(desc.State, "committed", c.Fetch("billing", nil)[tp].Offset)
	// Output:
	// generation 1 range [orders-0 orders-1] leader: true
	// Stable committed 42
}

// The transaction coordinator of a Dir (with __transaction_state): a
// transactional producer gets its producer id and epoch, adds a partition
// (the transaction is Ongoing) and commits, which writes a COMMIT marker to
// orders-0. A second InitProducerID for the same transactional.id bumps
// the epoch, fencing the first producer.
func ExampleTransactions() {
	ctx := context.Background()
	d := openDir()
	defer d.Close()
	tc, err := coordinator.Transactions(ctx, d)
	if err != nil {
		panic(err)
	}
	pe, err := tc.InitProducerID(ctx, "payments-writer", time.Minute) // transaction.timeout.ms
	if err != nil {
		panic(err)
	}
	if err := tc.AddPartitions(ctx, "payments-writer", pe, []coordinator.TopicPartition{{Topic: "orders", Partition: 0}}); err != nil {
		panic(err)
	}
	desc, _ := tc.Describe("payments-writer")
	fmt.Printf("%+v %s %v\n", pe, desc.State, desc.Partitions)
	if err := tc.EndTxn(ctx, "payments-writer", pe, true); err != nil {
		panic(err)
	}
	desc, _ = tc.Describe("payments-writer")
	l, _ := d.Partition("orders", 0)
	fmt.Println(desc.State, "log end offset of orders-0:", l.LogEndOffset())

	next, _ := tc.InitProducerID(ctx, "payments-writer", time.Minute)
	fmt.Printf("%+v %v\n", next, tc.EndTxn(ctx, "payments-writer", pe, true))
	// Output:
	// {ProducerID:0 Epoch:0} Ongoing [orders-0]
	// CompleteCommit log end offset of orders-0: 1
	// {ProducerID:0 Epoch:1} coordinator: producer fenced: producer 0 epoch 0, transactional id payments-writer is at epoch 1
}
