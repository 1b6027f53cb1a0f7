package coordinator

import (
	"errors"
	"time"

	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/log"
)

// The record types a consumer group writes.
const (
	groupcodecTypeGroup        = groupcodec.TypeConsumerGroupMetadata
	groupcodecTypeMember       = groupcodec.TypeConsumerGroupMemberMetadata
	groupcodecTypeTargetMeta   = groupcodec.TypeConsumerGroupTargetAssignmentMetadata
	groupcodecTypeTargetMember = groupcodec.TypeConsumerGroupTargetAssignmentMember
	groupcodecTypeCurrent      = groupcodec.TypeConsumerGroupCurrentMemberAssignment
)

// add appends a record (a nil value is a tombstone). A key that did not
// encode (nil) adds nothing; the heartbeat's checks bound every string, so
// that none fails.
func (r *consumerRecords) add(key []byte, value ...[]byte) {
	if key == nil {
		return
	}
	var v []byte
	if len(value) > 0 {
		v = value[0]
	}
	r.keys, r.values = append(r.keys, key), append(r.values, v)
}

// encodeKey encodes a consumer group key, nil if it cannot be.
func encodeKey(k groupcodec.ConsumerGroupKey) []byte {
	b, err := groupcodec.AppendConsumerGroupKey(nil, k)
	if err != nil {
		return nil
	}
	return b
}

func groupKey(groupID string, t groupcodec.RecordType) []byte {
	return encodeKey(groupcodec.ConsumerGroupKey{Type: t, Group: groupID})
}

func memberKey(groupID, memberID string, t groupcodec.RecordType) []byte {
	return encodeKey(groupcodec.ConsumerGroupKey{Type: t, Group: groupID, Member: memberID})
}

// groupTombstoneKey is the key of a classic group's metadata.
func groupTombstoneKey(groupID string) []byte {
	b, err := groupcodec.AppendGroupMetadataKey(nil, groupcodec.GroupMetadataKey{Group: groupID})
	if err != nil {
		return nil
	}
	return b
}

func encodeValue(v any) []byte {
	b, err := groupcodec.AppendConsumerGroupValue(nil, v)
	if err != nil {
		return nil
	}
	return b
}

func groupEpochValue(cg *consumerGroup) []byte {
	return encodeValue(groupcodec.ConsumerGroupMetadataValue{Epoch: cg.epoch, MetadataHash: cg.metadataHash})
}

func targetMetaValue(cg *consumerGroup) []byte {
	return encodeValue(groupcodec.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: cg.assignmentEpoch,
		AssignmentTimestamp: cg.assignmentTime})
}

func targetValue(a partitionEpochs) []byte {
	v := groupcodec.ConsumerGroupTargetAssignmentMemberValue{}
	for _, tp := range toTopicPartitions(a) {
		v.TopicPartitions = append(v.TopicPartitions, groupcodec.ConsumerGroupTopicPartitions{TopicID: tp.TopicID, Partitions: tp.Partitions})
	}
	return encodeValue(v)
}

// withEpochs lists a's partitions with their assignment epochs.
func withEpochs(a partitionEpochs) []groupcodec.ConsumerGroupTopicPartitions {
	var out []groupcodec.ConsumerGroupTopicPartitions
	for _, id := range a.sortedTopics() {
		ps := sortedPartitions(a[id])
		epochs := make([]int32, len(ps))
		for i, p := range ps {
			epochs[i] = a[id][p]
		}
		out = append(out, groupcodec.ConsumerGroupTopicPartitions{TopicID: id, Partitions: ps, AssignmentEpochs: epochs})
	}
	return out
}

func currentValue(m *consumerMember) []byte {
	return encodeValue(groupcodec.ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: m.epoch, PreviousMemberEpoch: m.previousEpoch,
		State: m.state, AssignedPartitions: withEpochs(m.assigned), PartitionsPendingRevocation: withEpochs(m.pendingRevocation)})
}

func (c *GroupCoordinator) memberValue(m *consumerMember) []byte {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	rt := int32(-1)
	if m.rebalanceTimeout >= 0 {
		rt = int32(min(m.rebalanceTimeout.Milliseconds(), 1<<31-1))
	}
	return encodeValue(groupcodec.ConsumerGroupMemberMetadataValue{InstanceID: opt(m.instanceID), RackID: opt(m.rackID),
		ClientID: m.clientID, ClientHost: m.clientHost, SubscribedTopicNames: m.topics, SubscribedTopicRegex: opt(m.regex),
		RebalanceTimeoutMs: rt, ServerAssignor: opt(m.serverAssignor)})
}

// removeConsumerMemberRecords deletes a member's three records, as Kafka's
// removeMember does.
func (c *GroupCoordinator) removeConsumerMemberRecords(groupID, memberID string, recs *consumerRecords) {
	recs.add(memberKey(groupID, memberID, groupcodecTypeCurrent), nil)
	recs.add(memberKey(groupID, memberID, groupcodecTypeTargetMember), nil)
	recs.add(memberKey(groupID, memberID, groupcodecTypeMember), nil)
}

// consumerGroupTombstones are the keys that delete an empty consumer
// group's own records (its members have none left).
func consumerGroupTombstones(groupID string) [][]byte {
	return [][]byte{groupKey(groupID, groupcodecTypeTargetMeta), groupKey(groupID, groupcodec.TypeConsumerGroupPartitionMetadata),
		groupKey(groupID, groupcodecTypeGroup)}
}

// writeConsumerRecordsLocked appends a consumer group change's records in
// one batch and returns the partition and the offset to sync to (the
// caller syncs without the lock; 0 when nothing was written). REQUIRES
// c.mu held.
func (c *GroupCoordinator) writeConsumerRecordsLocked(groupID string, recs *consumerRecords) (*log.Log, int64) {
	l, res, err := c.appendBatch(groupID, nil, recs.keys, recs.values)
	if err != nil {
		if !errors.Is(err, log.ErrClosed) {
			c.logger.Warn("writing consumer group records failed", "group", groupID, "err", err)
		}
		return nil, 0
	}
	return l, res.LastOffset + 1
}

// dropConsumerGroupLocked turns an empty consumer group back into a plain
// group (for a classic JoinGroup), deleting its records. REQUIRES c.mu
// held.
func (c *GroupCoordinator) dropConsumerGroupLocked(g *group) {
	var recs consumerRecords
	for _, k := range consumerGroupTombstones(g.id) {
		recs.add(k, nil)
	}
	c.writeConsumerRecordsLocked(g.id, &recs)
	g.cg = nil
	g.protocolType = ""
	g.state = StateEmpty
}

// loadConsumerRecord replays one consumer group record (value nil: a
// tombstone) while the coordinator loads.
func (c *GroupCoordinator) loadConsumerRecord(key, value []byte) error {
	k, err := groupcodec.ParseConsumerGroupKey(key)
	if err != nil {
		return err
	}
	g := c.groupLocked(k.Group)
	if g.cg == nil {
		if value == nil {
			return nil // deletes what is not there
		}
		g.cg = newConsumerGroup(c.consumerSessionTimeout)
		g.protocolType = consumerProtocolType
	}
	cg := g.cg
	member := func() *consumerMember {
		m := cg.members[k.Member]
		if m == nil {
			m = &consumerMember{id: k.Member, assigned: partitionEpochs{}, pendingRevocation: partitionEpochs{}, rebalanceTimeout: -1}
			cg.members[k.Member] = m
		}
		return m
	}
	if value == nil {
		switch k.Type {
		case groupcodecTypeGroup:
			if len(cg.members) == 0 {
				g.cg = nil
				g.protocolType = ""
				if len(g.offsets) == 0 {
					delete(c.groups, g.id)
				}
			}
		case groupcodecTypeMember:
			if m := cg.members[k.Member]; m != nil {
				cg.setOwnership(m, nil)
				delete(cg.members, k.Member)
			}
		case groupcodecTypeTargetMember:
			delete(cg.target, k.Member)
		case groupcodecTypeCurrent:
			if m := cg.members[k.Member]; m != nil {
				cg.setOwnership(m, nil)
				m.assigned, m.pendingRevocation, m.epoch, m.previousEpoch, m.state = partitionEpochs{}, partitionEpochs{}, 0, 0, memberStable
			}
		}
		return nil
	}
	v, err := groupcodec.ParseConsumerGroupValue(k.Type, value)
	if err != nil {
		return err
	}
	switch v := v.(type) {
	case groupcodec.ConsumerGroupMetadataValue:
		cg.epoch, cg.metadataHash = v.Epoch, v.MetadataHash
	case groupcodec.ConsumerGroupTargetAssignmentMetadataValue:
		cg.assignmentEpoch, cg.assignmentTime = v.AssignmentEpoch, v.AssignmentTimestamp
	case groupcodec.ConsumerGroupTargetAssignmentMemberValue:
		a := partitionEpochs{}
		for _, tp := range v.TopicPartitions {
			for _, p := range tp.Partitions {
				a.add(TopicID(tp.TopicID), p, 0)
			}
		}
		cg.target[k.Member] = a
	case groupcodec.ConsumerGroupMemberMetadataValue:
		m := member()
		str := func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		}
		m.instanceID, m.rackID, m.clientID, m.clientHost = str(v.InstanceID), str(v.RackID), v.ClientID, v.ClientHost
		m.topics, m.regex, m.serverAssignor = v.SubscribedTopicNames, str(v.SubscribedTopicRegex), str(v.ServerAssignor)
		m.rebalanceTimeout = -1
		if v.RebalanceTimeoutMs >= 0 {
			m.rebalanceTimeout = time.Duration(v.RebalanceTimeoutMs) * time.Millisecond
		}
	case groupcodec.ConsumerGroupCurrentMemberAssignmentValue:
		m := member()
		cg.setOwnership(m, nil)
		m.epoch, m.previousEpoch, m.state = v.MemberEpoch, v.PreviousMemberEpoch, v.State
		m.assigned, m.pendingRevocation = fromEpochs(v.AssignedPartitions, v.MemberEpoch), fromEpochs(v.PartitionsPendingRevocation, v.MemberEpoch)
		cg.setOwnership(nil, m)
	}
	return nil
}

// fromEpochs reads partitions with their assignment epochs; a record
// without them (written before Kafka 4.3) gives each the member's epoch.
func fromEpochs(tps []groupcodec.ConsumerGroupTopicPartitions, epoch int32) partitionEpochs {
	a := partitionEpochs{}
	for _, tp := range tps {
		for i, p := range tp.Partitions {
			e := epoch
			if i < len(tp.AssignmentEpochs) {
				e = tp.AssignmentEpochs[i]
			}
			a.add(TopicID(tp.TopicID), p, e)
		}
	}
	return a
}

// restoreConsumerGroupLocked finishes a loaded consumer group: its members'
// sessions start now, and a member that was revoking gets its rebalance
// timeout again.
func (c *GroupCoordinator) restoreConsumerGroupLocked(g *group, now time.Time) {
	for _, m := range g.cg.members {
		m.lastHeartbeat = now
		if m.state == memberUnrevoked {
			m.revokeBy = now.Add(max(m.rebalanceTimeout, 0))
		}
	}
	g.state = g.cg.state()
	if len(g.cg.members) > 0 {
		g.emptySince = time.Time{}
	}
	c.scheduleLocked(g)
}
