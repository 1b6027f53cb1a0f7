// Package producer is Kafka's producer, in process: records pass through
// interceptors and a partitioner into a RecordAccumulator of per-partition
// batches whose memory comes from a BufferPool; one sender goroutine appends
// ready batches to the partitions' logs of an open log.Dir and completes
// their records' futures and callbacks.
//
//	Send ──▶ interceptors ──▶ partitioner ──▶ accumulator (deque of batches per partition)
//	                                              │  memory: BufferPool (buffer.memory, batch.size buffers)
//	                                              ▼
//	                           sender goroutine: drain ready batches (full, linger.ms, Flush, Close)
//	                                              │  seal (compression.type on up to GOMAXPROCS goroutines, CRC)
//	                                              ▼
//	                           log.Log.Append ──▶ (acks=all: Sync, one per partition per round)
//	                                              │
//	                                              ▼
//	                           callbacks, in offset order per partition; buffer back to the pool
//
// # Acknowledgements (acks) on a single node
//
//   - acks=0: a record completes (offset -1) when its batch is handed to the
//     sender, before the append; an append error is only logged and counted.
//   - acks=1: a record completes after its batch is appended: in the page
//     cache, readable, surviving a process crash but not a power loss.
//   - acks=all (Kafka's default): a record completes after its batch is
//     appended and fsynced. The sender appends every ready batch first and
//     then syncs each partition it touched once, so a round of batches shares
//     one fsync per partition (group commit), and appends from other
//     producers share it too.
//
// # Batches the log refuses as too large
//
// A batch of several records that its partition refuses as too large (the
// topic's segment.bytes or max.message.bytes is below it) is split in
// halves until each part fits or holds one record, as Kafka's producer
// splits a batch the broker refuses with MESSAGE_TOO_LARGE; each part is
// appended as a batch of its own, with its own sequence, and a record that
// alone is too large fails with [ErrRecordTooLarge] while the others are
// appended (Stats.Splits counts the splits).
//
// # Idempotence and transactions
//
// Every producer is idempotent by default (enable.idempotence=true, as in
// Kafka): it takes a producer id from the directory and numbers its
// batches per partition, so that a partition writes a batch once. With a
// transactional.id, [Producer.InitTransactions], [Producer.BeginTransaction],
// [Producer.SendOffsetsToTransaction], [Producer.CommitTransaction] and
// [Producer.AbortTransaction] run Kafka's transactions against the
// directory's transaction coordinator, as a Kafka 4 client does against a
// cluster at transaction.version 2 (KIP-890's version 2): each
// transaction's end bumps the producer's epoch (a new producer id once the
// epoch is exhausted), which the next transaction's batches carry, so a
// late batch of an ended transaction can never join the next one;
// read_committed consumers see only committed transactions. Two-phase commit (KIP-939) is
// not available: transaction.two.phase.commit.enable=true is a
// configuration error matching [ErrNotSupported].
//
// # Topics
//
// Unlike Kafka, whose broker creates missing topics by default, a Send to
// a missing topic fails unless Config.AutoCreateTopics is set: production
// deployments of Kafka turn auto-creation off and create topics deliberately.
package producer
