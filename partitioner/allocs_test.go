package partitioner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

// The hot paths do not allocate once a topic has been seen.
func TestHotPathsDoNotAllocate(t *testing.T) {
	key := []byte("user-000042")
	d, err := partitioner.NewDefault(partitioner.DefaultConfig())
	require.NoError(t, err)
	s := d.Sticky()
	rr := partitioner.NewRoundRobin()
	us := partitioner.NewUniformSticky(nil)
	ld := partitioner.NewLegacyDefault(nil)
	queueSizes := []int{3, 0, 1, 2, 0, 0}
	for name, f := range map[string]func(){
		"Murmur2":                  func() { partitioner.Murmur2(key) },
		"PartitionForKey":          func() { partitioner.PartitionForKey(key, 6) },
		"Default keyed":            func() { d.Partition("t", key, nil, 6) },
		"Default null key":         func() { d.Partition("t", nil, nil, 6) },
		"BuiltInSticky.Partition":  func() { s.Partition("t", 6) },
		"UpdateAfterAppend":        func() { s.UpdateAfterAppend("t", s.Partition("t", 6), 1000, true, 6) },
		"UpdatePartitionLoadStats": func() { s.UpdatePartitionLoadStats("t", queueSizes) },
		"RoundRobin":               func() { rr.Partition("t", key, nil, 6) },
		"RoundRobin new batch": func() {
			rr.OnNewBatch("t", rr.Partition("t", nil, nil, 6), 6)
			rr.Partition("t", nil, nil, 6)
		},
		"UniformSticky":           func() { us.Partition("t", key, nil, 6) },
		"UniformSticky new batch": func() { us.OnNewBatch("t", us.Partition("t", nil, nil, 6), 6) },
		"LegacyDefault":           func() { ld.Partition("t", nil, nil, 6) },
	} {
		f() // first use of the topic allocates its state
		assert.Zero(t, testing.AllocsPerRun(200, f), name)
	}
}
