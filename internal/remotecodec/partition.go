package remotecodec

import (
	"encoding/binary"

	"github.com/kafkalite/kafkalite/partitioner"
)

// DefaultRemoteLogMetadataTopicPartitions is Kafka's default partition
// count of __remote_log_metadata (remote.log.metadata.topic.num.partitions
// = 50, TopicBasedRemoteLogMetadataManagerConfig), fixed when the topic is
// created.
const DefaultRemoteLogMetadataTopicPartitions = 50

// RemoteLogMetadataTopic is the topic's name
// (TopicBasedRemoteLogMetadataManagerConfig.REMOTE_LOG_METADATA_TOPIC_NAME).
const RemoteLogMetadataTopic = "__remote_log_metadata"

// PartitionFor returns the __remote_log_metadata partition that holds the
// records of tp when the topic has numPartitions partitions, as Kafka's
// RemoteLogMetadataTopicPartitioner.metadataPartition computes it:
//
//	hash = Objects.hash(topicId.getLeastSignificantBits(),
//	                    topicId.getMostSignificantBits(), partition)
//	Utils.toPositive(Utils.murmur2(hash as 4 big-endian bytes)) % numPartitions
//
// where Objects.hash is Java's Arrays.hashCode over the boxed values
// (h = 31*h + element hash, from 1, int32 arithmetic; a Long hashes as
// (int)(v ^ v>>>32), an Integer as itself). Only the topic id and the
// partition count: the topic name does not. Every record about a partition
// — its segments, their updates, its deletion — goes to that partition.
//
// PartitionFor returns -1 when numPartitions is not positive.
func PartitionFor(tp TopicIdPartition, numPartitions int32) int32 {
	if numPartitions <= 0 {
		return -1
	}
	msb := binary.BigEndian.Uint64(tp.ID[:8])
	lsb := binary.BigEndian.Uint64(tp.ID[8:])
	h := int32(1)
	h = 31*h + javaLongHash(lsb)
	h = 31*h + javaLongHash(msb)
	h = 31*h + tp.Partition
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(h))
	return partitioner.ToPositive(partitioner.Murmur2(b[:])) % numPartitions
}

// javaLongHash is Java's Long.hashCode: (int)(v ^ (v >>> 32)).
func javaLongHash(v uint64) int32 { return int32(uint32(v ^ v>>32)) }
