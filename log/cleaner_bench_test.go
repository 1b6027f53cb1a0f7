package log

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// benchCleanBytes is the size of the log BenchmarkCleaning cleans: 64 MiB,
// or KAFKALITE_BENCH_CLEAN_BYTES (docs/performance.md's figure uses 1073741824).
func benchCleanBytes() int64 {
	if v, err := strconv.ParseInt(os.Getenv("KAFKALITE_BENCH_CLEAN_BYTES"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 64 << 20
}

// keyedBatchOf builds a 1,000-record batch with random keys among keys
// distinct ones ("key-%08d") and 100-byte values.
func keyedBatchOf(b testing.TB, rng *rand.Rand, keys int, bld *record.Builder) []byte {
	bld.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	value := make([]byte, 100)
	var key [12]byte
	for range 1000 {
		copy(key[:], "key-")
		n := rng.IntN(keys)
		copy(key[4:], fmt.Sprintf("%08d", n))
		binary.BigEndian.PutUint64(value, rng.Uint64())
		require.NoError(b, bld.Append(time.Now().UnixMilli(), key[:], value, nil))
	}
	out, err := bld.Build()
	require.NoError(b, err)
	return out
}

// BenchmarkCleaning cleans a log of 100-byte-value records with 1 million
// distinct keys on the real disk (page cache), the whole log dirty, with
// Kafka's default dedupe buffer (128 MiB). Throughput is the bytes of the
// log read by the round (each byte is read twice: map, then rewrite).
// Setup (writing the log) is outside the timer; -benchtime=1x.
func BenchmarkCleaning(b *testing.B) {
	for _, fs := range []string{"mem", "disk"} {
		b.Run("fs="+fs, func(b *testing.B) { benchmarkCleaning(b, fs == "mem") })
	}
}

func benchmarkCleaning(b *testing.B, mem bool) {
	size := benchCleanBytes()
	b.ReportAllocs()
	b.SetBytes(size)
	var last CleanerStats
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		cfg := DefaultConfig()
		cfg.CleanerEnable = false
		path := b.TempDir()
		if mem {
			cfg.FS = vfs.NewMem()
		}
		d, err := Open(context.Background(), path, cfg)
		require.NoError(b, err)
		createTopic2(b, d, "c", map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0"})
		l, err := d.Partition("c", 0)
		require.NoError(b, err)
		rng := rand.New(rand.NewPCG(1, 2))
		var bld record.Builder
		for l.Stats().Size < size {
			_, err := l.Append(keyedBatchOf(b, rng, 1_000_000, &bld))
			require.NoError(b, err)
		}
		require.NoError(b, l.Roll(context.Background()))
		b.StartTimer()
		c0 := cpuTime()
		cleaned, err := d.CleanNow(context.Background())
		rounds := cleaned.Rounds
		cpu += cpuTime() - c0
		b.StopTimer()
		require.NoError(b, err)
		require.Equal(b, 1, rounds)
		last, _ = l.CleanerStats()
		require.NoError(b, d.Close())
		b.StartTimer()
	}
	if cpu > 0 {
		// Throughput per CPU second: the machine is shared, so wall time
		// includes waiting for a core.
		b.ReportMetric(float64(size)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
	b.ReportMetric(float64(last.MapMemoryBytes)/(1<<20), "map-MiB")
	b.ReportMetric(float64(last.MapBudgetBytes)/(1<<20), "map-budget-MiB")
	b.ReportMetric(float64(last.MapKeys), "map-keys")
	b.ReportMetric(float64(last.BytesWritten)/(1<<20), "written-MiB")
}

func createTopic2(b testing.TB, d *Dir, name string, props map[string]string) {
	_, err := d.CreateTopic(context.Background(), name, 1, props)
	require.NoError(b, err)
}

// BenchmarkAppendWhileCleaning appends 1,000-record batches (100-byte
// values, 100,000 keys) to a compacted topic on the real disk, idle or
// while another goroutine cleans it without pause (segment.bytes 16 MiB,
// min.cleanable.dirty.ratio 0).
func BenchmarkAppendWhileCleaning(b *testing.B) {
	for _, cleaning := range []bool{false, true} {
		b.Run(fmt.Sprintf("cleaning=%v", cleaning), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.CleanerEnable = false
			d, err := Open(context.Background(), b.TempDir(), cfg)
			require.NoError(b, err)
			defer d.Close()
			createTopic2(b, d, "c", map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0",
				"segment.bytes": strconv.Itoa(16 << 20)})
			l, err := d.Partition("c", 0)
			require.NoError(b, err)
			rng := rand.New(rand.NewPCG(1, 2))
			var bld record.Builder
			batches := make([][]byte, 64)
			for i := range batches {
				batches[i] = append([]byte(nil), keyedBatchOf(b, rng, 100_000, &bld)...)
			}
			// Some history to clean from the start.
			for i := range 200 {
				_, err := l.Append(append([]byte(nil), batches[i%len(batches)]...))
				require.NoError(b, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				for cleaning && ctx.Err() == nil {
					if _, err := d.CleanNow(ctx); err != nil && ctx.Err() == nil {
						b.Error(err)
						return
					}
				}
			}()
			buf := make([]byte, 0, len(batches[0])+1024)
			b.SetBytes(int64(len(batches[0])))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				buf = append(buf[:0], batches[i%len(batches)]...)
				if _, err := l.Append(buf); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.StopTimer()
			cancel()
			<-done
			st, _ := l.CleanerStats()
			b.ReportMetric(float64(st.Rounds), "rounds")
		})
	}
}
