package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTieredStorage serves a tiered partition whose oldest segments are
// only in remote storage (copied, then deleted locally): ListOffsets
// answers tiered storage's special timestamps, earliest local (-4) and
// latest tiered (-5), and franz-go's consumer reads the partition from
// offset 0, the remote records first, through Fetch.
func TestTieredStorage(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewMem()
	cfg := log.DefaultConfig()
	cfg.FS = mem
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(mem, "/remote")
	cfg.RemoteLogManagerTaskInterval = time.Hour
	d, err := log.Open(ctx, "/kafkalite", cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "tiered", 1, map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000",
		"local.retention.bytes": "0"})
	require.NoError(t, err)
	l, err := d.Partition("tiered", 0)
	require.NoError(t, err)
	const batches, perBatch = 12, 5
	for b := range batches {
		recs := make([]record.Record, perBatch)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: time.Now().UnixMilli(),
				Value: fmt.Appendf(nil, "record %d %0100d", b*perBatch+i, 0)}
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
	local := l.LocalLogStartOffset()
	require.Positive(t, local, "the oldest segments are only in remote storage")
	require.Equal(t, local-1, l.HighestTieredOffset())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := server.New(d, server.DefaultConfig())
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		if err := <-served; err != nil && !errors.Is(err, server.ErrServerClosed) {
			t.Error(err)
		}
		require.NoError(t, d.Close())
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(ln.Addr().String()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"tiered": {0: kgo.NewOffset().AtStart()}}))
	require.NoError(t, err)
	defer cl.Close()
	for _, tt := range []struct {
		timestamp int64
		want      int64
	}{{-2, 0}, {-4, local}, {-5, local - 1}, {-1, batches * perBatch}} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "tiered"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, tt.timestamp, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		got := resp.Topics[0].Partitions[0]
		require.Zero(t, got.ErrorCode, "timestamp %d", tt.timestamp)
		require.Equal(t, tt.want, got.Offset, "timestamp %d", tt.timestamp)
	}

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var values []string
	for len(values) < batches*perBatch {
		fs := cl.PollFetches(cctx)
		require.NoError(t, cctx.Err())
		fs.EachError(func(_ string, _ int32, err error) { require.NoError(t, err) })
		fs.EachRecord(func(r *kgo.Record) {
			require.Equal(t, int64(len(values)), r.Offset)
			values = append(values, string(r.Value))
		})
	}
	require.Equal(t, fmt.Sprintf("record 0 %0100d", 0), values[0])
	require.Equal(t, fmt.Sprintf("record %d %0100d", batches*perBatch-1, 0), values[len(values)-1])
}
