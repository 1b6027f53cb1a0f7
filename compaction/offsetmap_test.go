package compaction

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOffsetMap(t *testing.T) {
	m := NewOffsetMap(24*1000, 0.9)
	require.Equal(t, 1000, m.BudgetSlots())
	m.Reset(100)
	require.LessOrEqual(t, m.Slots(), 1000)
	require.Equal(t, int64(-1), m.Get([]byte("missing")))
	for i := range 50 {
		require.True(t, m.Put(fmt.Appendf(nil, "k%d", i), int64(i)))
	}
	require.True(t, m.Put([]byte("k3"), 77))
	require.Equal(t, int64(77), m.Get([]byte("k3")))
	require.Equal(t, int64(10), m.Get([]byte("k10")))
	require.Equal(t, 50, m.Size())
	require.Equal(t, int64(77), m.LatestOffset())
	require.Equal(t, int64(-1), m.Get([]byte("k50")))

	// The budget bounds the table whatever the section's size; full, a
	// new key is refused and an existing one still updates.
	m.Reset(1 << 40)
	require.Equal(t, 1000, m.Slots())
	require.LessOrEqual(t, m.MemoryBytes(), int64(24*1000))
	n := 0
	for ; m.Put(fmt.Appendf(nil, "key-%d", n), int64(n)); n++ {
	}
	require.Equal(t, 900, n)
	require.True(t, m.Full())
	require.True(t, m.Put([]byte("key-0"), 5000))
	require.Equal(t, int64(5000), m.Get([]byte("key-0")))
	for i := 1; i < n; i++ {
		require.Equal(t, int64(i), m.Get(fmt.Appendf(nil, "key-%d", i)))
	}
	require.InDelta(t, 0.9, m.Utilization(), 0.001)
}

func BenchmarkOffsetMapPut(b *testing.B) {
	m := NewOffsetMap(128<<20, 0.9)
	m.Reset(1 << 20)
	keys := make([][]byte, 1<<20)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%08d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Put(keys[i&(1<<20-1)], int64(i))
		i++
	}
}
