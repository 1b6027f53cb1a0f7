// Command quickstart is kafkalite's first command: it opens a log directory,
// creates a topic with three partitions, appends 100,000 keyed records in
// Kafka record batches, reads them all back, and prints the throughput and
// the files it wrote, which are laid out as a Kafka broker lays them out.
//
//	go run ./examples/quickstart            # in a temporary directory, removed after
//	go run ./examples/quickstart -dir DIR   # kept in DIR; an existing DIR is opened and appended to
//
// Records go through the producer (murmur2 partitioning, batching, lz4,
// acks=all) and come back through a consumer of the group "quickstart",
// which commits its offsets to __consumer_offsets: a second run with -dir
// reads only what that run produced.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

const topic = "quickstart"

func main() {
	dir := flag.String("dir", "", "log directory to use (kept); default a temporary directory")
	n := flag.Int("records", 100_000, "records to produce")
	batch := flag.Int("batch", 1000, "about how many records a batch holds (batch.size = 100 bytes each)")
	flag.Parse()
	if err := run(context.Background(), *dir, *n, *batch, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, n, perBatch int, out *os.File) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kafkalite-quickstart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.DescribeTopic(topic); err != nil {
		if _, err := d.CreateTopic(ctx, topic, 3, map[string]string{"segment.bytes": "4194304"}); err != nil {
			return err
		}
	}
	desc, err := d.DescribeTopic(topic)
	if err != nil {
		return err
	}
	parts := make([]*log.Log, desc.Partitions)
	for p := range parts {
		if parts[p], err = d.Partition(topic, int32(p)); err != nil {
			return err
		}
	}

	// Produce: the producer hashes each key to a partition with Kafka's
	// murmur2, batches records per partition and appends the batches;
	// acks=all (the default) means a record completes once it is fsynced.
	began := time.Now()
	cfg := producer.DefaultConfig()
	cfg.CompressionType = record.LZ4
	cfg.BatchSize = perBatch * 100
	p, err := producer.New(d, cfg)
	if err != nil {
		return err
	}
	var bytesOut int64
	var failed atomic.Int64
	for i := range n {
		key := fmt.Appendf(nil, "user-%d", i%1000)
		value := fmt.Appendf(nil, `{"user":"user-%d","event":"page_view","page":"/item/%d","seq":%d}`, i%1000, i%250, i)
		bytesOut += int64(len(key) + len(value))
		if _, err := p.Send(ctx, &producer.Record{Topic: topic, Key: key, Value: value}, func(_ producer.RecordMetadata, err error) {
			if err != nil {
				failed.Add(1)
			}
		}); err != nil {
			return err
		}
	}
	if err := p.Close(ctx); err != nil {
		return err
	}
	if failed.Load() > 0 {
		return fmt.Errorf("%d records failed", failed.Load())
	}
	produced := time.Since(began)
	st := p.Stats()

	// Consume: a consumer of the group "quickstart" reads every partition
	// from the group's committed offsets (from the start on the first run)
	// and commits what it read, into __consumer_offsets.
	began = time.Now()
	ccfg := consumer.DefaultConfig()
	ccfg.GroupID = "quickstart"
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	ccfg.EnableAutoCommit = false
	c, err := consumer.New(d, ccfg)
	if err != nil {
		return err
	}
	if err := c.Subscribe([]string{topic}, nil); err != nil {
		return err
	}
	consumed := 0
	for consumed < n {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		recs, err := c.Poll(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("after %d records: %w", consumed, err)
		}
		consumed += len(recs)
	}
	if err := c.CommitSync(ctx, nil); err != nil {
		return err
	}
	if err := c.Close(ctx); err != nil {
		return err
	}
	read := time.Since(began)
	if consumed != n {
		return fmt.Errorf("produced %d records, read back %d", n, consumed)
	}

	fmt.Fprintf(out, "produced %d records (%.1f MB of keys and values) to %s in %v: %.0f records/s, %.1f MB/s; %d lz4 batches of %.0f records, compression rate %.2f, acks=all\n",
		n, float64(bytesOut)/1e6, topic, produced.Round(time.Millisecond), float64(n)/produced.Seconds(), float64(bytesOut)/1e6/produced.Seconds(),
		st.Batches, st.RecordsPerBatch, st.CompressionRate)
	fmt.Fprintf(out, "consumed %d records with group %q in %v: %.0f records/s; offsets committed\n", consumed, "quickstart", read.Round(time.Millisecond), float64(consumed)/read.Seconds())
	for p, l := range parts {
		fmt.Fprintf(out, "  %s-%d: offsets %d..%d\n", topic, p, l.LogStartOffset(), l.LogEndOffset()-1)
	}
	fmt.Fprintf(out, "files in %s:\n", dir)
	return listFiles(dir, out)
}

func listFiles(dir string, out *os.File) error {
	var lines []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		lines = append(lines, fmt.Sprintf("  %-55s %9d bytes", rel, info.Size()))
		return nil
	})
	sort.Strings(lines)
	fmt.Fprintln(out, strings.Join(lines, "\n"))
	return err
}
