// Package coordinator is the broker side of consumer groups, attached to an
// open log.Dir: Kafka's GroupCoordinator for the classic protocol. It keeps
// each group's members, generation and assignment, runs rebalances, fences
// stale members, and stores committed offsets and group metadata in the
// internal topic __consumer_offsets in Kafka's schemas, so that a Kafka tool
// reading the directory sees the same groups.
//
// Kafka splits a rebalance between the broker (membership, generations) and
// the group leader's client (the assignment, with the leader's own
// assignor). Members are in-process consumers or network clients (a wire
// server's JoinGroup and SyncGroup), in one group alike. When the leader is
// an in-process consumer, the coordinator runs its assignor at the end of
// the join phase, over every member's subscription (a network member's
// decoded from the metadata it sent): client and coordinator are one
// process, so the SyncGroup round trip is skipped. When the leader is a
// network client, the group waits in CompletingRebalance for its SyncGroup
// ([Coordinator.Sync]) with every member's assignment, as Kafka's does, and
// in-process members take theirs from it.
//
// # Transactions
//
// [TxnCoordinator] is Kafka's TransactionCoordinator (transaction version
// 1: the epoch is bumped by InitProducerID and when a transaction is
// fenced, not at every transaction's end). It stores each transactional
// id's state in __transaction_state in Kafka's schema (version 0 values),
// durably before answering, and ends a transaction synchronously:
// PrepareCommit or PrepareAbort, a COMMIT or ABORT marker in every
// partition of the transaction (fsynced), then CompleteCommit or
// CompleteAbort. A crash between the two is repaired when the coordinator
// loads: prepared transactions are completed again. Offsets committed in a
// transaction ([Coordinator.TxnCommit]) are written to __consumer_offsets
// in transactional batches of the producer and stay pending until the
// marker: the transaction coordinator hands each marker it writes to
// __consumer_offsets to the group coordinator, and the group coordinator's
// load replays the markers it finds.
//
// # Expiry
//
// Every offsets.retention.check.interval.ms the group coordinator expires
// offsets and empty groups as Kafka's does: an Empty group that had
// members loses its offsets offsets.retention.minutes after it became
// empty, a group of commits only each offset that long after its commit,
// a Stable consumer group the offsets of topics no member subscribes to;
// offsets with a transactional commit pending stay; an Empty group left
// without offsets is deleted. Tombstones record it in __consumer_offsets.
// Between those passes its goroutine looks only at the groups with a
// deadline due (sessions, rebalances), from a heap: idle groups cost
// nothing. Clients create no group beyond log.Config.GroupMaxCount
// ([ErrGroupMaxCount]).
//
// # Lock order
//
// A lock may be taken while holding the ones above it; neither coordinator
// calls back into the other while holding its own mutex.
//
//  1. a transactional id's lock (txnMeta.sem, one-slot semaphore): held for
//     a whole call on the id — state writes to __transaction_state, marker
//     writes and their fsyncs, and TxnCommit's write to __consumer_offsets
//  2. TxnCoordinator.mu (the map of transactional ids and their states;
//     never held while calling a Log or the group coordinator)
//  3. a group's commit lock (group.commitMu, one-slot semaphore)
//  4. Coordinator.mu (groups, pending transactional offsets)
//  5. the log's locks (Log.mu and below, DESIGN.md)
//
// Dir.svcMu (taken by Transactions and For) is above all of these and is
// never taken while holding one of them.
package coordinator

import (
	"errors"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/log"
)

// TopicPartition names a partition.
type TopicPartition = log.TopicPartition

// OffsetAndMetadata is a committed offset.
type OffsetAndMetadata struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64 // milliseconds; set by the coordinator
}

// Errors, as Kafka's group error codes.
var (
	// ErrUnknownMember: the member id is not (or no longer) in the group.
	ErrUnknownMember = errors.New("coordinator: unknown member id")
	// ErrIllegalGeneration: a commit or heartbeat from another generation.
	ErrIllegalGeneration = errors.New("coordinator: illegal generation")
	// ErrRebalanceInProgress: the group is rebalancing; rejoin.
	ErrRebalanceInProgress = errors.New("coordinator: rebalance in progress")
	// ErrInconsistentProtocol: the member shares no assignor with the group.
	ErrInconsistentProtocol = errors.New("coordinator: inconsistent group protocol")
	// ErrGroupNotEmpty: deleting or resetting a group that has members.
	ErrGroupNotEmpty = errors.New("coordinator: group not empty")
	// ErrFencedInstanceID: a static member's old member id, after another
	// member joined with its group.instance.id.
	ErrFencedInstanceID = errors.New("coordinator: fenced instance id")
	// ErrUnknownGroup: no such group.
	ErrUnknownGroup = errors.New("coordinator: unknown group")
	// ErrClosed: the coordinator's Dir closed. It wraps log.ErrClosed, so
	// that a client's caller matches it as the closed directory it is.
	ErrClosed = fmt.Errorf("coordinator: closed: %w", log.ErrClosed)
)

// GroupState is a classic group's state, as Kafka names them.
type GroupState string

const (
	StateEmpty               GroupState = "Empty"
	StatePreparingRebalance  GroupState = "PreparingRebalance"
	StateCompletingRebalance GroupState = "CompletingRebalance"
	StateStable              GroupState = "Stable"
	StateDead                GroupState = "Dead"
)

// MemberDescription describes a member.
type MemberDescription struct {
	MemberID, ClientID, InstanceID string
	// ClientHost is a network member's address ("/127.0.0.1"), or
	// "in-process".
	ClientHost    string
	Topics        []string
	Assignment    []TopicPartition
	LastHeartbeat time.Time
	// Metadata is the member's metadata for the group's protocol (a
	// ConsumerProtocolSubscription in a consumer group), as DescribeGroups
	// gives it.
	Metadata []byte
	// AssignmentBytes is the member's assignment as its leader made it
	// (a ConsumerProtocolAssignment in a consumer group).
	AssignmentBytes []byte
}

// GroupDescription describes a group.
type GroupDescription struct {
	GroupID      string
	State        GroupState
	Generation   int32
	ProtocolType string // "consumer" for consumer groups
	Protocol     string // the assignor in use
	Leader       string
	Members      []MemberDescription
	Offsets      map[TopicPartition]OffsetAndMetadata
}
