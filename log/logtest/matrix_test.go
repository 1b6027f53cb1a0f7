package logtest_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestHelpersMatrix runs the helpers that move records (Produce,
// ConsumeAll, ConsumeAllUncommitted, AssertProduced, Expect) for every
// codec the shared producer can use, with many small batches and with few
// large ones, on both filesystems, next to a transactional producer whose
// aborted transaction read_committed must hide. Before the consumer copied
// records out of its decompression buffer, compressed topics came back
// with other records' values.
func TestHelpersMatrix(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.Polls|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		opts := []logtest.Option{logtest.Partitions(3), logtest.ProducerConfig(func(c *producer.Config) {
			c.CompressionType = mc.Codec
			c.BatchSize = mc.BatchSize()
		})}
		if mc.FS == matrix.OS {
			opts = append(opts, logtest.OnDisk())
		}
		b := logtest.New(t, opts...)
		var want []*producer.Record
		for i := range 2000 {
			want = append(want, logtest.KV(fmt.Sprintf("key-%04d", i%61), fmt.Sprintf("value-%06d", i), "n", fmt.Sprint(i)))
		}
		b.Produce("events", want...)

		// A transaction that aborts, in the same topic.
		ctx := context.Background()
		cfg := producer.DefaultConfig()
		cfg.TransactionalID, cfg.CompressionType = "aborter", mc.Codec
		tp, err := producer.New(b.Dir(), cfg)
		require.NoError(t, err)
		defer tp.Close(ctx)
		require.NoError(t, tp.InitTransactions(ctx))
		require.NoError(t, tp.BeginTransaction())
		for i := range 100 {
			_, err := tp.Send(ctx, &producer.Record{Topic: "events", Key: []byte(fmt.Sprintf("key-%04d", i%61)), Value: []byte("aborted")}, nil)
			require.NoError(t, err)
		}
		require.NoError(t, tp.AbortTransaction(ctx))

		codecs := logtest.BatchCodecs(t, b.Dir(), "events")
		require.Equal(t, []record.Compression{mc.Codec}, slices.Sorted(maps.Keys(codecs)), "every data batch in the producers' codec")

		b.AssertProduced(t, "events", want...)
		require.Len(t, b.ConsumeAll("events"), len(want))
		require.Len(t, b.ConsumeAllUncommitted("events"), len(want)+100)
		var values []string
		for i := 7; i < 2000; i += 61 {
			values = append(values, fmt.Sprintf("value-%06d", i))
		}
		b.Expect(t, "events").Key("key-0007").Values(values...)
	})
}
