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
// reads only what that run produced. Every record read is verified: its
// key, its value, its partition (murmur2 of the key), and that each
// partition holds its records in the order they were sent, each exactly
// once; a mismatch is an error and the command exits 1.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/partitioner"
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
	starts := make([]int64, desc.Partitions) // where this run's records begin
	for p := range parts {
		if parts[p], err = d.Partition(topic, int32(p)); err != nil {
			return err
		}
		starts[p] = parts[p].LogEndOffset()
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
		key, value := event(i)
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
	v := newVerifier(n, starts)
	// The ends the consumer must reach: the partitions' ends now that
	// every record of the run is in.
	tps, err := c.PartitionsFor(topic)
	if err != nil {
		return err
	}
	ends, err := c.EndOffsets(tps)
	if err != nil {
		return err
	}
	for {
		if done, err := c.CaughtUp(ends); err != nil || done {
			if err != nil {
				return err
			}
			break
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		recs, err := c.Poll(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("after %d records: %w", v.consumed, err)
		}
		for i := range recs {
			if err := v.check(&recs[i], desc.Partitions); err != nil {
				return err
			}
		}
	}
	if err := c.CommitSync(ctx, nil); err != nil {
		return err
	}
	if err := c.Close(ctx); err != nil {
		return err
	}
	read := time.Since(began)
	if err := v.complete(); err != nil {
		return err
	}
	consumed := v.consumed

	fmt.Fprintf(out, "produced %d records (%.1f MB of keys and values) to %s in %v: %.0f records/s, %.1f MB/s; %d lz4 batches of %.0f records, compression rate %.2f, acks=all\n",
		n, float64(bytesOut)/1e6, topic, produced.Round(time.Millisecond), float64(n)/produced.Seconds(), float64(bytesOut)/1e6/produced.Seconds(),
		st.Batches, st.RecordsPerBatch, st.CompressionRate)
	fmt.Fprintf(out, "consumed %d records with group %q in %v: %.0f records/s; offsets committed\n", consumed, "quickstart", read.Round(time.Millisecond), float64(consumed)/read.Seconds())
	fmt.Fprintf(out, "verified all %d records of this run: key, value and murmur2 partition of each, every record once, in send order per partition", n)
	if v.earlier > 0 {
		fmt.Fprintf(out, " (and %d records of an earlier run the group had not read)", v.earlier)
	}
	fmt.Fprintln(out)
	for p, l := range parts {
		fmt.Fprintf(out, "  %s-%d: offsets %d..%d\n", topic, p, l.LogStartOffset(), l.LogEndOffset()-1)
	}
	fmt.Fprintf(out, "files in %s:\n", dir)
	return listFiles(dir, out)
}

// event is record i of a run: a user's page view.
func event(i int) (key, value []byte) {
	return fmt.Appendf(nil, "user-%d", i%1000),
		fmt.Appendf(nil, `{"user":"user-%d","event":"page_view","page":"/item/%d","seq":%d}`, i%1000, i%250, i)
}

// verifier checks the records the consumer returns against what the run
// sent: each record is the event its value's seq names, in the partition
// murmur2 gives its key, and each partition's records of this run come in
// the order they were sent, each once. Records below a partition's start
// are an earlier run's that its group had not read: checked, not counted.
type verifier struct {
	n        int
	starts   []int64
	seen     []bool
	last     []int // per partition, the last seq of this run, or -1
	consumed int
	earlier  int
	pos      []int64 // per partition, the offset after the last record read
}

func newVerifier(n int, starts []int64) *verifier {
	v := &verifier{n: n, starts: starts, seen: make([]bool, n), last: make([]int, len(starts)), pos: make([]int64, len(starts))}
	for p := range v.last {
		v.last[p] = -1
	}
	return v
}

func (v *verifier) check(r *consumer.Record, partitions int32) error {
	_, rest, found := bytes.Cut(r.Value, []byte(`"seq":`))
	seq, err := strconv.Atoi(string(bytes.TrimSuffix(rest, []byte("}"))))
	if !found || err != nil || seq < 0 {
		return fmt.Errorf("%s-%d@%d: value %q has no seq", r.Topic, r.Partition, r.Offset, r.Value)
	}
	key, value := event(seq)
	switch {
	case !bytes.Equal(r.Key, key) || !bytes.Equal(r.Value, value):
		return fmt.Errorf("%s-%d@%d: record %q=%q, want %q=%q", r.Topic, r.Partition, r.Offset, r.Key, r.Value, key, value)
	case partitioner.PartitionForKey(r.Key, partitions) != r.Partition:
		return fmt.Errorf("%s-%d@%d: key %q belongs in partition %d", r.Topic, r.Partition, r.Offset, r.Key, partitioner.PartitionForKey(r.Key, partitions))
	case r.Offset < v.pos[r.Partition]:
		return fmt.Errorf("%s-%d@%d: offset after %d", r.Topic, r.Partition, r.Offset, v.pos[r.Partition]-1)
	}
	v.pos[r.Partition] = r.Offset + 1
	if r.Offset < v.starts[r.Partition] {
		v.earlier++
		return nil
	}
	switch {
	case seq >= v.n:
		return fmt.Errorf("%s-%d@%d: seq %d, this run sent %d", r.Topic, r.Partition, r.Offset, seq, v.n)
	case v.seen[seq]:
		return fmt.Errorf("%s-%d@%d: seq %d read twice", r.Topic, r.Partition, r.Offset, seq)
	case seq <= v.last[r.Partition]:
		return fmt.Errorf("%s-%d@%d: seq %d after %d: out of send order", r.Topic, r.Partition, r.Offset, seq, v.last[r.Partition])
	}
	v.seen[seq], v.last[r.Partition] = true, seq
	v.consumed++
	return nil
}

// complete checks that every record of the run was read.
func (v *verifier) complete() error {
	for seq, ok := range v.seen {
		if !ok {
			return fmt.Errorf("record %d of %d was not read back", seq, v.n)
		}
	}
	return nil
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
