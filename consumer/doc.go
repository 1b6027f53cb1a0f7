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
// # Isolation levels
//
// isolation.level ([Config.IsolationLevel]) decides what Poll returns of
// transactional producers' data, as in Kafka. Control batches (the COMMIT
// and ABORT markers) are never returned at either level.
//
//   - read_uncommitted (the default, [ReadUncommitted]): every data record
//     up to the high watermark, including those of open and aborted
//     transactions. A partition ends at its high watermark.
//   - read_committed ([ReadCommitted]): the records of committed
//     transactions and of non-transactional producers, never past the
//     partition's last stable offset (the first offset of its earliest
//     open transaction, or the high watermark). Records of aborted
//     transactions are skipped by the aborted-transaction index
//     (.txnindex), as a broker's read_committed fetch lists them. A
//     partition ends at its last stable offset: EndOffsets, SeekToEnd, Lag,
//     Stats and auto.offset.reset=latest use it, and OffsetsForTimes
//     answers nothing at or after it.
//
// At either level a position moves past the control batches and aborted
// records Poll skips, so the position after a Poll (and the offset
// committed from it) can be ahead of the last record returned plus one. A
// read_committed consumer whose partitions are all at their last stable
// offsets waits in Poll like one at the end of the log: every append to the
// Dir wakes it once to look again (appends to the open transaction return
// nothing, without spinning), and the transaction's COMMIT or ABORT marker
// releases what it held back.
//
// Groups speak either protocol: the classic one (the default), whose
// leader's assignor splits the partitions, or KIP-848's
// (group.protocol=consumer), whose coordinator assigns with its server
// assignor (group.remote.assignor) while the member heartbeats and
// reconciles, revoking before it takes.
//
// # Share groups
//
// A [ShareConsumer] is Kafka's share consumer (KIP-932, KafkaShareConsumer):
// a member of a share group, whose members read the same partitions
// together instead of splitting them. Each record goes to one member at a
// time: Poll acquires records under an acquisition lock (the group's
// share.record.lock.duration.ms, 30 s), and each is acknowledged — accepted
// (done), released (delivered again, to any member, its DeliveryCount
// raised), or rejected (never delivered again). A record whose lock runs
// out, or that its member held when it closed or was dropped, is released;
// one delivered share.delivery.count.limit times (5) is archived. Records
// are acquired in whole batches (share.acquire.mode=batch_optimized) and
// handed out max.poll.records at a time. With
// share.acknowledgement.mode=implicit (the default) the next Poll,
// CommitSync or CommitAsync accepts every record of the last Poll; with
// explicit, the application acknowledges each one before the next Poll.
// Acknowledgements are durable (fsynced in __share_group_state) once sent:
// an accepted record is never delivered again, across restarts. Close
// sends the acknowledgements made and releases the rest (in implicit mode
// too, as Kafka 4.4 does: commit first to accept the last Poll's records).
// The share group's membership is the Dir's group coordinator's
// (ShareGroupHeartbeat, at group.share.heartbeat.interval.ms), its
// share-partitions the Dir's share-partition manager's (package
// log/share), which take the group's configuration from the Dir
// (log.Dir.AlterGroupConfig: share.auto.offset.reset, latest by default,
// so a new group reads what is written after its first fetch;
// share.record.lock.duration.ms; share.delivery.count.limit;
// share.isolation.level).
//
// Differences from Kafka, on purpose: group.initial.rebalance.delay.ms is
// 0 in process (log.Config.GroupInitialRebalanceDelay).
package consumer
