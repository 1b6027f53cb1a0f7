package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
)

// runConsumer reads every record of the topic in o.dir with a consumer of
// the group "perf-consumer" from the earliest offset, and returns Kafka's
// consumer-perf-test summary (header and values).
func runConsumer(o options) (string, error) {
	if o.dir == "" {
		return "", errors.New("-consume reads what a produce run left: give its -dir")
	}
	ctx := context.Background()
	d, err := log.Open(ctx, o.dir, log.DefaultConfig())
	if err != nil {
		return "", err
	}
	defer d.Close()
	desc, err := d.DescribeTopic(o.topic)
	if err != nil {
		return "", err
	}
	cfg := consumer.DefaultConfig()
	cfg.GroupID = fmt.Sprintf("perf-consumer-%d", time.Now().UnixNano())
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	cfg.EnableAutoCommit = false
	cfg.MaxPollRecords = 2000
	c, err := consumer.New(d, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	var total int64
	for p := range desc.Partitions {
		l, err := d.Partition(o.topic, p)
		if err != nil {
			return "", err
		}
		total += l.LogEndOffset() - l.LogStartOffset()
	}
	start := time.Now()
	if err := c.Subscribe([]string{o.topic}, nil); err != nil {
		return "", err
	}
	var records, bytes int64
	var rebalance time.Duration
	fetchStart := time.Time{}
	for records < total {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		recs, err := c.Poll(pctx)
		cancel()
		if err != nil {
			return "", fmt.Errorf("after %d of %d records: %w", records, total, err)
		}
		if fetchStart.IsZero() {
			fetchStart = time.Now()
			rebalance = fetchStart.Sub(start)
		}
		records += int64(len(recs))
		for i := range recs {
			bytes += int64(len(recs[i].Key) + len(recs[i].Value))
		}
	}
	end := time.Now()
	mb := float64(bytes) / 1024 / 1024
	secs := end.Sub(start).Seconds()
	fetchSecs := end.Sub(fetchStart).Seconds()
	// Kafka prints times as yyyy-MM-dd HH:mm:ss:SSS.
	stamp := func(t time.Time) string {
		return fmt.Sprintf("%s:%03d", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/1e6)
	}
	return fmt.Sprintf("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"+
		"%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f",
		stamp(start), stamp(end), mb, mb/secs, records, float64(records)/secs,
		rebalance.Milliseconds(), end.Sub(fetchStart).Milliseconds(), mb/fetchSecs, float64(records)/fetchSecs), nil
}
