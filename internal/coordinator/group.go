package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
)

// group is one consumer group. Its fields are guarded by the coordinator's
// mutex.
type group struct {
	id         string
	state      GroupState
	generation int32
	protocol   string // the assignor's name
	leader     string
	members    map[string]*member
	joinOrder  []string // member ids in the order they joined: the first is the leader
	// rebalanceDone is closed when the running rebalance completes; nil
	// when none runs.
	rebalanceDone chan struct{}
	// nextRebalance is closed when the next rebalance starts, and replaced:
	// members waiting on it learn at once that they must rejoin, where a
	// broker's members wait for their next heartbeat.
	nextRebalance chan struct{}
	deadline      time.Time // when members that did not rejoin are dropped
	initialWait   time.Time // a new group waits until then for more members
	offsets       map[TopicPartition]OffsetAndMetadata
	// offsetPos is the __consumer_offsets offset of the batch that wrote
	// each committed offset: a transactional commit applied at its marker
	// does not replace a commit written after it (Kafka compares the
	// appended batch offsets the same way).
	offsetPos map[TopicPartition]int64
	commitMu  chan struct{} // a one-slot semaphore: commits of a group are appended in order
}

// member is a group member.
type member struct {
	id, clientID, instanceID string
	topics                   []string
	owned                    []TopicPartition
	ownedGeneration          int32
	assignors                []assignor.Assignor
	sessionTimeout           time.Duration
	rebalanceTimeout         time.Duration
	lastHeartbeat            time.Time
	joined                   bool // rejoined the running rebalance
	assignment               []TopicPartition
}

func newGroup(id string) *group {
	return &group{id: id, state: StateEmpty, members: map[string]*member{}, offsets: map[TopicPartition]OffsetAndMetadata{},
		offsetPos: map[TopicPartition]int64{}, commitMu: make(chan struct{}, 1), nextRebalance: make(chan struct{})}
}

// JoinRequest is what a consumer sends to join (or rejoin) its group.
type JoinRequest struct {
	GroupID string
	// MemberID is empty for a new member; a rejoining member sends its id.
	MemberID   string
	ClientID   string
	InstanceID string
	Topics     []string
	// Owned and OwnedGeneration are the partitions the member holds now
	// (the cooperative protocol and the sticky assignors use them).
	Owned           []TopicPartition
	OwnedGeneration int32
	// Assignors in the member's order of preference
	// (partition.assignment.strategy).
	Assignors        []assignor.Assignor
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration // max.poll.interval.ms
}

// JoinResult is the outcome of a rebalance for one member.
type JoinResult struct {
	MemberID   string
	Generation int32
	Protocol   string
	Leader     string
	// Assignment is the member's partitions in the new generation. With a
	// cooperative assignor, partitions moving away from their owner are in
	// no one's assignment this generation; the owner revokes them and
	// rejoins, and a second rebalance assigns them.
	Assignment  []TopicPartition
	Cooperative bool
	// RebalanceStarts is closed when the group's next rebalance starts:
	// the member must rejoin.
	RebalanceStarts <-chan struct{}
}

// NewMemberID makes a member id as Kafka does: the client id and a UUID.
func NewMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return clientID + "-" + hex.EncodeToString(b[:])
}

// Join adds the member to its group (or updates a rejoining one; a
// member id the group does not know joins as a new member), starts a
// rebalance if none runs, and waits for it to complete: until every member
// has rejoined, or the rebalance timeout drops those that did not. It
// returns the member's assignment in the new generation.
func (c *Coordinator) Join(ctx context.Context, req JoinRequest) (JoinResult, error) {
	if len(req.Assignors) == 0 {
		return JoinResult{}, fmt.Errorf("%w: no assignor", ErrInconsistentProtocol)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return JoinResult{}, ErrClosed
	}
	g := c.groupLocked(req.GroupID)
	m := g.members[req.MemberID]
	if len(g.members) > 0 && len(g.commonProtocols(req.Assignors, m)) == 0 {
		c.mu.Unlock()
		return JoinResult{}, fmt.Errorf("%w: group %s uses %v", ErrInconsistentProtocol, req.GroupID, g.protocolNames())
	}
	if m != nil && g.rebalanceDone == nil && g.state == StateStable && slices.Equal(m.topics, req.Topics) && sameAssignors(m.assignors, req.Assignors) {
		// A known member rejoining a stable group with nothing changed (its
		// last join was cut short, or it only wants the current
		// assignment): as Kafka does, answer with the current generation
		// instead of rebalancing.
		m.lastHeartbeat = c.now()
		res := c.resultLocked(g, m)
		c.mu.Unlock()
		return res, nil
	}
	if m == nil {
		// A new member: with the id it chose (so that a join interrupted by
		// its context can be resumed, as Kafka's member-id handshake
		// allows), or one made here.
		id := req.MemberID
		if id == "" {
			id = NewMemberID(req.ClientID)
		}
		m = &member{id: id}
		g.members[m.id] = m
		g.joinOrder = append(g.joinOrder, m.id)
	}
	m.clientID, m.instanceID = req.ClientID, req.InstanceID
	m.topics = slices.Clone(req.Topics)
	m.owned, m.ownedGeneration = slices.Clone(req.Owned), req.OwnedGeneration
	m.assignors = slices.Clone(req.Assignors)
	m.sessionTimeout, m.rebalanceTimeout = req.SessionTimeout, req.RebalanceTimeout
	m.lastHeartbeat = c.now()
	if g.rebalanceDone == nil {
		c.prepareRebalanceLocked(g)
	}
	m.joined = true
	done := g.rebalanceDone
	c.maybeCompleteLocked(g)
	c.mu.Unlock()
	c.wake()

	select {
	case <-done:
	case <-ctx.Done():
		return JoinResult{}, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g.members[m.id] != m {
		return JoinResult{}, fmt.Errorf("%w: %s was dropped from group %s (it did not rejoin in time)", ErrUnknownMember, m.id, g.id)
	}
	if g.rebalanceDone != nil {
		// Another rebalance started right after this one: rejoin.
		return JoinResult{}, ErrRebalanceInProgress
	}
	return c.resultLocked(g, m), nil
}

func (c *Coordinator) resultLocked(g *group, m *member) JoinResult {
	res := JoinResult{MemberID: m.id, Generation: g.generation, Protocol: g.protocol, Leader: g.leader,
		Assignment: slices.Clone(m.assignment), RebalanceStarts: g.nextRebalance}
	// As Kafka's ConsumerCoordinator decides it: the highest protocol every
	// assignor the member configured supports ([range, cooperative-sticky]
	// stays eager even when cooperative-sticky is chosen).
	if p, err := assignor.RebalanceProtocol(m.assignors); err == nil {
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
	g.state = StatePreparingRebalance
	g.rebalanceDone = make(chan struct{})
	close(g.nextRebalance)
	g.nextRebalance = make(chan struct{})
	var longest time.Duration
	for _, m := range g.members {
		m.joined = false
		longest = max(longest, m.rebalanceTimeout)
	}
	g.deadline = c.now().Add(max(longest, c.initialDelay))
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

// completeRebalanceLocked drops members that did not rejoin, picks the
// assignor, assigns, bumps the generation and wakes the joiners.
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
	if len(g.members) == 0 {
		g.state = StateEmpty
		g.generation++
		g.protocol, g.leader = "", ""
		c.persistGroupLocked(g)
		return
	}
	g.protocol = g.selectProtocol()
	g.leader = g.joinOrder[0]
	g.generation++
	a := g.assignorLocked()
	if a == nil {
		c.logger.Error("no assignor common to the group's members", "group", g.id)
		g.state = StateStable
		return
	}
	members := make([]assignor.Member, 0, len(g.members))
	topics := map[string]bool{}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		members = append(members, assignor.Member{ID: m.id, InstanceID: m.instanceID, Topics: m.topics,
			Generation: m.ownedGeneration, OwnedPartitions: slices.Clone(m.owned)})
		for _, t := range m.topics {
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
		m.lastHeartbeat = c.now()
	}
	g.state = StateStable
	c.persistGroupLocked(g)
	c.logger.Info("rebalanced", "group", g.id, "generation", g.generation, "members", len(g.members), "assignor", g.protocol)
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

// commonProtocols returns the assignor names every member (the joining one
// with its new list, in place of its old) supports.
func (g *group) commonProtocols(joining []assignor.Assignor, self *member) []string {
	var names []string
	for _, a := range joining {
		ok := true
		for _, m := range g.members {
			if m == self {
				continue
			}
			if !slices.ContainsFunc(m.assignors, func(x assignor.Assignor) bool { return x.Name() == a.Name() }) {
				ok = false
				break
			}
		}
		if ok {
			names = append(names, a.Name())
		}
	}
	return names
}

func (g *group) protocolNames() []string {
	var names []string
	for _, m := range g.members {
		for _, a := range m.assignors {
			if !slices.Contains(names, a.Name()) {
				names = append(names, a.Name())
			}
		}
	}
	return names
}

// selectProtocol is Kafka's ClassicGroup.selectProtocol: among the
// assignors every member supports, each member votes for its most
// preferred; the most votes win, ties broken as Kafka's hash map breaks
// them.
func (g *group) selectProtocol() string {
	var ms []assignor.MemberProtocols
	for _, id := range g.joinOrder {
		m := g.members[id]
		mp := assignor.MemberProtocols{MemberID: id}
		for _, a := range m.assignors {
			mp.Protocols = append(mp.Protocols, a.Name())
		}
		ms = append(ms, mp)
	}
	name, err := assignor.SelectProtocol(ms)
	if err != nil {
		return ""
	}
	return name
}

// assignorLocked returns the leader's implementation of the chosen assignor.
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

func (c *Coordinator) removeMemberLocked(g *group, id string) {
	delete(g.members, id)
	g.joinOrder = slices.DeleteFunc(g.joinOrder, func(x string) bool { return x == id })
}

// Heartbeat keeps a member alive. It fails with ErrRebalanceInProgress when
// the member must rejoin, ErrUnknownMember when it was dropped, and
// ErrIllegalGeneration for a stale generation.
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
		if g.rebalanceDone != nil {
			c.completeRebalanceLocked(g)
		} else if g.state != StateEmpty {
			g.state = StateEmpty
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

// expireLocked drops members whose session timed out and completes
// rebalances whose deadline passed. The coordinator's goroutine calls it.
func (c *Coordinator) expireLocked(now time.Time) {
	for _, g := range c.groups {
		for id, m := range g.members {
			if m.sessionTimeout > 0 && now.Sub(m.lastHeartbeat) > m.sessionTimeout {
				c.logger.Info("member session expired", "group", g.id, "member", id, "sessionTimeout", m.sessionTimeout)
				c.removeMemberLocked(g, id)
				c.triggerRebalanceLocked(g)
			}
		}
		if g.rebalanceDone != nil && !now.Before(g.deadline) {
			c.completeRebalanceLocked(g)
		} else {
			c.maybeCompleteLocked(g)
		}
	}
}
