package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// The topics, group and transactional id of the processor.
const (
	SourceTopic     = "events"
	ResultsTopic    = "window-counts"
	LateTopic       = "late-events"
	ChangelogTopic  = "windowcount-counts-changelog" // Kafka Streams' name: <application>-<store>-changelog
	Group           = "windowcount"
	TransactionalID = "windowcount-processor"
	Partitions      = 3 // of every topic: a task per source partition, co-partitioned outputs
)

// DefaultWindows: ten-second tumbling windows, three seconds of allowed
// lateness.
var DefaultWindows = Windows{Size: 10_000, Lateness: 3_000}

// Config configures a run of the processor ([Run]).
type Config struct {
	// Windows is the windowing (DefaultWindows by default).
	Windows Windows
	// MaxPollRecords mirrors the consumer's max.poll.records (Kafka's
	// default 500): the most events one transaction processes.
	MaxPollRecords int
	// CompressionType mirrors compression.type (Kafka's default none) of
	// the processor's transactional producer: the codec of the batches it
	// writes to ResultsTopic, LateTopic and ChangelogTopic. A run may use
	// another codec than the one before it: consumers, the restore
	// included, read batches of every codec alike.
	CompressionType record.Compression
}

// DefaultConfig returns DefaultWindows and Kafka's defaults: 500 records
// per poll, no compression.
func DefaultConfig() Config {
	return Config{
		Windows:         DefaultWindows,
		MaxPollRecords:  consumer.DefaultConfig().MaxPollRecords,
		CompressionType: producer.DefaultConfig().CompressionType,
	}
}

// CreateTopics creates the four topics if they do not exist. The
// changelog is compacted: only each key's latest value matters.
func CreateTopics(ctx context.Context, d *log.Dir) error {
	for _, t := range []struct {
		name  string
		props map[string]string
	}{
		{SourceTopic, nil},
		{ResultsTopic, nil},
		{LateTopic, nil},
		{ChangelogTopic, map[string]string{"cleanup.policy": "compact"}},
	} {
		if _, err := d.CreateTopic(ctx, t.name, Partitions, t.props); err != nil && !errors.Is(err, log.ErrTopicExists) {
			return err
		}
	}
	return nil
}

// Event times of SeedEvents, in ms.
const (
	firstEventTime = 1767225600000 // 2026-01-01 00:00 UTC: the first event in an empty source topic
	eventSpacing   = 40            // between one event and the next
)

// SeedEvents appends n events to the source topic, keyed by type: event
// times advance 40 ms per event from a start, each up to 2.5 s early (out
// of order, within the allowed lateness), and about one in thirty from 5 to
// 10 s early (late, for windows already emitted). The start is
// firstEventTime in an empty topic; otherwise 40 ms after the latest event
// time in the topic (SeedEvents reads the whole topic to find it), so that
// a second round continues the first: its events fall in new windows, late
// no more often than in the first round. The batches are compressed with
// compression (a compression.type).
func SeedEvents(ctx context.Context, d *log.Dir, n int, seed uint64, compression record.Compression) (err error) {
	if err := CreateTopics(ctx, d); err != nil {
		return err
	}
	start, err := seedStart(d)
	if err != nil {
		return err
	}
	pcfg := producer.DefaultConfig()
	pcfg.CompressionType = compression
	p, err := producer.New(d, pcfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Close(ctx)) }()
	rng := rand.New(rand.NewPCG(seed, 0))
	types := []string{"click", "view", "purchase", "signup", "search"}
	for i := range n {
		ev := Event{Type: types[rng.IntN(len(types))], TS: start + int64(i)*eventSpacing - rng.Int64N(2_500)}
		if rng.IntN(30) == 0 {
			ev.TS -= 5_000 + rng.Int64N(5_000)
		}
		value, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := p.Send(ctx, &producer.Record{Topic: SourceTopic, Key: []byte(ev.Type), Value: value}, nil); err != nil {
			return err
		}
	}
	return p.Flush(ctx)
}

// seedStart returns the event time SeedEvents starts from: firstEventTime,
// or eventSpacing after the latest event time in the source topic (every
// record, read_uncommitted; records that are not events are skipped).
func seedStart(d *log.Dir) (int64, error) {
	latest := int64(noTime)
	for p := range int32(Partitions) {
		l, err := d.Partition(SourceTopic, p)
		if err != nil {
			return 0, err
		}
		var rr log.RecordReader
		for off, end := l.LogStartOffset(), l.HighWatermark(); off < end; {
			next, err := rr.ReadRecords(l, off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
				var ev Event
				if json.Unmarshal(r.Value, &ev) == nil && ev.Type != "" {
					latest = max(latest, ev.TS)
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
			if next <= off {
				break
			}
			off = next
		}
	}
	if latest == noTime {
		return firstEventTime, nil
	}
	return latest + eventSpacing, nil
}

// Run processes the source topic with the configuration cfg until it has
// caught up with it (every partition's committed position at its last
// stable offset), then returns the number of events processed. Each polled
// batch (at most cfg.MaxPollRecords events) is one transaction
// holding the changelog updates, the emitted results, the late events and
// the consumed offsets (with each partition's stream time as the offsets'
// metadata, as Kafka Streams commits it): a crash anywhere leaves either
// all of a batch's effects or none. afterCommit, if not nil, runs after each
// committed transaction.
//
// On start Run fences and aborts what an earlier instance left open
// (InitTransactions), then restores each task: its counts from the
// changelog (the latest value per key, read_committed) and its stream time
// from the committed offsets' metadata. One instance processes every
// partition; a group of several would restore on assignment instead.
func Run(ctx context.Context, d *log.Dir, cfg Config, afterCommit func(records int)) (n int, err error) {
	if err := CreateTopics(ctx, d); err != nil {
		return 0, err
	}
	pcfg := producer.DefaultConfig()
	pcfg.TransactionalID = TransactionalID
	pcfg.CompressionType = cfg.CompressionType
	p, err := producer.New(d, pcfg)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, p.Close(ctx)) }()
	if err := p.InitTransactions(ctx); err != nil {
		return 0, err
	}

	ccfg := consumer.DefaultConfig()
	ccfg.GroupID = Group
	ccfg.IsolationLevel = consumer.ReadCommitted
	ccfg.EnableAutoCommit = false // offsets go with the transactions
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	ccfg.MaxPollRecords = cfg.MaxPollRecords
	c, err := consumer.New(d, ccfg)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, c.Close(ctx)) }()
	tasks, err := restore(ctx, d, c, cfg.Windows)
	if err != nil {
		return 0, fmt.Errorf("restoring: %w", err)
	}
	if err := c.Subscribe([]string{SourceTopic}, nil); err != nil {
		return 0, err
	}
	tps, err := c.PartitionsFor(SourceTopic)
	if err != nil {
		return 0, err
	}

	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		recs, err := c.Poll(pctx)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return n, err
		}
		if len(recs) == 0 {
			ends, err := c.EndOffsets(tps)
			if err != nil {
				return n, err
			}
			done, err := c.CaughtUp(ends)
			if err != nil || done {
				return n, err
			}
			continue
		}
		if err := processBatch(ctx, p, c, tasks, recs); err != nil {
			return n, err
		}
		n += len(recs)
		if afterCommit != nil {
			afterCommit(len(recs))
		}
	}
}

// processBatch runs one transaction: the batch's events through their
// tasks, the outputs, the changelog updates and the offsets.
func processBatch(ctx context.Context, p *producer.Producer, c *consumer.Consumer, tasks map[int32]*task, recs []consumer.Record) error {
	if err := p.BeginTransaction(); err != nil {
		return err
	}
	send := func(topic string, partition int32, key, value []byte, headers []record.Header) error {
		_, err := p.Send(ctx, &producer.Record{Topic: topic, Partition: &partition, Key: key, Value: value, Headers: headers}, nil)
		return err
	}
	for _, r := range recs {
		t := tasks[r.Partition]
		var ev Event
		if err := json.Unmarshal(r.Value, &ev); err != nil || ev.Type == "" {
			// Not an event: set aside with the late ones rather than
			// stop the pipeline (a poison pill).
			if err := send(LateTopic, r.Partition, r.Key, r.Value, []record.Header{{Key: []byte("reason"), Value: []byte("malformed")}}); err != nil {
				return err
			}
			continue
		}
		late, emitted := t.process(ev)
		if late {
			wm := strconv.AppendInt(nil, t.watermark(), 10)
			if err := send(LateTopic, r.Partition, r.Key, r.Value, []record.Header{{Key: []byte("watermark"), Value: wm}}); err != nil {
				return err
			}
		}
		for _, res := range emitted {
			value, err := json.Marshal(res)
			if err != nil {
				return err
			}
			if err := send(ResultsTopic, r.Partition, []byte(res.Type), value, nil); err != nil {
				return err
			}
		}
	}
	offsets := map[consumer.TopicPartition]consumer.OffsetAndMetadata{}
	for _, tp := range c.Assignment() {
		t := tasks[tp.Partition]
		for _, ch := range t.takeChanges() {
			var value []byte // a tombstone for an emitted window
			if !ch.Deleted {
				value = strconv.AppendInt(nil, ch.Count, 10)
			}
			if err := send(ChangelogTopic, tp.Partition, []byte(ch.Key.String()), value, nil); err != nil {
				return err
			}
		}
		pos, err := c.Position(tp)
		if err != nil {
			return err
		}
		offsets[tp] = consumer.OffsetAndMetadata{Offset: pos, LeaderEpoch: -1, Metadata: formatStreamTime(t.maxTS)}
	}
	if err := p.SendOffsetsToTransaction(ctx, offsets, c.GroupMetadata()); err != nil {
		return err
	}
	return p.CommitTransaction(ctx)
}

// formatStreamTime and parseStreamTime code a task's stream time in the
// committed offset's metadata.
func formatStreamTime(ts int64) string {
	if ts == noTime {
		return ""
	}
	return "streamtime=" + strconv.FormatInt(ts, 10)
}

func parseStreamTime(md string) (int64, error) {
	if md == "" {
		return noTime, nil
	}
	v, ok := strings.CutPrefix(md, "streamtime=")
	if !ok {
		return 0, fmt.Errorf("offset metadata %q: not a stream time", md)
	}
	return strconv.ParseInt(v, 10, 64)
}

// restore rebuilds every task: the counts are the changelog's latest value
// per key (a tombstone removes the key), read_committed from the beginning
// to the end; the stream times come from the group's committed offsets.
func restore(ctx context.Context, d *log.Dir, c *consumer.Consumer, cfg Windows) (map[int32]*task, error) {
	counts := map[int32]map[WindowKey]int64{}
	if err := readAll(ctx, d, ChangelogTopic, func(r *consumer.Record) error {
		key, err := ParseWindowKey(string(r.Key))
		if err != nil {
			return err
		}
		if counts[r.Partition] == nil {
			counts[r.Partition] = map[WindowKey]int64{}
		}
		if r.Value == nil {
			delete(counts[r.Partition], key)
			return nil
		}
		n, err := strconv.ParseInt(string(r.Value), 10, 64)
		if err != nil {
			return fmt.Errorf("changelog %d@%d: %w", r.Partition, r.Offset, err)
		}
		counts[r.Partition][key] = n
		return nil
	}); err != nil {
		return nil, err
	}
	tps := sourcePartitions()
	committed, err := c.Committed(tps)
	if err != nil {
		return nil, err
	}
	tasks := map[int32]*task{}
	for _, tp := range tps {
		maxTS, err := parseStreamTime(committed[tp].Metadata)
		if err != nil {
			return nil, err
		}
		tasks[tp.Partition] = newTask(cfg, maxTS, counts[tp.Partition])
	}
	return tasks, nil
}

func sourcePartitions() []consumer.TopicPartition {
	tps := make([]consumer.TopicPartition, Partitions)
	for p := range tps {
		tps[p] = consumer.TopicPartition{Topic: SourceTopic, Partition: int32(p)}
	}
	return tps
}

// readAll reads a topic read_committed from the beginning to its last
// stable offsets, calling fn with each record in offset order per partition.
func readAll(ctx context.Context, d *log.Dir, topic string, fn func(*consumer.Record) error) (err error) {
	cfg := consumer.DefaultConfig()
	cfg.IsolationLevel = consumer.ReadCommitted
	c, err := consumer.New(d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Close(ctx)) }()
	tps := make([]consumer.TopicPartition, Partitions)
	for p := range tps {
		tps[p] = consumer.TopicPartition{Topic: topic, Partition: int32(p)}
	}
	if err := c.Assign(tps); err != nil {
		return err
	}
	if err := c.SeekToBeginning(); err != nil {
		return err
	}
	ends, err := c.EndOffsets(tps)
	if err != nil {
		return err
	}
	for {
		done := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			if err != nil {
				return err
			}
			done = done && pos >= ends[tp]
		}
		if done {
			return nil
		}
		recs, err := c.Poll(ctx)
		if err != nil {
			return err
		}
		for i := range recs {
			if recs[i].Offset < ends[consumer.TopicPartition{Topic: topic, Partition: recs[i].Partition}] {
				if err := fn(&recs[i]); err != nil {
					return err
				}
			}
		}
	}
}
