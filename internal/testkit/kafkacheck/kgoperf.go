package kafkacheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KgoWorkload is a franz-go (kgo) produce-then-consume run against one
// broker: Records records of RecordBytes bytes, without keys, produced at
// full speed to a new topic of Partitions partitions, then read back from
// the start by a groupless consumer. The batches are not compressed, as
// with Kafka's perf tools (kgo's default is snappy); both clients keep
// kgo's defaults otherwise: linger 10 ms, batches up to 1,000,012 bytes,
// 50,000 buffered records, one produce request in flight per broker, the
// uniform-bytes partitioner (a new partition every 64 KiB), fetches of up
// to 50 MiB and 1 MiB per partition. With acks=all kgo's idempotent
// producer is on (its default); with acks=1 it is off, as kgo requires.
type KgoWorkload struct {
	Bootstrap   string
	Topic       string
	Partitions  int32
	Records     int
	RecordBytes int
	// Acks is "1" or "all".
	Acks string
	// NoLinger sends each partition's batch as soon as a request can
	// take it (kgo.ProducerLinger(0)) in place of kgo's 10 ms linger.
	NoLinger bool
}

// KgoResult is what a KgoWorkload measured. Produce latency is per
// record, from the Produce call to its promise (the acknowledgement);
// the rates count from the first Produce to the last promise, and from
// the consumer's creation to the last record read.
type KgoResult struct {
	ProducePerSec, ProduceMBPerSec float64
	P50, P99, Max                  time.Duration
	ConsumePerSec, ConsumeMBPerSec float64
}

// RunKgo runs w: it creates the topic, waits until every partition has a
// leader, produces and consumes. It fails if any record fails, or if the
// consumer reads other than w.Records records.
func RunKgo(ctx context.Context, w KgoWorkload) (KgoResult, error) {
	var res KgoResult
	if err := createKgoTopic(ctx, w.Bootstrap, w.Topic, w.Partitions); err != nil {
		return res, err
	}
	if err := produceKgo(ctx, w, &res); err != nil {
		return res, err
	}
	return res, consumeKgo(ctx, w, &res)
}

// createKgoTopic creates topic and waits until the broker's metadata
// gives each of its partitions a leader (Kafka's broker elects them a
// moment after CreateTopics answers).
func createKgoTopic(ctx context.Context, bootstrap, topic string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	req.Topics, req.TimeoutMillis = []kmsg.CreateTopicsRequestTopic{rt}, 30_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("creating %s: %w", topic, err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return fmt.Errorf("creating %s: %+v", topic, resp.Topics)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		mreq := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = &topic
		mreq.Topics = []kmsg.MetadataRequestTopic{mt}
		mresp, err := mreq.RequestWith(ctx, cl)
		if err == nil && len(mresp.Topics) == 1 && mresp.Topics[0].ErrorCode == 0 &&
			len(mresp.Topics[0].Partitions) == int(partitions) && !slices.ContainsFunc(mresp.Topics[0].Partitions,
			func(p kmsg.MetadataResponseTopicPartition) bool { return p.ErrorCode != 0 || p.Leader < 0 }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the leaders of %s: %w (last error %v)", topic, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func produceKgo(ctx context.Context, w KgoWorkload, res *KgoResult) error {
	opts := []kgo.Opt{kgo.SeedBrokers(w.Bootstrap), kgo.DefaultProduceTopic(w.Topic), kgo.ProducerBatchCompression(kgo.NoCompression())}
	switch w.Acks {
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	default:
		return fmt.Errorf("acks %q: 1 or all", w.Acks)
	}
	if w.NoLinger {
		opts = append(opts, kgo.ProducerLinger(0))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	value := make([]byte, w.RecordBytes)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	latencies := make([]time.Duration, w.Records)
	var acked atomic.Int64
	var firstErr atomic.Pointer[error]
	done := make(chan struct{})
	// The promise reads the record's Timestamp, set just before Produce:
	// its latency is from the call to the acknowledgement.
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			firstErr.CompareAndSwap(nil, &err)
		}
		n := acked.Add(1)
		latencies[n-1] = time.Since(r.Timestamp)
		if n == int64(w.Records) {
			close(done)
		}
	}
	start := time.Now()
	for range w.Records {
		cl.Produce(ctx, &kgo.Record{Value: value, Timestamp: time.Now()}, promise)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("producing: %w after %d of %d acknowledgements", ctx.Err(), acked.Load(), w.Records)
	}
	elapsed := time.Since(start)
	if p := firstErr.Load(); p != nil {
		return fmt.Errorf("producing: %w", *p)
	}
	slices.Sort(latencies)
	res.ProducePerSec = float64(w.Records) / elapsed.Seconds()
	res.ProduceMBPerSec = float64(w.Records*w.RecordBytes) / 1e6 / elapsed.Seconds()
	res.P50, res.P99, res.Max = latencies[len(latencies)*50/100], latencies[len(latencies)*99/100], latencies[len(latencies)-1]
	return nil
}

func consumeKgo(ctx context.Context, w KgoWorkload, res *KgoResult) error {
	start := time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.Bootstrap), kgo.ConsumeTopics(w.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	n, bytes := 0, 0
	for n < w.Records {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consuming: %w after %d of %d records", err, n, w.Records)
		}
		var errs []error
		fs.EachError(func(topic string, p int32, err error) { errs = append(errs, fmt.Errorf("%s-%d: %w", topic, p, err)) })
		if len(errs) > 0 {
			return fmt.Errorf("consuming: %w", errors.Join(errs...))
		}
		fs.EachRecord(func(r *kgo.Record) { n, bytes = n+1, bytes+len(r.Value) })
	}
	elapsed := time.Since(start)
	if n != w.Records {
		return fmt.Errorf("consumed %d records, produced %d", n, w.Records)
	}
	res.ConsumePerSec = float64(n) / elapsed.Seconds()
	res.ConsumeMBPerSec = float64(bytes) / 1e6 / elapsed.Seconds()
	return nil
}
