package log_test

import (
	"context"
	"fmt"
	"os"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// A partition that holds records of leader epochs 0 and 3 (appended as a
// replica, which keeps each batch's epoch) answers OffsetForLeaderEpoch:
// where each epoch a consumer may have read ends.
func ExampleLog_EndOffsetForEpoch() {
	dir, _ := os.MkdirTemp("", "kafkalite-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "orders", 1, nil); err != nil {
		panic(err)
	}
	p, _ := d.Partition("orders", 0)
	for _, b := range []struct {
		base    int64
		records int
		epoch   int32
	}{{0, 2, 0}, {2, 3, 3}} {
		recs := make([]record.Record, b.records)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Value: []byte("v")}
		}
		batch, _ := record.AppendBatch(nil, record.BatchHeader{BaseOffset: b.base, PartitionLeaderEpoch: b.epoch,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel, recs)
		if _, err := p.AppendAsReplica(batch); err != nil {
			panic(err)
		}
	}
	fmt.Println("leader epoch", p.LeaderEpoch(), "log end offset", p.LogEndOffset())
	for _, requested := range []int32{0, 2, 3, 4} {
		epoch, end, err := p.EndOffsetForEpoch(requested)
		if err != nil {
			panic(err)
		}
		fmt.Printf("asked %d: epoch %d ends at %d\n", requested, epoch, end)
	}
	// Output:
	// leader epoch 3 log end offset 5
	// asked 0: epoch 0 ends at 2
	// asked 2: epoch 0 ends at 2
	// asked 3: epoch 3 ends at 5
	// asked 4: epoch -1 ends at -1
}
