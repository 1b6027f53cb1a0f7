package kafkacheck

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The quota measurement: 1 MiB/s byte rates, a greedy franz-go client
// measured over quotaPhases phases of quotaPhase each, the first from a cold
// sensor (the client id's first request), the second right after it.
const (
	quotaRate   = 1 << 20
	quotaPhase  = 20 * time.Second
	quotaPhases = 3
	quotaRecord = 16 << 10
)

// quotaPhaseFigures is what one phase of a quota run measured: the bytes
// the client got per second as a ratio to the quota, and the throttle
// times the broker sent.
type quotaPhaseFigures struct {
	ratio                    float64
	throttles                int
	throttleSum, throttleMax time.Duration
}

func (f quotaPhaseFigures) String() string {
	return fmt.Sprintf("%.3f× the quota, %d throttles (total %v, max %v)", f.ratio, f.throttles, f.throttleSum, f.throttleMax)
}

// quotaMeter buckets bytes and throttle times into the phases of a run
// that started at start.
type quotaMeter struct {
	mu     sync.Mutex
	start  time.Time
	phases [quotaPhases]quotaPhaseFigures
	bytes  [quotaPhases]int64
}

func (m *quotaMeter) phase(now time.Time) int {
	return int(now.Sub(m.start) / quotaPhase)
}

func (m *quotaMeter) addBytes(n int, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.phase(now); p < len(m.bytes) {
		m.bytes[p] += int64(n)
	}
}

// OnBrokerThrottle is kgo's HookBrokerThrottle.
func (m *quotaMeter) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.start.IsZero() {
		return
	}
	if p := m.phase(time.Now()); p < len(m.phases) {
		f := &m.phases[p]
		f.throttles++
		f.throttleSum += d
		f.throttleMax = max(f.throttleMax, d)
	}
}

func (m *quotaMeter) figures() [quotaPhases]quotaPhaseFigures {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.phases
	for i := range out {
		out[i].ratio = float64(m.bytes[i]) / quotaPhase.Seconds() / quotaRate
	}
	return out
}

// measureQuotas sets producer_byte_rate and consumer_byte_rate of 1 MiB/s
// for the client ids quota-producer and quota-consumer with Kafka's
// kafka-configs on the broker at addr, then runs a greedy producer for the
// phases (records of quotaRecord bytes, kgo's defaults otherwise: one
// request of up to 1 MB in flight), fills the topic further with an
// unlimited client, and runs a greedy consumer from its start for the
// phases.
func measureQuotas(t *testing.T, k *Kafka, addr string) (produce, consume [quotaPhases]quotaPhaseFigures) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const topic = "quota"
	require.NoError(t, createKgoTopic(ctx, addr, topic, 1))
	k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", addr, "--entity-type", "clients",
		"--entity-name", "quota-producer", "--alter", "--add-config", fmt.Sprintf("producer_byte_rate=%d", quotaRate))
	k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", addr, "--entity-type", "clients",
		"--entity-name", "quota-consumer", "--alter", "--add-config", fmt.Sprintf("consumer_byte_rate=%d", quotaRate))
	// Kafka's broker applies a quota once its metadata has it.
	time.Sleep(2 * time.Second)

	value := make([]byte, quotaRecord)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	produceFor := func(clientID string, m *quotaMeter, d time.Duration, total int64) {
		opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(clientID), kgo.DefaultProduceTopic(topic),
			kgo.ProducerBatchCompression(kgo.NoCompression())}
		if m != nil {
			opts = append(opts, kgo.WithHooks(m))
		}
		cl, err := kgo.NewClient(opts...)
		require.NoError(t, err)
		defer cl.Close()
		pctx, stop := context.WithTimeout(ctx, d)
		defer stop()
		var mu sync.Mutex
		var firstErr error
		var sent int64
		if m != nil {
			m.mu.Lock()
			m.start = time.Now()
			m.mu.Unlock()
		}
		for pctx.Err() == nil && (total == 0 || sent < total) {
			cl.Produce(pctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					if firstErr == nil && pctx.Err() == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				if m != nil {
					m.addBytes(len(r.Value), time.Now())
				}
			})
			sent += int64(len(value))
		}
		if total > 0 {
			require.NoError(t, cl.Flush(ctx))
		}
		mu.Lock()
		defer mu.Unlock()
		require.NoError(t, firstErr)
	}

	var pm quotaMeter
	produceFor("quota-producer", &pm, quotaPhases*quotaPhase, 0)
	produce = pm.figures()
	// Enough for the consumer's phases at well over the quota.
	produceFor("quota-filler", nil, 5*time.Minute, 2*quotaPhases*int64(quotaPhase.Seconds())*quotaRate)

	var cm quotaMeter
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("quota-consumer"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(&cm))
	require.NoError(t, err)
	defer cl.Close()
	cm.mu.Lock()
	cm.start = time.Now()
	cm.mu.Unlock()
	cctx, stop := context.WithTimeout(ctx, quotaPhases*quotaPhase)
	defer stop()
	for cctx.Err() == nil {
		fs := cl.PollFetches(cctx)
		now := time.Now()
		fs.EachError(func(_ string, _ int32, err error) {
			if cctx.Err() == nil {
				require.NoError(t, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { cm.addBytes(len(r.Value), now) })
	}
	return produce, cm.figures()
}

// TestPerfQuotas measures a greedy franz-go producer and
// consumer under 1 MiB/s producer_byte_rate and consumer_byte_rate on
// Kafka 4.4's broker and then on the server, in the same run, over 20 s
// from a cold quota sensor and the 40 s after, and logs the figures (the
// server's manual quotes them). It asserts only that both brokers
// throttle and keep each client near the quota (generous bounds: the
// rates depend on the machine's load); the figures are to be read. It
// takes about 5 min: a measurement, run by .ci/kafka-perf, not by CI.
func TestPerfQuotas(t *testing.T) {
	if os.Getenv("KAFKALITE_KAFKA_PERF") != "1" {
		t.Skip("a measurement: KAFKALITE_KAFKA_PERF=1 runs it (.ci/kafka-perf)")
	}
	k := Get(t)
	b := k.NewBroker(t, nil)
	b.Start()
	kp, kc := measureQuotas(t, k, b.Bootstrap())
	b.Stop()
	s := startKafkaServer(t, k)
	sp, sc := measureQuotas(t, k, s.addr)
	for _, r := range []struct {
		what string
		f    [quotaPhases]quotaPhaseFigures
	}{{"Kafka produce", kp}, {"server produce", sp}, {"Kafka consume", kc}, {"server consume", sc}} {
		var total float64
		for _, f := range r.f {
			total += f.ratio / quotaPhases
		}
		t.Logf("%s: %.3f× the quota over %v; by %v from cold: %v; %v; %v", r.what, total, quotaPhases*quotaPhase, quotaPhase, r.f[0], r.f[1], r.f[2])
		for i, f := range r.f {
			require.Positive(t, f.throttles, "%s phase %d: throttled", r.what, i)
			require.InDelta(t, 1, f.ratio, 0.6, "%s phase %d", r.what, i)
		}
	}
}
