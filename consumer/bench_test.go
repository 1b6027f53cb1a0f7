package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// BenchmarkPoll polls 100-byte records of one partition from a directory on
// the real filesystem (page cache), written beforehand in batches of 1,000
// records, uncompressed and lz4 (whose records Poll copies out of the
// decompression buffer). One op is one record.
func BenchmarkPoll(b *testing.B) {
	for _, codec := range []record.Compression{record.None, record.LZ4} {
		b.Run("codec="+codec.String(), func(b *testing.B) { benchPoll(b, codec) })
	}
}

func benchPoll(b *testing.B, codec record.Compression) {
	d := benchDir(b)
	const total = 2_000_000
	l, err := d.Partition("t", 0)
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	if err := appendRecords(l, codec, total, 1000, func(int) ([]byte, []byte) { return nil, value }); err != nil {
		b.Fatal(err)
	}
	pollFromStart(b, d, ReadUncommitted, total-1)
}

// benchDir opens a directory on the real filesystem with topic t of one
// partition; it is closed when b ends.
func benchDir(b *testing.B) *log.Dir {
	d, err := log.Open(context.Background(), b.TempDir(), log.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if _, err := d.CreateTopic(context.Background(), "t", 1, nil); err != nil {
		b.Fatal(err)
	}
	return d
}

// pollFromStart measures a consumer at level polling partition t-0 of d
// (100-byte records), one op a record, from the start to the record at
// last and again from the start.
func pollFromStart(b *testing.B, d *log.Dir, level IsolationLevel, last int64) {
	cfg := DefaultConfig()
	cfg.AutoOffsetReset = OffsetResetEarliest
	cfg.MaxPollRecords = 2000
	cfg.IsolationLevel = level
	c, err := New(d, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := c.Assign([]TopicPartition{{Topic: "t", Partition: 0}}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(100)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		recs, err := c.Poll(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n += len(recs)
		if len(recs) > 0 && recs[len(recs)-1].Offset == last {
			b.StopTimer()
			if err := c.SeekToBeginning(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkRebalance measures a rebalance of a group of 4 polling members
// over a topic of 64 partitions: a fifth member joins, and the op lasts until
// all five have their new assignment.
func BenchmarkRebalance(b *testing.B) {
	for _, strategy := range []assignor.Assignor{assignor.Range(), assignor.CooperativeSticky()} {
		b.Run(strategy.Name(), func(b *testing.B) {
			cfg := log.DefaultConfig()
			cfg.OffsetsTopicNumPartitions = 1
			d, err := log.Open(context.Background(), b.TempDir(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			if _, err := d.CreateTopic(context.Background(), "t", 64, nil); err != nil {
				b.Fatal(err)
			}
			newMember := func() *Consumer {
				ccfg := DefaultConfig()
				ccfg.GroupID = "bench"
				ccfg.EnableAutoCommit = false
				ccfg.HeartbeatInterval = 5 * time.Millisecond
				ccfg.PartitionAssignmentStrategy = []assignor.Assignor{strategy}
				c, err := New(d, ccfg)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Subscribe([]string{"t"}, nil); err != nil {
					b.Fatal(err)
				}
				return c
			}
			var members []*Consumer
			for range 4 {
				members = append(members, newMember())
			}
			settle := func(cs []*Consumer, want int) {
				for {
					total := 0
					for _, c := range cs {
						ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
						_, _ = c.Poll(ctx)
						cancel()
						total += len(c.Assignment())
					}
					balanced := true
					for _, c := range cs {
						if n := len(c.Assignment()); n < 64/want || n > 64/want+1 {
							balanced = false
						}
					}
					if total == 64 && balanced {
						return
					}
				}
			}
			settle(members, 4)
			b.ResetTimer()
			for range b.N {
				extra := newMember()
				settle(append(members, extra), 5)
				b.StopTimer()
				if err := extra.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				settle(members, 4)
				b.StartTimer()
			}
			for _, c := range members {
				_ = c.Close(context.Background())
			}
		})
	}
}
