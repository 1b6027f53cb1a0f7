// Package share is the broker side of Kafka's share groups (KIP-932,
// "queues for Kafka") attached to an open log.Dir: the share-partitions of
// each share group ([PartitionManager], Kafka's SharePartitionManager) and
// their durable state in the internal topic __share_group_state (Kafka's
// share coordinator, in its schema). The membership of share groups (who
// is in a group, which partitions each member reads) is the group
// coordinator's, in package log/coordinator.
//
// A share group's members read the same partitions together. Each record
// is delivered to one member at a time: a fetch acquires records, under an
// acquisition lock of share.record.lock.duration.ms, and the member
// acknowledges each — accept (done), release (delivered again, to any
// member), reject (archived, never delivered again) or renew (the lock
// starts again). A record whose lock runs out is released; one delivered
// share.delivery.count.limit times and released again is archived. The
// share-partition start offset moves past the records done; at most
// share.partition.max.record.locks records past it are in flight.
//
// # Serving Kafka's requests
//
//	ShareFetch                 PartitionManager.Acknowledge for its acknowledgements,
//	                           then Acquire per partition (Wait to wait for records)
//	ShareAcknowledge           PartitionManager.Acknowledge
//	DescribeShareGroupOffsets  PartitionManager.Offsets
//	AlterShareGroupOffsets     PartitionManager.SetStartOffset (for a group without members)
//	DeleteShareGroupOffsets    PartitionManager.DeleteState
//
// A member that leaves its group, or whose session closes, gives back what
// it holds: [PartitionManager.ReleaseMember].
//
// # Durability
//
// A call that changes what is stored (an acknowledgement, a release, an
// expired lock, a new start offset) returns after the new state is
// fsynced in __share_group_state: an acknowledged record is never
// delivered again, after a restart or a crash. Acquisitions are not
// written, as in Kafka: after a crash the records acquired and not yet
// acknowledged are delivered again, their delivery counts those of the
// last write.
//
// # Lock order
//
// A share-partition's write lock (held while its state is written), then
// its mutex, then the manager's mutex; the log's locks below them all.
package share
