package compaction

import (
	"context"
	"math"
	"sync"
	"time"
)

// Throttler bounds the cleaner's I/O rate (log.cleaner.io.max.bytes.per.second),
// as Kafka's Throttler does for its log cleaner: the bytes read and written
// by every cleaner sharing it are counted, and once more than checkInterval
// has passed since the check window began, if the window's rate is above
// the limit, the caller sleeps for the time the window's bytes need at the
// limit minus the time already passed; then a new window begins.
//
// A Throttler is safe for concurrent use.
type Throttler struct {
	rate  float64 // bytes per second; +Inf or MaxFloat64: unlimited
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu          sync.Mutex // protects the fields below
	periodStart time.Time
	observed    float64
}

// checkInterval is how long a check window lasts: Kafka's LogCleaner gives
// its Throttler a checkIntervalMs of 300.
const checkInterval = 300 * time.Millisecond

// NewThrottler returns a throttler allowing bytesPerSecond; a rate of
// math.MaxFloat64 (Kafka's default, Double.MAX_VALUE) or more never
// throttles. now is the clock (nil: time.Now) and sleep waits for d or
// until ctx ends, returning ctx's error then (nil: a timer). Tests inject
// both, so that no test sleeps.
func NewThrottler(bytesPerSecond float64, now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) *Throttler {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepContext
	}
	return &Throttler{rate: bytesPerSecond, now: now, sleep: sleep, periodStart: now()}
}

// sleepContext waits for d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unlimited reports whether the throttler never sleeps.
func (t *Throttler) Unlimited() bool {
	return t == nil || t.rate >= math.MaxFloat64 || math.IsInf(t.rate, 1)
}

// MaybeThrottle counts n bytes of I/O and, at the end of a check window
// (more than 300 ms since it began, and some bytes counted), sleeps if the
// window's rate is over the limit: for observed/rate − elapsed. It returns
// ctx's error if ctx ends during the sleep.
//
// Kafka rounds the sleep to milliseconds and sleeps holding its lock, so
// that the other cleaner threads wait too; here the sleep is exact and the
// next window begins when it ends, so that bytes the other cleaners count
// meanwhile fall into that window and are throttled there.
func (t *Throttler) MaybeThrottle(ctx context.Context, n int64) error {
	if t.Unlimited() {
		return nil
	}
	t.mu.Lock()
	t.observed += float64(n)
	now := t.now()
	elapsed := now.Sub(t.periodStart)
	var sleep time.Duration
	if elapsed > checkInterval && t.observed > 0 {
		if t.observed/elapsed.Seconds() > t.rate {
			sleep = time.Duration(t.observed/t.rate*float64(time.Second)) - elapsed
		}
		t.periodStart = now.Add(max(sleep, 0))
		t.observed = 0
	}
	t.mu.Unlock()
	if sleep <= 0 {
		return nil
	}
	return t.sleep(ctx, sleep)
}
