package partitioner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

func TestRoundRobinOrder(t *testing.T) {
	r := partitioner.NewRoundRobin()
	var got []int32
	for range 7 {
		got = append(got, r.Partition("t", []byte("same key"), nil, 3))
	}
	assert.Equal(t, []int32{0, 1, 2, 0, 1, 2, 0}, got, "keys are ignored")
	assert.Equal(t, int32(0), r.Partition("other", nil, nil, 3), "each topic has its own counter")
	assert.Equal(t, int32(1), r.Partition("t", nil, nil, 3))
	assert.Equal(t, partitioner.UnknownPartition, r.Partition("t", nil, nil, 0))
}

// Kafka's RoundRobinPartitionerTest.testRoundRobinWithKeyBytes: calls for
// topicB in between do not disturb topicA's rotation.
func TestRoundRobinKafkaKeyBytes(t *testing.T) {
	r := partitioner.NewRoundRobin()
	count := map[int32]int{}
	for i := range 30 {
		count[r.Partition("topicA", []byte("key"), nil, 3)]++
		if i%5 == 0 {
			r.Partition("topicB", []byte("key"), nil, 1)
		}
	}
	assert.Equal(t, map[int32]int{0: 10, 1: 10, 2: 10}, count)
}

// Kafka's RoundRobinPartitionerTest.testRoundRobinWithNullKeyBytes and
// ...AndEvenPartitionCount (KAFKA-17632): with a new batch for every record,
// the call after OnNewBatch returns the same partition, and the rotation
// stays even, also for an even partition count (before the fix, records
// reached only half of the partitions).
func TestRoundRobinNewBatchDoesNotSkip(t *testing.T) {
	for _, n := range []int32{3, 4} {
		r := partitioner.NewRoundRobin()
		count := map[int32]int{}
		for i := range 10 * int(n) {
			p := r.Partition("topicA", nil, nil, n)
			r.OnNewBatch("topicA", p, n)
			next := r.Partition("topicA", nil, nil, n)
			require.Equal(t, p, next, "new batch creation must not affect the partition (n=%d, i=%d)", n, i)
			count[p]++
			if i%5 == 0 {
				r.Partition("topicB", nil, nil, 1)
			}
		}
		for p := range n {
			assert.Equal(t, 10, count[p], "n=%d partition %d", n, p)
		}
	}
}

// A handed-back partition that no longer exists is dropped.
func TestRoundRobinHandedBackOutOfRange(t *testing.T) {
	r := partitioner.NewRoundRobin()
	r.OnNewBatch("t", 7, 8)
	assert.Equal(t, int32(0), r.Partition("t", nil, nil, 4))
	assert.Equal(t, int32(1), r.Partition("t", nil, nil, 4))
}
