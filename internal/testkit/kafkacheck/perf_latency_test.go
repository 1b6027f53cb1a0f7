package kafkacheck

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPerfLatency measures Kafka's broker and kafkalite's wire-protocol
// server (examples/kafkaserver) at fixed rates with Kafka's own tools, in
// one run, under the switch of TestPerfAnchor (.ci/kafka-perf).
//
// Durability is made alike: with acks=all both sides fsync before they
// acknowledge (the broker runs with log.flush.interval.messages=1, so
// that each append is flushed before its produce is answered; kafkaserver
// always fsyncs for acks=all); with acks=1 neither does (Kafka's
// defaults). The workload is kafka-producer-perf-test's: records of 100
// bytes to a topic of one partition, the producer at its defaults
// (batch.size 16384, linger.ms 5).
//
//  1. Peaks: the producer perf test at full speed (-records records,
//     KAFKALITE_KAFKA_PERF_RECORDS), against each side and each acks.
//  2. Fixed rates: --throughput at 25 %, 50 % and 90 % of the broker's
//     median peak for that acks, for KAFKALITE_KAFKA_PERF_SECONDS
//     (default 20) seconds after 5 s of warm-up (--warmup-records: the
//     figures are the tool's steady-state line), against each side: the
//     records/s reached, the tool's latency percentiles (send to
//     acknowledgement, whole milliseconds as the tool prints them), the
//     server's CPU over the run (cores) and its peak resident memory.
//  3. End to end: Kafka's EndToEndLatency (one record at a time, sent
//     synchronously and read back by a consumer with fetch.max.wait.ms
//     0), 5,000 records of 100 bytes, each acks.
//
// Besides, each side's resident memory idle: 3 s after it started, with
// no topic. Each round starts each side afresh; the rounds
// (KAFKALITE_KAFKA_PERF_ROUNDS, default 3) interleave the sides.
func TestPerfLatency(t *testing.T) {
	k, records, _ := perfSetup(t)
	rounds := perfRounds(t)
	seconds := 20
	if v := os.Getenv("KAFKALITE_KAFKA_PERF_SECONDS"); v != "" {
		var err error
		seconds, err = strconv.Atoi(v)
		require.NoError(t, err)
	}

	// Each side is started afresh for each acks; the broker fsyncs each
	// append for acks=all.
	sides := perfBrokers(t, k)
	brokerProps := map[string]map[string]string{"all": {"log.flush.interval.messages": "1"}}
	acksModes := []string{"1", "all"}
	// The first seconds of a fixed-rate run are the tool's warm-up (its
	// JVM compiling, the first metadata), left out of its figures.
	const warmupSeconds = 5
	fractions := []int{25, 50, 90}

	peaks := map[string][]latencyRun{} // by "side, acks"
	fixed := map[string][]latencyRun{} // by "acks, fraction, side"
	e2e := map[string][]latencyRun{}   // by "side, acks"
	idle := map[string][]float64{}     // by side, MB
	rates := map[string]int{}          // by acks, records/s
	topicN := 0
	topic := func() string { topicN++; return fmt.Sprintf("latency-%d", topicN) }
	// produce runs the producer perf test; with warmup > 0 its figures
	// are the tool's steady-state line, which leaves out the first warmup
	// records.
	produce := func(addr string, stats func() procStats, acks string, throughput, n, warmup int) latencyRun {
		tp := topic()
		k.Client(t, "", "create-topic", addr, tp, "1")
		before, start := stats(), time.Now()
		out := k.Measure(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", tp, "--num-records", strconv.Itoa(n),
			"--warmup-records", strconv.Itoa(warmup), "--record-size", "100", "--throughput", strconv.Itoa(throughput),
			"--producer-props", "bootstrap.servers="+addr, "acks="+acks)
		wall, after := time.Since(start), stats()
		r := parseLatencySummary(t, out, n, warmup)
		r.serverCores = (after.cpu - before.cpu).Seconds() / wall.Seconds()
		r.serverPeakMB = float64(after.peakRSS) / 1e6
		return r
	}

	// Peaks first: the fixed rates are fractions of the broker's.
	for range rounds {
		for _, acks := range acksModes {
			for _, sd := range sides {
				addr, stats, stop := sd.start(brokerProps[acks])
				key := sd.name + ", acks=" + acks
				peaks[key] = append(peaks[key], produce(addr, stats, acks, -1, records, 0))
				stop()
			}
		}
	}
	for _, acks := range acksModes {
		rates[acks] = int(median(peaks["Kafka broker, acks="+acks], func(r latencyRun) float64 { return r.perSec }))
	}

	for range rounds {
		for _, sd := range sides {
			for _, acks := range acksModes {
				addr, stats, stop := sd.start(brokerProps[acks])
				if acks == acksModes[0] {
					time.Sleep(3 * time.Second)
					idle[sd.name] = append(idle[sd.name], float64(stats().rss)/1e6)
				}
				for _, f := range fractions {
					rate := rates[acks] * f / 100
					key := fmt.Sprintf("acks=%s, %d %% (%d/s): %s", acks, f, rate, sd.name)
					fixed[key] = append(fixed[key], produce(addr, stats, acks, rate, rate*(warmupSeconds+seconds), rate*warmupSeconds))
				}
				tp := topic()
				k.Client(t, "", "create-topic", addr, tp, "1")
				out := k.Measure(t, "org.apache.kafka.tools.EndToEndLatency", "--bootstrap-server", addr, "--topic", tp,
					"--num-records", "5000", "--producer-acks", acks, "--record-size", "100")
				key := sd.name + ", acks=" + acks
				e2e[key] = append(e2e[key], parseEndToEnd(t, out))
				stop()
			}
		}
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "Kafka's perf tools against Kafka's broker and kafkaserver: records of 100 bytes, 1 partition, the producer's defaults; acks=all fsynced before the acknowledgement on both sides (the broker with log.flush.interval.messages=1); %d CPUs, %s; median (range) of %d interleaved rounds\n\n",
		runtime.NumCPU(), runtime.GOARCH, rounds)
	fmt.Fprintf(&sb, "Peak (kafka-producer-perf-test --throughput -1, %d records):\n", records)
	writeTable(&sb, peaks, []column[latencyRun]{
		{"records/s", "%.0f", func(r latencyRun) float64 { return r.perSec }},
		{"p50 ms", "%.0f", func(r latencyRun) float64 { return r.p50Ms }},
		{"p99 ms", "%.0f", func(r latencyRun) float64 { return r.p99Ms }},
		{"server CPU cores", "%.2f", func(r latencyRun) float64 { return r.serverCores }},
	})
	fmt.Fprintf(&sb, "\nFixed rates (kafka-producer-perf-test --throughput R for %d s after %d s of warm-up, its steady-state figures; R a fraction of the broker's median peak):\n", seconds, warmupSeconds)
	writeTable(&sb, fixed, []column[latencyRun]{
		{"records/s", "%.0f", func(r latencyRun) float64 { return r.perSec }},
		{"p50 ms", "%.0f", func(r latencyRun) float64 { return r.p50Ms }},
		{"p99 ms", "%.0f", func(r latencyRun) float64 { return r.p99Ms }},
		{"p99.9 ms", "%.0f", func(r latencyRun) float64 { return r.p999Ms }},
		{"max ms", "%.0f", func(r latencyRun) float64 { return r.maxMs }},
		{"server CPU cores", "%.2f", func(r latencyRun) float64 { return r.serverCores }},
		{"server peak memory MB", "%.0f", func(r latencyRun) float64 { return r.serverPeakMB }},
	})
	sb.WriteString("\nEnd to end (EndToEndLatency, 5,000 records one at a time):\n")
	writeTable(&sb, e2e, []column[latencyRun]{
		{"avg ms", "%.2f", func(r latencyRun) float64 { return r.avgMs }},
		{"p50 ms", "%.0f", func(r latencyRun) float64 { return r.p50Ms }},
		{"p99 ms", "%.0f", func(r latencyRun) float64 { return r.p99Ms }},
		{"p99.9 ms", "%.0f", func(r latencyRun) float64 { return r.p999Ms }},
	})
	sb.WriteString("\nIdle resident memory (3 s after start, no topic):")
	for _, sd := range sides {
		fmt.Fprintf(&sb, " %s %s MB;", sd.name, spread(idle[sd.name], func(v float64) float64 { return v }, "%.0f"))
	}
	sb.WriteString("\n")
	report(t, sb.String())
}

// latencyRun is one run of a latency measurement: the tool's summary and,
// for a produce run, what the server used during it.
type latencyRun struct {
	perSec, avgMs, p50Ms, p99Ms, p999Ms, maxMs float64
	serverCores, serverPeakMB                  float64
}

// latencySummary is kafka-producer-perf-test's last line with every
// figure it prints.
var latencySummary = regexp.MustCompile(`(\d+) (steady state )?records sent, ([\d.]+) records/sec \([\d.]+ MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th, (\d+) ms 99.9th`)

// parseLatencySummary reads the summary of a run of records records,
// the steady-state one when the first warmup were a warm-up.
func parseLatencySummary(t *testing.T, out string, records, warmup int) latencyRun {
	t.Helper()
	var m []string
	for _, l := range scanLines(out) {
		if s := latencySummary.FindStringSubmatch(l); s != nil && (s[2] != "") == (warmup > 0) {
			m = s
		}
	}
	require.NotNil(t, m, "no summary line in:\n%s", tail(out))
	require.Equal(t, strconv.Itoa(records-warmup), m[1], "records sent")
	return latencyRun{perSec: atof(t, m[3]), avgMs: atof(t, m[4]), maxMs: atof(t, m[5]),
		p50Ms: atof(t, m[6]), p99Ms: atof(t, m[7]), p999Ms: atof(t, m[8])}
}

// endToEnd is EndToEndLatency's two result lines.
var (
	endToEndAvg         = regexp.MustCompile(`Avg latency: ([\d.]+) ms`)
	endToEndPercentiles = regexp.MustCompile(`Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)`)
)

func parseEndToEnd(t *testing.T, out string) latencyRun {
	t.Helper()
	a, p := endToEndAvg.FindStringSubmatch(out), endToEndPercentiles.FindStringSubmatch(out)
	require.True(t, a != nil && p != nil, "no result lines in:\n%s", tail(out))
	return latencyRun{avgMs: atof(t, a[1]), p50Ms: atof(t, p[1]), p99Ms: atof(t, p[2]), p999Ms: atof(t, p[3])}
}

// median is the median of a measure over runs.
func median[R any](rs []R, f func(R) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// TestLatencyParsers: the lines Kafka 4.4's ProducerPerformance (with
// and without --warmup-records) and EndToEndLatency print are read into
// their figures; the steady-state line is taken only when a warm-up was
// asked for.
func TestLatencyParsers(t *testing.T) {
	out := "Warmup first 20000 records. Steady state results will print after the complete test summary.\n" +
		"60000 records sent, 19887.305270 records/sec (1.90 MB/sec), 6.36 ms avg latency, 375.00 ms max latency, 5 ms 50th, 20 ms 95th, 24 ms 99th, 41 ms 99.9th.\n" +
		"40000 steady state records sent, 19694.731659 records/sec (1.88 MB/sec), 4.70 ms avg latency, 27.00 ms max latency, 4 ms 50th, 8 ms 95th, 18 ms 99th, 25 ms 99.9th.\n"
	require.Equal(t, latencyRun{perSec: 19694.731659, avgMs: 4.7, maxMs: 27, p50Ms: 4, p99Ms: 18, p999Ms: 25}, parseLatencySummary(t, out, 60000, 20000))
	require.Equal(t, latencyRun{perSec: 19887.305270, avgMs: 6.36, maxMs: 375, p50Ms: 5, p99Ms: 24, p999Ms: 41}, parseLatencySummary(t, out, 60000, 0))

	e2e := "0\t41.2\n1000\t0.4\nAvg latency: 0.6921 ms\nPercentiles: 50th = 0, 99th = 4, 99.9th = 7\n"
	require.Equal(t, latencyRun{avgMs: 0.6921, p50Ms: 0, p99Ms: 4, p999Ms: 7}, parseEndToEnd(t, e2e))

	require.Equal(t, "3 (1–5)", spread([]float64{5, 1, 3}, func(v float64) float64 { return v }, "%.0f"))
	require.Equal(t, "0 (0–0)", spread([]float64{0, 0}, func(v float64) float64 { return v }, "%.0f"), "a measured zero is a figure")
	require.Equal(t, "–", spread([]perfResult{{perSec: 1}}, func(r perfResult) float64 { return notMeasured(r.avgMs) }, "%.0f"))
}
