// Command quickstart is kafkalite's first command: it opens a log directory,
// creates a topic with three partitions, appends 100,000 keyed records in
// Kafka record batches, reads them all back, and prints the throughput and
// the files it wrote, which are laid out as a Kafka broker lays them out.
//
//	go run ./examples/quickstart            # in a temporary directory, removed after
//	go run ./examples/quickstart -dir DIR   # kept in DIR; an existing DIR is opened and appended to
//
// Until the producer and consumer packages land it drives the log package
// directly: records are batched by hand, one batch of -batch records per
// partition at a time, and read back with Log.ReadRecords.
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

const topic = "quickstart"

func main() {
	dir := flag.String("dir", "", "log directory to use (kept); default a temporary directory")
	n := flag.Int("records", 100_000, "records to produce")
	batch := flag.Int("batch", 1000, "records per batch")
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
	start := make([]int64, desc.Partitions)
	for p := range parts {
		if parts[p], err = d.Partition(topic, int32(p)); err != nil {
			return err
		}
		start[p] = parts[p].LogEndOffset()
	}

	// Produce: each key goes to one partition (a hash of the key modulo the
	// partition count); records collect in one builder per partition and
	// are appended a batch at a time.
	began := time.Now()
	builders := make([]record.Builder, len(parts))
	hdr := record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(record.LZ4)}
	for p := range builders {
		builders[p].Reset(hdr, record.DefaultLevel)
	}
	flush := func(p int) error {
		if builders[p].Len() == 0 {
			return nil
		}
		b, err := builders[p].Build()
		if err != nil {
			return err
		}
		if _, err := parts[p].Append(b); err != nil {
			return err
		}
		builders[p].Reset(hdr, record.DefaultLevel)
		return nil
	}
	var bytesOut int64
	now := time.Now().UnixMilli()
	for i := range n {
		key := fmt.Appendf(nil, "user-%d", i%1000)
		value := fmt.Appendf(nil, `{"user":"user-%d","event":"page_view","page":"/item/%d","seq":%d}`, i%1000, i%250, i)
		h := fnv.New32a()
		h.Write(key)
		p := int(h.Sum32() % uint32(len(parts)))
		if err := builders[p].Append(now, key, value, nil); err != nil {
			return err
		}
		bytesOut += int64(len(key) + len(value))
		if builders[p].Len() == perBatch {
			if err := flush(p); err != nil {
				return err
			}
		}
	}
	for p := range builders {
		if err := flush(p); err != nil {
			return err
		}
	}
	produced := time.Since(began)
	began = time.Now()
	for _, l := range parts {
		if err := l.Flush(); err != nil {
			return err
		}
	}
	flushed := time.Since(began)

	// Consume: read every partition from where this run started.
	began = time.Now()
	consumed := 0
	for p, l := range parts {
		for off := start[p]; off < l.LogEndOffset(); {
			next, err := l.ReadRecords(off, 1<<20, func(*record.Record, *record.BatchHeader) error {
				consumed++
				return nil
			})
			if err != nil {
				return err
			}
			off = next
		}
	}
	read := time.Since(began)
	if consumed != n {
		return fmt.Errorf("produced %d records, read back %d", n, consumed)
	}

	fmt.Fprintf(out, "produced %d records (%.1f MB of keys and values) to %s in %v: %.0f records/s, %.1f MB/s (lz4); fsync of 3 partitions %v\n",
		n, float64(bytesOut)/1e6, topic, produced.Round(time.Millisecond), float64(n)/produced.Seconds(), float64(bytesOut)/1e6/produced.Seconds(),
		flushed.Round(time.Millisecond))
	fmt.Fprintf(out, "consumed %d records in %v: %.0f records/s\n", consumed, read.Round(time.Millisecond), float64(consumed)/read.Seconds())
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
