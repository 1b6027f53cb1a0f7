package log_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// Open a directory, create a topic, append a batch durably and read it back.
func Example() {
	dir, _ := os.MkdirTemp("", "kafkalite-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "orders", 3, map[string]string{"retention.ms": "86400000"}); err != nil {
		panic(err)
	}
	p, _ := d.Partition("orders", 0)

	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	_ = b.Append(time.Now().UnixMilli(), []byte("order-1"), []byte(`{"total":"9.99"}`), nil)
	batch, _ := b.Build()
	res, err := p.AppendDurable(ctx, batch)
	if err != nil {
		panic(err)
	}
	fmt.Println("appended at offset", res.BaseOffset)

	_, err = p.ReadRecords(0, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
		fmt.Printf("read %s = %s at offset %d\n", rec.Key, rec.Value, rec.Offset)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// appended at offset 0
	// read order-1 = {"total":"9.99"} at offset 0
}

// A Dir on the memory filesystem, and what a power loss leaves of it: data
// appended durably survives, data appended and not synced does not.
func ExampleConfig_memoryFilesystem() {
	ctx := context.Background()
	mem := vfs.NewMem()
	cfg := log.DefaultConfig()
	cfg.FS = mem
	d, _ := log.Open(ctx, "/data", cfg)
	defer d.Close() // runs after the crash below, on mem, not on its clone
	_, _ = d.CreateTopic(ctx, "t", 1, nil)
	p, _ := d.Partition("t", 0)
	batch := func(value string) []byte {
		var b record.Builder
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
		_ = b.Append(0, nil, []byte(value), nil)
		out, _ := b.Build()
		return out
	}
	_, _ = p.AppendDurable(ctx, batch("synced"))
	_, _ = p.Append(batch("not synced"))

	cfg.FS = mem.CrashClone() // the disk a power loss would leave now
	after, _ := log.Open(ctx, "/data", cfg)
	defer after.Close()
	q, _ := after.Partition("t", 0)
	fmt.Println("records after the crash:", q.LogEndOffset())
	// Output:
	// records after the crash: 1
}

// Append is the broker's produce path: it validates a producer's batch,
// assigns its offsets and refuses bad batches with typed errors.
func ExampleLog_Append() {
	dir, _ := os.MkdirTemp("", "kafkalite-append-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, _ := log.Open(ctx, dir, log.DefaultConfig())
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "events", 1, nil)
	l, _ := d.Partition("events", 0)

	producerBatch := func(n int) []byte {
		recs := make([]record.Record, n)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: 1700000000000 + int64(i), Value: []byte("v")}
		}
		b, _ := record.AppendBatch(nil, record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			record.DefaultLevel, recs)
		return b
	}
	for _, n := range []int{3, 2} {
		res, err := l.Append(producerBatch(n))
		if err != nil {
			panic(err)
		}
		fmt.Println("offsets", res.BaseOffset, "to", res.LastOffset)
	}

	bad := producerBatch(1)
	bad[len(bad)-1] ^= 0xff // damage a record: the CRC no longer matches
	_, err := l.Append(bad)
	fmt.Println("refused:", errors.Is(err, record.ErrCRC), "log end offset", l.LogEndOffset())
	// Output:
	// offsets 0 to 2
	// offsets 3 to 4
	// refused: true log end offset 5
}

// Read is the broker's fetch path: whole batches as a file slice, which
// WriteTo sends to a socket without copying (sendfile on Linux).
// OffsetForTimestamp is ListOffsets.
func ExampleLog_Read() {
	dir, _ := os.MkdirTemp("", "kafkalite-read-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, _ := log.Open(ctx, dir, log.DefaultConfig())
	defer d.Close()
	_, _ = d.CreateTopic(ctx, "events", 1, nil)
	l, _ := d.Partition("events", 0)
	for i := range 3 {
		b, _ := record.AppendBatch(nil, record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			record.DefaultLevel, []record.Record{{Timestamp: 1700000000000 + int64(i)*1000, Value: []byte("v")}})
		_, _ = l.Append(b)
	}

	res, err := l.Read(1, 1<<20, true)
	if err != nil {
		panic(err)
	}
	var sent bytes.Buffer // a *net.TCPConn in a broker
	n, _ := res.Slice.WriteTo(&sent)
	fmt.Println("sent", n, "bytes: offsets", res.Slice.FirstOffset, "to", res.Slice.LastOffset, "high watermark", res.HighWatermark)
	res.Release()

	for _, ts := range []int64{log.EarliestTimestamp, log.LatestTimestamp, log.MaxTimestamp, 1700000001500} {
		ot, ok, _ := l.OffsetForTimestamp(ts)
		fmt.Println("ListOffsets", ts, "->", ot.Offset, ok)
	}
	// Output:
	// sent 138 bytes: offsets 1 to 2 high watermark 3
	// ListOffsets -2 -> 0 true
	// ListOffsets -1 -> 3 true
	// ListOffsets -3 -> 2 true
	// ListOffsets 1700000001500 -> 2 true
}

// A compacted topic keeps the latest value of each key: the Dir's cleaner
// does it in the background; CleanNow runs it at once.
func ExampleDir_CleanNow() {
	dir, _ := os.MkdirTemp("", "kafkalite-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "prices", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024"}); err != nil {
		panic(err)
	}
	p, _ := d.Partition("prices", 0)
	var b record.Builder
	for i := range 40 {
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
		_ = b.Append(time.Now().UnixMilli(), fmt.Appendf(nil, "item-%d", i%4), fmt.Appendf(nil, "%d", 100+i), nil)
		batch, _ := b.Build()
		if _, err := p.Append(batch); err != nil {
			panic(err)
		}
	}
	if _, err := d.CleanNow(ctx); err != nil {
		panic(err)
	}
	latest := map[string]string{}
	n := 0
	for off := p.LogStartOffset(); off < p.LogEndOffset(); {
		next, err := p.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			latest[string(r.Key)] = string(r.Value)
			n++
			return nil
		})
		if err != nil {
			panic(err)
		}
		off = next
	}
	fmt.Println("records left of 40:", n < 40, "latest of item-3:", latest["item-3"], "offsets unchanged:", p.LogEndOffset())
	// Output: records left of 40: true latest of item-3: 139 offsets unchanged: 40
}
