// Package consumer is Kafka's consumer, in process: it reads partitions of
// an open log.Dir from tracked positions, commits offsets to
// __consumer_offsets in Kafka's schemas (so Kafka's tools see them), and
// shares partitions with the other consumers of its group through
// rebalances run by the Dir's group coordinator.
//
// Two ways to get partitions, as in Kafka (not mixed):
//
//   - Assign: the caller names the partitions. With a group id, positions
//     start from the group's committed offsets and commits go to the group
//     (which must have no members).
//   - Subscribe / SubscribePattern: the group's assignor (range,
//     round-robin, sticky, cooperative-sticky; partition.assignment.strategy)
//     splits the subscribed topics' partitions among the members. Each
//     member heartbeats from a goroutine of its own; session.timeout.ms drops
//     dead members and max.poll.interval.ms drops members that stopped
//     polling; generations fence stale members' commits.
//
// Poll returns records without allocating per record once its buffers have
// grown; the records reference those buffers until the next Poll. Positions
// without a committed offset follow auto.offset.reset.
//
// Differences from Kafka, on purpose: group.initial.rebalance.delay.ms is
// 0 in process (log.Config.GroupInitialRebalanceDelay); isolation.level
// read_committed arrives with transactions (6/9) and is a configuration
// error until then; the new consumer group protocol (group.protocol=consumer,
// KIP-848) is not supported.
package consumer
