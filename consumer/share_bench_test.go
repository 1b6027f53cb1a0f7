package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// shareBenchRecords is what one op of BenchmarkShareConsumer drains:
// 100-byte records in uncompressed batches of 100, spread evenly over the
// partitions.
const shareBenchRecords = 100_000

// BenchmarkShareConsumer measures share consumers draining
// shareBenchRecords records from a directory on the real filesystem (page
// cache), beside the classic consumer draining the same: one op is the
// whole drain by a group of its own (joining included), reported in
// records/s. The share consumers run one or two members, each on its own
// goroutine, with implicit acknowledgement (CommitSync after each Poll)
// or explicit (Acknowledge of each record, then CommitSync); the classic
// consumer assigns itself the partitions and commits with CommitSync
// after each Poll. max.poll.records is Kafka's default, 500, for all.
func BenchmarkShareConsumer(b *testing.B) {
	for _, parts := range []int32{1, 4} {
		d := shareBenchDir(b, parts)
		b.Run(fmt.Sprintf("partitions=%d/classic", parts), func(b *testing.B) { benchClassicDrain(b, d, parts) })
		for _, members := range []int{1, 2} {
			for _, mode := range []AcknowledgementMode{AcknowledgeImplicit, AcknowledgeExplicit} {
				b.Run(fmt.Sprintf("partitions=%d/share/members=%d/%s", parts, members, mode), func(b *testing.B) {
					benchShareDrain(b, d, parts, members, mode)
				})
			}
		}
	}
}

// shareBenchDir opens a directory on the real filesystem with topic t of
// parts partitions holding shareBenchRecords records; it is closed when b
// ends.
func shareBenchDir(b *testing.B, parts int32) *log.Dir {
	d, err := log.Open(context.Background(), b.TempDir(), log.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if _, err := d.CreateTopic(context.Background(), "t", parts, nil); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	for p := range parts {
		l, err := d.Partition("t", p)
		if err != nil {
			b.Fatal(err)
		}
		if err := appendRecords(l, record.None, shareBenchRecords/int(parts), 100, func(int) ([]byte, []byte) { return nil, value }); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

var shareBenchGroups atomic.Int64

func benchClassicDrain(b *testing.B, d *log.Dir, parts int32) {
	ctx := context.Background()
	var tps []TopicPartition
	for p := range parts {
		tps = append(tps, TopicPartition{Topic: "t", Partition: p})
	}
	b.ReportAllocs()
	for b.Loop() {
		cfg := DefaultConfig()
		cfg.GroupID = fmt.Sprintf("classic-%d", shareBenchGroups.Add(1))
		cfg.EnableAutoCommit = false
		cfg.AutoOffsetReset = OffsetResetEarliest
		c, err := New(d, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Assign(tps); err != nil {
			b.Fatal(err)
		}
		for n := 0; n < shareBenchRecords; {
			recs, err := c.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += len(recs)
			if err := c.CommitSync(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*shareBenchRecords)/b.Elapsed().Seconds(), "records/s")
}

func benchShareDrain(b *testing.B, d *log.Dir, parts int32, members int, mode AcknowledgementMode) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		group := fmt.Sprintf("share-%d", shareBenchGroups.Add(1))
		if _, err := d.AlterGroupConfig(ctx, group, map[string]string{"share.auto.offset.reset": "earliest"}); err != nil {
			b.Fatal(err)
		}
		drainCtx, cancel := context.WithCancel(ctx)
		var drained atomic.Int64
		var wg sync.WaitGroup
		errs := make([]error, members)
		for m := range members {
			cfg := DefaultShareConfig()
			cfg.GroupID, cfg.AcknowledgementMode = group, mode
			c, err := NewShareConsumer(d, cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Subscribe([]string{"t"}); err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				defer func() { errs[m] = errors.Join(errs[m], c.Close(ctx)) }()
				errs[m] = shareDrain(drainCtx, c, mode, &drained, cancel)
			})
		}
		wg.Wait()
		cancel()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
		if n := drained.Load(); n != shareBenchRecords {
			b.Fatalf("drained %d records of %d", n, shareBenchRecords)
		}
	}
	b.ReportMetric(float64(b.N*shareBenchRecords)/b.Elapsed().Seconds(), "records/s")
}

// shareDrain polls c until the members drained shareBenchRecords records
// together, committing the acknowledgements of each Poll; the member that
// gets the last one cancels the others' ctx.
func shareDrain(ctx context.Context, c *ShareConsumer, mode AcknowledgementMode, drained *atomic.Int64, done context.CancelFunc) error {
	for {
		recs, err := c.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if mode == AcknowledgeExplicit {
			for _, r := range recs {
				if err := c.Acknowledge(r, AcknowledgeAccept); err != nil {
					return err
				}
			}
		}
		res, err := c.CommitSync(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		for _, err := range res {
			if err != nil {
				return err
			}
		}
		if drained.Add(int64(len(recs))) >= shareBenchRecords {
			done()
			return nil
		}
	}
}
