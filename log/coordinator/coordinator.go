package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/log"
)

// OffsetsTopic is Kafka's internal topic of committed offsets and group
// metadata.
const OffsetsTopic = "__consumer_offsets"

// serviceName is the coordinator's name among the Dir's services.
const serviceName = "group-coordinator"

// tick is how often the coordinator's goroutine looks for due deadlines
// (sessions, rebalances, member ids handed out); a tick with nothing due
// visits no group.
const tick = 20 * time.Millisecond

// GroupCoordinator is the group coordinator of one log.Dir: Kafka's
// GroupCoordinator. Get it with [Groups]. It is safe for concurrent use. It
// owns one goroutine (session expiry, rebalance deadlines, offset and
// group expiry), which the Dir's Close stops.
//
// Its methods are Kafka's group requests: the classic protocol's
// JoinGroup (with [GroupCoordinator.PendingMember] for a new member's
// first join), SyncGroup, Heartbeat and LeaveGroup; and, for every group,
// OffsetCommit ([GroupCoordinator.CommitOffsets]), OffsetFetch
// ([GroupCoordinator.FetchOffsets]), OffsetDelete, TxnOffsetCommit,
// ListGroups, DescribeGroups and DeleteGroups.
type GroupCoordinator struct {
	dir           *log.Dir
	logger        *slog.Logger
	now           func() time.Time
	initialDelay  time.Duration
	retention     time.Duration // offsets.retention.minutes
	checkInterval time.Duration // offsets.retention.check.interval.ms
	maxGroups     int           // log.Config.GroupMaxCount
	partitions    []*log.Log    // of __consumer_offsets
	// The consumer groups' settings (group.consumer.*): the server
	// assignors by name, the members a group takes, and the session
	// timeout of a new group (each heartbeat takes the group's own and
	// its heartbeat interval from log.Dir.GroupConfig).
	assignors              []string
	consumerMaxSize        int
	consumerSessionTimeout time.Duration
	// The share groups' settings (group.share.*): the session timeout of
	// a new group (each heartbeat takes the group's own, as for consumer
	// groups) and the members a group takes.
	shareSessionTimeout time.Duration
	shareMaxSize        int

	mu     sync.Mutex // protects the following fields and the groups
	groups map[string]*group
	// due holds the groups with a deadline, earliest first (see
	// expiry.go); visited counts the groups the goroutine's ticks
	// looked at, for tests.
	due     dueHeap
	visited int
	// pendingTxn holds the offsets committed inside transactions whose
	// marker has not been written yet, by __consumer_offsets partition and
	// producer id (Kafka's pendingTransactionalOffsetCommits).
	pendingTxn map[txnKey]map[string]map[TopicPartition]pendingOffset
	// shareReleases are the share group members removed whose acquired
	// records the goroutine releases once it no longer holds mu.
	shareReleases []shareRelease
	closed        bool

	wakeCh chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// Groups returns the Dir's group coordinator, creating it (and
// __consumer_offsets, with offsets.topic.num.partitions partitions,
// compacted) on first use and loading the groups and offsets stored there.
// Every caller gets the same one: a broker's network members and the
// Dir's in-process consumers share its groups. The Dir's Close closes it.
func Groups(ctx context.Context, d *log.Dir) (*GroupCoordinator, error) {
	svc, err := d.Service(serviceName, func(d *log.Dir) (log.Service, error) { return open(ctx, d) })
	if err != nil {
		return nil, err
	}
	return svc.(*GroupCoordinator), nil
}

func open(ctx context.Context, d *log.Dir) (*GroupCoordinator, error) {
	cfg := d.Config()
	parts, err := d.InternalTopic(access.Internal{}, ctx, OffsetsTopic, int32(cfg.OffsetsTopicNumPartitions), nil) // compacted, as Kafka configures it
	if err != nil {
		return nil, err
	}
	c := &GroupCoordinator{dir: d, logger: cfg.Logger, now: cfg.Now, initialDelay: cfg.GroupInitialRebalanceDelay,
		retention: cfg.OffsetsRetention, checkInterval: cfg.OffsetsRetentionCheckInterval, maxGroups: cfg.GroupMaxCount,
		partitions: parts, groups: map[string]*group{}, pendingTxn: map[txnKey]map[string]map[TopicPartition]pendingOffset{},
		wakeCh: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for _, a := range cfg.ConsumerGroupAssignors {
		if name := log.ConsumerGroupAssignorName(a); name != "" && !slices.Contains(c.assignors, name) {
			c.assignors = append(c.assignors, name)
		}
	}
	if len(c.assignors) == 0 {
		c.assignors = []string{AssignorUniform, AssignorRange}
	}
	c.consumerMaxSize, c.consumerSessionTimeout = cfg.ConsumerGroupMaxSize, cfg.ConsumerGroupSessionTimeout
	def := log.DefaultConfig()
	if c.consumerMaxSize <= 0 {
		c.consumerMaxSize = def.ConsumerGroupMaxSize
	}
	if c.consumerSessionTimeout <= 0 {
		c.consumerSessionTimeout = def.ConsumerGroupSessionTimeout
	}
	c.shareSessionTimeout, c.shareMaxSize = cfg.ShareSessionTimeout, cfg.ShareGroupMaxSize
	if c.shareSessionTimeout <= 0 {
		c.shareSessionTimeout = def.ShareSessionTimeout
	}
	if c.shareMaxSize <= 0 {
		c.shareMaxSize = def.ShareGroupMaxSize
	}
	if c.checkInterval <= 0 {
		c.checkInterval = 10 * time.Minute
	}
	if c.maxGroups <= 0 {
		c.maxGroups = log.DefaultConfig().GroupMaxCount
	}
	c.logger = logging.OrDefault(c.logger)
	if c.now == nil {
		c.now = time.Now
	}
	if err := c.load(); err != nil {
		return nil, err
	}
	go c.run(c.now()) // the clock is read here, not when the goroutine first runs
	return c, nil
}

// Close stops the coordinator's goroutine. Members still joined are dropped
// with their processes; the Dir closes it.
func (c *GroupCoordinator) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, g := range c.groups {
		if g.rebalanceDone != nil {
			close(g.rebalanceDone)
			g.rebalanceDone = nil
		}
	}
	c.mu.Unlock()
	close(c.stop)
	<-c.done
	return nil
}

func (c *GroupCoordinator) wake() {
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
}

// run expires sessions, completes rebalances past their deadline (only
// the groups with a deadline due are looked at), and every
// offsets.retention.check.interval.ms expires offsets and deletes empty
// groups (expireGroups).
func (c *GroupCoordinator) run(lastExpiry time.Time) {
	defer close(c.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		case <-c.wakeCh:
		}
		now := c.now()
		c.mu.Lock()
		c.tickLocked(now)
		releases := c.shareReleases
		c.shareReleases = nil
		c.mu.Unlock()
		c.releaseShareMembers(context.Background(), releases)
		if now.Sub(lastExpiry) >= c.checkInterval {
			lastExpiry = now
			c.expireGroups(now)
		}
	}
}

// groupLocked returns the group, creating it if it does not exist,
// whatever the count of groups: for what the coordinator loads or a
// marker completes. A client's request creates groups with newGroupLocked.
func (c *GroupCoordinator) groupLocked(id string) *group {
	g, ok := c.groups[id]
	if !ok {
		g = newGroup(id, c.now())
		c.groups[id] = g
	}
	return g
}

// ErrGroupMaxCount: a request would create a group while the coordinator
// holds log.Config.GroupMaxCount groups (GROUP_MAX_SIZE_REACHED on the
// wire). Expiry and DeleteGroup make room.
var ErrGroupMaxCount = errors.New("coordinator: too many groups")

// newGroupLocked is groupLocked for a client's request: a new group is
// refused with ErrGroupMaxCount once there are GroupMaxCount groups.
func (c *GroupCoordinator) newGroupLocked(id string) (*group, error) {
	if g, ok := c.groups[id]; ok {
		return g, nil
	}
	if len(c.groups) >= c.maxGroups {
		return nil, fmt.Errorf("%w: %d groups (GroupMaxCount); %s is not created", ErrGroupMaxCount, len(c.groups), id)
	}
	return c.groupLocked(id), nil
}

// partitionCount returns a topic's partition count, or false if it does not
// exist.
func (c *GroupCoordinator) partitionCount(topic string) (int32, bool) {
	desc, err := c.dir.DescribeTopic(topic)
	if err != nil {
		return 0, false
	}
	return desc.Partitions, true
}

// CommitOffsets is Kafka's OffsetCommit: it stores offsets for m's group,
// durably: they are in __consumer_offsets and fsynced when it returns. A
// member commits with its id and generation (and a static member with its
// group.instance.id, which fences a replaced one with
// [ErrFencedInstanceID]); a consumer without membership (partitions
// assigned by hand, or an admin client) commits with an empty member id
// and generation -1, which Kafka accepts only while the group has no
// members. The coordinator stamps each offset's CommitTimestamp.
func (c *GroupCoordinator) CommitOffsets(ctx context.Context, m GroupMetadata, offsets map[TopicPartition]OffsetAndMetadata) error {
	if err := c.checkInstance(m); err != nil {
		return err
	}
	groupID := m.GroupID
	tps := slices.Collect(maps.Keys(offsets))
	g, err := c.lockCommits(ctx, groupID, func(g *group) error {
		if g.sg != nil {
			return fmt.Errorf("%w: %s is a share group, which commits no offsets", ErrUnknownGroup, groupID)
		}
		if g.cg != nil {
			return c.checkConsumerCommitLocked(g, m.MemberID, m.GenerationID, tps)
		}
		return g.checkCommitter(m.MemberID, m.GenerationID, false)
	})
	if err != nil {
		return err
	}
	defer func() { <-g.commitMu }()
	now := c.now().UnixMilli()
	stamped := make(map[TopicPartition]OffsetAndMetadata, len(offsets))
	for tp, om := range offsets {
		om.CommitTimestamp = now
		stamped[tp] = om
	}
	pos, err := c.appendOffsets(ctx, groupID, stamped, nil)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for tp, om := range stamped {
		g.setOffset(tp, om, pos)
	}
	return nil
}

// lockCommits returns groupID's group (created if need be) with its
// commit lock held, once check passes. A group expired or deleted while
// the caller waited for its lock is looked up (or created) again, so that
// a commit is never appended before the tombstones of the group it was
// meant for, nor applied to a group that is gone.
func (c *GroupCoordinator) lockCommits(ctx context.Context, groupID string, check func(*group) error) (*group, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		// A new group is made only for a commit the check lets through
		// (one without membership): a refused commit leaves nothing.
		g, ok := c.groups[groupID]
		if !ok {
			g = newGroup(groupID, c.now())
		}
		err := check(g)
		if err == nil && !ok {
			if len(c.groups) >= c.maxGroups {
				err = fmt.Errorf("%w: %d groups (GroupMaxCount); %s is not created", ErrGroupMaxCount, len(c.groups), groupID)
			} else {
				c.groups[groupID] = g
			}
		}
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case g.commitMu <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
		same := c.groups[groupID] == g
		if same {
			err = check(g) // the membership may have changed meanwhile
		}
		c.mu.Unlock()
		if same && err == nil {
			return g, nil
		}
		<-g.commitMu
		if err != nil {
			return nil, err
		}
	}
}

// checkCommitter fences commits from stale or unknown members, as Kafka
// 4.4's ClassicGroup.validateOffsetCommit does: a commit without
// membership (no member id, generation below 0) only while the group has
// no members (UNKNOWN_MEMBER_ID otherwise), else the member and its
// generation checked; a member that has its generation but not yet its
// assignment gets REBALANCE_IN_PROGRESS and commits once it has synced.
// A transactional commit (TxnOffsetCommit) skips the two state checks,
// as Kafka's does: the transaction, not the group, decides its fate.
func (g *group) checkCommitter(memberID string, generation int32, transactional bool) error {
	if memberID == "" && generation < 0 {
		if len(g.members) > 0 && !transactional {
			return fmt.Errorf("%w: group %s has members; a commit without membership is refused", ErrUnknownMember, g.id)
		}
		return nil
	}
	if _, ok := g.members[memberID]; !ok {
		return fmt.Errorf("%w: %s in group %s", ErrUnknownMember, memberID, g.id)
	}
	if generation != g.generation {
		return fmt.Errorf("%w: commit from generation %d, group %s is at %d", ErrIllegalGeneration, generation, g.id, g.generation)
	}
	if g.state == StateCompletingRebalance && !transactional {
		return fmt.Errorf("%w: group %s awaits its leader's assignment", ErrRebalanceInProgress, g.id)
	}
	return nil
}

// FetchOffsets is Kafka's OffsetFetch: it returns a group's committed
// offsets for the partitions (all of them for nil); partitions without a
// commit are absent, as are offsets committed in transactions not yet
// committed ([GroupCoordinator.PendingTxnOffsets] lists those).
func (c *GroupCoordinator) FetchOffsets(groupID string, tps []TopicPartition) map[TopicPartition]OffsetAndMetadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[TopicPartition]OffsetAndMetadata{}
	g, ok := c.groups[groupID]
	if !ok {
		return out
	}
	if tps == nil {
		maps.Copy(out, g.offsets)
		return out
	}
	for _, tp := range tps {
		if om, ok := g.offsets[tp]; ok {
			out[tp] = om
		}
	}
	return out
}

// ListGroups is Kafka's ListGroups: the known groups, sorted by id.
func (c *GroupCoordinator) ListGroups() []GroupListing {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := slices.Collect(maps.Keys(c.groups))
	sort.Strings(ids)
	out := make([]GroupListing, len(ids))
	for i, id := range ids {
		g := c.groups[id]
		out[i] = GroupListing{GroupID: id, Type: TypeClassic, ProtocolType: g.protocolType, State: g.state}
		switch {
		case g.cg != nil:
			out[i].Type, out[i].State = TypeConsumer, g.cg.state()
		case g.sg != nil:
			out[i].Type, out[i].State = TypeShare, g.sg.state()
		}
	}
	return out
}

// DescribeGroup is Kafka's DescribeGroups for one group; an unknown group
// fails with [ErrUnknownGroup] (Kafka describes it as Dead, with no
// members).
func (c *GroupCoordinator) DescribeGroup(groupID string) (GroupDescription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.groups[groupID]
	if !ok {
		return GroupDescription{}, fmt.Errorf("%w: %s", ErrUnknownGroup, groupID)
	}
	if g.sg != nil {
		return GroupDescription{}, fmt.Errorf("%w: %s is a share group, not a classic group", ErrUnknownGroup, groupID)
	}
	if g.cg != nil {
		// Kafka's DescribeGroups describes classic groups only; a
		// consumer group is ConsumerGroupDescribe's.
		return GroupDescription{}, fmt.Errorf("%w: %s is a consumer group, not a classic group", ErrUnknownGroup, groupID)
	}
	d := GroupDescription{GroupID: g.id, Type: TypeClassic, State: g.state, Generation: g.generation, ProtocolType: g.protocolType,
		Protocol: g.protocol, Leader: g.leader, Offsets: maps.Clone(g.offsets)}
	for _, id := range g.sortedMemberIDs() {
		m := g.members[id]
		d.Members = append(d.Members, MemberDescription{MemberID: m.id, ClientID: m.clientID, ClientHost: m.clientHost, InstanceID: m.instanceID,
			Topics: slices.Clone(m.topics), Assignment: slices.Clone(m.assignment), LastHeartbeat: m.lastHeartbeat,
			Metadata: m.metadata(g.protocol), AssignmentBytes: m.assignmentOut()})
	}
	return d, nil
}

// DeleteGroup is Kafka's DeleteGroups for one group: it deletes an empty
// group (one with members fails with [ErrGroupNotEmpty], an unknown one
// with [ErrUnknownGroup]); its offsets and metadata get tombstones in
// __consumer_offsets, durably when it returns.
func (c *GroupCoordinator) DeleteGroup(ctx context.Context, groupID string) error {
	for {
		c.mu.Lock()
		g, ok := c.groups[groupID]
		c.mu.Unlock()
		if !ok {
			return fmt.Errorf("%w: %s", ErrUnknownGroup, groupID)
		}
		// The commit lock first: no commit of the group is between its
		// append and its effect while the tombstones are appended.
		select {
		case g.commitMu <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		c.mu.Lock()
		if c.groups[groupID] != g {
			c.mu.Unlock()
			<-g.commitMu
			continue // expired meanwhile, maybe created again
		}
		if n := g.memberCount(); n > 0 {
			c.mu.Unlock()
			<-g.commitMu
			return fmt.Errorf("%w: %s has %d members", ErrGroupNotEmpty, groupID, n)
		}
		tps := slices.Collect(maps.Keys(g.offsets))
		delete(c.groups, groupID)
		l, end, err := c.appendTombstonesLocked(g, tps, true)
		c.mu.Unlock()
		<-g.commitMu
		if err != nil {
			return err
		}
		if err := l.Sync(ctx, end); err != nil {
			return err
		}
		if g.sg != nil {
			// A share group's share-partition states go with it.
			m, err := c.SharePartitions(ctx)
			if err != nil {
				return err
			}
			return m.DeleteGroup(ctx, groupID)
		}
		return nil
	}
}

// ErrGroupSubscribedToTopic (GROUP_SUBSCRIBED_TO_TOPIC): deleting the
// offsets of a partition whose topic a member of the group is subscribed
// to.
var ErrGroupSubscribedToTopic = errors.New("coordinator: group subscribed to topic")

// DeleteOffsets is Kafka's OffsetDelete: it removes a group's committed
// offsets for the partitions: they get tombstones in __consumer_offsets, and
// the group no longer has them. As Kafka does, it refuses the partitions of
// a topic a member is subscribed to, with [ErrGroupSubscribedToTopic]; it
// returns the refused partitions and deletes the others.
func (c *GroupCoordinator) DeleteOffsets(ctx context.Context, groupID string, tps []TopicPartition) (map[TopicPartition]error, error) {
	for {
		c.mu.Lock()
		g, ok := c.groups[groupID]
		c.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrUnknownGroup, groupID)
		}
		select {
		case g.commitMu <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
		if c.groups[groupID] != g {
			c.mu.Unlock()
			<-g.commitMu
			continue // expired meanwhile, maybe created again
		}
		refused := map[TopicPartition]error{}
		var del []TopicPartition
		var consumerTopics map[string]assignTopic
		if g.cg != nil {
			consumerTopics = c.subscribedTopicsLocked(g.cg)
		}
		for _, tp := range tps {
			_, subscribed := consumerTopics[tp.Topic]
			for _, m := range g.members {
				if slices.Contains(m.topics, tp.Topic) {
					subscribed = true
					break
				}
			}
			if subscribed {
				refused[tp] = fmt.Errorf("%w: %s has a member subscribed to %s", ErrGroupSubscribedToTopic, groupID, tp.Topic)
				continue
			}
			del = append(del, tp)
		}
		l, end, err := c.appendTombstonesLocked(g, del, false)
		if err == nil {
			for _, tp := range del {
				delete(g.offsets, tp)
				delete(g.offsetPos, tp)
			}
		}
		c.mu.Unlock()
		<-g.commitMu
		if err == nil && end > 0 {
			err = l.Sync(ctx, end)
		}
		if err != nil {
			return nil, err
		}
		return refused, nil
	}
}
