package producer

import (
	"context"
	"testing"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestDoneContextStopsBlockingCalls checks the package-wide rule (DESIGN.md,
// "Contexts"): a blocking call given a context that is already done returns
// the context's error at once and changes nothing.
func TestDoneContextStopsBlockingCalls(t *testing.T) {
	d := openTxnDir(t, map[string]int32{"t": 1})
	live := context.Background()
	done, cancel := context.WithCancel(live)
	cancel()
	l, err := d.Partition("t", 0)
	require.NoError(t, err)

	p := newProducer(t, d, nil)
	txn := newProducer(t, d, func(c *Config) { c.TransactionalID = "ctx" })
	c, err := consumer.New(d, func() consumer.Config {
		cfg := consumer.DefaultConfig()
		cfg.GroupID = "g"
		return cfg
	}())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(live) })
	require.NoError(t, c.Assign([]consumer.TopicPartition{{Topic: "t", Partition: 0}}))

	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, b.Append(1, nil, []byte("v"), nil))
	batch, err := b.Build()
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Producer.Send", func(ctx context.Context) error {
			_, err := p.Send(ctx, &Record{Topic: "t", Value: []byte("x")}, nil)
			return err
		}},
		{"Producer.Flush", p.Flush},
		{"Producer.InitTransactions", txn.InitTransactions},
		{"Producer.SendOffsetsToTransaction", func(ctx context.Context) error {
			return txn.SendOffsetsToTransaction(ctx, nil, c.GroupMetadata())
		}},
		{"Producer.CommitTransaction", txn.CommitTransaction},
		{"Consumer.Poll", func(ctx context.Context) error { _, err := c.Poll(ctx); return err }},
		{"Consumer.CommitSync", func(ctx context.Context) error {
			return c.CommitSync(ctx, map[consumer.TopicPartition]consumer.OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 0, LeaderEpoch: -1}})
		}},
		{"Log.AppendDurable", func(ctx context.Context) error { _, err := l.AppendDurable(ctx, batch); return err }},
		{"Log.WaitForData", func(ctx context.Context) error { return l.WaitForData(ctx, l.LogEndOffset()) }},
		{"Dir.CreateTopic", func(ctx context.Context) error { _, err := d.CreateTopic(ctx, "new", 1, nil); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end := l.LogEndOffset()
			require.ErrorIs(t, tc.call(done), context.Canceled)
			require.Equal(t, end, l.LogEndOffset(), "nothing appended")
		})
	}
	require.NoError(t, p.Flush(live))
	require.Equal(t, int64(0), l.LogEndOffset(), "the cancelled Send buffered nothing")
	committed, err := c.Committed([]consumer.TopicPartition{{Topic: "t", Partition: 0}})
	require.NoError(t, err)
	require.Empty(t, committed, "the cancelled CommitSync committed nothing")
	_, err = d.DescribeTopic("new")
	require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition, "the cancelled CreateTopic created nothing")
}
