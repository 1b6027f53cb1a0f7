package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
)

// consumerProtocolType is the protocol type of consumer groups: their
// members' metadata is a ConsumerProtocolSubscription and their
// assignments ConsumerProtocolAssignments.
const consumerProtocolType = "consumer"

// SyncRequest is a network member's SyncGroup: Kafka's SyncGroupRequest,
// decoded.
type SyncRequest struct {
	// Member is the member syncing, in the generation its JoinGroup
	// gave it.
	Member GroupMetadata
	// ProtocolType and Protocol, when not nil (SyncGroup version 5 and
	// later), must be the group's, else [ErrInconsistentProtocol].
	ProtocolType, Protocol *string
	// Assignments are the leader's assignment of every member, by member
	// id (the bytes its assignor made); others send none.
	Assignments map[string][]byte
}

// SyncGroup is Kafka's SyncGroup for the classic protocol: the leader
// gives every member's assignment and gets its own; another member waits
// for the leader's and gets its own. In a stable group it returns the
// member's current assignment. A member the leader left out gets an empty
// one. It fails with [ErrUnknownMember], [ErrIllegalGeneration] for another
// generation, [ErrFencedInstanceID] for a replaced static member, and
// [ErrRebalanceInProgress] when a rebalance runs or starts while it waits:
// the member rejoins. When ctx ends first it returns ctx's error.
func (c *GroupCoordinator) SyncGroup(ctx context.Context, req SyncRequest) ([]byte, error) {
	groupID, memberID, generation := req.Member.GroupID, req.Member.MemberID, req.Member.GenerationID
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	g, ok := c.groups[groupID]
	if ok && ((req.ProtocolType != nil && *req.ProtocolType != g.protocolType) ||
		(req.Protocol != nil && g.protocol != "" && *req.Protocol != g.protocol)) {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: group %s uses %s %s", ErrInconsistentProtocol, groupID, g.protocolType, g.protocol)
	}
	if err := c.checkInstanceLocked(req.Member); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	assignments := req.Assignments
	if !ok || g.members[memberID] == nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %s in group %s", ErrUnknownMember, memberID, groupID)
	}
	m := g.members[memberID]
	switch {
	case generation != g.generation:
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: sync from generation %d, group %s is at %d", ErrIllegalGeneration, generation, groupID, g.generation)
	case g.rebalanceDone != nil:
		c.mu.Unlock()
		return nil, ErrRebalanceInProgress
	case g.state == StateStable:
		defer c.mu.Unlock()
		m.synced = true
		return m.assignmentOut(), nil
	}
	// CompletingRebalance.
	m.synced = true
	m.lastHeartbeat = c.now()
	if memberID == g.leader {
		c.applyAssignmentLocked(g, assignments)
		b := m.assignmentOut()
		c.mu.Unlock()
		return b, nil
	}
	sync := g.syncDone
	c.mu.Unlock()
	select {
	case <-sync:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g.members[memberID] != m:
		return nil, fmt.Errorf("%w: %s was dropped from group %s", ErrUnknownMember, memberID, groupID)
	case g.generation != generation || g.state != StateStable:
		return nil, ErrRebalanceInProgress
	}
	return m.assignmentOut(), nil
}

// applyAssignmentLocked takes the network leader's assignment: each
// member's bytes are kept as given (and decoded for in-process members and
// for descriptions); a member the leader left out gets none. The group is
// then stable, its metadata written, and its waiting members woken.
func (c *GroupCoordinator) applyAssignmentLocked(g *group, assignments map[string][]byte) {
	for id, m := range g.members {
		b := assignments[id]
		if b == nil {
			b = []byte{}
		}
		m.assignmentBytes = slices.Clone(b)
		m.assignment = m.assignment[:0]
		if len(b) == 0 || g.protocolType != consumerProtocolType {
			continue
		}
		a, err := groupcodec.ParseAssignment(b)
		if err != nil {
			c.logger.Warn("the leader's assignment of a member does not decode; the member gets none here", "group", g.id, "member", id, "err", err)
			continue
		}
		for _, tp := range a.Partitions {
			for _, p := range tp.Partitions {
				m.assignment = append(m.assignment, TopicPartition{Topic: tp.Topic, Partition: p})
			}
		}
	}
	g.state = StateStable
	close(g.syncDone)
	g.syncDone = nil
	c.scheduleLocked(g) // the synced members' sessions count again
	c.persistGroupLocked(g)
	c.logger.Info("rebalanced", "group", g.id, "generation", g.generation, "members", len(g.members), "assignor", g.protocol, "leader", g.leader)
}

// assignmentOut is the member's assignment as a SyncGroup response
// carries it: the leader's bytes, or the in-process leader's assignment
// encoded as the Java consumer encodes it.
func (m *member) assignmentOut() []byte {
	if m.assignmentBytes != nil {
		return m.assignmentBytes
	}
	b, err := groupcodec.AppendAssignment(nil, groupcodec.Assignment{Partitions: groupTPs(m.assignment)})
	if err != nil {
		return []byte{}
	}
	return b
}

// metadata is the member's metadata for a protocol: a network member's
// bytes as it sent them; an in-process member's subscription encoded as
// the Java consumer encodes it, with the sticky assignors' user data.
func (m *member) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol && p.Metadata != nil {
			return p.Metadata
		}
	}
	if m.assignors == nil {
		return []byte{}
	}
	owned := groupTPs(m.owned)
	sub := groupcodec.Subscription{Topics: m.topics, OwnedPartitions: owned, GenerationID: m.ownedGeneration}
	switch protocol {
	case groupcodec.AssignorSticky:
		if len(owned) > 0 {
			sub.UserData, _ = groupcodec.AppendStickyUserData(nil, groupcodec.StickyUserData{PreviousAssignment: owned, Generation: m.ownedGeneration})
		}
	case groupcodec.AssignorCooperativeSticky:
		sub.UserData = groupcodec.AppendCooperativeStickyUserData(nil, m.ownedGeneration)
	}
	b, err := groupcodec.AppendSubscription(nil, sub)
	if err != nil {
		return []byte{}
	}
	return b
}

// subscribeFromMetadata decodes a network member's subscription from its
// most preferred protocol's metadata (a consumer sends the same topics
// for each). Metadata that does not decode leaves the member subscribed to
// nothing: an in-process leader assigns it nothing, a network leader reads
// the bytes itself.
func (m *member) subscribeFromMetadata(c *GroupCoordinator) {
	m.topics, m.owned, m.ownedGeneration = nil, nil, groupcodec.NoGenerationID
	if m.protocolType != consumerProtocolType || len(m.protocols) == 0 {
		return
	}
	sub, err := groupcodec.ParseSubscription(m.protocols[0].Metadata)
	if err != nil {
		c.logger.Warn("a member's subscription does not decode", "member", m.id, "protocol", m.protocols[0].Name, "err", err)
		return
	}
	m.topics = sub.Topics
	m.owned, m.ownedGeneration = flatTPs(sub.OwnedPartitions), sub.GenerationID
}

// assignorMember is the member as an in-process leader's assignor sees it
// for the chosen protocol. A network member using the eager sticky
// assignor gives its previous assignment in the sticky user data, as the
// Java client does, rather than in its owned partitions.
func (m *member) assignorMember(protocol string) assignor.Member {
	am := assignor.Member{ID: m.id, InstanceID: m.instanceID, Topics: m.topics, Generation: m.ownedGeneration,
		OwnedPartitions: slices.Clone(m.owned)}
	if m.assignors != nil || protocol != groupcodec.AssignorSticky || len(m.owned) > 0 {
		return am
	}
	sub, err := groupcodec.ParseSubscription(m.metadata(protocol))
	if err != nil || len(sub.UserData) == 0 {
		return am
	}
	if u, err := groupcodec.ParseStickyUserData(sub.UserData); err == nil {
		am.OwnedPartitions, am.Generation = flatTPs(u.PreviousAssignment), u.Generation
	}
	return am
}

// flatTPs lists the partitions of the consumer protocol's per-topic lists.
func flatTPs(in []groupcodec.TopicPartitions) []TopicPartition {
	var out []TopicPartition
	for _, tp := range in {
		for _, p := range tp.Partitions {
			out = append(out, TopicPartition{Topic: tp.Topic, Partition: p})
		}
	}
	return out
}
