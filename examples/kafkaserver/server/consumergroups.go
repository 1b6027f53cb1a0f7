package server

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log/coordinator"
)

// KIP-848's consumer groups: ConsumerGroupHeartbeat and
// ConsumerGroupDescribe, each one call of the group coordinator (see
// package coordinator), which computes the assignments.

func (s *Server) handleConsumerGroupHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	clientID, clientHost := "", ""
	if st := stateOf(ctx); st != nil {
		clientID, clientHost = st.clientID, st.clientHost
	}
	hb := coordinator.ConsumerHeartbeat{GroupID: req.Group, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch,
		InstanceID: req.InstanceID, RackID: req.RackID, RebalanceTimeout: -1, SubscribedTopicNames: req.SubscribedTopicNames,
		SubscribedTopicRegex: req.SubscribedTopicRegex, ServerAssignor: req.ServerAssignor, ClientID: clientID, ClientHost: clientHost}
	if req.RebalanceTimeoutMillis >= 0 {
		hb.RebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.Topics != nil {
		hb.OwnedPartitions = make([]coordinator.TopicPartitions, 0, len(req.Topics))
		for _, t := range req.Topics {
			hb.OwnedPartitions = append(hb.OwnedPartitions, coordinator.TopicPartitions{TopicID: t.TopicID, Partitions: t.Partitions})
		}
	}
	coord, err := s.coordinator(ctx)
	var res coordinator.ConsumerHeartbeatResult
	if err == nil {
		res, err = coord.ConsumerGroupHeartbeat(ctx, hb)
	}
	if err != nil {
		resp.ErrorCode = groupCode(err)
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp, nil
	}
	resp.MemberID = &res.MemberID
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval.Milliseconds())
	if res.Assignment != nil {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, tp := range res.Assignment {
			t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
			a.Topics = append(a.Topics, t)
		}
		if a.Topics == nil {
			a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
		}
		resp.Assignment = &a
	}
	return resp, nil
}

func (s *Server) handleConsumerGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	resp := kmsg.NewPtrConsumerGroupDescribeResponse()
	coord, cerr := s.coordinator(ctx)
	for _, id := range req.Groups {
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group = id
		g.AuthorizedOperations = -2147483648 // not computed
		err := cerr
		var d coordinator.ConsumerGroupDescription
		if err == nil {
			d, err = coord.DescribeConsumerGroup(id)
		}
		if err != nil {
			g.ErrorCode = groupCode(err)
			msg := err.Error()
			g.ErrorMessage = &msg
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.State, g.Epoch, g.AssignmentEpoch, g.AssignorName = string(d.State), d.GroupEpoch, d.AssignmentEpoch, d.AssignorName
		for _, m := range d.Members {
			gm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			gm.MemberID, gm.MemberEpoch, gm.ClientID, gm.ClientHost = m.MemberID, m.MemberEpoch, m.ClientID, m.ClientHost
			gm.InstanceID, gm.RackID = optString(m.InstanceID), optString(m.RackID)
			gm.SubscribedTopics, gm.SubscribedTopicRegex = m.SubscribedTopicNames, optString(m.SubscribedTopicRegex)
			if gm.SubscribedTopics == nil {
				gm.SubscribedTopics = []string{}
			}
			gm.Assignment, gm.TargetAssignment = s.describedAssignment(m.Assignment), s.describedAssignment(m.TargetAssignment)
			gm.MemberType = 1 // a member of the consumer protocol
			g.Members = append(g.Members, gm)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// describedAssignment is an assignment as ConsumerGroupDescribe gives it,
// each topic by id and name.
func (s *Server) describedAssignment(tps []coordinator.TopicPartitions) kmsg.Assignment {
	a := kmsg.NewAssignment()
	a.TopicPartitions = []kmsg.AssignmentTopicPartition{}
	for _, tp := range tps {
		t := kmsg.NewAssignmentTopicPartition()
		t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
		if name, ok := s.topicByID(tp.TopicID); ok {
			t.Topic = name
		}
		a.TopicPartitions = append(a.TopicPartitions, t)
	}
	return a
}

// optString is s, nil when empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
