package coordinator

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/internal/groupmember"
)

// group is one consumer group. Its fields are guarded by the coordinator's
// mutex.
type group struct {
	id           string
	state        GroupState
	generation   int32
	protocolType string // the members' protocol type ("consumer" for consumers)
	protocol     string // the assignor's name
	leader       string
	members      map[string]*member
	joinOrder    []string // member ids in the order they joined: the first is the leader
	// rebalanceDone is closed when the running rebalance's join phase
	// completes; nil when none runs.
	rebalanceDone chan struct{}
	// syncDone is closed when the leader's assignment arrives, or a new
	// rebalance starts, while the group is CompletingRebalance; nil
	// otherwise.
	syncDone chan struct{}
	// nextRebalance is closed when the next rebalance starts, and replaced:
	// members waiting on it learn at once that they must rejoin, where a
	// broker's members wait for their next heartbeat.
	nextRebalance chan struct{}
	// deadline is when members that did not rejoin are dropped
	// (PreparingRebalance), or those that did not ask for their assignment
	// (CompletingRebalance).
	deadline    time.Time
	initialWait time.Time // a new group waits until then for more members
	offsets     map[TopicPartition]OffsetAndMetadata
	// offsetPos is the __consumer_offsets offset of the batch that wrote
	// each committed offset: a transactional commit applied at its marker
	// does not replace a commit written after it (Kafka compares the
	// appended batch offsets the same way).
	offsetPos map[TopicPartition]int64
	commitMu  chan struct{} // a one-slot semaphore: commits of a group are appended in order
	// pending are the member ids PendingMember gave network clients
	// that have not joined with them yet, with when they expire.
	pending map[string]time.Time
	// stored is the group's last metadata read from __consumer_offsets
	// while the coordinator loads; nil after.
	stored *groupcodec.GroupMetadataValue
	// emptySince is when the group was created or last became Empty
	// (Kafka's currentStateTimestamp, which only an Empty group's expiry
	// reads); zero for a group loaded from metadata that did not say.
	emptySince time.Time
	// dueAt is the time of the group's entry in the coordinator's heap of
	// deadlines (expiry.go); zero when it has none.
	dueAt time.Time
	// cg is the group's state when it is a consumer group (KIP-848's
	// protocol, TypeConsumer); nil for a classic group, whose state is the
	// fields above.
	cg *consumerGroup
	// sg is the group's state when it is a share group (KIP-932), nil
	// otherwise.
	sg *shareGroup
}

// member is a group member: an in-process consumer (assignors set) or a
// network client (its protocols' metadata set).
type member struct {
	id, clientID, instanceID string
	// clientHost is a network member's address as Kafka writes it
	// ("/127.0.0.1"); an in-process member's is inProcessHost.
	clientHost   string
	protocolType string
	// protocols are the member's protocol names in its order of
	// preference, with the metadata it sent for each: a network client's
	// bytes as it sent them; nil for an in-process consumer, whose
	// subscription is encoded from topics, owned and ownedGeneration when
	// a network leader needs it.
	protocols []Protocol
	// assignors are an in-process consumer's assignor implementations, in
	// the order of protocols; nil for a network client.
	assignors []assignor.Assignor
	// topics, owned and ownedGeneration are the member's subscription:
	// given by an in-process consumer, decoded from a network client's
	// preferred protocol's metadata.
	topics           []string
	owned            []TopicPartition
	ownedGeneration  int32
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	lastHeartbeat    time.Time
	joined           bool // rejoined the running rebalance
	synced           bool // asked for its assignment in this generation
	assignment       []TopicPartition
	// assignmentBytes is the assignment as the leader gave it (a network
	// leader's bytes); nil when an in-process leader assigned, and then
	// encoded from assignment.
	assignmentBytes []byte
}

// memberCount is the number of members, of either protocol.
func (g *group) memberCount() int {
	if g.cg != nil {
		return len(g.cg.members)
	}
	if g.sg != nil {
		return len(g.sg.members)
	}
	return len(g.members)
}

func newGroup(id string, now time.Time) *group {
	return &group{id: id, state: StateEmpty, members: map[string]*member{}, offsets: map[TopicPartition]OffsetAndMetadata{},
		offsetPos: map[TopicPartition]int64{}, commitMu: make(chan struct{}, 1), nextRebalance: make(chan struct{}), emptySince: now}
}

// Protocol is one protocol a network member offers in JoinGroup: an
// assignor's name and the member's metadata for it (for the "consumer"
// protocol type, a ConsumerProtocolSubscription).
type Protocol struct {
	Name     string
	Metadata []byte
}

// JoinRequest is a network member's JoinGroup: Kafka's JoinGroupRequest,
// decoded.
type JoinRequest struct {
	GroupID string
	// MemberID is empty for a new member (or the id
	// [GroupCoordinator.PendingMember] gave it); a rejoining member sends
	// its id.
	MemberID string
	ClientID string
	// InstanceID is a static member's group.instance.id; empty for a
	// dynamic member.
	InstanceID string
	// ClientHost is the client's address as Kafka writes it ("/" and the
	// IP address).
	ClientHost string
	// ProtocolType is the members' protocol type; empty means "consumer".
	ProtocolType string
	// Protocols are the member's protocols in its order of preference,
	// with their metadata; at least one.
	Protocols        []Protocol
	SessionTimeout   time.Duration // session.timeout.ms
	RebalanceTimeout time.Duration // max.poll.interval.ms
}

// JoinResult is the outcome of a rebalance for a network member: Kafka's
// JoinGroupResponse.
type JoinResult struct {
	MemberID   string
	Generation int32
	Protocol   string // the protocol the group chose
	Leader     string
	// Members are the group's members with their metadata for the chosen
	// protocol, given to the leader (which assigns them in its
	// SyncGroup); nil for everyone else.
	Members []JoinedMember
}

// JoinedMember is a member as a network leader sees it in its JoinGroup
// response.
type JoinedMember struct {
	MemberID, InstanceID string
	Metadata             []byte
}

// joinRequest is a join of either kind of member: a network member's
// (protocols set) or an in-process one's (assignors, topics and owned
// partitions set).
type joinRequest struct {
	GroupID, MemberID, ClientID, InstanceID, ClientHost string
	Topics                                              []string
	Owned                                               []TopicPartition
	OwnedGeneration                                     int32
	Assignors                                           []assignor.Assignor
	ProtocolType                                        string
	Protocols                                           []Protocol
	SessionTimeout, RebalanceTimeout                    time.Duration
}

// joinResult is a join's outcome for either kind of member.
type joinResult struct {
	MemberID         string
	Generation       int32
	Protocol, Leader string
	Members          []JoinedMember // a network leader's
	Assignment       []TopicPartition
	Cooperative      bool
	RebalanceStarts  <-chan struct{}
}

// JoinGroup is Kafka's JoinGroup for the classic protocol: it adds the
// member to its group (or updates a rejoining one), starts a rebalance if
// none runs, and waits for its join phase to complete: until every member
// has rejoined, or the rebalance timeout drops those that did not. The
// group's leader then assigns the partitions in its SyncGroup
// ([GroupCoordinator.SyncGroup]), with its own assignor; every member asks
// for its assignment there. A rejoining member that sends what it sent
// last gets the current generation without a rebalance, as Kafka answers
// it.
//
// A new member joins with an empty member id and gets one; from version
// 4 of JoinGroup Kafka first hands a dynamic member its id
// (MEMBER_ID_REQUIRED), which a broker does with
// [GroupCoordinator.PendingMember]. A member id the group did not give
// fails with [ErrUnknownMember].
// A member whose protocol type or protocols the group does not share fails
// with [ErrInconsistentProtocol]; a static member's old member id, once
// another member joined with its group.instance.id, with
// [ErrFencedInstanceID]; a new group beyond log.Config.GroupMaxCount with
// [ErrGroupMaxCount]. When ctx ends first, it returns ctx's error and the
// member stays in the group for its rebalance: its next JoinGroup resumes.
//
// Members in the coordinator's own process (package consumer's) join the
// same groups through a join of their own, whose assignor, when such a
// member leads, runs inside the coordinator.
func (c *GroupCoordinator) JoinGroup(ctx context.Context, req JoinRequest) (JoinResult, error) {
	res, err := c.join(ctx, joinRequest{GroupID: req.GroupID, MemberID: req.MemberID, ClientID: req.ClientID,
		InstanceID: req.InstanceID, ClientHost: req.ClientHost, ProtocolType: req.ProtocolType, Protocols: req.Protocols,
		SessionTimeout: req.SessionTimeout, RebalanceTimeout: req.RebalanceTimeout})
	if err != nil {
		return JoinResult{}, err
	}
	return JoinResult{MemberID: res.MemberID, Generation: res.Generation, Protocol: res.Protocol, Leader: res.Leader,
		Members: res.Members}, nil
}

// JoinInProcess is JoinGroup for a member in the coordinator's own
// process (package consumer's): it takes the member's assignors instead
// of encoded protocols. When such a member leads the group, its assignor
// runs at the end of the join phase, over every member's subscription (a
// network member's decoded from its metadata), and the SyncGroup round
// trip is skipped; when a network client leads, the join waits for the
// leader's SyncGroup. The access token makes it this module's own.
func (c *GroupCoordinator) JoinInProcess(_ access.Internal, ctx context.Context, req groupmember.Join) (groupmember.Joined, error) {
	res, err := c.join(ctx, joinRequest{GroupID: req.GroupID, MemberID: req.MemberID, ClientID: req.ClientID,
		InstanceID: req.InstanceID, Topics: req.Topics, Owned: req.Owned, OwnedGeneration: req.OwnedGeneration,
		Assignors: req.Assignors, SessionTimeout: req.SessionTimeout, RebalanceTimeout: req.RebalanceTimeout})
	if err != nil {
		return groupmember.Joined{}, err
	}
	return groupmember.Joined{MemberID: res.MemberID, Generation: res.Generation, Protocol: res.Protocol, Leader: res.Leader,
		Assignment: res.Assignment, Cooperative: res.Cooperative, RebalanceStarts: res.RebalanceStarts}, nil
}

// join adds the member to its group (or updates a rejoining one; a member
// id the group does not know joins as a new member), starts a rebalance if
// none runs, and waits for its join phase to complete: until every member
// has rejoined, or the rebalance timeout drops those that did not.
//
// Kafka's group leader assigns the partitions, with its own assignor.
// When the leader is an in-process consumer, its assignor runs at the end
// of the join phase (client and coordinator are one process: the round
// trip of a SyncGroup is skipped). When the leader is a network client,
// the group waits in CompletingRebalance for its SyncGroup; an in-process
// member's join waits for it too. A network member's join returns after
// the join phase, and the member then asks for its assignment with
// SyncGroup.
func (c *GroupCoordinator) join(ctx context.Context, req joinRequest) (joinResult, error) {
	network := req.Assignors == nil
	if network && len(req.Protocols) == 0 {
		return joinResult{}, fmt.Errorf("%w: no assignor", ErrInconsistentProtocol)
	}
	protocolType := req.ProtocolType
	if protocolType == "" {
		protocolType = consumerProtocolType
	}
	protocols := req.Protocols
	if !network {
		protocols = make([]Protocol, len(req.Assignors))
		for i, a := range req.Assignors {
			protocols[i] = Protocol{Name: a.Name()}
		}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return joinResult{}, ErrClosed
	}
	_, existed := c.groups[req.GroupID]
	g, err := c.newGroupLocked(req.GroupID)
	if err != nil {
		c.mu.Unlock()
		return joinResult{}, err
	}
	if g.sg != nil {
		c.mu.Unlock()
		return joinResult{}, fmt.Errorf("%w: group %s is a share group", ErrInconsistentProtocol, req.GroupID)
	}
	if g.cg != nil {
		if len(g.cg.members) > 0 {
			c.mu.Unlock()
			return joinResult{}, fmt.Errorf("%w: group %s is a consumer group (KIP-848's protocol) with members", ErrInconsistentProtocol, req.GroupID)
		}
		c.dropConsumerGroupLocked(g) // an empty consumer group becomes a classic one
	}
	m := g.members[req.MemberID]
	if len(g.members) > 0 && (protocolType != g.protocolType || len(g.commonProtocols(protocols, m)) == 0) {
		c.mu.Unlock()
		return joinResult{}, fmt.Errorf("%w: group %s uses %s %v", ErrInconsistentProtocol, req.GroupID, g.protocolType, g.protocolNames())
	}
	replaced := false
	if m == nil && req.InstanceID != "" {
		if old := g.staticMember(req.InstanceID); old != nil {
			if req.MemberID != "" {
				// A member id that is neither the static member's nor new.
				c.mu.Unlock()
				return joinResult{}, fmt.Errorf("%w: %s is %s in group %s, not %s", ErrFencedInstanceID, req.InstanceID, old.id, g.id, req.MemberID)
			}
			// A static member joining again (its process restarted): it
			// takes its old member's place under a new id, and the old id
			// is fenced, as Kafka replaces a static member.
			m, replaced = c.replaceMemberLocked(g, old, groupmember.NewID(req.InstanceID)), true
		}
	}
	if m != nil && g.rebalanceDone == nil && m.matches(req, protocols) &&
		(g.state == StateCompletingRebalance || (g.state == StateStable && (!network || g.leader != m.id))) {
		// A known member rejoining with nothing changed (its last join was
		// cut short, or it only wants the current assignment, or a static
		// member came back): as Kafka does, answer with the current
		// generation instead of rebalancing; a network leader of a stable
		// group rejoins to assign again, so it rebalances.
		m.lastHeartbeat = c.now()
		if replaced {
			m.clientID, m.clientHost = req.ClientID, req.ClientHost
			if !network {
				m.clientHost = inProcessHost
			}
			c.persistGroupLocked(g)
		}
		return c.answerUnlock(ctx, g, m, g.state == StateStable || network)
	}
	if m == nil {
		// A new member: an in-process consumer with the id it chose (so
		// that a join interrupted by its context can be resumed, as
		// Kafka's member-id handshake allows), a network client with the
		// id PendingMember gave it; or one made here. Another id is
		// refused, as Kafka refuses it.
		id := req.MemberID
		if network && id != "" {
			if _, ok := g.pending[id]; !ok {
				if !existed {
					delete(c.groups, g.id) // a refused join leaves nothing
				}
				c.mu.Unlock()
				return joinResult{}, fmt.Errorf("%w: %s is not a member of group %s", ErrUnknownMember, id, g.id)
			}
			delete(g.pending, id)
		}
		if id == "" {
			id = groupmember.NewID(cmp.Or(req.InstanceID, req.ClientID))
		}
		m = &member{id: id}
		g.members[m.id] = m
		g.joinOrder = append(g.joinOrder, m.id)
	}
	m.clientID, m.instanceID, m.protocolType = req.ClientID, req.InstanceID, protocolType
	m.clientHost = req.ClientHost
	if !network {
		m.clientHost = inProcessHost
	}
	// The metadata is copied: a server's request buffer holds it.
	m.protocols = make([]Protocol, len(protocols))
	for i, p := range protocols {
		m.protocols[i] = Protocol{Name: p.Name, Metadata: slices.Clone(p.Metadata)}
	}
	m.assignors = slices.Clone(req.Assignors)
	if network {
		m.subscribeFromMetadata(c)
	} else {
		m.topics = slices.Clone(req.Topics)
		m.owned, m.ownedGeneration = slices.Clone(req.Owned), req.OwnedGeneration
	}
	m.sessionTimeout, m.rebalanceTimeout = req.SessionTimeout, req.RebalanceTimeout
	m.lastHeartbeat = c.now()
	if len(g.members) == 1 {
		g.protocolType = protocolType
	}
	if g.rebalanceDone == nil {
		c.prepareRebalanceLocked(g)
	}
	m.joined = true
	done := g.rebalanceDone
	c.maybeCompleteLocked(g)
	c.scheduleLocked(g)
	c.mu.Unlock()
	c.wake()

	select {
	case <-done:
	case <-ctx.Done():
		return joinResult{}, ctx.Err()
	}
	c.mu.Lock()
	if g.members[m.id] != m {
		c.mu.Unlock()
		return joinResult{}, fmt.Errorf("%w: %s was dropped from group %s (it did not rejoin in time)", ErrUnknownMember, m.id, g.id)
	}
	if g.rebalanceDone != nil && !network {
		// Another rebalance started right after this one: rejoin. A
		// network member is answered with the generation that completed,
		// as Kafka's coordinator answers every joiner when the join
		// completes; its SyncGroup or heartbeat then learns of the next
		// rebalance (REBALANCE_IN_PROGRESS), which Kafka's clients expect
		// there and not from JoinGroup.
		c.mu.Unlock()
		return joinResult{}, ErrRebalanceInProgress
	}
	return c.answerUnlock(ctx, g, m, network || g.state != StateCompletingRebalance)
}

// answerUnlock answers m's join: at once with the group's current
// generation if now, otherwise once the network leader's assignment of
// the generation arrives (awaitSync). The caller holds c.mu, which
// answerUnlock releases.
func (c *GroupCoordinator) answerUnlock(ctx context.Context, g *group, m *member, now bool) (joinResult, error) {
	if now {
		res := c.resultLocked(g, m)
		c.mu.Unlock()
		return res, nil
	}
	sync, generation := g.syncDone, g.generation
	c.mu.Unlock()
	return c.awaitSync(ctx, g, m, sync, generation)
}

// awaitSync waits, for an in-process member, for the network leader's
// assignment of the generation, whose syncDone is sync.
func (c *GroupCoordinator) awaitSync(ctx context.Context, g *group, m *member, sync chan struct{}, generation int32) (joinResult, error) {
	select {
	case <-sync:
	case <-ctx.Done():
		return joinResult{}, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g.members[m.id] != m:
		return joinResult{}, fmt.Errorf("%w: %s was dropped from group %s", ErrUnknownMember, m.id, g.id)
	case g.generation != generation || g.state != StateStable:
		return joinResult{}, ErrRebalanceInProgress
	}
	return c.resultLocked(g, m), nil
}

// matches reports whether a rejoining member sends what it sent last.
func (m *member) matches(req joinRequest, protocols []Protocol) bool {
	if req.Assignors == nil {
		return slices.EqualFunc(m.protocols, protocols, func(a, b Protocol) bool {
			return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
		})
	}
	return slices.Equal(m.topics, req.Topics) && sameAssignors(m.assignors, req.Assignors)
}

func (c *GroupCoordinator) resultLocked(g *group, m *member) joinResult {
	res := joinResult{MemberID: m.id, Generation: g.generation, Protocol: g.protocol, Leader: g.leader,
		Assignment: slices.Clone(m.assignment), RebalanceStarts: g.nextRebalance}
	if m.assignors == nil && g.leader == m.id {
		for _, id := range g.joinOrder {
			o := g.members[id]
			res.Members = append(res.Members, JoinedMember{MemberID: o.id, InstanceID: o.instanceID, Metadata: o.metadata(g.protocol)})
		}
	}
	// As Kafka's ConsumerCoordinator decides it: the highest protocol every
	// assignor the member configured supports ([range, cooperative-sticky]
	// stays eager even when cooperative-sticky is chosen).
	if p, err := assignor.RebalanceProtocol(m.assignors); err == nil && m.assignors != nil {
		res.Cooperative = p == assignor.Cooperative
	}
	return res
}

func sameAssignors(a, b []assignor.Assignor) bool {
	return slices.EqualFunc(a, b, func(x, y assignor.Assignor) bool { return x.Name() == y.Name() })
}

// prepareRebalanceLocked starts a rebalance: every member must rejoin
// before the longest rebalance timeout passes. A new group (Empty) first
// waits group.initial.rebalance.delay.ms for more members.
func (c *GroupCoordinator) prepareRebalanceLocked(g *group) {
	g.initialWait = time.Time{}
	if g.state == StateEmpty && c.initialDelay > 0 {
		g.initialWait = c.now().Add(c.initialDelay)
	}
	if g.syncDone != nil {
		// Members waiting for the leader's assignment learn they must
		// rejoin, and their sessions start again now, as Kafka's
		// coordinator restarts a member's session when it answers its
		// SyncGroup: waiting kept them alive, not their heartbeats.
		close(g.syncDone)
		g.syncDone = nil
		for _, m := range g.members {
			if m.synced {
				m.lastHeartbeat = c.now()
			}
		}
	}
	g.state = StatePreparingRebalance
	g.rebalanceDone = make(chan struct{})
	close(g.nextRebalance)
	g.nextRebalance = make(chan struct{})
	g.deadline = c.now().Add(max(g.longestRebalanceTimeout(), c.initialDelay))
	for _, m := range g.members {
		m.joined = false
	}
	c.scheduleLocked(g)
}

func (g *group) longestRebalanceTimeout() time.Duration {
	var longest time.Duration
	for _, m := range g.members {
		longest = max(longest, m.rebalanceTimeout)
	}
	return longest
}

// maybeCompleteLocked completes the rebalance once every member rejoined
// (and a new group's initial delay passed).
func (c *GroupCoordinator) maybeCompleteLocked(g *group) {
	if g.rebalanceDone == nil || c.now().Before(g.initialWait) {
		return
	}
	for _, m := range g.members {
		if !m.joined {
			return
		}
	}
	c.completeRebalanceLocked(g)
}

// completeRebalanceLocked ends the join phase: it drops members that did
// not rejoin, picks the protocol and the leader, bumps the generation and
// wakes the joiners. An in-process leader's assignor assigns at once; a
// network leader's assignment is awaited (CompletingRebalance).
func (c *GroupCoordinator) completeRebalanceLocked(g *group) {
	for id, m := range g.members {
		if !m.joined {
			c.logger.Info("dropping a member that did not rejoin", "group", g.id, "member", id)
			c.removeMemberLocked(g, id)
		}
	}
	done := g.rebalanceDone
	g.rebalanceDone = nil
	defer close(done)
	defer c.scheduleLocked(g) // members' sessions start again, or the sync's deadline
	if len(g.members) == 0 {
		g.state, g.emptySince = StateEmpty, c.now()
		g.generation++
		g.protocol, g.leader = "", ""
		c.persistGroupLocked(g)
		return
	}
	g.protocol = g.selectProtocol()
	g.leader = g.joinOrder[0]
	g.generation++
	for _, m := range g.members {
		m.synced = m.assignors != nil // an in-process member is waiting for its assignment
		m.assignment, m.assignmentBytes = m.assignment[:0], nil
		m.lastHeartbeat = c.now()
	}
	if g.members[g.leader].assignors == nil {
		// A network leader assigns in its SyncGroup; members that do not
		// ask for their assignment within the rebalance timeout are
		// dropped, as Kafka drops pending-sync members.
		g.state = StateCompletingRebalance
		g.syncDone = make(chan struct{})
		g.deadline = c.now().Add(g.longestRebalanceTimeout())
		c.logger.Info("awaiting the leader's assignment", "group", g.id, "generation", g.generation, "leader", g.leader, "protocol", g.protocol)
		return
	}
	c.assignLocked(g)
	g.state = StateStable
	c.persistGroupLocked(g)
	c.logger.Info("rebalanced", "group", g.id, "generation", g.generation, "members", len(g.members), "assignor", g.protocol)
}

// assignLocked runs the in-process leader's assignor over every member's
// subscription.
func (c *GroupCoordinator) assignLocked(g *group) {
	a := g.assignorLocked()
	if a == nil {
		c.logger.Error("no assignor common to the group's members", "group", g.id)
		return
	}
	members := make([]assignor.Member, 0, len(g.members))
	topics := map[string]bool{}
	for _, id := range g.sortedMemberIDs() {
		members = append(members, g.members[id].assignorMember(g.protocol))
		for _, t := range g.members[id].topics {
			topics[t] = true
		}
	}
	counts := map[string]int32{}
	for t := range topics {
		if n, ok := c.partitionCount(t); ok {
			counts[t] = n
		}
	}
	result, err := a.Assign(counts, members)
	if err != nil {
		c.logger.Error("assignor failed; members get no partitions this generation", "group", g.id, "assignor", g.protocol, "err", err)
	}
	for id, m := range g.members {
		m.assignment = append(m.assignment[:0], result[id]...)
		sort.Slice(m.assignment, func(i, j int) bool { return less(m.assignment[i], m.assignment[j]) })
	}
}

func less(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

func (g *group) sortedMemberIDs() []string {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// commonProtocols returns the protocol names every member (the joining one
// with its new list, in place of its old) supports.
func (g *group) commonProtocols(joining []Protocol, self *member) []string {
	var names []string
	for _, p := range joining {
		ok := true
		for _, m := range g.members {
			if m == self {
				continue
			}
			if !slices.ContainsFunc(m.protocols, func(x Protocol) bool { return x.Name == p.Name }) {
				ok = false
				break
			}
		}
		if ok {
			names = append(names, p.Name)
		}
	}
	return names
}

func (g *group) protocolNames() []string {
	var names []string
	for _, m := range g.members {
		for _, p := range m.protocols {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// selectProtocol is Kafka's ClassicGroup.selectProtocol: among the
// protocols every member supports, each member votes for its most
// preferred; the most votes win, ties broken as Kafka's hash map breaks
// them.
func (g *group) selectProtocol() string {
	var ms []assignor.MemberProtocols
	for _, id := range g.joinOrder {
		m := g.members[id]
		mp := assignor.MemberProtocols{MemberID: id}
		for _, p := range m.protocols {
			mp.Protocols = append(mp.Protocols, p.Name)
		}
		ms = append(ms, mp)
	}
	name, err := assignor.SelectProtocol(ms)
	if err != nil {
		return ""
	}
	return name
}

// assignorLocked returns the in-process leader's implementation of the
// chosen assignor.
func (g *group) assignorLocked() assignor.Assignor {
	if len(g.joinOrder) == 0 {
		return nil
	}
	for _, a := range g.members[g.joinOrder[0]].assignors {
		if a.Name() == g.protocol {
			return a
		}
	}
	return nil
}

// PendingMember makes a member id for a network client's first JoinGroup
// (KIP-394: Kafka answers MEMBER_ID_REQUIRED with it to a dynamic member
// of JoinGroup version 4 and later), which the client's next JoinGroup
// may use within the session timeout. A group keeps at most 1,024 such
// ids, dropping the oldest. A new group beyond log.Config.GroupMaxCount is
// refused with [ErrGroupMaxCount], as JoinGroup refuses it.
func (c *GroupCoordinator) PendingMember(groupID, clientID string, sessionTimeout time.Duration) (string, error) {
	id := groupmember.NewID(clientID)
	c.mu.Lock()
	defer c.mu.Unlock()
	g, err := c.newGroupLocked(groupID)
	if err != nil {
		return "", err
	}
	if g.pending == nil {
		g.pending = map[string]time.Time{}
	}
	if len(g.pending) >= maxPendingMembers {
		// A client asking for ids it never uses: the oldest go first (a
		// client whose id went joins with UNKNOWN_MEMBER_ID and asks
		// again).
		oldest, at := "", time.Time{}
		for p, deadline := range g.pending {
			if oldest == "" || deadline.Before(at) {
				oldest, at = p, deadline
			}
		}
		delete(g.pending, oldest)
	}
	g.pending[id] = c.now().Add(sessionTimeout)
	c.scheduleLocked(g)
	return id, nil
}

// maxPendingMembers bounds the member ids PendingMember keeps per group.
const maxPendingMembers = 1024

// staticMember returns the member with the group.instance.id, or nil.
func (g *group) staticMember(instanceID string) *member {
	for _, m := range g.members {
		if m.instanceID == instanceID {
			return m
		}
	}
	return nil
}

// replaceMemberLocked puts a copy of old, under id, in its place (and its
// leadership). The old member is gone: its callers still waiting see that
// it is no longer a member.
func (c *GroupCoordinator) replaceMemberLocked(g *group, old *member, id string) *member {
	m := *old
	m.id = id
	delete(g.members, old.id)
	g.members[id] = &m
	for i, x := range g.joinOrder {
		if x == old.id {
			g.joinOrder[i] = id
		}
	}
	if g.leader == old.id {
		g.leader = id
	}
	c.logger.Info("a static member joined again under a new id", "group", g.id, "instance", m.instanceID, "old", old.id, "new", id)
	return &m
}

// checkInstance fences a static member's old member id: it fails with
// ErrFencedInstanceID when another member of the group has m's
// group.instance.id (Kafka answers FENCED_INSTANCE_ID to the heartbeats,
// syncs, commits and leaves of a replaced static member). An empty
// instance id passes.
func (c *GroupCoordinator) checkInstance(m GroupMetadata) error {
	if m.GroupInstanceID == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checkInstanceLocked(m)
}

func (c *GroupCoordinator) checkInstanceLocked(m GroupMetadata) error {
	g, ok := c.groups[m.GroupID]
	if !ok || m.GroupInstanceID == "" {
		return nil
	}
	if s := g.staticMember(m.GroupInstanceID); s != nil && s.id != m.MemberID {
		return fmt.Errorf("%w: %s is %s in group %s, not %s", ErrFencedInstanceID, m.GroupInstanceID, s.id, m.GroupID, m.MemberID)
	}
	return nil
}

func (c *GroupCoordinator) removeMemberLocked(g *group, id string) {
	delete(g.members, id)
	g.joinOrder = slices.DeleteFunc(g.joinOrder, func(x string) bool { return x == id })
}

// Heartbeat is Kafka's Heartbeat: it keeps m alive. It fails with
// [ErrRebalanceInProgress] when the member must rejoin, [ErrUnknownMember]
// when it was dropped, [ErrIllegalGeneration] for a stale generation, and
// [ErrFencedInstanceID] for a replaced static member. While the group
// awaits its leader's assignment (CompletingRebalance) a heartbeat of the
// new generation succeeds, as Kafka's does.
func (c *GroupCoordinator) Heartbeat(m GroupMetadata) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkInstanceLocked(m); err != nil {
		return err
	}
	return c.heartbeatLocked(m.GroupID, m.MemberID, m.GenerationID)
}

func (c *GroupCoordinator) heartbeatLocked(groupID, memberID string, generation int32) error {
	g, ok := c.groups[groupID]
	if !ok {
		return ErrUnknownMember
	}
	m, ok := g.members[memberID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownMember, memberID)
	}
	m.lastHeartbeat = c.now()
	if g.rebalanceDone != nil {
		return ErrRebalanceInProgress
	}
	if generation != g.generation {
		return fmt.Errorf("%w: %d, the group is at %d", ErrIllegalGeneration, generation, g.generation)
	}
	return nil
}

// RebalanceStarts returns a channel closed when the next rebalance of the
// group starts, if the group is stable at generation; otherwise (a
// rebalance runs, or the generation has passed) one already closed. An
// in-process member (package consumer's) waits on it beside its heartbeat
// ticker, to rejoin at once; the access token makes it this module's own.
func (c *GroupCoordinator) RebalanceStarts(_ access.Internal, groupID string, generation int32) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok && g.rebalanceDone == nil && g.generation == generation {
		return g.nextRebalance
	}
	return closedChan
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// LeaveGroup is Kafka's LeaveGroup for one member (a consumer closing or
// unsubscribing): it removes m, named by its member id, or a static
// member by its group.instance.id alone (as kafka-consumer-groups
// --delete of a static member names it); the rest of the group
// rebalances. The generation is not looked at. An unknown group or member
// fails with [ErrUnknownMember], a member id that is not the static
// member's with [ErrFencedInstanceID].
func (c *GroupCoordinator) LeaveGroup(m GroupMetadata) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[m.GroupID]
	if !ok {
		return fmt.Errorf("%w: group %s is unknown", ErrUnknownMember, m.GroupID)
	}
	if m.MemberID != "" {
		if err := c.checkInstanceLocked(m); err != nil {
			return err
		}
	}
	var leaving *member
	switch {
	case m.MemberID != "":
		leaving = g.members[m.MemberID]
	case m.GroupInstanceID != "":
		leaving = g.staticMember(m.GroupInstanceID)
	}
	if leaving == nil {
		return fmt.Errorf("%w: %s (instance %q) in group %s", ErrUnknownMember, m.MemberID, m.GroupInstanceID, m.GroupID)
	}
	c.removeMemberLocked(g, leaving.id)
	c.triggerRebalanceLocked(g)
	return nil
}

// RequestRebalance starts a rebalance of the group: an in-process
// member's (package consumer's) subscription or a topic's partition count
// changed, or a cooperative member revoked partitions and needs them
// reassigned. The access token makes it this module's own.
func (c *GroupCoordinator) RequestRebalance(_ access.Internal, groupID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok {
		c.triggerRebalanceLocked(g)
	}
}

func (c *GroupCoordinator) triggerRebalanceLocked(g *group) {
	if len(g.members) == 0 {
		if g.syncDone != nil {
			close(g.syncDone)
			g.syncDone = nil
		}
		if g.rebalanceDone != nil {
			c.completeRebalanceLocked(g)
		} else if g.state != StateEmpty {
			g.state, g.emptySince = StateEmpty, c.now()
			g.generation++
			g.protocol, g.leader = "", ""
			c.persistGroupLocked(g)
		}
		return
	}
	if g.rebalanceDone == nil {
		c.prepareRebalanceLocked(g)
	}
	c.maybeCompleteLocked(g)
}
