// Command windowcount is a small stream-processing engine on kafkalite,
// built on Kafka Streams' ideas (tasks per partition, changelog-backed
// state, event-time windows, exactly-once output): it counts events per
// type in tumbling event-time windows.
//
//	events (JSON {"type","ts"}, keyed by type)
//	   │  consumer group "windowcount", read_committed
//	   ▼
//	a task per partition: window = ts rounded down to 10 s; watermark =
//	largest ts seen − 3 s; a window is emitted when the watermark passes its
//	end; an event for an emitted window is late
//	   │  one transaction per polled batch:
//	   ├─▶ window-counts                 {"type","start","end","count"}, each window once
//	   ├─▶ late-events                   the late events, as they came
//	   ├─▶ windowcount-counts-changelog  compacted: "<start>/<type>" → count (tombstone when emitted)
//	   └─▶ __consumer_offsets            the consumed offsets, with the task's stream time
//
// The window state lives in memory and in the compacted changelog, instead of
// RocksDB: a restarted processor rebuilds it from the changelog's latest
// value per key, and its stream time from the committed offsets' metadata.
// Because the changelog updates, the results, the late events and the
// offsets commit together, a kill at any moment loses nothing and repeats
// nothing: read with read_committed, window-counts holds every window once,
// with the right count.
//
//	go run ./examples/windowcount                      # 10,000 events in a temporary directory
//	go run ./examples/windowcount -dir DIR -seed 5000  # append 5,000 events to DIR's source, then process
//	go run ./examples/windowcount -dir DIR             # process what is left
//	go run ./examples/windowcount -compression zstd    # every batch written compressed with zstd
//
// -compression is the producers' compression.type (Config.CompressionType
// for the processor, SeedEvents' argument for the source): none (the
// default, as Kafka's), gzip, snappy, lz4 or zstd.
//
// Each run processes what the source topic holds and stops once it has
// caught up (every partition's committed position at its last stable
// offset): it is a batch job over the stream, not a service that waits for
// more. Run it again after appending events, or with -seed, which appends
// events whose times continue after the latest event already in the source
// (the first ever start at 2026-01-01 00:00 UTC), so that each round closes
// new windows instead of producing only late events.
//
// Its tests run the processor with each codec, and kill it with SIGKILL at
// random moments, restarting it each time with a codec chosen from the
// run's seed, and check the results against a replay of the same rules.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

func main() {
	dir := flag.String("dir", "", "log directory (kept); default a temporary directory, removed after")
	seed := flag.Int("seed", 0, "first append this many events to the source topic, continuing after its latest event time (default 10000 without -dir)")
	compression := flag.String("compression", "none", "compression.type of the producers: none, gzip, snappy, lz4, zstd")
	flag.Parse()
	cfg := DefaultConfig()
	var err error
	if cfg.CompressionType, err = record.ParseCompression(*compression); err != nil {
		fmt.Fprintln(os.Stderr, "windowcount: -compression:", err)
		os.Exit(2)
	}
	if err := demo(context.Background(), *dir, *seed, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "windowcount:", err)
		os.Exit(1)
	}
}

// dirConfig keeps a small example's directory small: one partition for each
// internal topic.
func dirConfig() log.Config {
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	return cfg
}

// demo appends seed events (10,000 in a temporary directory) to the source
// topic, processes the source with the configuration cfg, and prints the
// outputs.
func demo(ctx context.Context, dir string, seed int, cfg Config, out io.Writer) (err error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kafkalite-windowcount-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
		if seed == 0 {
			seed = 10_000
		}
	}
	d, err := log.Open(ctx, dir, dirConfig())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	if seed > 0 {
		if err := SeedEvents(ctx, d, seed, uint64(time.Now().UnixNano()), cfg.CompressionType); err != nil {
			return err
		}
	}
	start := time.Now()
	n, err := Run(ctx, d, cfg, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "processed %d events in %v\n", n, time.Since(start).Round(time.Millisecond))

	var results []Result
	if err := readAll(ctx, d, ResultsTopic, func(r *consumer.Record) error {
		var res Result
		if err := json.Unmarshal(r.Value, &res); err != nil {
			return err
		}
		results = append(results, res)
		return nil
	}); err != nil {
		return err
	}
	sort.Slice(results, func(i, j int) bool {
		if results[i].Start != results[j].Start {
			return results[i].Start < results[j].Start
		}
		return results[i].Type < results[j].Type
	})
	fmt.Fprintf(out, "%s (read_committed): %d window counts; the first ones:\n", ResultsTopic, len(results))
	for _, r := range results[:min(len(results), 10)] {
		fmt.Fprintf(out, "  [%s, %s) %-8s %d\n", time.UnixMilli(r.Start).UTC().Format("15:04:05"), time.UnixMilli(r.End).UTC().Format("15:04:05"), r.Type, r.Count)
	}
	late, open := 0, 0
	if err := readAll(ctx, d, LateTopic, func(*consumer.Record) error { late++; return nil }); err != nil {
		return err
	}
	state := map[string]bool{}
	if err := readAll(ctx, d, ChangelogTopic, func(r *consumer.Record) error {
		state[string(r.Key)] = r.Value != nil
		return nil
	}); err != nil {
		return err
	}
	for _, live := range state {
		if live {
			open++
		}
	}
	fmt.Fprintf(out, "%s: %d events too late for their window\n", LateTopic, late)
	fmt.Fprintf(out, "%s: %d counts of windows still open (the watermark has not passed them)\n", ChangelogTopic, open)
	return nil
}
