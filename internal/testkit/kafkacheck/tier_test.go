package kafkacheck

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/stretchr/testify/require"
)

// TestTierMetadataReadByKafka tiers a topic's sealed segments to a
// FileStore and has Kafka's DumpLogSegments, with its
// --remote-log-metadata-decoder (Kafka's own RemoteLogMetadataSerde), read
// __remote_log_metadata: every copy appears with its segment id, offsets
// and both states, COPY_SEGMENT_STARTED then COPY_SEGMENT_FINISHED.
func TestTierMetadataReadByKafka(t *testing.T) {
	k := Get(t)
	ctx := context.Background()
	root := t.TempDir()
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(vfs.Default, filepath.Join(root, "remote"))
	dir := filepath.Join(root, "kafkalite")
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "4096"})
	require.NoError(t, err)
	pcfg := producer.DefaultConfig()
	pcfg.BatchSize = 1024 // batches smaller than the segments
	p, err := producer.New(d, pcfg)
	require.NoError(t, err)
	var sendErr error
	for i := range 200 {
		_, err := p.Send(ctx, &producer.Record{Topic: "tiered", Value: fmt.Appendf(nil, "record %d %0100d", i, i)},
			func(_ producer.RecordMetadata, err error) {
				if err != nil && sendErr == nil {
					sendErr = err
				}
			})
		require.NoError(t, err)
	}
	require.NoError(t, p.Close(ctx))
	require.NoError(t, sendErr)
	res, err := d.TierNow(ctx)
	require.NoError(t, err)
	require.Greater(t, res.Copied, 2)
	copies, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.NoError(t, d.Close())

	out := k.DumpLogSegments(t, "--remote-log-metadata-decoder", "--files",
		filepath.Join(dir, "__remote_log_metadata-0", "00000000000000000000.log"))
	for _, m := range copies {
		require.Contains(t, out, "id="+m.ID.ID.String(), "segment %s", m.ID)
		require.Contains(t, out, fmt.Sprintf("startOffset=%d, endOffset=%d", m.StartOffset, m.EndOffset), "segment %s", m.ID)
	}
	require.Contains(t, out, "COPY_SEGMENT_STARTED")
	require.Contains(t, out, "COPY_SEGMENT_FINISHED")
	t.Logf("DumpLogSegments:\n%s", tail(out))
}
