package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/vfs"
	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

// TestStress runs idempotent and transactional producers, two consumer
// groups of two members (read_uncommitted and read_committed), retention
// every 5 ms and topic creation and deletion at once, on the memory FS,
// and checks that each group consumes every acknowledged record exactly
// once (read_committed: none of an aborted transaction) and that Close
// leaves no goroutine behind. KAFKALITE_STRESS_SCALE multiplies the
// records (default 1: 4 × 500 idempotent, 2 × 60 transactions).
func TestStress(t *testing.T) {
	scale := 1
	if n, err := strconv.Atoi(os.Getenv("KAFKALITE_STRESS_SCALE")); err == nil && n > 0 {
		scale = n
	}
	goroutines := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	cfg.RetentionCheckInterval = 5 * time.Millisecond
	d, err := log.Open(ctx, "/stress", cfg)
	require.NoError(t, err)
	const topic = "s"
	_, err = d.CreateTopic(ctx, topic, 4, map[string]string{"segment.bytes": "8192", "segment.index.bytes": "4096"})
	require.NoError(t, err)

	// Consumers first, so that both groups are stable before any record:
	// without rebalances, sync commits after each poll deliver each record
	// once.
	type group struct {
		mu   sync.Mutex
		seen map[string]int
	}
	groups := map[string]*group{"ru": {seen: map[string]int{}}, "rc": {seen: map[string]int{}}}
	var members []*consumer.Consumer
	for name := range groups {
		for range 2 {
			ccfg := consumer.DefaultConfig()
			ccfg.GroupID = name
			ccfg.EnableAutoCommit = false
			ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
			if name == "rc" {
				ccfg.IsolationLevel = consumer.ReadCommitted
			}
			c, err := consumer.New(d, ccfg)
			require.NoError(t, err)
			require.NoError(t, c.Subscribe([]string{topic}, nil))
			members = append(members, c)
		}
	}
	var cwg sync.WaitGroup
	cctx, stopConsumers := context.WithCancel(ctx)
	assigned := make(chan struct{}, len(members))
	for i, c := range members {
		cwg.Go(func() {
			name := c.GroupMetadata().GroupID
			gr := groups[name]
			announced := false
			for cctx.Err() == nil {
				pctx, cancel := context.WithTimeout(cctx, 20*time.Millisecond)
				recs, err := c.Poll(pctx)
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					t.Errorf("member %d: %v", i, err)
					return
				}
				if !announced && len(c.Assignment()) > 0 {
					announced = true
					assigned <- struct{}{}
				}
				if len(recs) == 0 {
					continue
				}
				gr.mu.Lock()
				for _, r := range recs {
					gr.seen[string(r.Value)]++
				}
				gr.mu.Unlock()
				if err := c.CommitSync(cctx, nil); err != nil && cctx.Err() == nil {
					t.Errorf("member %d: commit: %v", i, err)
					return
				}
			}
		})
	}
	for range members {
		select {
		case <-assigned:
		case <-ctx.Done():
			t.Fatal("the groups never settled")
		}
	}

	var mu sync.Mutex
	committed, aborted := map[string]bool{}, map[string]bool{}
	var pwg sync.WaitGroup
	for p := range 4 {
		pwg.Go(func() {
			pr, err := New(d, DefaultConfig())
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 500 * scale {
				v := fmt.Sprintf("p%d-%d", p, j)
				if _, err := pr.Send(ctx, &Record{Topic: topic, Key: []byte(v), Value: []byte(v)}, func(_ RecordMetadata, err error) {
					if err == nil {
						mu.Lock()
						committed[v] = true
						mu.Unlock()
					}
				}); err != nil {
					t.Error(err)
				}
			}
			if err := pr.Close(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	for p := range 2 {
		pwg.Go(func() {
			pcfg := DefaultConfig()
			pcfg.TransactionalID = fmt.Sprintf("stress-%d", p)
			pr, err := New(d, pcfg)
			if err != nil {
				t.Error(err)
				return
			}
			defer func() {
				if err := pr.Close(ctx); err != nil {
					t.Error(err)
				}
			}()
			if err := pr.InitTransactions(ctx); err != nil {
				t.Error(err)
				return
			}
			for k := range 60 * scale {
				if err := pr.BeginTransaction(); err != nil {
					t.Error(err)
					return
				}
				var vs []string
				for i := range 1 + k%5 {
					v := fmt.Sprintf("t%d-%d-%d", p, k, i)
					vs = append(vs, v)
					if _, err := pr.Send(ctx, &Record{Topic: topic, Key: []byte(v), Value: []byte(v)}, nil); err != nil {
						t.Error(err)
						return
					}
				}
				abort := k%4 == 3
				if abort {
					err = pr.AbortTransaction(ctx)
				} else {
					err = pr.CommitTransaction(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, v := range vs {
					if abort {
						aborted[v] = true
					} else {
						committed[v] = true
					}
				}
				mu.Unlock()
			}
		})
	}
	pwg.Go(func() { // topic churn, with retention deleting its segments
		for k := range 30 * scale {
			name := fmt.Sprintf("churn-%d", k)
			if _, err := d.CreateTopic(ctx, name, 2, map[string]string{"segment.bytes": "1024", "retention.bytes": "2048", "segment.index.bytes": "4096"}); err != nil {
				t.Error(err)
				return
			}
			if err := d.DeleteTopic(name); err != nil {
				t.Error(err)
				return
			}
		}
	})
	pwg.Wait()

	// Wait until each group has everything, then check exactly once.
	want := map[string]int{"ru": len(committed) + len(aborted), "rc": len(committed)}
	for name, gr := range groups {
		for {
			gr.mu.Lock()
			n := len(gr.seen)
			gr.mu.Unlock()
			if n >= want[name] || ctx.Err() != nil {
				break
			}
			select {
			case <-d.Changed():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	stopConsumers()
	cwg.Wait()
	for _, c := range members {
		require.NoError(t, c.Close(context.Background()))
	}
	for name, gr := range groups {
		for v := range committed {
			require.Equal(t, 1, gr.seen[v], "group %s: %s consumed once", name, v)
		}
		for v := range aborted {
			if name == "rc" {
				require.Zero(t, gr.seen[v], "group rc: aborted %s never delivered", v)
			} else {
				require.Equal(t, 1, gr.seen[v], "group ru: %s consumed once", v)
			}
		}
		require.Len(t, gr.seen, want[name], "group %s: nothing else", name)
	}
	require.NoError(t, d.Close())

	// No goroutine outlives Close.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond) // polling NumGoroutine: there is no signal for "goroutine exited"
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d committed and %d aborted records, each group exactly once", len(committed), len(aborted))
}
