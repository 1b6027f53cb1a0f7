package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// The workload's topics and groups.
const (
	TopicAll       = "all" // acks=all, idempotent
	TopicOne       = "one" // acks=1, not idempotent
	TopicTxn       = "txn" // transactional
	TopicCompact   = "cmp" // compacted, keyed updates and tombstones, acks=all, idempotent
	TopicShare     = "shr" // read by the share group GroupShare; acks=all, idempotent, no retention
	GroupPlain     = "plain"
	GroupCommitted = "committed"
	GroupShare     = "shared"
	churnPrefix    = "churn-"
)

// topicPartitions is the partition count of each workload topic.
var topicPartitions = map[string]int32{TopicAll: 3, TopicOne: 2, TopicTxn: 2}

// checkedPartitions are the topics whose acknowledged records the Checker
// checks, with their partition counts: topicPartitions and TopicShare
// (one partition, so that every member of the share group reads it).
var checkedPartitions = func() map[string]int32 {
	m := maps.Clone(topicPartitions)
	m[TopicShare] = 1
	return m
}()

// topicProps makes segments roll every few batches and retention delete
// them soon after: tiny segment.bytes and retention.bytes, and a short
// file.delete.delay.ms so that .deleted files are removed while the child
// runs.
var topicProps = map[string]string{
	"segment.bytes":        "2048",
	"segment.index.bytes":  "4096",
	"retention.bytes":      "12288",
	"file.delete.delay.ms": "5",
}

// compactProps make the compacted topic roll often and its sealed
// segments cleanable at once: the cleaner runs while the child is killed. Tombstones stay (delete.retention.ms keeps its default, a day).
var compactProps = map[string]string{
	"cleanup.policy":            "compact",
	"segment.bytes":             "65536", // nothing deletes this topic's data: keep its file count (file descriptors) down over 1,000 kills
	"segment.index.bytes":       "8192",
	"min.cleanable.dirty.ratio": "0.01",
	"file.delete.delay.ms":      "5",
}

// shareProps are TopicShare's: segments that roll now and then, and no
// retention, so that every record below the high watermark is one the
// share group must account for (done, or delivered again).
var shareProps = map[string]string{
	"segment.bytes":        "65536",
	"segment.index.bytes":  "8192",
	"file.delete.delay.ms": "5",
}

// shareGroupProps are GroupShare's overrides: it reads TopicShare from its
// start, and a record is archived only after ten deliveries (the rule of
// shareAckFor releases a record once, so it never is).
var shareGroupProps = map[string]string{
	"share.auto.offset.reset":    "earliest",
	"share.delivery.count.limit": "10",
}

// compactKeys is how many keys the compacted topic's records spread over.
const compactKeys = 23

// tieredProps are TopicAll's: topicProps, with tiered storage, and a local
// retention below the total one, so that copied segments leave the
// directory and the oldest acknowledged records are read from the copies.
var tieredProps = func() map[string]string {
	m := maps.Clone(topicProps)
	m["remote.storage.enable"] = "true"
	m["local.retention.bytes"] = "4096"
	return m
}()

// DirConfig is the directory configuration of the child: one partition per
// internal topic, retention every 10 ms, checkpoints every 50 ms, and
// transactions and offsets that do not expire during a run. Appends of
// batches from 256 bytes overlap their write with their validation, so that
// kills also land between a batch's body, written ahead, and its header.
// Tiered storage copies TopicAll's sealed segments every 10 ms to a
// FileStore beside the directory (its path plus ".remote").
func DirConfig(dir string) log.Config {
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(vfs.Default, dir+".remote")
	cfg.RemoteLogManagerTaskInterval = 10 * time.Millisecond
	cfg.OverlapAppendBytes = 256
	cfg.OffsetsTopicNumPartitions = 1
	cfg.TransactionStateNumPartitions = 1
	cfg.RetentionCheckInterval = 10 * time.Millisecond
	cfg.FlushOffsetCheckpointInterval = 50 * time.Millisecond
	cfg.FlushStartOffsetCheckpointInterval = 50 * time.Millisecond
	cfg.ProducerIDExpirationCheckInterval = 100 * time.Millisecond
	cfg.CleanerBackoff = 5 * time.Millisecond
	// The share group's members of a killed child stay in the group
	// (its membership is stored) until their session runs out: short
	// sessions keep the group below group.share.max.size over many kills.
	cfg.ShareHeartbeatInterval, cfg.ShareMinHeartbeatInterval = 50*time.Millisecond, 50*time.Millisecond
	cfg.ShareSessionTimeout, cfg.ShareMinSessionTimeout = 500*time.Millisecond, 500*time.Millisecond
	return cfg
}

// Codecs is the compression.type of each of a generation's producers, by
// the topic it writes. The parent chooses them per generation from its
// seed and passes them to the child ([Codecs.String], [ParseCodecs]); the
// [Checker] checks every record's batch against them
// ([Checker.Generation]).
type Codecs struct {
	All, One, Txn, Compact record.Compression
}

// For returns the codec of the producer writing topic, and false for a
// topic no producer of the workload writes. TopicShare's producer
// compresses with TopicAll's codec.
func (c Codecs) For(topic string) (record.Compression, bool) {
	switch topic {
	case TopicAll, TopicShare:
		return c.All, true
	case TopicOne:
		return c.One, true
	case TopicTxn:
		return c.Txn, true
	case TopicCompact:
		return c.Compact, true
	}
	return record.None, false
}

// String formats c as "all=lz4,one=none,txn=zstd,cmp=gzip", which
// ParseCodecs parses.
func (c Codecs) String() string {
	return fmt.Sprintf("%s=%v,%s=%v,%s=%v,%s=%v", TopicAll, c.All, TopicOne, c.One, TopicTxn, c.Txn, TopicCompact, c.Compact)
}

// ParseCodecs parses what Codecs.String prints; every topic must be given.
func ParseCodecs(s string) (Codecs, error) {
	var c Codecs
	fields := map[string]*record.Compression{TopicAll: &c.All, TopicOne: &c.One, TopicTxn: &c.Txn, TopicCompact: &c.Compact}
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(s, ",") {
		topic, name, ok := strings.Cut(kv, "=")
		f := fields[topic]
		if !ok || f == nil || seen[topic] {
			return Codecs{}, fmt.Errorf("crashtest: codecs %q: bad field %q", s, kv)
		}
		codec, err := record.ParseCompression(name)
		if err != nil {
			return Codecs{}, fmt.Errorf("crashtest: codecs %q: %w", s, err)
		}
		*f, seen[topic] = codec, true
	}
	if len(seen) != len(fields) {
		return Codecs{}, fmt.Errorf("crashtest: codecs %q: want a codec for each of %s, %s, %s, %s", s, TopicAll, TopicOne, TopicTxn, TopicCompact)
	}
	return c, nil
}

// transactionalID is the transactional producer's id, the same in every
// child, so that each child's InitTransactions fences the previous one and
// aborts the transaction it left open.
const transactionalID = "crashtest-txn"

// lineWriter writes each line with one Write call, so that a line reaches
// the parent whole or not at all.
type lineWriter struct {
	mu sync.Mutex // protects w
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	b := fmt.Appendf(nil, format+"\n", args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b)
}

// Run is the child's workload, generation gen, on dir, its producers
// compressing with codecs: it runs until ctx ends or a step fails (it
// returns the error; the caller reports it), and is meant to be killed
// before either. Every acknowledged event is written to out as described
// in the package documentation.
func Run(ctx context.Context, dir string, gen int, codecs Codecs, out io.Writer) (err error) {
	w := &lineWriter{w: out}
	d, err := log.Open(ctx, dir, DirConfig(dir))
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	for name, n := range topicPartitions {
		props := topicProps
		if name == TopicAll {
			props = tieredProps
		}
		if _, err := d.CreateTopic(ctx, name, n, props); err != nil && !errors.Is(err, log.ErrTopicExists) {
			return fmt.Errorf("create %s: %w", name, err)
		}
	}
	// Compaction phase: a compacted topic with keyed updates and
	// tombstones, cleaned while the child runs; Checker.Check verifies it
	// in its own compaction phase.
	if _, err := d.CreateTopic(ctx, TopicCompact, 1, compactProps); err != nil && !errors.Is(err, log.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", TopicCompact, err)
	}

	if _, err := d.CreateTopic(ctx, TopicShare, 1, shareProps); err != nil && !errors.Is(err, log.ErrTopicExists) {
		return fmt.Errorf("create %s: %w", TopicShare, err)
	}
	if _, err := d.AlterGroupConfig(ctx, GroupShare, shareGroupProps); err != nil {
		return fmt.Errorf("configure group %s: %w", GroupShare, err)
	}

	// Churn topics a killed child left behind are deleted first, so that
	// they do not pile up over a thousand kills.
	for _, name := range d.Topics() {
		if strings.HasPrefix(name, churnPrefix) {
			w.printf("delete-start %s", name)
			if err := d.DeleteTopic(context.Background(), name); err != nil {
				return fmt.Errorf("delete %s: %w", name, err)
			}
			w.printf("deleted %s", name)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	run := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		})
	}
	run("acks=all producer", func(ctx context.Context) error {
		return produce(ctx, d, w, gen, TopicAll, producer.AcksAll, codecs.All, 0)
	})
	run("acks=1 producer", func(ctx context.Context) error {
		return produce(ctx, d, w, gen, TopicOne, producer.AcksLeader, codecs.One, 0)
	})
	run("share topic producer", func(ctx context.Context) error {
		return produce(ctx, d, w, gen, TopicShare, producer.AcksAll, codecs.All, time.Millisecond)
	})
	for _, name := range []string{"share-a", "share-b"} {
		run("share consumer "+name, func(ctx context.Context) error { return shareConsume(ctx, d, w, name) })
	}
	run("transactional producer", func(ctx context.Context) error { return transact(ctx, d, w, gen, codecs.Txn) })
	run("compacted producer", func(ctx context.Context) error { return produceCompacted(ctx, d, w, gen, codecs.Compact) })
	run("group plain", func(ctx context.Context) error {
		return consume(ctx, d, w, GroupPlain, consumer.ReadUncommitted, TopicAll, TopicOne)
	})
	run("group committed", func(ctx context.Context) error {
		return consume(ctx, d, w, GroupCommitted, consumer.ReadCommitted, TopicTxn)
	})
	run("topic churn", func(ctx context.Context) error { return churn(ctx, d, w, gen) })
	wg.Wait()
	close(errc)
	for e := range errc {
		err = errors.Join(err, e)
	}
	return err
}

// produce sends "g<gen>:<topic>:<seq>" records, keyed, compressed with
// codec, until ctx ends, pausing for pace (0: never) after every ten.
func produce(ctx context.Context, d *log.Dir, w *lineWriter, gen int, topic string, acks producer.Acks, codec record.Compression, pace time.Duration) (err error) {
	cfg := producerConfig(codec)
	cfg.Acks = acks
	cfg.EnableIdempotence = acks == producer.AcksAll
	cfg.BatchSize = 512
	p, err := producer.New(d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Close(context.WithoutCancel(ctx))) }()
	acksName := "all"
	if acks == producer.AcksLeader {
		acksName = "1"
	}
	return sendUntilDone(ctx, p, func(seq int) (*producer.Record, func(producer.RecordMetadata)) {
		if pace > 0 && seq%10 == 9 {
			select {
			case <-ctx.Done():
			case <-time.After(pace):
			}
		}
		value := fmt.Sprintf("g%d:%s:%d", gen, topic, seq)
		key := []byte("k" + strconv.Itoa(seq%11))
		return &producer.Record{Topic: topic, Key: key, Value: []byte(value)}, func(md producer.RecordMetadata) {
			w.printf("ack %s %d %d %s %s", md.Topic, md.Partition, md.Offset, value, acksName)
		}
	})
}

// producerConfig returns the configuration every producer of the workload
// starts from: Kafka's defaults, compressed with codec, lingering 1 ms.
func producerConfig(codec record.Compression) producer.Config {
	cfg := producer.DefaultConfig()
	cfg.CompressionType = codec
	cfg.Linger = time.Millisecond
	return cfg
}

// sendUntilDone sends the records next makes for seq 0, 1, ... until ctx
// ends, calling the function next returns with each one's metadata when it
// is acknowledged. It stops early with the error of a Send, or the errors
// of the callbacks so far, when ctx has not ended.
func sendUntilDone(ctx context.Context, p *producer.Producer, next func(seq int) (*producer.Record, func(producer.RecordMetadata))) error {
	var failed error
	var mu sync.Mutex
	for seq := 0; ctx.Err() == nil; seq++ {
		rec, acked := next(seq)
		_, err := p.Send(ctx, rec, func(md producer.RecordMetadata, err error) {
			if err != nil {
				mu.Lock()
				failed = errors.Join(failed, err)
				mu.Unlock()
				return
			}
			acked(md)
		})
		if err != nil && ctx.Err() == nil {
			return err
		}
		mu.Lock()
		f := failed
		mu.Unlock()
		if f != nil && ctx.Err() == nil {
			return f
		}
	}
	return nil
}

// produceCompacted sends keyed updates "g<gen>:cmp:<seq>" to the compacted
// topic, one in seven a tombstone, acks=all, compressed with codec, and
// prints "cack <offset> <key> <value or -null->" for each acknowledged one.
func produceCompacted(ctx context.Context, d *log.Dir, w *lineWriter, gen int, codec record.Compression) (err error) {
	cfg := producerConfig(codec)
	cfg.BatchSize = 512
	p, err := producer.New(d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Close(context.WithoutCancel(ctx))) }()
	return sendUntilDone(ctx, p, func(seq int) (*producer.Record, func(producer.RecordMetadata)) {
		key := "k" + strconv.Itoa((seq*7+gen)%compactKeys)
		value, shown := fmt.Sprintf("g%d:%s:%d", gen, TopicCompact, seq), ""
		var v []byte
		if seq%7 == 3 {
			shown = tombstoneShown
		} else {
			v, shown = []byte(value), value
		}
		return &producer.Record{Topic: TopicCompact, Key: []byte(key), Value: v}, func(md producer.RecordMetadata) {
			w.printf("cack %d %s %s", md.Offset, key, shown)
		}
	})
}

// tombstoneShown stands for a null value in "cack" lines.
const tombstoneShown = "-null-"

// transact runs transactions of 1 to 6 records over the partitions of
// TopicTxn, compressed with codec, committing three in four and aborting
// the rest.
func transact(ctx context.Context, d *log.Dir, w *lineWriter, gen int, codec record.Compression) (err error) {
	cfg := producerConfig(codec)
	cfg.TransactionalID = transactionalID
	p, err := producer.New(d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Close(context.WithoutCancel(ctx))) }()
	if err := p.InitTransactions(ctx); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(gen), 1))
	for k := 0; ctx.Err() == nil; k++ {
		txn := fmt.Sprintf("g%dt%d", gen, k)
		if err := p.BeginTransaction(); err != nil {
			return err
		}
		n := 1 + rng.IntN(6)
		for i := range n {
			part := int32(i) % topicPartitions[TopicTxn]
			value := fmt.Sprintf("%s:%d:%d", txn, i, n)
			_, err := p.Send(ctx, &producer.Record{Topic: TopicTxn, Partition: &part, Value: []byte(value)}, func(md producer.RecordMetadata, err error) {
				if err == nil {
					w.printf("tsend %s %d %d %d", txn, i, md.Partition, md.Offset)
				}
			})
			if err != nil {
				return err
			}
		}
		if rng.IntN(4) == 0 {
			w.printf("abort-start %s", txn)
			if err := p.AbortTransaction(ctx); err != nil {
				return err
			}
			continue
		}
		w.printf("commit-start %s", txn)
		if err := p.CommitTransaction(ctx); err != nil {
			return err
		}
		w.printf("commit %s", txn)
	}
	return nil
}

// consume polls as the only member of group and commits, after each poll,
// the offset after the last record of each partition polled.
func consume(ctx context.Context, d *log.Dir, w *lineWriter, group string, iso consumer.IsolationLevel, topics ...string) (err error) {
	cfg := consumer.DefaultConfig()
	cfg.GroupID = group
	cfg.IsolationLevel = iso
	cfg.EnableAutoCommit = false
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	cfg.MaxPollRecords = 200
	c, err := consumer.New(d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Close(context.WithoutCancel(ctx))) }()
	if err := c.Subscribe(topics, nil); err != nil {
		return err
	}
	for ctx.Err() == nil {
		recs, err := pollBriefly(ctx, c.Poll)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			continue
		}
		offsets := map[consumer.TopicPartition]consumer.OffsetAndMetadata{}
		for _, r := range recs {
			offsets[consumer.TopicPartition{Topic: r.Topic, Partition: r.Partition}] = consumer.OffsetAndMetadata{Offset: r.Offset + 1, LeaderEpoch: -1}
		}
		if err := c.CommitSync(ctx, offsets); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for tp, om := range offsets {
			w.printf("offset %s %s %d %d", group, tp.Topic, tp.Partition, om.Offset)
		}
	}
	return nil
}

// shareConsume reads TopicShare as a member of the share group
// GroupShare, in explicit acknowledgement mode: it acknowledges each
// record of a Poll as shareAckFor says, printing "sack-start" lines, then
// commits with CommitSync and, once it returned without an error for the
// partition (the acknowledgements are durable), prints a "sack" line per
// record. A partition's acknowledgements the group refused (the member's
// session ran out meanwhile: the records went back) are not printed.
func shareConsume(ctx context.Context, d *log.Dir, w *lineWriter, name string) (err error) {
	cfg := consumer.DefaultShareConfig()
	cfg.GroupID = GroupShare
	cfg.ClientID = name
	cfg.AcknowledgementMode = consumer.AcknowledgeExplicit
	cfg.MaxPollRecords = 50
	c, err := consumer.NewShareConsumer(d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, c.Close(context.WithoutCancel(ctx))) }()
	if err := c.Subscribe([]string{TopicShare}); err != nil {
		return err
	}
	for ctx.Err() == nil {
		recs, err := pollBriefly(ctx, c.Poll)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			continue
		}
		types := make([]consumer.AcknowledgeType, len(recs))
		for i, r := range recs {
			types[i] = shareAckFor(string(r.Value), r.DeliveryCount)
			if err := c.Acknowledge(r, types[i]); err != nil {
				return err
			}
			w.printf("sack-start %d %s", r.Offset, types[i])
		}
		res, err := c.CommitSync(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if perr := res[consumer.TopicPartition{Topic: TopicShare, Partition: 0}]; perr != nil {
			if ctx.Err() != nil || errors.Is(perr, consumer.ErrInvalidRecordState) {
				continue
			}
			return perr
		}
		for i, r := range recs {
			w.printf("sack %d %s %d", r.Offset, types[i], r.DeliveryCount)
		}
	}
	return nil
}

// shareAckFor is how the share group's members acknowledge the record of
// TopicShare with value v ("g<gen>:shr:<seq>") at its delivery count dc:
// sequences ending in 3 are rejected, those ending in 7 released at their
// first delivery (and accepted at the next), the others accepted.
func shareAckFor(v string, dc int16) consumer.AcknowledgeType {
	_, seq, ok := parsePlain(v, TopicShare)
	switch {
	case ok && seq%10 == 3:
		return consumer.AcknowledgeReject
	case ok && seq%10 == 7 && dc == 1:
		return consumer.AcknowledgeRelease
	}
	return consumer.AcknowledgeAccept
}

// pollBriefly polls once, for at most 50 ms: a poll that ran out of time,
// or whose ctx ended, returns no error.
func pollBriefly[R any](ctx context.Context, poll func(context.Context) ([]R, error)) ([]R, error) {
	pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	recs, err := poll(pctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = nil
	}
	return recs, err
}

// churn creates a topic, writes to it, and deletes the one before, every
// few milliseconds.
func churn(ctx context.Context, d *log.Dir, w *lineWriter, gen int) error {
	prev := ""
	for k := 0; ctx.Err() == nil; k++ {
		name := fmt.Sprintf("%sg%d-%d", churnPrefix, gen, k)
		w.printf("create-start %s", name)
		if _, err := d.CreateTopic(ctx, name, 2, topicProps); err != nil {
			return err
		}
		w.printf("created %s", name)
		if prev != "" {
			w.printf("delete-start %s", prev)
			if err := d.DeleteTopic(context.Background(), prev); err != nil {
				return err
			}
			w.printf("deleted %s", prev)
		}
		prev = name
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
