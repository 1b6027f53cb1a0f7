// Command perf measures the producer as Kafka's kafka-producer-perf-test
// does, against a log directory instead of a cluster, and ends with the same
// summary line; with -consume it measures a consumer as
// kafka-consumer-perf-test does, reading what a produce run left in -dir.
//
//	go run ./examples/perf -records 2000000 -record-size 100 -partitions 1 -acks 1
//	go run ./examples/perf -compression lz4 -linger-ms 5 -batch-size 65536 -dir /tmp/perf
//	go run ./examples/perf -consume -dir /tmp/perf
//	go run ./examples/perf -payload-file values.txt -linger-ms 20 -batch-size 65536 -compression lz4 -acks all
//
// As Kafka's tool, -payload-file takes the values from a file, one per
// line, and sends each record one of them chosen at random; without it
// every record carries the same -record-size bytes of random capital
// letters.
//
// Latency is measured from Send to the record's callback. Memory stays
// bounded by -buffer-memory: Send blocks when the pool is exhausted.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

type options struct {
	records, recordSize, partitions, batchSize int
	lingerMs                                   int
	compression, acks, dir, topic              string
	payloadFile                                string
	bufferMemory                               int64
}

func main() {
	var o options
	flag.IntVar(&o.records, "records", 1_000_000, "records to send")
	flag.IntVar(&o.recordSize, "record-size", 100, "value size in bytes")
	flag.IntVar(&o.partitions, "partitions", 1, "partitions of the topic")
	flag.IntVar(&o.lingerMs, "linger-ms", 5, "linger.ms")
	flag.IntVar(&o.batchSize, "batch-size", 16384, "batch.size")
	flag.StringVar(&o.compression, "compression", "none", "compression.type: none, gzip, snappy, lz4, zstd")
	flag.StringVar(&o.acks, "acks", "1", "acks: 0, 1, all")
	flag.Int64Var(&o.bufferMemory, "buffer-memory", 32<<20, "buffer.memory")
	flag.StringVar(&o.dir, "dir", "", "log directory (kept); default a temporary one")
	flag.StringVar(&o.topic, "topic", "perf", "topic")
	flag.StringVar(&o.payloadFile, "payload-file", "", "values to send, one per line, each record one at random (instead of -record-size)")
	consume := flag.Bool("consume", false, "consume the topic in -dir instead of producing")
	flag.Parse()
	run := run
	if *consume {
		run = runConsumer
	}
	sum, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
	fmt.Println(sum)
}

// run sends the records and returns Kafka's summary line.
func run(o options) (string, error) {
	ctx := context.Background()
	dir := o.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kafkalite-perf-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		return "", err
	}
	defer d.Close()
	if _, err := d.DescribeTopic(o.topic); err != nil {
		if _, err := d.CreateTopic(ctx, o.topic, int32(o.partitions), nil); err != nil {
			return "", err
		}
	}
	cfg := producer.DefaultConfig()
	cfg.BatchSize = o.batchSize
	cfg.Linger = time.Duration(o.lingerMs) * time.Millisecond
	cfg.BufferMemory = o.bufferMemory
	if cfg.CompressionType, err = record.ParseCompression(o.compression); err != nil {
		return "", err
	}
	switch o.acks {
	case "0":
		cfg.Acks = producer.AcksNone
	case "1":
		cfg.Acks = producer.AcksLeader
	case "all", "-1":
		cfg.Acks = producer.AcksAll
	default:
		return "", fmt.Errorf("acks %q", o.acks)
	}
	// As with Kafka's properties, idempotence (the default) gives way to
	// acks 0 and 1.
	cfg.EnableIdempotence = cfg.Acks == producer.AcksAll
	p, err := producer.New(d, cfg)
	if err != nil {
		return "", err
	}
	payloads, err := payloadsOf(o)
	if err != nil {
		return "", err
	}
	lat := newLatencies(o.records)
	var memMax uint64
	var ms runtime.MemStats
	var sentBytes int64
	start := time.Now()
	rec := producer.Record{Topic: o.topic}
	for i := range o.records {
		rec.Value = payloads[0]
		if len(payloads) > 1 {
			rec.Value = payloads[rand.IntN(len(payloads))]
		}
		sentBytes += int64(len(rec.Value))
		sent := time.Now()
		if _, err := p.Send(ctx, &rec, lat.callback(i, sent)); err != nil {
			return "", err
		}
		if i%100_000 == 0 {
			runtime.ReadMemStats(&ms)
			memMax = max(memMax, ms.HeapInuse)
		}
	}
	if err := p.Close(ctx); err != nil {
		return "", err
	}
	elapsed := time.Since(start)
	if lat.errs > 0 {
		return "", fmt.Errorf("%d records failed: %v", lat.errs, lat.firstErr)
	}
	st := p.Stats()
	fmt.Fprintf(os.Stderr, "batches %d, %.0f records/batch, %.0f bytes/batch, compression rate %.2f, peak heap in use %.1f MB (buffer.memory %.1f MB)\n",
		st.Batches, st.RecordsPerBatch, st.BatchSizeAvg, st.CompressionRate, float64(memMax)/1e6, float64(o.bufferMemory)/1e6)
	return lat.summary(o.records, sentBytes, elapsed), nil
}

// payloadsOf returns the values run sends: the lines of o.payloadFile, or
// one value of o.recordSize random capital letters, as Kafka's tool
// generates.
func payloadsOf(o options) ([][]byte, error) {
	if o.payloadFile == "" {
		value := make([]byte, o.recordSize)
		for i := range value {
			value[i] = byte('A' + rand.IntN(26))
		}
		return [][]byte{value}, nil
	}
	b, err := os.ReadFile(o.payloadFile)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if len(line) > 0 {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("payload file %s holds no value", o.payloadFile)
	}
	return out, nil
}

// latencies collects Send-to-callback latencies.
type latencies struct {
	mu       sync.Mutex
	ms       []float64
	errs     int
	firstErr error
}

func newLatencies(n int) *latencies { return &latencies{ms: make([]float64, n)} }

func (l *latencies) callback(i int, sent time.Time) producer.Callback {
	return func(_ producer.RecordMetadata, err error) {
		// Callbacks run on the producer's one sender goroutine, serially.
		l.ms[i] = float64(time.Since(sent).Microseconds()) / 1000
		if err != nil {
			l.mu.Lock()
			if l.errs == 0 {
				l.firstErr = err
			}
			l.errs++
			l.mu.Unlock()
		}
	}
}

// summary formats Kafka's producer-perf-test final line.
func (l *latencies) summary(n int, bytes int64, elapsed time.Duration) string {
	sorted := slices.Clone(l.ms)
	slices.Sort(sorted)
	var sum, maxMs float64
	for _, v := range sorted {
		sum += v
		maxMs = max(maxMs, v)
	}
	pct := func(p float64) int { return int(sorted[min(int(p*float64(len(sorted))), len(sorted)-1)]) }
	secs := elapsed.Seconds()
	return fmt.Sprintf("%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
		n, float64(n)/secs, float64(bytes)/1024/1024/secs, sum/float64(len(sorted)), maxMs, pct(0.5), pct(0.95), pct(0.99), pct(0.999))
}
