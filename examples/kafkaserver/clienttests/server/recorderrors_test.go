package server_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/record"
)

// TestProduceRecordErrors: a batch refused for some of its records is
// answered as Kafka's broker answers it (KIP-467): INVALID_RECORD or
// INVALID_TIMESTAMP, Kafka's message, and every refused record's index
// and message, each for its first fault (key before timestamp); nothing
// is appended. With every codec, with one and many refused records, on
// every Produce version that carries record errors.
func TestProduceRecordErrors(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	ctx := context.Background()
	cl := client(t, srv.Addr)
	conn, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	topicIDs := map[string][16]byte{}
	for name, cfg := range map[string]map[string]string{
		"compacted": {"cleanup.policy": "compact"},
		"strict":    {"message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"},
		"both":      {"cleanup.policy": "compact", "message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"},
	} {
		_, err := srv.Dir.CreateTopic(ctx, name, 1, cfg)
		require.NoError(t, err)
		topicIDs[name] = topicIDOf(t, cl, name)
	}
	now := time.Now().UnixMilli()
	past, future := now-2*3600000, now+2*3600000
	key := []byte("k")
	type rec struct {
		key []byte
		ts  int64
	}
	produce := func(v int16, topic string, c record.Compression, recs []rec) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		rs := make([]record.Record, len(recs))
		for i, r := range recs {
			rs[i] = record.Record{Key: r.key, Value: []byte("v"), Timestamp: r.ts, OffsetDelta: int32(i)}
		}
		b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithCompression(c)}, 0, rs)
		require.NoError(t, err)
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(v)
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
		if v >= 13 {
			rt.TopicID = topicIDs[topic]
		}
		req.Topics = []kmsg.ProduceRequestTopic{rt}
		resp := versionedRequest(t, conn, req, v).(*kmsg.ProduceResponse)
		return resp.Topics[0].Partitions[0]
	}
	keyMsg := func(topic string) string {
		return "Compacted topic cannot accept message without key in topic partition " + topic + "-0"
	}
	tsMsg := func(ts, offset int64) string {
		// The bounds depend on the server's clock: the test takes them
		// from the answer.
		return fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [", ts, offset)
	}
	for _, c := range []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		for _, v := range []int16{8, 12, 13} {
			what := fmt.Sprintf("%v v%d", c, v)
			// One record without a key among keyed ones.
			got := produce(v, "compacted", c, []rec{{key, now}, {nil, now}, {key, now}})
			require.Equal(t, int16(87), got.ErrorCode, what)
			require.Equal(t, "One or more records have been rejected due to 1 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='"+keyMsg("compacted")+"')]", *got.ErrorMessage, what)
			require.Len(t, got.ErrorRecords, 1, what)
			require.Equal(t, int32(1), got.ErrorRecords[0].RelativeOffset, what)
			require.Equal(t, keyMsg("compacted"), *got.ErrorRecords[0].ErrorMessage, what)

			// Four of five without a key: all four listed, three shown.
			got = produce(v, "compacted", c, []rec{{nil, now}, {nil, now}, {key, now}, {nil, now}, {nil, now}})
			require.Equal(t, int16(87), got.ErrorCode, what)
			require.Contains(t, *got.ErrorMessage, "due to 4 record errors in total", what)
			require.Contains(t, *got.ErrorMessage, "RecordError(batchIndex=3, ", what)
			require.NotContains(t, *got.ErrorMessage, "RecordError(batchIndex=4, ", what)
			var idx []int32
			for _, e := range got.ErrorRecords {
				idx = append(idx, e.RelativeOffset)
			}
			require.Equal(t, []int32{0, 1, 3, 4}, idx, what)

			// Timestamps out of the window, before and after.
			got = produce(v, "strict", c, []rec{{key, now}, {key, past}, {key, now}, {key, future}})
			require.Equal(t, int16(32), got.ErrorCode, what)
			require.Equal(t, "One or more records have been rejected due to invalid timestamp", *got.ErrorMessage, what)
			require.Len(t, got.ErrorRecords, 2, what)
			require.Equal(t, int32(1), got.ErrorRecords[0].RelativeOffset, what)
			require.Contains(t, *got.ErrorRecords[0].ErrorMessage, tsMsg(past, 1), what)
			require.Equal(t, int32(3), got.ErrorRecords[1].RelativeOffset, what)
			require.Contains(t, *got.ErrorRecords[1].ErrorMessage, tsMsg(future, 3), what)

			// Both faults: a record's key is its first fault; a timestamp
			// among the faults makes the batch's code INVALID_TIMESTAMP.
			got = produce(v, "both", c, []rec{{nil, past}, {key, future}})
			require.Equal(t, int16(32), got.ErrorCode, what)
			require.Len(t, got.ErrorRecords, 2, what)
			require.Equal(t, keyMsg("both"), *got.ErrorRecords[0].ErrorMessage, what)
			require.Contains(t, *got.ErrorRecords[1].ErrorMessage, tsMsg(future, 1), what)
		}
	}
	for _, topic := range []string{"compacted", "strict", "both"} {
		l, err := srv.Dir.Partition(topic, 0)
		require.NoError(t, err)
		require.Zero(t, l.HighWatermark(), "%s: a refused batch appends nothing", topic)
		got := produce(12, topic, record.None, []rec{{key, now}})
		require.Zero(t, got.ErrorCode, topic)
		require.Empty(t, got.ErrorRecords, topic)
	}
}
