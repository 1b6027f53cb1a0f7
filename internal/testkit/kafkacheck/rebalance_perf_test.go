package kafkacheck

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPerfRebalance measures how long three franz-go members starting
// together take to own their shares of a six-partition topic (two each,
// none held twice, by their assignment callbacks), with the classic
// protocol (cooperative-sticky, the client's leader assigning) and with
// KIP-848's (the broker assigning), against Kafka's broker and
// kafkalite's wire server on this machine, each broker with its defaults
// (Kafka: group.initial.rebalance.delay.ms 3 s for classic groups,
// group.consumer.heartbeat.interval.ms 5 s; kafkaserver: no initial
// delay, the same heartbeat interval). Rounds
// (KAFKALITE_KAFKA_PERF_ROUNDS, default 3) interleave the brokers.
func TestPerfRebalance(t *testing.T) {
	k, _, _ := perfSetup(t)
	rounds := perfRounds(t)
	targets := perfBrokers(t, k)
	rows := map[string][]time.Duration{}
	for round := range rounds {
		for _, tg := range targets {
			addr, _, stop := tg.start(nil)
			require.NoError(t, createKgoTopic(context.Background(), addr, "rebalance", 6))
			for _, protocol := range []string{"classic", "consumer"} {
				d, err := timeRebalance(addr, fmt.Sprintf("rb-%s-%d", protocol, round), protocol)
				require.NoError(t, err, "round %d, %s, %s", round, tg.name, protocol)
				name := fmt.Sprintf("%s protocol: %s", protocol, tg.name)
				rows[name] = append(rows[name], d)
			}
			stop()
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Three franz-go members starting together until each owns two of six partitions, %d CPUs, %s; median (range) of %d interleaved rounds\n",
		runtime.NumCPU(), runtime.GOARCH, rounds)
	writeTable(&sb, rows, []column[time.Duration]{
		{"until settled, ms", "%.0f", func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }},
	})
	report(t, sb.String())
}

// timeRebalance starts three members of group at once and returns the
// time until each owns two of the topic's six partitions and none owns one
// another does.
func timeRebalance(addr, group, protocol string) (time.Duration, error) {
	var mu sync.Mutex
	owned := map[int]map[int32]bool{}
	settled := make(chan struct{})
	check := func() {
		seen := map[int32]bool{}
		for i := range 3 {
			if len(owned[i]) != 2 {
				return
			}
			for p := range owned[i] {
				if seen[p] {
					return
				}
				seen[p] = true
			}
		}
		select {
		case <-settled:
		default:
			close(settled)
		}
	}
	start := time.Now()
	var clients []*kgo.Client
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	for i := range 3 {
		owned[i] = map[int32]bool{}
		opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics("rebalance"),
			kgo.Balancers(kgo.CooperativeStickyBalancer()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				defer mu.Unlock()
				for _, p := range m["rebalance"] {
					owned[i][p] = true
				}
				check()
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				defer mu.Unlock()
				for _, p := range m["rebalance"] {
					delete(owned[i], p)
				}
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				defer mu.Unlock()
				for _, p := range m["rebalance"] {
					delete(owned[i], p)
				}
			}),
		}
		if protocol == "consumer" {
			opts = append(opts, kgo.ServerSideBalancer())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return 0, err
		}
		clients = append(clients, cl)
		go func() {
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
			}
		}()
	}
	select {
	case <-settled:
		return time.Since(start), nil
	case <-time.After(2 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		return 0, fmt.Errorf("not settled after 2 minutes: %v", owned)
	}
}
