package partitioner_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

// newSticky returns a BuiltInSticky with the given batch.size and a
// sequential random source starting at 0.
func newSticky(t *testing.T, batchSize int, adaptive bool) *partitioner.BuiltInSticky {
	t.Helper()
	s, err := partitioner.NewBuiltInSticky(partitioner.StickyConfig{
		BatchSize:            batchSize,
		AdaptivePartitioning: adaptive,
		Rand:                 seqRand(0),
	})
	require.NoError(t, err)
	return s
}

func TestDefaultStickyConfig(t *testing.T) {
	cfg := partitioner.DefaultStickyConfig()
	assert.Equal(t, 16384, cfg.BatchSize)
	assert.True(t, cfg.AdaptivePartitioning)
	assert.Nil(t, cfg.Rand)
}

func TestBuiltInStickyNegativeBatchSize(t *testing.T) {
	_, err := partitioner.NewBuiltInSticky(partitioner.StickyConfig{BatchSize: -1})
	require.ErrorIs(t, err, partitioner.ErrInvalidConfig)
}

// The first sticky partition is ToPositive(random) % numPartitions, and it
// stays until the switch rule fires.
func TestBuiltInStickyFirstChoice(t *testing.T) {
	s, err := partitioner.NewBuiltInSticky(partitioner.StickyConfig{BatchSize: 100, Rand: seqRand(0xffff_fffe)})
	require.NoError(t, err)
	// 0xfffffffe is -2 as an int32; ToPositive gives 2147483646 (not 2,
	// as an absolute value would); % 13 = 9.
	assert.Equal(t, int32(9), s.Partition("t", 13))
	for range 10 {
		assert.Equal(t, int32(9), s.Partition("t", 13))
	}
	// Another topic draws its own: 0xffffffff → 2147483647 % 13 = 10.
	assert.Equal(t, int32(10), s.Partition("u", 13))
	assert.Equal(t, int32(9), s.Partition("t", 13))
}

type appendStep struct {
	bytes      int
	batchFull  bool
	wantSwitch bool
}

// The switch rule of KIP-794 at its exact byte thresholds. batch.size is
// 100; with a sequential random source and 1000 partitions, the n-th sticky
// partition is n-1, so the test also checks which partition is current.
func TestBuiltInStickySwitchRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []appendStep
	}{
		{"below batch.size never switches", []appendStep{
			{99, true, false}, {0, true, false},
		}},
		{"exactly batch.size with a full batch switches", []appendStep{
			{100, true, true},
		}},
		{"bytes accumulate across appends", []appendStep{
			{30, true, false}, {30, true, false}, {39, true, false}, {1, true, true},
		}},
		{"batch.size reached but the batch is not full: wait", []appendStep{
			{100, false, false}, {50, false, false},
		}},
		{"a later full-batch report completes the switch (partitionChanged)", []appendStep{
			{120, false, false}, {0, true, true},
		}},
		{"2 x batch.size switches even if the batch is not full", []appendStep{
			{100, false, false}, {99, false, false}, {1, false, true},
		}},
		{"one huge record switches at once", []appendStep{
			{5000, false, true},
		}},
		{"the count restarts after a switch", []appendStep{
			{100, true, true}, {99, true, false}, {1, true, true}, {199, false, false}, {1, false, true},
		}},
		{"negative bytes count as zero", []appendStep{
			{99, true, false}, {-50, true, false}, {1, true, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 1000
			s := newSticky(t, 100, false)
			want := int32(0)
			require.Equal(t, want, s.Partition("t", n))
			for i, st := range tc.steps {
				switched := s.UpdateAfterAppend("t", want, st.bytes, st.batchFull, n)
				require.Equal(t, st.wantSwitch, switched, "step %d %+v", i, st)
				if switched {
					want++
				}
				require.Equal(t, want, s.Partition("t", n), "step %d", i)
			}
		})
	}
}

// batch.size=0 behaves as 1, as KafkaProducer's Math.max(1, batch.size).
func TestBuiltInStickyBatchSizeZero(t *testing.T) {
	s := newSticky(t, 0, false)
	require.Equal(t, int32(0), s.Partition("t", 10))
	assert.False(t, s.UpdateAfterAppend("t", 0, 0, true, 10))
	assert.True(t, s.UpdateAfterAppend("t", 0, 1, true, 10))
	assert.Equal(t, int32(1), s.Partition("t", 10))
}

// Kafka's BuiltInPartitionerTest.testStickyPartitioning: sticky batch size
// 3, one byte per record: the partition changes after three records; with a
// single partition it stays 0.
func TestBuiltInStickyKafkaStickyPartitioning(t *testing.T) {
	s := newSticky(t, 3, false)
	partA := s.Partition("topicA", 3)
	for range 3 {
		require.Equal(t, partA, s.Partition("topicA", 3))
		s.UpdateAfterAppend("topicA", partA, 1, true, 3)
	}
	assert.NotEqual(t, partA, s.Partition("topicA", 3))

	b := newSticky(t, 1, false)
	for range 10 {
		p := b.Partition("topicB", 1)
		require.Equal(t, int32(0), p)
		b.UpdateAfterAppend("topicB", p, 1, true, 1)
	}
}

// An update for a partition that is no longer sticky (another goroutine
// switched first) changes nothing.
func TestBuiltInStickyStaleUpdate(t *testing.T) {
	s := newSticky(t, 100, false)
	require.Equal(t, int32(0), s.Partition("t", 10))
	assert.False(t, s.UpdateAfterAppend("t", 5, 1000, true, 10), "not the sticky partition")
	assert.False(t, s.UpdateAfterAppend("t", 0, 99, true, 10), "the 1000 bytes were not counted")
	assert.True(t, s.UpdateAfterAppend("t", 0, 1, true, 10))
	assert.False(t, s.UpdateAfterAppend("never-seen", 0, 1000, true, 10))
}

func TestBuiltInStickyTopicsAreIndependent(t *testing.T) {
	s := newSticky(t, 10, false)
	require.Equal(t, int32(0), s.Partition("a", 100))
	require.Equal(t, int32(1), s.Partition("b", 100))
	require.True(t, s.UpdateAfterAppend("a", 0, 10, true, 100))
	assert.Equal(t, int32(2), s.Partition("a", 100))
	assert.Equal(t, int32(1), s.Partition("b", 100))
}

// A sticky partition that does not exist under the current partition count
// is replaced; a grown topic keeps its sticky partition.
func TestBuiltInStickyPartitionCountChanges(t *testing.T) {
	s := newSticky(t, 10, false)
	require.Equal(t, int32(0), s.Partition("t", 100)) // draw 0
	require.True(t, s.UpdateAfterAppend("t", 0, 10, true, 100))
	require.Equal(t, int32(1), s.Partition("t", 100)) // draw 1
	require.True(t, s.UpdateAfterAppend("t", 1, 10, true, 100))
	require.Equal(t, int32(2), s.Partition("t", 100)) // draw 2
	assert.Equal(t, int32(2), s.Partition("t", 200), "grown: unchanged")
	assert.Equal(t, int32(1), s.Partition("t", 2), "partition 2 of 2 does not exist: draw 3 % 2")
	assert.Equal(t, int32(1), s.Partition("t", 200), "the new choice sticks")
}

func TestBuiltInStickyNoPartitions(t *testing.T) {
	s := newSticky(t, 10, true)
	assert.Equal(t, partitioner.UnknownPartition, s.Partition("t", 0))
	assert.False(t, s.UpdateAfterAppend("t", 0, 100, true, 0))
}

// Kafka's BuiltInPartitionerTest.adaptivePartitionsTest: queue sizes
// 5 0 3 0 1 give weights 6−q = 1 6 3 6 5; with a sequential random source
// and a switch after every record, two cycles over the range end (the sum of
// the weights) choose each partition exactly twice its weight.
func TestAdaptiveFrequenciesKafka(t *testing.T) {
	s := newSticky(t, 1, true)
	queueSizes := []int{5, 0, 3, 0, 1}
	s.UpdatePartitionLoadStats("topicA", queueSizes)
	require.Equal(t, []int{5, 0, 3, 0, 1}, queueSizes, "the report is not modified")

	weights := []int{1, 6, 3, 6, 5}
	rangeEnd := 21
	const cycles = 2
	n := int32(len(queueSizes))
	freq := make([]int, n)
	for range rangeEnd * cycles {
		p := s.Partition("topicA", n)
		freq[p]++
		require.True(t, s.UpdateAfterAppend("topicA", p, 1, true, n))
	}
	for i, w := range weights {
		assert.Equal(t, w*cycles, freq[i], "partition %d", i)
	}
}

// The example of the package documentation: queue sizes 0 3 1, weights 4 1 3,
// table 4 5 8: draws 0-3 pick partition 0, 4 picks 1, 5-7 pick 2, then again.
func TestAdaptiveCumulativeTable(t *testing.T) {
	s := newSticky(t, 1, true)
	s.UpdatePartitionLoadStats("t", []int{0, 3, 1})
	var got []int32
	for range 16 {
		p := s.Partition("t", 3)
		got = append(got, p)
		s.UpdateAfterAppend("t", p, 1, true, 3)
	}
	assert.Equal(t, []int32{0, 0, 0, 0, 1, 2, 2, 2, 0, 0, 0, 0, 1, 2, 2, 2}, got)
}

// Draws without a load table are r % n, so a sequential source cycles.
func drawSequence(t *testing.T, s *partitioner.BuiltInSticky, topic string, n int32, count int) []int32 {
	t.Helper()
	var got []int32
	for range count {
		p := s.Partition(topic, n)
		got = append(got, p)
		s.UpdateAfterAppend(topic, p, 1, true, n)
	}
	return got
}

func TestAdaptiveFallsBackToUniform(t *testing.T) {
	uniform := []int32{0, 1, 2, 0, 1, 2}
	for _, tc := range []struct {
		name     string
		adaptive bool
		report   []int
	}{
		{"all queue sizes equal", true, []int{2, 2, 2}},
		{"all queues empty", true, []int{0, 0, 0}},
		{"adaptive partitioning off", false, []int{0, 9, 9}},
		{"report for another partition count", true, []int{0, 9}},
		{"a single partition reported", true, []int{7}},
		{"no report", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSticky(t, 1, tc.adaptive)
			s.UpdatePartitionLoadStats("t", tc.report)
			assert.Equal(t, uniform, drawSequence(t, s, "t", 3, 6))
		})
	}
}

// A later report replaces an earlier one, and an all-equal report drops the
// table.
func TestAdaptiveReportsReplaceEachOther(t *testing.T) {
	s := newSticky(t, 1, true)
	s.UpdatePartitionLoadStats("t", []int{0, 3, 1}) // table 4 5 8
	s.UpdatePartitionLoadStats("t", []int{1, 0})    // 2 partitions: table 1 3
	assert.Equal(t, []int32{0, 1, 1, 0, 1, 1}, drawSequence(t, s, "t", 2, 6))
	s.UpdatePartitionLoadStats("t", []int{4, 4})
	assert.Equal(t, []int32{0, 1, 0, 1}, drawSequence(t, s, "t", 2, 4)) // draws 6..9
}

// With a real random source the sticky partitions follow the weights.
func TestAdaptiveDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	s, err := partitioner.NewBuiltInSticky(partitioner.StickyConfig{BatchSize: 1, AdaptivePartitioning: true, Rand: rng.Uint32})
	require.NoError(t, err)
	queueSizes := []int{0, 2, 8, 5, 0, 1} // max 8: weights 9 7 1 4 9 8, total 38
	weights := []float64{9, 7, 1, 4, 9, 8}
	s.UpdatePartitionLoadStats("t", queueSizes)
	const draws = 200_000
	freq := make([]int, len(queueSizes))
	for range draws {
		p := s.Partition("t", int32(len(queueSizes)))
		freq[p]++
		s.UpdateAfterAppend("t", p, 1, true, int32(len(queueSizes)))
	}
	for i, w := range weights {
		want := w / 38
		got := float64(freq[i]) / draws
		assert.InDelta(t, want, got, 0.005, "partition %d", i)
	}
}

// Uniform draws with a real random source cover every partition evenly.
func TestUniformDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	s, err := partitioner.NewBuiltInSticky(partitioner.StickyConfig{BatchSize: 1, Rand: rng.Uint32})
	require.NoError(t, err)
	const n, draws = 8, 160_000
	freq := make([]int, n)
	for range draws {
		p := s.Partition("t", n)
		freq[p]++
		s.UpdateAfterAppend("t", p, 1, true, n)
	}
	for i, f := range freq {
		assert.InDelta(t, 1.0/n, float64(f)/draws, 0.005, "partition %d", i)
	}
}

// Two instances with the default random source do not share a sequence.
func TestDefaultRandomSourceIsPerInstance(t *testing.T) {
	seq := func() []int32 {
		s, err := partitioner.NewBuiltInSticky(partitioner.StickyConfig{BatchSize: 1})
		require.NoError(t, err)
		return drawSequence(t, s, "t", 1<<30, 8)
	}
	assert.NotEqual(t, seq(), seq())
}
