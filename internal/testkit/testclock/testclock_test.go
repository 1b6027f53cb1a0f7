package testclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
)

func TestClock(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	c := testclock.New(t0)
	require.Equal(t, t0, c.Now())
	require.Equal(t, t0, c.Now(), "reading does not move it")
	c.Add(time.Second)
	require.Equal(t, t0.Add(time.Second), c.Now())
	c.Add(-time.Millisecond)
	require.Equal(t, t0.Add(999*time.Millisecond), c.Now())

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c.Add(time.Millisecond)
			_ = c.Now()
		})
	}
	wg.Wait()
	require.Equal(t, t0.Add(1007*time.Millisecond), c.Now())
}
