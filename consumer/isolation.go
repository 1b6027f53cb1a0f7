package consumer

import (
	"github.com/kafkalite/kafkalite/log"
)

// This file holds isolation.level: where a partition ends for the consumer
// (the high watermark, or the last stable offset for read_committed). A
// fetch reads at the consumer's level ([log.Log.Fetch]: for read_committed
// up to the last stable offset, with the aborted transactions of what it
// read), and the partition's log.AbortFilter drops the batches of aborted
// transactions, as Kafka's consumer does with the aborted transactions a
// read_committed FetchResponse lists (CompletedFetch.nextFetchedRecord).

// endOffset is the end of a partition at the consumer's isolation level,
// as Kafka's ListOffsets answers "latest": the last stable offset for
// read_committed, the high watermark for read_uncommitted.
func (c *Consumer) endOffset(l *log.Log) int64 {
	if c.cfg.IsolationLevel == ReadCommitted {
		return l.LastStableOffset()
	}
	return l.HighWatermark()
}
