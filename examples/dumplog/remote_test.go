package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestRemoteSegments dumps a log directory whose tiered partition has
// segments in remote storage, some of them no longer local: the dump ends
// with each copy, its offsets and its state, as __remote_log_metadata
// records them, and -verify finds nothing wrong with the directory.
func TestRemoteSegments(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "kafkalite")
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(vfs.Default, filepath.Join(root, "remote"))
	cfg.RemoteLogManagerTaskInterval = time.Hour
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.bytes": "2000"})
	require.NoError(t, err)
	l, err := d.Partition("tiered", 0)
	require.NoError(t, err)
	for b := range 12 {
		recs := make([]record.Record, 5)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: time.Now().UnixMilli(), Value: fmt.Appendf(nil, "r%d %0100d", b, i)}
		}
		batch, err := record.AppendBatch(nil, record.BatchHeader{Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			PartitionLeaderEpoch: -1}, record.DefaultLevel, recs)
		require.NoError(t, err)
		_, err = l.Append(batch)
		require.NoError(t, err)
	}
	_, err = d.TierNow(ctx)
	require.NoError(t, err)
	_, err = l.EnforceRetention()
	require.NoError(t, err)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.NoError(t, d.Close())

	code, out, stderr := runDumplog(dir)
	require.Zero(t, code, stderr)
	_, tail, ok := strings.Cut(out, "Remote segments (from __remote_log_metadata):\n")
	require.True(t, ok, out)
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	require.Len(t, lines, len(copies))
	for i, m := range copies {
		require.Contains(t, lines[i], fmt.Sprintf("partition: tiered-0 startOffset: %d endOffset: %d size: %d", m.StartOffset, m.EndOffset, m.SizeInBytes))
		require.Contains(t, lines[i], "state: COPY_SEGMENT_FINISHED")
	}
	code, _, stderr = runDumplog("-verify", dir)
	require.Zero(t, code, stderr)
}
