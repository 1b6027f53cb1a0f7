package partitioner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/partitioner"
)

func TestByClassName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class string
		check func(t *testing.T, p partitioner.Partitioner)
	}{
		{"empty is the default", "", func(t *testing.T, p partitioner.Partitioner) {
			d, ok := p.(*partitioner.Default)
			require.True(t, ok, "%T", p)
			assert.False(t, d.IgnoreKeys())
			// batch.size 7: a full batch of 7 bytes switches, 6 do not.
			s := d.Sticky()
			sp := s.Partition("t", 1<<20)
			assert.False(t, s.UpdateAfterAppend("t", sp, 6, true, 1<<20))
			assert.True(t, s.UpdateAfterAppend("t", sp, 1, true, 1<<20))
		}},
		{"blank is the default", "  \t", func(t *testing.T, p partitioner.Partitioner) {
			assert.IsType(t, &partitioner.Default{}, p)
		}},
		{"round robin", "org.apache.kafka.clients.producer.RoundRobinPartitioner", func(t *testing.T, p partitioner.Partitioner) {
			assert.IsType(t, &partitioner.RoundRobin{}, p)
		}},
		{"uniform sticky", "org.apache.kafka.clients.producer.UniformStickyPartitioner", func(t *testing.T, p partitioner.Partitioner) {
			assert.IsType(t, &partitioner.UniformSticky{}, p)
		}},
		{"legacy default", "org.apache.kafka.clients.producer.internals.DefaultPartitioner", func(t *testing.T, p partitioner.Partitioner) {
			assert.IsType(t, &partitioner.LegacyDefault{}, p)
		}},
		{"trimmed", " org.apache.kafka.clients.producer.RoundRobinPartitioner\n", func(t *testing.T, p partitioner.Partitioner) {
			assert.IsType(t, &partitioner.RoundRobin{}, p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := partitioner.ByClassName(tc.class, 7)
			require.NoError(t, err)
			tc.check(t, p)
		})
	}
}

// Which built-ins observe new batches: the three partitioner.class ones do
// (as in Kafka 4.x, where RoundRobinPartitioner overrides onNewBatch), the
// default does not.
func TestBatchObservers(t *testing.T) {
	for class, want := range map[string]bool{
		"":                             false,
		partitioner.RoundRobinClass:    true,
		partitioner.UniformStickyClass: true,
		partitioner.LegacyDefaultClass: true,
	} {
		p, err := partitioner.ByClassName(class, partitioner.DefaultBatchSize)
		require.NoError(t, err)
		_, ok := p.(partitioner.BatchObserver)
		assert.Equal(t, want, ok, "%q", class)
	}
}

func TestByClassNameUnknown(t *testing.T) {
	for _, class := range []string{
		"com.example.MyPartitioner",
		"RoundRobinPartitioner",
		"org.apache.kafka.clients.producer.roundrobinpartitioner",
		"org.apache.kafka.clients.producer.internals.BuiltInPartitioner",
	} {
		t.Run(class, func(t *testing.T) {
			p, err := partitioner.ByClassName(class, 16384)
			require.Nil(t, p)
			require.ErrorIs(t, err, partitioner.ErrUnknownPartitioner)
			var unknown *partitioner.UnknownPartitionerError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, class, unknown.Name)
			assert.Contains(t, err.Error(), class)
			assert.Contains(t, err.Error(), "partitioner: ")
		})
	}
}

func TestByClassNameNegativeBatchSize(t *testing.T) {
	_, err := partitioner.ByClassName("", -1)
	require.ErrorIs(t, err, partitioner.ErrInvalidConfig)
	// Only the default uses batch.size.
	_, err = partitioner.ByClassName(partitioner.RoundRobinClass, -1)
	require.NoError(t, err)
}

func TestClassNameRoundTrip(t *testing.T) {
	for _, class := range []string{"", partitioner.RoundRobinClass, partitioner.UniformStickyClass, partitioner.LegacyDefaultClass} {
		p, err := partitioner.ByClassName(class, 16384)
		require.NoError(t, err)
		name, ok := partitioner.ClassName(p)
		assert.True(t, ok)
		assert.Equal(t, class, name)
	}
	_, ok := partitioner.ClassName(customPartitioner{})
	assert.False(t, ok)
	_, ok = partitioner.ClassName(nil)
	assert.False(t, ok)
}

type customPartitioner struct{}

func (customPartitioner) Partition(string, []byte, []byte, int32) int32 { return 0 }
