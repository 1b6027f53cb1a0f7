// Package crashtest is the kill -9 crash harness of kafkalite: a workload
// that a child process runs on a log directory until it is killed with
// SIGKILL, and a checker that the parent runs on the same directory after
// every kill.
//
// The workload ([Run]) opens the directory with tiny segments, aggressive
// retention and frequent checkpoints, and runs at once:
//
//   - an idempotent producer with acks=all on topic "all" (3 partitions),
//     a tiered topic: its sealed segments are copied every 10 ms to a
//     remote.FileStore beside the directory, and local retention deletes
//     them once copied, so that the checker reads its oldest acknowledged
//     records back from the copies,
//   - a producer with acks=1 (idempotence off) on topic "one" (2 partitions),
//   - a transactional producer on topic "txn" (2 partitions) that commits
//     most transactions and aborts some,
//   - a consumer group "plain" (read_uncommitted) on "all" and "one" and a
//     group "committed" (read_committed) on "txn", committing offsets
//     synchronously after every poll,
//   - topic churn: a topic created and deleted every few milliseconds,
//   - an idempotent producer with acks=all on the compacted topic "cmp"
//     (keyed updates over 23 keys, one in seven a tombstone), which the log
//     cleaner compacts while the child runs,
//   - an idempotent producer with acks=all on topic "shr" (one partition,
//     no retention), read by two consumer.ShareConsumers of the share
//     group "shared" (share.auto.offset.reset=earliest, set with
//     log.Dir.AlterGroupConfig) in explicit acknowledgement mode: of the
//     records "g<gen>:shr:<seq>", those whose seq ends in 3 are rejected,
//     those ending in 7 released at their first delivery (accepted at the
//     next), the others accepted; each Poll's acknowledgements are
//     committed with CommitSync.
//
// The producers compress with codecs the parent chooses for each
// generation from its seed ([Codecs]: four different ones of none, gzip,
// snappy, lz4 and zstd, in a random order, for "all", "one", "txn" and
// "cmp"; "shr"'s producer takes "all"'s), so that a run of a few kills
// puts every codec through every kind of producer, the cleaner and
// recovery, and a log holds batches of several codecs.
//
// It reports what the library acknowledged, one line per event, written to
// the output with one write call each (so that a line is either in the
// pipe whole or not at all when the process dies):
//
//	ack <topic> <partition> <offset> <value> <acks>   a send's callback returned no error
//	cack <offset> <key> <value or -null->             a send to "cmp" acknowledged
//	tsend <txn> <index> <partition> <offset>          a transactional send's callback
//	commit-start <txn>                                CommitTransaction is about to be called
//	commit <txn>                                      CommitTransaction returned nil
//	abort-start <txn>                                 AbortTransaction is about to be called
//	offset <group> <topic> <partition> <offset>       CommitSync of that offset returned nil
//	create-start <topic> / delete-start <topic>       CreateTopic / DeleteTopic is about to be called
//	created <topic> / deleted <topic>                 CreateTopic / DeleteTopic returned nil
//	sack-start <offset> <type>                        a share consumer is about to commit that acknowledgement of "shr"
//	sack <offset> <type> <delivery count>             CommitSync returned it without an error (durable)
//
// Values name the child's generation (the parent counts kills), so that a
// record written twice is detected: "g<gen>:<stream>:<seq>" for plain
// sends, "g<gen>t<k>:<index>:<count>" for the records of transaction
// g<gen>t<k>.
//
// The [Checker] reads those lines and, after each kill, opens the directory
// with log.Open (recovery must succeed) and checks, see [Checker.Check]:
// every batch of every partition decodes from the log start offset with its
// CRC verified; every record of the workload is in a batch of the codec its
// generation's producer was given (the parent tells the Checker,
// [Checker.Generation]); offsets are gapless (except in compacted topics,
// the internal ones included, where the cleaner leaves gaps); every
// acknowledged record (acks=all and acks=1 alike: a kill of the process does
// not lose the page cache) at or above the log start offset is at its offset
// with its value; no value appears twice; values of one generation are in
// order per partition; log start offsets and the groups' committed offsets
// never go backwards; read_committed shows only transactions whose commit
// was requested, every record of a committed transaction, and nothing of an
// aborted one; topics created are there and topics deleted stay deleted, and
// a topic whose creation or deletion was interrupted is either absent or
// present with the configuration it was created with; in the compacted
// topic, every key has a record at or after its latest acknowledged one (the
// cleaner removes a record only for a newer one with the same key), a record
// at an acknowledged offset is the one acknowledged, and no value is there
// twice.
//
// The share group phase checks that every record of __share_group_state
// decodes and the share-partition manager loads the states; that each
// reported acknowledgement is the rule's for its record; that the
// share-partition start offset never goes back; that no record reported
// accepted or rejected is ever acknowledged again by a child. Then a share
// consumer of the group, a new member in the checking process, drains
// "shr": it must be delivered no record reported done, and every record
// that is not; it accepts each, and the group's start offset must reach
// the high watermark. Every record below it was reported done, delivered
// to the check, or had its acknowledgement being committed when the child
// died: none is lost. The next child starts from a group whose records are
// all done.
package crashtest
