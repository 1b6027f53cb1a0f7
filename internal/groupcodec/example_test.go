package groupcodec_test

import (
	"fmt"

	"github.com/kafkalite/kafkalite/internal/groupcodec"
)

// A coordinator stores a commit: the group picks the partition of
// __consumer_offsets, the key and value become one record there.
func Example_offsetCommit() {
	group := "orders-app"
	partition := groupcodec.PartitionFor(group, groupcodec.DefaultOffsetsTopicPartitions)

	key, err := groupcodec.AppendOffsetCommitKey(nil, groupcodec.OffsetCommitKey{Group: group, Topic: "orders", Partition: 3})
	if err != nil {
		panic(err)
	}
	v := groupcodec.NewOffsetCommitValue(4711, "", 1700000000000)
	v.LeaderEpoch = 5
	value, err := groupcodec.AppendOffsetCommitValue(nil, v)
	if err != nil {
		panic(err)
	}
	fmt.Printf("partition %d\nkey   % x\nvalue % x\n", partition, key, value)
	// Output:
	// partition 5
	// key   00 01 00 0a 6f 72 64 65 72 73 2d 61 70 70 00 06 6f 72 64 65 72 73 00 00 00 03
	// value 00 04 00 00 00 00 00 00 12 67 00 00 00 05 01 00 00 01 8b cf e5 68 00 00
}

// Replaying __consumer_offsets: the key says what a record is, a nil value
// deletes it.
func ExampleParseValue() {
	key, _ := groupcodec.AppendOffsetCommitKey(nil, groupcodec.OffsetCommitKey{Group: "g", Topic: "t", Partition: 0})
	value, _ := groupcodec.AppendOffsetCommitValue(nil, groupcodec.NewOffsetCommitValue(42, "", 1700000000000))
	groupKey, _ := groupcodec.AppendGroupMetadataKey(nil, groupcodec.GroupMetadataKey{Group: "g"})
	epochKey, _ := groupcodec.AppendConsumerGroupKey(nil, groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupMetadata, Group: "g"})
	epoch, _ := groupcodec.AppendConsumerGroupValue(nil, groupcodec.ConsumerGroupMetadataValue{Epoch: 5})
	shareKey, _ := groupcodec.AppendShareGroupKey(nil, groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupMetadata, Group: "s"})
	shareEpoch, _ := groupcodec.AppendShareGroupValue(nil, groupcodec.ShareGroupMetadataValue{Epoch: 3})

	records := []struct{ key, value []byte }{
		{key, value},
		{key, nil},             // offset deletion
		{groupKey, nil},        // group deletion
		{epochKey, epoch},      // a KIP-848 consumer group's epoch
		{shareKey, shareEpoch}, // a share group's epoch
		{[]byte{0, 17, 0, 1, 'g'}, []byte{0, 0, 0, 0, 0, 1, 0}}, // a streams group's epoch
	}
	for _, r := range records {
		k, err := groupcodec.ParseKey(r.key)
		if err != nil {
			panic(err)
		}
		v, err := groupcodec.ParseValue(k.Type, r.value)
		if err != nil {
			panic(err)
		}
		switch {
		case v.Tombstone:
			fmt.Printf("%v: delete\n", k.Type)
		case k.Type == groupcodec.TypeOffsetCommit:
			fmt.Printf("%v: %s/%s-%d at offset %d (value v%d)\n", k.Type,
				k.OffsetCommit.Group, k.OffsetCommit.Topic, k.OffsetCommit.Partition, v.OffsetCommit.Offset, v.Version)
		case k.Type == groupcodec.TypeConsumerGroupMetadata:
			fmt.Printf("%v: %s at epoch %d\n", k.Type, k.ConsumerGroup.Group, v.ConsumerGroup.(groupcodec.ConsumerGroupMetadataValue).Epoch)
		case k.Type == groupcodec.TypeShareGroupMetadata:
			fmt.Printf("%v: %s at epoch %d\n", k.Type, k.ShareGroup.Group, v.ShareGroup.(groupcodec.ShareGroupMetadataValue).Epoch)
		default:
			fmt.Printf("%v: not decoded, %d value bytes\n", k.Type, len(v.Body))
		}
	}
	// Output:
	// OffsetCommit: g/t-0 at offset 42 (value v4)
	// OffsetCommit: delete
	// GroupMetadata: delete
	// ConsumerGroupMetadata: g at epoch 5
	// ShareGroupMetadata: s at epoch 3
	// type 17: not decoded, 7 value bytes
}

// The members of a classic consumer group carry consumer protocol bytes.
func ExampleParseSubscription() {
	rack := "rack-a"
	b, err := groupcodec.AppendSubscription(nil, groupcodec.Subscription{
		Topics:       []string{"orders"},
		UserData:     groupcodec.AppendCooperativeStickyUserData(nil, 7),
		GenerationID: 7,
		RackID:       &rack,
	})
	if err != nil {
		panic(err)
	}
	s, err := groupcodec.ParseSubscription(b)
	if err != nil {
		panic(err)
	}
	gen, _ := groupcodec.ParseCooperativeStickyUserData(s.UserData)
	fmt.Println(s.Topics, s.GenerationID, *s.RackID, gen)
	// Output:
	// [orders] 7 rack-a 7
}
