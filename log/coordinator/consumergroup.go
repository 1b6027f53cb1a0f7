package coordinator

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log"
)

// TypeConsumer is the group type of KIP-848's consumer protocol: members
// heartbeat with ConsumerGroupHeartbeat and the coordinator assigns.
const TypeConsumer GroupType = "consumer"

// The states of a consumer group, as Kafka names them.
const (
	// StateAssigning: the group epoch moved past the target assignment's
	// (a member joined, left or changed its subscription) and the next
	// heartbeat computes a new one.
	StateAssigning GroupState = "Assigning"
	// StateReconciling: members are moving to the target assignment.
	StateReconciling GroupState = "Reconciling"
)

// Errors of KIP-848's consumer groups, each with the Kafka error code a
// broker answers it with.
var (
	// ErrFencedMemberEpoch (FENCED_MEMBER_EPOCH): a heartbeat with a
	// member epoch the coordinator does not know; the member must give up
	// its partitions and rejoin with epoch 0.
	ErrFencedMemberEpoch = errors.New("coordinator: fenced member epoch")
	// ErrStaleMemberEpoch (STALE_MEMBER_EPOCH): an offset commit or fetch
	// with a member epoch other than the member's.
	ErrStaleMemberEpoch = errors.New("coordinator: stale member epoch")
	// ErrUnsupportedAssignor (UNSUPPORTED_ASSIGNOR): a server assignor
	// not in group.consumer.assignors.
	ErrUnsupportedAssignor = errors.New("coordinator: unsupported assignor")
	// ErrInvalidRegularExpression (INVALID_REGULAR_EXPRESSION): a
	// subscription's regular expression does not compile.
	ErrInvalidRegularExpression = errors.New("coordinator: invalid regular expression")
	// ErrUnreleasedInstanceID (UNRELEASED_INSTANCE_ID): a static member
	// joins with a group.instance.id whose previous member has not left.
	ErrUnreleasedInstanceID = errors.New("coordinator: unreleased instance id")
	// ErrInvalidHeartbeat (INVALID_REQUEST): a ConsumerGroupHeartbeat
	// whose fields break the protocol's rules (an empty group or member
	// id, a first heartbeat without subscription or rebalance timeout, an
	// unknown epoch sentinel).
	ErrInvalidHeartbeat = errors.New("coordinator: invalid consumer group heartbeat")
	// ErrGroupMaxSize (GROUP_MAX_SIZE_REACHED): the consumer group holds
	// group.consumer.max.size members.
	ErrGroupMaxSize = errors.New("coordinator: group max size reached")
)

// maxRecordString is the longest string Kafka's records hold.
const maxRecordString = 32767

// Member epochs a heartbeat sends instead of its epoch.
const (
	// JoinEpoch joins (or rejoins) the group.
	JoinEpoch = 0
	// LeaveEpoch leaves the group.
	LeaveEpoch = -1
	// StaticLeaveEpoch leaves for a while: a static member keeps its
	// group.instance.id, and its partitions wait for it until its session
	// ends.
	StaticLeaveEpoch = -2
)

// The reconciliation states of a consumer group member (Kafka's
// MemberState), as records and ConsumerGroupDescribe carry them.
const (
	memberStable       int8 = 0 // at the target epoch, owning its target
	memberUnrevoked    int8 = 1 // must revoke partitions first
	memberUnreleased   int8 = 2 // waits for partitions others still own
	memberUnknownState int8 = 3
)

// TopicPartitions are partitions of one topic named by its id.
type TopicPartitions struct {
	TopicID    TopicID
	Partitions []int32
}

// ConsumerHeartbeat is a ConsumerGroupHeartbeat request: a member's
// heartbeat, join (MemberEpoch JoinEpoch), leave (LeaveEpoch,
// StaticLeaveEpoch) or subscription change. A nil field, or -1 for
// RebalanceTimeout, leaves what the member last sent; a join sends them
// all.
type ConsumerHeartbeat struct {
	GroupID string
	// MemberID is the member's id, which the client makes (a UUID) and
	// keeps until it leaves.
	MemberID    string
	MemberEpoch int32
	// InstanceID is a static member's group.instance.id.
	InstanceID *string
	// RackID is the member's client.rack.
	RackID *string
	// RebalanceTimeout is how long the member may take to revoke
	// partitions (its max.poll.interval.ms); -1: unchanged.
	RebalanceTimeout time.Duration
	// SubscribedTopicNames and SubscribedTopicRegex are the subscription:
	// names, a regular expression (Go's RE2 syntax, which Kafka's RE2/J
	// follows), or both.
	SubscribedTopicNames []string
	SubscribedTopicRegex *string
	// ServerAssignor is the member's group.remote.assignor.
	ServerAssignor *string
	// OwnedPartitions are the partitions the member owns; nil when it does
	// not say (a plain heartbeat).
	OwnedPartitions []TopicPartitions
	// ClientID and ClientHost describe the member's client.
	ClientID, ClientHost string
}

// ConsumerHeartbeatResult is the coordinator's answer to a heartbeat.
type ConsumerHeartbeatResult struct {
	MemberID    string
	MemberEpoch int32
	// HeartbeatInterval is group.consumer.heartbeat.interval.ms.
	HeartbeatInterval time.Duration
	// Assignment is the member's assignment, when it changed or the
	// heartbeat was a full one (a join, or every field set); nil
	// otherwise (the member keeps what it has).
	Assignment []TopicPartitions
}

// ConsumerMemberDescription describes a consumer group member (Kafka's
// ConsumerGroupDescribe).
type ConsumerMemberDescription struct {
	MemberID, InstanceID, RackID, ClientID, ClientHost string
	MemberEpoch                                        int32
	SubscribedTopicNames                               []string
	SubscribedTopicRegex                               string
	// Assignment is what the member owns; TargetAssignment what it
	// moves to.
	Assignment, TargetAssignment []TopicPartitions
}

// ConsumerGroupDescription describes a consumer group (Kafka's
// ConsumerGroupDescribe).
type ConsumerGroupDescription struct {
	GroupID         string
	State           GroupState
	GroupEpoch      int32
	AssignmentEpoch int32
	// AssignorName is the server assignor the group uses.
	AssignorName string
	Members      []ConsumerMemberDescription
}

// consumerGroup is a group's state under KIP-848's protocol. Its fields are
// guarded by the coordinator's mutex.
type consumerGroup struct {
	epoch           int32 // the group epoch
	metadataHash    int64 // of the subscribed topics when the epoch was set
	assignmentEpoch int32 // the target assignment's epoch
	assignmentTime  int64 // when it was computed, in milliseconds
	members         map[string]*consumerMember
	target          map[string]partitionEpochs // by member id
	// owners maps each owned partition (assigned or pending revocation)
	// to its owner's epoch: Kafka's current partition epochs.
	owners map[TopicID]map[int32]int32
	// sessionTimeout is the group's consumer.session.timeout.ms, as of
	// its latest heartbeat (log.Dir.GroupConfig).
	sessionTimeout time.Duration
	// changed is closed, and replaced, at every change of the group's
	// state (ConsumerGroupChanges).
	changed chan struct{}
}

// consumerMember is a consumer group member.
type consumerMember struct {
	id, instanceID, rackID, clientID, clientHost string
	topics                                       []string
	regex                                        string
	serverAssignor                               string
	rebalanceTimeout                             time.Duration
	epoch, previousEpoch                         int32
	state                                        int8
	assigned, pendingRevocation                  partitionEpochs
	lastHeartbeat                                time.Time
	// revokeBy is when a member that must revoke partitions is fenced if
	// it has not; zero when it need not.
	revokeBy time.Time
}

func newConsumerGroup(sessionTimeout time.Duration) *consumerGroup {
	return &consumerGroup{members: map[string]*consumerMember{}, target: map[string]partitionEpochs{},
		owners: map[TopicID]map[int32]int32{}, sessionTimeout: sessionTimeout, changed: make(chan struct{})}
}

// notify wakes the waiters of ConsumerGroupChanges.
func (cg *consumerGroup) notify() {
	close(cg.changed)
	cg.changed = make(chan struct{})
}

// ConsumerGroupChanges returns a channel closed at the next change of the
// consumer group's state (a member joined, left or moved, a new target
// assignment); nil when there is no such consumer group. An in-process
// member (package consumer's) heartbeats when it closes instead of at its
// next interval, so that partitions move within the process at once; the
// access token makes it this module's own.
func (c *GroupCoordinator) ConsumerGroupChanges(_ access.Internal, groupID string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[groupID]; ok && g.cg != nil {
		return g.cg.changed
	}
	return nil
}

// state is the group's state as Kafka computes it.
func (cg *consumerGroup) state() GroupState {
	switch {
	case len(cg.members) == 0:
		return StateEmpty
	case cg.epoch > cg.assignmentEpoch:
		return StateAssigning
	}
	for _, m := range cg.members {
		if m.state != memberStable || m.epoch != cg.assignmentEpoch {
			return StateReconciling
		}
	}
	return StateStable
}

// ownerEpoch is the epoch of the partition's owner, -1 when free.
func (cg *consumerGroup) ownerEpoch(id TopicID, p int32) int32 {
	if e, ok := cg.owners[id][p]; ok {
		return e
	}
	return -1
}

// setOwnership replaces m's partitions in owners: those of old go, those
// of m go in at m's epoch.
func (cg *consumerGroup) setOwnership(old, m *consumerMember) {
	if old != nil {
		for _, a := range []partitionEpochs{old.assigned, old.pendingRevocation} {
			for id, ps := range a {
				for p := range ps {
					delete(cg.owners[id], p)
				}
			}
		}
	}
	if m != nil {
		for _, a := range []partitionEpochs{m.assigned, m.pendingRevocation} {
			for id, ps := range a {
				if cg.owners[id] == nil {
					cg.owners[id] = map[int32]int32{}
				}
				for p := range ps {
					cg.owners[id][p] = m.epoch
				}
			}
		}
	}
}

// staticMember returns the member with the group.instance.id, or nil.
func (cg *consumerGroup) staticMember(instanceID string) *consumerMember {
	for _, m := range cg.members {
		if m.instanceID == instanceID {
			return m
		}
	}
	return nil
}

// consumerRecords collects the records a change of a consumer group
// writes, in order.
type consumerRecords struct {
	keys, values [][]byte
}

// ConsumerGroupHeartbeat is Kafka's ConsumerGroupHeartbeat (KIP-848): it
// joins, keeps alive, updates or removes a member of a consumer group,
// bumps the group epoch when the members or their subscriptions change,
// computes the target assignment with the group's server assignor, and
// moves the member towards its part of it: partitions another member
// still owns are given only once that member has revoked them. The
// changes are written to __consumer_offsets in Kafka's records, durably
// (fsynced) when it returns, as a commit is; a heartbeat that changes
// nothing writes nothing.
//
// A first heartbeat (MemberEpoch JoinEpoch) creates the group, converting
// an empty classic group (one with offsets only); a classic group with
// members is not converted (ErrUnknownGroup: Kafka's
// group.consumer.migration.policy, which kafkalite does not offer).
func (c *GroupCoordinator) ConsumerGroupHeartbeat(ctx context.Context, req ConsumerHeartbeat) (ConsumerHeartbeatResult, error) {
	if err := c.checkHeartbeat(req); err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	c.mu.Lock()
	unlocked := false
	defer func() {
		if !unlocked {
			c.mu.Unlock()
		}
	}()
	if c.closed {
		return ConsumerHeartbeatResult{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	var recs consumerRecords
	res, err := c.consumerHeartbeatLocked(req, &recs)
	var l *log.Log
	var end int64
	if len(recs.keys) > 0 {
		l, end = c.writeConsumerRecordsLocked(req.GroupID, &recs)
		if g, ok := c.groups[req.GroupID]; ok && g.cg != nil {
			g.cg.notify()
		}
	}
	c.mu.Unlock()
	unlocked = true
	if err == nil && l != nil {
		// Durable before the answer, as a commit is: the member acts on
		// what it is told, and a crash must not take it back. The state
		// changed already, so ctx no longer stops it: an answer lost to
		// a cancellation would make the member heartbeat again with an
		// epoch one behind.
		if serr := l.Sync(context.WithoutCancel(ctx), end); serr != nil {
			return ConsumerHeartbeatResult{}, serr
		}
	}
	return res, err
}

// checkHeartbeat checks a heartbeat's fields as Kafka's
// throwIfConsumerGroupHeartbeatRequestIsInvalid does.
func (c *GroupCoordinator) checkHeartbeat(req ConsumerHeartbeat) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidHeartbeat, fmt.Sprintf(format, args...))
	}
	switch {
	case req.GroupID == "":
		return bad("the group id is empty")
	case req.MemberID == "":
		return bad("the member id is empty (the client makes it)")
	case req.InstanceID != nil && *req.InstanceID == "":
		return bad("the instance id is empty")
	case req.RackID != nil && *req.RackID == "":
		return bad("the rack id is empty")
	}
	// Every string goes into a record whose strings Kafka bounds.
	long := []string{req.GroupID, req.MemberID, req.ClientID, req.ClientHost}
	for _, p := range []*string{req.InstanceID, req.RackID, req.SubscribedTopicRegex, req.ServerAssignor} {
		if p != nil {
			long = append(long, *p)
		}
	}
	for _, s := range append(long, req.SubscribedTopicNames...) {
		if len(s) > maxRecordString {
			return bad("a string of %d bytes, over the %d a record holds", len(s), maxRecordString)
		}
	}
	switch e := req.MemberEpoch; {
	case e > 0, e == LeaveEpoch:
	case e == JoinEpoch:
		if req.RebalanceTimeout < 0 {
			return bad("a joining member must give its rebalance timeout")
		}
		if req.OwnedPartitions == nil || len(req.OwnedPartitions) > 0 {
			return bad("a joining member owns no partitions (an empty, not a null, list)")
		}
		if len(req.SubscribedTopicNames) == 0 && (req.SubscribedTopicRegex == nil || *req.SubscribedTopicRegex == "") {
			return bad("a joining member must subscribe to topic names or a regular expression")
		}
	case e == StaticLeaveEpoch:
		if req.InstanceID == nil {
			return bad("only a static member leaves with epoch -2")
		}
	default:
		return bad("member epoch %d", e)
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := compileSubscription(*req.SubscribedTopicRegex); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidRegularExpression, err)
		}
	}
	if a := req.ServerAssignor; a != nil && !slices.Contains(c.assignors, *a) {
		return fmt.Errorf("%w: %q; supported: %s", ErrUnsupportedAssignor, *a, strings.Join(c.assignors, ", "))
	}
	return nil
}

// consumerGroupLocked returns the consumer group groupID, creating it
// (create) or converting an empty classic group. REQUIRES c.mu held.
func (c *GroupCoordinator) consumerGroupLocked(groupID string, create bool, recs *consumerRecords) (*group, error) {
	g, ok := c.groups[groupID]
	switch {
	case ok && g.cg != nil:
		return g, nil
	case ok && g.sg != nil:
		return nil, fmt.Errorf("%w: %s is a share group", ErrUnknownGroup, groupID)
	case !create:
		return nil, fmt.Errorf("%w: %s is not a consumer group", ErrUnknownGroup, groupID)
	case ok && (len(g.members) > 0 || g.rebalanceDone != nil || len(g.pending) > 0):
		return nil, fmt.Errorf("%w: %s is a classic group with members; converting it online is not supported", ErrUnknownGroup, groupID)
	}
	if !ok {
		var err error
		if g, err = c.newGroupLocked(groupID); err != nil {
			return nil, err
		}
	} else if g.protocolType != "" {
		// An empty classic group becomes a consumer group: its
		// metadata goes, its offsets stay.
		recs.add(groupTombstoneKey(groupID))
	}
	g.cg = newConsumerGroup(c.consumerSessionTimeout)
	g.protocolType = consumerProtocolType
	g.state = StateEmpty
	return g, nil
}

func (c *GroupCoordinator) consumerHeartbeatLocked(req ConsumerHeartbeat, recs *consumerRecords) (ConsumerHeartbeatResult, error) {
	now := c.now()
	g, err := c.consumerGroupLocked(req.GroupID, req.MemberEpoch == JoinEpoch, recs)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	cg := g.cg
	// The group's consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms (its overrides, else the broker's),
	// read at every heartbeat as Kafka reads them.
	gc := c.dir.GroupConfig(g.id)
	cg.sessionTimeout = gc.ConsumerSessionTimeout
	if req.MemberEpoch == LeaveEpoch || req.MemberEpoch == StaticLeaveEpoch {
		return c.consumerLeaveLocked(g, req, recs)
	}

	// The member: new, a static member's new incarnation, or known.
	m := cg.members[req.MemberID]
	var replaced *consumerMember
	switch {
	case m == nil && req.MemberEpoch != JoinEpoch:
		return ConsumerHeartbeatResult{}, fmt.Errorf("%w: %s in group %s", ErrUnknownMember, req.MemberID, g.id)
	case m == nil && req.InstanceID != nil && cg.staticMember(*req.InstanceID) != nil:
		old := cg.staticMember(*req.InstanceID)
		if old.epoch != StaticLeaveEpoch {
			return ConsumerHeartbeatResult{}, fmt.Errorf("%w: %s is held by member %s in group %s", ErrUnreleasedInstanceID, *req.InstanceID, old.id, g.id)
		}
		// The new incarnation takes the old one's place and
		// partitions, at epoch 0.
		replaced = old
		nm := *old
		nm.id, nm.epoch, nm.previousEpoch = req.MemberID, 0, 0
		nm.pendingRevocation = partitionEpochs{}
		m = &nm
	case m == nil:
		if len(cg.members) >= c.consumerMaxSize {
			return ConsumerHeartbeatResult{}, fmt.Errorf("%w: %d members (group.consumer.max.size)", ErrGroupMaxSize, len(cg.members))
		}
		m = &consumerMember{id: req.MemberID, assigned: partitionEpochs{}, pendingRevocation: partitionEpochs{},
			rebalanceTimeout: -1}
	default:
		if err := checkMemberEpoch(m, req); err != nil {
			return ConsumerHeartbeatResult{}, fmt.Errorf("%w: member %s of group %s", err, m.id, g.id)
		}
		if req.InstanceID != nil && m.instanceID != "" && *req.InstanceID != m.instanceID {
			return ConsumerHeartbeatResult{}, fmt.Errorf("%w: member %s of group %s has instance id %s", ErrFencedInstanceID, m.id, g.id, m.instanceID)
		}
	}
	if len(cg.members) == 0 {
		g.emptySince = time.Time{}
	}
	old := *m
	updated := *m
	u := &updated
	if req.InstanceID != nil {
		u.instanceID = *req.InstanceID
	}
	if req.RackID != nil {
		u.rackID = *req.RackID
	}
	if req.RebalanceTimeout >= 0 {
		u.rebalanceTimeout = req.RebalanceTimeout
	}
	if req.ServerAssignor != nil {
		u.serverAssignor = *req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		u.topics = slices.Sorted(slices.Values(req.SubscribedTopicNames))
		u.topics = slices.Compact(u.topics)
	}
	if req.SubscribedTopicRegex != nil {
		u.regex = *req.SubscribedTopicRegex
	}
	u.clientID, u.clientHost, u.lastHeartbeat = req.ClientID, req.ClientHost, now
	isNew := cg.members[u.id] == nil
	subscriptionChanged := isNew || !slices.Equal(old.topics, u.topics) || old.regex != u.regex ||
		old.serverAssignor != u.serverAssignor || old.rackID != u.rackID
	if isNew || subscriptionChanged || old.instanceID != u.instanceID || old.rebalanceTimeout != u.rebalanceTimeout ||
		old.clientID != u.clientID || old.clientHost != u.clientHost {
		recs.add(memberKey(g.id, u.id, groupcodecTypeMember), c.memberValue(u))
	}
	if replaced != nil {
		delete(cg.members, replaced.id)
		cg.setOwnership(replaced, nil)
		c.removeConsumerMemberRecords(g.id, replaced.id, recs)
		cg.target[u.id] = cg.target[replaced.id]
		delete(cg.target, replaced.id)
		recs.add(memberKey(g.id, u.id, groupcodecTypeMember), c.memberValue(u))
		recs.add(memberKey(g.id, u.id, groupcodecTypeTargetMember), targetValue(cg.target[u.id]))
	}
	cg.members[u.id] = u
	cg.setOwnership(m, u)

	// 1. The group epoch: bumped when a subscription changed or the
	// subscribed topics' metadata did.
	topics := c.subscribedTopicsLocked(cg)
	hash := metadataHash(topics)
	if subscriptionChanged || hash != cg.metadataHash {
		cg.epoch++
		cg.metadataHash = hash
		recs.add(groupKey(g.id, groupcodecTypeGroup), groupEpochValue(cg))
	}

	// 2. The target assignment, when the epoch moved past it.
	if cg.epoch > cg.assignmentEpoch {
		c.computeTargetLocked(g, topics, now, recs)
	}

	// 3. Reconcile the member with its target.
	before := *u
	if err := c.reconcileLocked(cg, u, req.OwnedPartitions); err != nil {
		return ConsumerHeartbeatResult{}, fmt.Errorf("%w: member %s of group %s", err, u.id, g.id)
	}
	if u.state == memberUnrevoked {
		if u.revokeBy.IsZero() || before.state != memberUnrevoked || before.epoch != u.epoch {
			u.revokeBy = now.Add(max(u.rebalanceTimeout, 0))
		}
	} else {
		u.revokeBy = time.Time{}
	}
	if isNew || before.epoch != u.epoch || before.previousEpoch != u.previousEpoch || before.state != u.state ||
		!equalEpochs(before.assigned, u.assigned) || !equalEpochs(before.pendingRevocation, u.pendingRevocation) {
		cg.setOwnership(&before, u)
		recs.add(memberKey(g.id, u.id, groupcodecTypeCurrent), currentValue(u))
	}
	g.state = cg.state()
	c.scheduleLocked(g)

	res := ConsumerHeartbeatResult{MemberID: u.id, MemberEpoch: u.epoch, HeartbeatInterval: gc.ConsumerHeartbeatInterval}
	full := req.MemberEpoch == JoinEpoch || (req.RebalanceTimeout >= 0 && req.SubscribedTopicNames != nil && req.OwnedPartitions != nil)
	if full || !samePartitions(old.assigned, u.assigned) {
		res.Assignment = toTopicPartitions(u.assigned)
	}
	return res, nil
}

// checkMemberEpoch fences a heartbeat whose epoch is not the member's, but
// for its previous epoch with a subset of its partitions (the answer that
// bumped it may have been lost), and but for epoch 0: a member that gave
// up its partitions (fenced, say) joins again under its id, as Kafka 4.4
// accepts it.
func checkMemberEpoch(m *consumerMember, req ConsumerHeartbeat) error {
	switch e := req.MemberEpoch; {
	case e == JoinEpoch, e == m.epoch:
		return nil
	case e > m.epoch:
		return fmt.Errorf("%w: epoch %d is ahead of %d", ErrFencedMemberEpoch, e, m.epoch)
	case e == m.previousEpoch && req.OwnedPartitions != nil && ownedSubset(req.OwnedPartitions, m.assigned):
		return nil
	default:
		return fmt.Errorf("%w: epoch %d is behind %d", ErrFencedMemberEpoch, e, m.epoch)
	}
}

// ownedSubset reports whether every owned partition is in a.
func ownedSubset(owned []TopicPartitions, a partitionEpochs) bool {
	for _, tp := range owned {
		for _, p := range tp.Partitions {
			if !a.has(tp.TopicID, p) {
				return false
			}
		}
	}
	return true
}

// ownsAny reports whether the member still owns one of a's partitions, by
// what it sent (nil: it did not say, so it may).
func ownsAny(owned []TopicPartitions, sent bool, a partitionEpochs) bool {
	if !sent {
		return true
	}
	for _, tp := range owned {
		for _, p := range tp.Partitions {
			if a.has(tp.TopicID, p) {
				return true
			}
		}
	}
	return false
}

// reconcileLocked moves m towards its target, as Kafka's
// CurrentAssignmentBuilder: partitions to revoke first (the member keeps
// its epoch until it has revoked them), then the target epoch with the
// partitions no other member still owns.
func (c *GroupCoordinator) reconcileLocked(cg *consumerGroup, m *consumerMember, owned []TopicPartitions) error {
	target := cg.target[m.id]
	if target == nil {
		target = partitionEpochs{}
	}
	sent := owned != nil
	switch m.state {
	case memberStable:
		if m.epoch == cg.assignmentEpoch {
			return nil
		}
		c.nextAssignment(cg, m, target, m.epoch, owned, sent)
	case memberUnrevoked:
		if ownsAny(owned, sent, m.pendingRevocation) {
			return nil
		}
		c.nextAssignment(cg, m, target, m.epoch+1, owned, sent)
	case memberUnreleased:
		c.nextAssignment(cg, m, target, m.epoch, owned, sent)
	default:
		if !sent || len(owned) > 0 {
			return fmt.Errorf("%w: the member's state is unknown; it must give up its partitions and rejoin", ErrFencedMemberEpoch)
		}
		c.nextAssignment(cg, m, target, cg.assignmentEpoch, owned, sent)
	}
	return nil
}

// nextAssignment is Kafka's computeNextAssignment.
func (c *GroupCoordinator) nextAssignment(cg *consumerGroup, m *consumerMember, target partitionEpochs, epoch int32, owned []TopicPartitions, sent bool) {
	assigned, revoke, pending := partitionEpochs{}, partitionEpochs{}, partitionEpochs{}
	unreleased := false
	ids := map[TopicID]bool{}
	for id := range target {
		ids[id] = true
	}
	for id := range m.assigned {
		ids[id] = true
	}
	for id := range ids {
		for p, e := range m.assigned[id] {
			if target.has(id, p) {
				assigned.add(id, p, e)
			} else {
				revoke.add(id, p, e)
			}
		}
		for p := range target[id] {
			if assigned.has(id, p) {
				continue
			}
			if cg.ownerEpoch(id, p) != -1 && !m.assigned.has(id, p) {
				unreleased = true
				continue
			}
			pending.add(id, p, cg.assignmentEpoch)
		}
	}
	switch {
	case revoke.count() > 0 && ownsAny(owned, sent, revoke):
		m.state = memberUnrevoked
		m.updateEpoch(epoch)
		m.assigned, m.pendingRevocation = assigned, revoke
	default:
		for id, ps := range pending {
			for p, e := range ps {
				assigned.add(id, p, e)
			}
		}
		m.state = memberStable
		if unreleased {
			m.state = memberUnreleased
		}
		m.updateEpoch(cg.assignmentEpoch)
		m.assigned, m.pendingRevocation = assigned, partitionEpochs{}
	}
}

// updateEpoch moves the member to epoch e, remembering the one it leaves.
func (m *consumerMember) updateEpoch(e int32) {
	if e != m.epoch {
		m.previousEpoch = m.epoch
	}
	m.epoch = e
}

// consumerLeaveLocked removes a member (LeaveEpoch), or marks a static
// member as gone for now (StaticLeaveEpoch): its partitions wait for its
// next incarnation until its session ends.
func (c *GroupCoordinator) consumerLeaveLocked(g *group, req ConsumerHeartbeat, recs *consumerRecords) (ConsumerHeartbeatResult, error) {
	cg := g.cg
	m := cg.members[req.MemberID]
	if req.InstanceID != nil {
		sm := cg.staticMember(*req.InstanceID)
		if sm == nil {
			return ConsumerHeartbeatResult{}, fmt.Errorf("%w: no static member %s in group %s", ErrUnknownMember, *req.InstanceID, g.id)
		}
		if sm.id != req.MemberID {
			return ConsumerHeartbeatResult{}, fmt.Errorf("%w: %s is member %s of group %s, not %s", ErrFencedInstanceID, *req.InstanceID, sm.id, g.id, req.MemberID)
		}
		m = sm
	}
	if m == nil {
		return ConsumerHeartbeatResult{}, fmt.Errorf("%w: %s in group %s", ErrUnknownMember, req.MemberID, g.id)
	}
	if req.MemberEpoch == StaticLeaveEpoch {
		before := *m
		m.epoch, m.pendingRevocation, m.revokeBy = StaticLeaveEpoch, partitionEpochs{}, time.Time{}
		cg.setOwnership(&before, m)
		recs.add(memberKey(g.id, m.id, groupcodecTypeCurrent), currentValue(m))
		g.state = cg.state()
		c.scheduleLocked(g)
		return ConsumerHeartbeatResult{MemberID: m.id, MemberEpoch: StaticLeaveEpoch}, nil
	}
	c.fenceConsumerMemberLocked(g, m, recs)
	return ConsumerHeartbeatResult{MemberID: m.id, MemberEpoch: LeaveEpoch}, nil
}

// fenceConsumerMemberLocked removes m from its group and bumps the group
// epoch, so that the next heartbeat assigns its partitions to the others.
func (c *GroupCoordinator) fenceConsumerMemberLocked(g *group, m *consumerMember, recs *consumerRecords) {
	cg := g.cg
	delete(cg.members, m.id)
	delete(cg.target, m.id)
	cg.setOwnership(m, nil)
	c.removeConsumerMemberRecords(g.id, m.id, recs)
	cg.epoch++
	recs.add(groupKey(g.id, groupcodecTypeGroup), groupEpochValue(cg))
	if len(cg.members) == 0 {
		g.emptySince = c.now()
	}
	g.state = cg.state()
}

// expireConsumerMembersLocked fences the members whose session ended
// (group.consumer.session.timeout.ms without a heartbeat) or that did not
// revoke partitions within their rebalance timeout, as Kafka's timers do.
// REQUIRES c.mu held.
func (c *GroupCoordinator) expireConsumerMembersLocked(g *group, now time.Time) {
	var recs consumerRecords
	for _, id := range slices.Sorted(maps.Keys(g.cg.members)) {
		m := g.cg.members[id]
		switch {
		case now.Sub(m.lastHeartbeat) > g.cg.sessionTimeout:
			c.logger.Info("consumer group member session expired", "group", g.id, "member", id)
			c.fenceConsumerMemberLocked(g, m, &recs)
		case !m.revokeBy.IsZero() && now.After(m.revokeBy):
			c.logger.Info("consumer group member did not revoke its partitions in time", "group", g.id, "member", id)
			c.fenceConsumerMemberLocked(g, m, &recs)
		}
	}
	if len(recs.keys) > 0 {
		// Not synced: a member expired again after a crash is the same.
		c.writeConsumerRecordsLocked(g.id, &recs)
		g.cg.notify()
	}
}

// deadline is the earliest of the members' deadlines: the ends of their
// sessions and of the rebalance timeouts of those revoking.
func (cg *consumerGroup) deadline() time.Time {
	var next time.Time
	for _, m := range cg.members {
		for _, t := range []time.Time{m.lastHeartbeat.Add(cg.sessionTimeout), m.revokeBy} {
			if !t.IsZero() && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next
}

// subscribedTopicsLocked resolves the members' subscriptions (names and
// regular expressions) to the topics that exist, by name.
func (c *GroupCoordinator) subscribedTopicsLocked(cg *consumerGroup) map[string]assignTopic {
	out := map[string]assignTopic{}
	var regexes []*regexp.Regexp
	for _, m := range cg.members {
		for _, t := range m.topics {
			if _, ok := out[t]; !ok {
				if at, ok := c.topicFor(t); ok {
					out[t] = at
				}
			}
		}
		if m.regex != "" {
			if re, err := compileSubscription(m.regex); err == nil {
				regexes = append(regexes, re)
			}
		}
	}
	if len(regexes) > 0 {
		// Internal topics too, as Kafka's coordinator matches them.
		for _, t := range c.dir.Topics() {
			if _, ok := out[t]; ok {
				continue
			}
			for _, re := range regexes {
				if re.MatchString(t) {
					if at, ok := c.topicFor(t); ok {
						out[t] = at
					}
					break
				}
			}
		}
	}
	return out
}

// compileSubscription compiles a subscription's regular expression to
// match whole topic names, as Kafka's coordinator matches them
// (Pattern.matcher(topic).matches()).
func compileSubscription(expr string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err
	}
	return regexp.Compile("^(?:" + expr + ")$")
}

// topicFor returns a topic's id and partition count, false if it does not
// exist.
func (c *GroupCoordinator) topicFor(name string) (assignTopic, bool) {
	td, err := c.dir.DescribeTopic(name)
	if err != nil {
		return assignTopic{}, false
	}
	var id TopicID
	if b, err := base64.RawURLEncoding.DecodeString(td.ID); err == nil && len(b) == 16 {
		copy(id[:], b)
	}
	return assignTopic{id: id, partitions: td.Partitions}, true
}

// metadataHash hashes the subscribed topics' names, ids and partition
// counts (KIP-1101's metadata hash, by kafkalite's own function): a change
// of it bumps the group epoch.
func metadataHash(topics map[string]assignTopic) int64 {
	names := slices.Sorted(maps.Keys(topics))
	d := xxhash.New()
	var b []byte
	for _, n := range names {
		t := topics[n]
		b = binary.BigEndian.AppendUint32(b[:0], uint32(len(n)))
		b = append(b, n...)
		b = append(b, t.id[:]...)
		b = binary.BigEndian.AppendUint32(b, uint32(t.partitions))
		d.Write(b)
	}
	return int64(d.Sum64())
}

// computeTargetLocked computes the target assignment at the group epoch
// with the group's assignor, and records what changed.
func (c *GroupCoordinator) computeTargetLocked(g *group, topics map[string]assignTopic, now time.Time, recs *consumerRecords) {
	cg := g.cg
	byID := map[TopicID]assignTopic{}
	for _, t := range topics {
		byID[t.id] = t
	}
	var members []assignMember
	for _, m := range cg.members {
		subs := map[TopicID]bool{}
		for _, t := range m.topics {
			if at, ok := topics[t]; ok {
				subs[at.id] = true
			}
		}
		if m.regex != "" {
			if re, err := compileSubscription(m.regex); err == nil {
				for name, at := range topics {
					if re.MatchString(name) {
						subs[at.id] = true
					}
				}
			}
		}
		members = append(members, assignMember{id: m.id, topics: subs, target: cg.target[m.id]})
	}
	next := assign(c.groupAssignor(cg), members, byID)
	for _, id := range slices.Sorted(maps.Keys(next)) {
		if old, ok := cg.target[id]; !ok || !samePartitions(old, next[id]) {
			recs.add(memberKey(g.id, id, groupcodecTypeTargetMember), targetValue(next[id]))
		}
	}
	cg.target = next
	cg.assignmentEpoch = cg.epoch
	cg.assignmentTime = now.UnixMilli()
	recs.add(groupKey(g.id, groupcodecTypeTargetMeta), targetMetaValue(cg))
}

// groupAssignor is the assignor the group's members ask for most (ties to
// the first in name order), or the first of group.consumer.assignors.
func (c *GroupCoordinator) groupAssignor(cg *consumerGroup) string {
	votes := map[string]int{}
	for _, m := range cg.members {
		if m.serverAssignor != "" {
			votes[m.serverAssignor]++
		}
	}
	best := ""
	for _, name := range slices.Sorted(maps.Keys(votes)) {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	if best == "" {
		best = c.assignors[0]
	}
	return best
}

// toTopicPartitions lists a's partitions by topic, both in order.
func toTopicPartitions(a partitionEpochs) []TopicPartitions {
	out := []TopicPartitions{}
	for _, id := range a.sortedTopics() {
		out = append(out, TopicPartitions{TopicID: id, Partitions: sortedPartitions(a[id])})
	}
	return out
}

// DescribeConsumerGroup is Kafka's ConsumerGroupDescribe for one group: an
// unknown group, or one that is not a consumer group, fails with
// [ErrUnknownGroup].
func (c *GroupCoordinator) DescribeConsumerGroup(groupID string) (ConsumerGroupDescription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok || g.cg == nil {
		return ConsumerGroupDescription{}, fmt.Errorf("%w: %s is not a consumer group", ErrUnknownGroup, groupID)
	}
	cg := g.cg
	d := ConsumerGroupDescription{GroupID: g.id, State: cg.state(), GroupEpoch: cg.epoch, AssignmentEpoch: cg.assignmentEpoch,
		AssignorName: c.groupAssignor(cg)}
	ids := slices.Collect(maps.Keys(cg.members))
	sort.Strings(ids)
	for _, id := range ids {
		m := cg.members[id]
		d.Members = append(d.Members, ConsumerMemberDescription{MemberID: m.id, InstanceID: m.instanceID, RackID: m.rackID,
			ClientID: m.clientID, ClientHost: m.clientHost, MemberEpoch: m.epoch, SubscribedTopicNames: slices.Clone(m.topics),
			SubscribedTopicRegex: m.regex, Assignment: toTopicPartitions(m.assigned),
			TargetAssignment: toTopicPartitions(cg.target[m.id])})
	}
	return d, nil
}

// checkConsumerCommitLocked is Kafka 4.4's ConsumerGroup.validateOffsetCommit:
// a commit without membership only while the group has no members; a
// member's at its epoch, or at an older one for partitions it was assigned
// at or before it. REQUIRES c.mu held.
func (c *GroupCoordinator) checkConsumerCommitLocked(g *group, memberID string, epoch int32, tps []TopicPartition) error {
	cg := g.cg
	if epoch < 0 && len(cg.members) == 0 {
		return nil
	}
	m := cg.members[memberID]
	if m == nil {
		return fmt.Errorf("%w: %s in consumer group %s", ErrUnknownMember, memberID, g.id)
	}
	switch {
	case epoch == m.epoch:
		return nil
	case epoch > m.epoch:
		return fmt.Errorf("%w: commit at epoch %d, member %s is at %d", ErrStaleMemberEpoch, epoch, memberID, m.epoch)
	}
	for _, tp := range tps {
		at, ok := c.topicFor(tp.Topic)
		if !ok {
			return fmt.Errorf("%w: %s is not assigned to member %s", ErrStaleMemberEpoch, tp, memberID)
		}
		e, assigned := m.assigned[at.id][tp.Partition]
		if !assigned {
			e, assigned = m.pendingRevocation[at.id][tp.Partition]
		}
		if !assigned {
			return fmt.Errorf("%w: %s is not assigned to member %s", ErrStaleMemberEpoch, tp, memberID)
		}
		if epoch < e {
			return fmt.Errorf("%w: commit at epoch %d, %s was assigned at %d", ErrStaleMemberEpoch, epoch, tp, e)
		}
	}
	return nil
}

// CheckConsumerOffsetFetch is Kafka's ConsumerGroup.validateOffsetFetch:
// an OffsetFetch (version 9 and later) that names a member of a consumer
// group must carry its epoch ([ErrUnknownMember], [ErrStaleMemberEpoch]);
// one without a member id and with a negative epoch is an admin's, and
// any group's fetch that is not a consumer group's passes.
func (c *GroupCoordinator) CheckConsumerOffsetFetch(groupID, memberID string, epoch int32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok || g.cg == nil || (memberID == "" && epoch < 0) {
		return nil
	}
	m := g.cg.members[memberID]
	if m == nil {
		return fmt.Errorf("%w: %s in consumer group %s", ErrUnknownMember, memberID, groupID)
	}
	if epoch != m.epoch {
		return fmt.Errorf("%w: fetch at epoch %d, member %s is at %d", ErrStaleMemberEpoch, epoch, memberID, m.epoch)
	}
	return nil
}
