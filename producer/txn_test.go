package producer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// openTxnDir opens a Dir on a memory filesystem with one partition for each
// internal topic, and the given topics.
func openTxnDir(t *testing.T, topics map[string]int32) *log.Dir {
	t.Helper()
	return openTxnDirWith(t, topics, nil)
}

// openTxnDirWith is openTxnDir with a change to the directory's
// configuration (mod may be nil).
func openTxnDirWith(t *testing.T, topics map[string]int32, mod func(*log.Config)) *log.Dir {
	t.Helper()
	return openDirWith(t, topics, func(c *log.Config) {
		c.OffsetsTopicNumPartitions, c.TransactionStateNumPartitions = 1, 1
		if mod != nil {
			mod(c)
		}
	})
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
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		d := openTxnDir(t, map[string]int32{"out": 2})
		p := newProducer(t, d, func(c *Config) { c.TransactionalID, c.CompressionType = "tx-1", codec })
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
	})
}

// TestZombieProducerIsFenced: a producer fenced by a newer one with the
// same transactional.id learns it from its next append or AddPartitions
// and fails the record with ErrProducerFenced, whether the record was
// buffered before the fencing or sent after, and whether its partition
// was already in the transaction (the log refuses the stale epoch) or new
// to it (the coordinator refuses). Nothing of the zombie's lands.
func TestZombieProducerIsFenced(t *testing.T) {
	for _, tc := range []struct {
		name      string
		buffered  bool  // the record waits in the accumulator while the fencing happens
		partition int32 // 0 is in the zombie's transaction, 1 is not
		logRefuse bool  // the log, not the coordinator, refuses it
	}{
		{name: "sent after fencing, partition in transaction", partition: 0, logRefuse: true},
		{name: "buffered before fencing, partition in transaction", buffered: true, partition: 0, logRefuse: true},
		{name: "sent after fencing, partition new to transaction", partition: 1},
		{name: "buffered before fencing, partition new to transaction", buffered: true, partition: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openTxnDir(t, map[string]int32{"out": 2})
			ctx := context.Background()
			// A long linger keeps a record buffered until Flush.
			old := newProducer(t, d, func(c *Config) {
				c.TransactionalID, c.Linger, c.DeliveryTimeout = "tx-z", time.Hour, 2*time.Hour
			})
			require.NoError(t, old.InitTransactions(ctx))
			require.NoError(t, old.BeginTransaction())
			sendValues(t, old, "out", 0, "zombie-1")
			require.NoError(t, old.Flush(ctx))

			var cbErr error
			send := func() Future {
				f, err := old.Send(ctx, &Record{Topic: "out", Partition: ptr(tc.partition), Value: []byte("zombie-2")},
					func(_ RecordMetadata, err error) { cbErr = err })
				require.NoError(t, err, "the zombie does not know yet")
				return f
			}
			var f Future
			if tc.buffered {
				f = send()
			}
			// A new instance with the same id aborts the open transaction
			// and fences the old one.
			fresh := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-z" })
			require.NoError(t, fresh.InitTransactions(ctx))
			leos := logEndOffsets(t, d, "out", 2)
			if !tc.buffered {
				f = send()
			}
			require.NoError(t, old.Flush(ctx))

			_, err := f.Wait(ctx)
			require.ErrorIs(t, err, ErrProducerFenced)
			require.ErrorIs(t, cbErr, ErrProducerFenced, "the callback gets the same error")
			if tc.logRefuse {
				require.ErrorIs(t, err, log.ErrInvalidProducerEpoch, "the log's error stays wrapped")
			}
			require.Equal(t, leos, logEndOffsets(t, d, "out", 2), "no write of the zombie landed")

			// Every later call reports the fencing.
			_, err = old.Send(ctx, &Record{Topic: "out", Partition: ptr(0), Value: []byte("zombie-3")}, nil)
			require.ErrorIs(t, err, ErrProducerFenced)
			require.ErrorIs(t, old.CommitTransaction(ctx), ErrProducerFenced)
			require.ErrorIs(t, old.AbortTransaction(ctx), ErrProducerFenced)
			require.ErrorIs(t, old.BeginTransaction(), ErrProducerFenced)
			require.ErrorIs(t, old.InitTransactions(ctx), ErrProducerFenced)
			require.ErrorIs(t, old.SendOffsetsToTransaction(ctx, nil, consumer.GroupMetadata{GroupID: "g"}), ErrProducerFenced)
			require.Equal(t, leos, logEndOffsets(t, d, "out", 2), "no write of the zombie landed")

			require.NoError(t, fresh.BeginTransaction())
			sendValues(t, fresh, "out", 0, "fresh")
			require.NoError(t, fresh.CommitTransaction(ctx))
			require.Equal(t, []string{"fresh"}, committedValues(t, d, "out", 0), "no zombie write is visible")
			require.Empty(t, committedValues(t, d, "out", 1))
		})
	}
}

// logEndOffsets returns the log end offsets of a topic's partitions.
func logEndOffsets(t *testing.T, d *log.Dir, topic string, partitions int32) []int64 {
	t.Helper()
	var out []int64
	for part := range partitions {
		l, err := d.Partition(topic, part)
		require.NoError(t, err)
		out = append(out, l.LogEndOffset())
	}
	return out
}

func TestInitTransactionsInvalidTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{
		{"above transaction.max.timeout.ms", time.Minute + time.Millisecond},
		{"zero", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openTxnDirWith(t, map[string]int32{"out": 1}, func(c *log.Config) { c.TransactionMaxTimeout = time.Minute })
			ctx := context.Background()
			p := newProducer(t, d, func(c *Config) { c.TransactionalID, c.TransactionTimeout = "tx-timeout", tc.timeout })
			err := p.InitTransactions(ctx)
			require.ErrorIs(t, err, ErrInvalidTransactionTimeout)
			require.NotErrorIs(t, err, ErrProducerFenced)
			// The producer is still uninitialized, and not fenced.
			require.ErrorIs(t, p.BeginTransaction(), ErrTransactionState)
			_, err = p.Send(ctx, &Record{Topic: "out", Value: []byte("x")}, nil)
			require.ErrorIs(t, err, ErrTransactionState)
			require.Equal(t, []int64{0}, logEndOffsets(t, d, "__transaction_state", 1), "nothing registered")
		})
	}
}

// TestEndTransactionOutOfOrder: ending a transaction that is already
// ended fails with ErrTransactionState and writes nothing; the producer
// stays usable.
func TestEndTransactionOutOfOrder(t *testing.T) {
	end := func(p *Producer, commit bool) error {
		if commit {
			return p.CommitTransaction(context.Background())
		}
		return p.AbortTransaction(context.Background())
	}
	for _, tc := range []struct {
		name          string
		first, second bool // commit (true) or abort (false)
		committed     []string
	}{
		{name: "commit after abort", first: false, second: true},
		{name: "abort after abort", first: false, second: false},
		{name: "commit after commit", first: true, second: true, committed: []string{"v"}},
		{name: "abort after commit", first: true, second: false, committed: []string{"v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openTxnDir(t, map[string]int32{"out": 1})
			ctx := context.Background()
			p := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-e" })
			require.NoError(t, p.InitTransactions(ctx))
			require.NoError(t, p.BeginTransaction())
			sendValues(t, p, "out", 0, "v")
			require.NoError(t, end(p, tc.first))
			outLEO := logEndOffsets(t, d, "out", 1)
			stateLEO := logEndOffsets(t, d, "__transaction_state", 1)

			err := end(p, tc.second)
			require.ErrorIs(t, err, ErrTransactionState)
			require.ErrorContains(t, err, "state READY")
			require.Equal(t, outLEO, logEndOffsets(t, d, "out", 1), "no marker")
			require.Equal(t, stateLEO, logEndOffsets(t, d, "__transaction_state", 1), "no transaction state change")
			require.Equal(t, tc.committed, committedValues(t, d, "out", 0))

			// A wrong-state call is not fatal.
			require.NoError(t, p.BeginTransaction())
			sendValues(t, p, "out", 0, "w")
			require.NoError(t, p.CommitTransaction(ctx))
			require.Equal(t, append(tc.committed, "w"), committedValues(t, d, "out", 0))
		})
	}
}

// TestInterleavedTransactionsOnOnePartition: two producers with different
// transactional ids write one partition in alternation, one commits and
// the other aborts, in either order. read_committed readers stop at the
// first offset of the earliest open transaction and, once both are
// decided, see exactly the committed records in offset order.
func TestInterleavedTransactionsOnOnePartition(t *testing.T) {
	for _, tc := range []struct {
		name       string
		bFirst     bool     // B writes the partition's first record
		bEndsFirst bool     // B aborts before A commits
		midVisible []string // read_committed between the two ends
	}{
		// a1 b1 a2 b2 a3 b3, A commits: the LSO is b1's offset.
		{name: "A writes first, A commits first", midVisible: []string{"a1"}},
		// a1 b1 a2 b2 a3 b3, B aborts: the LSO is a1's offset.
		{name: "A writes first, B aborts first", bEndsFirst: true},
		// b1 a1 b2 a2 b3 a3, A commits: the LSO is b1's offset.
		{name: "B writes first, A commits first", bFirst: true},
		// b1 a1 b2 a2 b3 a3, B aborts: the LSO is a1's offset.
		{name: "B writes first, B aborts first", bFirst: true, bEndsFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openTxnDir(t, map[string]int32{"out": 1})
			ctx := context.Background()
			l, err := d.Partition("out", 0)
			require.NoError(t, err)
			a := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-a" })
			b := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-b" })
			require.NoError(t, a.InitTransactions(ctx))
			require.NoError(t, b.InitTransactions(ctx))
			require.NoError(t, a.BeginTransaction())
			require.NoError(t, b.BeginTransaction())

			order := []*Producer{a, b}
			if tc.bFirst {
				order = []*Producer{b, a}
			}
			firstOffset := map[*Producer]int64{}
			var all []string
			for i := 1; i <= 3; i++ {
				for _, p := range order {
					if _, ok := firstOffset[p]; !ok {
						firstOffset[p] = l.LogEndOffset()
					}
					v := fmt.Sprintf("b%d", i)
					if p == a {
						v = fmt.Sprintf("a%d", i)
					}
					sendValues(t, p, "out", 0, v)
					require.NoError(t, p.Flush(ctx), "one batch per record, in this order")
					all = append(all, v)
				}
			}
			require.Equal(t, int64(0), l.LastStableOffset(), "both transactions open")
			require.Empty(t, committedValues(t, d, "out", 0))

			if tc.bEndsFirst {
				require.NoError(t, b.AbortTransaction(ctx))
				require.Equal(t, firstOffset[a], l.LastStableOffset(), "A's transaction is open")
			} else {
				require.NoError(t, a.CommitTransaction(ctx))
				require.Equal(t, firstOffset[b], l.LastStableOffset(), "nothing past B's first offset while B is open")
			}
			require.Equal(t, tc.midVisible, committedValues(t, d, "out", 0))

			if tc.bEndsFirst {
				require.NoError(t, a.CommitTransaction(ctx))
			} else {
				require.NoError(t, b.AbortTransaction(ctx))
			}
			require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "no transaction left open")
			require.Equal(t, []string{"a1", "a2", "a3"}, committedValues(t, d, "out", 0))
			var raw []string
			for _, r := range readAll(t, d, "out", 0) {
				raw = append(raw, string(r.Value))
			}
			require.Equal(t, all, raw, "read_uncommitted sees both, in the order written, and no marker")
		})
	}
}

func TestSendOffsetsToTransaction(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		d := openTxnDir(t, map[string]int32{"in": 1, "out": 1})
		ctx := context.Background()
		ccfg := consumer.DefaultConfig()
		ccfg.GroupID = "g"
		c, err := consumer.New(d, ccfg)
		require.NoError(t, err)
		defer c.Close(ctx)
		tp := consumer.TopicPartition{Topic: "in", Partition: 0}
		require.NoError(t, c.Assign([]consumer.TopicPartition{tp}))

		p := newProducer(t, d, func(c *Config) { c.TransactionalID, c.CompressionType = "tx-o", codec })
		require.NoError(t, p.InitTransactions(ctx))
		for i, commit := range []bool{false, true} {
			require.NoError(t, p.BeginTransaction())
			sendValues(t, p, "out", 0, fmt.Sprint(i))
			offsets := map[consumer.TopicPartition]consumer.OffsetAndMetadata{tp: {Offset: int64(10 * (i + 1)), LeaderEpoch: -1}}
			// Offsets of a partition that does not exist are refused
			// whole, the transaction left open, as Kafka's broker
			// refuses them (UNKNOWN_TOPIC_OR_PARTITION).
			for _, missing := range []consumer.TopicPartition{{Topic: "absent", Partition: 0}, {Topic: "in", Partition: 1}} {
				bad := map[consumer.TopicPartition]consumer.OffsetAndMetadata{tp: {Offset: 99, LeaderEpoch: -1}, missing: {Offset: 1, LeaderEpoch: -1}}
				err := p.SendOffsetsToTransaction(ctx, bad, c.GroupMetadata())
				require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)
				require.ErrorContains(t, err, missing.String())
			}
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
	})
}

func TestTransactionTimeoutFencesProducer(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	clock := testclock.New(now)
	d := openTxnDirWith(t, map[string]int32{"out": 1}, func(c *log.Config) {
		c.Now, c.TransactionAbortTimedOutInterval = clock.Now, time.Millisecond
	})
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

// TestEmptyTransactions: a transaction that sent nothing and no offsets
// commits or aborts at once, without the coordinator, as Kafka's
// TransactionManager sends no EndTxn then; after it the producer goes on
// (before the fix the coordinator refused the EndTxn, "invalid transaction
// state", and the producer was stuck: every Abort failed and Begin was
// refused). Each sequence mixes empty and non-empty transactions.
func TestEmptyTransactions(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		for _, tc := range []struct {
			name      string
			steps     []string // "send v", "commit", "abort", "begin"
			committed []string
		}{
			{"empty abort after a commit", []string{"begin", "send a", "commit", "begin", "abort", "begin", "send b", "commit"}, []string{"a", "b"}},
			{"empty commit after an abort", []string{"begin", "send a", "abort", "begin", "commit", "begin", "send b", "commit"}, []string{"b"}},
			{"empty first", []string{"begin", "commit", "begin", "abort", "begin", "send a", "commit"}, []string{"a"}},
			{"empty after empty", []string{"begin", "abort", "begin", "abort", "begin", "commit", "begin", "commit"}, nil},
			{"empty after a send was aborted", []string{"begin", "send a", "send b", "abort", "begin", "abort", "begin", "send c", "abort", "begin", "send d", "commit"}, []string{"d"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d := openTxnDir(t, map[string]int32{"out": 1})
				p := newProducer(t, d, func(c *Config) { c.TransactionalID, c.CompressionType = "tx", codec })
				ctx := context.Background()
				require.NoError(t, p.InitTransactions(ctx))
				for i, step := range tc.steps {
					var err error
					switch f := strings.Fields(step); f[0] {
					case "begin":
						err = p.BeginTransaction()
					case "send":
						sendValues(t, p, "out", 0, f[1])
					case "commit":
						err = p.CommitTransaction(ctx)
					case "abort":
						err = p.AbortTransaction(ctx)
					}
					require.NoError(t, err, "step %d: %s", i, step)
				}
				require.Equal(t, tc.committed, committedValues(t, d, "out", 0))
				l, err := d.Partition("out", 0)
				require.NoError(t, err)
				require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "no transaction left open")
			})
		}
	})
}

// TestTransactionsV2BumpEpoch: the producer ends each transaction as a
// transactions version 2 client: the end bumps the epoch, the markers
// carry it, and the next transaction's batches use it with sequences from
// 0; the coordinator records the transactions' version 2.
func TestTransactionsV2BumpEpoch(t *testing.T) {
	d := openTxnDir(t, map[string]int32{"t": 1})
	ctx := context.Background()
	p := newProducer(t, d, func(c *Config) { c.TransactionalID = "tx-v2" })
	require.NoError(t, p.InitTransactions(ctx))
	l, err := d.Partition("t", 0)
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, p.BeginTransaction())
		sendValues(t, p, "t", 0, "a", "b")
		if i == 1 {
			require.NoError(t, p.AbortTransaction(ctx))
		} else {
			require.NoError(t, p.CommitTransaction(ctx))
		}
		infos := l.Producers()
		require.Len(t, infos, 1)
		require.Equal(t, int16(i+1), infos[0].ProducerEpoch, "transaction %d's marker carries the bumped epoch", i)
		require.Equal(t, l.LogEndOffset(), l.LastStableOffset())
	}
	tc, err := coordinator.Transactions(ctx, d)
	require.NoError(t, err)
	desc, err := tc.DescribeTransaction("tx-v2")
	require.NoError(t, err)
	require.Equal(t, int16(3), desc.ProducerEpoch)
	require.Equal(t, coordinator.TxnCompleteCommit, desc.State)
	aborted, err := l.AbortedTransactions(0, l.LogEndOffset())
	require.NoError(t, err)
	require.Len(t, aborted, 1, "the second transaction, aborted")
	require.Equal(t, int64(3), aborted[0].FirstOffset, "after the first transaction's two records and marker")
}
