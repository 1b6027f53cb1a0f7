package partitioner_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

// legacySticky is what UniformSticky and LegacyDefault have in common.
type legacySticky interface {
	partitioner.Partitioner
	partitioner.BatchObserver
}

func TestLegacyStickySwitchesOnlyOnNewBatch(t *testing.T) {
	for name, newP := range map[string]func(func() uint32) legacySticky{
		"UniformSticky": func(r func() uint32) legacySticky { return partitioner.NewUniformSticky(r) },
		"LegacyDefault": func(r func() uint32) legacySticky { return partitioner.NewLegacyDefault(r) },
	} {
		t.Run(name, func(t *testing.T) {
			p := newP(seqRand(5))
			const n = 10
			first := p.Partition("t", nil, nil, n)
			require.Equal(t, int32(5), first, "draw 5 % 10")
			for range 100 {
				require.Equal(t, first, p.Partition("t", nil, []byte("value"), n), "no switch without a new batch")
			}
			// A new batch on another partition (a keyed record elsewhere)
			// does not move the sticky partition.
			p.OnNewBatch("t", 3, n)
			require.Equal(t, first, p.Partition("t", nil, nil, n))
			// A new batch on the sticky partition does.
			p.OnNewBatch("t", first, n)
			require.Equal(t, int32(6), p.Partition("t", nil, nil, n))
			// OnNewBatch for a topic never seen picks its first partition.
			p.OnNewBatch("fresh", 0, n)
			require.Equal(t, int32(7), p.Partition("fresh", nil, nil, n))
		})
	}
}

// The next sticky partition is never the previous one (while there are two
// or more partitions): draws equal to it are repeated.
func TestLegacyStickyNeverRepeats(t *testing.T) {
	rnd := &countingRand{f: seqRand(0)}
	u := partitioner.NewUniformSticky(rnd.next)
	const n = 2
	require.Equal(t, int32(0), u.Partition("t", nil, nil, n)) // draw 0
	u.OnNewBatch("t", 0, n)                                   // draw 1 → 1
	require.Equal(t, int32(1), u.Partition("t", nil, nil, n))
	u.OnNewBatch("t", 1, n) // draw 2 → 0
	require.Equal(t, int32(0), u.Partition("t", nil, nil, n))
	assert.Equal(t, 3, rnd.calls)

	// With seqRand stepping by 1 and n = 1 nothing is drawn at all.
	one := &countingRand{f: seqRand(0)}
	u = partitioner.NewUniformSticky(one.next)
	for range 5 {
		require.Equal(t, int32(0), u.Partition("t", nil, nil, 1))
		u.OnNewBatch("t", 0, 1)
	}
	assert.Equal(t, 0, one.calls)

	// A source that keeps returning the old partition is retried.
	same := &countingRand{f: func() uint32 { return 4 }}
	u = partitioner.NewUniformSticky(func() uint32 {
		if same.calls == 3 {
			return 5
		}
		return same.next()
	})
	require.Equal(t, int32(0), u.Partition("t", nil, nil, 2)) // 4 % 2
	u.OnNewBatch("t", 0, 2)                                   // 4, 4 are 0 again, then 5 → 1
	assert.Equal(t, int32(1), u.Partition("t", nil, nil, 2))
}

func TestUniformStickyIgnoresKeys(t *testing.T) {
	u := partitioner.NewUniformSticky(seqRand(2))
	assert.Equal(t, int32(2), u.Partition("t", []byte("foobar"), nil, 10))
	assert.Equal(t, int32(2), u.Partition("t", []byte("kafka"), nil, 10))
	assert.Equal(t, partitioner.UnknownPartition, u.Partition("t", nil, nil, 0))
}

func TestLegacyDefaultHashesKeys(t *testing.T) {
	d := partitioner.NewLegacyDefault(seqRand(2))
	assert.Equal(t, int32(6), d.Partition("t", []byte("foobar"), nil, 10))
	assert.Equal(t, int32(1), d.Partition("t", []byte{}, nil, 10), "an empty key is a key")
	assert.Equal(t, int32(2), d.Partition("t", nil, nil, 10))
	// A keyed record opening a batch on the sticky partition moves it too,
	// as Kafka's DefaultPartitioner.onNewBatch does not look at keys.
	d.OnNewBatch("t", 2, 10)
	assert.Equal(t, int32(3), d.Partition("t", nil, nil, 10))
	assert.Equal(t, partitioner.UnknownPartition, d.Partition("t", nil, nil, 0))
}

// Concurrent OnNewBatch calls for the same previous partition move the
// sticky partition once (StickyPartitionCache replaces only if unchanged).
func TestLegacyStickyConcurrentNewBatch(t *testing.T) {
	rnd := &countingRand{f: seqRand(0)}
	u := partitioner.NewUniformSticky(rnd.next)
	const n = 1000
	first := u.Partition("t", nil, nil, n)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() { u.OnNewBatch("t", first, n) })
	}
	wg.Wait()
	assert.Equal(t, int32(1), u.Partition("t", nil, nil, n))
	assert.Equal(t, 2, rnd.calls)
}
