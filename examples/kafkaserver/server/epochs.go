package server

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// Kafka's error codes of the CurrentLeaderEpoch check.
const (
	errFencedLeaderEpoch  int16 = 74 // the client's epoch is older than the partition's
	errUnknownLeaderEpoch int16 = 75 // the client's epoch is newer than the partition's
)

// handleOffsetForLeaderEpoch answers OffsetForLeaderEpoch (KIP-101, KIP-320)
// as Kafka's broker does (KafkaApis.handleOffsetForLeaderEpochRequest,
// ReplicaManager.lastOffsetForLeaderEpoch): per partition, the largest
// epoch at or below the one asked and where it ends, from
// [log.Log.EndOffsetForEpoch]. This one broker leads every partition, so
// every ReplicaID is served alike (Kafka too answers followers (≥ 0),
// consumers (-1) and debugging clients (-2, and every request before v3)
// from the leader alone).
func (s *Server) handleOffsetForLeaderEpoch(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, s.epochEndOffset(t.Topic, p))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// epochEndOffset answers one partition of an OffsetForLeaderEpoch. An
// error leaves the epoch and the end offset at -1, as Kafka's answer does;
// so does an epoch the log cannot place (without an error).
func (s *Server) epochEndOffset(topic string, p kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
	rp.Partition = p.Partition
	l, err := s.dir.Partition(topic, p.Partition)
	if err != nil {
		rp.ErrorCode = codeOf(err)
		return rp
	}
	if rp.ErrorCode = checkLeaderEpoch(l, p.CurrentLeaderEpoch); rp.ErrorCode != errNone {
		return rp
	}
	epoch, end, err := l.EndOffsetForEpoch(p.LeaderEpoch)
	if err != nil {
		rp.ErrorCode = codeOf(err)
		return rp
	}
	rp.LeaderEpoch, rp.EndOffset = epoch, end
	return rp
}

// checkLeaderEpoch compares a request's CurrentLeaderEpoch with the
// partition's leader epoch as Kafka's Partition.checkCurrentLeaderEpoch
// does: -1 (also what requests without the field carry) checks nothing; an
// older epoch is fenced (the client must refresh its metadata), a newer
// one unknown (this broker lags the metadata the client saw).
func checkLeaderEpoch(l *log.Log, current int32) int16 {
	switch leader := l.LeaderEpoch(); {
	case current == -1 || current == leader:
		return errNone
	case current < leader:
		return errFencedLeaderEpoch
	}
	return errUnknownLeaderEpoch
}

// leaderEpoch is the leader epoch of a partition for Metadata (v7+), -1
// if the partition is gone.
func (s *Server) leaderEpoch(topic string, partition int32) int32 {
	l, err := s.dir.Partition(topic, partition)
	if err != nil {
		return -1
	}
	return l.LeaderEpoch()
}
