// Package testclock holds the clock that tests of the log, its
// coordinators, the cleaner and the producer move by hand: it reads the
// time it was last set to, and is safe for concurrent use, so its Now can
// be a package's injected clock while the test moves it.
package testclock

import (
	"sync"
	"time"
)

// Clock is a clock moved by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock that reads now until it is moved.
func New(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
