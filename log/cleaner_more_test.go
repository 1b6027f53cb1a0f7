package log_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// TestCompactionCoordinatorTopics: the coordinators create
// __consumer_offsets and __transaction_state with cleanup.policy=compact,
// as Kafka does, and the Dir's background cleaner compacts them: a
// transactional id initialised five times leaves one state record.
func TestCompactionCoordinatorTopics(t *testing.T) {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.OffsetsTopicNumPartitions = 1
	cfg.TransactionStateNumPartitions = 1
	cfg.CleanerBackoff = time.Millisecond
	d, err := log.Open(ctx, "/data", cfg)
	require.NoError(t, err)
	defer d.Close()

	groups, err := coordinator.Groups(ctx, d)
	require.NoError(t, err)
	require.NoError(t, groups.CommitOffsets(ctx, coordinator.GroupMetadata{GroupID: "g", GenerationID: -1},
		map[coordinator.TopicPartition]coordinator.OffsetAndMetadata{{Topic: "t", Partition: 0}: {Offset: 5, LeaderEpoch: -1}}))
	txns, err := coordinator.Transactions(ctx, d)
	require.NoError(t, err)
	const inits = 5
	for range inits {
		_, err := txns.InitProducerID(ctx, "tx", time.Minute)
		require.NoError(t, err)
	}
	for _, name := range []string{coordinator.OffsetsTopic, coordinator.TransactionStateTopic} {
		desc, err := d.DescribeTopic(name)
		require.NoError(t, err)
		require.True(t, desc.Config.CleanupPolicy.Compact, name)
		require.False(t, desc.Config.CleanupPolicy.Delete, name)
	}

	ts, err := d.Partition(coordinator.TransactionStateTopic, 0)
	require.NoError(t, err)
	end := ts.LogEndOffset()
	require.Equal(t, int64(inits), end)
	require.NoError(t, ts.Roll(context.Background()))
	require.Eventually(t, func() bool { return ts.FirstDirtyOffset() == end }, 10*time.Second, time.Millisecond)
	var offsets []int64
	_, err = ts.ReadRecords(0, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
		offsets = append(offsets, rec.Offset)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int64{end - 1}, offsets, "the latest state of the transactional id")
	st, ok := ts.CleanerStats()
	require.True(t, ok)
	require.Equal(t, int64(inits-1), st.RecordsRemoved())
}
