package consumer

import (
	"encoding/binary"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// This file holds isolation.level: where a partition ends for the consumer
// (the high watermark, or the last stable offset for read_committed), and
// the read_committed filter that drops the batches of aborted transactions
// from a fetch, as Kafka's consumer does with the aborted transactions a
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

// waitsForStable reports whether a read_committed partition at position
// has nothing to read until the last stable offset lso moves: the position
// is at or past lso, and inside the log (outside it, a read reports the
// range error).
func waitsForStable(l *log.Log, position, lso int64) bool {
	return position >= lso && position <= l.LogEndOffset() && position >= l.LogStartOffset()
}

// cutAtStable returns the leading batches of buf (whole batches, as a read
// returns them) whose base offsets are below lso: a read_committed fetch
// returns nothing at or after the last stable offset. A batch whose header
// does not parse is kept, for the fetch loop to report.
func cutAtStable(buf []byte, lso int64) []byte {
	for pos := 0; pos+record.HeaderSizeUpToMagic <= len(buf); {
		// The base offset is the batch's first field (record package doc).
		if int64(binary.BigEndian.Uint64(buf[pos:])) >= lso {
			return buf[:pos]
		}
		n, err := record.BatchSize(buf[pos:])
		if err != nil {
			return buf
		}
		pos += n
	}
	return buf
}
