// Package coordinator is the broker side of consumer groups and
// transactions, attached to an open log.Dir: Kafka's GroupCoordinator
// ([GroupCoordinator], from [Groups]) and TransactionCoordinator
// ([TxnCoordinator], from [Transactions]). It keeps each group's members,
// generation and assignment, runs rebalances, fences stale members and
// producers, and stores committed offsets, group metadata and transaction
// state in the internal topics __consumer_offsets and __transaction_state
// in Kafka's schemas, so that a Kafka tool reading the directory sees the
// same groups and transactions.
//
// # Serving Kafka's requests
//
// A broker on kafkalite (the wire server in examples/kafkaserver is one)
// answers each group and transaction request with one call, its fields
// decoded into the call's arguments and its errors mapped to Kafka's codes
// (each error's doc names its code):
//
//	JoinGroup               GroupCoordinator.JoinGroup (PendingMember for MEMBER_ID_REQUIRED)
//	SyncGroup               GroupCoordinator.SyncGroup
//	Heartbeat               GroupCoordinator.Heartbeat
//	LeaveGroup              GroupCoordinator.LeaveGroup, per member
//	ConsumerGroupHeartbeat  GroupCoordinator.ConsumerGroupHeartbeat
//	ConsumerGroupDescribe   GroupCoordinator.DescribeConsumerGroup, per group
//	ShareGroupHeartbeat     GroupCoordinator.ShareGroupHeartbeat
//	ShareGroupDescribe      GroupCoordinator.DescribeShareGroup, per group
//	AlterShareGroupOffsets  GroupCoordinator.AlterShareGroupOffsets
//	DeleteShareGroupOffsets GroupCoordinator.DeleteShareGroupOffsets
//	OffsetCommit            GroupCoordinator.CommitOffsets
//	OffsetFetch             GroupCoordinator.FetchOffsets (PendingTxnOffsets for require_stable;
//	                        CheckConsumerOffsetFetch first for a member of a consumer group)
//	OffsetDelete            GroupCoordinator.DeleteOffsets
//	ListGroups              GroupCoordinator.ListGroups
//	DescribeGroups          GroupCoordinator.DescribeGroup, per group
//	DeleteGroups            GroupCoordinator.DeleteGroup, per group
//	TxnOffsetCommit         GroupCoordinator.TxnCommitOffsets
//	InitProducerId          TxnCoordinator.InitProducerID
//	AddPartitionsToTxn      TxnCoordinator.AddPartitions
//	AddOffsetsToTxn         TxnCoordinator.AddOffsets
//	EndTxn                  TxnCoordinator.EndTxn
//	DescribeTransactions    TxnCoordinator.DescribeTransaction, per id
//	ListTransactions        TxnCoordinator.ListTransactions
//
// What stays the broker's: FindCoordinator (a single node coordinates
// everything), and the checks of a request's shape before the call (an
// empty group id, a session timeout outside group.min.session.timeout.ms
// and group.max.session.timeout.ms, a partition of a topic that does not
// exist).
//
// # Groups
//
// A group is of one of three types, sharing the group ids, listing and
// deletion above. Kafka's classic groups ([TypeClassic]) split a
// rebalance between the broker (membership, generations) and the group
// leader's client (the assignment, with the leader's own assignor).
// KIP-848's consumer groups ([TypeConsumer]) leave it to the coordinator:
// members heartbeat with their subscription and the partitions they own;
// the coordinator bumps the group epoch when members or subscriptions (or
// the subscribed topics) change, computes a target assignment with a
// server assignor ([AssignorUniform], [AssignorRange]), and moves each
// member to its part one heartbeat at a time, giving a partition only once
// its previous owner has revoked it. A member that stops heartbeating is
// removed after group.consumer.session.timeout.ms, one that does not
// revoke within its rebalance timeout is fenced. The group's state is
// Kafka's records in __consumer_offsets (the group epoch, each member's
// subscription, target and current assignment), restored on open. An
// empty group of one type becomes the other when a member of the other
// protocol joins; a group with members refuses the other protocol (Kafka
// converts one online under group.consumer.migration.policy, which
// kafkalite does not offer).
//
// KIP-932's share groups ([TypeShare]) read partitions together: the
// coordinator keeps their membership (ShareGroupHeartbeat: member epochs,
// the simple assignor's target, which members take at once, since
// several may read one partition), and package log/share what they
// acquire and acknowledge ([GroupCoordinator.SharePartitions]; ShareFetch,
// ShareAcknowledge and DescribeShareGroupOffsets are its calls). A member
// that leaves, or whose session of group.share.session.timeout.ms runs
// out, has its acquired records released. A share group commits no
// offsets and is not expired; DeleteGroups deletes it with its
// share-partition states.
//
// Members are network clients (a broker's JoinGroup and SyncGroup) or
// consumers in the coordinator's own process (package consumer's), in one
// group alike. When the leader is an in-process consumer, the coordinator
// runs its assignor at the end of the join phase, over every member's
// subscription (a network member's decoded from the metadata it sent):
// client and coordinator are one process, so the SyncGroup round trip is
// skipped. When the leader is a network client, the group waits in
// CompletingRebalance for its SyncGroup with every member's assignment, as
// Kafka's does, and in-process members take theirs from it. The
// in-process members' own verbs take a token only this module can make.
//
// # Transactions
//
// [TxnCoordinator] is Kafka's TransactionCoordinator at the finalized
// transaction.version 2 (KIP-890). A transaction follows the version of
// its requests: at [TxnVersion0] (EndTxn, AddPartitions, AddOffsets) the
// epoch is bumped by InitProducerID and when a transaction is fenced; at
// [TxnVersion2] (EndTxnV2, AddPartitionsV2, AddOffsetsV2: Kafka's EndTxn v5
// and the adds a broker makes for Produce v12+ and TxnOffsetCommit v5+)
// every transaction's end bumps it and returns the producer id and epoch
// to continue with, the markers written with the bumped epoch. It stores
// each transactional id's state in __transaction_state in Kafka's schema
// (version 1 values, with the transaction's version and the previous and
// next producer ids),
// durably before answering, and ends a transaction synchronously:
// PrepareCommit or PrepareAbort, a COMMIT or ABORT marker in every
// partition of the transaction (fsynced), then CompleteCommit or
// CompleteAbort. A crash between the two is repaired when the coordinator
// loads: prepared transactions are completed again. Offsets committed in a
// transaction ([GroupCoordinator.TxnCommitOffsets]) are written to
// __consumer_offsets in transactional batches of the producer and stay
// pending until the marker: the transaction coordinator hands each marker
// it writes to __consumer_offsets to the group coordinator, and the group
// coordinator's load replays the markers it finds.
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
//     writes and their fsyncs, and TxnCommitOffsets' write to
//     __consumer_offsets
//  2. TxnCoordinator.mu (the map of transactional ids and their states;
//     never held while calling a Log or the group coordinator)
//  3. a group's commit lock (group.commitMu, one-slot semaphore)
//  4. GroupCoordinator.mu (groups, pending transactional offsets)
//  5. the log's locks (Log.mu and below, DESIGN.md)
//
// Dir.svcMu (taken by Transactions and Groups) is above all of these and
// is never taken while holding one of them.
package coordinator
