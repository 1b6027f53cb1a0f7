package consumer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

// startTogether starts members consumers of group at once with the
// default configuration (heartbeat.interval.ms 3000), each polling in its
// own goroutine as an application's loop does, and returns how long it
// took until every member owned its share of the topic's partitions (an
// even split, as the rebalance listeners report it) and no partition was
// owned twice. Every member is closed before it returns.
func startTogether(tb testing.TB, d *log.Dir, topic string, partitions int32, group string, members int) time.Duration {
	tb.Helper()
	share := int(partitions) / members
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		owned = make([]map[TopicPartition]bool, members)
		took  time.Duration
		stop  = make(chan struct{})
		done  = make(chan struct{}) // closed when every member owns its share
	)
	start := time.Now()
	// check runs with mu held, after a listener changed what a member owns.
	check := func() {
		seen := map[TopicPartition]bool{}
		for _, o := range owned {
			if len(o) != share {
				return
			}
			for tp := range o {
				if seen[tp] {
					return
				}
				seen[tp] = true
			}
		}
		if took == 0 {
			took = time.Since(start)
			close(done)
		}
	}
	for i := range members {
		owned[i] = map[TopicPartition]bool{}
		cfg := DefaultConfig()
		cfg.GroupID = group
		cfg.EnableAutoCommit = false
		c, err := New(d, cfg)
		require.NoError(tb, err)
		drop := func(_ context.Context, tps []TopicPartition) {
			mu.Lock()
			defer mu.Unlock()
			for _, tp := range tps {
				delete(owned[i], tp)
			}
		}
		require.NoError(tb, c.Subscribe([]string{topic}, RebalanceFuncs{
			Revoked: drop,
			Assigned: func(_ context.Context, tps []TopicPartition) {
				mu.Lock()
				defer mu.Unlock()
				for _, tp := range tps {
					owned[i][tp] = true
				}
				check()
			},
		}))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(context.Background())
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				_, _ = c.Poll(ctx)
				cancel()
			}
		}()
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		tb.Errorf("the members did not get their shares within 30 s")
	}
	close(stop)
	wg.Wait()
	return took
}

// TestMembersStartedTogetherGetTheirShares: three members started at once
// each own a third of the partitions before a heartbeat interval passes.
// The test runs in fake time (testing/synctest), so the bound is exact:
// members that learned of the rebalance from their next heartbeat took
// 3 s of it; told at once, they take no more than the Polls' waits.
func TestMembersStartedTogetherGetTheirShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.topic("t", 6)
		took := startTogether(t, e.dir, "t", 6, "g", 3)
		require.Less(t, took, DefaultConfig().HeartbeatInterval, "the members waited for a heartbeat to rejoin")
	})
}

// BenchmarkMembersStartTogether: three members with the default
// configuration started at once, until each owns its share; ms/shares is
// that time.
func BenchmarkMembersStartTogether(b *testing.B) {
	d, err := log.Open(context.Background(), b.TempDir(), log.DefaultConfig())
	require.NoError(b, err)
	defer d.Close()
	_, err = d.CreateTopic(context.Background(), "t", 6, nil)
	require.NoError(b, err)
	var total time.Duration
	for i := range b.N {
		total += startTogether(b, d, "t", 6, fmt.Sprintf("g%d", i), 3)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/shares")
}
