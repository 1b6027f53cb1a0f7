package server_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestManualReplicaAssignments: CreateTopics and CreatePartitions with
// explicit replica assignments naming this broker are served as Kafka's
// controller serves them on a cluster of one broker (each partition on
// that broker), and every assignment Kafka refuses is refused with its
// code and message, the topic left as it was.
func TestManualReplicaAssignments(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	ctx := context.Background()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	node := meta.Brokers[0].NodeID

	create := func(topic string, parts int32, rf int16, assign map[int32][]int32, order ...int32) kmsg.CreateTopicsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, parts, rf
		for _, p := range order {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, assign[p]
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		req.Topics = []kmsg.CreateTopicsRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Len(t, resp.Topics, 1)
		return resp.Topics[0]
	}
	partitions := func(topic string) int {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = &topic
		req.Topics = []kmsg.MetadataRequestTopic{mt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		if resp.Topics[0].ErrorCode != 0 {
			return 0
		}
		for _, p := range resp.Topics[0].Partitions {
			require.Equal(t, []int32{node}, p.Replicas)
			require.Equal(t, node, p.Leader)
		}
		return len(resp.Topics[0].Partitions)
	}

	got := create("assigned", -1, -1, map[int32][]int32{0: {node}, 1: {node}, 2: {node}}, 2, 0, 1)
	require.Zero(t, got.ErrorCode, "%v", got.ErrorMessage)
	require.Equal(t, int32(3), got.NumPartitions)
	require.Equal(t, int16(1), got.ReplicationFactor)
	require.Equal(t, 3, partitions("assigned"))

	other := node + 1
	for _, tc := range []struct {
		name   string
		parts  int32
		rf     int16
		assign map[int32][]int32
		order  []int32
		code   int16
		msg    string
	}{
		{"replication factor set", -1, 1, map[int32][]int32{0: {node}}, []int32{0}, 42,
			"A manual partition assignment was specified, but replication factor was not set to -1."},
		{"partitions set", 1, -1, map[int32][]int32{0: {node}}, []int32{0}, 42,
			"A manual partition assignment was specified, but numPartitions was not set to -1."},
		{"empty replicas", -1, -1, map[int32][]int32{0: {}}, []int32{0}, 39,
			"The manual partition assignment includes an empty replica list."},
		{"unknown broker", -1, -1, map[int32][]int32{0: {other}}, []int32{0}, 39,
			"The manual partition assignment includes broker " + itoa(other) + ", but no such broker is registered."},
		{"broker twice", -1, -1, map[int32][]int32{0: {node, node}}, []int32{0}, 39,
			"The manual partition assignment includes the broker " + itoa(node) + " more than once."},
		{"partition twice", -1, -1, map[int32][]int32{0: {node}}, []int32{0, 0}, 39,
			"Found multiple manual partition assignments for partition 0"},
		{"gap", -1, -1, map[int32][]int32{0: {node}, 2: {node}}, []int32{0, 2}, 39,
			"partitions should be a consecutive 0-based integer sequence"},
		{"not from 0", -1, -1, map[int32][]int32{1: {node}}, []int32{1}, 39,
			"partitions should be a consecutive 0-based integer sequence"},
	} {
		got := create("refused", tc.parts, tc.rf, tc.assign, tc.order...)
		require.Equal(t, tc.code, got.ErrorCode, tc.name)
		require.NotNil(t, got.ErrorMessage, tc.name)
		require.Equal(t, tc.msg, *got.ErrorMessage, tc.name)
		require.Zero(t, partitions("refused"), tc.name)
	}
	// A name taken is refused as such, before the assignment is looked at.
	require.Equal(t, int16(36), create("assigned", -1, -1, map[int32][]int32{0: {other}}, 0).ErrorCode)

	grow := func(count int32, assign ...[]int32) kmsg.CreatePartitionsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "assigned", count
		for _, r := range assign {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = r
			rt.Assignment = append(rt.Assignment, a)
		}
		req.Topics = []kmsg.CreatePartitionsRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Len(t, resp.Topics, 1)
		return resp.Topics[0]
	}
	for _, tc := range []struct {
		name   string
		count  int32
		assign [][]int32
		msg    string
	}{
		{"too few", 5, [][]int32{{node}}, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."},
		{"unknown broker", 4, [][]int32{{other}}, "The manual partition assignment includes broker " + itoa(other) + ", but no such broker is registered."},
		{"two replicas", 4, [][]int32{{node, other}}, "The manual partition assignment includes broker " + itoa(other) + ", but no such broker is registered."},
		{"empty", 4, [][]int32{{}}, "The manual partition assignment includes an empty replica list."},
	} {
		got := grow(tc.count, tc.assign...)
		require.Equal(t, int16(39), got.ErrorCode, tc.name)
		require.NotNil(t, got.ErrorMessage, tc.name)
		require.Equal(t, tc.msg, *got.ErrorMessage, tc.name)
		require.Equal(t, 3, partitions("assigned"), tc.name)
	}
	res := grow(5, []int32{node}, []int32{node})
	require.Zero(t, res.ErrorCode, "%v", res.ErrorMessage)
	require.Equal(t, 5, partitions("assigned"))
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
