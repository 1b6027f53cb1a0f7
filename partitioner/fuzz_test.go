package partitioner_test

import (
	"testing"

	"github.com/kafkalite/kafkalite/partitioner"
)

// FuzzMurmur2 compares Murmur2 with the independent, Java-style murmur2Java
// on arbitrary input. Invariants: no panic; the two hashes are equal; for any
// partition count n >= 1, PartitionForKey is in [0, n) and equals
// (hash & 0x7fffffff) % n. Seeded with every vector of murmur2_test.go.
func FuzzMurmur2(f *testing.F) {
	for _, set := range [][]murmur2Vector{kafkaUtilsTestVectors, librdkafkaVectors, extraVectors} {
		for _, v := range set {
			f.Add(v.data, int32(12))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, n int32) {
		got, want := partitioner.Murmur2(data), murmur2Java(data)
		if got != want {
			t.Fatalf("Murmur2(%x) = %d, Java-style reference = %d", data, got, want)
		}
		if n < 1 {
			if p := partitioner.PartitionForKey(data, n); p != partitioner.UnknownPartition {
				t.Fatalf("PartitionForKey(%x, %d) = %d, want UnknownPartition", data, n, p)
			}
			return
		}
		p := partitioner.PartitionForKey(data, n)
		if p < 0 || p >= n || p != (want&0x7fffffff)%n {
			t.Fatalf("PartitionForKey(%x, %d) = %d, hash %d", data, n, p, want)
		}
	})
}
