package compaction

import (
	"context"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
)

// tick returns a clock that moves c step forward at each reading.
func tick(c *testclock.Clock, step time.Duration) func() time.Time {
	return func() time.Time {
		c.Add(step)
		return c.Now()
	}
}

// TestThrottler checks the sleeps against Kafka's Throttler rule: a check
// window ends at the first call more than 300 ms (checkIntervalMs) after it
// began with some bytes observed; if observed/elapsed is above the rate,
// the caller sleeps observed/rate − elapsed; then a new window begins (after
// the sleep).
func TestThrottler(t *testing.T) {
	type step struct {
		advance time.Duration // the clock moves this much before the call
		bytes   int64
		sleep   time.Duration // the sleep wanted, 0 for none
	}
	tests := []struct {
		name  string
		rate  float64
		steps []step
	}{
		{"under the rate", 1000, []step{
			{100 * time.Millisecond, 100, 0},
			{400 * time.Millisecond, 300, 0}, // 400 B in 500 ms
			{time.Second, 1000, 0},           // exactly the rate
		}},
		{"within the check interval", 1000, []step{
			{100 * time.Millisecond, 5000, 0},
			{200 * time.Millisecond, 5000, 0}, // 300 ms: not more than the interval
			{time.Millisecond, 0, 9699 * time.Millisecond},
		}},
		{"over the rate", 1000, []step{
			{100 * time.Millisecond, 100, 0},
			{300 * time.Millisecond, 400, 100 * time.Millisecond}, // 500 B need 500 ms, 400 passed
			// A new window began after the sleep.
			{400 * time.Millisecond, 200, 0},
			// Nothing observed: the window goes on; then 1000 B need 1 s,
			// of which 600 ms passed.
			{500 * time.Millisecond, 0, 0},
			{100 * time.Millisecond, 1000, 400 * time.Millisecond},
		}},
		{"fractional rate", 3, []step{
			{time.Second, 4, time.Second / 3},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testclock.New(t0)
			var slept []time.Duration
			thr := NewThrottler(tc.rate, clk.Now, func(_ context.Context, d time.Duration) error {
				slept = append(slept, d)
				clk.Add(d)
				return nil
			})
			require.False(t, thr.Unlimited())
			for i, s := range tc.steps {
				clk.Add(s.advance)
				slept = nil
				require.NoError(t, thr.MaybeThrottle(context.Background(), s.bytes))
				if s.sleep == 0 {
					require.Empty(t, slept, "step %d", i)
				} else {
					require.Len(t, slept, 1, "step %d", i)
					require.InDelta(t, s.sleep, slept[0], 1, "step %d", i)
				}
			}
		})
	}
}

// TestThrottlerUnlimited: Kafka's default rate (Double.MAX_VALUE), +Inf and
// a nil Throttler never sleep.
func TestThrottlerUnlimited(t *testing.T) {
	for _, thr := range []*Throttler{nil, NewThrottler(math.MaxFloat64, nil, nil), NewThrottler(math.Inf(1), nil, nil)} {
		require.True(t, thr.Unlimited())
		called := false
		if thr != nil {
			thr.sleep = func(context.Context, time.Duration) error { called = true; return nil }
			thr.now = tick(testclock.New(t0), time.Hour)
		}
		for range 3 {
			require.NoError(t, thr.MaybeThrottle(context.Background(), 1<<40))
		}
		require.False(t, called)
	}
}

// TestThrottlerContext: the default sleeper gives up when ctx ends.
func TestThrottlerContext(t *testing.T) {
	clk := testclock.New(t0)
	thr := NewThrottler(1, clk.Now, nil)
	clk.Add(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, thr.MaybeThrottle(ctx, 1<<30), context.Canceled) // would sleep for 34 years
}

// TestThrottlerShared: cleaners sharing a throttler are limited together:
// every byte counts toward one rate.
func TestThrottlerShared(t *testing.T) {
	clk := testclock.New(t0)
	var mu sync.Mutex
	var slept time.Duration
	thr := NewThrottler(1000, tick(clk, time.Millisecond), func(_ context.Context, d time.Duration) error {
		mu.Lock()
		slept += d
		mu.Unlock()
		clk.Add(d)
		return nil
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				_ = thr.MaybeThrottle(context.Background(), 10)
			}
		}()
	}
	wg.Wait()
	// 20,000 bytes at 1,000 B/s take 20 s: the 2,000 clock readings (1 ms
	// each) and the sleeps add up to that, but for the last window, not
	// charged yet (at most about 300 readings, 3,000 bytes: 3 s at the rate
	// of which 0.3 s passed).
	mu.Lock()
	defer mu.Unlock()
	total := 2*time.Second + slept
	require.LessOrEqual(t, total, 20*time.Second)
	require.GreaterOrEqual(t, total, 20*time.Second-2800*time.Millisecond)
}

// TestThrottlerSetRate: a new rate (Kafka's updateDesiredRatePerSec, on a
// change of log.cleaner.io.max.bytes.per.second) begins a new check window
// and rules the sleeps from then on; an unlimited one ends them.
func TestThrottlerSetRate(t *testing.T) {
	clk := testclock.New(t0)
	var slept []time.Duration
	thr := NewThrottler(1000, clk.Now, func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		clk.Add(d)
		return nil
	})
	require.Equal(t, 1000.0, thr.Rate())
	clk.Add(200 * time.Millisecond)
	require.NoError(t, thr.MaybeThrottle(context.Background(), 400))
	// The window's 400 bytes are forgotten: the new window begins now.
	thr.SetRate(100)
	require.Equal(t, 100.0, thr.Rate())
	require.False(t, thr.Unlimited())
	clk.Add(400 * time.Millisecond)
	require.NoError(t, thr.MaybeThrottle(context.Background(), 100))
	// 100 B at 100 B/s need 1 s, of which 400 ms passed; at the old rate,
	// 500 B in 600 ms would not have slept.
	require.Equal(t, []time.Duration{600 * time.Millisecond}, slept)

	thr.SetRate(math.MaxFloat64)
	require.True(t, thr.Unlimited())
	slept = nil
	for range 3 {
		clk.Add(time.Second)
		require.NoError(t, thr.MaybeThrottle(context.Background(), 1<<40))
	}
	require.Empty(t, slept)
}

// TestThrottlerSetRateWakesSleepers: a cleaner sleeping under the old rate
// (here for 34 years: 1 GiB at 1 B/s) wakes when the rate changes, with no
// error, and without the clock moving; ctx still ends a sleep.
func TestThrottlerSetRateWakesSleepers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		thr := NewThrottler(1, nil, nil)
		time.Sleep(time.Second)
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- thr.MaybeThrottle(context.Background(), 1<<30) }()
		synctest.Wait()
		require.Empty(t, done, "asleep")
		thr.SetRate(2)
		synctest.Wait()
		require.Len(t, done, 1)
		require.NoError(t, <-done)
		require.Equal(t, start, time.Now(), "woken, not timed out")

		// A sleep under the new rate ends with ctx.
		ctx, cancel := context.WithCancel(context.Background())
		time.Sleep(time.Second)
		go func() { done <- thr.MaybeThrottle(ctx, 1<<30) }()
		synctest.Wait()
		require.Empty(t, done)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}
