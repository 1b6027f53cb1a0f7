// Package groupmember holds what a group member in the coordinator's own
// process (package consumer's) sends the group coordinator to join and
// gets back: its assignors and subscription, then its assignment and the
// signal of the next rebalance. The coordinator runs such a member's
// assignor itself, so its joins skip the SyncGroup round trip that a
// network member makes.
//
// Only this module's packages can import it, so the coordinator's
// in-process join (coordinator.GroupCoordinator.JoinInProcess) stays out of
// the coordinator's public API: a broker serves network members, whose
// JoinGroup carries encoded protocols instead.
package groupmember

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/log"
)

// Join is an in-process consumer's JoinGroup.
type Join struct {
	GroupID string
	// MemberID is the id the member chose with [NewID] (so that a join
	// cut short by its caller's context resumes as the same member), or
	// empty.
	MemberID   string
	ClientID   string
	InstanceID string // group.instance.id; empty for a dynamic member
	Topics     []string
	// Owned and OwnedGeneration are the partitions the member holds now
	// and the generation it got them in (the cooperative protocol and the
	// sticky assignors use them).
	Owned           []log.TopicPartition
	OwnedGeneration int32
	// Assignors in the member's order of preference
	// (partition.assignment.strategy).
	Assignors        []assignor.Assignor
	SessionTimeout   time.Duration // session.timeout.ms
	RebalanceTimeout time.Duration // max.poll.interval.ms
}

// Joined is the outcome of a rebalance for an in-process member.
type Joined struct {
	MemberID   string
	Generation int32
	Protocol   string // the assignor the group chose
	Leader     string
	// Assignment is the member's partitions in the new generation. With a
	// cooperative assignor, partitions moving away from their owner are in
	// no one's assignment this generation; the owner revokes them and
	// rejoins, and a second rebalance assigns them.
	Assignment []log.TopicPartition
	// Cooperative is the rebalance protocol every assignor of the member
	// supports, as Kafka's ConsumerCoordinator decides it.
	Cooperative bool
	// RebalanceStarts is closed when the group's next rebalance starts:
	// the member must rejoin.
	RebalanceStarts <-chan struct{}
}

// NewID makes a member id as Kafka does: the client id (a static member's
// group.instance.id) and a UUID's worth of random hex.
func NewID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return clientID + "-" + hex.EncodeToString(b[:])
}
