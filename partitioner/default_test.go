package partitioner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

func newDefault(t *testing.T, ignoreKeys bool) *partitioner.Default {
	t.Helper()
	cfg := partitioner.DefaultConfig()
	cfg.BatchSize = 100
	cfg.Rand = seqRand(4)
	cfg.IgnoreKeys = ignoreKeys
	d, err := partitioner.NewDefault(cfg)
	require.NoError(t, err)
	return d
}

func TestDefaultConfig(t *testing.T) {
	cfg := partitioner.DefaultConfig()
	assert.Equal(t, partitioner.DefaultBatchSize, cfg.BatchSize)
	assert.True(t, cfg.AdaptivePartitioning)
	assert.False(t, cfg.IgnoreKeys)
}

func TestNewDefaultInvalid(t *testing.T) {
	cfg := partitioner.DefaultConfig()
	cfg.BatchSize = -5
	_, err := partitioner.NewDefault(cfg)
	require.ErrorIs(t, err, partitioner.ErrInvalidConfig)
}

func TestDefaultPlacement(t *testing.T) {
	d := newDefault(t, false)
	const n = 10
	for _, tc := range []struct {
		name string
		key  []byte
		want int32
	}{
		{"keyed: murmur2", []byte("foobar"), 6},
		{"keyed: another", []byte("kafka"), 0},
		{"empty key is hashed, not sticky", []byte{}, 1},
		{"nil key: sticky partition (draw 4 % 10)", nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, d.Partition("t", tc.key, []byte("v"), n))
		})
	}
	assert.Equal(t, int32(6), d.KeyPartition([]byte("foobar"), n))
	assert.Equal(t, partitioner.UnknownPartition, d.KeyPartition(nil, n))
	assert.Equal(t, partitioner.UnknownPartition, d.KeyPartition([]byte("foobar"), 0))
	assert.Equal(t, partitioner.UnknownPartition, d.Partition("t", []byte("foobar"), nil, 0))
	assert.False(t, d.IgnoreKeys())
}

// The value never matters.
func TestDefaultIgnoresValue(t *testing.T) {
	d := newDefault(t, false)
	assert.Equal(t, d.Partition("t", []byte("k"), []byte("a"), 7), d.Partition("t", []byte("k"), []byte("b"), 7))
}

// partitioner.ignore.keys=true: keyed records take the sticky path too.
func TestDefaultIgnoreKeys(t *testing.T) {
	d := newDefault(t, true)
	assert.True(t, d.IgnoreKeys())
	assert.Equal(t, partitioner.UnknownPartition, d.KeyPartition([]byte("foobar"), 10))
	assert.Equal(t, int32(4), d.Partition("t", []byte("foobar"), nil, 10))
	assert.Equal(t, int32(4), d.Partition("t", []byte("kafka"), nil, 10))
	assert.Equal(t, int32(4), d.Partition("t", nil, nil, 10))
}

// The sticky half moves only through Sticky(), as the producer reports
// appends.
func TestDefaultStickyIsShared(t *testing.T) {
	d := newDefault(t, false)
	p := d.Partition("t", nil, nil, 10)
	require.Equal(t, p, d.Sticky().Partition("t", 10))
	require.True(t, d.Sticky().UpdateAfterAppend("t", p, 100, true, 10))
	assert.Equal(t, int32(5), d.Partition("t", nil, nil, 10))
}
