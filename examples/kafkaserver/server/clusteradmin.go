package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The cluster administration of a one-broker, one-directory server:
// DescribeLogDirs, AlterReplicaLogDirs, ElectLeaders and
// DescribeTopicPartitions, answered as a Kafka 4.4 broker with one log
// directory and every partition's only replica answers them.

// logDirPath is the directory's path as Kafka reports a log.dirs entry:
// absolute (on the operating system's filesystem).
func (s *Server) logDirPath() string {
	p := s.dir.Path()
	if s.dir.Config().FS == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return p
}

// handleDescribeLogDirs lists the one directory: each partition asked
// (every partition when Topics is null) with its size on disk, offset lag
// 0 (the leader's log is the only one) and no future log; v4+ the
// filesystem's total and usable bytes (-1 for a directory in memory).
// Partitions the directory does not hold are left out, as Kafka leaves
// them out.
func (s *Server) handleDescribeLogDirs(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	d := kmsg.NewDescribeLogDirsResponseDir()
	d.Dir = s.logDirPath()
	d.TotalBytes, d.UsableBytes = -1, -1
	if s.dir.Config().FS == nil {
		d.TotalBytes, d.UsableBytes = diskSpace(d.Dir)
	}
	var wanted map[string]map[int32]bool // nil: all
	if req.Topics != nil {
		wanted = map[string]map[int32]bool{}
		for _, t := range req.Topics {
			if wanted[t.Topic] == nil {
				wanted[t.Topic] = map[int32]bool{}
			}
			for _, p := range t.Partitions {
				wanted[t.Topic][p] = true
			}
		}
	}
	for _, name := range s.dir.Topics() {
		if wanted != nil && wanted[name] == nil {
			continue
		}
		td, err := s.dir.DescribeTopic(name)
		if err != nil {
			continue // deleted meanwhile
		}
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = name
		for p := range td.Partitions {
			if wanted != nil && !wanted[name][p] {
				continue
			}
			l, err := s.dir.Partition(name, p)
			if err != nil {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition, dp.Size = p, l.Stats().Size
			dt.Partitions = append(dt.Partitions, dp)
		}
		if len(dt.Partitions) > 0 {
			d.Topics = append(d.Topics, dt)
		}
	}
	resp.Dirs = []kmsg.DescribeLogDirsResponseDir{d}
	return resp, nil
}

// handleAlterReplicaLogDirs answers a move to the one directory as Kafka
// answers a move of a replica to the directory it is in (NONE: nothing to
// move), and a move to any other path LOG_DIR_NOT_FOUND, as Kafka answers
// a directory not among its log.dirs.
func (s *Server) handleAlterReplicaLogDirs(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterReplicaLogDirsRequest)
	resp := kmsg.NewPtrAlterReplicaLogDirsResponse()
	here := s.logDirPath()
	for _, d := range req.Dirs {
		code := errNone
		if filepath.Clean(d.Dir) != here {
			code = errLogDirNotFound
		}
		for _, t := range d.Topics {
			rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp, nil
}

// ElectLeaders' election types (v1+).
const (
	electionPreferred = 0
	electionUnclean   = 1
)

// handleElectLeaders answers as Kafka's controller answers for partitions
// whose leader is already their preferred replica and alive:
// ELECTION_NOT_NEEDED for each partition named, UNKNOWN_TOPIC_OR_PARTITION
// for one that does not exist; with Topics null (every partition) the
// answer lists none, as Kafka leaves out the partitions that needed no
// election. An election type other than preferred or unclean answers
// INVALID_REQUEST.
func (s *Server) handleElectLeaders(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ElectLeadersRequest)
	resp := kmsg.NewPtrElectLeadersResponse()
	if req.Version >= 1 && req.ElectionType != electionPreferred && req.ElectionType != electionUnclean {
		resp.ErrorCode = errInvalidRequest
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		td, err := s.dir.DescribeTopic(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition = p
			switch {
			case err != nil || p < 0 || p >= td.Partitions:
				rp.ErrorCode = errUnknownTopicOrPartition
			default:
				rp.ErrorCode = errElectionNotNeeded
			}
			msg := fmt.Sprintf("%s-%d: %s", t.Topic, p, errorName(rp.ErrorCode))
			rp.ErrorMessage = &msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func errorName(code int16) string {
	switch code {
	case errElectionNotNeeded:
		return "leader election not needed: the partition's only replica leads it"
	case errUnknownTopicOrPartition:
		return "this server does not host this topic-partition"
	}
	return fmt.Sprintf("error %d", code)
}

// handleDescribeTopicPartitions answers DescribeTopicPartitions (KIP-966,
// what kafka-topics --describe sends in Kafka 4): the topics named (every
// topic when none is), sorted by name, from the cursor on, at most
// min(ResponsePartitionLimit, Config.MaxRequestPartitionSizeLimit)
// partitions (at least 1), and the cursor of the first partition left out.
// A topic named that does not exist answers UNKNOWN_TOPIC_OR_PARTITION; a
// cursor whose topic is not among those named, or whose partition is
// negative, INVALID_REQUEST for every topic named, as Kafka answers.
func (s *Server) handleDescribeTopicPartitions(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	var cursorTopic string
	var cursorPartition int32
	if req.Cursor != nil {
		cursorTopic, cursorPartition = req.Cursor.Topic, req.Cursor.Partition
	}
	var names []string
	if len(req.Topics) == 0 {
		names = s.dir.Topics()
	} else {
		for _, t := range req.Topics {
			if !slices.Contains(names, t.Topic) {
				names = append(names, t.Topic)
			}
		}
	}
	if req.Cursor != nil && (cursorPartition < 0 || len(req.Topics) > 0 && !slices.Contains(names, cursorTopic)) {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			name := t.Topic
			rt.Topic, rt.ErrorCode = &name, errInvalidRequest
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n < cursorTopic })
	slices.Sort(names)
	limit := max(1, min(int(req.ResponsePartitionLimit), s.cfg.MaxRequestPartitionSizeLimit))
	node := s.dir.NodeID()
	for _, name := range names {
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic = &name
		td, err := s.dir.DescribeTopic(name)
		if err != nil {
			if len(req.Topics) > 0 { // a topic deleted meanwhile is left out of "every topic"
				rt.ErrorCode = codeOf(err)
				resp.Topics = append(resp.Topics, rt)
			}
			continue
		}
		if limit == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			break
		}
		rt.TopicID, rt.IsInternal = topicID(td.ID), td.Internal
		first := int32(0)
		if name == cursorTopic {
			first = cursorPartition
		}
		for p := first; p < td.Partitions; p++ {
			if limit == 0 {
				resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: p}
				break
			}
			rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
			rp.Partition, rp.LeaderID, rp.LeaderEpoch = p, node, s.leaderEpoch(name, p)
			rp.Replicas, rp.ISR = []int32{node}, []int32{node}
			rp.EligibleLeaderReplicas, rp.LastKnownELR, rp.OfflineReplicas = []int32{}, []int32{}, []int32{}
			rt.Partitions = append(rt.Partitions, rp)
			limit--
		}
		resp.Topics = append(resp.Topics, rt)
		if resp.NextCursor != nil {
			break
		}
	}
	return resp, nil
}
