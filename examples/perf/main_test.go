package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// TestPerfSummary runs the producer perf test with each codec and each
// acks setting, and checks Kafka's summary line.
func TestPerfSummary(t *testing.T) {
	summary := regexp.MustCompile(`^2000 records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$`)
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		for _, acks := range []string{"0", "1", "all"} {
			t.Run("acks="+acks, func(t *testing.T) {
				sum, err := run(options{records: 2000, recordSize: 50, partitions: 2, batchSize: 4096, lingerMs: 1,
					compression: codec.String(), acks: acks, bufferMemory: 1 << 20, topic: "perf"})
				require.NoError(t, err)
				require.Regexp(t, summary, sum)
			})
		}
	})
}

// TestConsumerPerf produces with each codec, checks that the batches in
// the directory carry it and hold the records sent, then runs the consumer
// perf test over the directory: it must consume every record and count
// every byte of the values (3000 × 50 bytes = 0.1431 MB).
func TestConsumerPerf(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		dir := t.TempDir()
		_, err := run(options{records: 3000, recordSize: 50, partitions: 3, batchSize: 4096, lingerMs: 1,
			compression: codec.String(), acks: "1", bufferMemory: 1 << 20, topic: "perf", dir: dir})
		require.NoError(t, err)
		require.Equal(t, 3000, countRecords(t, dir, "perf", 3, codec))

		sum, err := runConsumer(options{dir: dir, topic: "perf"})
		require.NoError(t, err)
		require.Regexp(t, regexp.MustCompile(`(?s)^start.time, end.time, .*\n.*, 0\.1431, [0-9.]+, 3000, [0-9.]+, \d+, \d+, [0-9.]+, [0-9.]+$`), sum)
	})
}

// TestBadCompression checks that an unknown -compression is refused.
func TestBadCompression(t *testing.T) {
	_, err := run(options{records: 1, recordSize: 1, partitions: 1, batchSize: 4096, compression: "brotli", acks: "1", bufferMemory: 1 << 20, topic: "perf"})
	require.ErrorIs(t, err, record.ErrUnknownCodec)
}

// countRecords reads every partition of topic in dir and returns its
// record count, after checking that every batch is compressed with codec
// and every record holds a 50-byte value of capital letters, as run sends.
func countRecords(t *testing.T, dir, topic string, partitions int32, codec record.Compression) int {
	t.Helper()
	d, err := log.Open(context.Background(), dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	value := regexp.MustCompile(`^[A-Z]{50}$`)
	n := 0
	for p := range partitions {
		l, err := d.Partition(topic, p)
		require.NoError(t, err)
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			off, err = l.ReadRecords(off, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
				if got := h.Attributes.Compression(); got != codec {
					return fmt.Errorf("%s-%d@%d: batch compressed with %v, want %v", topic, p, r.Offset, got, codec)
				}
				if !value.Match(r.Value) {
					return fmt.Errorf("%s-%d@%d: value %q", topic, p, r.Offset, r.Value)
				}
				n++
				return nil
			})
			require.NoError(t, err)
		}
	}
	return n
}

// TestPayloadFile sends the values of a payload file, as Kafka's
// --payload-file does: every record read back holds one of its lines, and
// the summary counts their bytes.
func TestPayloadFile(t *testing.T) {
	dir := t.TempDir()
	lines := []string{`{"id":1,"event":"view"}`, `{"id":2,"event":"click"}`, `{"id":3,"event":"purchase"}`}
	file := filepath.Join(t.TempDir(), "payloads.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	sum, err := run(options{records: 600, partitions: 1, batchSize: 4096, lingerMs: 1, compression: "lz4",
		acks: "all", bufferMemory: 1 << 20, topic: "perf", dir: dir, payloadFile: file})
	require.NoError(t, err)
	require.Regexp(t, `^600 records sent, `, sum)

	d, err := log.Open(context.Background(), dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	l, err := d.Partition("perf", 0)
	require.NoError(t, err)
	seen := map[string]int{}
	for off := int64(0); off < l.LogEndOffset(); {
		off, err = l.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			seen[string(r.Value)]++
			return nil
		})
		require.NoError(t, err)
	}
	total := 0
	for v, n := range seen {
		require.Contains(t, lines, v)
		total += n
	}
	require.Equal(t, 600, total)
	require.Len(t, seen, len(lines), "600 random picks of 3 lines use each")
}

// TestEmptyPayloadFile checks that a payload file without a value is
// refused.
func TestEmptyPayloadFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "empty.txt")
	require.NoError(t, os.WriteFile(file, []byte("\n\n"), 0o644))
	_, err := run(options{records: 1, partitions: 1, batchSize: 4096, compression: "none", acks: "1",
		bufferMemory: 1 << 20, topic: "perf", payloadFile: file})
	require.ErrorContains(t, err, "holds no value")
}
