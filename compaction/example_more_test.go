package compaction_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kafkalite/kafkalite/compaction"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// The cleaner runs inside an open log directory: a topic with
// cleanup.policy=compact keeps the latest record of each key, a tombstone (a
// null value) stays for delete.retention.ms so that readers see the delete,
// and offsets never change. Log.CleanerStats reports the round.
func Example() {
	dir, _ := os.MkdirTemp("", "kafkalite-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "users", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024"}); err != nil {
		panic(err)
	}
	p, _ := d.Partition("users", 0)
	put := func(key string, value []byte) {
		var b record.Builder
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
		_ = b.Append(time.Now().UnixMilli(), []byte(key), value, nil)
		batch, _ := b.Build()
		if _, err := p.Append(batch); err != nil {
			panic(err)
		}
	}
	for i := range 30 {
		put(fmt.Sprintf("user-%d", i%3), fmt.Appendf(nil, "v%d", i))
	}
	put("user-0", nil) // delete user-0
	for i := range 12 {
		put("filler", fmt.Appendf(nil, "%d", i)) // roll past the tombstone: the active segment is never cleaned
	}
	if _, err := d.CleanNow(ctx); err != nil {
		panic(err)
	}
	for off := p.LogStartOffset(); off < p.LogEndOffset(); {
		next, err := p.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			if string(r.Key) != "filler" {
				fmt.Printf("offset %d: %s = %q (tombstone: %v)\n", r.Offset, r.Key, r.Value, r.Value == nil)
			}
			return nil
		})
		if err != nil {
			panic(err)
		}
		off = next
	}
	st, _ := p.CleanerStats()
	fmt.Println("records removed:", st.RecordsRemoved() > 0, "log end offset:", p.LogEndOffset())
	// Output:
	// offset 28: user-1 = "v28" (tombstone: false)
	// offset 29: user-2 = "v29" (tombstone: false)
	// offset 30: user-0 = "" (tombstone: true)
	// records removed: true log end offset: 43
}

// A Throttler bounds the cleaners' I/O (log.cleaner.io.max.bytes.per.second)
// as Kafka's does: once a check window of more than 300 ms has passed, a
// caller that went over the rate sleeps until the window's bytes fit it.
// Here the clock and the sleep are fakes, to show the figures.
func ExampleThrottler() {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	sleep := func(_ context.Context, d time.Duration) error {
		fmt.Println("sleep", d)
		now = now.Add(d)
		return nil
	}
	t := compaction.NewThrottler(1<<20, clock, sleep) // 1 MiB/s
	ctx := context.Background()
	_ = t.MaybeThrottle(ctx, 1<<20) // 1 MiB at once: the window is still open
	now = now.Add(400 * time.Millisecond)
	_ = t.MaybeThrottle(ctx, 1<<20) // 2 MiB in 400 ms: sleep to make it 2 s
	now = now.Add(time.Second)
	_ = t.MaybeThrottle(ctx, 1<<10) // 1 KiB in 1 s: under the rate
	// Output:
	// sleep 1.6s
}
