package server

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partition reassignment (KIP-455) as Kafka 4.4's controller answers it on
// a cluster of one broker: every partition's only replica is this broker,
// so the one valid target, this broker alone, is the current assignment
// and completes at once (Kafka's controller writes no change for it), and
// no reassignment is ever in progress.

// errNoReassignmentInProgress is NO_REASSIGNMENT_IN_PROGRESS: a
// cancellation (null replicas) of a partition not being reassigned.
const errNoReassignmentInProgress int16 = 85

// handleAlterPartitionAssignments answers each partition as Kafka's
// ReplicationControlManager does: an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION, a cancellation NO_REASSIGNMENT_IN_PROGRESS,
// a target checked as a manual assignment (empty, a broker not
// registered, a broker twice: INVALID_REPLICA_ASSIGNMENT), each with
// Kafka's message. A valid target is this broker alone, the partition's
// replica set already, so its replication factor does not change either
// (v1's AllowReplicationFactorChange has nothing to refuse).
func (s *Server) handleAlterPartitionAssignments(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	resp.AllowReplicationFactorChange = req.AllowReplicationFactorChange
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		td, terr := s.dir.DescribeTopic(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			var code int16
			var msg string
			switch {
			case terr != nil:
				code, msg = errUnknownTopicOrPartition, "Unable to find a topic named "+t.Topic+"."
			case p.Partition < 0 || p.Partition >= int32(td.Partitions):
				code, msg = errUnknownTopicOrPartition, fmt.Sprintf("Unable to find partition %s:%d.", t.Topic, p.Partition)
			case p.Replicas == nil:
				code, msg = errNoReassignmentInProgress, "No partition reassignment is in progress."
			default:
				if err := s.checkReplicas(p.Replicas, 0); err != nil {
					code, msg = err.code, err.msg
				}
			}
			if code != errNone {
				rp.ErrorCode, rp.ErrorMessage = code, &msg
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// handleListPartitionReassignments lists the reassignments in progress:
// none, whichever topics are asked (Kafka leaves out the topics it does
// not know and the partitions not being reassigned).
func (s *Server) handleListPartitionReassignments(_ context.Context, _ kmsg.Request) (kmsg.Response, error) {
	return kmsg.NewPtrListPartitionReassignmentsResponse(), nil
}
