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
// limit minus the time already passed; then a new window begins. The rate
// changes at run time ([Throttler.SetRate]), as a dynamic broker setting
// changes Kafka's.
//
// A Throttler is safe for concurrent use.
type Throttler struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu          sync.Mutex // protects the fields below
	rate        float64    // bytes per second; +Inf or MaxFloat64: unlimited
	periodStart time.Time
	observed    float64
	// rateChanged ends when SetRate changes the rate, waking the sleeps
	// begun under the old one; SetRate replaces it.
	rateChanged       context.Context
	cancelRateChanged context.CancelFunc
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
	t := &Throttler{rate: bytesPerSecond, now: now, sleep: sleep, periodStart: now()}
	t.rateChanged, t.cancelRateChanged = context.WithCancel(context.Background())
	return t
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

// unlimited reports whether rate never throttles.
func unlimited(rate float64) bool { return rate >= math.MaxFloat64 || math.IsInf(rate, 1) }

// Unlimited reports whether the throttler never sleeps (at its current
// rate).
func (t *Throttler) Unlimited() bool {
	return t == nil || unlimited(t.Rate())
}

// Rate returns the rate in bytes per second (Kafka's desiredRatePerSec).
func (t *Throttler) Rate() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rate
}

// SetRate changes the rate to bytesPerSecond (Kafka's
// updateDesiredRatePerSec, which a change of
// log.cleaner.io.max.bytes.per.second calls): a new check window begins,
// and the callers sleeping under the old rate wake (their window's bytes
// were paid at a rate no longer asked for), so that the new rate applies
// to the cleaners' next bytes.
func (t *Throttler) SetRate(bytesPerSecond float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if bytesPerSecond == t.rate {
		return
	}
	t.rate = bytesPerSecond
	t.periodStart, t.observed = t.now(), 0
	t.cancelRateChanged()
	t.rateChanged, t.cancelRateChanged = context.WithCancel(context.Background())
}

// MaybeThrottle counts n bytes of I/O and, at the end of a check window
// (more than 300 ms since it began, and some bytes counted), sleeps if the
// window's rate is over the limit: for observed/rate − elapsed. The sleep
// ends early, with nil, if [Throttler.SetRate] changes the rate. It
// returns ctx's error if ctx ends during the sleep.
//
// Kafka rounds the sleep to milliseconds and sleeps holding its lock, so
// that the other cleaner threads wait too; here the sleep is exact and the
// next window begins when it ends, so that bytes the other cleaners count
// meanwhile fall into that window and are throttled there.
func (t *Throttler) MaybeThrottle(ctx context.Context, n int64) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	if unlimited(t.rate) {
		t.mu.Unlock()
		return nil
	}
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
	rateChanged := t.rateChanged
	t.mu.Unlock()
	if sleep <= 0 {
		return nil
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(rateChanged, cancel)
	defer stop()
	err := t.sleep(sctx, sleep)
	if err != nil && ctx.Err() == nil && rateChanged.Err() != nil {
		return nil // woken by SetRate
	}
	return err
}
