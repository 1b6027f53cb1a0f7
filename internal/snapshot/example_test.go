package snapshot_test

import (
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Example writes the producer state of a partition at a segment roll and
// loads the newest snapshot back, as a broker does at startup.
func Example() {
	dir, err := os.MkdirTemp("", "kafkalite-snapshot-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fsys := vfs.Default

	// The state after offsets 0..41: one idempotent producer. Sorted by
	// producer id for deterministic bytes.
	producers := map[int64]snapshot.Entry{
		1000: {ProducerID: 1000, ProducerEpoch: 0, LastSequence: 4, LastOffset: 41, OffsetDelta: 4,
			Timestamp: 1700000000000, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
	}
	var entries []snapshot.Entry
	for _, id := range slices.Sorted(maps.Keys(producers)) {
		entries = append(entries, producers[id])
	}
	if err := snapshot.Write(fsys, dir, 0, nil); err != nil { // at the first segment
		log.Fatal(err)
	}
	if err := snapshot.Write(fsys, dir, 42, entries); err != nil { // at the roll to 42
		log.Fatal(err)
	}

	offsets, err := snapshot.List(fsys, dir)
	if err != nil {
		log.Fatal(err)
	}
	newest := offsets[len(offsets)-1]
	loaded, err := snapshot.Read(fsys, filepath.Join(dir, snapshot.FileName(newest)))
	if err != nil {
		log.Fatal(err) // if errors.Is(err, snapshot.ErrCorrupt): delete it, rebuild from the log
	}
	fmt.Println(offsets, snapshot.FileName(newest))
	for _, e := range loaded {
		fmt.Printf("producer %d epoch %d: last sequence %d at offset %d\n",
			e.ProducerID, e.ProducerEpoch, e.LastSequence, e.LastOffset)
	}
	// Output:
	// [0 42] 00000000000000000042.snapshot
	// producer 1000 epoch 0: last sequence 4 at offset 41
}
