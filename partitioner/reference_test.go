package partitioner_test

// murmur2Java is a second, independent murmur2 for cross-checking Murmur2.
// It is written the way the Java source computes (Utils.murmur2): signed
// int32 arithmetic throughout, bytes first made signed as Java's byte and
// then masked with & 0xff, the four bytes of a word added rather than ORed,
// >>> written as a shift of the unsigned reinterpretation, and the tail
// handled by index arithmetic (length & ~3) instead of by re-slicing.
func murmur2Java(data []byte) int32 {
	javaBytes := make([]int8, len(data)) // Java's byte is signed
	for i, b := range data {
		javaBytes[i] = int8(b)
	}
	length := int32(len(javaBytes))
	const seed int32 = -0x68b84d74 // 0x9747b28c as a Java int
	const m int32 = 0x5bd1e995
	const r = 24
	ushr := func(x int32, n uint) int32 { return int32(uint32(x) >> n) } // Java's >>>
	at := func(i int32) int32 { return int32(javaBytes[i]) & 0xff }

	h := seed ^ length
	length4 := length / 4
	for i := int32(0); i < length4; i++ {
		i4 := i * 4
		k := at(i4+0) + (at(i4+1) << 8) + (at(i4+2) << 16) + (at(i4+3) << 24)
		k *= m
		k ^= ushr(k, r)
		k *= m
		h *= m
		h ^= k
	}
	rest := length &^ 3
	if length%4 == 3 {
		h ^= at(rest+2) << 16
	}
	if length%4 >= 2 {
		h ^= at(rest+1) << 8
	}
	if length%4 >= 1 {
		h ^= at(rest)
		h *= m
	}
	h ^= ushr(h, 13)
	h *= m
	h ^= ushr(h, 15)
	return h
}

// seqRand returns a random source that yields start, start+1, ... like the
// sequential mock random of Kafka's BuiltInPartitionerTest. Not safe for
// concurrent use (the partitioners call it with a lock held).
func seqRand(start uint32) func() uint32 {
	next := start
	return func() uint32 {
		v := next
		next++
		return v
	}
}

// countingRand wraps f and counts its calls.
type countingRand struct {
	f     func() uint32
	calls int
}

func (c *countingRand) next() uint32 {
	c.calls++
	return c.f()
}
