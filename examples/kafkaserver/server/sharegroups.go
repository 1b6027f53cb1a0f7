package server

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
)

// KIP-932's share groups: ShareGroupHeartbeat and ShareGroupDescribe are
// calls of the group coordinator (package coordinator), which keeps the
// membership and assigns the partitions; the offsets APIs read and set the
// share-partitions' start offsets (package log/share) through it. ShareFetch
// and ShareAcknowledge are in sharefetch.go.

// authorizedOperationsOmitted is Kafka's INT32_MIN: the authorized
// operations were not asked for or not computed.
const authorizedOperationsOmitted int32 = -2147483648

func (s *Server) handleShareGroupHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupHeartbeatRequest)
	resp := kmsg.NewPtrShareGroupHeartbeatResponse()
	clientID, clientHost := "", ""
	if st := stateOf(ctx); st != nil {
		clientID, clientHost = st.clientID, st.clientHost
	}
	hb := coordinator.ShareHeartbeat{GroupID: req.GroupID, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch,
		RackID: req.RackID, SubscribedTopicNames: req.SubscribedTopicNames, ClientID: clientID, ClientHost: clientHost}
	coord, err := s.coordinator(ctx)
	var res coordinator.ShareHeartbeatResult
	if err == nil {
		res, err = coord.ShareGroupHeartbeat(ctx, hb)
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = groupCode(err), messageOf(err)
		return resp, nil
	}
	if req.MemberEpoch == coordinator.LeaveEpoch {
		// The coordinator gave the member's records back; its share
		// session ends with its membership.
		s.shareSessions.closeMember(req.GroupID, req.MemberID)
	}
	resp.MemberID = &res.MemberID
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval.Milliseconds())
	if res.Assignment != nil {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		a.TopicPartitions = make([]kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition, 0, len(res.Assignment))
		for _, tp := range res.Assignment {
			t := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
			a.TopicPartitions = append(a.TopicPartitions, t)
		}
		resp.Assignment = &a
	}
	return resp, nil
}

func (s *Server) handleShareGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupDescribeRequest)
	resp := kmsg.NewPtrShareGroupDescribeResponse()
	coord, cerr := s.coordinator(ctx)
	for _, id := range req.GroupIDs {
		g := kmsg.NewShareGroupDescribeResponseGroup()
		g.GroupID = id
		g.AuthorizedOperations = authorizedOperationsOmitted // as ConsumerGroupDescribe answers
		err := cerr
		var d coordinator.ShareGroupDescription
		if err == nil {
			d, err = coord.DescribeShareGroup(id)
		}
		if err != nil {
			g.ErrorCode, g.ErrorMessage = groupCode(err), messageOf(err)
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.GroupState, g.GroupEpoch, g.AssignmentEpoch, g.Assignor = string(d.State), d.GroupEpoch, d.AssignmentEpoch, d.AssignorName
		for _, m := range d.Members {
			gm := kmsg.NewShareGroupDescribeResponseGroupMember()
			gm.MemberID, gm.MemberEpoch, gm.ClientID, gm.ClientHost = m.MemberID, m.MemberEpoch, m.ClientID, m.ClientHost
			gm.RackID = optString(m.RackID)
			gm.SubscribedTopicNames = m.SubscribedTopicNames
			if gm.SubscribedTopicNames == nil {
				gm.SubscribedTopicNames = []string{}
			}
			gm.Assignment.TopicPartitions = make([]kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition, 0, len(m.Assignment))
			for _, tp := range m.Assignment {
				t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
				t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
				if name, ok := s.topicByID(tp.TopicID); ok {
					t.Topic = name
				}
				gm.Assignment.TopicPartitions = append(gm.Assignment.TopicPartitions, t)
			}
			g.Members = append(g.Members, gm)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// topicIDOf is a topic's wire id, zero when the topic does not exist.
func (s *Server) topicIDOf(name string) [16]byte {
	td, err := s.dir.DescribeTopic(name)
	if err != nil {
		return [16]byte{}
	}
	return topicID(td.ID)
}

func (s *Server) handleDescribeShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
	resp := kmsg.NewPtrDescribeShareGroupOffsetsResponse()
	coord, cerr := s.coordinator(ctx)
	var mgr *share.PartitionManager
	if cerr == nil {
		mgr, cerr = share.Partitions(ctx, s.dir)
	}
	for _, rg := range req.Groups {
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID = rg.GroupID
		err := cerr
		if err == nil {
			_, err = coord.DescribeShareGroup(rg.GroupID)
		}
		if err != nil {
			g.ErrorCode, g.ErrorMessage = groupCode(err), messageOf(err)
			resp.Groups = append(resp.Groups, g)
			continue
		}
		var tps []log.TopicPartition
		unknown := map[string]bool{}
		for _, t := range rg.Topics {
			if _, err := s.dir.DescribeTopic(t.Topic); err != nil {
				unknown[t.Topic] = true
			}
			for _, p := range t.Partitions {
				tps = append(tps, log.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		if rg.Topics == nil {
			tps = nil // every partition the group has a state for
		} else if tps == nil {
			tps = []log.TopicPartition{}
		}
		var topic *kmsg.DescribeShareGroupOffsetsResponseGroupTopic
		for _, po := range mgr.Offsets(rg.GroupID, tps) {
			if topic == nil || topic.Topic != po.Topic {
				t := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
				t.Topic, t.TopicID = po.Topic, s.topicIDOf(po.Topic)
				g.Topics = append(g.Topics, t)
				topic = &g.Topics[len(g.Topics)-1]
			}
			p := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
			p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag = po.Partition, po.StartOffset, po.LeaderEpoch, po.Lag
			if unknown[po.Topic] {
				p.ErrorCode = errUnknownTopicOrPartition
			} else if _, err := s.dir.Partition(po.Topic, po.Partition); err != nil {
				p.ErrorCode, p.ErrorMessage = codeOf(err), messageOf(err)
			}
			topic.Partitions = append(topic.Partitions, p)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

func (s *Server) handleAlterShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	resp := kmsg.NewPtrAlterShareGroupOffsetsResponse()
	offsets := map[coordinator.TopicPartition]int64{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			offsets[coordinator.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.StartOffset
		}
	}
	coord, err := s.coordinator(ctx)
	var res map[coordinator.TopicPartition]error
	if err == nil {
		res, err = coord.AlterShareGroupOffsets(ctx, req.GroupID, offsets)
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = groupCode(err), messageOf(err)
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, s.topicIDOf(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			perr := res[coordinator.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			rp.ErrorCode, rp.ErrorMessage = shareOffsetCode(perr), messageOf(perr)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleDeleteShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteShareGroupOffsetsRequest)
	resp := kmsg.NewPtrDeleteShareGroupOffsetsResponse()
	topics := make([]string, 0, len(req.Topics))
	for _, t := range req.Topics {
		topics = append(topics, t.Topic)
	}
	coord, err := s.coordinator(ctx)
	var res map[string]error
	if err == nil {
		res, err = coord.DeleteShareGroupOffsets(ctx, req.GroupID, topics)
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = groupCode(err), messageOf(err)
		return resp, nil
	}
	for _, name := range topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = name, s.topicIDOf(name)
		terr := res[name]
		rt.ErrorCode, rt.ErrorMessage = shareOffsetCode(terr), messageOf(terr)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// shareOffsetCode is a partition's or topic's code in the share offsets
// APIs: a start offset the share-partition manager refuses (a negative
// one) is INVALID_REQUEST.
func shareOffsetCode(err error) int16 {
	if err != nil && errors.Is(err, share.ErrInvalidRequest) {
		return errInvalidRequest
	}
	return codeOf(err)
}
