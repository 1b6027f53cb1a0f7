package partitioner_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/partitioner"
)

// A keyed record lands where Kafka's Java producer puts it.
func ExamplePartitionForKey() {
	for _, key := range []string{"alice", "sam", "leo", "foobar"} {
		fmt.Printf("%-6s murmur2 %11d → partition %d of 3, %d of 10\n", key,
			partitioner.Murmur2([]byte(key)),
			partitioner.PartitionForKey([]byte(key), 3),
			partitioner.PartitionForKey([]byte(key), 10))
	}
	// Output:
	// alice  murmur2  1951417749 → partition 0 of 3, 9 of 10
	// sam    murmur2  -882220894 → partition 1 of 3, 4 of 10
	// leo    murmur2 -1033022616 → partition 2 of 3, 2 of 10
	// foobar murmur2  -790332482 → partition 0 of 3, 6 of 10
}

// ToPositive clears the sign bit; it is not an absolute value.
func ExampleToPositive() {
	fmt.Println(partitioner.ToPositive(-790332482), partitioner.ToPositive(-1))
	// Output: 1357151166 2147483647
}

// partitioner.class values map to built-ins.
func ExampleByClassName() {
	for _, class := range []string{"", partitioner.RoundRobinClass, "com.example.Custom"} {
		p, err := partitioner.ByClassName(class, partitioner.DefaultBatchSize)
		if errors.Is(err, partitioner.ErrUnknownPartitioner) {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q → %T\n", class, p)
	}
	// Output:
	// "" → *partitioner.Default
	// "org.apache.kafka.clients.producer.RoundRobinPartitioner" → *partitioner.RoundRobin
	// partitioner: unknown partitioner class "com.example.Custom" (known: org.apache.kafka.clients.producer.RoundRobinPartitioner, org.apache.kafka.clients.producer.UniformStickyPartitioner, org.apache.kafka.clients.producer.internals.DefaultPartitioner, or empty for the default)
}

// The sticky partitioner of records without a key, driven as a producer
// drives it: after batch.size bytes went to the sticky partition and its
// batch is full, the next record goes elsewhere.
func ExampleBuiltInSticky() {
	next := uint32(0)
	cfg := partitioner.DefaultStickyConfig()
	cfg.BatchSize = 1000
	cfg.Rand = func() uint32 { next += 5; return next } // deterministic for the example
	sticky, err := partitioner.NewBuiltInSticky(cfg)
	if err != nil {
		panic(err)
	}
	const numPartitions = 6
	batchBytes := map[int32]int{} // the open batch of each partition
	for record := range 8 {
		p := sticky.Partition("clicks", numPartitions)
		batchBytes[p] += 300
		full := batchBytes[p] >= 1000
		if full {
			batchBytes[p] = 0 // the batch is closed; the next append opens another
		}
		switched := sticky.UpdateAfterAppend("clicks", p, 300, full, numPartitions)
		fmt.Printf("record %d → partition %d (switch: %v)\n", record, p, switched)
	}
	// Output:
	// record 0 → partition 5 (switch: false)
	// record 1 → partition 5 (switch: false)
	// record 2 → partition 5 (switch: false)
	// record 3 → partition 5 (switch: true)
	// record 4 → partition 4 (switch: false)
	// record 5 → partition 4 (switch: false)
	// record 6 → partition 4 (switch: false)
	// record 7 → partition 4 (switch: true)
}

// regionPartitioner is a custom partitioner (the region partitioner of the
// producer notes): a topic's partitions are split into four equal ranges,
// one per region, and a record whose key starts with "<region>:" goes to its
// region's range; within the range, the key's murmur2 hash picks the
// partition, so one key keeps its order. Keys of an unknown region go to the
// first range; with fewer than four partitions it falls back to Kafka's
// key hash.
type regionPartitioner struct{}

var regions = [][]byte{[]byte("north:"), []byte("south:"), []byte("east:"), []byte("west:")}

func (regionPartitioner) Partition(_ string, key, _ []byte, numPartitions int32) int32 {
	perRegion := numPartitions / int32(len(regions))
	if perRegion == 0 {
		return partitioner.PartitionForKey(key, numPartitions)
	}
	region := int32(0)
	for i, prefix := range regions {
		if bytes.HasPrefix(key, prefix) {
			region = int32(i)
			break
		}
	}
	return region*perRegion + partitioner.ToPositive(partitioner.Murmur2(key))%perRegion
}

// A custom Partitioner: orders of a region stay in that region's partitions.
func ExamplePartitioner_region() {
	var p partitioner.Partitioner = regionPartitioner{}
	for _, key := range []string{"north:order-1", "north:order-2", "south:order-1", "east:order-7", "west:order-3", "west:order-3", "mars:order-9"} {
		fmt.Printf("%-14s → partition %2d of 12\n", key, p.Partition("orders", []byte(key), nil, 12))
	}
	// Output:
	// north:order-1  → partition  0 of 12
	// north:order-2  → partition  0 of 12
	// south:order-1  → partition  5 of 12
	// east:order-7   → partition  6 of 12
	// west:order-3   → partition 10 of 12
	// west:order-3   → partition 10 of 12
	// mars:order-9   → partition  2 of 12
}
