package coordinator

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/groupcodec"
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

// JoinRequest is what a consumer sends to join (or rejoin) its group.
//
// An in-process consumer sets Assignors (and Topics, Owned,
// OwnedGeneration); a network client sets ProtocolType and Protocols, as
// its JoinGroup request carries them.
type JoinRequest struct {
	GroupID string
	// MemberID is empty for a new member; a rejoining member sends its id.
	MemberID   string
	ClientID   string
	InstanceID string
	// ClientHost is a network client's address as Kafka writes it
	// ("/" and the IP address); empty for an in-process consumer.
	ClientHost string
	Topics     []string
	// Owned and OwnedGeneration are the partitions the member holds now
	// (the cooperative protocol and the sticky assignors use them).
	Owned           []TopicPartition
	OwnedGeneration int32
	// Assignors in the member's order of preference
	// (partition.assignment.strategy).
	Assignors []assignor.Assignor
	// ProtocolType is a network client's protocol type; empty means
	// "consumer".
	ProtocolType string
	// Protocols are a network client's protocols in its order of
	// preference, with their metadata.
	Protocols        []Protocol
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration // max.poll.interval.ms
}

// JoinResult is the outcome of a rebalance for one member.
type JoinResult struct {
	MemberID   string
	Generation int32
	Protocol   string
	Leader     string
	// Members are the group's members with their metadata for the chosen
	// protocol, given to a network leader (which assigns them in its
	// SyncGroup); nil for everyone else.
	Members []JoinedMember
	// Assignment is an in-process member's partitions in the new
	// generation (a network member asks for its own with Sync). With a
	// cooperative assignor, partitions moving away from their owner are in
	// no one's assignment this generation; the owner revokes them and
	// rejoins, and a second rebalance assigns them.
	Assignment  []TopicPartition
	Cooperative bool
	// RebalanceStarts is closed when the group's next rebalance starts:
	// the member must rejoin.
	RebalanceStarts <-chan struct{}
}

// JoinedMember is a member as a network leader sees it in its JoinGroup
// response.
type JoinedMember struct {
	MemberID, InstanceID string
	Metadata             []byte
}

// NewMemberID makes a member id as Kafka does: the client id (a static
// member's group.instance.id) and a UUID.
func NewMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return clientID + "-" + hex.EncodeToString(b[:])
}

// Join adds the member to its group (or updates a rejoining one; a member
// id the group does not know joins as a new member), starts a rebalance if
// none runs, and waits for its join phase to complete: until every member
// has rejoined, or the rebalance timeout drops those that did not.
//
// Kafka's group leader assigns the partitions, with its own assignor.
// When the leader is an in-process consumer, its assignor runs at the end
// of the join phase (client and coordinator are one process: the round
// trip of a SyncGroup is skipped). When the leader is a network client,
// the group waits in CompletingRebalance for its Sync; an in-process
// member's Join waits for it too. A network member's Join returns after
// the join phase, and the member then asks for its assignment with Sync.
func (c *Coordinator) Join(ctx context.Context, req JoinRequest) (JoinResult, error) {
	network := req.Assignors == nil
	if network && len(req.Protocols) == 0 {
		return JoinResult{}, fmt.Errorf("%w: no assignor", ErrInconsistentProtocol)
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
		return JoinResult{}, ErrClosed
	}
	_, existed := c.groups[req.GroupID]
	g, err := c.newGroupLocked(req.GroupID)
	if err != nil {
		c.mu.Unlock()
		return JoinResult{}, err
	}
	m := g.members[req.MemberID]
	if len(g.members) > 0 && (protocolType != g.protocolType || len(g.commonProtocols(protocols, m)) == 0) {
		c.mu.Unlock()
		return JoinResult{}, fmt.Errorf("%w: group %s uses %s %v", ErrInconsistentProtocol, req.GroupID, g.protocolType, g.protocolNames())
	}
	replaced := false
	if m == nil && req.InstanceID != "" {
		if old := g.staticMember(req.InstanceID); old != nil {
			if req.MemberID != "" {
				// A member id that is neither the static member's nor new.
				c.mu.Unlock()
				return JoinResult{}, fmt.Errorf("%w: %s is %s in group %s, not %s", ErrFencedInstanceID, req.InstanceID, old.id, g.id, req.MemberID)
			}
			// A static member joining again (its process restarted): it
			// takes its old member's place under a new id, and the old id
			// is fenced, as Kafka replaces a static member.
			m, replaced = c.replaceMemberLocked(g, old, NewMemberID(req.InstanceID)), true
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
		if g.state == StateStable || network {
			res := c.resultLocked(g, m)
			c.mu.Unlock()
			return res, nil
		}
		sync, generation := g.syncDone, g.generation
		c.mu.Unlock()
		return c.awaitSync(ctx, g, m, sync, generation)
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
				return JoinResult{}, fmt.Errorf("%w: %s is not a member of group %s", ErrUnknownMember, id, g.id)
			}
			delete(g.pending, id)
		}
		if id == "" {
			id = NewMemberID(cmp.Or(req.InstanceID, req.ClientID))
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
		return JoinResult{}, ctx.Err()
	}
	c.mu.Lock()
	if g.members[m.id] != m {
		c.mu.Unlock()
		return JoinResult{}, fmt.Errorf("%w: %s was dropped from group %s (it did not rejoin in time)", ErrUnknownMember, m.id, g.id)
	}
	if g.rebalanceDone != nil {
		// Another rebalance started right after this one: rejoin.
		c.mu.Unlock()
		return JoinResult{}, ErrRebalanceInProgress
	}
	if network || g.state != StateCompletingRebalance {
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
func (c *Coordinator) awaitSync(ctx context.Context, g *group, m *member, sync chan struct{}, generation int32) (JoinResult, error) {
	select {
	case <-sync:
	case <-ctx.Done():
		return JoinResult{}, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case g.members[m.id] != m:
		return JoinResult{}, fmt.Errorf("%w: %s was dropped from group %s", ErrUnknownMember, m.id, g.id)
	case g.generation != generation || g.state != StateStable:
		return JoinResult{}, ErrRebalanceInProgress
	}
	return c.resultLocked(g, m), nil
}

// matches reports whether a rejoining member sends what it sent last.
func (m *member) matches(req JoinRequest, protocols []Protocol) bool {
	if req.Assignors == nil {
		return slices.EqualFunc(m.protocols, protocols, func(a, b Protocol) bool {
			return a.Name == b.Name && bytes.Equal(a.Metadata, b.Metadata)
		})
	}
	return slices.Equal(m.topics, req.Topics) && sameAssignors(m.assignors, req.Assignors)
}

func (c *Coordinator) resultLocked(g *group, m *member) JoinResult {
	res := JoinResult{MemberID: m.id, Generation: g.generation, Protocol: g.protocol, Leader: g.leader,
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
func (c *Coordinator) prepareRebalanceLocked(g *group) {
	g.initialWait = time.Time{}
	if g.state == StateEmpty && c.initialDelay > 0 {
		g.initialWait = c.now().Add(c.initialDelay)
	}
	if g.syncDone != nil {
		// Members waiting for the leader's assignment learn they must
		// rejoin.
		close(g.syncDone)
		g.syncDone = nil
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
func (c *Coordinator) maybeCompleteLocked(g *group) {
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
func (c *Coordinator) completeRebalanceLocked(g *group) {
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
func (c *Coordinator) assignLocked(g *group) {
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
// (KIP-394's MEMBER_ID_REQUIRED answer), which its next JoinGroup may use
// within the session timeout. A new group beyond GroupMaxCount is
// refused with ErrGroupMaxCount, as Join refuses it.
func (c *Coordinator) PendingMember(groupID, clientID string, sessionTimeout time.Duration) (string, error) {
	id := NewMemberID(clientID)
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
func (c *Coordinator) replaceMemberLocked(g *group, old *member, id string) *member {
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

// CheckInstance fences a static member's old member id: it fails with
// ErrFencedInstanceID when another member of the group has the
// group.instance.id (Kafka answers FENCED_INSTANCE_ID to the heartbeats,
// syncs, commits and leaves of a replaced static member). An empty
// instance id passes.
func (c *Coordinator) CheckInstance(groupID, instanceID, memberID string) error {
	if instanceID == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok {
		return nil
	}
	if m := g.staticMember(instanceID); m != nil && m.id != memberID {
		return fmt.Errorf("%w: %s is %s in group %s, not %s", ErrFencedInstanceID, instanceID, m.id, groupID, memberID)
	}
	return nil
}

func (c *Coordinator) removeMemberLocked(g *group, id string) {
	delete(g.members, id)
	g.joinOrder = slices.DeleteFunc(g.joinOrder, func(x string) bool { return x == id })
}

// Heartbeat keeps a member alive. It fails with ErrRebalanceInProgress when
// the member must rejoin, ErrUnknownMember when it was dropped, and
// ErrIllegalGeneration for a stale generation. While the group awaits its
// leader's assignment (CompletingRebalance) a heartbeat of the new
// generation succeeds, as Kafka's does.
func (c *Coordinator) Heartbeat(groupID, memberID string, generation int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
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
// rebalance runs, or the generation has passed) one already closed.
func (c *Coordinator) RebalanceStarts(groupID string, generation int32) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok && g.rebalanceDone == nil && g.generation == generation {
		return g.nextRebalance
	}
	return closedChan
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Leave removes a member (a consumer closing or unsubscribing); the rest of
// the group rebalances.
func (c *Coordinator) Leave(groupID, memberID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok || g.members[memberID] == nil {
		return
	}
	c.removeMemberLocked(g, memberID)
	c.triggerRebalanceLocked(g)
}

// RequestRebalance starts a rebalance of the group (a member's
// subscription or a topic's partition count changed, or a cooperative
// member revoked partitions and needs them reassigned).
func (c *Coordinator) RequestRebalance(groupID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok {
		c.triggerRebalanceLocked(g)
	}
}

func (c *Coordinator) triggerRebalanceLocked(g *group) {
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
