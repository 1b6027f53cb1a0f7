package partitioner_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

const (
	goroutines = 16
	perG       = 2000
)

// Every built-in under many goroutines (run with -race): answers stay in
// range and the observers' calls interleave freely with Partition.
func TestConcurrentBuiltIns(t *testing.T) {
	d, err := partitioner.NewDefault(partitioner.DefaultConfig())
	require.NoError(t, err)
	for name, p := range map[string]partitioner.Partitioner{
		"Default":       d,
		"RoundRobin":    partitioner.NewRoundRobin(),
		"UniformSticky": partitioner.NewUniformSticky(nil),
		"LegacyDefault": partitioner.NewLegacyDefault(nil),
	} {
		t.Run(name, func(t *testing.T) {
			var bad atomic.Int64
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					topics := []string{"a", "b", "c"}
					key := []byte{byte(g), 0, 0}
					for i := range perG {
						topic := topics[i%len(topics)]
						n := int32(1 + i%12)
						k := key
						if i%3 == 0 {
							k = nil
						}
						key[1] = byte(i)
						part := p.Partition(topic, k, nil, n)
						if part < 0 || part >= n {
							bad.Add(1)
						}
						if o, ok := p.(partitioner.BatchObserver); ok && i%7 == 0 {
							o.OnNewBatch(topic, part, n)
							if again := p.Partition(topic, k, nil, n); again < 0 || again >= n {
								bad.Add(1)
							}
						}
						if i%50 == 0 {
							d.Sticky().UpdatePartitionLoadStats(topic, []int{i % 3, 1, 2, 0})
						}
						if k == nil && p == partitioner.Partitioner(d) {
							d.Sticky().UpdateAfterAppend(topic, part, 100+i%5000, i%2 == 0, n)
						}
					}
				})
			}
			wg.Wait()
			assert.Zero(t, bad.Load(), "partitions out of range")
		})
	}
}

// Producers following the sticky protocol of the package documentation,
// with one lock per partition queue: every append is counted by the stint
// it went to, so with 1-byte records into always-full batches the sticky
// partition switches exactly once per batch.size bytes, however the
// goroutines interleave.
func TestConcurrentStickyProtocol(t *testing.T) {
	const (
		n         = 5
		batchSize = 64
	)
	cfg := partitioner.DefaultStickyConfig()
	cfg.BatchSize = batchSize
	s, err := partitioner.NewBuiltInSticky(cfg)
	require.NoError(t, err)
	var queues [n]struct {
		sync.Mutex
		bytes int
	}
	var switches, retries atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := 0; i < perG; {
				p := s.Partition("t", n)
				q := &queues[p]
				q.Lock()
				if s.Partition("t", n) != p {
					q.Unlock()
					retries.Add(1)
					continue
				}
				q.bytes++
				if s.UpdateAfterAppend("t", p, 1, true, n) {
					switches.Add(1)
				}
				q.Unlock()
				i++
				if i%100 == 0 {
					s.UpdatePartitionLoadStats("t", []int{i % 4, 0, 3, 1, 2})
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for i := range queues {
		total += queues[i].bytes
	}
	require.Equal(t, goroutines*perG, total)
	assert.Equal(t, int64(total/batchSize), switches.Load())
	t.Logf("%d switches, %d retries after a race", switches.Load(), retries.Load())
}

// RoundRobin under concurrency, with a new batch for every third record:
// each counter value is used exactly once, so the partitions receive
// exactly equal counts.
func TestConcurrentRoundRobinEven(t *testing.T) {
	const n = 8 // goroutines*perG is a multiple of 8
	r := partitioner.NewRoundRobin()
	var counts [n]atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range perG {
				p := r.Partition("t", nil, nil, n)
				if i%3 == 0 {
					r.OnNewBatch("t", p, n)
					p = r.Partition("t", nil, nil, n)
				}
				counts[p].Add(1)
			}
		})
	}
	wg.Wait()
	for p := range counts {
		assert.Equal(t, int64(goroutines*perG/n), counts[p].Load(), "partition %d", p)
	}
}
