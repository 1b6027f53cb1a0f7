package producer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/vfs"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// openTxnDir opens a Dir on a memory filesystem with one partition for each
// internal topic, and the given topics.
func openTxnDir(t *testing.T, topics map[string]int32) *log.Dir {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	d, err := log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	for name, n := range topics {
		_, err := d.CreateTopic(context.Background(), name, n, nil)
		require.NoError(t, err)
	}
	return d
}

// committedValues reads a partition as a read_committed consumer would.
func committedValues(t *testing.T, d *log.Dir, topic string, partition int32) []string {
	t.Helper()
	l, err := d.Partition(topic, partition)
	require.NoError(t, err)
	var out []string
	for off := l.LogStartOffset(); ; {
		next, err := l.ReadCommittedRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			out = append(out, string(r.Value))
			return nil
		})
		require.NoError(t, err)
		if next == off {
			return out
		}
		off = next
	}
}

func sendValues(t *testing.T, p *Producer, topic string, partition int32, values ...string) {
	t.Helper()
	for _, v := range values {
		_, err := p.Send(context.Background(), &Record{Topic: topic, Partition: ptr(partition), Value: []byte(v)}, nil)
		require.NoError(t, err)
	}
}

func TestIdempotentProducerStampsBatches(t *testing.T) {
	d := openTxnDir(t, map[string]int32{"t": 2})
	p := newProducer(t, d, nil) // idempotence is the default
	for i := range 40 {
		sendValues(t, p, "t", int32(i%2), fmt.Sprint(i))
		if i%10 == 9 {
			require.NoError(t, p.Flush(context.Background()))
		}
	}
	require.NoError(t, p.Flush(context.Background()))
	for part := range int32(2) {
		l, err := d.Partition("t", part)
		require.NoError(t, err)
		infos := l.Producers()
		require.Len(t, infos, 1)
		require.Equal(t, int16(0), infos[0].ProducerEpoch)
		require.Equal(t, int32(19), infos[0].LastSequence, "20 records, sequences 0..19, no gap")
	}
	// A second producer gets another id.
	p2 := newProducer(t, d, nil)
	sendValues(t, p2, "t", 0, "x")
	require.NoError(t, p2.Flush(context.Background()))
	l, err := d.Partition("t", 0)
	require.NoError(t, err)
	require.Len(t, l.Producers(), 2)
}

func TestTransactionalProducerCommitAndAbort(t *testing.T) {
	d := openTxnDir(t, map[string]int32{"out": 2})
	p := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-1" })
	ctx := context.Background()

	_, err := p.Send(ctx, &Record{Topic: "out", Value: []byte("early")}, nil)
	require.ErrorIs(t, err, ErrTransactionState, "no send before InitTransactions")
	require.ErrorIs(t, p.BeginTransaction(), ErrTransactionState)
	require.NoError(t, p.InitTransactions(ctx))
	require.ErrorIs(t, p.InitTransactions(ctx), ErrTransactionState)
	_, err = p.Send(ctx, &Record{Topic: "out", Value: []byte("outside")}, nil)
	require.ErrorIs(t, err, ErrTransactionState, "no send outside a transaction")
	require.ErrorIs(t, p.CommitTransaction(ctx), ErrTransactionState)

	require.NoError(t, p.BeginTransaction())
	sendValues(t, p, "out", 0, "a1", "a2")
	sendValues(t, p, "out", 1, "a3")
	require.NoError(t, p.CommitTransaction(ctx))

	require.NoError(t, p.BeginTransaction())
	sendValues(t, p, "out", 0, "b1")
	sendValues(t, p, "out", 1, "b2")
	require.NoError(t, p.AbortTransaction(ctx))

	require.NoError(t, p.BeginTransaction())
	sendValues(t, p, "out", 0, "c1")
	require.NoError(t, p.CommitTransaction(ctx))

	require.Equal(t, []string{"a1", "a2", "c1"}, committedValues(t, d, "out", 0))
	require.Equal(t, []string{"a3"}, committedValues(t, d, "out", 1))
	for part := range int32(2) {
		l, err := d.Partition("out", part)
		require.NoError(t, err)
		require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "no transaction left open")
	}
	// read_uncommitted sees the aborted records, never the markers.
	var raw []string
	for _, r := range readAll(t, d, "out", 1) {
		raw = append(raw, string(r.Value))
	}
	require.Equal(t, []string{"a3", "b2"}, raw)
}

func TestZombieProducerIsFenced(t *testing.T) {
	d := openTxnDir(t, map[string]int32{"out": 1})
	ctx := context.Background()
	old := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-z" })
	require.NoError(t, old.InitTransactions(ctx))
	require.NoError(t, old.BeginTransaction())
	sendValues(t, old, "out", 0, "zombie-1")
	require.NoError(t, old.Flush(ctx))

	// A new instance with the same id aborts the open transaction and
	// fences the old one.
	fresh := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-z" })
	require.NoError(t, fresh.InitTransactions(ctx))

	f, err := old.Send(ctx, &Record{Topic: "out", Partition: ptr(0), Value: []byte("zombie-2")}, nil)
	if err == nil {
		_, err = f.Wait(ctx)
	}
	require.Error(t, err)
	require.ErrorIs(t, old.CommitTransaction(ctx), ErrProducerFenced)
	require.ErrorIs(t, old.BeginTransaction(), ErrProducerFenced)

	require.NoError(t, fresh.BeginTransaction())
	sendValues(t, fresh, "out", 0, "fresh")
	require.NoError(t, fresh.CommitTransaction(ctx))
	require.Equal(t, []string{"fresh"}, committedValues(t, d, "out", 0), "no zombie write is visible")
}

func TestSendOffsetsToTransaction(t *testing.T) {
	d := openTxnDir(t, map[string]int32{"in": 1, "out": 1})
	ctx := context.Background()
	ccfg := consumer.DefaultConfig()
	ccfg.GroupID = "g"
	c, err := consumer.New(d, ccfg)
	require.NoError(t, err)
	defer c.Close(ctx)
	tp := consumer.TopicPartition{Topic: "in", Partition: 0}
	require.NoError(t, c.Assign([]consumer.TopicPartition{tp}))

	p := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-o" })
	require.NoError(t, p.InitTransactions(ctx))
	for i, commit := range []bool{false, true} {
		require.NoError(t, p.BeginTransaction())
		sendValues(t, p, "out", 0, fmt.Sprint(i))
		offsets := map[consumer.TopicPartition]consumer.OffsetAndMetadata{tp: {Offset: int64(10 * (i + 1)), LeaderEpoch: -1}}
		require.NoError(t, p.SendOffsetsToTransaction(ctx, offsets, c.GroupMetadata()))
		got, err := c.Committed([]consumer.TopicPartition{tp})
		require.NoError(t, err)
		require.NotContains(t, got, tp, "offsets of an open transaction are not visible")
		if commit {
			require.NoError(t, p.CommitTransaction(ctx))
		} else {
			require.NoError(t, p.AbortTransaction(ctx))
		}
	}
	got, err := c.Committed([]consumer.TopicPartition{tp})
	require.NoError(t, err)
	require.Equal(t, int64(20), got[tp].Offset, "only the committed transaction's offsets count")
	require.Equal(t, []string{"1"}, committedValues(t, d, "out", 0))
}

func TestTransactionTimeoutFencesProducer(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	clock := &testClock{now: now}
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.Now = clock.Now
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	cfg.TransactionAbortTimedOutInterval = time.Millisecond
	d, err := log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	defer d.Close()
	_, err = d.CreateTopic(context.Background(), "out", 1, nil)
	require.NoError(t, err)
	ctx := context.Background()
	p := newProducer(t, d, func(c *Config) { c.TransactionalID, c.TransactionTimeout, c.Now = "tx-t", time.Second, clock.Now })
	require.NoError(t, p.InitTransactions(ctx))
	require.NoError(t, p.BeginTransaction())
	sendValues(t, p, "out", 0, "slow")
	require.NoError(t, p.Flush(ctx))
	l, err := d.Partition("out", 0)
	require.NoError(t, err)
	require.Equal(t, int64(0), l.LastStableOffset())

	clock.Add(2 * time.Second)
	// The coordinator aborts the timed-out transaction: its ABORT marker
	// is the next append.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, l.WaitForData(wctx, l.LogEndOffset()))
	require.Equal(t, l.HighWatermark(), l.LastStableOffset())
	require.ErrorIs(t, p.CommitTransaction(ctx), ErrProducerFenced)
	require.Empty(t, committedValues(t, d, "out", 0))
}

func TestIdempotenceConfigRulesFromProperties(t *testing.T) {
	_, _, err := ParseConfig(map[string]string{"enable.idempotence": "true", "acks": "1"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "acks=1")
	_, _, err = ParseConfig(map[string]string{"transactional.id": "x", "acks": "0"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, _, err = ParseConfig(map[string]string{"transactional.id": "x", "enable.idempotence": "false"})
	require.ErrorContains(t, err, "requires enable.idempotence=true")
	for _, tc := range []struct {
		props map[string]string
		idem  bool
	}{
		{map[string]string{"acks": "0"}, false},
		{map[string]string{"retries": "0"}, false},
		{map[string]string{"max.in.flight.requests.per.connection": "6"}, false},
		{map[string]string{"max.in.flight.requests.per.connection": "5"}, true},
		{map[string]string{"acks": "all"}, true},
	} {
		c, _, err := ParseConfig(tc.props)
		require.NoError(t, err, "%v", tc.props)
		require.Equal(t, tc.idem, c.EnableIdempotence, "%v", tc.props)
	}
	_, _, err = ParseConfig(map[string]string{"enable.idempotence": "true", "retries": "0"})
	require.ErrorContains(t, err, "retries=0")
}

// testClock is a clock moved by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
