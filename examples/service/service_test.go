package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/stretchr/testify/require"
)

// smallIndexes preallocates 64 KiB indexes instead of Kafka's 10 MiB: an
// index left untrimmed by a crash is scanned on recovery, which the race
// detector makes slow.
var smallIndexes = logtest.DirConfig(func(c *log.Config) { c.DefaultTopic.SegmentIndexBytes = 64 << 10 })

// events returns n order events for seven customers: mostly placements,
// every fifth a cancellation.
func events(n int) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Type: OrderPlaced, Order: fmt.Sprintf("o-%d", i), Customer: fmt.Sprintf("c%d", i%7), Cents: int64(1 + i%13*100)}
		if i%5 == 4 {
			evs[i].Type = OrderCancelled
		}
	}
	return evs
}

// sums is a Total without its position: what the events add up to.
type sums struct {
	Orders int
	Cents  int64
	Events int
}

// fold computes the view the events must give, each counted once.
func fold(evs []Event) map[string]sums {
	out := map[string]sums{}
	for _, ev := range evs {
		s := out[ev.Customer]
		if ev.Type == OrderPlaced {
			s.Orders, s.Cents = s.Orders+1, s.Cents+ev.Cents
		} else {
			s.Orders, s.Cents = s.Orders-1, s.Cents-ev.Cents
		}
		s.Events++
		out[ev.Customer] = s
	}
	return out
}

func withoutPositions(view map[string]Total) map[string]sums {
	out := map[string]sums{}
	for c, t := range view {
		out[c] = sums{t.Orders, t.Cents, t.Events}
	}
	return out
}

func publish(t *testing.T, svc *Service, evs []Event) {
	t.Helper()
	for _, ev := range evs {
		require.NoError(t, svc.publish(context.Background(), ev))
	}
}

// TestProjection checks the write path (what was produced, where, in which
// order) and the view, then restarts the service and checks the restored view.
func TestProjection(t *testing.T) {
	ctx := context.Background()
	b := logtest.New(t)
	svc, err := Start(ctx, b.Dir())
	require.NoError(t, err)
	require.NoError(t, svc.PlaceOrder(ctx, "o-1", "alice", 1200))
	require.NoError(t, svc.PlaceOrder(ctx, "o-2", "dave", 350))
	require.NoError(t, svc.CancelOrder(ctx, "o-1", "alice", 1200))
	require.NoError(t, svc.PlaceOrder(ctx, "o-3", "alice", 99))

	// The events, keyed by customer: each customer's in its murmur2
	// partition, in order.
	b.AssertProduced(t, EventsTopic,
		logtest.KV("alice", `{"type":"OrderPlaced","order":"o-1","customer":"alice","cents":1200}`),
		logtest.KV("dave", `{"type":"OrderPlaced","order":"o-2","customer":"dave","cents":350}`),
		logtest.KV("alice", `{"type":"OrderCancelled","order":"o-1","customer":"alice","cents":1200}`),
		logtest.KV("alice", `{"type":"OrderPlaced","order":"o-3","customer":"alice","cents":99}`),
	)

	require.NoError(t, svc.CaughtUp(ctx))
	want := map[string]sums{"alice": {Orders: 1, Cents: 99, Events: 3}, "dave": {Orders: 1, Cents: 350, Events: 1}}
	require.Equal(t, want, withoutPositions(svc.Totals()))
	require.Equal(t, Stats{Applied: 4, Skipped: 0, Commits: svc.Stats().Commits}, svc.Stats())
	// The changelog's latest value per customer is the view, in the
	// events' partition.
	alice := b.Expect(t, TotalsTopic).Key("alice").Records()
	require.NotEmpty(t, alice)
	last := alice[len(alice)-1]
	require.JSONEq(t, `{"orders":1,"cents":99,"events":3,"partition":0,"offset":2}`, string(last.Value))
	require.Equal(t, int32(0), last.Partition)
	require.NoError(t, svc.Close(ctx))

	svc, err = Start(ctx, b.Dir())
	require.NoError(t, err)
	require.Equal(t, want, withoutPositions(svc.Totals()), "restored from the changelog")
	require.NoError(t, svc.CaughtUp(ctx))
	require.Zero(t, svc.Stats().Applied, "nothing delivered again after a clean stop")
	require.NoError(t, svc.Close(ctx))
}

// TestRestartMidStream stops the service — cleanly, or by a simulated power
// loss at a random moment — while its projection is behind, restarts it on
// the same directory, and so on until every event is placed; then checks
// that the view counts every event exactly once. After clean stops no
// event is even delivered twice; after crashes some are, and are skipped.
func TestRestartMidStream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash bool
	}{
		{"stop", false},
		{"crash", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 600
			ctx := context.Background()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			b := logtest.New(t, smallIndexes)
			evs := events(n)
			applied, skipped, runs := 0, 0, 0
			for next := 0; next < n; runs++ {
				svc, err := Start(ctx, b.Dir())
				require.NoError(t, err)
				chunk := min(n-next, 1+rng.IntN(120))
				publish(t, svc, evs[next:next+chunk])
				next += chunk
				if tc.crash {
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond) // where in a batch the crash lands
					b.Crash()
					_ = svc.Close(ctx) // against the lost directory: errors expected
					skipped += svc.Stats().Skipped
					continue
				}
				require.NoError(t, svc.Close(ctx))
				applied += svc.Stats().Applied
				skipped += svc.Stats().Skipped
			}
			svc, err := Start(ctx, b.Dir())
			require.NoError(t, err)
			require.NoError(t, svc.CaughtUp(ctx))
			require.Equal(t, fold(evs), withoutPositions(svc.Totals()), "every event counted exactly once")
			st := svc.Stats()
			require.NoError(t, svc.Close(ctx))
			t.Logf("%d runs; %d events delivered again and skipped; the last run applied %d", runs, skipped+st.Skipped, st.Applied)
			if !tc.crash {
				require.Equal(t, n, applied+st.Applied, "after clean stops each event is applied once")
				require.Zero(t, skipped+st.Skipped, "and never delivered twice")
			}

			svc, err = Start(ctx, b.Dir())
			require.NoError(t, err)
			require.Equal(t, fold(evs), withoutPositions(svc.Totals()), "restored from the changelog")
			require.NoError(t, svc.Close(ctx))
		})
	}
}

// TestProjectionSkipsRedelivered delivers events again, as after a crash
// between the changelog write and the offset commit: they are skipped.
func TestProjectionSkipsRedelivered(t *testing.T) {
	ctx := context.Background()
	b := logtest.New(t)
	svc, err := Start(ctx, b.Dir())
	require.NoError(t, err)
	evs := events(40)
	publish(t, svc, evs)
	require.NoError(t, svc.CaughtUp(ctx))
	require.NoError(t, svc.Close(ctx))

	// Rewind the group, as a lost commit would leave it.
	b.Restart()
	require.NoError(t, resetGroup(ctx, b))
	svc, err = Start(ctx, b.Dir())
	require.NoError(t, err)
	require.NoError(t, svc.CaughtUp(ctx))
	require.Equal(t, fold(evs), withoutPositions(svc.Totals()))
	require.Equal(t, Stats{Applied: 0, Skipped: 40, Commits: svc.Stats().Commits}, svc.Stats())
	require.NoError(t, svc.Close(ctx))
}

func resetGroup(ctx context.Context, b *logtest.Broker) error {
	tps := make([]consumer.TopicPartition, Partitions)
	for p := range tps {
		tps[p] = consumer.TopicPartition{Topic: EventsTopic, Partition: int32(p)}
	}
	_, err := consumer.ResetOffsets(ctx, b.Dir(), Group, tps, consumer.ResetEarliest)
	return err
}
