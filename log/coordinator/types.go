package coordinator

import (
	"errors"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/log"
)

// TopicPartition names a partition.
type TopicPartition = log.TopicPartition

// GroupMetadata names a member of a group as Kafka's group requests do:
// its group id, member id, generation and group.instance.id (empty for a
// dynamic member). It is log's GroupMetadata, the value a consumer hands a
// transactional producer.
type GroupMetadata = log.GroupMetadata

// OffsetAndMetadata is a committed offset.
type OffsetAndMetadata struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64 // milliseconds; set by the coordinator
}

// Errors of the group coordinator, each with the Kafka error code a
// broker answers it with.
var (
	// ErrUnknownMember (UNKNOWN_MEMBER_ID): the member id is not (or no
	// longer) in the group.
	ErrUnknownMember = errors.New("coordinator: unknown member id")
	// ErrIllegalGeneration (ILLEGAL_GENERATION): a commit, sync or
	// heartbeat from another generation.
	ErrIllegalGeneration = errors.New("coordinator: illegal generation")
	// ErrRebalanceInProgress (REBALANCE_IN_PROGRESS): the group is
	// rebalancing; rejoin.
	ErrRebalanceInProgress = errors.New("coordinator: rebalance in progress")
	// ErrInconsistentProtocol (INCONSISTENT_GROUP_PROTOCOL): the member
	// shares no protocol, or not the protocol type, with the group.
	ErrInconsistentProtocol = errors.New("coordinator: inconsistent group protocol")
	// ErrGroupNotEmpty (NON_EMPTY_GROUP): deleting a group that has
	// members.
	ErrGroupNotEmpty = errors.New("coordinator: group not empty")
	// ErrFencedInstanceID (FENCED_INSTANCE_ID): a static member's old
	// member id, after another member joined with its group.instance.id.
	ErrFencedInstanceID = errors.New("coordinator: fenced instance id")
	// ErrUnknownGroup (GROUP_ID_NOT_FOUND): no such group.
	ErrUnknownGroup = errors.New("coordinator: unknown group")
	// ErrClosed (COORDINATOR_NOT_AVAILABLE): the coordinator's Dir
	// closed. It wraps log.ErrClosed, so that a client's caller matches
	// it as the closed directory it is.
	ErrClosed = fmt.Errorf("coordinator: closed: %w", log.ErrClosed)
)

// GroupType is a group's type, as Kafka's ListGroups names it. Kafka 4
// also has "consumer" groups (KIP-848's protocol, where the coordinator
// assigns) and "share" groups; each type has its own requests and states.
type GroupType string

// The group types kafkalite serves.
const (
	// TypeClassic is the classic protocol's group: JoinGroup, SyncGroup,
	// Heartbeat and LeaveGroup, the leader's client assigning.
	TypeClassic GroupType = "classic"
)

// GroupState is a group's state, as Kafka names them. A classic group is
// in one of the states below; other group types name theirs in the same
// type.
type GroupState string

// The states of a classic group.
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

// GroupListing is a group as Kafka's ListGroups lists it.
type GroupListing struct {
	GroupID      string
	Type         GroupType
	ProtocolType string // "consumer" for consumer groups; empty before a member joined
	State        GroupState
}

// GroupDescription describes a classic group (Kafka's DescribeGroups).
type GroupDescription struct {
	GroupID      string
	Type         GroupType
	State        GroupState
	Generation   int32
	ProtocolType string // "consumer" for consumer groups
	Protocol     string // the assignor in use
	Leader       string
	Members      []MemberDescription
	Offsets      map[TopicPartition]OffsetAndMetadata
}
