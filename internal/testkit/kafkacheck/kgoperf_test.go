package kafkacheck

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPerfKgo measures franz-go's producer and consumer (kgo, package
// RunKgo) against three brokers on this machine, each in a process of its
// own: kafkalite's wire-protocol server (examples/kafkaserver), franz-go's
// kfake (cmd/kfake: one fake broker, in memory) and Kafka's broker (the
// harness's single node), under the switch of TestPerfAnchor.
//
// The workload: -records records of 100 bytes (KAFKALITE_KAFKA_PERF_RECORDS,
// default 2,000,000) produced at full speed by one kgo client with its
// defaults (linger 10 ms) but uncompressed, as Kafka's perf tools send
// (kgo compresses with snappy by default), to a new topic of 1 or 6
// partitions, with acks=1 (idempotence off) and with acks=all (kgo's
// idempotent producer), then read back by a groupless kgo consumer. Each
// workload gets a fresh process of each broker, so that a row's peak
// memory is that workload's: the peak resident set of the broker's
// process while it ran (VmHWM). The rounds (KAFKALITE_KAFKA_PERF_ROUNDS,
// default 3) run every workload on the three brokers in turn, so that
// drift of the machine shows in all of them.
//
// The acknowledgements promise different things: kafkaserver fsyncs
// before it acknowledges acks=all; Kafka's broker (default log.flush.*,
// no followers) acknowledges once the batch is in its page cache; kfake
// keeps the records in memory only.
//
// Besides, the server and kfake with acks=all and kgo's linger off
// (NoLinger), on 1 and 6 partitions.
func TestPerfKgo(t *testing.T) {
	k, records, _ := perfSetup(t)
	rounds := perfRounds(t)
	kfake := filepath.Join(t.TempDir(), "kfake")
	build := exec.Command("go", "build", "-o", kfake, "./cmd/kfake")
	build.Dir = moduleDir()
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building cmd/kfake: %s", out)

	// The brokers under test; each stop removes the broker's data (a run
	// of 2,000,000 records leaves 200 MB).
	targets := append(perfBrokers(t, k), perfTarget{"kfake", func(map[string]string) (string, func() procStats, func()) {
		s := startKfake(t, kfake)
		return s.addr, func() procStats { return readProcStats(s.cmd.Process.Pid) }, func() { s.stop(t) }
	}})

	// A row's run: what the client measured, and the broker's peak.
	type run struct {
		KgoResult
		peakMB float64
	}
	rows := map[string][]run{}
	measure := func(round int, tg perfTarget, w KgoWorkload) {
		addr, stats, stop := tg.start(nil)
		w.Bootstrap = addr
		res, err := RunKgo(context.Background(), w)
		require.NoError(t, err, "round %d, %s: %+v", round, tg.name, w)
		parts := "1 partition"
		if w.Partitions > 1 {
			parts = fmt.Sprintf("%d partitions", w.Partitions)
		}
		linger := ""
		if w.NoLinger {
			linger = ", linger 0"
		}
		name := fmt.Sprintf("%s, acks=%s%s: %s", parts, w.Acks, linger, tg.name)
		rows[name] = append(rows[name], run{res, float64(stats().peakRSS) / 1e6})
		stop()
	}
	for round := range rounds {
		for _, partitions := range []int32{1, 6} {
			for _, acks := range []string{"1", "all"} {
				for _, tg := range targets {
					measure(round, tg, KgoWorkload{Topic: fmt.Sprintf("kgo-%d-%s", partitions, acks),
						Partitions: partitions, Records: records, RecordBytes: 100, Acks: acks})
				}
			}
		}
		// Without kgo's linger, against the server and kfake: on six
		// partitions each partition's batch fills a sixth as fast, and
		// kgo's 10 ms linger, with one produce request in flight, bounds
		// the rate.
		for _, partitions := range []int32{1, 6} {
			for _, tg := range targets[1:] {
				measure(round, tg, KgoWorkload{Topic: fmt.Sprintf("kgo-%d-all-nolinger", partitions),
					Partitions: partitions, Records: records, RecordBytes: 100, Acks: "all", NoLinger: true})
			}
		}
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "franz-go (kgo) producer and consumer against Kafka's broker, kafkaserver and kfake: %d records of 100 bytes, kgo's defaults (linger 10 ms) uncompressed, %d CPUs, %s; median (range) of %d interleaved rounds; produce latency from Produce to the promise\n",
		records, runtime.NumCPU(), runtime.GOARCH, rounds)
	writeTable(&sb, rows, []column[run]{
		{"produce records/s", "%.0f", func(r run) float64 { return r.ProducePerSec }},
		{"produce MB/s", "%.1f", func(r run) float64 { return r.ProduceMBPerSec }},
		{"p50 ms", "%.1f", func(r run) float64 { return float64(r.P50.Microseconds()) / 1e3 }},
		{"p99 ms", "%.1f", func(r run) float64 { return float64(r.P99.Microseconds()) / 1e3 }},
		{"max ms", "%.0f", func(r run) float64 { return float64(r.Max.Microseconds()) / 1e3 }},
		{"consume records/s", "%.0f", func(r run) float64 { return r.ConsumePerSec }},
		{"consume MB/s", "%.1f", func(r run) float64 { return r.ConsumeMBPerSec }},
		{"server peak memory MB", "%.0f", func(r run) float64 { return r.peakMB }},
	})
	report(t, sb.String())
}

// startKfake runs cmd/kfake (built at bin) on a free loopback port until
// the test ends or stop is called; it is a kafkaServer for peakMB and
// stop, without a directory.
func startKfake(t *testing.T, bin string) *kafkaServer {
	t.Helper()
	s := &kafkaServer{cmd: exec.Command(bin)}
	stdout, err := s.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "kfake: serving on ")
	require.True(t, ok, "kfake said %q", line)
	s.addr = addr
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// perfTarget is a broker a measurement runs against: start runs it
// afresh (Kafka's broker with props on top of the harness's; the others
// ignore them) and returns its bootstrap address, a func reading what
// its process used so far, and a func stopping it and removing its data.
type perfTarget struct {
	name  string
	start func(props map[string]string) (string, func() procStats, func())
}

// perfBrokers are Kafka's broker (the harness's single node) and
// kafkalite's wire server.
func perfBrokers(t *testing.T, k *Kafka) []perfTarget {
	return []perfTarget{
		{"Kafka broker", func(props map[string]string) (string, func() procStats, func()) {
			b := k.NewBroker(t, props)
			b.Start()
			return b.Bootstrap(), func() procStats { return readProcStats(b.cmd.Process.Pid) }, func() {
				b.Stop()
				require.NoError(t, os.RemoveAll(b.Dir))
			}
		}},
		{"kafkaserver", func(map[string]string) (string, func() procStats, func()) {
			s := startKafkaServer(t, k)
			return s.addr, func() procStats { return readProcStats(s.cmd.Process.Pid) }, func() {
				s.stop(t)
				require.NoError(t, os.RemoveAll(s.dir))
			}
		}},
	}
}

// perfRounds is KAFKALITE_KAFKA_PERF_ROUNDS, default 3.
func perfRounds(t *testing.T) int {
	rounds := 3
	if v := os.Getenv("KAFKALITE_KAFKA_PERF_ROUNDS"); v != "" {
		var err error
		rounds, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	return rounds
}
