package server_test

import (
	"context"
	"fmt"
	"io"
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

// tieredTopic are a tiered topic's properties: segments of about 2 KB,
// each deleted locally once copied.
var tieredTopic = map[string]string{"remote.storage.enable": "true", "segment.bytes": "2000", "local.retention.bytes": "0"}

// openTiered opens a directory with tiered storage, both on one memory
// filesystem; tiering passes run only when the test calls TierNow. wrap,
// if not nil, wraps the store.
func openTiered(t *testing.T, wrap func(remote.StorageManager) remote.StorageManager) *log.Dir {
	t.Helper()
	mem := vfs.NewMem()
	cfg := log.DefaultConfig()
	cfg.FS = mem
	cfg.RemoteLogStorageSystemEnable = true
	cfg.RemoteStorage = remote.NewFileStore(mem, "/remote")
	if wrap != nil {
		cfg.RemoteStorage = wrap(cfg.RemoteStorage)
	}
	cfg.RemoteLogManagerTaskInterval = time.Hour
	d, err := log.Open(context.Background(), "/kafkalite", cfg)
	require.NoError(t, err)
	return d
}

// listOffset asks ListOffsets (v9) for partition 0 of topic at ts.
func listOffset(t *testing.T, cl *kgo.Client, topic string, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, ts, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Topics[0].Partitions[0]
}

// TestTieredStorage serves a tiered partition whose oldest segments are
// only in remote storage (copied, then deleted locally): ListOffsets
// answers tiered storage's special timestamps, earliest local (-4) and
// latest tiered (-5), and franz-go's consumer reads the partition from
// offset 0, the remote records first, through Fetch.
func TestTieredStorage(t *testing.T) {
	ctx := context.Background()
	d := openTiered(t, nil)
	const batches, perBatch = 12, 5
	l := tieredPartition(t, d, batches, perBatch)
	local := l.LocalLogStartOffset()
	require.Positive(t, local, "the oldest segments are only in remote storage")
	require.Equal(t, local-1, l.HighestTieredOffset())

	addr := serveDir(t, d)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"tiered": {0: kgo.NewOffset().AtStart()}}))
	require.NoError(t, err)
	defer cl.Close()
	for _, tt := range []struct {
		timestamp int64
		want      int64
	}{{-2, 0}, {-4, local}, {-5, local - 1}, {-1, batches * perBatch}} {
		got := listOffset(t, cl, "tiered", tt.timestamp)
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

// tieredPartition creates the topic "tiered" of one partition on d,
// appends batches of perBatch records "record <i> <100 zeros>", copies
// its sealed segments to the store and deletes them locally.
func tieredPartition(t *testing.T, d *log.Dir, batches, perBatch int) *log.Log {
	t.Helper()
	ctx := context.Background()
	_, err := d.CreateTopic(ctx, "tiered", 1, tieredTopic)
	require.NoError(t, err)
	l, err := d.Partition("tiered", 0)
	require.NoError(t, err)
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
	return l
}

// firstMarker returns the offset and timestamp of l's first control batch
// (a transaction marker), read from its batches' headers.
func firstMarker(t *testing.T, l *log.Log) (int64, int64) {
	t.Helper()
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		res, err := l.Read(off, 1<<20, true)
		require.NoError(t, err)
		b, err := res.Slice.Bytes(nil)
		res.Release()
		require.NoError(t, err)
		for len(b) > 0 {
			h, err := record.ParseHeader(b)
			require.NoError(t, err)
			if h.Attributes.IsControl() {
				return h.BaseOffset, h.MaxTimestamp
			}
			off, b = h.NextOffset(), b[h.Size():]
		}
	}
	t.Fatal("no marker")
	return 0, 0
}

// TestTieredTransactions serves a partition, tiered or not, holding a
// transaction aborted segments after its data (the segments between
// without aborts), a committed one, and records timestamped an hour ago
// around them, with the oldest segments only in remote storage for the
// tiered topic: franz-go's read_committed consumer gets every record but
// the aborted ones (the Fetch's aborted transactions found past copies
// without aborts), and ListOffsets for a time after every record but
// before the markers answers the first marker's offset and timestamp, as
// Kafka's does (its search looks at control batches too).
func TestTieredTransactions(t *testing.T) {
	for _, topic := range []string{"tiered", "plain"} {
		t.Run(topic, func(t *testing.T) {
			ctx := context.Background()
			d := openTiered(t, nil)
			props := map[string]string{"segment.bytes": "2000"}
			if topic == "tiered" {
				props = tieredTopic
			}
			_, err := d.CreateTopic(ctx, topic, 1, props)
			require.NoError(t, err)
			l, err := d.Partition(topic, 0)
			require.NoError(t, err)
			addr := serveDir(t, d)
			txn, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx-"+topic), kgo.ProducerLinger(0))
			require.NoError(t, err)
			defer txn.Close()
			plain, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(0))
			require.NoError(t, err)
			defer plain.Close()

			old := time.Now().Add(-time.Hour)
			var want []string
			send := func(cl *kgo.Client, prefix string, n int, keep bool) {
				for i := range n {
					v := fmt.Sprintf("%s%d %0100d", prefix, i, 0)
					require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v), Timestamp: old}).FirstErr())
					if keep {
						want = append(want, v)
					}
				}
			}
			require.NoError(t, txn.BeginTransaction())
			send(txn, "aborted", 5, false)
			send(plain, "p", 40, true)
			require.NoError(t, txn.EndTransaction(ctx, kgo.TryAbort))
			send(plain, "q", 10, true)
			require.NoError(t, txn.BeginTransaction())
			send(txn, "committed", 3, true)
			require.NoError(t, txn.EndTransaction(ctx, kgo.TryCommit))
			send(plain, "r", 30, true)
			marker, markerTS := firstMarker(t, l)
			if topic == "tiered" {
				_, err = d.TierNow(ctx)
				require.NoError(t, err)
				_, err = l.EnforceRetention()
				require.NoError(t, err)
				copies, err := d.RemoteSegments(topic, 0)
				require.NoError(t, err)
				require.GreaterOrEqual(t, len(copies), 3)
				require.True(t, copies[0].TxnIndexEmpty, "the aborted data's copy has no aborts")
				require.Greater(t, l.LocalLogStartOffset(), marker, "the ABORT marker is only in a copy")
			}

			got := consume(t, addr, topic, len(want), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			var values []string
			for _, r := range got {
				values = append(values, string(r.Value))
			}
			require.Equal(t, want, values)

			cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
			require.NoError(t, err)
			defer cl.Close()
			for _, ts := range []int64{old.Add(time.Millisecond).UnixMilli(), markerTS} {
				got := listOffset(t, cl, topic, ts)
				require.Zero(t, got.ErrorCode)
				require.Equal(t, marker, got.Offset, "ListOffsets %d", ts)
				require.Equal(t, markerTS, got.Timestamp)
			}
		})
	}
}

// heldStore holds the .log fetches of a remote store until their context
// ends, telling held when one begins and ended with the error it returns.
type heldStore struct {
	remote.StorageManager
	held, ended chan error
}

func (s *heldStore) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	s.held <- nil
	<-ctx.Done()
	s.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestCloseEndsARemoteFetch: a Fetch that reads a copy from remote storage
// runs under its connection's context, which the server's Close ends: the
// store's fetch is cancelled and Close returns, where it waited for the
// store before (the read ran under context.Background()).
func TestCloseEndsARemoteFetch(t *testing.T) {
	ctx := context.Background()
	var store *heldStore
	d := openTiered(t, func(s remote.StorageManager) remote.StorageManager {
		store = &heldStore{StorageManager: s, held: make(chan error, 1), ended: make(chan error, 1)}
		return store
	})
	defer d.Close()
	l := tieredPartition(t, d, 12, 5)
	require.Positive(t, l.LocalLogStartOffset(), "the first records are only in the store")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := server.New(d, server.DefaultConfig())
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	cl, err := kgo.NewClient(kgo.SeedBrokers(ln.Addr().String()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"tiered": {0: kgo.NewOffset().AtStart()}}))
	require.NoError(t, err)
	defer cl.Close()
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go cl.PollFetches(pctx)
	<-store.held
	require.NoError(t, srv.Close())
	require.ErrorIs(t, <-store.ended, context.Canceled)
	require.ErrorIs(t, <-served, server.ErrServerClosed)
}
