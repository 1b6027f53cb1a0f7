package consumer

import (
	"sync/atomic"
	"time"
)

type stats struct {
	records, bytes, rebalances, commits, commitNanos atomic.Int64
	// waits counts the times Poll blocked for an append (tests check that
	// Poll does not spin).
	waits atomic.Int64
}

// Stats are the consumer's main metrics since New.
type Stats struct {
	// Records and Bytes consumed (records-consumed-total,
	// bytes-consumed-total).
	Records, Bytes int64
	// Rebalances joined (rebalance-total); Commits made and their average
	// latency (commit-latency-avg).
	Rebalances, Commits int64
	CommitLatencyAvg    time.Duration
	// Lag per assigned partition whose position is known (records-lag):
	// the offsets from the position to the high watermark, or for
	// read_committed to the last stable offset.
	Lag map[TopicPartition]int64
}

// Stats returns the consumer's metrics.
func (c *Consumer) Stats() Stats {
	s := Stats{Records: c.stats.records.Load(), Bytes: c.stats.bytes.Load(), Rebalances: c.stats.rebalances.Load(),
		Commits: c.stats.commits.Load(), Lag: map[TopicPartition]int64{}}
	if s.Commits > 0 {
		s.CommitLatencyAvg = time.Duration(c.stats.commitNanos.Load() / s.Commits)
	}
	for _, ps := range c.parts {
		if ps.position >= 0 {
			s.Lag[ps.tp] = max(c.endOffset(ps.log)-ps.position, 0)
		}
	}
	return s
}
