// Package txncodec encodes and decodes the records of Kafka's internal topic
// __transaction_state — one key and one value per state change of a
// transactional id — exactly as Kafka 3.x and 4.x write and read them
// (Kafka's TransactionLogKey.json and TransactionLogValue.json schemas,
// TransactionLog). It does no I/O: a transaction coordinator frames the
// keys and values produced here as ordinary records (the record package),
// sends each transactional id to its partition ([PartitionFor]) and replays
// what it reads back.
//
// # Topic and partitioning
//
// A transactional id's records all live in partition
// abs(javaStringHashCode(transactionalId)) % transaction.state.log.num.partitions
// (50 by default, [DefaultTransactionStateTopicPartitions]), the rule of
// __consumer_offsets. The topic is compacted, keyed by the key bytes, so
// the latest value per transactional id wins.
//
// # Key
//
// TransactionLogKey has one version, 0, never flexible:
//
//	00 00 | len(2) transactionalId
//
// # Value
//
// TransactionLogValue has versions 0 and 1; 1 is flexible (compact strings
// and arrays, tagged fields). Version 1 carries four tagged fields, each
// written only when not at its default: 0 PreviousProducerId (int64, -1),
// 1 NextProducerId (int64, -1), 2 ClientTransactionVersion (int16, 0) and
// 3 NextProducerEpoch (int16, -1). A reader skips any other tag by its
// size. See [AppendValue] and [AppendValueVersion] for the byte layouts.
//
// Which version Kafka writes is TransactionVersion.transactionLogValueVersion
// (server-common TransactionVersion.java, used by TransactionLog): 1 when the
// cluster's finalized transaction.version feature is 1 or more, else 0.
// transaction.version 1 and 2 need metadata version 4.0-IV2 (and 2 is
// LATEST_PRODUCTION in TransactionVersion.java), so every 3.x cluster and any
// 4.x cluster left at transaction.version 0 writes version 0, and a 4.x
// cluster at 1 or 2 writes version 1. That a freshly formatted 4.0 cluster
// starts at transaction.version 2 is taken from that constant, not verified
// against a 4.0.0 broker. [AppendValue] writes version 1 ([DefaultValueVersion]), the
// 4.x form; use [AppendValueVersion] with 0 for a log that 3.x brokers or a
// transaction.version 0 cluster will replay. Every 3.x and 4.x broker reads
// both versions.
//
// Kafka's TransactionLog sets ClientTransactionVersion; the Scala
// TransactionLog of 4.0 never sets PreviousProducerId or NextProducerId, so
// they stay at their defaults and are absent. NextProducerEpoch (tag 3) is
// in later trunk copies of the schema only.
//
// # Tombstones
//
// When a transactional id expires, Kafka writes its key with a null value
// (a tombstone) and the loader removes the id. The record package gives a
// null value as a nil slice: callers test for nil before decoding.
// [ParseValue] of a nil slice returns [ErrTombstone], which is not a
// decoding failure; an empty non-nil value is not a tombstone and fails.
// A tombstone is written as a record with a nil value; there is no encoder
// for it here.
//
// # Errors
//
// Decoders never panic and never trust a length: each length and count is
// checked against the bytes present before anything is allocated. Every
// decoding failure is a [*DecodeError] matching [ErrCorrupt] (and
// [ErrUnsupportedVersion] for a version Kafka does not read). Encoders fail
// with [ErrInvalid] for values Kafka's format cannot hold, appending nothing.
//
// Nothing in the package holds state; every function is safe for
// concurrent use.
package txncodec
