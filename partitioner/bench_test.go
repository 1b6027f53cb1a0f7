package partitioner_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/kafkalite/kafkalite/partitioner"
)

func BenchmarkMurmur2(b *testing.B) {
	for _, size := range []int{16, 100} {
		b.Run(fmt.Sprintf("key=%dB", size), func(b *testing.B) {
			key := make([]byte, size)
			for i := range key {
				key[i] = byte(i * 7)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				partitioner.Murmur2(key)
			}
		})
	}
}

// keys returns distinct 16-byte keys.
func benchKeys() [][]byte {
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user-%011d", i)
	}
	return keys
}

func BenchmarkDefaultKeyed(b *testing.B) {
	d, err := partitioner.NewDefault(partitioner.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys()
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(16)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			d.Partition("orders", keys[i&1023], nil, 12)
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(16)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				d.Partition("orders", keys[i&1023], nil, 12)
				i++
			}
		})
	})
}

// The sticky partitioner as the producer drives it: Partition for every
// record, and an append report (a switch every batch.size bytes).
func BenchmarkStickyPartition(b *testing.B) {
	s, err := partitioner.NewBuiltInSticky(partitioner.DefaultStickyConfig())
	if err != nil {
		b.Fatal(err)
	}
	topics := make([]string, 8)
	for i := range topics {
		topics[i] = "topic-" + strconv.Itoa(i)
	}
	b.Run("peek/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				s.Partition(topics[i&7], 12)
				i++
			}
		})
	})
	b.Run("peek+report/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := s.Partition("t", 12)
			s.UpdateAfterAppend("t", p, 100, true, 12)
		}
	})
	b.Run("peek+report/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				topic := topics[i&7]
				p := s.Partition(topic, 12)
				s.UpdateAfterAppend(topic, p, 100, true, 12)
				i++
			}
		})
	})
}

func BenchmarkRoundRobin(b *testing.B) {
	r := partitioner.NewRoundRobin()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Partition("t", nil, nil, 12)
		}
	})
}
