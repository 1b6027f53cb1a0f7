package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/share"
)

// TypeShare is the type of KIP-932's share groups.
const TypeShare GroupType = "share"

// AssignorSimple is the name of the share groups' assignor (Kafka's
// SimpleAssignor for share groups).
const AssignorSimple = "simple"

// ShareHeartbeat is a ShareGroupHeartbeat request: Kafka's
// ShareGroupHeartbeatRequest.
type ShareHeartbeat struct {
	GroupID string
	// MemberID is the member's id, which the member makes (KIP-1082), a
	// UUID for Kafka's clients; MemberEpoch is JoinEpoch to join,
	// LeaveEpoch to leave, and otherwise the epoch the member has.
	MemberID    string
	MemberEpoch int32
	// RackID is the member's rack, nil when unchanged.
	RackID *string
	// SubscribedTopicNames are the topics the member reads, required to
	// join; nil when unchanged.
	SubscribedTopicNames []string
	// ClientID and ClientHost describe the member's client.
	ClientID, ClientHost string
}

// ShareHeartbeatResult is the answer to a share group heartbeat.
type ShareHeartbeatResult struct {
	MemberID    string
	MemberEpoch int32
	// HeartbeatInterval is the group's share.heartbeat.interval.ms
	// (group.share.heartbeat.interval.ms by default): when the member
	// should heartbeat again.
	HeartbeatInterval time.Duration
	// Assignment is the member's partitions (empty after a leave).
	Assignment []TopicPartitions
}

// ShareMemberDescription describes a member of a share group.
type ShareMemberDescription struct {
	MemberID, RackID, ClientID, ClientHost string
	MemberEpoch                            int32
	SubscribedTopicNames                   []string
	Assignment                             []TopicPartitions
}

// ShareGroupDescription describes a share group: Kafka's
// ShareGroupDescribe answer.
type ShareGroupDescription struct {
	GroupID         string
	State           GroupState
	GroupEpoch      int32
	AssignmentEpoch int32
	AssignorName    string
	Members         []ShareMemberDescription
}

// shareGroup is a group's state as a share group. Its fields are guarded by
// the coordinator's mutex. A share group assigns without revocation: a
// partition may be read by several members at once, so a member takes its
// new target assignment at its next heartbeat.
type shareGroup struct {
	epoch           int32 // the group epoch
	assignmentEpoch int32
	metadataHash    int64
	members         map[string]*shareMember
	// sessionTimeout is group.share.session.timeout.ms.
	sessionTimeout time.Duration
}

// shareMember is a share group member.
type shareMember struct {
	id, rackID, clientID, clientHost string
	topics                           []string
	epoch                            int32
	assigned                         partitionEpochs
	lastHeartbeat                    time.Time
}

// shareRelease is a member whose acquired records are to be released
// once the coordinator's mutex is no longer held.
type shareRelease struct{ group, member string }

func (sg *shareGroup) state() GroupState {
	switch {
	case len(sg.members) == 0:
		return StateEmpty
	case sg.assignmentEpoch != sg.epoch:
		return StateAssigning
	}
	return StateStable
}

// deadline is the earliest session expiry of the group's members.
func (sg *shareGroup) deadline() time.Time {
	var next time.Time
	for _, m := range sg.members {
		if t := m.lastHeartbeat.Add(sg.sessionTimeout); next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}

// ShareGroupHeartbeat is Kafka's ShareGroupHeartbeat. A member joins with
// JoinEpoch and the topics it subscribes to, heartbeats with the epoch it
// was given, and leaves with LeaveEpoch (its acquired records are released
// then, as they are when its session of group.share.session.timeout.ms
// runs out). The group epoch is bumped when members, subscriptions or the
// subscribed topics' partitions change; the target assignment is computed
// at once (the simple assignor: every subscribed partition to at least one
// member, partitions shared when members outnumber them), and each member
// gets its part at its next heartbeat, with the group's epoch. The first
// heartbeat creates the group; a group of another type is ErrUnknownGroup
// (Kafka's GROUP_ID_NOT_FOUND).
func (c *GroupCoordinator) ShareGroupHeartbeat(ctx context.Context, req ShareHeartbeat) (ShareHeartbeatResult, error) {
	if err := checkShareHeartbeat(req); err != nil {
		return ShareHeartbeatResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return ShareHeartbeatResult{}, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ShareHeartbeatResult{}, ErrClosed
	}
	epoch := c.shareEpochsLocked(req.GroupID, req.MemberID)
	res, release, err := c.shareHeartbeatLocked(req)
	changed := err == nil && c.shareEpochsLocked(req.GroupID, req.MemberID) != epoch
	c.mu.Unlock()
	if changed || release {
		// Durable before the answer, as a consumer group's heartbeat.
		var gone []string
		if release {
			gone = []string{req.MemberID}
		}
		if werr := c.writeShareRecords(ctx, req.GroupID, gone); werr != nil {
			return ShareHeartbeatResult{}, werr
		}
	}
	if release {
		c.releaseShareMembers(ctx, []shareRelease{{req.GroupID, req.MemberID}})
	}
	return res, err
}

// shareEpochsLocked returns what a heartbeat that changes the group's
// stored state changes: the group epoch and the member's epoch (-1 when
// absent).
func (c *GroupCoordinator) shareEpochsLocked(groupID, memberID string) [2]int32 {
	g, ok := c.groups[groupID]
	if !ok || g.sg == nil {
		return [2]int32{-1, -1}
	}
	out := [2]int32{g.sg.epoch, -1}
	if m, ok := g.sg.members[memberID]; ok {
		out[1] = m.epoch
	}
	return out
}

// checkShareHeartbeat checks a heartbeat's fields as Kafka's
// throwIfShareGroupHeartbeatRequestIsInvalid does.
func checkShareHeartbeat(req ShareHeartbeat) error {
	switch {
	case req.GroupID == "":
		return fmt.Errorf("%w: GroupId can't be empty", ErrInvalidHeartbeat)
	case req.MemberID == "":
		return fmt.Errorf("%w: MemberId can't be empty", ErrInvalidHeartbeat)
	case req.RackID != nil && *req.RackID == "":
		return fmt.Errorf("%w: RackId can't be empty", ErrInvalidHeartbeat)
	case req.MemberEpoch < LeaveEpoch:
		return fmt.Errorf("%w: MemberEpoch is %d", ErrInvalidHeartbeat, req.MemberEpoch)
	case req.MemberEpoch == JoinEpoch && len(req.SubscribedTopicNames) == 0:
		return fmt.Errorf("%w: SubscribedTopicNames must be set in first request", ErrInvalidHeartbeat)
	}
	// Every string goes into records whose strings have int16 lengths.
	long := func(s string) bool { return len(s) > math.MaxInt16 }
	if long(req.GroupID) || long(req.MemberID) || long(req.ClientID) || long(req.ClientHost) || (req.RackID != nil && long(*req.RackID)) ||
		slices.ContainsFunc(req.SubscribedTopicNames, long) {
		return fmt.Errorf("%w: a string longer than %d bytes", ErrInvalidHeartbeat, math.MaxInt16)
	}
	return nil
}

func (c *GroupCoordinator) shareHeartbeatLocked(req ShareHeartbeat) (ShareHeartbeatResult, bool, error) {
	now := c.now()
	g, ok := c.groups[req.GroupID]
	if req.MemberEpoch == LeaveEpoch {
		if !ok || g.sg == nil {
			return ShareHeartbeatResult{}, false, fmt.Errorf("%w: %s is not a share group", ErrUnknownGroup, req.GroupID)
		}
		if _, ok := g.sg.members[req.MemberID]; !ok {
			return ShareHeartbeatResult{}, false, fmt.Errorf("%w: %s is not a member of share group %s", ErrUnknownMember, req.MemberID, req.GroupID)
		}
		c.removeShareMemberLocked(g, req.MemberID)
		return ShareHeartbeatResult{MemberID: req.MemberID, MemberEpoch: LeaveEpoch}, true, nil
	}
	switch {
	case ok && g.sg == nil && (g.cg != nil || g.memberCount() > 0 || g.protocolType != "" || len(g.offsets) > 0):
		return ShareHeartbeatResult{}, false, fmt.Errorf("%w: %s is a group of another type, not a share group", ErrUnknownGroup, req.GroupID)
	case !ok:
		if req.MemberEpoch != JoinEpoch {
			return ShareHeartbeatResult{}, false, fmt.Errorf("%w: share group %s does not exist", ErrUnknownMember, req.GroupID)
		}
		var err error
		if g, err = c.newGroupLocked(req.GroupID); err != nil {
			return ShareHeartbeatResult{}, false, err
		}
	}
	if g.sg == nil {
		g.sg = &shareGroup{members: map[string]*shareMember{}, sessionTimeout: c.shareSessionTimeout}
		g.state = StateEmpty
	}
	sg := g.sg
	m, exists := sg.members[req.MemberID]
	switch {
	case !exists && req.MemberEpoch != JoinEpoch:
		return ShareHeartbeatResult{}, false, fmt.Errorf("%w: %s is not a member of share group %s", ErrUnknownMember, req.MemberID, req.GroupID)
	case exists && req.MemberEpoch != JoinEpoch && req.MemberEpoch != m.epoch:
		return ShareHeartbeatResult{}, false, fmt.Errorf("%w: member %s of %s has epoch %d, not %d", ErrFencedMemberEpoch, req.MemberID, req.GroupID, m.epoch, req.MemberEpoch)
	case !exists && len(sg.members) >= c.shareMaxSize:
		return ShareHeartbeatResult{}, false, fmt.Errorf("%w: share group %s has %d members (group.share.max.size)", ErrGroupMaxSize, req.GroupID, len(sg.members))
	}
	changed := false
	if !exists {
		m = &shareMember{id: req.MemberID}
		sg.members[req.MemberID] = m
		changed = true
	}
	gc := c.dir.GroupConfig(g.id) // share.session.timeout.ms and share.heartbeat.interval.ms
	sg.sessionTimeout = gc.ShareSessionTimeout
	m.lastHeartbeat = now
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	if req.RackID != nil {
		m.rackID = *req.RackID
	}
	if req.SubscribedTopicNames != nil {
		topics := slices.Sorted(slices.Values(req.SubscribedTopicNames))
		topics = slices.Compact(topics)
		if !slices.Equal(topics, m.topics) {
			m.topics = topics
			changed = true
		}
	}
	topics := c.shareTopicsLocked(sg)
	if h := metadataHash(topics); h != sg.metadataHash {
		sg.metadataHash = h
		changed = true
	}
	if changed {
		sg.epoch++
		c.assignShareLocked(sg, topics)
	}
	if m.epoch != sg.assignmentEpoch {
		m.epoch = sg.assignmentEpoch
	}
	g.state = sg.state()
	c.scheduleLocked(g)
	return ShareHeartbeatResult{MemberID: m.id, MemberEpoch: m.epoch, HeartbeatInterval: gc.ShareHeartbeatInterval,
		Assignment: toTopicPartitions(m.assigned)}, false, nil
}

// shareTopicsLocked returns the topics the share group's members subscribe
// to that exist.
func (c *GroupCoordinator) shareTopicsLocked(sg *shareGroup) map[string]assignTopic {
	topics := map[string]assignTopic{}
	for _, m := range sg.members {
		for _, name := range m.topics {
			if _, ok := topics[name]; ok {
				continue
			}
			if t, ok := c.topicFor(name); ok {
				topics[name] = t
			}
		}
	}
	return topics
}

// assignShareLocked computes the share group's target assignment, Kafka's
// simple assignor's way: for each topic, its partitions are dealt round
// robin to the members subscribing to it; when they are fewer than the
// members, each member gets one, so that partitions are shared. Members
// take it at once (share groups revoke nothing).
func (c *GroupCoordinator) assignShareLocked(sg *shareGroup, topics map[string]assignTopic) {
	ids := slices.Sorted(maps.Keys(sg.members))
	for _, id := range ids {
		sg.members[id].assigned = partitionEpochs{}
	}
	names := slices.Sorted(maps.Keys(topics))
	for ti, name := range names {
		t := topics[name]
		var subs []*shareMember
		for _, id := range ids {
			if m := sg.members[id]; slices.Contains(m.topics, name) {
				subs = append(subs, m)
			}
		}
		if len(subs) == 0 || t.partitions == 0 {
			continue
		}
		n := max(int(t.partitions), len(subs))
		for i := range n {
			m := subs[(i+ti)%len(subs)]
			p := int32(i % int(t.partitions))
			if m.assigned[t.id] == nil {
				m.assigned[t.id] = map[int32]int32{}
			}
			m.assigned[t.id][p] = 0
		}
	}
	sg.assignmentEpoch = sg.epoch
}

// removeShareMemberLocked drops a member and assigns its partitions to the
// others.
func (c *GroupCoordinator) removeShareMemberLocked(g *group, memberID string) {
	sg := g.sg
	delete(sg.members, memberID)
	sg.epoch++
	topics := c.shareTopicsLocked(sg)
	sg.metadataHash = metadataHash(topics)
	c.assignShareLocked(sg, topics)
	g.state = sg.state()
}

// expireShareMembersLocked removes the members whose session ran out and
// queues their records' release.
func (c *GroupCoordinator) expireShareMembersLocked(g *group, now time.Time) {
	for _, id := range slices.Sorted(maps.Keys(g.sg.members)) {
		if m := g.sg.members[id]; now.Sub(m.lastHeartbeat) > g.sg.sessionTimeout {
			c.removeShareMemberLocked(g, id)
			c.shareReleases = append(c.shareReleases, shareRelease{g.id, id})
			// Not synced: a member expired again after a crash is the same.
			c.writeConsumerRecordsLocked(g.id, c.shareRecordsLocked(g, []string{id}))
			c.logger.Info("coordinator: share group member's session expired", "group", g.id, "member", id)
		}
	}
}

// releaseShareMembers releases the records the members hold. It must be
// called without the coordinator's mutex.
func (c *GroupCoordinator) releaseShareMembers(ctx context.Context, rs []shareRelease) {
	if len(rs) == 0 {
		return
	}
	m, err := c.SharePartitions(ctx)
	if err != nil {
		c.logger.Warn("coordinator: releasing share group members' records", "error", err)
		return
	}
	for _, r := range rs {
		if err := m.ReleaseMember(context.WithoutCancel(ctx), r.group, r.member); err != nil {
			c.logger.Warn("coordinator: releasing a share group member's records", "group", r.group, "member", r.member, "error", err)
		}
	}
}

// SharePartitions returns the Dir's share-partition manager, which keeps
// what the members of share groups acquire and acknowledge.
func (c *GroupCoordinator) SharePartitions(ctx context.Context) (*share.PartitionManager, error) {
	return share.Partitions(ctx, c.dir)
}

// DescribeShareGroup is Kafka's ShareGroupDescribe for one group: an
// unknown group, or one of another type, is [ErrUnknownGroup].
func (c *GroupCoordinator) DescribeShareGroup(groupID string) (ShareGroupDescription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok || g.sg == nil {
		return ShareGroupDescription{}, fmt.Errorf("%w: %s is not a share group", ErrUnknownGroup, groupID)
	}
	sg := g.sg
	d := ShareGroupDescription{GroupID: groupID, State: sg.state(), GroupEpoch: sg.epoch, AssignmentEpoch: sg.assignmentEpoch, AssignorName: AssignorSimple}
	for _, id := range slices.Sorted(maps.Keys(sg.members)) {
		m := sg.members[id]
		d.Members = append(d.Members, ShareMemberDescription{MemberID: m.id, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
			MemberEpoch: m.epoch, SubscribedTopicNames: slices.Clone(m.topics), Assignment: toTopicPartitions(m.assigned)})
	}
	return d, nil
}

// CheckShareMember reports whether memberID is a member of the share
// group groupID: ShareFetch and ShareAcknowledge serve members only
// ([ErrUnknownMember] otherwise, [ErrUnknownGroup] for no share group).
func (c *GroupCoordinator) CheckShareMember(groupID, memberID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok || g.sg == nil {
		return fmt.Errorf("%w: %s is not a share group", ErrUnknownGroup, groupID)
	}
	if _, ok := g.sg.members[memberID]; !ok {
		return fmt.Errorf("%w: %s is not a member of share group %s", ErrUnknownMember, memberID, groupID)
	}
	return nil
}

// emptyShareGroup checks that groupID is a share group without members, as
// Kafka's share group offset admin requires (it creates the group when it
// does not exist, with create).
func (c *GroupCoordinator) emptyShareGroup(groupID string, create bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	switch {
	case !ok && create:
		var err error
		if g, err = c.newGroupLocked(groupID); err != nil {
			return err
		}
		g.sg = &shareGroup{members: map[string]*shareMember{}, sessionTimeout: c.shareSessionTimeout}
		g.state = StateEmpty
		return nil
	case !ok || g.sg == nil:
		return fmt.Errorf("%w: %s is not a share group", ErrUnknownGroup, groupID)
	case len(g.sg.members) > 0:
		return fmt.Errorf("%w: share group %s has %d members", ErrGroupNotEmpty, groupID, len(g.sg.members))
	}
	return nil
}

// AlterShareGroupOffsets is Kafka's AlterShareGroupOffsets: it sets the
// share group's start offset in each partition, forgetting the records in
// flight, durably. The group must have no members ([ErrGroupNotEmpty]); a
// group that does not exist is created, as Kafka creates it. Per
// partition errors: the partition's (log.ErrUnknownTopicOrPartition), or
// the store's.
func (c *GroupCoordinator) AlterShareGroupOffsets(ctx context.Context, groupID string, offsets map[TopicPartition]int64) (map[TopicPartition]error, error) {
	if err := c.emptyShareGroup(groupID, true); err != nil {
		return nil, err
	}
	if err := c.writeShareRecords(ctx, groupID, nil); err != nil {
		return nil, err
	}
	m, err := c.SharePartitions(ctx)
	if err != nil {
		return nil, err
	}
	out := map[TopicPartition]error{}
	for _, tp := range slices.SortedFunc(maps.Keys(offsets), compareTP) {
		out[tp] = m.SetStartOffset(ctx, groupID, log.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, offsets[tp])
	}
	return out, nil
}

// DeleteShareGroupOffsets is Kafka's DeleteShareGroupOffsets: it deletes
// the share group's state in every partition of topics, durably; a member
// reading them again starts from share.auto.offset.reset. The group must
// have no members ([ErrGroupNotEmpty]). Per topic errors:
// log.ErrUnknownTopicOrPartition, or the store's.
func (c *GroupCoordinator) DeleteShareGroupOffsets(ctx context.Context, groupID string, topics []string) (map[string]error, error) {
	if err := c.emptyShareGroup(groupID, false); err != nil {
		return nil, err
	}
	m, err := c.SharePartitions(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]error{}
	for _, topic := range topics {
		n, ok := c.partitionCount(topic)
		if !ok {
			out[topic] = fmt.Errorf("%w: %s", log.ErrUnknownTopicOrPartition, topic)
			continue
		}
		var errs []error
		for p := range n {
			errs = append(errs, m.DeleteState(ctx, groupID, log.TopicPartition{Topic: topic, Partition: p}))
		}
		out[topic] = errors.Join(errs...)
	}
	return out, nil
}
