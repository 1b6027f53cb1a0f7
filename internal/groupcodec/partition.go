package groupcodec

import "math"

// DefaultOffsetsTopicPartitions is Kafka's default partition count of
// __consumer_offsets (offsets.topic.num.partitions = 50), fixed when the
// topic is created.
const DefaultOffsetsTopicPartitions = 50

// PartitionFor returns the __consumer_offsets partition that holds groupID's
// records when the topic has numPartitions partitions, as Kafka's group
// coordinator computes it (GroupCoordinatorService.partitionFor):
//
//	Utils.abs(groupId.hashCode()) % numPartitions
//
// where hashCode is Java's String.hashCode (h = 31*h + c over the UTF-16 code
// units, int32 arithmetic, so a character outside the Basic Multilingual
// Plane counts as its two surrogates) and Utils.abs maps math.MinInt32 to 0.
//
// groupID is read as UTF-8, the encoding of group ids on Kafka's wire. An
// invalid byte counts as U+FFFD, as in Go's range over a string; Java's
// decoder also substitutes U+FFFD, though it may fold a malformed sequence
// of several bytes into one.
//
// PartitionFor returns -1 when numPartitions is not positive.
func PartitionFor(groupID string, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return -1
	}
	h := javaStringHashCode(groupID)
	if h == math.MinInt32 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return h % numPartitions
}

// javaStringHashCode returns Java's String.hashCode of s.
func javaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			// UTF-16 surrogate pair.
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
