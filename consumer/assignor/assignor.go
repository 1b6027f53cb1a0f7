package assignor

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kafkalite/kafkalite/log"
)

// TopicPartition names one partition of a topic: [log.TopicPartition]
// under the assignor's name.
type TopicPartition = log.TopicPartition

// compareTopicPartitions orders by topic (Java String order), then
// partition: Kafka's TopicPartitionComparator.
func compareTopicPartitions(a, b TopicPartition) int {
	if c := javaCompare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmpInt(int(a.Partition), int(b.Partition))
}

// Member is one group member as the leader sees it in a JoinGroup response:
// Kafka's member id plus the ConsumerPartitionAssignor.Subscription it sent.
type Member struct {
	// ID is the member id the group coordinator gave the member. Must be
	// non-empty and unique in the group.
	ID string
	// InstanceID is group.instance.id, "" for a dynamic member. Range and
	// round robin order members by it (static members first, by instance
	// id, then dynamic members by member id: Kafka's MemberInfo order), so
	// a static member keeps its partitions across restarts that change its
	// member id. Non-empty instance ids must be unique.
	InstanceID string
	// Topics is the member's subscription. Order and duplicates do not
	// matter.
	Topics []string
	// OwnedPartitions are the partitions the member had in generation
	// Generation. The sticky assignors keep them where balance allows;
	// cooperative-sticky also withholds any of them that must move (see the
	// package documentation). For "cooperative-sticky" this is Kafka's
	// Subscription.ownedPartitions; for "sticky" it is the previous
	// assignment Kafka's StickyAssignor carries in its user data (an eager
	// member has revoked everything before it joins, so pass the previous
	// assignment anyway). Range and round robin ignore it. Partitions of
	// topics or numbers that do not exist are ignored.
	OwnedPartitions []TopicPartition
	// Generation is the generation OwnedPartitions are from, or any negative
	// value (Kafka's DEFAULT_GENERATION, -1) when unknown. When several
	// members claim a partition, the highest generation keeps it; a tie
	// makes no one keep it.
	Generation int32
	// RackID is client.rack, "" for none. Kafka's rack-aware assignment
	// (KIP-881) applies only when partition replicas sit on racks; the
	// partition counts given to Assign carry no replica placement (in
	// process every partition is local to every member), which is the case
	// in which Kafka assigns without racks too. The field is carried for
	// completeness and does not affect any assignment.
	RackID string
}

// Protocol is a rebalance protocol (Kafka's
// ConsumerPartitionAssignor.RebalanceProtocol). The values are Kafka's ids.
type Protocol int8

const (
	// Eager: every member revokes all its partitions before it rejoins,
	// so an assignment may move any partition at once.
	Eager Protocol = 0
	// Cooperative: members keep their partitions while they rejoin; an
	// assignment must not give a partition to a new owner while another
	// member still owns it. The owner revokes it and rejoins, and the next
	// rebalance assigns it (KIP-429).
	Cooperative Protocol = 1
)

// String returns Kafka's enum name: "EAGER" or "COOPERATIVE".
func (p Protocol) String() string {
	switch p {
	case Eager:
		return "EAGER"
	case Cooperative:
		return "COOPERATIVE"
	}
	return fmt.Sprintf("Protocol(%d)", int8(p))
}

// Assignor splits the partitions of the topics a group subscribes to among
// its members: Kafka's ConsumerPartitionAssignor, run by the group leader.
type Assignor interface {
	// Name is the assignor's protocol name, the name members list in
	// JoinGroup and the group coordinator votes on: "range", "roundrobin",
	// "sticky", "cooperative-sticky" for the built-ins.
	Name() string
	// Protocols returns the rebalance protocols the assignor supports.
	Protocols() []Protocol
	// Assign returns each member's partitions. partitionsPerTopic holds the
	// partition count of each topic; topics that no member subscribes to,
	// or with no partitions, are ignored, and a member subscribed to a
	// topic missing from the map gets none of it. members should be in the
	// order the group coordinator lists them (see the package
	// documentation on Kafka's tie-breaks). The result has an entry, never
	// nil, for every member, partitions sorted by topic then partition.
	// Assign neither keeps nor modifies its arguments.
	Assign(partitionsPerTopic map[string]int32, members []Member) (map[string][]TopicPartition, error)
}

// Protocol names of the built-in assignors.
const (
	RangeName             = "range"
	RoundRobinName        = "roundrobin"
	StickyName            = "sticky"
	CooperativeStickyName = "cooperative-sticky"
)

// Kafka's class names of the built-in assignors, as
// partition.assignment.strategy lists them.
const (
	RangeClass             = "org.apache.kafka.clients.consumer.RangeAssignor"
	RoundRobinClass        = "org.apache.kafka.clients.consumer.RoundRobinAssignor"
	StickyClass            = "org.apache.kafka.clients.consumer.StickyAssignor"
	CooperativeStickyClass = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
)

// Sentinel errors. Compare with [errors.Is]; returned errors wrap them with
// the details.
var (
	// ErrUnknownAssignor means [ByName] or [ByClassName] was given a name
	// of no built-in assignor.
	ErrUnknownAssignor = errors.New("assignor: unknown assignor")
	// ErrInvalidMember means Assign was given an empty or repeated member
	// id, or a repeated group.instance.id.
	ErrInvalidMember = errors.New("assignor: invalid member")
	// ErrInvalidPartitionCount means Assign was given a negative partition
	// count.
	ErrInvalidPartitionCount = errors.New("assignor: invalid partition count")
	// ErrNoCommonProtocol means [RebalanceProtocol] was given no assignors,
	// or assignors that support no rebalance protocol in common.
	ErrNoCommonProtocol = errors.New("assignor: no commonly supported rebalance protocol")
	// ErrInconsistentGroupProtocol means [SelectProtocol] found no assignor
	// every member supports (Kafka's INCONSISTENT_GROUP_PROTOCOL), or was
	// given no members.
	ErrInconsistentGroupProtocol = errors.New("assignor: inconsistent group protocol")
	// ErrInternal means an assignment broke an invariant of Kafka's
	// algorithm (where Kafka throws IllegalStateException). It indicates a
	// bug.
	ErrInternal = errors.New("assignor: internal error")
)

// kind is a built-in algorithm.
type kind uint8

const (
	kindRange kind = iota + 1
	kindRoundRobin
	kindSticky
	kindCooperativeSticky
)

// builtin is every built-in assignor; kind says which. Values are stateless
// and safe for concurrent use. (Kafka's AbstractStickyAssignor keeps the
// highest generation it ever saw across calls; these compute everything per
// call.)
type builtin struct {
	kind kind
}

// Range returns Kafka's RangeAssignor ("range"; Eager): per topic, the
// members subscribed to it split its partitions into contiguous ranges.
func Range() Assignor { return &builtin{kindRange} }

// RoundRobin returns Kafka's RoundRobinAssignor ("roundrobin"; Eager): all
// partitions, by topic then partition, dealt to the members in turn.
func RoundRobin() Assignor { return &builtin{kindRoundRobin} }

// Sticky returns Kafka's StickyAssignor ("sticky"; Eager): balanced, and
// keeping as many partitions as possible with their previous owners.
func Sticky() Assignor { return &builtin{kindSticky} }

// CooperativeSticky returns Kafka's CooperativeStickyAssignor
// ("cooperative-sticky"; Cooperative and Eager): the sticky assignment,
// with partitions that change owner withheld for one rebalance.
func CooperativeSticky() Assignor { return &builtin{kindCooperativeSticky} }

// ByName returns a new built-in assignor by protocol name: "range",
// "roundrobin", "sticky" or "cooperative-sticky". Surrounding white space
// is ignored. Other names fail with [ErrUnknownAssignor].
func ByName(name string) (Assignor, error) {
	switch strings.TrimSpace(name) {
	case RangeName:
		return Range(), nil
	case RoundRobinName:
		return RoundRobin(), nil
	case StickyName:
		return Sticky(), nil
	case CooperativeStickyName:
		return CooperativeSticky(), nil
	}
	return nil, fmt.Errorf("%w: protocol name %q (known: %s, %s, %s, %s)", ErrUnknownAssignor, name,
		RangeName, RoundRobinName, StickyName, CooperativeStickyName)
}

// ByClassName returns a new built-in assignor by Kafka class name, as a
// partition.assignment.strategy entry names it: [RangeClass],
// [RoundRobinClass], [StickyClass] or [CooperativeStickyClass].
// Surrounding white space is ignored, as Kafka's ConfigDef trims. Other
// names fail with [ErrUnknownAssignor].
func ByClassName(name string) (Assignor, error) {
	switch strings.TrimSpace(name) {
	case RangeClass:
		return Range(), nil
	case RoundRobinClass:
		return RoundRobin(), nil
	case StickyClass:
		return Sticky(), nil
	case CooperativeStickyClass:
		return CooperativeSticky(), nil
	}
	return nil, fmt.Errorf("%w: class %q (known: %s, %s, %s, %s)", ErrUnknownAssignor, name,
		RangeClass, RoundRobinClass, StickyClass, CooperativeStickyClass)
}

func (a *builtin) Name() string {
	switch a.kind {
	case kindRange:
		return RangeName
	case kindRoundRobin:
		return RoundRobinName
	case kindSticky:
		return StickyName
	case kindCooperativeSticky:
		return CooperativeStickyName
	}
	return ""
}

func (a *builtin) String() string { return a.Name() }

// Protocols returns [Eager] for range, roundrobin and sticky, and
// [Cooperative], [Eager] for cooperative-sticky, as Kafka's
// supportedProtocols.
func (a *builtin) Protocols() []Protocol {
	if a.kind == kindCooperativeSticky {
		return []Protocol{Cooperative, Eager}
	}
	return []Protocol{Eager}
}

func (a *builtin) Assign(partitionsPerTopic map[string]int32, members []Member) (map[string][]TopicPartition, error) {
	g, err := newGroup(partitionsPerTopic, members)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Name(), err)
	}
	var pids [][]int32
	switch a.kind {
	case kindRange:
		pids = g.assignRange()
	case kindRoundRobin:
		pids = g.assignRoundRobin()
	case kindSticky, kindCooperativeSticky:
		pids, err = g.assignSticky(a.kind == kindCooperativeSticky)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name(), err)
		}
	default:
		return nil, fmt.Errorf("%w: zero assignor value", ErrInternal)
	}
	return g.result(pids), nil
}

// RebalanceProtocol returns the rebalance protocol of a consumer configured
// with assignors (its partition.assignment.strategy), as Kafka's
// ConsumerCoordinator chooses it: the highest protocol every one of them
// supports. The default strategy [range, cooperative-sticky] gives [Eager];
// [cooperative-sticky] alone gives [Cooperative]. No assignors, or none in
// common, fail with [ErrNoCommonProtocol].
func RebalanceProtocol(assignors []Assignor) (Protocol, error) {
	if len(assignors) == 0 {
		return 0, fmt.Errorf("%w: no assignors", ErrNoCommonProtocol)
	}
	common := slices.Clone(assignors[0].Protocols())
	for _, a := range assignors[1:] {
		common = slices.DeleteFunc(common, func(p Protocol) bool { return !slices.Contains(a.Protocols(), p) })
	}
	if len(common) == 0 {
		names := make([]string, len(assignors))
		for i, a := range assignors {
			names[i] = a.Name()
		}
		return 0, fmt.Errorf("%w: %s", ErrNoCommonProtocol, strings.Join(names, ", "))
	}
	return slices.Max(common), nil
}

// MemberProtocols is what [SelectProtocol] needs of a member: its id and the
// names of its assignors in its order of preference (the protocols of its
// JoinGroup request).
type MemberProtocols struct {
	MemberID  string
	Protocols []string
}

// SelectProtocol chooses the group's assignor as Kafka's classic group
// coordinator does (ClassicGroup.selectProtocol, formerly
// GroupMetadata.selectProtocol): the candidates are the names every member
// lists; each member votes for the first candidate in its own list; the
// most votes win. Kafka counts the votes in a java.util.HashMap and keeps
// the first maximum its iteration meets, so a tie goes to the name that
// iterates first; members vote in the order of members (Kafka's is the
// iteration order of its own member map, which this cannot see: it decides
// only ties between names that share a hash bucket).
//
// No members, or no name every member lists, fail with
// [ErrInconsistentGroupProtocol] (Kafka rejects such a member's JoinGroup).
func SelectProtocol(members []MemberProtocols) (string, error) {
	if len(members) == 0 {
		return "", fmt.Errorf("%w: no members", ErrInconsistentGroupProtocol)
	}
	isCandidate := func(name string) bool {
		for _, m := range members {
			if !slices.Contains(m.Protocols, name) {
				return false
			}
		}
		return true
	}
	var names []string // in the order of their first vote
	votes := map[string]int{}
	for _, m := range members {
		i := slices.IndexFunc(m.Protocols, isCandidate)
		if i < 0 {
			return "", fmt.Errorf("%w: member %s supports none of the protocols every member supports",
				ErrInconsistentGroupProtocol, m.MemberID)
		}
		name := m.Protocols[i]
		if votes[name] == 0 {
			names = append(names, name)
		}
		votes[name]++
	}
	hashes := make([]int32, len(names))
	for i, n := range names {
		hashes[i] = javaStringHash(n)
	}
	best := ""
	for _, i := range javaHashMapOrder(hashes) {
		if best == "" || votes[names[i]] > votes[best] {
			best = names[i]
		}
	}
	return best, nil
}

// Revocations returns, for each member that owns partitions its new
// assignment does not contain, those partitions (sorted): what each member
// must revoke. Under the cooperative protocol a member with revocations
// rejoins once it has revoked them, and the follow-up rebalance assigns
// them (Kafka's ConsumerCoordinator.onJoinComplete: "need to revoke
// partitions and re-join"); an empty result means the rebalance is
// complete.
func Revocations(members []Member, assignment map[string][]TopicPartition) map[string][]TopicPartition {
	out := map[string][]TopicPartition{}
	for _, m := range members {
		assigned := map[TopicPartition]bool{}
		for _, tp := range assignment[m.ID] {
			assigned[tp] = true
		}
		var revoked []TopicPartition
		for _, tp := range m.OwnedPartitions {
			if !assigned[tp] {
				assigned[tp] = true // once
				revoked = append(revoked, tp)
			}
		}
		if len(revoked) > 0 {
			slices.SortFunc(revoked, compareTopicPartitions)
			out[m.ID] = revoked
		}
	}
	return out
}

// ValidateCooperative checks an assignment against the cooperative
// protocol as Kafka's ConsumerCoordinator.validateCooperativeAssignment
// does for custom cooperative assignors: no partition may be added to one
// member while another member that owns it has it revoked. It returns an
// error wrapping [ErrInternal] naming such partitions, nil otherwise.
// The built-in cooperative-sticky assignor always passes (Kafka skips the
// check for it).
func ValidateCooperative(members []Member, assignment map[string][]TopicPartition) error {
	revoked := map[TopicPartition]bool{}
	for _, tps := range Revocations(members, assignment) {
		for _, tp := range tps {
			revoked[tp] = true
		}
	}
	var bad []TopicPartition
	for _, m := range members {
		owned := map[TopicPartition]bool{}
		for _, tp := range m.OwnedPartitions {
			owned[tp] = true
		}
		for _, tp := range assignment[m.ID] {
			if !owned[tp] && revoked[tp] {
				bad = append(bad, tp)
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.SortFunc(bad, compareTopicPartitions)
	return fmt.Errorf("%w: with the cooperative protocol, partitions %v are reassigned while other members still own them",
		ErrInternal, bad)
}
