package server

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Partition reassignment (KIP-455) as Kafka 4.4's controller answers it.
// On one broker every partition's only replica is this broker, so the one
// valid target, this broker alone, is the current assignment and completes
// at once (Kafka's controller writes no change for it). On a cluster of
// virtual brokers a target becomes the partition's replica set at once:
// one directory holds the data, so there is nothing to copy and no
// reassignment is ever in progress; a leader not in the target gives way
// to the target's first running replica, in a new leader epoch, as
// Kafka's controller moves it when the reassignment completes.

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
					break
				}
				if s.cluster == nil {
					break // this broker alone: the assignment already
				}
				if have := s.replicationFactorOf(t.Topic); !req.AllowReplicationFactorChange && len(p.Replicas) != have {
					code, msg = errInvalidReplicationFactor, fmt.Sprintf("The replication factor is changed from %d to %d", have, len(p.Replicas))
					break
				}
				if err := s.cluster.reassign(t.Topic, p.Partition, p.Replicas); err != nil {
					code, msg = codeOf(err), err.Error()
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
