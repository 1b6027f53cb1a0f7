package coordinator_test

import (
	"context"
	"fmt"
	"time"

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

// A broker answering Kafka's group requests, each with one call: a
// network member asks for its member id (MEMBER_ID_REQUIRED), joins its
// group, leads it and assigns in its SyncGroup (the bytes its assignor
// made, kept as sent), heartbeats and commits an offset, which
// OffsetFetch returns; ListGroups and DescribeGroups see the group; the
// member leaves and the group, empty, is deleted.
func ExampleGroups() {
	ctx := context.Background()
	d := openDir()
	defer d.Close() // closes the coordinators too
	groups, err := coordinator.Groups(ctx, d)
	if err != nil {
		panic(err)
	}
	id, err := groups.PendingMember("billing", "billing-1", 45*time.Second)
	if err != nil {
		panic(err)
	}
	res, err := groups.JoinGroup(ctx, coordinator.JoinRequest{GroupID: "billing", MemberID: id, ClientID: "billing-1",
		ClientHost: "/127.0.0.1", ProtocolType: "connect", Protocols: []coordinator.Protocol{{Name: "sessioned", Metadata: []byte("v1")}},
		SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println("generation", res.Generation, res.Protocol, "leader:", res.Leader == id, "members:", len(res.Members))

	me := coordinator.GroupMetadata{GroupID: "billing", MemberID: id, GenerationID: res.Generation}
	assignment, err := groups.SyncGroup(ctx, coordinator.SyncRequest{Member: me, Assignments: map[string][]byte{id: []byte("all of it")}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("assignment %q, heartbeat: %v\n", assignment, groups.Heartbeat(me))

	tp := coordinator.TopicPartition{Topic: "orders", Partition: 1}
	err = groups.CommitOffsets(ctx, me, map[coordinator.TopicPartition]coordinator.OffsetAndMetadata{tp: {Offset: 42, LeaderEpoch: -1}})
	if err != nil {
		panic(err)
	}
	fmt.Println("committed", groups.FetchOffsets("billing", []coordinator.TopicPartition{tp})[tp].Offset)
	desc, err := groups.DescribeGroup("billing")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v %s %d member\n", groups.ListGroups(), desc.Protocol, len(desc.Members))

	fmt.Println("leave:", groups.LeaveGroup(me), "delete:", groups.DeleteGroup(ctx, "billing"))
	// Output:
	// generation 1 sessioned leader: true members: 1
	// assignment "all of it", heartbeat: <nil>
	// committed 42
	// [{GroupID:billing Type:classic ProtocolType:connect State:Stable}] sessioned 1 member
	// leave: <nil> delete: <nil>
}

// A broker answering Kafka's transaction requests, each with one call: a
// transactional producer gets its producer id and epoch, adds a partition
// and a group's offsets to its transaction (Ongoing), commits the group's
// offset in it, and commits, which writes a COMMIT marker to orders-0 and
// to the group's __consumer_offsets partition and makes the offset
// visible. A second InitProducerID for the same transactional.id bumps the
// epoch, fencing the first producer.
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
	if err := tc.AddOffsets(ctx, "payments-writer", pe, "billing"); err != nil {
		panic(err)
	}
	groups, err := coordinator.Groups(ctx, d)
	if err != nil {
		panic(err)
	}
	tp := coordinator.TopicPartition{Topic: "orders", Partition: 1}
	noMember := coordinator.GroupMetadata{GroupID: "billing", GenerationID: -1}
	err = groups.TxnCommitOffsets(ctx, "payments-writer", pe, noMember, map[coordinator.TopicPartition]coordinator.OffsetAndMetadata{tp: {Offset: 7, LeaderEpoch: -1}})
	if err != nil {
		panic(err)
	}
	desc, _ := tc.DescribeTransaction("payments-writer")
	fmt.Printf("%+v %s %v, pending offset %d\n", pe, desc.State, desc.Partitions, groups.PendingTxnOffsets("billing")[tp].Offset)
	if err := tc.EndTxn(ctx, "payments-writer", pe, true); err != nil {
		panic(err)
	}
	desc, _ = tc.DescribeTransaction("payments-writer")
	l, _ := d.Partition("orders", 0)
	fmt.Println(desc.State, "log end offset of orders-0:", l.LogEndOffset(), "committed:", groups.FetchOffsets("billing", nil)[tp].Offset)
	fmt.Println(tc.ListTransactions())

	next, _ := tc.InitProducerID(ctx, "payments-writer", time.Minute)
	fmt.Printf("%+v %v\n", next, tc.EndTxn(ctx, "payments-writer", pe, true))
	// Output:
	// {ProducerID:0 Epoch:0} Ongoing [__consumer_offsets-0 orders-0], pending offset 7
	// CompleteCommit log end offset of orders-0: 1 committed: 7
	// [payments-writer]
	// {ProducerID:0 Epoch:1} coordinator: producer fenced: producer 0 epoch 0, transactional id payments-writer is at epoch 1
}
