package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/record"
)

// epochsTimestamp is the timestamp of the record at offset 0 of the
// "epochs" topic; the record at offset o has epochsTimestamp+o.
const epochsTimestamp = 1_800_000_000_000

// startWithEpochs starts a server whose topic "epochs" (one partition)
// holds leader epoch 0 at offsets 0–2, epoch 2 at 3–5 and epoch 5 at
// 6–9, appended through kafkalite's API as a replica (which keeps each
// batch's epoch), as a directory adopted from a Kafka broker holds them;
// and whose topic "plain" has two partitions, the first with three records
// produced by franz-go, the second empty.
func startWithEpochs(t *testing.T) *servertest.Server {
	t.Helper()
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	_, err := srv.Dir.CreateTopic(ctx, "epochs", 1, nil)
	require.NoError(t, err)
	l, err := srv.Dir.Partition("epochs", 0)
	require.NoError(t, err)
	for _, b := range []struct {
		base  int64
		n     int
		epoch int32
	}{{0, 3, 0}, {3, 3, 2}, {6, 4, 5}} {
		recs := make([]record.Record, b.n)
		for i := range recs {
			recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: epochsTimestamp + b.base + int64(i),
				Value: fmt.Appendf(nil, "v%d", b.base+int64(i))}
		}
		batch, err := record.AppendBatch(nil, record.BatchHeader{BaseOffset: b.base, PartitionLeaderEpoch: b.epoch,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel, recs)
		require.NoError(t, err)
		_, err = l.AppendAsReplica(batch)
		require.NoError(t, err)
	}
	require.Equal(t, int32(5), l.LeaderEpoch())

	cl := client(t, srv.Addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "plain", 2)
	for i := range 3 {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "plain", Partition: 0, Value: fmt.Appendf(nil, "p%d", i)}).FirstErr())
	}
	return srv
}

// offsetForLeaderEpoch sends req, at its version, on c and decodes the
// answer.
func offsetForLeaderEpoch(t *testing.T, c net.Conn, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	t.Helper()
	body, err := rawRequest(t, c, kmsg.NewRequestFormatter(kmsg.FormatterClientID("epochs")).AppendRequest(nil, req, 1))
	require.NoError(t, err)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	if resp.IsFlexible() {
		require.Equal(t, byte(0), body[0], "no tagged fields in the response header")
		body = body[1:]
	}
	require.NoError(t, resp.ReadFrom(body))
	return resp
}

// TestOffsetForLeaderEpoch sends OffsetForLeaderEpoch at every served
// version (and, from v3, as a consumer, a debugging client and a follower)
// and checks each partition's answer against Kafka's broker: the largest
// epoch at or below the one asked and where it ends (the next epoch's
// start, or the log end offset for the latest epoch); -1/-1 for an
// undefined epoch or one above the leader's; the leader's own epoch on an
// empty partition; FENCED_LEADER_EPOCH and UNKNOWN_LEADER_EPOCH for a
// CurrentLeaderEpoch below or above the partition's (v2+; before v2 the
// field is not sent, and nothing is checked); UNKNOWN_TOPIC_OR_PARTITION
// for a topic or partition the server does not have. v0 answers carry no
// epoch.
func TestOffsetForLeaderEpoch(t *testing.T) {
	const (
		errUnknownTopicOrPartition = 3
		errFencedLeaderEpoch       = 74
		errUnknownLeaderEpoch      = 75
	)
	type answer struct {
		code  int16
		epoch int32
		end   int64
	}
	tests := []struct {
		name                        string
		topic                       string
		partition, current, request int32
		want                        answer
		before2                     answer // when the version has no CurrentLeaderEpoch; zero: want
	}{
		{"latest epoch ends at the log end", "epochs", 0, -1, 5, answer{0, 5, 10}, answer{}},
		{"earlier epoch ends where the next starts", "epochs", 0, -1, 2, answer{0, 2, 6}, answer{}},
		{"epoch without records answers the one below", "epochs", 0, -1, 4, answer{0, 2, 6}, answer{}},
		{"first epoch", "epochs", 0, -1, 0, answer{0, 0, 3}, answer{}},
		{"epoch above the leader's", "epochs", 0, -1, 6, answer{0, -1, -1}, answer{}},
		{"undefined epoch", "epochs", 0, -1, -1, answer{0, -1, -1}, answer{}},
		{"current epoch is the leader's", "epochs", 0, 5, 2, answer{0, 2, 6}, answer{}},
		{"current epoch older than the leader's", "epochs", 0, 4, 2, answer{errFencedLeaderEpoch, -1, -1}, answer{0, 2, 6}},
		{"current epoch newer than the leader's", "epochs", 0, 6, 2, answer{errUnknownLeaderEpoch, -1, -1}, answer{0, 2, 6}},
		{"records produced by a client", "plain", 0, 0, 0, answer{0, 0, 3}, answer{}},
		{"empty partition", "plain", 1, 0, 0, answer{0, 0, 0}, answer{}},
		{"unknown partition", "epochs", 7, -1, 0, answer{errUnknownTopicOrPartition, -1, -1}, answer{}},
		{"unknown topic", "nope", 0, -1, 0, answer{errUnknownTopicOrPartition, -1, -1}, answer{}},
	}
	srv := startWithEpochs(t)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	for v := int16(2); v <= 4; v++ { // Kafka 4.4 serves v2–4
		replicas := []int32{-2} // what a request before v3 means
		if v >= 3 {
			replicas = []int32{-1, -2, 1}
		}
		for _, replica := range replicas {
			t.Run(fmt.Sprintf("v%d/replica=%d", v, replica), func(t *testing.T) {
				req := kmsg.NewPtrOffsetForLeaderEpochRequest()
				req.SetVersion(v)
				req.ReplicaID = replica
				for _, tc := range tests { // one topic entry per case, in order
					rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
					rt.Topic = tc.topic
					rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
					rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tc.partition, tc.current, tc.request
					rt.Partitions = append(rt.Partitions, rp)
					req.Topics = append(req.Topics, rt)
				}
				resp := offsetForLeaderEpoch(t, c, req)
				require.Len(t, resp.Topics, len(tests))
				for i, tc := range tests {
					rt := resp.Topics[i]
					require.Equal(t, tc.topic, rt.Topic, tc.name)
					require.Len(t, rt.Partitions, 1, tc.name)
					rp := rt.Partitions[0]
					want := tc.want
					if v < 2 && tc.before2 != (answer{}) {
						want = tc.before2
					}
					if v == 0 {
						want.epoch = -1 // not in a v0 answer
					}
					require.Equal(t, tc.partition, rp.Partition, tc.name)
					require.Equal(t, want, answer{rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset}, tc.name)
				}
			})
		}
	}
}

// TestOffsetForLeaderEpochVersions: ApiVersions advertises
// OffsetForLeaderEpoch at versions 0–4, and a request above them is
// refused before its body is read: the connection closes without an
// answer.
func TestOffsetForLeaderEpochVersions(t *testing.T) {
	i := slices.IndexFunc(server.SupportedAPIs(), func(k kmsg.ApiVersionsResponseApiKey) bool {
		return k.ApiKey == kmsg.OffsetForLeaderEpoch.Int16()
	})
	require.GreaterOrEqual(t, i, 0, "OffsetForLeaderEpoch is advertised")
	k := server.SupportedAPIs()[i]
	require.Equal(t, [2]int16{2, 4}, [2]int16{k.MinVersion, k.MaxVersion})

	srv := servertest.Start(t, nil)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(4)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("epochs")).AppendRequest(nil, req, 1)
	frame[7] = 5 // the version's low byte: v5
	_, err = rawRequest(t, c, frame)
	require.ErrorIs(t, err, io.EOF)
}

// TestLeaderEpochInMetadataAndListOffsets: the leader epoch a Metadata
// answer gives each partition is the one OffsetForLeaderEpoch checks
// CurrentLeaderEpoch against (5 for "epochs", 0 for a topic created by a
// client); ListOffsets answers, as Kafka's broker does, the partition's
// epoch for the latest offset and the epoch of the batch found for the
// earliest offset and for a timestamp.
func TestLeaderEpochInMetadataAndListOffsets(t *testing.T) {
	srv := startWithEpochs(t)
	cl := client(t, srv.Addr)
	ctx := context.Background()

	meta := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"epochs", "plain"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		meta.Topics = append(meta.Topics, mt)
	}
	mresp, err := meta.RequestWith(ctx, cl)
	require.NoError(t, err)
	epochs := map[string][]int32{}
	for _, mt := range mresp.Topics {
		require.Zero(t, mt.ErrorCode)
		for _, mp := range mt.Partitions {
			epochs[*mt.Topic] = append(epochs[*mt.Topic], mp.LeaderEpoch)
		}
	}
	require.Equal(t, map[string][]int32{"epochs": {5}, "plain": {0, 0}}, epochs)

	for _, tc := range []struct {
		name       string
		timestamp  int64
		wantOffset int64
		wantEpoch  int32
	}{
		{"latest", -1, 10, 5},
		{"earliest", -2, 0, 0},
		{"timestamp of offset 4", epochsTimestamp + 4, 4, 2},
		{"timestamp of offset 7", epochsTimestamp + 7, 7, 5},
		{"max timestamp", -3, 9, 5},
	} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "epochs"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, tc.timestamp, 5
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err, tc.name)
		got := resp.Topics[0].Partitions[0]
		require.Zero(t, got.ErrorCode, tc.name)
		require.Equal(t, [2]int64{tc.wantOffset, int64(tc.wantEpoch)}, [2]int64{got.Offset, int64(got.LeaderEpoch)}, tc.name)
	}
}

// TestConsumerValidatesEpoch: franz-go validates an offset given with the
// epoch it was consumed in through OffsetForLeaderEpoch before fetching
// (KIP-320). An offset inside the epoch's range is used as it is; one past
// the end of its epoch is reported as data loss, and consumption resumes
// where the epoch ended.
func TestConsumerValidatesEpoch(t *testing.T) {
	srv := startWithEpochs(t)
	for _, tc := range []struct {
		name      string
		offset    int64
		epoch     int32
		wantFirst int64
		wantLoss  bool
	}{
		{"inside the epoch", 4, 2, 4, false},
		{"past the end of the epoch", 8, 2, 6, true},
		{"the latest epoch", 7, 5, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := client(t, srv.Addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
				"epochs": {0: kgo.NewOffset().At(tc.offset).WithEpoch(tc.epoch)},
			}))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var got []int64
			lost := false
			for len(got) == 0 || got[len(got)-1] < 9 {
				fs := cl.PollFetches(ctx)
				require.NoError(t, ctx.Err(), "got offsets %v", got)
				fs.EachError(func(_ string, _ int32, err error) {
					var loss *kgo.ErrDataLoss
					require.True(t, errors.As(err, &loss), "%v", err)
					require.Equal(t, [2]int64{tc.offset, 6}, [2]int64{loss.ConsumedTo, loss.ResetTo})
					lost = true
				})
				fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Offset) })
			}
			require.Equal(t, tc.wantLoss, lost)
			require.Equal(t, tc.wantFirst, got[0])
			require.Equal(t, int64(9), got[len(got)-1])
		})
	}
}
