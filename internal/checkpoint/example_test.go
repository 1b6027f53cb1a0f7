package checkpoint_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Example_logDirectory writes the small files of a log directory holding
// one partition, orders-0, and reads them back, as a broker does at
// startup.
func Example_logDirectory() {
	dir, err := os.MkdirTemp("", "kafkalite-checkpoint-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fsys := vfs.Default
	partDir := filepath.Join(dir, checkpoint.TopicPartition{Topic: "orders", Partition: 0}.String())
	if err := fsys.MkdirAll(partDir); err != nil {
		log.Fatal(err)
	}

	// The topic id, before any data is appended.
	topicID, err := checkpoint.ParseTopicID("scQOWnwvTT6aG2yNLk9wgQ")
	if err != nil {
		log.Fatal(err)
	}
	if err := checkpoint.WritePartitionMetadata(fsys, filepath.Join(partDir, checkpoint.PartitionMetadataFile), topicID); err != nil {
		log.Fatal(err)
	}

	// Leader epoch 0 starts at offset 0; the first batch of epoch 0 makes the
	// cache dirty, and the file is rewritten at once.
	epochs, err := checkpoint.OpenLeaderEpochCache(fsys, filepath.Join(partDir, checkpoint.LeaderEpochFile))
	if err != nil {
		log.Fatal(err)
	}
	for _, baseOffset := range []int64{0, 10, 20} {
		if _, err := epochs.Assign(0, baseOffset); err != nil {
			log.Fatal(err)
		}
		if epochs.Dirty() {
			if err := epochs.Write(fsys, filepath.Join(partDir, checkpoint.LeaderEpochFile)); err != nil {
				log.Fatal(err)
			}
		}
	}

	// The recovery point after a flush up to offset 30.
	recovery := filepath.Join(dir, checkpoint.RecoveryPointFile)
	if err := checkpoint.WriteOffsets(fsys, recovery, map[checkpoint.TopicPartition]int64{{Topic: "orders", Partition: 0}: 30}); err != nil {
		log.Fatal(err)
	}

	// Startup: read them back.
	id, err := checkpoint.ReadPartitionMetadata(fsys, filepath.Join(partDir, checkpoint.PartitionMetadataFile))
	if err != nil {
		log.Fatal(err)
	}
	entries, err := checkpoint.ReadLeaderEpochs(fsys, filepath.Join(partDir, checkpoint.LeaderEpochFile))
	if err != nil {
		log.Fatal(err)
	}
	points, err := checkpoint.ReadOffsets(fsys, recovery)
	if err != nil {
		log.Fatal(err)
	}
	clean, _, err := checkpoint.ReadCleanShutdown(fsys, dir)
	if err != nil {
		log.Fatal(err)
	}
	raw, err := os.ReadFile(recovery)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("topic id:", id)
	fmt.Println("leader epochs:", entries)
	fmt.Println("recovery point of orders-0:", points[checkpoint.TopicPartition{Topic: "orders", Partition: 0}])
	fmt.Println("clean shutdown:", clean)
	fmt.Printf("%s: %q\n", checkpoint.RecoveryPointFile, raw)
	// Output:
	// topic id: scQOWnwvTT6aG2yNLk9wgQ
	// leader epochs: [EpochEntry(epoch=0, startOffset=0)]
	// recovery point of orders-0: 30
	// clean shutdown: false
	// recovery-point-offset-checkpoint: "0\n1\norders 0 30\n"
}
