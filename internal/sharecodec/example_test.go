package sharecodec_test

import (
	"fmt"

	"github.com/kafkalite/kafkalite/internal/sharecodec"
)

// A share coordinator writes a share-partition's snapshot, then an update,
// and reads them back.
func Example() {
	topic := [16]byte{15: 1}
	snapKey, _ := sharecodec.AppendKey(nil, sharecodec.Key{Type: sharecodec.TypeShareSnapshot, GroupID: "g", TopicID: topic, Partition: 0})
	snap, _ := sharecodec.AppendSnapshot(nil, sharecodec.Snapshot{SnapshotEpoch: 1, StartOffset: 100,
		DeliveryCompleteCount: sharecodec.NoDeliveryCompleteCount, CreateTimestamp: 1700000000000, WriteTimestamp: 1700000000000,
		StateBatches: []sharecodec.StateBatch{{FirstOffset: 100, LastOffset: 109, DeliveryState: sharecodec.StateAcknowledged, DeliveryCount: 1}}})
	updKey, _ := sharecodec.AppendKey(nil, sharecodec.Key{Type: sharecodec.TypeShareUpdate, GroupID: "g", TopicID: topic, Partition: 0})
	upd, _ := sharecodec.AppendUpdate(nil, sharecodec.Update{SnapshotEpoch: 1, StartOffset: -1,
		DeliveryCompleteCount: sharecodec.NoDeliveryCompleteCount,
		StateBatches:          []sharecodec.StateBatch{{FirstOffset: 110, LastOffset: 110, DeliveryState: sharecodec.StateArchived, DeliveryCount: 5}}})

	for _, r := range []struct{ key, value []byte }{{snapKey, snap}, {updKey, upd}, {snapKey, nil}} {
		k, err := sharecodec.DecodeKey(r.key)
		if err != nil {
			panic(err)
		}
		if r.value == nil {
			fmt.Printf("%v %s/%d: state deleted\n", k.Type, k.GroupID, k.Partition)
			continue
		}
		switch k.Type {
		case sharecodec.TypeShareSnapshot:
			v, err := sharecodec.DecodeSnapshot(r.value)
			if err != nil {
				panic(err)
			}
			fmt.Printf("%v %s/%d: epoch %d from %d, %v\n", k.Type, k.GroupID, k.Partition, v.SnapshotEpoch, v.StartOffset, v.StateBatches)
		case sharecodec.TypeShareUpdate:
			v, err := sharecodec.DecodeUpdate(r.value)
			if err != nil {
				panic(err)
			}
			fmt.Printf("%v %s/%d: epoch %d, %v\n", k.Type, k.GroupID, k.Partition, v.SnapshotEpoch, v.StateBatches)
		}
	}
	// Output:
	// ShareSnapshot g/0: epoch 1 from 100, [{100 109 2 1}]
	// ShareUpdate g/0: epoch 1, [{110 110 4 5}]
	// ShareSnapshot g/0: state deleted
}
