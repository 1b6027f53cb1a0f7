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

// groupSettings returns a group's share settings.
func groupSettings(d *log.Dir, group string) (limits, resetPolicy) {
	return limits{lock: 30 * time.Second, delivery: 5, maxLocks: 2000, isolation: int8(log.ReadUncommitted), renew: true}, resetPolicy{}
}
