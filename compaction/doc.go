// Package compaction is Kafka's log cleaner: it keeps the latest record of
// each key of a compacted topic (cleanup.policy=compact) and removes the
// rest, without changing any offset (Kafka's LogCleaner, Cleaner and
// LogCleanerManager).
//
// The model, one round of a [Cleaner] over one log ([Log], filled by the
// log package under the partition's write lock):
//
//	   clean section      dirty section (cleanable)        uncleanable
//	|-----------------|--------------------------------|-----------------|
//	log start    FirstDirtyOffset            FirstUncleanableOffset   log end
//	             (cleaner-offset-checkpoint) (active segment, last stable
//	                                          offset, min.compaction.lag.ms)
//
// The steps:
//
//  1. The offset map ([OffsetMap], Kafka's dedupe buffer) is built over the
//     dirty section: key → latest offset, with a 128-bit hash of the key
//     (two seeded xxhash64) in a fixed memory budget. Records of aborted
//     transactions and control batches are not mapped. When the map fills,
//     the round ends there: the next round starts at the map's end.
//  2. Every segment below the map's end is rewritten, in groups of
//     consecutive segments that fit segment.bytes, into one new segment per
//     group, written as <base>.log.cleaned (and .index.cleaned,
//     .timeindex.cleaned, .txnindex.cleaned). A record stays if it is the
//     latest of its key (or above the map's end), and, for a tombstone, if
//     its batch's delete horizon has not passed. Batches keep their base
//     and last offsets, producer fields and codec; an unchanged batch is
//     copied byte for byte. A batch that keeps a tombstone (or a marker of
//     a transaction with no data left) gets the delete horizon
//     now + delete.retention.ms in its baseTimestamp (attribute bit 6).
//  3. Transactions: records of aborted transactions go; an ABORT marker
//     stays while data of its transaction does (with its .txnindex entry),
//     a COMMIT marker while data of its transaction was seen this round,
//     and once free a marker goes only after its delete horizon. The last
//     batch of each active producer, and the round's last batch, stay as a
//     61-byte empty batch when all their records go.
//  4. Each cleaned segment is swapped in by [CommitSwap]: .cleaned →
//     .swap, the old segments → .deleted, .swap → final name, with
//     directory syncs between; [RecoverDir] finishes or undoes a swap a
//     crash interrupted, when the log opens.
//
// The package does not import the log package: log owns the goroutines,
// picks the log to clean and hands a [Log] to [Cleaner.Clean]. A round
// that fails returns its error and leaves the log's records as they were
// (its cleaned files removed, or, after a failed swap, left for
// [RecoverDir] to finish or undo); the log package then marks the partition uncleanable, as
// Kafka's LogCleanerManager does, and cleans the others. A [Throttler]
// shared by the cleaners bounds their I/O.
package compaction
