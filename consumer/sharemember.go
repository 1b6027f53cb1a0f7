package consumer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
)

// shareMember is a ShareConsumer's side of its share group: Kafka's
// ShareMembershipManager. It joins with ShareGroupHeartbeat, heartbeats
// from a goroutine of its own at the coordinator's interval, and takes the
// assignment the coordinator sends as it comes: a share group's members
// read partitions together, so there is nothing to revoke first. A member
// the coordinator fenced or forgot joins again under its id at epoch 0,
// as Kafka's share consumer does.
type shareMember struct {
	c *ShareConsumer

	// hbMu serialises heartbeats (Poll's and the goroutine's), so that
	// each is sent with the epoch the one before it answered.
	hbMu sync.Mutex

	mu       sync.Mutex // protects the fields below (the heartbeat goroutine shares them)
	topics   []string
	memberID string
	epoch    int32
	joined   bool
	// sendTopics makes the next heartbeat carry the subscription.
	sendTopics bool
	assigned   []TopicPartition
	// signal is closed when the assignment changes.
	signal   chan struct{}
	interval time.Duration
	names    map[coordinator.TopicID]string

	hb heartbeater
}

func newShareMember(c *ShareConsumer) *shareMember {
	return &shareMember{c: c, memberID: newMemberID(), signal: make(chan struct{}), interval: time.Second,
		names: map[coordinator.TopicID]string{}}
}

func (m *shareMember) setTopics(topics []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topics = slices.Clone(topics)
	slices.Sort(m.topics)
	m.topics = slices.Compact(m.topics)
	m.sendTopics = true
}

func (m *shareMember) subscription() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.topics)
}

func (m *shareMember) id() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// assignment returns the partitions the group assigns the member now.
func (m *shareMember) assignment() []TopicPartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.assigned
}

// changed returns a channel closed at the next change of the assignment.
func (m *shareMember) changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.signal
}

// ensureJoined joins the group, or sends a subscription change, from
// Poll, and starts the heartbeat goroutine.
func (m *shareMember) ensureJoined(ctx context.Context) error {
	m.mu.Lock()
	due := !m.joined || m.sendTopics
	m.mu.Unlock()
	if due {
		if err := m.heartbeat(ctx); err != nil {
			return err
		}
	}
	m.startHeartbeat()
	return nil
}

// heartbeat sends one ShareGroupHeartbeat and takes the answer.
func (m *shareMember) heartbeat(ctx context.Context) error {
	m.hbMu.Lock()
	defer m.hbMu.Unlock()
	c := m.c
	m.mu.Lock()
	if !m.joined {
		m.epoch = coordinator.JoinEpoch
	}
	req := coordinator.ShareHeartbeat{GroupID: c.cfg.GroupID, MemberID: m.memberID, MemberEpoch: m.epoch,
		ClientID: c.cfg.ClientID, ClientHost: "in-process"}
	full := !m.joined || m.sendTopics
	if full {
		req.SubscribedTopicNames = slices.Clone(m.topics)
		if c.cfg.ClientRack != "" {
			rack := c.cfg.ClientRack
			req.RackID = &rack
		}
	}
	m.sendTopics = false
	m.mu.Unlock()
	res, err := c.coord.ShareGroupHeartbeat(ctx, req)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case errors.Is(err, coordinator.ErrFencedMemberEpoch), errors.Is(err, coordinator.ErrUnknownMember):
		// The coordinator gave our records back; join again.
		c.logger.Info("share group member fenced; joining again", "group", c.cfg.GroupID, "member", m.memberID, "err", err)
		m.joined, m.sendTopics = false, true
		m.setAssignedLocked(nil)
		return nil
	case err != nil:
		m.sendTopics = m.sendTopics || full
		return err
	}
	m.joined, m.epoch = true, res.MemberEpoch
	if res.MemberID != "" {
		m.memberID = res.MemberID
	}
	if res.HeartbeatInterval > 0 {
		m.interval = res.HeartbeatInterval
	}
	// Every answer carries the member's whole assignment.
	m.setAssignedLocked(namePartitions(c.dir, m.names, res.Assignment))
	return nil
}

// setAssignedLocked replaces the assignment and wakes a waiting Poll if it
// changed. REQUIRES m.mu held.
func (m *shareMember) setAssignedLocked(tps []TopicPartition) {
	if slices.Equal(tps, m.assigned) {
		return
	}
	m.assigned = tps
	close(m.signal)
	m.signal = make(chan struct{})
}

// startHeartbeat starts the heartbeat goroutine once: a heartbeat every
// interval the coordinator gives, until leave stops it.
func (m *shareMember) startHeartbeat() {
	m.hb.start(func(stop <-chan struct{}) {
		for {
			m.mu.Lock()
			interval := m.interval
			m.mu.Unlock()
			t := time.NewTimer(interval)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
			if err := m.heartbeat(context.Background()); err != nil && !errors.Is(err, log.ErrClosed) {
				m.c.logger.Warn("share group heartbeat failed", "group", m.c.cfg.GroupID, "member", m.id(), "err", err)
			}
		}
	})
}

// leave stops the heartbeat goroutine, leaves the group (epoch -1) and
// gives back every record the member holds.
func (m *shareMember) leave(ctx context.Context) error {
	m.hb.stop()
	m.hbMu.Lock()
	defer m.hbMu.Unlock()
	c := m.c
	m.mu.Lock()
	id, joined := m.memberID, m.joined
	m.joined = false
	m.setAssignedLocked(nil)
	m.mu.Unlock()
	var errs []error
	if joined {
		_, err := c.coord.ShareGroupHeartbeat(ctx, coordinator.ShareHeartbeat{GroupID: c.cfg.GroupID, MemberID: id,
			MemberEpoch: coordinator.LeaveEpoch})
		if err != nil && !errors.Is(err, coordinator.ErrUnknownMember) && !errors.Is(err, coordinator.ErrFencedMemberEpoch) {
			errs = append(errs, err) // gone already is fine
		}
	}
	// The coordinator releases a leaving member's records; this covers a
	// member it had dropped already, whose records a lock still holds.
	errs = append(errs, c.parts.ReleaseMember(ctx, c.cfg.GroupID, id))
	return errors.Join(errs...)
}
