package consumer

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
)

// groupMember is the consumer's side of its group, by protocol:
// [membership] (classic) or [protocolMember] (KIP-848's consumer
// protocol).
type groupMember interface {
	setSubscription(topics []string, re *regexp.Regexp, l RebalanceListener)
	// poll runs the group's part of Poll.
	poll(ctx context.Context, c *Consumer) error
	// rejoinNeeded returns a channel closed when Poll has group work to do.
	rejoinNeeded() <-chan struct{}
	// identity is the member id and generation (or member epoch) commits
	// carry.
	identity() (string, int32)
	// leave revokes everything and leaves the group.
	leave(ctx context.Context, c *Consumer) error
	stopHeartbeat()
}

// protocolMember is the consumer's side of a consumer group of KIP-848's
// protocol (group.protocol=consumer): Kafka's ConsumerMembershipManager.
// The coordinator assigns; the member heartbeats its subscription and the
// partitions it owns, and Poll reconciles with what the coordinator sends:
// it revokes what the new assignment leaves out (committing first with
// auto-commit, then OnPartitionsRevoked), takes what it adds
// (OnPartitionsAssigned, even with none on the first assignment), and
// says so at once in a heartbeat, so that the partitions it gave up go to
// their new owners. A member fenced by the coordinator (its session ended,
// it missed its rebalance timeout) loses its partitions
// (OnPartitionsLost) and joins again at the next Poll.
type protocolMember struct {
	c        *Consumer
	topics   []string
	re       *regexp.Regexp
	listener RebalanceListener

	// hbMu serialises heartbeats (Poll's and the heartbeat goroutine's),
	// so that each is sent with what the one before it answered.
	hbMu sync.Mutex

	mu       sync.Mutex // protects the fields below (the heartbeat goroutine shares them)
	memberID string
	epoch    int32
	joined   bool
	// sendAll makes the next heartbeat a full one (the subscription
	// changed, or the member rejoins).
	sendAll bool
	// target is the last assignment the coordinator sent, not yet
	// reconciled; nil when there is none.
	target []TopicPartition
	lost   bool // fenced or dropped: the partitions are no longer ours
	// signal is closed when Poll has work: an assignment to reconcile or a
	// rejoin.
	signal   chan struct{}
	interval time.Duration
	owned    []TopicPartition // written by Poll's goroutine, read by heartbeats
	hb       heartbeater

	lastCommit time.Time
	names      map[coordinator.TopicID]string // topic ids seen, by id
}

func newProtocolMember(c *Consumer) *protocolMember {
	return &protocolMember{c: c, signal: make(chan struct{}), lastCommit: c.now(), names: map[coordinator.TopicID]string{},
		interval: c.cfg.HeartbeatInterval}
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// newMemberID makes a member id as Kafka's clients do for KIP-848: a
// random UUID, in Kafka's base64 form.
func newMemberID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return hex.EncodeToString(b[:])
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (m *protocolMember) setSubscription(topics []string, re *regexp.Regexp, l RebalanceListener) {
	m.topics, m.re, m.listener = slices.Clone(topics), re, l
	slices.Sort(m.topics)
	m.mu.Lock()
	m.sendAll = true
	m.mu.Unlock()
	m.wake()
}

// wake tells Poll it has group work to do. REQUIRES m.mu not held.
func (m *protocolMember) wake() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wakeLocked()
}

func (m *protocolMember) wakeLocked() {
	close(m.signal)
	m.signal = make(chan struct{})
}

func (m *protocolMember) rejoinNeeded() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.target != nil || m.lost || !m.joined || m.sendAll {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return m.signal
}

func (m *protocolMember) identity() (string, int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.joined {
		return "", -1
	}
	return m.memberID, m.epoch
}

// subscribed resolves the subscription to topic names (a pattern against
// the directory's topics, as the classic member does).
func (m *protocolMember) subscribed(c *Consumer) []string {
	if m.re == nil {
		return m.topics
	}
	var topics []string
	for _, t := range c.dir.Topics() {
		if m.re.MatchString(t) && !(c.cfg.ExcludeInternalTopics && log.IsInternalTopic(t)) {
			topics = append(topics, t)
		}
	}
	if !slices.Equal(topics, m.topics) {
		m.topics = topics
		m.mu.Lock()
		m.sendAll = true
		m.mu.Unlock()
	}
	return topics
}

func (m *protocolMember) poll(ctx context.Context, c *Consumer) error {
	m.subscribed(c)
	m.mu.Lock()
	lost, joined, sendAll := m.lost, m.joined, m.sendAll
	m.mu.Unlock()
	if lost {
		owned := m.setOwned(nil)
		if err := c.setAssignment(nil); err != nil {
			return err
		}
		m.callback(c, func(l RebalanceListener) { l.OnPartitionsLost(ctx, owned) }, owned, false)
		m.mu.Lock()
		m.lost, m.joined, m.epoch, m.target = false, false, 0, nil
		m.mu.Unlock()
		joined = false
	}
	if !joined || sendAll {
		if err := m.heartbeat(ctx, c, true); err != nil {
			return err
		}
	}
	if err := m.reconcile(ctx, c); err != nil {
		return err
	}
	if c.cfg.EnableAutoCommit && c.now().Sub(m.lastCommit) >= c.cfg.AutoCommitInterval {
		m.lastCommit = c.now()
		if err := c.commit(ctx, nil); err != nil {
			c.logger.Warn("auto-commit failed", "err", err)
		}
	}
	m.startHeartbeat(c)
	return nil
}

// reconcile applies an assignment the coordinator sent: revoke, assign,
// tell the coordinator.
func (m *protocolMember) reconcile(ctx context.Context, c *Consumer) error {
	m.mu.Lock()
	target, first := m.target, m.target != nil && m.owned == nil
	m.target = nil
	m.mu.Unlock()
	if target == nil {
		return nil
	}
	owned := m.currentOwned()
	revoked := minus(owned, target)
	added := minus(target, owned)
	if len(revoked) > 0 {
		if c.cfg.EnableAutoCommit {
			offsets := map[TopicPartition]OffsetAndMetadata{}
			for _, tp := range revoked {
				if ps, ok := c.byTP[tp]; ok && ps.position >= 0 {
					offsets[tp] = OffsetAndMetadata{Offset: ps.position, LeaderEpoch: -1}
				}
			}
			if err := c.commit(ctx, offsets); err != nil {
				c.logger.Warn("auto-commit before revocation failed", "err", err)
			}
		}
		m.callback(c, func(l RebalanceListener) { l.OnPartitionsRevoked(ctx, revoked) }, revoked, false)
		kept := minus(owned, revoked)
		m.setOwned(kept)
		if err := c.setAssignment(kept); err != nil {
			return err
		}
	}
	m.setOwned(target)
	if err := c.setAssignment(target); err != nil {
		return err
	}
	c.stats.rebalances.Add(1)
	m.callback(c, func(l RebalanceListener) { l.OnPartitionsAssigned(ctx, added) }, added, first)
	// Acknowledge at once: the partitions given up go to their new
	// owners with this heartbeat.
	return m.heartbeat(ctx, c, false)
}

// callback runs a listener method with the consumer released, as the
// classic member does.
func (m *protocolMember) callback(c *Consumer, f func(RebalanceListener), tps []TopicPartition, evenEmpty bool) {
	runListener(c, m.listener, f, tps, evenEmpty)
}

func (m *protocolMember) currentOwned() []TopicPartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.owned)
}

// setOwned replaces the owned partitions and returns the old ones.
func (m *protocolMember) setOwned(tps []TopicPartition) []TopicPartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.owned
	m.owned = slices.Clone(tps)
	return old
}

// heartbeat sends one ConsumerGroupHeartbeat: a full one (join,
// subscription change) or a plain one with the owned partitions, and
// takes the answer.
func (m *protocolMember) heartbeat(ctx context.Context, c *Consumer, full bool) error {
	m.hbMu.Lock()
	defer m.hbMu.Unlock()
	m.mu.Lock()
	if m.memberID == "" {
		m.memberID = newMemberID()
	}
	if !m.joined {
		m.epoch = coordinator.JoinEpoch
	}
	full = full || m.sendAll || !m.joined
	req := coordinator.ConsumerHeartbeat{GroupID: c.cfg.GroupID, MemberID: m.memberID, MemberEpoch: m.epoch,
		RebalanceTimeout: -1, ClientID: c.cfg.ClientID, ClientHost: "in-process"}
	owned := m.owned
	if m.epoch == coordinator.JoinEpoch {
		owned = nil // a joining member owns nothing
	}
	m.sendAll = false
	m.mu.Unlock()
	if full {
		req.RebalanceTimeout = c.cfg.MaxPollInterval
		req.SubscribedTopicNames = slices.Clone(m.topics)
		if req.SubscribedTopicNames == nil {
			req.SubscribedTopicNames = []string{}
		}
		if c.cfg.GroupInstanceID != "" {
			inst := c.cfg.GroupInstanceID
			req.InstanceID = &inst
		}
		if c.cfg.ClientRack != "" {
			rack := c.cfg.ClientRack
			req.RackID = &rack
		}
		if c.cfg.GroupRemoteAssignor != "" {
			a := c.cfg.GroupRemoteAssignor
			req.ServerAssignor = &a
		}
	}
	req.OwnedPartitions = m.toIDs(c, owned)
	res, err := c.coord.ConsumerGroupHeartbeat(ctx, req)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case errors.Is(err, coordinator.ErrFencedMemberEpoch), errors.Is(err, coordinator.ErrUnknownMember):
		m.lost, m.joined = true, false
		m.wakeLocked()
		return nil
	case err != nil:
		m.sendAll = m.sendAll || full
		return err
	}
	m.joined, m.epoch = true, res.MemberEpoch
	if res.HeartbeatInterval > 0 {
		m.interval = res.HeartbeatInterval
	}
	if res.Assignment != nil {
		tps := m.fromIDs(c, res.Assignment)
		if !slices.Equal(tps, m.owned) || m.owned == nil {
			m.target = tps
			m.wakeLocked()
		}
	}
	return nil
}

// toIDs names partitions by topic id, as the protocol does.
func (m *protocolMember) toIDs(c *Consumer, tps []TopicPartition) []coordinator.TopicPartitions {
	out := []coordinator.TopicPartitions{}
	for _, tp := range tps {
		id, ok := topicID(c.dir, tp.Topic)
		if !ok {
			continue
		}
		if n := len(out); n > 0 && out[n-1].TopicID == id {
			out[n-1].Partitions = append(out[n-1].Partitions, tp.Partition)
			continue
		}
		out = append(out, coordinator.TopicPartitions{TopicID: id, Partitions: []int32{tp.Partition}})
	}
	return out
}

// fromIDs names an assignment's partitions by topic name, sorted.
func (m *protocolMember) fromIDs(c *Consumer, a []coordinator.TopicPartitions) []TopicPartition {
	return namePartitions(c.dir, m.names, a)
}

// namePartitions names an assignment's partitions by topic name, sorted,
// through names (topic ids seen, filled from dir's topics when an id is
// new); partitions of topics deleted meanwhile are left out.
func namePartitions(dir *log.Dir, names map[coordinator.TopicID]string, a []coordinator.TopicPartitions) []TopicPartition {
	out := []TopicPartition{}
	for _, t := range a {
		name, ok := names[t.TopicID]
		if !ok {
			for _, n := range dir.Topics() {
				if id, ok := topicID(dir, n); ok {
					names[id] = n
				}
			}
			if name, ok = names[t.TopicID]; !ok {
				continue // deleted meanwhile
			}
		}
		for _, p := range t.Partitions {
			out = append(out, TopicPartition{Topic: name, Partition: p})
		}
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// topicID returns a topic's id as the protocol carries it.
func topicID(dir *log.Dir, topic string) (coordinator.TopicID, bool) {
	td, err := dir.DescribeTopic(topic)
	if err != nil {
		return coordinator.TopicID{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(td.ID)
	if err != nil || len(b) != 16 {
		return coordinator.TopicID{}, false
	}
	return coordinator.TopicID(b), true
}

// startHeartbeat starts the heartbeat goroutine once: every heartbeat
// interval the coordinator gives it, and whenever the coordinator says the
// group changed, it sends a heartbeat with the owned partitions; a Poll
// loop stalled past max.poll.interval.ms leaves the group, as Kafka's
// consumer does.
func (m *protocolMember) startHeartbeat(c *Consumer) {
	changes := func() <-chan struct{} { return c.coord.ConsumerGroupChanges(access.Internal{}, c.cfg.GroupID) }
	m.hb.start(func(stop <-chan struct{}) {
		// The first heartbeat goes at once: the group may have changed
		// between Poll's join and this goroutine's start, unseen.
		var changed <-chan struct{} = closedChan
		for {
			m.mu.Lock()
			interval := m.interval
			m.mu.Unlock()
			t := time.NewTimer(interval)
			// The coordinator's change signal wakes the member at once: in
			// one process, a partition moves as soon as it is free.
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			case <-changed:
				t.Stop()
			}
			changed = changes() // before the heartbeat: a change after it is seen
			m.mu.Lock()
			joined, id, epoch := m.joined, m.memberID, m.epoch
			m.mu.Unlock()
			if !joined {
				continue
			}
			if c.pollTimedOut() {
				c.logger.Warn("no Poll within max.poll.interval.ms: leaving the group; the processing between Polls took too long (raise max.poll.interval.ms or lower max.poll.records)",
					"group", c.cfg.GroupID, "member", id, "max.poll.interval.ms", c.cfg.MaxPollInterval.Milliseconds())
				_, _ = c.coord.ConsumerGroupHeartbeat(context.Background(), coordinator.ConsumerHeartbeat{GroupID: c.cfg.GroupID,
					MemberID: id, MemberEpoch: coordinator.LeaveEpoch})
				m.mu.Lock()
				if m.epoch == epoch {
					m.lost, m.joined = true, false
					m.wakeLocked()
				}
				m.mu.Unlock()
				continue
			}
			if err := m.heartbeat(context.Background(), c, false); err != nil && !errors.Is(err, log.ErrClosed) {
				c.logger.Warn("consumer group heartbeat failed", "group", c.cfg.GroupID, "member", id, "err", err)
			}
		}
	})
}

func (m *protocolMember) stopHeartbeat() { m.hb.stop() }

// leave revokes everything (committing first with auto-commit) and leaves
// the group: a static member for a while (epoch -2, its partitions wait
// for it), a dynamic one for good.
func (m *protocolMember) leave(ctx context.Context, c *Consumer) error {
	m.stopHeartbeat()
	owned := m.currentOwned()
	if len(owned) > 0 {
		if c.cfg.EnableAutoCommit {
			if err := c.commit(ctx, nil); err != nil {
				c.logger.Warn("auto-commit before leaving failed", "err", err)
			}
		}
		m.callback(c, func(l RebalanceListener) { l.OnPartitionsRevoked(ctx, owned) }, owned, false)
	}
	m.setOwned(nil)
	m.mu.Lock()
	id, joined := m.memberID, m.joined
	m.joined, m.epoch, m.target = false, 0, nil
	m.mu.Unlock()
	if joined {
		epoch := int32(coordinator.LeaveEpoch)
		var inst *string
		if c.cfg.GroupInstanceID != "" {
			epoch, inst = coordinator.StaticLeaveEpoch, &c.cfg.GroupInstanceID
		}
		_, _ = c.coord.ConsumerGroupHeartbeat(ctx, coordinator.ConsumerHeartbeat{GroupID: c.cfg.GroupID, MemberID: id,
			MemberEpoch: epoch, InstanceID: inst}) // gone already is fine
	}
	return c.setAssignment(nil)
}
