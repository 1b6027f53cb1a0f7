package segment_test

import (
	"fmt"
	"os"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// A segment holds batches whose offsets the log assigned; reads return file
// slices of whole batches, from the one holding the requested offset.
func Example() {
	dir, _ := os.MkdirTemp("", "kafkalite-segment-example-")
	defer os.RemoveAll(dir)

	cfg := segment.DefaultConfig()
	cfg.IndexIntervalBytes = 100 // index.interval.bytes: an index entry every ~100 bytes
	s, err := segment.Create(vfs.Default, dir, 100, cfg, 0)
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		batch, _ := record.AppendBatch(nil, record.BatchHeader{
			BaseOffset: 100 + int64(2*i), PartitionLeaderEpoch: 0, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		}, record.DefaultLevel, []record.Record{
			{Timestamp: 1700000000000, Value: []byte("first of a pair")},
			{Timestamp: 1700000000001, OffsetDelta: 1, Value: []byte("second of a pair")},
		})
		h, _ := record.Validate(batch)
		if err := s.Append(batch, &h); err != nil {
			panic(err)
		}
	}
	next, _ := s.NextOffset()
	fmt.Println(s.BaseOffset(), "to", next-1, "in", s.Size(), "bytes")

	sl, err := s.Read(103, 1<<20, s.Size(), true)
	if err != nil {
		panic(err)
	}
	fmt.Println("read from offset 103: batches", sl.FirstOffset, "to", sl.LastOffset, "at position", sl.Position)
	_, _ = sl.Batches(nil, func(h *record.BatchHeader, _ []byte) error {
		fmt.Println("  batch", h.BaseOffset, "-", h.LastOffset())
		return nil
	})
	sl.Release()

	if err := s.Close(); err != nil { // trims the indexes
		panic(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// 100 to 105 in 318 bytes
	// read from offset 103: batches 102 to 105 at position 106
	//   batch 102 - 103
	//   batch 104 - 105
	// 00000000000000000100.index
	// 00000000000000000100.log
	// 00000000000000000100.timeindex
}
