package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPerfSummary(t *testing.T) {
	for _, acks := range []string{"0", "1", "all"} {
		sum, err := run(options{records: 5000, recordSize: 50, partitions: 2, batchSize: 4096, lingerMs: 1,
			compression: "lz4", acks: acks, bufferMemory: 1 << 20, topic: "perf"})
		require.NoError(t, err)
		require.Regexp(t, regexp.MustCompile(`^5000 records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$`), sum)
	}
}

func TestConsumerPerf(t *testing.T) {
	dir := t.TempDir()
	_, err := run(options{records: 3000, recordSize: 50, partitions: 3, batchSize: 4096, lingerMs: 1,
		compression: "none", acks: "1", bufferMemory: 1 << 20, topic: "perf", dir: dir})
	require.NoError(t, err)
	sum, err := runConsumer(options{dir: dir, topic: "perf"})
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`(?s)^start.time, end.time, .*\n.*, 3000, [0-9.]+, \d+, \d+, [0-9.]+, [0-9.]+$`), sum)
}
