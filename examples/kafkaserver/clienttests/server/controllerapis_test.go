package server_test

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestPartitionReassignmentOneBroker: AlterPartitionAssignments at both
// versions answers each partition as Kafka's controller does on a
// cluster of one broker (this broker alone: done; anything else refused
// with Kafka's code and message), and ListPartitionReassignments lists
// none, for every topic or those named.
func TestPartitionReassignmentOneBroker(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "t", 2)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()

	type want struct {
		code int16
		msg  string
	}
	cases := []struct {
		topic     string
		partition int32
		replicas  []int32
		want      want
	}{
		{"t", 0, []int32{0}, want{}},
		{"t", 1, []int32{0}, want{}},
		{"t", 1, []int32{1}, want{kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker 1, but no such broker is registered."}},
		{"t", 1, []int32{0, 0}, want{kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes the broker 0 more than once."}},
		{"t", 1, []int32{0, 2}, want{kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker 2, but no such broker is registered."}},
		{"t", 1, []int32{}, want{kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."}},
		{"t", 0, nil, want{kerr.NoReassignmentInProgress.Code, "No partition reassignment is in progress."}},
		{"t", 2, []int32{0}, want{kerr.UnknownTopicOrPartition.Code, "Unable to find partition t:2."}},
		{"t", -1, []int32{0}, want{kerr.UnknownTopicOrPartition.Code, "Unable to find partition t:-1."}},
		{"absent", 0, []int32{0}, want{kerr.UnknownTopicOrPartition.Code, "Unable to find a topic named absent."}},
	}
	for v := int16(0); v <= 1; v++ {
		req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
		req.AllowReplicationFactorChange = v == 0 // v1 may ask to keep it
		for _, tc := range cases {
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			rp.Partition, rp.Replicas = tc.partition, tc.replicas
			rt.Topic, rt.Partitions = tc.topic, []kmsg.AlterPartitionAssignmentsRequestTopicPartition{rp}
			req.Topics = append(req.Topics, rt)
		}
		resp := versionedRequest(t, c, req, v).(*kmsg.AlterPartitionAssignmentsResponse)
		require.Zero(t, resp.ErrorCode)
		require.Nil(t, resp.ErrorMessage)
		require.Len(t, resp.Topics, len(cases))
		for i, tc := range cases {
			rp := resp.Topics[i].Partitions[0]
			got := want{code: rp.ErrorCode}
			if rp.ErrorMessage != nil {
				got.msg = *rp.ErrorMessage
			}
			require.Equal(t, tc.topic, resp.Topics[i].Topic)
			require.Equal(t, tc.partition, rp.Partition)
			require.Equal(t, tc.want, got, "v%d %s-%d %v", v, tc.topic, tc.partition, tc.replicas)
		}
	}

	for _, topics := range [][]kmsg.ListPartitionReassignmentsRequestTopic{nil, {{Topic: "t", Partitions: []int32{0, 1}}, {Topic: "absent", Partitions: []int32{0}}}} {
		req := kmsg.NewPtrListPartitionReassignmentsRequest()
		req.Topics = topics
		resp := versionedRequest(t, c, req, 0).(*kmsg.ListPartitionReassignmentsResponse)
		require.Zero(t, resp.ErrorCode)
		require.Empty(t, resp.Topics)
	}
	// The data stayed where it was: the topic still has its partitions.
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(context.Background(), cl)
	require.NoError(t, err)
	for _, mt := range md.Topics {
		if *mt.Topic == "t" {
			require.Len(t, mt.Partitions, 2)
			for _, p := range mt.Partitions {
				require.Equal(t, []int32{0}, p.Replicas)
			}
		}
	}
}

// TestDescribeQuorumOneVoter: at every version, the quorum is this node
// alone, leading epoch 1, with no metadata log offsets (-1); v1 stamps
// the voter's fetch and catch-up times, v2 gives its directory id and
// endpoint. A request for another partition is answered
// UNKNOWN_TOPIC_OR_PARTITION per partition.
func TestDescribeQuorumOneVoter(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	host, port := splitHostPort(t, srv.Addr)
	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = "__cluster_metadata"
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
		req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
		resp := versionedRequest(t, c, req, v).(*kmsg.DescribeQuorumResponse)
		require.Zero(t, resp.ErrorCode)
		require.Len(t, resp.Topics, 1)
		require.Equal(t, "__cluster_metadata", resp.Topics[0].Topic)
		p := resp.Topics[0].Partitions[0]
		require.Zero(t, p.ErrorCode)
		require.Equal(t, int32(0), p.LeaderID)
		require.Equal(t, int32(1), p.LeaderEpoch)
		require.Equal(t, int64(-1), p.HighWatermark)
		require.Empty(t, p.Observers)
		require.Len(t, p.CurrentVoters, 1)
		voter := p.CurrentVoters[0]
		require.Equal(t, int32(0), voter.ReplicaID)
		require.Equal(t, int64(-1), voter.LogEndOffset)
		if v >= 1 {
			require.Positive(t, voter.LastFetchTimestamp)
			require.Equal(t, voter.LastFetchTimestamp, voter.LastCaughtUpTimestamp)
		}
		if v >= 2 {
			require.NotEqual(t, [16]byte{}, voter.ReplicaDirectoryID, "the directory.id of meta.properties")
			require.Len(t, resp.Nodes, 1)
			require.Equal(t, int32(0), resp.Nodes[0].NodeID)
			require.Equal(t, []kmsg.DescribeQuorumResponseNodeListener{{Name: "PLAINTEXT", Host: host, Port: port}}, resp.Nodes[0].Listeners)
		}

		other := kmsg.NewPtrDescribeQuorumRequest()
		ot := kmsg.NewDescribeQuorumRequestTopic()
		op := kmsg.NewDescribeQuorumRequestTopicPartition()
		op.Partition = 1
		ot.Topic, ot.Partitions = "__cluster_metadata", []kmsg.DescribeQuorumRequestTopicPartition{op}
		other.Topics = []kmsg.DescribeQuorumRequestTopic{ot}
		oresp := versionedRequest(t, c, other, v).(*kmsg.DescribeQuorumResponse)
		require.Zero(t, oresp.ErrorCode)
		require.Equal(t, int32(1), oresp.Topics[0].Partitions[0].Partition)
		require.Equal(t, kerr.UnknownTopicOrPartition.Code, oresp.Topics[0].Partitions[0].ErrorCode)
	}
}

// TestListConfigResources: v1 lists the groups with a configuration of
// their own, the broker and every topic (each type alone when asked);
// v0 and a request for client metrics list none; a type v0 does not
// allow answers UNSUPPORTED_VERSION.
func TestListConfigResources(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "b", 1)
	createTopic(t, cl, "a", 1)
	ctx := context.Background()
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ar := kmsg.NewIncrementalAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "configured"
	ac := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "consumer.session.timeout.ms", kmsg.StringPtr("50000")
	ar.Configs = append(ar.Configs, ac)
	alter.Resources = append(alter.Resources, ar)
	aresp, err := alter.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, aresp.Resources[0].ErrorCode)

	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	list := func(v int16, types ...kmsg.ConfigResourceType) (int16, []string) {
		req := kmsg.NewPtrListConfigResourcesRequest()
		for _, ty := range types {
			req.ResourceTypes = append(req.ResourceTypes, int8(ty))
		}
		resp := versionedRequest(t, c, req, v).(*kmsg.ListConfigResourcesResponse)
		var got []string
		for _, r := range resp.ConfigResources {
			got = append(got, kmsg.ConfigResourceType(r.Type).String()+":"+r.Name)
		}
		return resp.ErrorCode, got
	}
	code, got := list(1)
	require.Zero(t, code)
	require.Equal(t, []string{"GROUP_CONFIG:configured", "BROKER:0", "TOPIC:a", "TOPIC:b"}, got)
	code, got = list(1, kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeGroupConfig)
	require.Zero(t, code)
	require.Equal(t, []string{"GROUP_CONFIG:configured", "TOPIC:a", "TOPIC:b"}, got, "Kafka's order, whatever the request's")
	for _, only := range []kmsg.ConfigResourceType{kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeBrokerLogger} {
		code, got = list(1, only)
		require.Zero(t, code)
		require.Empty(t, got)
	}
	code, got = list(1, kmsg.ConfigResourceType(3))
	require.Equal(t, kerr.UnsupportedVersion.Code, code)
	require.Empty(t, got)
	code, got = list(0)
	require.Zero(t, code)
	require.Empty(t, got, "v0 lists client metrics only")

	// A group whose overrides are all deleted has no configuration.
	ac.Value = nil
	alter.Resources[0].Configs[0].Op = kmsg.IncrementalAlterConfigOpDelete
	aresp, err = alter.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, aresp.Resources[0].ErrorCode)
	_, got = list(1, kmsg.ConfigResourceTypeGroupConfig)
	require.Empty(t, got)
}

// splitHostPort splits a loopback address as the server advertises it.
func splitHostPort(t *testing.T, addr string) (string, uint16) {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	require.NoError(t, err)
	return ap.Addr().String(), ap.Port()
}
