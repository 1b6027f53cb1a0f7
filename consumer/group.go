package consumer

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/groupmember"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
)

// RebalanceListener hears about partitions moving, as Kafka's
// ConsumerRebalanceListener: its methods run inside Poll (or Close,
// Unsubscribe), on the goroutine that called it, and may call the
// consumer (CommitSync in OnPartitionsRevoked is the classic use).
//
//   - OnPartitionsRevoked: the partitions are about to go to another
//     member. Eager protocol: all of them, at the start of every
//     rebalance after the first join, even when the member holds none;
//     cooperative: only those that move, and only if some do. Commit their
//     progress here.
//   - OnPartitionsAssigned: after every rebalance, with the partitions
//     newly assigned (cooperative: only the added ones), even when that
//     set is empty, as Kafka guarantees.
//   - OnPartitionsLost: the member was dropped from the group (its session
//     timed out, or it stopped polling for max.poll.interval.ms) while it
//     held partitions; they may already be someone else's, so do not
//     commit them.
type RebalanceListener interface {
	OnPartitionsRevoked(ctx context.Context, partitions []TopicPartition)
	OnPartitionsAssigned(ctx context.Context, partitions []TopicPartition)
	OnPartitionsLost(ctx context.Context, partitions []TopicPartition)
}

// RebalanceFuncs is a [RebalanceListener] made of functions, for a listener
// that needs only some of the three: a nil Revoked or Assigned does
// nothing, and a nil Lost calls Revoked, as the default onPartitionsLost
// of Kafka's ConsumerRebalanceListener does.
type RebalanceFuncs struct {
	Revoked  func(ctx context.Context, partitions []TopicPartition)
	Assigned func(ctx context.Context, partitions []TopicPartition)
	Lost     func(ctx context.Context, partitions []TopicPartition)
}

// OnPartitionsRevoked calls f.Revoked, if set.
func (f RebalanceFuncs) OnPartitionsRevoked(ctx context.Context, partitions []TopicPartition) {
	if f.Revoked != nil {
		f.Revoked(ctx, partitions)
	}
}

// OnPartitionsAssigned calls f.Assigned, if set.
func (f RebalanceFuncs) OnPartitionsAssigned(ctx context.Context, partitions []TopicPartition) {
	if f.Assigned != nil {
		f.Assigned(ctx, partitions)
	}
}

// OnPartitionsLost calls f.Lost, or f.Revoked when Lost is nil.
func (f RebalanceFuncs) OnPartitionsLost(ctx context.Context, partitions []TopicPartition) {
	switch {
	case f.Lost != nil:
		f.Lost(ctx, partitions)
	case f.Revoked != nil:
		f.Revoked(ctx, partitions)
	}
}

// membership is the consumer's side of its group: Kafka's
// ConsumerCoordinator.
type membership struct {
	c        *Consumer
	topics   []string
	re       *regexp.Regexp
	listener RebalanceListener
	counts   map[string]int32 // partition counts seen for the subscribed topics

	mu          sync.Mutex // protects the fields below (the heartbeat goroutine shares them)
	memberID    string
	generation  int32
	cooperative bool
	joined      bool
	rejoin      bool
	lost        bool
	rejoinCh    chan struct{} // closed when a rejoin becomes due
	// rebalanceStarts is the coordinator's signal that the group's next
	// rebalance started (nil: none to wait for): the heartbeat goroutine
	// wakes on it, so that the member rejoins at once instead of at its
	// next heartbeat.
	rebalanceStarts <-chan struct{}
	// startsChanged wakes the heartbeat goroutine when a join replaced
	// rebalanceStarts, so that it waits on the new signal (one slot).
	startsChanged chan struct{}
	hb            heartbeater

	owned      []TopicPartition
	lastCommit time.Time
}

func newMembership(c *Consumer) *membership {
	return &membership{c: c, generation: -1, rejoinCh: make(chan struct{}), startsChanged: make(chan struct{}, 1), lastCommit: c.now()}
}

func (m *membership) setSubscription(topics []string, re *regexp.Regexp, l RebalanceListener) {
	m.topics, m.re, m.listener = slices.Clone(topics), re, l
	slices.Sort(m.topics)
	m.markRejoin(false)
}

func (m *membership) identity() (string, int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID, m.generation
}

// markRejoin makes the next Poll rejoin (lost: the member was dropped).
func (m *membership) markRejoin(lost bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lost = m.lost || lost
	if !m.rejoin {
		m.rejoin = true
		close(m.rejoinCh)
	}
}

// rejoinNeeded returns a channel closed when a rejoin becomes due.
func (m *membership) rejoinNeeded() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rejoinCh
}

// poll runs the group's part of Poll: refresh the subscription, rejoin if
// due, auto-commit if due.
func (m *membership) poll(ctx context.Context, c *Consumer) error {
	m.refreshTopics(c)
	m.mu.Lock()
	due := m.rejoin || !m.joined
	m.mu.Unlock()
	if due {
		if err := m.join(ctx, c); err != nil {
			return err
		}
	}
	if c.cfg.EnableAutoCommit && c.now().Sub(m.lastCommit) >= c.cfg.AutoCommitInterval {
		m.autoCommit(ctx, c)
	}
	return nil
}

// refreshTopics resolves a pattern subscription and notices partition count
// changes; either makes the member rejoin.
func (m *membership) refreshTopics(c *Consumer) {
	topics := m.topics
	if m.re != nil {
		topics = nil
		for _, t := range c.dir.Topics() {
			if m.re.MatchString(t) && !(c.cfg.ExcludeInternalTopics && log.IsInternalTopic(t)) {
				topics = append(topics, t)
			}
		}
	}
	counts := map[string]int32{}
	for _, t := range topics {
		if d, err := c.dir.DescribeTopic(t); err == nil {
			counts[t] = d.Partitions
		}
	}
	changed := len(counts) != len(m.counts)
	for t, n := range counts {
		if m.counts[t] != n {
			changed = true
		}
	}
	if m.re != nil {
		m.topics = topics
	}
	if changed {
		known := m.counts != nil
		m.counts = counts
		m.markRejoin(false)
		if known {
			// The metadata changed under a stable group: ask for a
			// rebalance (a plain rejoin would get the current assignment).
			c.coord.RequestRebalance(access.Internal{}, c.cfg.GroupID)
		}
	}
}

// join rejoins the group and applies the new assignment, running the
// listener as Kafka's ConsumerCoordinator does for the chosen protocol.
func (m *membership) join(ctx context.Context, c *Consumer) error {
	m.mu.Lock()
	lost := m.lost
	m.lost = false
	m.mu.Unlock()
	if lost {
		// Dropped by the group: the partitions are no longer ours.
		owned := m.owned
		m.owned = nil
		if err := c.setAssignment(nil); err != nil {
			return err
		}
		m.callback(ctx, c, func(l RebalanceListener) { l.OnPartitionsLost(ctx, owned) }, owned, false)
		m.mu.Lock()
		m.memberID, m.generation = "", -1
		m.mu.Unlock()
	}
	// The partitions held before this rebalance: cooperative members keep
	// them while rejoining; eager members revoke them first but still send
	// them, so that the sticky assignor can keep them in place (as Kafka's
	// StickyAssignor sends its previous assignment).
	previous := m.owned
	m.mu.Lock()
	member := m.generation >= 0
	m.mu.Unlock()
	if !m.cooperative && member {
		// Eager: revoke everything at the start of every rebalance but
		// the first join, even nothing (Kafka's onJoinPrepare).
		m.revoke(ctx, c, m.owned, true)
	}
	for {
		m.mu.Lock()
		m.rejoin = false
		m.rejoinCh = make(chan struct{})
		if m.memberID == "" {
			// The member names itself, so that a join cut short by Poll's
			// context resumes as the same member.
			m.memberID = groupmember.NewID(c.cfg.ClientID)
		}
		id, gen := m.memberID, m.generation
		m.mu.Unlock()
		req := groupmember.Join{GroupID: c.cfg.GroupID, MemberID: id, ClientID: c.cfg.ClientID,
			InstanceID: c.cfg.GroupInstanceID, Topics: m.topics, OwnedGeneration: gen,
			Assignors: c.cfg.PartitionAssignmentStrategy, SessionTimeout: c.cfg.SessionTimeout,
			RebalanceTimeout: c.cfg.MaxPollInterval, Owned: slices.Clone(previous)}
		res, err := c.coord.JoinInProcess(access.Internal{}, ctx, req)
		switch {
		case errors.Is(err, coordinator.ErrUnknownMember):
			m.mu.Lock()
			m.memberID, m.generation = "", -1
			m.mu.Unlock()
			continue
		case errors.Is(err, coordinator.ErrRebalanceInProgress):
			continue
		case err != nil:
			m.markRejoin(false)
			return err
		}
		c.stats.rebalances.Add(1)
		m.mu.Lock()
		m.memberID, m.generation, m.cooperative, m.joined = res.MemberID, res.Generation, res.Cooperative, true
		m.rebalanceStarts = res.RebalanceStarts
		m.mu.Unlock()
		select {
		case m.startsChanged <- struct{}{}:
		default: // a wake-up is already pending
		}
		assigned := res.Assignment // the coordinator's copy, ours to keep
		revoked := minus(m.owned, assigned)
		added := minus(assigned, m.owned)
		if len(revoked) > 0 {
			// Cooperative: give up only what moves, then ask for the
			// follow-up rebalance that hands it to its new owner.
			m.revoke(ctx, c, revoked, false)
			c.coord.RequestRebalance(access.Internal{}, c.cfg.GroupID)
			m.markRejoin(false)
		}
		if err := c.setAssignment(assigned); err != nil {
			return err
		}
		m.owned = assigned
		m.callback(ctx, c, func(l RebalanceListener) { l.OnPartitionsAssigned(ctx, added) }, added, true)
		m.startHeartbeat(c)
		return nil
	}
}

// revoke commits (with auto-commit) and revokes partitions; the listener
// hears of it even for none when evenEmpty is set.
func (m *membership) revoke(ctx context.Context, c *Consumer, tps []TopicPartition, evenEmpty bool) {
	if c.cfg.EnableAutoCommit {
		offsets := map[TopicPartition]OffsetAndMetadata{}
		for _, tp := range tps {
			if ps, ok := c.byTP[tp]; ok && ps.position >= 0 {
				offsets[tp] = OffsetAndMetadata{Offset: ps.position, LeaderEpoch: -1}
			}
		}
		if err := c.commit(ctx, offsets); err != nil {
			c.logger.Warn("auto-commit before revocation failed", "err", err)
		}
	}
	m.callback(ctx, c, func(l RebalanceListener) { l.OnPartitionsRevoked(ctx, tps) }, tps, evenEmpty)
	m.owned = minus(m.owned, tps)
	if err := c.setAssignment(m.owned); err != nil {
		c.logger.Warn("dropping revoked partitions failed", "err", err)
	}
}

// callback runs a listener method with the consumer released, so that the
// listener may call it (CommitSync, Seek, Position...); with no partitions
// only if evenEmpty.
func (m *membership) callback(_ context.Context, c *Consumer, f func(RebalanceListener), tps []TopicPartition, evenEmpty bool) {
	runListener(c, m.listener, f, tps, evenEmpty)
}

// runListener runs a listener method with the consumer released, so that
// the listener may call it (CommitSync, Seek, Position...); with no
// partitions only if evenEmpty.
func runListener(c *Consumer, l RebalanceListener, f func(RebalanceListener), tps []TopicPartition, evenEmpty bool) {
	if l == nil || (len(tps) == 0 && !evenEmpty) {
		return
	}
	c.exit()
	defer c.inUse.Store(1) // the caller (Poll, Close...) holds the consumer again
	f(l)
}

func (m *membership) autoCommit(ctx context.Context, c *Consumer) {
	m.lastCommit = c.now()
	if err := c.commit(ctx, nil); err != nil {
		c.logger.Warn("auto-commit failed", "err", err)
	}
}

// startHeartbeat starts the heartbeat goroutine once: every
// heartbeat.interval.ms it tells the coordinator the member lives, and
// notices a rebalance (rejoin at the next Poll), a drop (partitions lost)
// or a Poll loop that stalled past max.poll.interval.ms (the member leaves,
// as Kafka's heartbeat thread makes it).
func (m *membership) startHeartbeat(c *Consumer) {
	m.hb.start(func(stop <-chan struct{}) {
		t := time.NewTicker(c.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			m.mu.Lock()
			started := m.rebalanceStarts
			m.mu.Unlock()
			select {
			case <-stop:
				return
			case <-m.startsChanged:
				continue // wait on the new signal
			case <-t.C:
			case <-started:
				// A rebalance started: heartbeat now, which tells the
				// member to rejoin, and wait for the next signal, which
				// the rejoin brings.
				m.clearRebalanceStarts(started)
			}
			id, gen := m.identity()
			if id == "" {
				continue
			}
			if c.pollTimedOut() {
				c.logger.Warn("no Poll within max.poll.interval.ms: leaving the group; the processing between Polls took too long (raise max.poll.interval.ms or lower max.poll.records)",
					"group", c.cfg.GroupID, "member", id, "max.poll.interval.ms", c.cfg.MaxPollInterval.Milliseconds())
				_ = c.coord.LeaveGroup(coordinator.GroupMetadata{GroupID: c.cfg.GroupID, MemberID: id}) // gone already is fine
				m.markRejoin(true)
				continue
			}
			err := c.coord.Heartbeat(coordinator.GroupMetadata{GroupID: c.cfg.GroupID, MemberID: id, GenerationID: gen})
			switch {
			case err == nil:
				next := c.coord.RebalanceStarts(access.Internal{}, c.cfg.GroupID, gen)
				m.mu.Lock()
				if m.rebalanceStarts == nil && m.generation == gen {
					m.rebalanceStarts = next
				}
				m.mu.Unlock()
			case errors.Is(err, coordinator.ErrUnknownMember):
				m.markRejoin(true)
			default:
				m.markRejoin(false)
			}
		}
	})
}

// clearRebalanceStarts forgets the rebalance signal ch, unless a join
// replaced it meanwhile.
func (m *membership) clearRebalanceStarts(ch <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rebalanceStarts == ch {
		m.rebalanceStarts = nil
	}
}

func (m *membership) stopHeartbeat() { m.hb.stop() }

// heartbeater is a member's heartbeat goroutine: started once, stopped
// and waited for by stop (Close, Unsubscribe, a leave).
type heartbeater struct {
	mu     sync.Mutex
	stopCh chan struct{}
	done   chan struct{}
}

// start runs loop on a goroutine of its own unless one runs; loop returns
// when stop is closed.
func (h *heartbeater) start(loop func(stop <-chan struct{})) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopCh != nil {
		return
	}
	h.stopCh, h.done = make(chan struct{}), make(chan struct{})
	stop, done := h.stopCh, h.done
	go func() {
		defer close(done)
		loop(stop)
	}()
}

// stop stops the goroutine, if one runs, and waits for it.
func (h *heartbeater) stop() {
	h.mu.Lock()
	stop, done := h.stopCh, h.done
	h.stopCh, h.done = nil, nil
	h.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// leave commits (with auto-commit), revokes everything and leaves.
func (m *membership) leave(ctx context.Context, c *Consumer) error {
	m.stopHeartbeat()
	if len(m.owned) > 0 {
		m.revoke(ctx, c, m.owned, false)
	}
	id, _ := m.identity()
	if id != "" {
		_ = c.coord.LeaveGroup(coordinator.GroupMetadata{GroupID: c.cfg.GroupID, MemberID: id}) // gone already is fine
	}
	m.mu.Lock()
	m.memberID, m.generation, m.joined = "", -1, false
	m.mu.Unlock()
	return nil
}

// minus returns the partitions of a not in b.
func minus(a, b []TopicPartition) []TopicPartition {
	var out []TopicPartition
	for _, tp := range a {
		if !slices.Contains(b, tp) {
			out = append(out, tp)
		}
	}
	return out
}
