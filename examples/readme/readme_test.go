// Package readme_test holds the Go samples of the README and the docs, so
// that they compile and run as tests, and checks the docs
// (docs_test.go): TestSamplesAreTheREADMEs checks that every ```go block
// of a doc is the text of one region between a "sample begin: <doc>" and
// a "sample end" comment, in this package or in
// log/logtest/readme_test.go, and that every region is in the doc it
// names; TestDocLinks checks that the docs' relative links resolve.
package readme_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

type order struct{ Customer, Body []byte }

func produceOrders(ctx context.Context, dir string, orders []order) error {
	// sample begin: README.md
	d, err := log.Open(ctx, dir, log.DefaultConfig()) // created if missing; one Dir per directory
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.CreateTopic(ctx, "orders", 3, map[string]string{"retention.ms": "604800000"}); err != nil {
		return err
	}

	p, err := producer.New(d, producer.DefaultConfig()) // acks=all, linger.ms=5, batch.size=16384
	if err != nil {
		return err
	}
	defer p.Close(ctx)
	var failed error // set by the callbacks, which run one at a time
	for _, o := range orders {
		// Send returns at once: records wait in the accumulator and go out
		// in batches. The callback runs once the record is acknowledged
		// (durable with acks=all) or has failed.
		_, err := p.Send(ctx, &producer.Record{Topic: "orders", Key: o.Customer, Value: o.Body},
			func(md producer.RecordMetadata, err error) { // md.Partition, md.Offset
				if err != nil && failed == nil {
					failed = err
				}
			})
		if err != nil {
			return err // not accepted: closed producer, record too large, done ctx
		}
	}
	// Flush waits until every record sent so far is acknowledged or has
	// failed; it reports no record's failure: the callbacks (or the
	// futures Send returns) do.
	if err := p.Flush(ctx); err != nil {
		return err
	}
	return failed
	// sample end
}

// tieredEvents opens a directory with tiered storage on a cold volume and
// creates a tiered topic.
func tieredEvents(ctx context.Context, dir, cold string) error {
	// sample begin: docs/tiered-storage.md
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true                    // remote.log.storage.system.enable
	cfg.RemoteStorage = remote.NewFileStore(vfs.Default, cold) // or an s3store.Store
	d, err := log.Open(ctx, dir, cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = d.CreateTopic(ctx, "events", 3, map[string]string{"remote.storage.enable": "true"})
	return err
	// sample end
}

func readOrders(ctx context.Context, d *log.Dir, offset int64, maxBytes int, out, conn io.Writer) error {
	// sample begin: docs/guide.md
	l, err := d.Partition("orders", 0)
	if err != nil {
		return err
	}
	next, err := l.ReadRecords(offset, 1<<20, func(r *record.Record, h *record.BatchHeader) error {
		_, err := fmt.Fprintf(out, "%d %s %s\n", r.Offset, r.Key, r.Value) // r is valid during the call only
		return err
	})
	if err != nil {
		return err
	}
	if err := l.WaitForData(ctx, next); err != nil { // blocks until a record past next arrives, without polling
		return err
	}

	res, err := l.Read(next, maxBytes, true) // raw batches as a file slice, for a broker:
	if err != nil {
		return err
	}
	defer res.Release()
	if res.Slice != nil {
		_, err = res.Slice.WriteTo(conn) // sendfile(2) to a *net.TCPConn on Linux
	}
	return err
	// sample end
}

func billOrders(ctx context.Context, d *log.Dir, bill func(customer, order []byte)) error {
	// sample begin: README.md
	cfg := consumer.DefaultConfig()
	cfg.GroupID = "billing"
	cfg.AutoOffsetReset = consumer.OffsetResetEarliest
	c, err := consumer.New(d, cfg)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if err := c.Subscribe([]string{"orders"}, nil); err != nil { // or a RebalanceListener
		return err
	}
	for {
		recs, err := c.Poll(ctx) // waits for data without polling; records valid until the next Poll
		if err != nil {
			return err // ctx done, or the consumer closed
		}
		for _, r := range recs {
			bill(r.Key, r.Value)
		}
		if err := c.CommitSync(ctx, nil); err != nil { // or auto-commit (enable.auto.commit)
			return err
		}
	}
	// sample end
}

func shareWorkers(ctx context.Context, dir *log.Dir, handle func(consumer.ShareRecord) error) error {
	// sample begin: docs/guide.md
	cfg, _, err := consumer.ParseShareConfig(map[string]string{
		"group.id": "workers", "share.acknowledgement.mode": "explicit"})
	if err != nil {
		return err
	}
	c, err := consumer.NewShareConsumer(dir, cfg)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if err := c.Subscribe([]string{"jobs"}); err != nil {
		return err
	}
	for ctx.Err() == nil {
		recs, err := c.Poll(ctx)
		if err != nil {
			return err
		}
		for _, r := range recs {
			ack := consumer.AcknowledgeAccept
			if err := handle(r); err != nil {
				ack = consumer.AcknowledgeRelease // delivered again, DeliveryCount raised
			}
			if err := c.Acknowledge(r, ack); err != nil {
				return err
			}
		}
		if _, err := c.CommitSync(ctx); err != nil {
			return err
		}
	}
	// sample end
	return ctx.Err()
}

// sample begin: docs/guide.md
// enrichOrders reads "orders" and writes "enriched" exactly once: the
// output records and the consumed offsets commit in one transaction.
func enrichOrders(ctx context.Context, d *log.Dir, enrich func([]byte) []byte) error {
	pcfg := producer.DefaultConfig()
	pcfg.TransactionalID = "orders-enricher" // a restarted instance with the same id fences the old one
	p, err := producer.New(d, pcfg)
	if err != nil {
		return err
	}
	defer p.Close(ctx)
	if err := p.InitTransactions(ctx); err != nil {
		return err
	}
	ccfg := consumer.DefaultConfig()
	ccfg.GroupID, ccfg.IsolationLevel, ccfg.EnableAutoCommit = "enricher", consumer.ReadCommitted, false
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	c, err := consumer.New(d, ccfg)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if err := c.Subscribe([]string{"orders"}, nil); err != nil {
		return err
	}
	for {
		recs, err := c.Poll(ctx)
		if err != nil {
			return err
		}
		if err := p.BeginTransaction(); err != nil {
			return err
		}
		for _, r := range recs {
			if _, err := p.Send(ctx, &producer.Record{Topic: "enriched", Key: r.Key, Value: enrich(r.Value)}, nil); err != nil {
				return err
			}
		}
		if err := p.SendOffsetsToTransaction(ctx, positions(c), c.GroupMetadata()); err != nil {
			return err
		}
		if err := p.CommitTransaction(ctx); err != nil { // producer.ErrProducerFenced: a newer instance took over
			return err
		}
	}
}

// positions are the consumer's next offsets, the ones to commit.
func positions(c *consumer.Consumer) map[log.TopicPartition]log.OffsetAndMetadata {
	out := map[log.TopicPartition]log.OffsetAndMetadata{}
	for _, tp := range c.Assignment() {
		if next, err := c.Position(tp); err == nil {
			out[tp] = log.OffsetAndMetadata{Offset: next}
		}
	}
	return out
}

// sample end

func serveBatches(l *log.Log, batch []byte, offset int64, maxBytes int, conn io.Writer) (log.OffsetAndTimestamp, error) {
	// sample begin: docs/guide.md
	res, err := l.Append(batch) // validate, assign offsets; typed errors (log.ErrInvalidRecord, record.ErrCorrupt, ...)
	if err != nil {
		return log.OffsetAndTimestamp{}, err
	}
	fr, err := l.Read(res.BaseOffset, maxBytes, true) // whole batches from an offset, as a file slice
	if err != nil {
		return log.OffsetAndTimestamp{}, err
	}
	_, err = fr.Slice.WriteTo(conn) // sendfile(2) to a *net.TCPConn on Linux
	fr.Release()
	if err != nil {
		return log.OffsetAndTimestamp{}, err
	}
	ot, _, err := l.OffsetForTimestamp(log.EarliestTimestamp) // ListOffsets: earliest, latest, max-timestamp, by time
	return ot, err
	// sample end
}

// TestSamples runs the samples one after the other on one directory:
// produce, read, bill with a group, enrich in transactions, append raw.
func TestSamples(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var orders []order
	for i := range 30 {
		orders = append(orders, order{Customer: fmt.Appendf(nil, "customer-%d", i%7), Body: fmt.Appendf(nil, `{"order":%d}`, i)})
	}
	require.NoError(t, produceOrders(ctx, dir, orders))

	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	p0, err := d.Partition("orders", 0)
	require.NoError(t, err)
	inP0 := p0.LogEndOffset()
	require.Positive(t, inP0, "murmur2 puts some of 7 customers on partition 0")

	// Read: the records of partition 0, then, once one more arrives, its batch.
	out := &lineWriter{want: int(inP0), done: make(chan struct{})}
	var conn bytes.Buffer
	read := make(chan error, 1)
	go func() { read <- readOrders(ctx, d, 0, 1<<20, out, &conn) }()
	<-out.done // the records there were are read: the reader waits next
	raw := rawBatch(t, "late", "order")
	_, err = p0.Append(raw)
	require.NoError(t, err)
	require.NoError(t, <-read)
	require.Equal(t, int(inP0), strings.Count(out.String(), "\n"))
	require.Contains(t, conn.String(), "late", "the raw batch appended while the reader waited")

	// Bill: every order once, then stop.
	billCtx, stop := context.WithCancel(ctx)
	var billed atomic.Int64
	err = billOrders(billCtx, d, func(customer, order []byte) {
		if billed.Add(1) == int64(len(orders))+1 { // the orders and the late one
			stop()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int64(len(orders))+1, billed.Load())

	// Enrich: the output holds every order, upper-cased, and read_committed sees it.
	_, err = d.CreateTopic(ctx, "enriched", 1, nil)
	require.NoError(t, err)
	enrichCtx, stopEnrich := context.WithCancel(ctx)
	enriched := make(chan error, 1)
	go func() { enriched <- enrichOrders(enrichCtx, d, bytes.ToUpper) }()
	ccfg := consumer.DefaultConfig()
	ccfg.IsolationLevel, ccfg.AutoOffsetReset = consumer.ReadCommitted, consumer.OffsetResetEarliest
	c, err := consumer.New(d, ccfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(ctx)) }()
	require.NoError(t, c.Assign([]log.TopicPartition{{Topic: "enriched", Partition: 0}}))
	seen := 0
	for seen < len(orders)+1 {
		recs, err := c.Poll(ctx)
		require.NoError(t, err)
		for _, r := range recs {
			require.Equal(t, strings.ToUpper(string(r.Value)), string(r.Value))
			seen++
		}
	}
	stopEnrich()
	require.ErrorIs(t, <-enriched, context.Canceled)

	// Raw batches: append, read back, earliest offset.
	conn.Reset()
	ot, err := serveBatches(p0, rawBatch(t, "raw", "batch"), 0, 1<<20, &conn)
	require.NoError(t, err)
	require.Zero(t, ot.Offset)
	require.Contains(t, conn.String(), "raw")
}

// lineWriter closes done once want lines were written.
type lineWriter struct {
	bytes.Buffer
	want int
	done chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if bytes.Count(w.Bytes(), []byte("\n")) == w.want && bytes.HasSuffix(p, []byte("\n")) {
		close(w.done)
	}
	return n, err
}

func rawBatch(t *testing.T, key, value string) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, b.Append(1_700_000_000_000, []byte(key), []byte(value), nil))
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

// TestTieredSample runs the tiered storage sample: the topic is created
// tiered, and __remote_log_metadata with it.
func TestTieredSample(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, tieredEvents(ctx, root+"/data", root+"/cold"))
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(vfs.Default, root+"/cold")
	d, err := log.Open(ctx, root+"/data", cfg)
	require.NoError(t, err)
	defer d.Close()
	desc, err := d.DescribeTopic("events")
	require.NoError(t, err)
	require.True(t, desc.Config.RemoteStorageEnable)
	require.Contains(t, d.Topics(), log.RemoteLogMetadataTopic)
}

// TestShareSample runs the share group sample: every job handled once,
// the one that failed again at its second delivery.
func TestShareSample(t *testing.T) {
	ctx := context.Background()
	d, err := log.Open(ctx, t.TempDir(), log.DefaultConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	_, err = d.CreateTopic(ctx, "jobs", 2, nil)
	require.NoError(t, err)
	_, err = d.AlterGroupConfig(ctx, "workers", map[string]string{"share.auto.offset.reset": "earliest"})
	require.NoError(t, err)
	p, err := producer.New(d, producer.DefaultConfig())
	require.NoError(t, err)
	for i := range 10 {
		_, err := p.Send(ctx, &producer.Record{Topic: "jobs", Value: fmt.Appendf(nil, "job %d", i)}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Close(ctx))

	workCtx, stop := context.WithCancel(ctx)
	done := map[string]int16{}
	err = shareWorkers(workCtx, d, func(r consumer.ShareRecord) error {
		if string(r.Value) == "job 3" && r.DeliveryCount == 1 {
			return fmt.Errorf("not now")
		}
		_, again := done[string(r.Value)]
		require.False(t, again, "%s handled twice", r.Value)
		done[string(r.Value)] = r.DeliveryCount
		if len(done) == 10 {
			stop()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, done, 10)
	require.Equal(t, int16(2), done["job 3"], "released, then delivered again")
	require.Equal(t, int16(1), done["job 4"])
}
