// Command exactlyonce is a consume-transform-produce loop with Kafka's
// exactly-once semantics, on kafkalite: a read_committed consumer of the
// group "exactlyonce" reads the topic "input", a transactional producer
// writes each record's transformation (its value upper-cased, its key kept)
// to the topic "output", and commits the consumed offsets in the same
// transaction (SendOffsetsToTransaction). Kill it at any moment and run it
// again: the output, read with read_committed, holds every input record
// transformed exactly once.
//
//	go run ./examples/exactlyonce -dir DIR -seed 10000                    # write 10,000 input records, then process them
//	go run ./examples/exactlyonce -dir DIR                                # process what is left, then exit
//	go run ./examples/exactlyonce -dir DIR -seed 10000 -compression lz4   # the same, every batch written with lz4
//
// -compression is the producers' compression.type (Config.CompressionType):
// none (the default, as Kafka's), gzip, snappy, lz4 or zstd. It applies to
// what the run writes, the seeded input and the output; a directory may
// hold batches of several codecs from runs with different settings, which
// consumers read alike.
//
// Its tests run the loop with each codec, and kill the processor with
// SIGKILL a dozen times — a third of the kills inside a transaction whose
// records are already in the log, a third as soon as the processor reports
// a stage of a transaction, a third at random moments — restarting it each
// time with a codec chosen from the run's seed, and check the output
// (KAFKALITE_CRASH_SEED replays a run's kill plan and codecs).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

const (
	inputTopic      = "input"
	outputTopic     = "output"
	groupID         = "exactlyonce"
	transactionalID = "exactlyonce-processor"
	partitions      = 3
)

func main() {
	dir := flag.String("dir", "", "log directory (required; kept)")
	seed := flag.Int("seed", 0, "first write this many input records")
	compression := flag.String("compression", "none", "compression.type of the producers: none, gzip, snappy, lz4, zstd")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "exactlyonce: -dir is required")
		os.Exit(2)
	}
	cfg := DefaultConfig()
	var err error
	if cfg.CompressionType, err = record.ParseCompression(*compression); err != nil {
		fmt.Fprintln(os.Stderr, "exactlyonce: -compression:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	if *seed > 0 {
		if err := seedInput(ctx, *dir, *seed, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "exactlyonce:", err)
			os.Exit(1)
		}
	}
	n, err := process(ctx, *dir, cfg, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exactlyonce:", err)
		os.Exit(1)
	}
	fmt.Printf("processed %d records; the input is consumed\n", n)
}

// Config configures the example's producers.
type Config struct {
	// CompressionType mirrors the producers' compression.type (Kafka's
	// default none): the codec of the batches seedInput and process write.
	CompressionType record.Compression
}

// DefaultConfig returns Kafka's defaults: no compression.
func DefaultConfig() Config {
	return Config{CompressionType: producer.DefaultConfig().CompressionType}
}

// producerConfig is Kafka's default producer configuration with cfg
// applied.
func (cfg Config) producerConfig() producer.Config {
	pcfg := producer.DefaultConfig()
	pcfg.CompressionType = cfg.CompressionType
	return pcfg
}

// dirConfig is the log directory's configuration: one partition for each
// internal topic keeps a small example's directory small.
func dirConfig() log.Config {
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	return cfg
}

// openDir opens the directory and creates the two topics if needed.
func openDir(ctx context.Context, dir string) (*log.Dir, error) {
	d, err := log.Open(ctx, dir, dirConfig())
	if err != nil {
		return nil, err
	}
	for _, t := range []string{inputTopic, outputTopic} {
		if _, err := d.CreateTopic(ctx, t, partitions, map[string]string{"segment.bytes": "65536"}); err != nil && !errors.Is(err, log.ErrTopicExists) {
			return nil, errors.Join(err, d.Close())
		}
	}
	return d, nil
}

// seedInput writes n input records, keys "k<i>", values "record-<i>",
// compressed as cfg says.
func seedInput(ctx context.Context, dir string, n int, cfg Config) (err error) {
	d, err := openDir(ctx, dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	p, err := producer.New(d, cfg.producerConfig())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Close(ctx)) }()
	for i := range n {
		if _, err := p.Send(ctx, &producer.Record{Topic: inputTopic, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "record-%d", i)}, nil); err != nil {
			return err
		}
	}
	return p.Flush(ctx)
}

// transform is the processing step: the value upper-cased.
func transform(v []byte) []byte { return bytes.ToUpper(v) }

// stage is a point of a transaction of the loop, reported to process's
// observer.
type stage int

const (
	begun     stage = iota // BeginTransaction returned
	sent                   // every output record handed to Send (buffered, perhaps not yet in the log)
	offsetsIn              // SendOffsetsToTransaction returned: the offsets are part of the transaction
	committed              // CommitTransaction returned
)

func (s stage) String() string {
	switch s {
	case begun:
		return "begin"
	case sent:
		return "sent"
	case offsetsIn:
		return "offsets"
	case committed:
		return "commit"
	}
	return fmt.Sprintf("stage(%d)", int(s))
}

// step is what process tells its observer at each stage of a transaction.
type step struct {
	stage   stage
	txn     int // the transaction's number in this run of process, from 1
	records int // the records it transforms
	// producer is the transactional producer, for an observer that wants
	// the records in the log before it goes on (Flush): the test does, to
	// be killed with a transaction open in the log.
	producer *producer.Producer
}

// process runs the loop until the consumer has caught up with the input
// (every partition's position at its end offset), and returns how many
// records it processed; its output is compressed as cfg says. observe, if
// not nil, is called at every stage of every transaction, on the loop's
// goroutine (the test uses it to report progress, and to be killed at
// chosen points).
func process(ctx context.Context, dir string, cfg Config, observe func(step)) (n int, err error) {
	d, err := openDir(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()

	pcfg := cfg.producerConfig()
	pcfg.TransactionalID = transactionalID // the same id after a restart fences the previous instance
	p, err := producer.New(d, pcfg)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, p.Close(ctx)) }()
	if err := p.InitTransactions(ctx); err != nil {
		return 0, err
	}

	ccfg := consumer.DefaultConfig()
	ccfg.GroupID = groupID
	ccfg.IsolationLevel = consumer.ReadCommitted
	ccfg.EnableAutoCommit = false // offsets are committed by the transactions
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	c, err := consumer.New(d, ccfg)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, c.Close(ctx)) }()
	if err := c.Subscribe([]string{inputTopic}, nil); err != nil {
		return 0, err
	}
	tps, err := c.PartitionsFor(inputTopic)
	if err != nil {
		return 0, err
	}

	for txn := 0; ; {
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
		txn++
		report := func(s stage) {
			if observe != nil {
				observe(step{stage: s, txn: txn, records: len(recs), producer: p})
			}
		}
		if err := p.BeginTransaction(); err != nil {
			return n, err
		}
		report(begun)
		for _, r := range recs {
			out := &producer.Record{Topic: outputTopic, Partition: &r.Partition, Key: r.Key, Value: transform(r.Value)}
			if _, err := p.Send(ctx, out, nil); err != nil {
				return n, err
			}
		}
		report(sent)
		offsets := map[consumer.TopicPartition]consumer.OffsetAndMetadata{}
		for _, tp := range c.Assignment() {
			pos, err := c.Position(tp)
			if err != nil {
				return n, err
			}
			offsets[tp] = consumer.OffsetAndMetadata{Offset: pos, LeaderEpoch: -1}
		}
		if err := p.SendOffsetsToTransaction(ctx, offsets, c.GroupMetadata()); err != nil {
			return n, err
		}
		report(offsetsIn)
		if err := p.CommitTransaction(ctx); err != nil {
			return n, err
		}
		n += len(recs)
		report(committed)
	}
}
