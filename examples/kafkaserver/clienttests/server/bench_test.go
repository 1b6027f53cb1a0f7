package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// benchChunk is the records one iteration of BenchmarkKgoProduceConsume
// produces and consumes back: 10,000 records of benchRecordBytes.
const (
	benchChunk       = 10_000
	benchRecordBytes = 100
)

// BenchmarkKgoProduceConsume: franz-go's producer and consumer (kgo,
// its defaults, linger 10 ms, but uncompressed) against the server
// (servertest, a directory on disk) and against franz-go's kfake (one
// fake broker, in memory), both in this process, side by side. An
// iteration produces 10,000 records of 100 bytes to a topic of 1 or 6
// partitions, with acks=1 (idempotence off) or acks=all (kgo's idempotent
// producer; the server fsyncs before it answers, kfake keeps the records
// in memory), waits for every acknowledgement, then reads the 10,000
// back with a groupless consumer that stays open across iterations.
// Bytes per op are the values produced; allocations are the whole
// process's: both clients' and the broker's. Besides, produce-rec/s and
// consume-rec/s are each phase's records over its time, p99-ms the 99th
// percentile of the produce latency of every record (from Produce to its
// promise). The measurement across processes and against Kafka's broker
// is internal/testkit/kafkacheck's TestPerfKgo.
func BenchmarkKgoProduceConsume(b *testing.B) {
	targets := []struct {
		name  string
		start func(b *testing.B) string
	}{
		{"kafkaserver", func(b *testing.B) string {
			return servertest.Start(b, func(c *server.Config) { c.Logger = slog.New(slog.DiscardHandler) }).Addr
		}},
		{"kfake", func(b *testing.B) string {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Close)
			return c.ListenAddrs()[0]
		}},
	}
	for _, partitions := range []int32{1, 6} {
		for _, acks := range []string{"1", "all"} {
			for _, tg := range targets {
				b.Run(fmt.Sprintf("partitions=%d/acks=%s/%s", partitions, acks, tg.name), func(b *testing.B) {
					benchKgo(b, tg.start(b), partitions, acks)
				})
			}
		}
	}
}

func benchKgo(b *testing.B, addr string, partitions int32, acks string) {
	ctx := context.Background()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("bench"), kgo.ProducerBatchCompression(kgo.NoCompression())}
	if acks == "1" {
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	prod, err := kgo.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "bench", partitions, 1
	req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
	if resp, err := req.RequestWith(ctx, prod); err != nil || resp.Topics[0].ErrorCode != 0 {
		b.Fatalf("creating the topic: %v %+v", err, resp)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()

	value := make([]byte, benchRecordBytes)
	// kgo calls the promises serially; wg.Wait orders them before the
	// reads of firstErr and latencies.
	var (
		firstErr  error
		latencies []time.Duration
		wg        sync.WaitGroup
	)
	promise := func(r *kgo.Record, err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
		latencies = append(latencies, time.Since(r.Timestamp))
		wg.Done()
	}
	var produceTime, consumeTime time.Duration
	b.SetBytes(benchChunk * benchRecordBytes)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		wg.Add(benchChunk)
		for range benchChunk {
			prod.Produce(ctx, &kgo.Record{Value: value, Timestamp: time.Now()}, promise)
		}
		wg.Wait()
		mid := time.Now()
		if firstErr != nil {
			b.Fatal(firstErr)
		}
		for n := 0; n < benchChunk; {
			fs := cons.PollFetches(ctx)
			fs.EachError(func(topic string, p int32, err error) { b.Fatalf("fetching %s-%d: %v", topic, p, err) })
			n += fs.NumRecords()
		}
		produceTime, consumeTime = produceTime+mid.Sub(start), consumeTime+time.Since(mid)
	}
	slices.Sort(latencies)
	records := float64(b.N * benchChunk)
	b.ReportMetric(records/produceTime.Seconds(), "produce-rec/s")
	b.ReportMetric(records/consumeTime.Seconds(), "consume-rec/s")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1e3, "p99-ms")
}
