package coordinator

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/internal/groupcodec"
)

// A share group's records in __consumer_offsets, Kafka 4.4's (types 10 to
// 14): the group epoch and metadata hash, each member's subscription, the
// target assignment's epoch and each member's part, and each member's
// current epoch and assignment. kafkalite writes them all at every change
// of the group (a share group has at most group.share.max.size members),
// durably before the heartbeat's answer, and tombstones for a member that
// left and for a deleted group. Type 15 (the share-partitions whose state
// the group coordinator initialized) is not written: kafkalite's
// share-partitions initialize themselves at their first fetch, and the
// states of a deleted group are found in __share_group_state.

func shareKey(groupID string, t groupcodec.RecordType, memberID string) []byte {
	b, err := groupcodec.AppendShareGroupKey(nil, groupcodec.ShareGroupKey{Type: t, Group: groupID, Member: memberID})
	if err != nil {
		return nil
	}
	return b
}

// shareValue encodes a share group value. The heartbeat's checks bound
// every string (checkShareHeartbeat), so that none fails; a value that did
// not encode is not written (see addValue).
func shareValue(v any) []byte {
	b, err := groupcodec.AppendShareGroupValue(nil, v)
	if err != nil {
		return nil
	}
	return b
}

// addValue appends a record with a value; a value that did not encode
// (nil) adds nothing, where add would take it for a tombstone.
func (r *consumerRecords) addValue(key, value []byte) {
	if value != nil {
		r.add(key, value)
	}
}

// plainPartitions lists a's partitions without epochs, as share groups
// store them.
func plainPartitions(a partitionEpochs) []groupcodec.ConsumerGroupTopicPartitions {
	var out []groupcodec.ConsumerGroupTopicPartitions
	for _, tp := range toTopicPartitions(a) {
		out = append(out, groupcodec.ConsumerGroupTopicPartitions{TopicID: tp.TopicID, Partitions: tp.Partitions})
	}
	return out
}

// shareRecordsLocked returns the records of g's state, with tombstones for
// the members in gone. REQUIRES c.mu held.
func (c *GroupCoordinator) shareRecordsLocked(g *group, gone []string) *consumerRecords {
	sg := g.sg
	recs := &consumerRecords{}
	for _, id := range gone {
		for _, t := range []groupcodec.RecordType{groupcodec.TypeShareGroupCurrentMemberAssignment, groupcodec.TypeShareGroupTargetAssignmentMember, groupcodec.TypeShareGroupMemberMetadata} {
			recs.add(shareKey(g.id, t, id))
		}
	}
	recs.addValue(shareKey(g.id, groupcodec.TypeShareGroupMetadata, ""), shareValue(groupcodec.ShareGroupMetadataValue{Epoch: sg.epoch, MetadataHash: sg.metadataHash}))
	for _, id := range slices.Sorted(maps.Keys(sg.members)) {
		m := sg.members[id]
		var rack *string
		if m.rackID != "" {
			rack = &m.rackID
		}
		recs.addValue(shareKey(g.id, groupcodec.TypeShareGroupMemberMetadata, id), shareValue(groupcodec.ShareGroupMemberMetadataValue{
			RackID: rack, ClientID: m.clientID, ClientHost: m.clientHost, SubscribedTopicNames: m.topics}))
		recs.addValue(shareKey(g.id, groupcodec.TypeShareGroupTargetAssignmentMember, id), shareValue(groupcodec.ShareGroupTargetAssignmentMemberValue{
			TopicPartitions: plainPartitions(m.assigned)}))
	}
	recs.addValue(shareKey(g.id, groupcodec.TypeShareGroupTargetAssignmentMetadata, ""), shareValue(groupcodec.ShareGroupTargetAssignmentMetadataValue{
		AssignmentEpoch: sg.assignmentEpoch, AssignmentTimestamp: c.now().UnixMilli()}))
	for _, id := range slices.Sorted(maps.Keys(sg.members)) {
		m := sg.members[id]
		recs.addValue(shareKey(g.id, groupcodec.TypeShareGroupCurrentMemberAssignment, id), shareValue(groupcodec.ShareGroupCurrentMemberAssignmentValue{
			MemberEpoch: m.epoch, PreviousMemberEpoch: m.epoch, AssignedPartitions: plainPartitions(m.assigned)}))
	}
	return recs
}

// shareGroupTombstones are the keys of a share group's own records.
func shareGroupTombstones(groupID string) [][]byte {
	return [][]byte{
		shareKey(groupID, groupcodec.TypeShareGroupTargetAssignmentMetadata, ""),
		shareKey(groupID, groupcodec.TypeShareGroupMetadata, ""),
	}
}

// writeShareRecords writes g's records, durably. It takes c.mu for the
// append (so that records of one group are in the order of its changes)
// and syncs without it.
func (c *GroupCoordinator) writeShareRecords(ctx context.Context, groupID string, gone []string) error {
	c.mu.Lock()
	g, ok := c.groups[groupID]
	if !ok || g.sg == nil || c.closed {
		c.mu.Unlock()
		return nil
	}
	recs := c.shareRecordsLocked(g, gone)
	l, end := c.writeConsumerRecordsLocked(groupID, recs)
	c.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Sync(context.WithoutCancel(ctx), end)
}

// loadShareRecord replays a share group record. REQUIRES c.mu held.
func (c *GroupCoordinator) loadShareRecord(key, value []byte) error {
	k, err := groupcodec.ParseShareGroupKey(key)
	if err != nil {
		return err
	}
	g, ok := c.groups[k.Group]
	if value == nil {
		if !ok || g.sg == nil {
			return nil
		}
		switch k.Type {
		case groupcodec.TypeShareGroupMemberMetadata:
			delete(g.sg.members, k.Member)
		case groupcodec.TypeShareGroupMetadata:
			delete(c.groups, k.Group)
		}
		return nil
	}
	v, err := groupcodec.ParseShareGroupValue(k.Type, value)
	if err != nil {
		return err
	}
	if !ok {
		g = c.groupLocked(k.Group)
	}
	if g.sg == nil {
		g.sg = &shareGroup{members: map[string]*shareMember{}, sessionTimeout: c.shareSessionTimeout}
	}
	sg := g.sg
	member := func() *shareMember {
		m, ok := sg.members[k.Member]
		if !ok {
			m = &shareMember{id: k.Member}
			sg.members[k.Member] = m
		}
		return m
	}
	switch v := v.(type) {
	case groupcodec.ShareGroupMetadataValue:
		sg.epoch, sg.metadataHash = v.Epoch, v.MetadataHash
	case groupcodec.ShareGroupMemberMetadataValue:
		m := member()
		m.clientID, m.clientHost, m.topics = v.ClientID, v.ClientHost, slices.Clone(v.SubscribedTopicNames)
		m.rackID = ""
		if v.RackID != nil {
			m.rackID = *v.RackID
		}
	case groupcodec.ShareGroupCurrentMemberAssignmentValue:
		member().epoch = v.MemberEpoch
	case groupcodec.ShareGroupTargetAssignmentMetadataValue:
		sg.assignmentEpoch = v.AssignmentEpoch
	}
	return nil
}

// restoreShareGroupLocked finishes a loaded share group: members whose
// subscription was not found are dropped, the target assignment is
// computed again from the subscriptions (the simple assignor is a
// function of them), and the sessions start now. REQUIRES c.mu held.
func (c *GroupCoordinator) restoreShareGroupLocked(g *group, now time.Time) {
	sg := g.sg
	for id, m := range sg.members {
		if len(m.topics) == 0 {
			delete(sg.members, id)
			continue
		}
		m.lastHeartbeat = now
	}
	epoch := sg.assignmentEpoch
	c.assignShareLocked(sg, c.shareTopicsLocked(sg))
	sg.assignmentEpoch = epoch
	g.state = sg.state()
	c.scheduleLocked(g)
}
