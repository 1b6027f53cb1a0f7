package share

import (
	"time"

	"github.com/kafkalite/kafkalite/log"
)

// resetPolicy is share.auto.offset.reset: where a share-partition without
// a state starts.
type resetPolicy struct {
	earliest bool
	// byDuration, when set, starts at the first record not older than
	// it (Kafka's by_duration:<ISO-8601 duration>).
	byDuration time.Duration
}

// startOffset returns the start offset of a new share-partition of l.
func (r resetPolicy) startOffset(l *log.Log, now time.Time) (int64, error) {
	switch {
	case r.earliest:
		return l.LogStartOffset(), nil
	case r.byDuration > 0:
		ot, ok, err := l.OffsetForTimestamp(now.Add(-r.byDuration).UnixMilli())
		if err != nil {
			return 0, err
		}
		if ok {
			return ot.Offset, nil
		}
	}
	return l.HighWatermark(), nil
}

// groupSettings returns a group's share settings: its configuration
// (log.Dir.GroupConfig, the broker's group.share.* settings with the
// group's share.* overrides).
func groupSettings(d *log.Dir, group string) (limits, resetPolicy) {
	gc := d.GroupConfig(group)
	lim := limits{lock: gc.ShareRecordLockDuration, delivery: int16(min(gc.ShareDeliveryCountLimit, 1<<15-1)), maxLocks: gc.SharePartitionMaxRecordLocks,
		isolation: int8(gc.ShareIsolationLevel), renew: gc.ShareRenewAcknowledgeEnable}
	var r resetPolicy
	switch gc.ShareAutoOffsetReset.Kind {
	case log.ShareResetEarliest:
		r.earliest = true
	case log.ShareResetByDuration:
		r.byDuration = gc.ShareAutoOffsetReset.Duration
	}
	return lim, r
}
