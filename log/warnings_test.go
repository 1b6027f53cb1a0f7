package log

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestCleanDirectoryOpensWithoutWarnings: a directory kafkalite wrote and
// closed cleanly (producer ids, producer snapshots, rolled segments,
// checkpoints, internal topics) reopens without a single warning. Warnings reach the program's log by default,
// so one about kafkalite's own files (kafkalite-producer-ids was reported
// as a stray file) misleads every user.
func TestCleanDirectoryOpensWithoutWarnings(t *testing.T) {
	matrix.Run(t, matrix.FSes, func(t *testing.T, mc matrix.Case) {
		ctx := context.Background()
		fsys, path := mc.Dir(t)
		var logs bytes.Buffer
		cfg := DefaultConfig()
		cfg.FS = fsys
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
		d, err := Open(ctx, path, cfg)
		require.NoError(t, err)
		_, err = d.CreateTopic(ctx, "t", 2, map[string]string{"segment.bytes": "1024"})
		require.NoError(t, err)
		pid, err := d.AllocateProducerID(context.Background())
		require.NoError(t, err)
		l, err := d.Partition("t", 0)
		require.NoError(t, err)
		var b record.Builder
		for i := range 20 {
			b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: pid, ProducerEpoch: 0, BaseSequence: int32(i * 5)}, record.DefaultLevel)
			for range 5 {
				require.NoError(t, b.Append(1, []byte("k"), []byte("some value bytes"), nil))
			}
			batch, err := b.Build()
			require.NoError(t, err)
			_, err = l.Append(batch)
			require.NoError(t, err)
		}
		require.NoError(t, d.Close())
		require.Empty(t, logs.String(), "warnings while writing")

		d, err = Open(ctx, path, cfg)
		require.NoError(t, err)
		require.True(t, d.Recovery().Clean)
		require.NoError(t, d.Close())
		require.Empty(t, logs.String(), "warnings when reopening a clean directory")
	})
}
