package logdir_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logdir"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// batch is n records of about 100 bytes, of producer pid (-1 for none)
// from sequence seq.
func batch(t *testing.T, n int, pid int64, seq int32) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: time.Now().UnixMilli(), Value: fmt.Appendf(nil, "%0100d", i)}
	}
	h := record.BatchHeader{Magic: 2, ProducerID: pid, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}
	if pid >= 0 {
		h.ProducerEpoch, h.BaseSequence = 0, seq
	}
	b, err := record.AppendBatch(nil, h, record.DefaultLevel, recs)
	require.NoError(t, err)
	return b
}

// TestReadsWhatTheLogWrote: each reader gives back what a Dir wrote into
// its directory and says of itself through its own API: the node id, the
// clean shutdown, the recovery points (its log end offsets), the topic id,
// the leader epoch, and an idempotent producer's last batch.
func TestReadsWhatTheLogWrote(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := log.DefaultConfig()
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "t", 2, nil)
	require.NoError(t, err)
	l, err := d.Partition("t", 0)
	require.NoError(t, err)
	pid, err := d.AllocateProducerID(ctx)
	require.NoError(t, err)
	_, err = l.Append(batch(t, 3, pid, 0))
	require.NoError(t, err)
	res, err := l.Append(batch(t, 4, pid, 3))
	require.NoError(t, err)
	require.NoError(t, l.Roll(ctx)) // a snapshot at the new segment's base
	desc, err := d.DescribeTopic("t")
	require.NoError(t, err)
	require.NoError(t, d.Close())

	mp, err := logdir.ReadMetaProperties(filepath.Join(dir, "meta.properties"))
	require.NoError(t, err)
	require.Equal(t, 1, mp.Version)
	require.Equal(t, cfg.NodeID, mp.NodeID)
	require.NotEmpty(t, mp.ClusterID)

	found, _, err := logdir.ReadCleanShutdown(dir)
	require.NoError(t, err)
	require.True(t, found, "a Dir closed cleanly leaves the marker")

	points, err := logdir.ReadOffsetCheckpoint(filepath.Join(dir, "recovery-point-offset-checkpoint"))
	require.NoError(t, err)
	require.Equal(t, map[log.TopicPartition]int64{{Topic: "t", Partition: 0}: 7, {Topic: "t", Partition: 1}: 0}, points)

	id, err := logdir.ReadPartitionMetadata(filepath.Join(dir, "t-1", "partition.metadata"))
	require.NoError(t, err)
	require.Equal(t, desc.ID, id)

	epochs, err := logdir.ReadLeaderEpochCheckpoint(filepath.Join(dir, "t-0", "leader-epoch-checkpoint"))
	require.NoError(t, err)
	require.Equal(t, []logdir.EpochEntry{{Epoch: 0, StartOffset: 0}}, epochs)

	snap, err := logdir.ReadProducerSnapshot(filepath.Join(dir, "t-0", segment.FileName(7, logdir.ProducerSnapshotSuffix)))
	require.NoError(t, err)
	require.Len(t, snap, 1)
	require.Equal(t, logdir.ProducerSnapshotEntry{ProducerID: pid, ProducerEpoch: 0, LastSequence: 6, LastOffset: res.LastOffset,
		OffsetDelta: 3, Timestamp: snap[0].Timestamp, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}, snap[0])
}

// TestDamagedAndMissingFiles: a file that breaks its format is an error
// matching ErrCorrupt that names the file, whichever reader reads it; a
// missing file is fs.ErrNotExist, but for the checkpoints (no entries) and
// the clean-shutdown marker (not found).
func TestDamagedAndMissingFiles(t *testing.T) {
	dir := t.TempDir()
	readers := map[string]func(path string) error{
		"meta.properties": func(p string) error { _, err := logdir.ReadMetaProperties(p); return err },
		"leader-epoch-checkpoint": func(p string) error {
			_, err := logdir.ReadLeaderEpochCheckpoint(p)
			return err
		},
		"partition.metadata": func(p string) error { _, err := logdir.ReadPartitionMetadata(p); return err },
		"00000000000000000007.snapshot": func(p string) error {
			_, err := logdir.ReadProducerSnapshot(p)
			return err
		},
		"recovery-point-offset-checkpoint": func(p string) error {
			_, err := logdir.ReadOffsetCheckpoint(p)
			return err
		},
	}
	for name, read := range readers {
		path := filepath.Join(dir, name)
		err := read(path)
		if name == "recovery-point-offset-checkpoint" || name == "leader-epoch-checkpoint" {
			require.NoError(t, err, "no checkpoint")
		} else {
			require.ErrorIs(t, err, fs.ErrNotExist, name)
			require.NotErrorIs(t, err, logdir.ErrCorrupt, name)
		}
		bad := "garbage\x00\xff"
		if name == "meta.properties" {
			bad = "version=x\n" // a properties file parses whatever its lines; its version must be a number
		}
		require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
		err = read(path)
		require.ErrorIs(t, err, logdir.ErrCorrupt, name)
		require.Contains(t, err.Error(), name)
	}

	found, epoch, err := logdir.ReadCleanShutdown(dir)
	require.NoError(t, err)
	require.False(t, found)
	require.Equal(t, int64(-1), epoch)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".kafka_cleanshutdown"), []byte("{"), 0o644))
	found, epoch, err = logdir.ReadCleanShutdown(dir)
	require.True(t, found, "present is clean, whatever it holds")
	require.Equal(t, int64(-1), epoch)
	require.ErrorIs(t, err, logdir.ErrCorrupt)
}

// TestReadRemoteSegments: the copies a tiered partition recorded in
// __remote_log_metadata, read from the files after the Dir closed, are
// those the Dir reported while open, in the same order with the same
// metadata; a damaged record is reported (ErrCorrupt) and skipped, and the
// rest still read.
func TestReadRemoteSegments(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, "kafkalite")
	cfg := log.DefaultConfig()
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(vfs.Default, filepath.Join(root, "remote"))
	cfg.RemoteLogManagerTaskInterval = time.Hour
	cfg.RemoteLogMetadataTopicNumPartitions = 1
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.bytes": "2000"})
	require.NoError(t, err)
	l, err := d.Partition("tiered", 0)
	require.NoError(t, err)
	for range 12 {
		_, err = l.Append(batch(t, 5, -1, 0))
		require.NoError(t, err)
	}
	_, err = d.TierNow(ctx)
	require.NoError(t, err)
	_, err = l.EnforceRetention()
	require.NoError(t, err)
	want, err := d.RemoteSegments("tiered", 0)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	require.NoError(t, d.Close())

	got, err := logdir.ReadRemoteSegments(dir)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// A record whose value no longer decodes: its bytes changed under a
	// valid CRC (the batch rewritten with the damage) would need a
	// writer; a value cut short in place breaks the CRC instead, and the
	// batch is skipped whole.
	mdir := filepath.Join(dir, log.RemoteLogMetadataTopic+"-0")
	seg := filepath.Join(mdir, segment.FileName(0, segment.LogSuffix))
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	n, err := record.BatchSize(b)
	require.NoError(t, err)
	b[n-1] ^= 0xff // the first batch's last byte
	require.NoError(t, os.WriteFile(seg, b, 0o644))
	got, err = logdir.ReadRemoteSegments(dir)
	require.ErrorIs(t, err, logdir.ErrCorrupt)
	require.True(t, strings.Contains(err.Error(), "batch at 0"), err.Error())
	require.Less(t, len(got), len(want)+1)

	none, err := logdir.ReadRemoteSegments(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, none)
}
