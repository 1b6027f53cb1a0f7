package remotecodec_test

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/internal/remotecodec"
)

// A broker about to copy orders-3's segment 1200-4799 to remote storage
// announces it: one __remote_log_metadata record, with a null key, in the
// partition PartitionFor picks for orders-3. Its value starts with frame
// version 1, apiKey 0 and version 0. Replaying the record gives the
// segment back.
func Example_roundTrip() {
	orders3 := remotecodec.TopicIdPartition{Name: "orders", Partition: 3,
		ID: [16]byte{0x5a, 0x4f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0x05, 0xa4, 0xb3, 0xc2, 0xd1}}
	rec := remotecodec.RemoteLogSegmentMetadataRecord{
		RemoteLogSegmentID: remotecodec.RemoteLogSegmentID{TopicIdPartition: orders3,
			ID: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 0x8a, 0x9b, 0xac, 0xbd, 0xce, 0xdf, 0xe0, 0xf1}},
		StartOffset: 1200, EndOffset: 4799, BrokerID: 1,
		MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000005000,
		SegmentLeaderEpochs:   []remotecodec.SegmentLeaderEpoch{{LeaderEpoch: 0, Offset: 1200}, {LeaderEpoch: 2, Offset: 3000}},
		SegmentSizeInBytes:    1 << 20,
		RemoteLogSegmentState: remotecodec.CopySegmentStarted,
	}
	value, err := remotecodec.AppendValue(nil, rec)
	if err != nil {
		panic(err)
	}
	fmt.Printf("partition %d of %d\n", remotecodec.PartitionFor(orders3, remotecodec.DefaultRemoteLogMetadataTopicPartitions),
		remotecodec.DefaultRemoteLogMetadataTopicPartitions)
	fmt.Printf("value %d bytes, % x ...\n", len(value), value[:10])

	got, err := remotecodec.ParseValue(value)
	if err != nil {
		panic(err)
	}
	seg := got.(remotecodec.RemoteLogSegmentMetadataRecord)
	fmt.Printf("%s-%d %d-%d %s epochs %v\n", seg.RemoteLogSegmentID.TopicIdPartition.Name,
		seg.RemoteLogSegmentID.TopicIdPartition.Partition, seg.StartOffset, seg.EndOffset,
		seg.RemoteLogSegmentState, seg.SegmentLeaderEpochs)
	// Output:
	// partition 1 of 50
	// value 118 bytes, 01 00 00 07 6f 72 64 65 72 73 ...
	// orders-3 1200-4799 COPY_SEGMENT_STARTED epochs [{0 1200} {2 3000}]
}

// Replaying __remote_log_metadata: a record type this package does not know
// is a *DecodeError matching ErrCorrupt and ErrUnknownAPIKey, as it fails
// Kafka's serde.
func ExampleParseValue() {
	_, err := remotecodec.ParseValue([]byte{0x01, 0x05, 0x00})
	fmt.Println(errors.Is(err, remotecodec.ErrCorrupt), errors.Is(err, remotecodec.ErrUnknownAPIKey))
	fmt.Println(err)
	// Output:
	// true true
	// remotecodec: corrupt RemoteLogMetadata: apiKey at byte 1: apiKey 5 is not a record type Kafka knows (0-3)
}
