// Package assignor holds Apache Kafka's client-side partition assignors:
// the algorithms with which the leader of a consumer group (classic group
// protocol) splits the partitions of the subscribed topics among the
// members. Given the same members and partitions they give Kafka's
// assignments exactly, tie-breaks included.
//
// Verified against Kafka's clients module (apache/kafka):
// RangeAssignor.java, RoundRobinAssignor.java, StickyAssignor.java,
// CooperativeStickyAssignor.java, ConsumerPartitionAssignor.java,
// internals/AbstractPartitionAssignor.java (MemberInfo),
// internals/AbstractStickyAssignor.java (the rack-aware version of Kafka
// 3.5 and later, run without racks), internals/Utils.java (comparators),
// common/TopicPartition.java (hashCode), internals/ConsumerCoordinator.java
// (protocol choice, onLeaderElected, onJoinComplete,
// validateCooperativeAssignment) and the group coordinator's
// ClassicGroup.selectProtocol. The tests carry the expected assignments of
// RangeAssignorTest, RoundRobinAssignorTest, AbstractStickyAssignorTest,
// StickyAssignorTest and CooperativeStickyAssignorTest.
//
// # What is here
//
//	Assignor, Member, TopicPartition   the interface and its input and output
//	Range, RoundRobin                  "range", "roundrobin" (eager)
//	Sticky, CooperativeSticky          "sticky" (eager), "cooperative-sticky" (cooperative and eager)
//	ByName, ByClassName                protocol names and partition.assignment.strategy class names
//	RebalanceProtocol                  a consumer's protocol from its assignors (ConsumerCoordinator)
//	SelectProtocol                     the group's assignor by vote (the group coordinator)
//	Revocations, ValidateCooperative   what members revoke; the cooperative rule
//
// Every value here is stateless and safe for concurrent use.
//
// # Member order
//
// Range and round robin walk the members in Kafka's MemberInfo order:
// members with a group.instance.id first, ordered by it, then the others
// by member id. Strings compare as Java's String.compareTo does, by UTF-16
// code unit (the same as Go's byte order unless a string holds runes at or
// above U+E000).
//
// # range
//
// Per topic, independently: the members subscribed to it, in member order;
// with n partitions and c such members, member i gets the n/c partitions
// starting at (n/c)·i + min(i, n%c), one more if i < n%c. Two members, two
// topics of three partitions:
//
//	C0: t0-0 t0-1 t1-0 t1-1
//	C1: t0-2 t1-2
//
// Topics with the same partition count and subscribers are co-partitioned:
// partition i of each goes to the same member.
//
// # roundrobin
//
// All partitions of the subscribed topics, by topic then partition, each
// to the next member of a circular walk over the members in member order,
// skipping members not subscribed to its topic:
//
//	C0: t0-0 t0-2 t1-1
//	C1: t0-1 t1-0 t1-2
//
// # sticky and cooperative-sticky
//
// Both run Kafka's AbstractStickyAssignor: an assignment as balanced as
// the subscriptions allow that keeps as many partitions as possible with
// the members that own them ([Member.OwnedPartitions]).
//
// First, claims: members are visited in turn and a partition claimed by
// several stays with the one of the highest [Member.Generation]; when the
// highest generation is shared (or a member lists it twice) the partition
// is nobody's and counts as changing owner.
//
// With identical subscriptions (the constrained algorithm), P partitions
// and C members, every member ends with minQuota = P/C or maxQuota =
// ceil(P/C) partitions, P%C of them with maxQuota. Members keep owned
// partitions up to their quota (the lowest partition numbers first); the
// first members to own maxQuota or more keep maxQuota, while fewer than
// P%C do; the others keep minQuota and the rest is revoked. The
// unassigned partitions, by topic then partition, go round robin to the
// members under minQuota (by member id) and then one each to members at
// minQuota, until P%C members have maxQuota.
//
// Otherwise (the general algorithm) every member keeps every owned
// partition of a topic it still subscribes to; each unassigned partition,
// topics with the fewest potential members first, goes to the member with
// the fewest partitions (then the lowest member id) subscribed to its
// topic; then, while some member could take a partition of one of its
// topics from a member with two or more more partitions, partitions move
// to the member with the fewest, or back to their owner of an older
// generation, preferring to undo an earlier move of the same topic; unless
// no member owned anything, the moves are undone if they did not lower the
// sum of pairwise differences in partition count.
//
// The sticky assignment is balanced (counts within one) whenever
// subscriptions are identical; otherwise no member can take a partition of
// a topic it subscribes to from a member with two or more more. For
// cooperative-sticky this holds once the group has settled (below).
//
// # The cooperative protocol: who does what
//
// Under the cooperative protocol ([Cooperative]; KIP-429) members keep
// their partitions while they rejoin, so no partition may be given to a new
// owner while its current owner still has it. cooperative-sticky computes
// the sticky assignment and then withholds every partition changing owner:
// it is in no one's assignment this generation (Kafka's
// CooperativeStickyAssignor.adjustAssignment). Its previous owner's
// assignment no longer lists it either, so the owner sees it revoked.
//
// The follow-up rebalance is not the assignor's doing. In Kafka the member
// does it: ConsumerCoordinator.onJoinComplete computes revoked = owned −
// assigned, calls onPartitionsRevoked for them and, if any, requests a
// rejoin ("need to revoke partitions and re-join"). In that next
// rebalance the members report their reduced OwnedPartitions, the withheld
// partitions are owned by no one, and the assignor gives them to their new
// owners. So a group coordinator or consumer driving this package must,
// after a cooperative assignment, have every member with non-empty
// [Revocations] revoke them and rejoin (in practice: trigger one more
// rebalance of the group). Kafka's tests expect the group to settle within
// a few such rounds; usually one follow-up suffices.
//
// Under the eager protocol members revoke everything before joining and
// report no owned partitions, so nothing is withheld (nor kept).
// cooperative-sticky still supports it, as Kafka's does; a consumer's
// protocol is the highest one all its assignors support
// ([RebalanceProtocol]), so Kafka's default strategy, [range,
// cooperative-sticky], rebalances eagerly. Kafka's StickyAssignor stays
// sticky under the eager protocol by sending its previous assignment in
// its subscription's user data: pass that as OwnedPartitions.
//
// # Kafka's tie-breaks, and where this differs
//
// Kafka's leader keeps the members' subscriptions in a java.util.HashMap
// filled in the order of the JoinGroup response, and the sticky assignors
// visit members in its iteration order (claims, and who keeps maxQuota).
// This package reproduces that order from the member ids
// (String.hashCode, the table size, insertion order within a bucket), so
// Assign should be given the members in the order the group coordinator
// lists them; the order matters only between ids whose hashes share a
// bucket. Likewise the general algorithm's choice among partitions to move
// back follows the iteration order of Kafka's HashSets of TopicPartitions.
// These models are checked against a JDK by the tests when java is
// installed. Not modelled: Java's tree bins (eight or more keys in one
// bucket of a table of 64 or more).
//
// Deliberate differences, all on input Kafka mishandles:
//
//   - Kafka's test of identical subscriptions compares each subscription
//     with the first non-empty one it iterates, so a member with no topics
//     iterated first goes unnoticed and is given partitions it does not
//     subscribe to; here all subscriptions must be identical.
//   - Kafka's general algorithm moves a partition back to its owner of an
//     older generation even if that member no longer subscribes to the
//     topic (or fails if it cannot take part); here it must subscribe.
//   - Owned partitions whose number is not below the topic's partition
//     count are ignored (Kafka keeps them and can then assign a partition
//     twice); a subscription listing a topic twice counts it once.
//   - Kafka's sticky assignors remember the highest generation they ever
//     saw, across calls; here each call starts afresh.
//   - With no members Kafka's constrained algorithm divides by zero; here
//     the assignment is empty.
//
// Rack-aware assignment (KIP-881) needs each partition's replica racks;
// the partition counts Assign takes carry none, and without them Kafka
// assigns exactly as here, so [Member.RackID] changes nothing.
package assignor
