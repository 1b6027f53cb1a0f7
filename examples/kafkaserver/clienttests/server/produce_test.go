package server_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/record"
)

// TestProduceByTopicID: Produce v13 names topics by id (KIP-516), as
// franz-go sends it to a server that advertises it: the records land in
// the topic the id names, and an id no topic has is refused per partition
// with UNKNOWN_TOPIC_ID; a topic deleted and created again under its name
// has a new id, and the old id is refused.
func TestProduceByTopicID(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "by-id", 1)
	ctx := context.Background()
	idOf := func() [16]byte {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		name := "by-id"
		rt.Topic = &name
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Len(t, resp.Topics, 1)
		return resp.Topics[0].TopicID
	}
	produce := func(id [16]byte, value string) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		b := valueBatch(t, value)
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 13, 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Len(t, resp.Topics, 1)
		require.Equal(t, id, resp.Topics[0].TopicID)
		return resp.Topics[0].Partitions[0]
	}
	first := idOf()
	got := produce(first, "one")
	require.Equal(t, int16(0), got.ErrorCode)
	require.Equal(t, int64(0), got.BaseOffset)
	require.Equal(t, int16(100), produce([16]byte{1, 2, 3}, "nowhere").ErrorCode, "UNKNOWN_TOPIC_ID")

	require.NoError(t, srv.Dir.DeleteTopic(ctx, "by-id"))
	createTopic(t, cl, "by-id", 1)
	second := idOf()
	require.NotEqual(t, first, second)
	require.Equal(t, int16(100), produce(first, "stale").ErrorCode, "the deleted topic's id")
	got = produce(second, "two")
	require.Equal(t, int16(0), got.ErrorCode)
	require.Equal(t, int64(0), got.BaseOffset, "the new topic's first record")
	recs := consume(t, srv.Addr, "by-id", 1)
	require.Equal(t, "two", string(recs[0].Value))
}

// valueBatch is one record of the value in a batch without a producer.
func valueBatch(t *testing.T, value string) []byte {
	t.Helper()
	b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}, 0,
		[]record.Record{{Timestamp: time.Now().UnixMilli(), Value: []byte(value)}})
	require.NoError(t, err)
	return b
}

// TestLargeProducesFromManyClients: clients on their own connections
// send produce requests of several megabytes at once (four partitions'
// batches of up to 1 MB each in a request), whose buffers the server
// passes between connections once each response is written: every
// record lands in its topic with its own value, in order per partition.
func TestLargeProducesFromManyClients(t *testing.T) {
	srv := servertest.Start(t, nil)
	const clients, records, valueBytes = 4, 12_000, 1000
	var wg sync.WaitGroup
	for c := range clients {
		topic := fmt.Sprintf("large-%d", c)
		cl := client(t, srv.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(200*time.Millisecond),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
		createTopic(t, cl, topic, 4)
		wg.Go(func() {
			var rs []*kgo.Record
			for i := range records {
				v := bytes.Repeat([]byte(fmt.Sprintf("%d-%06d|", c, i)), valueBytes/10)
				rs = append(rs, &kgo.Record{Value: v})
			}
			assert.NoError(t, cl.ProduceSync(context.Background(), rs...).FirstErr(), "client %d", c)
		})
	}
	wg.Wait()
	for c := range clients {
		topic := fmt.Sprintf("large-%d", c)
		got := consume(t, srv.Addr, topic, records)
		next := map[int32]int{}
		seen := map[int]bool{}
		for _, r := range got {
			var cc, i int
			_, err := fmt.Sscanf(string(r.Value), "%d-%06d|", &cc, &i)
			require.NoError(t, err)
			require.Equal(t, c, cc, "a record of client %d in %s", cc, topic)
			require.Equal(t, bytes.Repeat([]byte(fmt.Sprintf("%d-%06d|", c, i)), valueBytes/10), r.Value, "%s record %d", topic, i)
			require.Greater(t, i+1, next[r.Partition], "order in %s-%d", topic, r.Partition)
			next[r.Partition] = i + 1
			seen[i] = true
		}
		require.Len(t, seen, records, topic)
	}
}
