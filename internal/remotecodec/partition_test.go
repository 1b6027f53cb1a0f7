package remotecodec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPartitionFor proves PartitionFor picks the partitions Kafka 4.4.0's
// RemoteLogMetadataTopicPartitioner picks: the vectors were printed by it
// (internal/testkit/kafkacheck's RemoteMetaDump.java, which TestRemoteCodec checks
// against PartitionFor for more ids), and the topic name plays no part.
func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		id           string
		partition    int32
		p50, p7, p1  int32
		illustrating string
	}{
		{"5a4f1e2d3c4b5a6978879605a4b3c2d1", 0, 31, 6, 0, "the golden files' topic"},
		{"5a4f1e2d3c4b5a6978879605a4b3c2d1", 3, 1, 5, 0, "its partition 3"},
		{"5a4f1e2d3c4b5a6978879605a4b3c2d1", 2147483647, 46, 4, 0, "the largest partition"},
		{"7fffffffffffffffffffffffffffffff", 17, 48, 1, 0, "negative least significant long"},
		{"00000000000000000000000000000000", 3, 46, 6, 0, "the zero uuid"},
		{"80000000000000000000000000000001", 17, 13, 4, 0, "negative most significant long"},
	} {
		t.Run(tc.illustrating, func(t *testing.T) {
			tp := TopicIdPartition{Name: "ignored", ID: uuid(tc.id), Partition: tc.partition}
			require.Equal(t, tc.p50, PartitionFor(tp, DefaultRemoteLogMetadataTopicPartitions))
			require.Equal(t, tc.p7, PartitionFor(tp, 7))
			require.Equal(t, tc.p1, PartitionFor(tp, 1))
			tp.Name = "other"
			require.Equal(t, tc.p50, PartitionFor(tp, 50))
		})
	}
	require.Equal(t, int32(-1), PartitionFor(ordersTopic, 0))
	require.Equal(t, int32(-1), PartitionFor(ordersTopic, -3))
}
