package share

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kafkalite/kafkalite/internal/sharecodec"
	"github.com/kafkalite/kafkalite/log"
)

// PartitionOffset is where a share group is in one partition: Kafka's
// DescribeShareGroupOffsets answer for it.
type PartitionOffset struct {
	Topic     string
	Partition int32
	// StartOffset is the share-partition start offset: every record
	// before it is done (acknowledged or archived). -1 when the group has
	// no state for the partition.
	StartOffset int64
	// LeaderEpoch is the partition's leader epoch when the state was last
	// written; -1 without a state.
	LeaderEpoch int32
	// Lag is the records from the start offset to the high watermark not
	// yet done (KIP-1226); -1 without a state.
	Lag int64
}

// Offsets returns group's position in each of tps, or, for nil tps, in
// every partition the group has a state for (sorted by topic and
// partition). A partition of a topic that no longer exists is left out.
func (m *PartitionManager) Offsets(group string, tps []log.TopicPartition) []PartitionOffset {
	stored := m.store.groupStates(group)
	ids := m.topicIDs()
	if tps == nil {
		for k := range stored {
			if name, ok := ids.names[k.topicID]; ok {
				tps = append(tps, log.TopicPartition{Topic: name, Partition: k.partition})
			}
		}
		slices.SortFunc(tps, func(a, b log.TopicPartition) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.Partition - b.Partition)
		})
	}
	out := make([]PartitionOffset, 0, len(tps))
	for _, tp := range tps {
		po := PartitionOffset{Topic: tp.Topic, Partition: tp.Partition, StartOffset: -1, LeaderEpoch: -1, Lag: -1}
		id, ok := ids.ids[tp.Topic]
		st, has := stored[idKey{group: group, topicID: id, partition: tp.Partition}]
		if ok && has {
			po.StartOffset, po.LeaderEpoch = st.StartOffset, st.LeaderEpoch
			if l, err := m.dir.Partition(tp.Topic, tp.Partition); err == nil {
				po.Lag = max(0, l.HighWatermark()-st.StartOffset-doneAfter(st))
			}
		}
		out = append(out, po)
	}
	return out
}

// doneAfter counts the acknowledged and archived records a stored state
// lists at or after its start offset.
func doneAfter(st sharecodec.Snapshot) int64 {
	var n int64
	for _, b := range st.StateBatches {
		if s := uint8(b.DeliveryState); (s == stateAcknowledged || s == stateArchived) && b.LastOffset >= st.StartOffset {
			n += b.LastOffset - max(b.FirstOffset, st.StartOffset) + 1
		}
	}
	return n
}

// topicNames maps topic names to ids and back.
type topicNames struct {
	ids   map[string][16]byte
	names map[[16]byte]string
}

func (m *PartitionManager) topicIDs() topicNames {
	t := topicNames{ids: map[string][16]byte{}, names: map[[16]byte]string{}}
	for _, name := range m.dir.Topics() {
		desc, err := m.dir.DescribeTopic(name)
		if err != nil {
			continue
		}
		k, err := stateKey{topic: name, topicID: desc.ID}.id()
		if err != nil {
			continue
		}
		t.ids[name], t.names[k.topicID] = k.topicID, name
	}
	return t
}

// SetStartOffset sets group's start offset in a partition, forgetting the
// records in flight (Kafka's AlterShareGroupOffsets), and stores it
// durably. The group must have no members (the group coordinator checks:
// Kafka answers NON_EMPTY_GROUP); records some member still holds would
// be forgotten with the rest.
func (m *PartitionManager) SetStartOffset(ctx context.Context, group string, tp log.TopicPartition, offset int64) error {
	if offset < 0 {
		return fmt.Errorf("%w: start offset %d", ErrInvalidRequest, offset)
	}
	p, l, err := m.partition(ctx, group, tp.Topic, tp.Partition)
	if err != nil {
		return err
	}
	return m.persist(ctx, p, l, func() (bool, error) {
		p.recs, p.acquired = p.recs[:0], 0
		p.start, p.end = offset, offset
		p.stateEpoch++
		p.notifyAvailable()
		return true, nil
	})
}

// DeleteState deletes group's state of a partition (Kafka's
// DeleteShareGroupOffsets): its next use starts again from
// share.auto.offset.reset. Like SetStartOffset, for a group without
// members.
func (m *PartitionManager) DeleteState(ctx context.Context, group string, tp log.TopicPartition) error {
	desc, err := m.dir.DescribeTopic(tp.Topic)
	if err != nil {
		return err
	}
	key := stateKey{group: group, topic: tp.Topic, topicID: desc.ID, partition: tp.Partition}
	m.mu.Lock()
	p := m.parts[partKey{group, tp.Topic, tp.Partition}]
	m.mu.Unlock()
	if p != nil {
		p.wmu.Lock()
		defer p.wmu.Unlock()
		p.mu.Lock()
		p.broken = true // a call holding it reloads
		p.mu.Unlock()
		m.forget(p)
	}
	if _, ok := m.store.get(key); !ok {
		return nil
	}
	return m.store.remove(ctx, key)
}

// DeleteGroup deletes every state of group (Kafka deletes them with the
// group, DeleteGroups).
func (m *PartitionManager) DeleteGroup(ctx context.Context, group string) error {
	ids := m.topicIDs()
	var errs []error
	for k := range m.store.groupStates(group) {
		if name, ok := ids.names[k.topicID]; ok {
			errs = append(errs, m.DeleteState(ctx, group, log.TopicPartition{Topic: name, Partition: k.partition}))
		}
	}
	return errors.Join(errs...)
}
