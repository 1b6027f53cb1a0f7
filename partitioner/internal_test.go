package partitioner

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Kafka's counter is a Java AtomicInteger: it wraps from 2^31−1 to −2^31,
// and ToPositive maps the negative values back onto 0.. again, so the
// rotation jumps where 2^31 is not a multiple of the partition count.
func TestRoundRobinCounterWraps(t *testing.T) {
	r := NewRoundRobin()
	r.topics.get("t").counter.Store(math.MaxInt32 - 1)
	var got []int32
	for range 4 {
		got = append(got, r.Partition("t", nil, nil, 3))
	}
	// 2147483646 % 3 = 0, 2147483647 % 3 = 1, then −2^31 → 0 % 3, −2^31+1 → 1 % 3.
	assert.Equal(t, []int32{0, 1, 0, 1}, got)
}

// The cumulative frequency table is built in place and reused.
func TestLoadStatsTable(t *testing.T) {
	s, err := NewBuiltInSticky(DefaultStickyConfig())
	assert.NoError(t, err)
	s.UpdatePartitionLoadStats("t", []int{5, 0, 3, 0, 1})
	assert.Equal(t, []int{1, 7, 10, 16, 21}, s.topics.get("t").cft)
	s.UpdatePartitionLoadStats("t", []int{1, 1})
	assert.Empty(t, s.topics.get("t").cft)
	s.UpdatePartitionLoadStats("t", []int{0, 3, 1})
	assert.Equal(t, []int{4, 5, 8}, s.topics.get("t").cft)
}
