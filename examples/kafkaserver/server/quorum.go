package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeQuorum (KIP-595, KIP-853) as a KRaft quorum of one voter, this
// node, answers it in combined mode (broker and controller in one
// process): the node leads the metadata partition, __cluster_metadata-0,
// and no observer follows it. kafkalite keeps its metadata (topics,
// configurations, ACLs) in the directory's own files, not in a Raft log,
// and holds no election, so it gives for the log what Kafka gives for an
// unknown offset and for the first election:
const (
	// metadataTopic is KRaft's metadata partition's topic; its partition is 0.
	metadataTopic = "__cluster_metadata"
	// quorumLeaderEpoch is the epoch the one voter leads in: the first,
	// as it never loses an election.
	quorumLeaderEpoch = 1
	// quorumNoOffset is the high watermark and the voter's log end
	// offset: -1, Kafka's value for an offset not known (there is no
	// metadata log).
	quorumNoOffset = -1
)

// handleDescribeQuorum answers as Kafka's KafkaRaftClient: a request that
// does not name exactly __cluster_metadata's partition 0 gets
// UNKNOWN_TOPIC_OR_PARTITION for each partition it names; otherwise the
// leader (this node), its epoch, the high watermark, and the one voter
// (this node, its directory.id from v2, its timestamps now from v1, as
// Kafka stamps the leader's own state). v2's Nodes give the voter's
// endpoint: the listener the server serves (named as Kafka names a
// listener of its security protocol), where it answers DescribeQuorum.
func (s *Server) handleDescribeQuorum(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeQuorumRequest)
	resp := kmsg.NewPtrDescribeQuorumResponse()
	if len(req.Topics) != 1 || req.Topics[0].Topic != metadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		msg := "This server does not host this topic-partition."
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeQuorumResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeQuorumResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, errUnknownTopicOrPartition, &msg
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	node, host, port := s.broker(ctx)
	now := s.now().UnixMilli()
	voter := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	voter.ReplicaID, voter.ReplicaDirectoryID = node, topicID(s.dir.DirectoryID())
	voter.LogEndOffset = quorumNoOffset
	voter.LastFetchTimestamp, voter.LastCaughtUpTimestamp = now, now
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = node, quorumLeaderEpoch, quorumNoOffset
	rp.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{voter}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic, rt.Partitions = metadataTopic, []kmsg.DescribeQuorumResponseTopicPartition{rp}
	resp.Topics = []kmsg.DescribeQuorumResponseTopic{rt}
	n := kmsg.NewDescribeQuorumResponseNode()
	l := kmsg.NewDescribeQuorumResponseNodeListener()
	l.Name, l.Host, l.Port = s.listenerName(ctx), host, uint16(port)
	n.NodeID, n.Listeners = node, []kmsg.DescribeQuorumResponseNodeListener{l}
	resp.Nodes = []kmsg.DescribeQuorumResponseNode{n}
	return resp, nil
}

// listenerName is the name of the listener a request came in on (the
// first listener's for a request without a connection), as Kafka names
// the endpoint a client reached.
func (s *Server) listenerName(ctx context.Context) string {
	if st := stateOf(ctx); st != nil && st.listener != nil {
		return st.listener.Name
	}
	if lns := s.Listeners(); len(lns) > 0 {
		return lns[0].Name
	}
	return string(Plaintext)
}
