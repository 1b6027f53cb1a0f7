package server_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// Kafka's codes the internal topics' refusals answer.
const (
	codeUnknownTopicOrPartition  int16 = 3
	codeInvalidTopic             int16 = 17
	codeTopicAuthorizationFailed int16 = 29
	codeTopicAlreadyExists       int16 = 36
	codeOperationNotAttempted    int16 = 55
)

// TestInternalTopicsRefuseClients: a client may write to and delete from
// no internal topic. Each API that writes or deletes, on
// __consumer_offsets and __transaction_state, answers Kafka's code
// (INVALID_TOPIC_EXCEPTION, as Kafka's ReplicaManager refuses a Produce or
// a DeleteRecords of an internal topic; TOPIC_AUTHORIZATION_FAILED for an
// AddPartitionsToTxn, as Kafka's KafkaApis refuses a client's; the
// creation of one that exists TOPIC_ALREADY_EXISTS), validate-only
// requests too, and changes nothing: after a restart the group's commit is
// there and the transaction open before the requests commits, its
// partition's last stable offset moving to its end. DeleteRecords on
// __consumer_offsets erased every group's commits at the next restart,
// and on __transaction_state during a transaction stalled read_committed
// readers for good.
func TestInternalTopicsRefuseClients(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "data", 1)
	ctx := context.Background()

	// A group's commit in __consumer_offsets.
	require.Zero(t, offsetCommitCode(t, cl, "g", "data", 42))

	// An open transaction in __transaction_state, with two records in
	// data-0.
	initTxn := func(id string) (int64, int16) {
		t.Helper()
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60_000
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode)
		return resp.ProducerID, resp.ProducerEpoch
	}
	addPartitions := func(id string, pid int64, epoch int16, topics map[string]int32) map[string]int16 {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		for topic, p := range topics {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{p}
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		out := map[string]int16{}
		for _, rt := range resp.Topics {
			out[rt.Topic] = rt.Partitions[0].ErrorCode
		}
		return out
	}
	pid, epoch := initTxn("tx")
	require.Equal(t, map[string]int16{"data": 0}, addPartitions("tx", pid, epoch, map[string]int32{"data": 0}))
	require.Zero(t, produceCode(t, cl, "tx", "data", 0, txnBatch(t, pid, epoch, 0, 2)))
	otherPID, otherEpoch := initTxn("tx-other")

	internal := []string{"__consumer_offsets", "__transaction_state"}
	type extent struct{ start, end int64 }
	extents := func() map[string]extent {
		out := map[string]extent{}
		for _, name := range internal {
			l, err := srv.Dir.Partition(name, 0)
			require.NoError(t, err)
			out[name] = extent{l.LogStartOffset(), l.LogEndOffset()}
		}
		return out
	}
	before := extents()

	for _, name := range internal {
		id := topicIDOf(t, cl, name)
		for _, tc := range []struct {
			api  string
			want int16
			call func(t *testing.T) int16
		}{
			{"Produce acks=1", codeInvalidTopic, func(t *testing.T) int16 { return produceAcks(t, cl, "", 1, name, 0, valueBatch(t, "x")) }},
			{"Produce acks=all", codeInvalidTopic, func(t *testing.T) int16 { return produceAcks(t, cl, "", -1, name, 0, valueBatch(t, "x")) }},
			{"DeleteRecords to the high watermark", codeInvalidTopic, func(t *testing.T) int16 { return deleteRecordsCode(t, cl, name, -1) }},
			{"DeleteRecords to offset 1", codeInvalidTopic, func(t *testing.T) int16 { return deleteRecordsCode(t, cl, name, 1) }},
			{"DeleteRecords past the end", codeInvalidTopic, func(t *testing.T) int16 { return deleteRecordsCode(t, cl, name, 1<<40) }},
			{"DeleteTopics by name", codeInvalidTopic, func(t *testing.T) int16 {
				req := kmsg.NewPtrDeleteTopicsRequest()
				dt := kmsg.NewDeleteTopicsRequestTopic()
				dt.Topic = kmsg.StringPtr(name)
				req.Topics, req.TopicNames = append(req.Topics, dt), []string{name}
				resp, err := req.RequestWith(ctx, cl)
				require.NoError(t, err)
				return resp.Topics[0].ErrorCode
			}},
			{"DeleteTopics by id", codeInvalidTopic, func(t *testing.T) int16 {
				req := kmsg.NewPtrDeleteTopicsRequest()
				dt := kmsg.NewDeleteTopicsRequestTopic()
				dt.TopicID = id
				req.Topics = append(req.Topics, dt)
				resp, err := req.RequestWith(ctx, cl)
				require.NoError(t, err)
				return resp.Topics[0].ErrorCode
			}},
			{"CreatePartitions", codeInvalidTopic, func(t *testing.T) int16 { return createPartitionsCode(t, cl, name, 4, false) }},
			{"CreatePartitions validate-only", codeInvalidTopic, func(t *testing.T) int16 { return createPartitionsCode(t, cl, name, 4, true) }},
			{"CreateTopics", codeTopicAlreadyExists, func(t *testing.T) int16 { return createTopicsCode(t, cl, name, false) }},
			{"CreateTopics validate-only", codeTopicAlreadyExists, func(t *testing.T) int16 { return createTopicsCode(t, cl, name, true) }},
			{"IncrementalAlterConfigs", codeInvalidTopic, func(t *testing.T) int16 { return alterConfigsCode(t, cl, name, false) }},
			{"IncrementalAlterConfigs validate-only", codeInvalidTopic, func(t *testing.T) int16 { return alterConfigsCode(t, cl, name, true) }},
			{"AddPartitionsToTxn", codeTopicAuthorizationFailed, func(t *testing.T) int16 {
				got := addPartitions("tx-other", otherPID, otherEpoch, map[string]int32{name: 0, "data": 0})
				require.Equal(t, codeOperationNotAttempted, got["data"], "the other partitions are not added")
				return got[name]
			}},
		} {
			t.Run(name+"/"+tc.api, func(t *testing.T) {
				require.Equal(t, tc.want, tc.call(t))
			})
		}
	}
	assert.Equal(t, before, extents(), "no internal topic changed") // what follows shows the harm

	// Internal names not created: CreateTopics refuses them, and a
	// Metadata request does not auto-create them.
	assert.Equal(t, codeInvalidTopic, createTopicsCode(t, cl, "__share_group_state", false))
	assert.Equal(t, codeInvalidTopic, createTopicsCode(t, cl, "__share_group_state", true))
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("__share_group_state")
	meta.Topics, meta.AllowAutoTopicCreation = append(meta.Topics, mt), true
	mresp, err := meta.RequestWith(ctx, cl)
	require.NoError(t, err)
	assert.Equal(t, codeUnknownTopicOrPartition, mresp.Topics[0].ErrorCode)
	assert.NotContains(t, srv.Dir.Topics(), "__share_group_state")

	srv.Restart(t)
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = "g"
	ofresp, err := of.RequestWith(ctx, cl)
	require.NoError(t, err)
	if assert.Len(t, ofresp.Topics, 1, "the group's commit survives") {
		assert.Equal(t, int64(42), ofresp.Topics[0].Partitions[0].Offset)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "tx", pid, epoch, true
	eresp, err := end.RequestWith(ctx, cl)
	require.NoError(t, err)
	assert.Zero(t, eresp.ErrorCode, "the transaction survives")
	l, err := srv.Dir.Partition("data", 0)
	require.NoError(t, err)
	require.Equal(t, int64(3), l.LastStableOffset(), "the last stable offset moves past the marker")
	require.Len(t, consume(t, srv.Addr, "data", 2, kgo.FetchIsolationLevel(kgo.ReadCommitted())), 2)
}

func topicIDOf(t *testing.T, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	require.Zero(t, resp.Topics[0].ErrorCode)
	return resp.Topics[0].TopicID
}

func deleteRecordsCode(t *testing.T, cl *kgo.Client, topic string, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 10_000
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != 0 {
		require.Equal(t, int64(-1), got.LowWatermark, "a refusal answers no low watermark, as Kafka's")
	}
	return got.ErrorCode
}

func createPartitionsCode(t *testing.T, cl *kgo.Client, topic string, count int32, validate bool) int16 {
	t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, count
	req.Topics, req.ValidateOnly, req.TimeoutMillis = append(req.Topics, rt), validate, 10_000
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Topics[0].ErrorCode
}

func createTopicsCode(t *testing.T, cl *kgo.Client, topic string, validate bool) int16 {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics, req.ValidateOnly, req.TimeoutMillis = append(req.Topics, rt), validate, 10_000
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Topics[0].ErrorCode
}

func alterConfigsCode(t *testing.T, cl *kgo.Client, topic string, validate bool) int16 {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for k, v := range map[string]string{"cleanup.policy": "delete", "retention.ms": "1"} {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rr.Configs = append(rr.Configs, c)
	}
	req.Resources, req.ValidateOnly = append(req.Resources, rr), validate
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Resources[0].ErrorCode
}
