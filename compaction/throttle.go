package compaction

import (
	"context"
	"math"
	"sync"
	"time"
)

// Throttler bounds the cleaner's I/O rate (log.cleaner.io.max.bytes.per.second),
// as Kafka's Throttler does: the bytes read and written by every cleaner
// sharing it are counted, and every checkInterval, if the observed rate is
// above the limit, the caller sleeps until it is not.
//
// A Throttler is safe for concurrent use.
type Throttler struct {
	rate float64 // bytes per second; +Inf or MaxFloat64: unlimited
	now  func() time.Time

	mu          sync.Mutex // protects the fields below
	periodStart time.Time
	observed    float64
}

// checkInterval is how often the rate is checked (Kafka's 300 ms).
const checkInterval = 300 * time.Millisecond

// NewThrottler returns a throttler allowing bytesPerSecond; a rate of
// math.MaxFloat64 (Kafka's default, Double.MAX_VALUE) or more never
// throttles. now is the clock (nil: time.Now).
func NewThrottler(bytesPerSecond float64, now func() time.Time) *Throttler {
	if now == nil {
		now = time.Now
	}
	return &Throttler{rate: bytesPerSecond, now: now, periodStart: now()}
}

// Unlimited reports whether the throttler never sleeps.
func (t *Throttler) Unlimited() bool {
	return t == nil || t.rate >= math.MaxFloat64 || math.IsInf(t.rate, 1)
}

// MaybeThrottle counts n bytes of I/O and sleeps if the rate is over the
// limit, until ctx ends.
func (t *Throttler) MaybeThrottle(ctx context.Context, n int64) error {
	if t.Unlimited() {
		return nil
	}
	t.mu.Lock()
	t.observed += float64(n)
	now := t.now()
	elapsed := now.Sub(t.periodStart)
	var sleep time.Duration
	if elapsed >= checkInterval {
		rate := t.observed / elapsed.Seconds()
		if rate > t.rate {
			sleep = time.Duration(t.observed/t.rate*float64(time.Second)) - elapsed
		}
		t.periodStart = now.Add(max(sleep, 0))
		t.observed = 0
	}
	t.mu.Unlock()
	if sleep <= 0 {
		return nil
	}
	timer := time.NewTimer(sleep)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
