package server

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A manual replica assignment (CreateTopics' ReplicaAssignment,
// CreatePartitions' Assignment) is checked as Kafka's controller checks
// it; the brokers registered are this server's one node. A valid
// assignment on one broker names that broker once per partition, so the
// partitions it creates are the ones kafkalite creates without it.

// assignmentError is a refused manual assignment: INVALID_REPLICA_ASSIGNMENT
// or, for the fields that must be -1 beside one, INVALID_REQUEST; the
// message is Kafka's.
type assignmentError struct {
	code int16
	msg  string
}

func (e *assignmentError) Error() string { return e.msg }

func invalidAssignment(format string, args ...any) *assignmentError {
	return &assignmentError{code: errInvalidReplicaAssignment, msg: fmt.Sprintf(format, args...)}
}

// checkReplicas checks one partition's replicas: not empty, each broker
// registered, none twice, and as many as want (the previous partitions'
// count, or the topic's; 0 when there is none yet).
func (s *Server) checkReplicas(replicas []int32, want int) *assignmentError {
	if len(replicas) == 0 {
		return invalidAssignment("The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Sorted(slices.Values(replicas))
	for i, b := range sorted {
		if !s.isBroker(b) {
			return invalidAssignment("The manual partition assignment includes broker %d, but no such broker is registered.", b)
		}
		if i > 0 && sorted[i-1] == b {
			return invalidAssignment("The manual partition assignment includes the broker %d more than once.", b)
		}
	}
	if want > 0 && len(replicas) != want {
		return invalidAssignment("The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), want)
	}
	return nil
}

// topicAssignment checks a CreateTopics topic's manual assignment, as
// Kafka's controller does, and returns the partition count it asks for.
func (s *Server) topicAssignment(t kmsg.CreateTopicsRequestTopic) (int32, *assignmentError) {
	if t.ReplicationFactor != -1 {
		return 0, &assignmentError{code: errInvalidRequest, msg: "A manual partition assignment was specified, but replication factor was not set to -1."}
	}
	if t.NumPartitions != -1 {
		return 0, &assignmentError{code: errInvalidRequest, msg: "A manual partition assignment was specified, but numPartitions was not set to -1."}
	}
	seen := make(map[int32]bool, len(t.ReplicaAssignment))
	want := 0
	for _, a := range t.ReplicaAssignment {
		if seen[a.Partition] {
			return 0, invalidAssignment("Found multiple manual partition assignments for partition %d", a.Partition)
		}
		seen[a.Partition] = true
		if err := s.checkReplicas(a.Replicas, want); err != nil {
			return 0, err
		}
		want = len(a.Replicas)
	}
	for p := range int32(len(seen)) {
		if !seen[p] {
			return 0, invalidAssignment("partitions should be a consecutive 0-based integer sequence")
		}
	}
	return int32(len(seen)), nil
}

// partitionsAssignment checks a CreatePartitions topic's manual
// assignment of the partitions it adds to a topic of have partitions,
// each on one replica.
func (s *Server) partitionsAssignment(t kmsg.CreatePartitionsRequestTopic, have int32) *assignmentError {
	if add := t.Count - have; int(add) != len(t.Assignment) {
		return invalidAssignment("Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(t.Assignment))
	}
	for _, a := range t.Assignment {
		if err := s.checkReplicas(a.Replicas, s.replicationFactorOf(t.Topic)); err != nil {
			return err
		}
	}
	return nil
}
