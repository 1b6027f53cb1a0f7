package partitioner

import "encoding/binary"

// Murmur2 constants, as in Kafka's Utils.murmur2. They decide where every
// keyed record lands, so they are as frozen as a wire format: changing one
// moves keys to other partitions than Kafka's.
const (
	murmur2Seed uint32 = 0x9747b28c
	murmur2M    uint32 = 0x5bd1e995
	murmur2R           = 24
)

// Murmur2 returns Kafka's 32-bit murmur2 hash of data, bit for bit what the
// Java client's Utils.murmur2 returns for the same bytes, as a signed int32
// (it is negative for about half of all keys). A nil slice hashes like an
// empty one.
//
// Kafka's variant is MurmurHash2 with seed 0x9747b28c, reading the input in
// little-endian 4-byte words; Java's signed bytes are masked with 0xff before
// use, which is what reading them as Go bytes does. Inputs of 2^32 bytes or
// more (impossible for a Java array) hash with their length truncated to 32
// bits.
func Murmur2(data []byte) int32 {
	h := murmur2Seed ^ uint32(len(data))
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		k *= murmur2M
		k ^= k >> murmur2R
		k *= murmur2M
		h *= murmur2M
		h ^= k
		data = data[4:]
	}
	// The tail falls through, as Java's switch does: the multiply happens once,
	// for any non-empty tail.
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= murmur2M
	}
	h ^= h >> 13
	h *= murmur2M
	h ^= h >> 15
	return int32(h)
}

// ToPositive clears the sign bit: n & 0x7fffffff, as Kafka's Utils.toPositive.
// It is not an absolute value: ToPositive(-1) is 2147483647, and
// ToPositive(math.MinInt32) is 0.
func ToPositive(n int32) int32 {
	return n & 0x7fffffff
}

// PartitionForKey is Kafka's default placement of a keyed record,
// BuiltInPartitioner.partitionForKey:
//
//	ToPositive(Murmur2(key)) % numPartitions
//
// over all partitions of the topic. An empty key is hashed like any other
// (deciding that a nil key means "no key" is the caller's business). It
// returns [UnknownPartition] when numPartitions < 1, where Kafka would divide
// by zero.
func PartitionForKey(key []byte, numPartitions int32) int32 {
	if numPartitions < 1 {
		return UnknownPartition
	}
	return ToPositive(Murmur2(key)) % numPartitions
}
