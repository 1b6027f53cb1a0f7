package logdir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logdir"
)

// Reading what a closed directory says about itself, without opening it:
// its node, whether it shut down cleanly, each partition's recovery point
// and topic id.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kafkalite-logdir-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	if _, err := d.CreateTopic(ctx, "orders", 1, nil); err != nil {
		panic(err)
	}
	desc, _ := d.DescribeTopic("orders")
	if err := d.Close(); err != nil {
		panic(err)
	}

	mp, err := logdir.ReadMetaProperties(filepath.Join(dir, "meta.properties"))
	if err != nil {
		panic(err)
	}
	clean, _, err := logdir.ReadCleanShutdown(dir)
	if err != nil {
		panic(err)
	}
	points, err := logdir.ReadOffsetCheckpoint(filepath.Join(dir, "recovery-point-offset-checkpoint"))
	if err != nil {
		panic(err)
	}
	id, err := logdir.ReadPartitionMetadata(filepath.Join(dir, "orders-0", "partition.metadata"))
	if err != nil {
		panic(err)
	}
	fmt.Println("version", mp.Version, "node", mp.NodeID, "clean shutdown:", clean)
	fmt.Println(points, "topic id as described:", id == desc.ID)
	// Output:
	// version 1 node 0 clean shutdown: true
	// map[orders-0:0] topic id as described: true
}
