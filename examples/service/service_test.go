package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/record"
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

// withCodec is the service's configuration with compression codec.
func withCodec(codec record.Compression) Config {
	cfg := DefaultConfig()
	cfg.CompressionType = codec
	return cfg
}

// requireCodec checks that every data batch of both topics is compressed
// with codec: the configuration reached both producers.
func requireCodec(t *testing.T, d *log.Dir, codec record.Compression) {
	t.Helper()
	for _, topic := range []string{EventsTopic, TotalsTopic} {
		batches := 0
		for p := range int32(Partitions) {
			l, err := d.Partition(topic, p)
			require.NoError(t, err)
			for off := l.LogStartOffset(); off < l.LogEndOffset(); {
				off, err = l.ReadRecords(off, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
					if r.Offset == h.BaseOffset {
						batches++
					}
					if got := h.Attributes.Compression(); got != codec {
						return fmt.Errorf("%s-%d@%d: a batch compressed with %v, want %v", topic, p, r.Offset, got, codec)
					}
					return nil
				})
				require.NoError(t, err)
			}
		}
		require.Positive(t, batches, "%s: data batches", topic)
	}
}

// TestProjection checks the write path (what was produced, where, in which
// order) and the view, then restarts the service and checks the restored
// view, for each codec.
func TestProjection(t *testing.T) {
	matrix.EachCodec(t, testProjection)
}

func testProjection(t *testing.T, codec record.Compression) {
	ctx := context.Background()
	b := logtest.New(t)
	cfg := withCodec(codec)
	svc, err := Start(ctx, b.Dir(), cfg)
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

	svc, err = Start(ctx, b.Dir(), cfg)
	require.NoError(t, err)
	require.Equal(t, want, withoutPositions(svc.Totals()), "restored from the changelog")
	require.NoError(t, svc.CaughtUp(ctx))
	require.Zero(t, svc.Stats().Applied, "nothing delivered again after a clean stop")
	require.NoError(t, svc.Close(ctx))
	requireCodec(t, b.Dir(), codec)
}

// TestRestartMidStream stops the service — cleanly, or by a simulated power
// loss at a random moment — while its projection is behind, restarts it on
// the same directory, and so on until every event is placed; then checks
// that the view counts every event exactly once. After clean stops no
// event is even delivered twice; after crashes some are, and are skipped.
// Each codec, each way of stopping.
func TestRestartMidStream(t *testing.T) {
	matrix.EachCodec(t, testRestartMidStream)
}

func testRestartMidStream(t *testing.T, codec record.Compression) {
	cfg := withCodec(codec)
	for _, tc := range []struct {
		name  string
		crash bool
	}{
		{"stop", false},
		{"crash", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 300
			ctx := context.Background()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			b := logtest.New(t, smallIndexes)
			evs := events(n)
			applied, skipped, runs := 0, 0, 0
			for next := 0; next < n; runs++ {
				svc, err := Start(ctx, b.Dir(), cfg)
				require.NoError(t, err)
				chunk := min(n-next, 1+rng.IntN(60))
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
			svc, err := Start(ctx, b.Dir(), cfg)
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

			svc, err = Start(ctx, b.Dir(), cfg)
			require.NoError(t, err)
			require.Equal(t, fold(evs), withoutPositions(svc.Totals()), "restored from the changelog")
			require.NoError(t, svc.Close(ctx))
			requireCodec(t, b.Dir(), codec)
		})
	}
}

// TestProjectionSkipsRedelivered delivers events again, as after a crash
// between the changelog write and the offset commit: they are skipped.
// Each codec.
func TestProjectionSkipsRedelivered(t *testing.T) {
	matrix.EachCodec(t, testProjectionSkipsRedelivered)
}

func testProjectionSkipsRedelivered(t *testing.T, codec record.Compression) {
	ctx := context.Background()
	b := logtest.New(t)
	cfg := withCodec(codec)
	svc, err := Start(ctx, b.Dir(), cfg)
	require.NoError(t, err)
	evs := events(40)
	publish(t, svc, evs)
	require.NoError(t, svc.CaughtUp(ctx))
	require.NoError(t, svc.Close(ctx))

	// Rewind the group, as a lost commit would leave it.
	b.Restart()
	require.NoError(t, resetGroup(ctx, b))
	svc, err = Start(ctx, b.Dir(), cfg)
	require.NoError(t, err)
	require.NoError(t, svc.CaughtUp(ctx))
	require.Equal(t, fold(evs), withoutPositions(svc.Totals()))
	require.Equal(t, Stats{Applied: 0, Skipped: 40, Commits: svc.Stats().Commits}, svc.Stats())
	require.NoError(t, svc.Close(ctx))
	requireCodec(t, b.Dir(), codec)
}

func resetGroup(ctx context.Context, b *logtest.Broker) error {
	tps := make([]consumer.TopicPartition, Partitions)
	for p := range tps {
		tps[p] = consumer.TopicPartition{Topic: EventsTopic, Partition: int32(p)}
	}
	_, err := consumer.ResetOffsets(ctx, b.Dir(), Group, tps, consumer.ResetToEarliest())
	return err
}

// TestDemo runs the program's demo with each codec, 40 orders a run, and
// checks what it prints: the first run starts from an empty view, the
// second restores the first one's five customers from the changelog, and
// each run's view adds up the orders placed so far (two in twelve of them
// cancelled, i%6 == 5).
func TestDemo(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		const orders = 40
		var out bytes.Buffer
		dir := t.TempDir()
		require.NoError(t, demo(context.Background(), dir, orders, withCodec(codec), &out))

		type total struct {
			orders int
			cents  int64
		}
		run := map[string]total{} // the view after one run
		for i := range orders {
			c := run[fmt.Sprintf("customer-%d", i%5)]
			if i%6 != 5 {
				c.orders++
				c.cents += int64(100 + i%7*250)
			}
			run[fmt.Sprintf("customer-%d", i%5)] = c
		}
		var want []string
		for r := 1; r <= 2; r++ {
			restored := 0
			if r == 2 {
				restored = len(run)
			}
			want = append(want, fmt.Sprintf("run %d: view restored from %s: %d customers", r, TotalsTopic, restored))
			for c := range 5 {
				name := fmt.Sprintf("customer-%d", c)
				want = append(want, fmt.Sprintf("%s %d orders %.2f", name, r*run[name].orders, float64(int64(r)*run[name].cents)/100))
			}
			want = append(want, "projection")
		}
		// The lines without what depends on timing: the position of each
		// customer's last event, the projection's counts.
		position := regexp.MustCompile(`\s+\(\d+ events, last at ` + EventsTopic + `-\d@\d+\)$`)
		var got []string
		for line := range strings.Lines(out.String()) {
			line = strings.TrimSpace(position.ReplaceAllString(strings.TrimSuffix(line, "\n"), ""))
			if strings.HasPrefix(line, "projection:") {
				line = "projection"
			}
			got = append(got, strings.Join(strings.Fields(line), " "))
		}
		require.Equal(t, want, got, "the demo's output:\n%s", out.String())

		d, err := log.Open(context.Background(), dir, dirConfig())
		require.NoError(t, err)
		defer func() { require.NoError(t, d.Close()) }()
		requireCodec(t, d, codec)
	})
}
