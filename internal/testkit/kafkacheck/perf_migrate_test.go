package kafkacheck

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/perfsuite"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/stretchr/testify/require"
)

// migrateSummary is the first line examples/migrate prints at the end.
var migrateSummary = regexp.MustCompile(`to-cluster: (\d+) records, .* \(([\d.]+) records/s, `)

// TestPerfMigrate measures examples/migrate copying a directory into
// Kafka's broker against Kafka's own producer perf test on the same broker
// in the same run: -records records (KAFKALITE_KAFKA_PERF_RECORDS) of
// 100-byte values, null keys, to one and to six partitions, acks=all and
// no compression on both sides (migrate's producer is idempotent, as the
// Java producer is by default with acks=all). Migrate's rate is over its
// whole run (connecting, creating the topic, reading the directory,
// copying, committing its state). Three rounds, each on a new broker.
func TestPerfMigrate(t *testing.T) {
	k, records, _ := perfSetup(t)
	bin := buildMigrate(t)
	partitions := []int{1, 6}
	sources := map[int]string{}
	for _, p := range partitions {
		sources[p] = writePerfSource(t, records, int32(p))
	}
	rows := map[string][]perfResult{}
	n := strconv.Itoa(records)
	for round := range 3 {
		b := k.NewBroker(t, nil)
		b.Start()
		for _, p := range partitions {
			topic := fmt.Sprintf("perf-test-%dp", p)
			k.Client(t, "", "create-topic", b.Bootstrap(), topic, strconv.Itoa(p))
			got := k.Measure(t, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", n,
				"--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers="+b.Bootstrap(), "acks=all")
			name := fmt.Sprintf("%d partition(s): kafka-producer-perf-test", p)
			rows[name] = append(rows[name], parseProduceSummary(t, got, records))

			state := filepath.Join(t.TempDir(), fmt.Sprintf("state-%d-%d", round, p))
			out := runMigrate(t, bin, "-from", sources[p], "-to", b.Bootstrap(), "-compression", "none", "-progress", "log",
				"-state", state)
			m := migrateSummary.FindStringSubmatch(out)
			require.NotNil(t, m, "migrate's summary:\n%s", out)
			require.Equal(t, n, m[1], "records copied")
			perSec, err := strconv.ParseFloat(m[2], 64)
			require.NoError(t, err)
			name = fmt.Sprintf("%d partition(s): migrate", p)
			rows[name] = append(rows[name], perfResult{perSec: perSec, mbPerSec: perSec * 100 / (1 << 20)})
		}
		b.Stop()
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "examples/migrate into Kafka's broker beside kafka-producer-perf-test on it: %d records of 100 bytes, acks=all, no compression, %d CPUs, %s; median (range) of 3 rounds\n",
		records, runtime.NumCPU(), runtime.GOARCH)
	writeTable(&sb, rows, []column[perfResult]{
		{"records/s", "%.0f", func(r perfResult) float64 { return r.perSec }},
		{"MB/s", "%.1f", func(r perfResult) float64 { return r.mbPerSec }},
	})
	report(t, sb.String())
}

// writePerfSource writes a directory with one topic, "migrated-<p>p", of
// records values of 100 bytes (perfsuite.Value) and null keys, spread
// over its partitions.
func writePerfSource(t *testing.T, records int, partitions int32) string {
	t.Helper()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("source-%dp", partitions))
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	topic := fmt.Sprintf("migrated-%dp", partitions)
	_, err = d.CreateTopic(ctx, topic, partitions, nil)
	require.NoError(t, err)
	p, err := producer.New(d, producer.DefaultConfig())
	require.NoError(t, err)
	values := make([][]byte, 1000)
	for i := range values {
		v := append(perfsuite.Value(i, 100), strings.Repeat(" ", 100)...)
		values[i] = v[:100]
	}
	for i := range records {
		part := int32(i) % partitions
		_, err := p.Send(ctx, &producer.Record{Topic: topic, Partition: &part, Value: values[i%len(values)]}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Close(ctx))
	require.NoError(t, d.Close())
	return dir
}
