package kafkacheck

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/perfsuite"
)

// TestPerfAnchor measures Kafka's own perf tools against a single-node
// broker beside examples/perf on the same workload, in the same run: the
// anchor docs/performance.md's figures are compared with. It is a
// measurement, not a check, so it runs only when KAFKALITE_KAFKA_PERF=1
// (.ci/kafka-perf sets it) on an otherwise idle machine; it fails only if
// a tool fails or prints no summary.
//
// The workload is kafka-producer-perf-test's: -records records of 100
// bytes (KAFKALITE_KAFKA_PERF_RECORDS, default 2,000,000) to one partition
// at full speed, with acks=1 and with acks=all, then
// kafka-consumer-perf-test reading the acks=1 topic from the start. Both
// sides keep Kafka's defaults otherwise (batch.size 16384, linger.ms 5,
// no compression, no fsync per write). The broker runs only while Kafka's
// tools do; each round runs both sides once, and there are three rounds,
// interleaved, so that drift of the machine shows in both.
func TestPerfAnchor(t *testing.T) {
	k, records, perf := perfSetup(t)

	rows := map[string][]perfResult{}
	n := strconv.Itoa(records)
	for round := range 3 {
		b := k.NewBroker(t, nil)
		b.Start()
		for _, acks := range []string{"1", "all"} {
			topic := "perf-acks-" + acks
			k.Client(t, "", "create-topic", b.Bootstrap(), topic, "1")
			got := k.Measure(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", n,
				"--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers="+b.Bootstrap(), "acks="+acks)
			rows["kafka produce acks="+acks] = append(rows["kafka produce acks="+acks], parseProduceSummary(t, got, records))
		}
		got := k.Measure(t, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", b.Bootstrap(),
			"--topic", "perf-acks-1", "--num-records", n, "--timeout", "60000")
		rows["kafka consume"] = append(rows["kafka consume"], parseConsumeSummary(t, got, records))
		b.Stop()

		for _, acks := range []string{"1", "all"} {
			dir := filepath.Join(t.TempDir(), fmt.Sprintf("kafkalite-%d-%s", round, acks))
			got := runPerf(t, perf, "-records", n, "-record-size", "100", "-partitions", "1", "-acks", acks, "-dir", dir)
			rows["kafkalite produce acks="+acks] = append(rows["kafkalite produce acks="+acks], parseProduceSummary(t, got, records))
			if acks == "1" {
				got := runPerf(t, perf, "-consume", "-dir", dir)
				rows["kafkalite consume"] = append(rows["kafkalite consume"], parseConsumeSummary(t, got, records))
			}
		}
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "%d records of 100 bytes, 1 partition, %d CPUs, %s; median (range) of 3 interleaved rounds\n", records, runtime.NumCPU(), runtime.GOARCH)
	writeRows(&sb, rows, false)
	report(t, sb.String())
}

// TestPerfProduction measures producer settings often recommended for
// production (acks=all with idempotence, linger.ms 20,
// batch.size 64 KiB, lz4) on Kafka's producer perf test against a
// single-node broker and on examples/perf, in three interleaved rounds, as
// TestPerfAnchor does and under the same switch.
//
// The workload: -records records (KAFKALITE_KAFKA_PERF_RECORDS) to one
// partition at full speed, each value one of 10,000 JSON-like values of
// 100 bytes (perfsuite.Value) chosen at random, from the same payload
// file on both sides, so that lz4 sees realistic data. Latency is Kafka's
// tool's: from send to the acknowledgement's callback. CPU per record is
// the CPU time of every process of the run (for Kafka, the producer's and
// the broker's during the run) over the records sent. Peak memory is the
// peak resident set of each process: the producer (for kafkalite, the
// whole library in one process) and Kafka's broker. Acknowledgements
// differ in what they promise: Kafka's broker, with its default
// log.flush settings, acknowledges acks=all once the write is in its page
// cache (on one node there are no followers), kafkalite once it is
// fsynced.
func TestPerfProduction(t *testing.T) {
	k, records, perf := perfSetup(t)
	payloads := filepath.Join(t.TempDir(), "payloads.txt")
	var values bytes.Buffer
	for i := range 10_000 {
		values.Write(perfsuite.Value(i, 100))
		values.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(payloads, values.Bytes(), 0o644))

	settings := []string{"acks=all", "enable.idempotence=true", "linger.ms=20", "batch.size=65536", "compression.type=lz4"}
	n := strconv.Itoa(records)
	var kafka, lite []perfResult
	for round := range 3 {
		b := k.NewBroker(t, nil)
		b.Start()
		k.Client(t, "", "create-topic", b.Bootstrap(), "perf", "1")
		before := b.Usage()
		out, tool := k.MeasureUsage(t, "org.apache.kafka.tools.ProducerPerformance", append([]string{"--topic", "perf",
			"--num-records", n, "--payload-file", payloads, "--throughput", "-1",
			"--producer-props", "bootstrap.servers=" + b.Bootstrap()}, settings...)...)
		broker := b.Usage()
		r := parseProduceSummary(t, out, records)
		r.peakMB, r.brokerPeakMB = float64(tool.PeakRSS)/1e6, float64(broker.PeakRSS)/1e6
		r.cpuPerRecord = (tool.CPU + broker.CPU - before.CPU) / time.Duration(records)
		kafka = append(kafka, r)
		b.Stop()

		out, lu := runPerfUsage(t, perf, "-records", n, "-payload-file", payloads, "-partitions", "1",
			"-acks", "all", "-linger-ms", "20", "-batch-size", "65536", "-compression", "lz4",
			"-dir", filepath.Join(t.TempDir(), fmt.Sprintf("kafkalite-%d", round)))
		r = parseProduceSummary(t, out, records)
		r.peakMB, r.cpuPerRecord = float64(lu.PeakRSS)/1e6, lu.CPU/time.Duration(records)
		lite = append(lite, r)
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "Production settings (%s): %d records of 100-byte JSON-like values, 1 partition, %d CPUs, %s; median (range) of 3 interleaved rounds\n",
		strings.Join(settings, ", "), records, runtime.NumCPU(), runtime.GOARCH)
	fmt.Fprintf(&sb, "| run | records/s | MB/s | p50 ms | p99 ms | avg ms | CPU per record | peak memory, producer MB | peak memory, broker MB |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		rs   []perfResult
	}{{"kafka (producer-perf-test + broker)", kafka}, {"kafkalite (examples/perf)", lite}} {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.name,
			spread(row.rs, func(r perfResult) float64 { return r.perSec }, "%.0f"),
			spread(row.rs, func(r perfResult) float64 { return r.mbPerSec }, "%.1f"),
			spread(row.rs, func(r perfResult) float64 { return r.p50Ms }, "%.0f"),
			spread(row.rs, func(r perfResult) float64 { return r.p99Ms }, "%.0f"),
			spread(row.rs, func(r perfResult) float64 { return r.avgMs }, "%.1f"),
			spread(row.rs, func(r perfResult) float64 { return float64(r.cpuPerRecord.Nanoseconds()) }, "%.0f")+" ns",
			spread(row.rs, func(r perfResult) float64 { return r.peakMB }, "%.0f"),
			spread(row.rs, func(r perfResult) float64 { return r.brokerPeakMB }, "%.0f"))
	}
	report(t, sb.String())
}

// report logs a table and appends it to KAFKALITE_KAFKA_PERF_OUT when
// that is set.
func report(t *testing.T, table string) {
	t.Helper()
	t.Log("\n" + table)
	path := os.Getenv("KAFKALITE_KAFKA_PERF_OUT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = fmt.Fprintln(f, table)
	require.NoError(t, errors.Join(err, f.Close()))
}

// perfResult is one tool's summary; the latencies are those of a produce
// run (zero for a consume run), the peak memories those TestPerfProduction
// records.
type perfResult struct {
	perSec, mbPerSec, avgMs, p50Ms, p99Ms float64
	peakMB, brokerPeakMB                  float64
	cpuPerRecord                          time.Duration
}

func runPerf(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, _ := runPerfUsage(t, bin, args...)
	return out
}

// runPerfUsage is runPerf that also returns what the process used.
func runPerfUsage(t *testing.T, bin string, args ...string) (string, Usage) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.Output()
	require.NoError(t, err, "perf %v", args)
	return string(out), UsageOf(cmd.ProcessState)
}

// perfSetup skips a measurement unless KAFKALITE_KAFKA_PERF=1, and
// returns Kafka, the records to send (KAFKALITE_KAFKA_PERF_RECORDS,
// 2,000,000 by default) and examples/perf built into a temporary
// directory.
func perfSetup(t *testing.T) (*Kafka, int, string) {
	t.Helper()
	if os.Getenv("KAFKALITE_KAFKA_PERF") != "1" {
		t.Skip("a measurement: KAFKALITE_KAFKA_PERF=1 runs it (.ci/kafka-perf)")
	}
	k := Get(t)
	records := 2_000_000
	if v := os.Getenv("KAFKALITE_KAFKA_PERF_RECORDS"); v != "" {
		var err error
		records, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	perf := filepath.Join(t.TempDir(), "perf")
	build := exec.Command("go", "build", "-o", perf, "./examples/perf")
	build.Dir = filepath.Join(moduleDir(), "..", "..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building examples/perf: %s", out)
	return k, records, perf
}

// produceSummary is kafka-producer-perf-test's last line, which
// examples/perf prints the same.
var produceSummary = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, [\d.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th`)

func parseProduceSummary(t *testing.T, out string, records int) perfResult {
	t.Helper()
	var m []string
	for _, l := range scanLines(out) {
		if s := produceSummary.FindStringSubmatch(l); s != nil {
			m = s
		}
	}
	require.NotNil(t, m, "no summary line in:\n%s", tail(out))
	require.Equal(t, strconv.Itoa(records), m[1], "records sent")
	return perfResult{perSec: atof(t, m[2]), mbPerSec: atof(t, m[3]), avgMs: atof(t, m[4]), p50Ms: atof(t, m[5]), p99Ms: atof(t, m[6])}
}

// parseConsumeSummary reads kafka-consumer-perf-test's header and values
// lines (examples/perf -consume prints the same) and returns nMsg.sec and
// MB.sec.
func parseConsumeSummary(t *testing.T, out string, records int) perfResult {
	t.Helper()
	lines := scanLines(out)
	for i, l := range lines {
		if !strings.HasPrefix(l, "start.time") || i+1 >= len(lines) {
			continue
		}
		head := strings.Split(l, ",")
		vals := strings.Split(lines[i+1], ",")
		require.Equal(t, len(head), len(vals), "consume summary %q", lines[i+1])
		field := map[string]string{}
		for j := range head {
			field[strings.TrimSpace(head[j])] = strings.TrimSpace(vals[j])
		}
		require.Equal(t, strconv.Itoa(records), field["data.consumed.in.nMsg"], "records consumed")
		return perfResult{perSec: atof(t, field["nMsg.sec"]), mbPerSec: atof(t, field["MB.sec"])}
	}
	require.Fail(t, "no consume summary", "in:\n%s", tail(out))
	return perfResult{}
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, "number %q", s)
	return f
}

// spread formats the median and the range of a measure over runs; "–"
// where the measure does not apply to the runs (NaN, notMeasured).
func spread[R any](rs []R, f func(R) float64, format string) string {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	vs = slices.DeleteFunc(vs, math.IsNaN)
	if len(vs) == 0 {
		return "–"
	}
	slices.Sort(vs)
	return fmt.Sprintf(format+" ("+format+"–"+format+")", vs[len(vs)/2], vs[0], vs[len(vs)-1])
}

// TestPerfServer measures Kafka's producer and consumer perf tools
// against kafkalite's wire-protocol server (examples/kafkaserver) beside
// the same tools against Kafka's broker, in three interleaved rounds, as
// TestPerfAnchor does and under the same switch: -records records of 100
// bytes to one partition, acks=1 and acks=all, then the consumer perf
// test reading the acks=1 topic. The server's peak memory is its
// process's peak resident set.
func TestPerfServer(t *testing.T) {
	k, records, _ := perfSetup(t)
	n := strconv.Itoa(records)
	rows := map[string][]perfResult{}
	measure := func(name, bootstrap string, peak func() float64) {
		for _, acks := range []string{"1", "all"} {
			topic := "perf-acks-" + acks
			k.Client(t, "", "create-topic", bootstrap, topic, "1")
			got := k.Measure(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", n,
				"--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers="+bootstrap, "acks="+acks)
			r := parseProduceSummary(t, got, records)
			r.brokerPeakMB = peak()
			rows[name+" produce acks="+acks] = append(rows[name+" produce acks="+acks], r)
		}
		got := k.Measure(t, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", bootstrap,
			"--topic", "perf-acks-1", "--num-records", n, "--timeout", "60000")
		r := parseConsumeSummary(t, got, records)
		r.brokerPeakMB = peak()
		rows[name+" consume"] = append(rows[name+" consume"], r)
	}
	for range 3 {
		b := k.NewBroker(t, nil)
		b.Start()
		measure("kafka broker", b.Bootstrap(), func() float64 { return float64(b.Usage().PeakRSS) / 1e6 })
		b.Stop()
		s := startKafkaServer(t, k)
		measure("kafkaserver", s.addr, s.peakMB)
		s.stop(t)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Kafka's perf tools against the broker and against kafkaserver: %d records of 100 bytes, 1 partition, %d CPUs, %s; median (range) of 3 interleaved rounds\n", records, runtime.NumCPU(), runtime.GOARCH)
	writeRows(&sb, rows, true)
	report(t, sb.String())
}

// writeRows writes a table of rows by name, sorted: records/s, MB/s and
// latencies, and with peak the server's peak memory.
func writeRows(sb *strings.Builder, rows map[string][]perfResult, peak bool) {
	// A consume run has no latencies.
	cols := []column[perfResult]{
		{"records/s", "%.0f", func(r perfResult) float64 { return r.perSec }},
		{"MB/s", "%.1f", func(r perfResult) float64 { return r.mbPerSec }},
		{"avg latency ms", "%.1f", func(r perfResult) float64 { return notMeasured(r.avgMs) }},
		{"p99 ms", "%.0f", func(r perfResult) float64 { return notMeasured(r.avgMs, r.p99Ms) }},
	}
	if peak {
		cols = append(cols, column[perfResult]{"server peak memory MB", "%.0f", func(r perfResult) float64 { return notMeasured(r.brokerPeakMB) }})
	}
	writeTable(sb, rows, cols)
}

// notMeasured is the last of vs, or NaN (not measured, "–" in a table)
// when the first is zero.
func notMeasured(vs ...float64) float64 {
	if vs[0] == 0 {
		return math.NaN()
	}
	return vs[len(vs)-1]
}

// column is a column of a table of runs: its heading, the format of its
// numbers, and the measure it shows.
type column[R any] struct {
	head, format string
	f            func(R) float64
}

// writeTable writes a markdown table of rows by name, sorted, with the
// median (range) of each column's measure over a row's runs.
func writeTable[R any](sb *strings.Builder, rows map[string][]R, cols []column[R]) {
	sb.WriteString("| run |")
	for _, c := range cols {
		fmt.Fprintf(sb, " %s |", c.head)
	}
	sb.WriteString("\n|---|")
	for range cols {
		sb.WriteString("---|")
	}
	sb.WriteString("\n")
	names := make([]string, 0, len(rows))
	for name := range rows {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(sb, "| %s |", name)
		for _, c := range cols {
			fmt.Fprintf(sb, " %s |", spread(rows[name], c.f, c.format))
		}
		sb.WriteString("\n")
	}
}
