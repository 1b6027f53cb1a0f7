package s3store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestTieredDirectory runs a directory's tiered storage on the S3 store
// (gofakes3 on loopback): its sealed segments are copied to the bucket,
// the local copies deleted by local retention, and the partition read
// back whole from offset 0, before and after a reopen.
func TestTieredDirectory(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t)
	store := srv.newStore(t, srv.testConfig())
	path := filepath.Join(t.TempDir(), "kafkalite")
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = store
	cfg.RemoteLogManagerTaskInterval = time.Hour
	d, err := log.Open(ctx, path, cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "4096",
		"local.retention.bytes": "0"})
	require.NoError(t, err)
	l, err := d.Partition("tiered", 0)
	require.NoError(t, err)
	var want []string
	for b := range 20 {
		recs := make([]record.Record, 10)
		for i := range recs {
			v := fmt.Sprintf("record %d-%d %0200d", b, i, 0)
			want = append(want, v)
			recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: time.Now().UnixMilli(), Value: []byte(v)}
		}
		batch, err := record.AppendBatch(nil, record.BatchHeader{Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			PartitionLeaderEpoch: -1}, record.DefaultLevel, recs)
		require.NoError(t, err)
		_, err = l.Append(batch)
		require.NoError(t, err)
	}
	res, err := d.TierNow(ctx)
	require.NoError(t, err)
	require.Greater(t, res.Copied, 2)
	_, err = l.EnforceRetention()
	require.NoError(t, err)
	require.Positive(t, l.LocalLogStartOffset())
	require.NotEmpty(t, srv.keys(t))

	readAll := func(l *log.Log) []string {
		var got []string
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			next, err := l.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
				got = append(got, string(r.Value))
				return nil
			})
			require.NoError(t, err)
			off = next
		}
		return got
	}
	require.Equal(t, want, readAll(l))
	require.NoError(t, d.Close())

	d, err = log.Open(ctx, path, cfg)
	require.NoError(t, err)
	defer d.Close()
	l, err = d.Partition("tiered", 0)
	require.NoError(t, err)
	require.Zero(t, l.LogStartOffset())
	require.Equal(t, want, readAll(l))
}
