package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// The routing of a cluster of virtual brokers (cluster.go): each request
// is checked against the broker its connection reached, as Kafka's
// brokers check them. A partition the broker does not lead is answered
// NOT_LEADER_OR_FOLLOWER with its leader (KIP-951's CurrentLeader and the
// leader's endpoint in Produce v10+ and Fetch v12+/v16+), and taken out of
// the request before its handler sees it; a Produce with acks=0 that names
// one closes its connection, as Kafka's broker closes it so that the
// client refreshes its metadata. A group or transactional id the broker
// does not coordinate is answered NOT_COORDINATOR. The answers that
// describe the cluster are given its brokers, leaders and replicas.

// route checks req against the broker it came to: a response to answer
// instead of handling it, or a function that completes the handler's
// response; an error closes the connection. Nothing on a server of one
// broker.
func (s *Server) route(ctx context.Context, req kmsg.Request) (kmsg.Response, func(kmsg.Response), error) {
	c := s.cluster
	if c == nil {
		return nil, nil, nil
	}
	me := s.brokerOf(ctx)
	notHere := func(kind int8, key string) bool { return c.coordinatorOf(kind, key) != me }
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		return s.routeProduce(me, r)
	case *kmsg.FetchRequest:
		return nil, s.routeFetch(me, r), nil
	case *kmsg.ListOffsetsRequest:
		return nil, s.routeListOffsets(me, r), nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return nil, s.routeEpochs(me, r), nil
	case *kmsg.DeleteRecordsRequest:
		return nil, s.routeDeleteRecords(me, r), nil
	case *kmsg.MetadataRequest:
		return nil, func(resp kmsg.Response) { s.clusterMetadata(resp.(*kmsg.MetadataResponse)) }, nil
	case *kmsg.DescribeClusterRequest:
		return nil, func(resp kmsg.Response) { s.clusterDescribe(r, resp.(*kmsg.DescribeClusterResponse)) }, nil
	case *kmsg.DescribeTopicPartitionsRequest:
		return nil, func(resp kmsg.Response) { s.clusterTopicPartitions(resp.(*kmsg.DescribeTopicPartitionsResponse)) }, nil
	case *kmsg.FindCoordinatorRequest:
		return nil, func(resp kmsg.Response) { s.clusterCoordinator(r, resp.(*kmsg.FindCoordinatorResponse)) }, nil
	case *kmsg.ElectLeadersRequest:
		return s.electLeaders(r), nil, nil
	case *kmsg.CreateTopicsRequest:
		return nil, s.routeCreateTopics(r), nil
	case *kmsg.CreatePartitionsRequest:
		return nil, s.routeCreatePartitions(r), nil
	case *kmsg.ListGroupsRequest:
		return nil, func(resp kmsg.Response) {
			lr := resp.(*kmsg.ListGroupsResponse)
			lr.Groups = slices.DeleteFunc(lr.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return notHere(coordinatorKeyTypeGroup, g.Group) })
		}, nil
	case *kmsg.DescribeGroupsRequest:
		return nil, routeGroups(&r.Groups, func(g string) bool { return notHere(coordinatorKeyTypeGroup, g) },
			func(resp kmsg.Response, moved []string) {
				dr := resp.(*kmsg.DescribeGroupsResponse)
				for _, g := range moved {
					rg := kmsg.NewDescribeGroupsResponseGroup()
					rg.Group, rg.ErrorCode = g, errNotCoordinator
					dr.Groups = append(dr.Groups, rg)
				}
			}), nil
	case *kmsg.DeleteGroupsRequest:
		return nil, routeGroups(&r.Groups, func(g string) bool { return notHere(coordinatorKeyTypeGroup, g) },
			func(resp kmsg.Response, moved []string) {
				dr := resp.(*kmsg.DeleteGroupsResponse)
				for _, g := range moved {
					rg := kmsg.NewDeleteGroupsResponseGroup()
					rg.Group, rg.ErrorCode = g, errNotCoordinator
					dr.Groups = append(dr.Groups, rg)
				}
			}), nil
	case *kmsg.ConsumerGroupDescribeRequest:
		return nil, routeGroups(&r.Groups, func(g string) bool { return notHere(coordinatorKeyTypeGroup, g) },
			func(resp kmsg.Response, moved []string) {
				dr := resp.(*kmsg.ConsumerGroupDescribeResponse)
				for _, g := range moved {
					rg := kmsg.NewConsumerGroupDescribeResponseGroup()
					rg.Group, rg.ErrorCode = g, errNotCoordinator
					dr.Groups = append(dr.Groups, rg)
				}
			}), nil
	case *kmsg.ShareGroupDescribeRequest:
		return nil, routeGroups(&r.GroupIDs, func(g string) bool { return notHere(coordinatorKeyTypeGroup, g) },
			func(resp kmsg.Response, moved []string) {
				dr := resp.(*kmsg.ShareGroupDescribeResponse)
				for _, g := range moved {
					rg := kmsg.NewShareGroupDescribeResponseGroup()
					rg.GroupID, rg.ErrorCode = g, errNotCoordinator
					dr.Groups = append(dr.Groups, rg)
				}
			}), nil
	case *kmsg.DescribeShareGroupOffsetsRequest:
		var moved []string
		r.Groups = slices.DeleteFunc(r.Groups, func(g kmsg.DescribeShareGroupOffsetsRequestGroup) bool {
			if notHere(coordinatorKeyTypeGroup, g.GroupID) {
				moved = append(moved, g.GroupID)
				return true
			}
			return false
		})
		if len(moved) == 0 {
			return nil, nil, nil
		}
		return nil, func(resp kmsg.Response) {
			dr := resp.(*kmsg.DescribeShareGroupOffsetsResponse)
			for _, g := range moved {
				rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
				rg.GroupID, rg.ErrorCode = g, errNotCoordinator
				dr.Groups = append(dr.Groups, rg)
			}
		}, nil
	case *kmsg.ListTransactionsRequest:
		return nil, func(resp kmsg.Response) {
			lr := resp.(*kmsg.ListTransactionsResponse)
			lr.TransactionStates = slices.DeleteFunc(lr.TransactionStates, func(t kmsg.ListTransactionsResponseTransactionState) bool {
				return notHere(coordinatorKeyTypeTransaction, t.TransactionalID)
			})
		}, nil
	}
	// The requests of one group or one transactional id.
	group := func(g string) (kmsg.Response, func(kmsg.Response), error) {
		if !notHere(coordinatorKeyTypeGroup, g) {
			return nil, nil, nil
		}
		return notCoordinator(req), nil, nil
	}
	txn := func(id string) (kmsg.Response, func(kmsg.Response), error) {
		if !notHere(coordinatorKeyTypeTransaction, id) {
			return nil, nil, nil
		}
		return notCoordinator(req), nil, nil
	}
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return group(r.Group)
	case *kmsg.SyncGroupRequest:
		return group(r.Group)
	case *kmsg.HeartbeatRequest:
		return group(r.Group)
	case *kmsg.LeaveGroupRequest:
		return group(r.Group)
	case *kmsg.OffsetCommitRequest:
		return group(r.Group)
	case *kmsg.OffsetDeleteRequest:
		return group(r.Group)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		return group(r.Group)
	case *kmsg.ShareGroupHeartbeatRequest:
		return group(r.GroupID)
	case *kmsg.AlterShareGroupOffsetsRequest:
		return group(r.GroupID)
	case *kmsg.DeleteShareGroupOffsetsRequest:
		return group(r.GroupID)
	case *kmsg.TxnOffsetCommitRequest:
		return group(r.Group)
	case *kmsg.OffsetFetchRequest:
		if r.Version < 8 {
			return group(r.Group)
		}
		for _, g := range r.Groups {
			if notHere(coordinatorKeyTypeGroup, g.Group) {
				return notCoordinator(req), nil, nil
			}
		}
	case *kmsg.InitProducerIDRequest:
		if r.TransactionalID != nil {
			return txn(*r.TransactionalID)
		}
	case *kmsg.AddPartitionsToTxnRequest:
		if r.Version < 4 {
			return txn(r.TransactionalID)
		}
		// Kafka's broker-to-coordinator form: each transaction another
		// broker coordinates is answered NOT_COORDINATOR for every
		// partition, the others handled.
		var moved []kmsg.AddPartitionsToTxnResponseTransaction
		r.Transactions = slices.DeleteFunc(r.Transactions, func(tx kmsg.AddPartitionsToTxnRequestTransaction) bool {
			if !notHere(coordinatorKeyTypeTransaction, tx.TransactionalID) {
				return false
			}
			rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
			rt.TransactionalID = tx.TransactionalID
			for _, t := range tx.Topics {
				tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
				tt.Topic = t.Topic
				for _, p := range t.Partitions {
					tp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
					tp.Partition, tp.ErrorCode = p, errNotCoordinator
					tt.Partitions = append(tt.Partitions, tp)
				}
				rt.Topics = append(rt.Topics, tt)
			}
			moved = append(moved, rt)
			return true
		})
		if len(moved) > 0 {
			return nil, func(resp kmsg.Response) {
				ar := resp.(*kmsg.AddPartitionsToTxnResponse)
				ar.Transactions = append(ar.Transactions, moved...)
			}, nil
		}
	case *kmsg.AddOffsetsToTxnRequest:
		return txn(r.TransactionalID)
	case *kmsg.EndTxnRequest:
		return txn(r.TransactionalID)
	}
	return nil, nil, nil
}

// routeGroups takes the groups another broker coordinates out of a
// request naming several (Kafka's coordinators answer each
// NOT_COORDINATOR), and returns the completion that adds their answers
// with add; nil when every group is the broker's.
func routeGroups(groups *[]string, notHere func(string) bool, add func(kmsg.Response, []string)) func(kmsg.Response) {
	var moved []string
	*groups = slices.DeleteFunc(*groups, func(g string) bool {
		if notHere(g) {
			moved = append(moved, g)
			return true
		}
		return false
	})
	if len(moved) == 0 {
		return nil
	}
	return func(resp kmsg.Response) { add(resp, moved) }
}

// notCoordinator is req's answer of NOT_COORDINATOR.
func notCoordinator(req kmsg.Request) kmsg.Response {
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.JoinGroupResponse:
		r.ErrorCode, r.Generation = errNotCoordinator, -1
		pt := req.(*kmsg.JoinGroupRequest).ProtocolType
		r.ProtocolType = &pt
	case *kmsg.SyncGroupResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.HeartbeatResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.LeaveGroupResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.OffsetDeleteResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.ConsumerGroupHeartbeatResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.ShareGroupHeartbeatResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.AlterShareGroupOffsetsResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.DeleteShareGroupOffsetsResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.InitProducerIDResponse:
		r.ErrorCode, r.ProducerID, r.ProducerEpoch = errNotCoordinator, -1, -1
	case *kmsg.AddOffsetsToTxnResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.EndTxnResponse:
		r.ErrorCode = errNotCoordinator
	case *kmsg.OffsetCommitResponse:
		for _, t := range req.(*kmsg.OffsetCommitRequest).Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errNotCoordinator
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.TxnOffsetCommitResponse:
		for _, t := range req.(*kmsg.TxnOffsetCommitRequest).Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errNotCoordinator
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.AddPartitionsToTxnResponse:
		for _, t := range req.(*kmsg.AddPartitionsToTxnRequest).Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, errNotCoordinator
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.OffsetFetchResponse:
		fr := req.(*kmsg.OffsetFetchRequest)
		if fr.Version < 8 {
			r.ErrorCode = errNotCoordinator
			break
		}
		for _, g := range fr.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, errNotCoordinator
			r.Groups = append(r.Groups, rg)
		}
	}
	return resp
}

// leaderHere is the state of a partition and whether broker me may serve
// it: a partition the directory does not have is left to the handler.
func (c *cluster) leaderHere(me int32, topic string, p int32) (partitionState, bool) {
	ps, ok := c.partition(topic, p)
	return ps, !ok || ps.leader == me
}

// endpoints are the brokers among leaders that are alive, for KIP-951's
// NodeEndpoints.
func (c *cluster) endpoints(leaders []int32) []kmsg.MetadataResponseBroker {
	slices.Sort(leaders)
	var out []kmsg.MetadataResponseBroker
	for _, id := range slices.Compact(leaders) {
		if host, port, ok := c.brokerAddr(id); ok {
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID, b.Host, b.Port = id, host, port
			out = append(out, b)
		}
	}
	return out
}

func (s *Server) routeProduce(me int32, r *kmsg.ProduceRequest) (kmsg.Response, func(kmsg.Response), error) {
	type moved struct {
		ti int
		rp kmsg.ProduceResponseTopicPartition
	}
	var out []moved
	var leaders []int32
	for ti := range r.Topics {
		t := &r.Topics[ti]
		name := t.Topic
		if r.Version >= 13 {
			var ok bool
			if name, ok = s.topicByID(t.TopicID); !ok {
				continue
			}
		}
		t.Partitions = slices.DeleteFunc(t.Partitions, func(p kmsg.ProduceRequestTopicPartition) bool {
			ps, here := s.cluster.leaderHere(me, name, p.Partition)
			if here {
				return false
			}
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = p.Partition, errNotLeaderOrFollower, -1, -1, -1
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = ps.leader, ps.epoch
			out = append(out, moved{ti, rp})
			leaders = append(leaders, ps.leader)
			return true
		})
	}
	if len(out) == 0 {
		return nil, nil, nil
	}
	if r.Acks == 0 {
		return nil, nil, fmt.Errorf("%w: a Produce with acks=0 names partitions broker %d does not lead", errCloseConn, me)
	}
	topics := r.Topics
	return nil, func(resp kmsg.Response) {
		pr := resp.(*kmsg.ProduceResponse)
		for _, m := range out {
			t := topics[m.ti]
			i := slices.IndexFunc(pr.Topics, func(rt kmsg.ProduceResponseTopic) bool { return rt.Topic == t.Topic && rt.TopicID == t.TopicID })
			if i < 0 {
				rt := kmsg.NewProduceResponseTopic()
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
				pr.Topics = append(pr.Topics, rt)
				i = len(pr.Topics) - 1
			}
			pr.Topics[i].Partitions = append(pr.Topics[i].Partitions, m.rp)
		}
		for _, b := range s.cluster.endpoints(leaders) {
			pr.Brokers = append(pr.Brokers, kmsg.ProduceResponseBroker{NodeID: b.NodeID, Host: b.Host, Port: b.Port})
		}
	}, nil
}

// routeFetch takes the partitions me does not lead out of a Fetch; their
// answers follow the topics with record slices (as authorization's
// refusals do). A Fetch with such a partition answers at once, as Kafka's
// delayed fetch completes on a partition's error.
func (s *Server) routeFetch(me int32, r *kmsg.FetchRequest) func(kmsg.Response) {
	var moved []kmsg.FetchResponseTopic
	var leaders []int32
	for ti := range r.Topics {
		t := &r.Topics[ti]
		name := t.Topic
		if r.Version >= 13 {
			var ok bool
			if name, ok = s.topicByID(t.TopicID); !ok {
				continue
			}
		}
		var rt *kmsg.FetchResponseTopic
		t.Partitions = slices.DeleteFunc(t.Partitions, func(p kmsg.FetchRequestTopicPartition) bool {
			ps, here := s.cluster.leaderHere(me, name, p.Partition)
			if here {
				return false
			}
			if rt == nil {
				moved = append(moved, kmsg.NewFetchResponseTopic())
				rt = &moved[len(moved)-1]
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
			}
			rp := newFetchPartition(p.Partition)
			rp.ErrorCode = errNotLeaderOrFollower
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = ps.leader, ps.epoch
			rt.Partitions = append(rt.Partitions, rp)
			leaders = append(leaders, ps.leader)
			return true
		})
	}
	if len(moved) == 0 {
		return nil
	}
	r.MaxWaitMillis = 0
	r.Topics = slices.DeleteFunc(r.Topics, func(t kmsg.FetchRequestTopic) bool { return len(t.Partitions) == 0 })
	return func(resp kmsg.Response) {
		fr := resp.(*kmsg.FetchResponse)
		fr.Topics = append(fr.Topics, moved...)
		for _, b := range s.cluster.endpoints(leaders) {
			fr.Brokers = append(fr.Brokers, kmsg.FetchResponseBroker{NodeID: b.NodeID, Host: b.Host, Port: b.Port})
		}
	}
}

func (s *Server) routeListOffsets(me int32, r *kmsg.ListOffsetsRequest) func(kmsg.Response) {
	var moved []kmsg.ListOffsetsResponseTopic
	for ti := range r.Topics {
		t := &r.Topics[ti]
		var rt *kmsg.ListOffsetsResponseTopic
		t.Partitions = slices.DeleteFunc(t.Partitions, func(p kmsg.ListOffsetsRequestTopicPartition) bool {
			if _, here := s.cluster.leaderHere(me, t.Topic, p.Partition); here {
				return false
			}
			if rt == nil {
				moved = append(moved, kmsg.NewListOffsetsResponseTopic())
				rt = &moved[len(moved)-1]
				rt.Topic = t.Topic
			}
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.Timestamp, rp.Offset, rp.LeaderEpoch = p.Partition, errNotLeaderOrFollower, -1, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			return true
		})
	}
	if len(moved) == 0 {
		return nil
	}
	return func(resp kmsg.Response) {
		lr := resp.(*kmsg.ListOffsetsResponse)
		for _, m := range moved {
			if i := slices.IndexFunc(lr.Topics, func(rt kmsg.ListOffsetsResponseTopic) bool { return rt.Topic == m.Topic }); i >= 0 {
				lr.Topics[i].Partitions = append(lr.Topics[i].Partitions, m.Partitions...)
			} else {
				lr.Topics = append(lr.Topics, m)
			}
		}
	}
}

func (s *Server) routeEpochs(me int32, r *kmsg.OffsetForLeaderEpochRequest) func(kmsg.Response) {
	var moved []kmsg.OffsetForLeaderEpochResponseTopic
	for ti := range r.Topics {
		t := &r.Topics[ti]
		var rt *kmsg.OffsetForLeaderEpochResponseTopic
		t.Partitions = slices.DeleteFunc(t.Partitions, func(p kmsg.OffsetForLeaderEpochRequestTopicPartition) bool {
			if _, here := s.cluster.leaderHere(me, t.Topic, p.Partition); here {
				return false
			}
			if rt == nil {
				moved = append(moved, kmsg.NewOffsetForLeaderEpochResponseTopic())
				rt = &moved[len(moved)-1]
				rt.Topic = t.Topic
			}
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, errNotLeaderOrFollower, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			return true
		})
	}
	if len(moved) == 0 {
		return nil
	}
	return func(resp kmsg.Response) {
		er := resp.(*kmsg.OffsetForLeaderEpochResponse)
		for _, m := range moved {
			if i := slices.IndexFunc(er.Topics, func(rt kmsg.OffsetForLeaderEpochResponseTopic) bool { return rt.Topic == m.Topic }); i >= 0 {
				er.Topics[i].Partitions = append(er.Topics[i].Partitions, m.Partitions...)
			} else {
				er.Topics = append(er.Topics, m)
			}
		}
	}
}

func (s *Server) routeDeleteRecords(me int32, r *kmsg.DeleteRecordsRequest) func(kmsg.Response) {
	var moved []kmsg.DeleteRecordsResponseTopic
	for ti := range r.Topics {
		t := &r.Topics[ti]
		var rt *kmsg.DeleteRecordsResponseTopic
		t.Partitions = slices.DeleteFunc(t.Partitions, func(p kmsg.DeleteRecordsRequestTopicPartition) bool {
			if _, here := s.cluster.leaderHere(me, t.Topic, p.Partition); here {
				return false
			}
			if rt == nil {
				moved = append(moved, kmsg.NewDeleteRecordsResponseTopic())
				rt = &moved[len(moved)-1]
				rt.Topic = t.Topic
			}
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.LowWatermark = p.Partition, errNotLeaderOrFollower, -1
			rt.Partitions = append(rt.Partitions, rp)
			return true
		})
	}
	if len(moved) == 0 {
		return nil
	}
	return func(resp kmsg.Response) {
		dr := resp.(*kmsg.DeleteRecordsResponse)
		for _, m := range moved {
			if i := slices.IndexFunc(dr.Topics, func(rt kmsg.DeleteRecordsResponseTopic) bool { return rt.Topic == m.Topic }); i >= 0 {
				dr.Topics[i].Partitions = append(dr.Topics[i].Partitions, m.Partitions...)
			} else {
				dr.Topics = append(dr.Topics, m)
			}
		}
	}
}

// controller is the controller id the cluster reports: its lowest broker
// alive (Kafka's brokers report one of the brokers, the controllers being
// hidden from clients); -1 when none is.
func (c *cluster) controller() int32 {
	if a := c.alive(); len(a) > 0 {
		return a[0]
	}
	return -1
}

func (s *Server) clusterMetadata(resp *kmsg.MetadataResponse) {
	c := s.cluster
	resp.Brokers = c.endpoints(c.alive())
	resp.ControllerID = c.controller()
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		if t.ErrorCode != errNone || t.Topic == nil {
			continue
		}
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			ps, ok := c.partition(*t.Topic, p.Partition)
			if !ok {
				continue
			}
			p.Leader, p.LeaderEpoch, p.Replicas, p.ISR, p.OfflineReplicas = ps.leader, ps.epoch, ps.replicas, ps.isr, ps.offline
			if ps.leader < 0 {
				p.ErrorCode = errLeaderNotAvailable
			}
		}
	}
}

func (s *Server) clusterDescribe(req *kmsg.DescribeClusterRequest, resp *kmsg.DescribeClusterResponse) {
	c := s.cluster
	resp.ControllerID = c.controller()
	resp.Brokers = resp.Brokers[:0]
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range c.ids {
		b := c.brokers[id]
		if b.host == "" || b.stopped && !req.IncludeFencedBrokers {
			continue
		}
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID, rb.Host, rb.Port, rb.IsFenced = id, b.host, b.port, b.stopped
		resp.Brokers = append(resp.Brokers, rb)
	}
}

func (s *Server) clusterTopicPartitions(resp *kmsg.DescribeTopicPartitionsResponse) {
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		if t.ErrorCode != errNone || t.Topic == nil {
			continue
		}
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			ps, ok := s.cluster.partition(*t.Topic, p.Partition)
			if !ok {
				continue
			}
			p.LeaderID, p.LeaderEpoch, p.Replicas, p.ISR, p.OfflineReplicas = ps.leader, ps.epoch, ps.replicas, ps.isr, ps.offline
			if ps.leader < 0 {
				p.ErrorCode = errLeaderNotAvailable
			}
		}
	}
}

// clusterCoordinator gives each coordinator found the broker leading its
// partition; COORDINATOR_NOT_AVAILABLE while that partition is offline.
func (s *Server) clusterCoordinator(req *kmsg.FindCoordinatorRequest, resp *kmsg.FindCoordinatorResponse) {
	c := s.cluster
	locate := func(key string, code *int16, node *int32, host *string, port *int32) {
		if *code != errNone {
			return
		}
		id := c.coordinatorOf(req.CoordinatorType, key)
		h, p, ok := c.brokerAddr(id)
		if !ok {
			*code, *node, *host, *port = errCoordinatorNotAvailable, -1, "", -1
			return
		}
		*node, *host, *port = id, h, p
	}
	if req.Version >= 4 {
		for i := range resp.Coordinators {
			co := &resp.Coordinators[i]
			locate(co.Key, &co.ErrorCode, &co.NodeID, &co.Host, &co.Port)
		}
		return
	}
	locate(req.CoordinatorKey, &resp.ErrorCode, &resp.NodeID, &resp.Host, &resp.Port)
}

// electLeaders answers ElectLeaders as Kafka's controller does: a
// preferred election makes each partition's first replica its leader
// (ELECTION_NOT_NEEDED if it leads already, PREFERRED_LEADER_NOT_AVAILABLE
// if it is stopped); an unclean one elects a replica alive for a partition
// without a leader (ELECTION_NOT_NEEDED if it has one,
// ELIGIBLE_LEADERS_NOT_AVAILABLE if no replica is alive). With Topics
// null (every partition) the answer lists only the partitions elected.
func (s *Server) electLeaders(req *kmsg.ElectLeadersRequest) kmsg.Response {
	c := s.cluster
	resp := kmsg.NewPtrElectLeadersResponse()
	if req.Version >= 1 && req.ElectionType != electionPreferred && req.ElectionType != electionUnclean {
		resp.ErrorCode = errInvalidRequest
		return resp
	}
	all := req.Topics == nil
	topics := req.Topics
	if all {
		for _, name := range s.dir.Topics() {
			td, err := s.dir.DescribeTopic(name)
			if err != nil {
				continue
			}
			t := kmsg.NewElectLeadersRequestTopic()
			t.Topic = name
			for p := range td.Partitions {
				t.Partitions = append(t.Partitions, p)
			}
			topics = append(topics, t)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	for _, t := range topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition = p
			ps, ok := c.partitionLocked(t.Topic, p)
			var msg string
			switch {
			case !ok:
				rp.ErrorCode, msg = errUnknownTopicOrPartition, "The partition does not exist."
			case req.ElectionType == electionUnclean && ps.leader >= 0,
				req.ElectionType != electionUnclean && ps.leader == ps.replicas[0]:
				rp.ErrorCode, msg = errElectionNotNeeded, "Leader election not needed for topic partition."
			case req.ElectionType == electionUnclean && len(ps.isr) == 0:
				rp.ErrorCode, msg = errEligibleLeadersNotAvailable, "Unable to find any eligible leaders for the partition."
			case req.ElectionType != electionUnclean && !slices.Contains(ps.isr, ps.replicas[0]):
				rp.ErrorCode, msg = errPreferredLeaderNotAvailable, "The preferred leader was not available."
			default:
				leader := ps.replicas[0]
				if req.ElectionType == electionUnclean {
					leader = ps.isr[0]
				}
				if _, err := c.setLeaderLocked(t.Topic, p, leader); err != nil {
					rp.ErrorCode, msg = codeOf(err), err.Error()
					break
				}
				changed = true
			}
			if rp.ErrorCode == errNone || !all {
				if msg != "" {
					rp.ErrorMessage = &msg
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
		}
		if len(rt.Partitions) > 0 || !all {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	if changed {
		if err := c.persistLocked(); err != nil {
			resp.ErrorCode = codeOf(err)
		}
	}
	return resp
}

// routeCreateTopics checks each new topic's replication factor against
// the brokers (-1: Config.DefaultReplicationFactor) and lets the handler
// create it; the assignment created is stored: the manual one, or the
// default placement.
func (s *Server) routeCreateTopics(r *kmsg.CreateTopicsRequest) func(kmsg.Response) {
	c := s.cluster
	n := len(c.ids)
	rfs := map[string]int{}
	manual := map[string][][]int32{}
	var refused []kmsg.CreateTopicsResponseTopic
	r.Topics = slices.DeleteFunc(r.Topics, func(t kmsg.CreateTopicsRequestTopic) bool {
		if _, err := s.dir.DescribeTopic(t.Topic); err == nil || log.ValidateTopicName(t.Topic) != nil {
			return false // refused as such by the handler
		}
		if len(t.ReplicaAssignment) > 0 {
			as := make([][]int32, len(t.ReplicaAssignment))
			for _, a := range t.ReplicaAssignment {
				if a.Partition >= 0 && int(a.Partition) < len(as) {
					as[a.Partition] = a.Replicas
				}
			}
			manual[t.Topic] = as
			rfs[t.Topic] = len(t.ReplicaAssignment[0].Replicas)
			return false
		}
		rf := int(t.ReplicationFactor)
		if rf == -1 {
			rf = c.defaultRF
		}
		var msg string
		switch {
		case rf <= 0:
			msg = "Replication factor must be larger than 0, or -1 to use the default value."
		case rf > n:
			msg = fmt.Sprintf("Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.", rf, rf, n)
		default:
			rfs[t.Topic] = rf
			return false
		}
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode, rt.ErrorMessage, rt.NumPartitions, rt.ReplicationFactor = t.Topic, errInvalidReplicationFactor, &msg, -1, -1
		refused = append(refused, rt)
		return true
	})
	for i := range r.Topics {
		if _, ok := rfs[r.Topics[i].Topic]; ok && len(r.Topics[i].ReplicaAssignment) == 0 {
			r.Topics[i].ReplicationFactor = -1 // checked here; the handler creates it
		}
	}
	validateOnly := r.ValidateOnly
	return func(resp kmsg.Response) {
		cr := resp.(*kmsg.CreateTopicsResponse)
		for i := range cr.Topics {
			rt := &cr.Topics[i]
			rf, ok := rfs[rt.Topic]
			if !ok || rt.ErrorCode != errNone {
				continue
			}
			rt.ReplicationFactor = int16(rf)
			if !validateOnly {
				c.record(rt.Topic, rf, manual[rt.Topic], 0)
			}
		}
		cr.Topics = append(cr.Topics, refused...)
	}
}

// routeCreatePartitions stores the manual assignments of the partitions a
// CreatePartitions adds; those without one get the default placement when
// first seen.
func (s *Server) routeCreatePartitions(r *kmsg.CreatePartitionsRequest) func(kmsg.Response) {
	manual := map[string][][]int32{}
	from := map[string]int32{}
	for _, t := range r.Topics {
		if td, err := s.dir.DescribeTopic(t.Topic); err == nil && len(t.Assignment) > 0 {
			for _, a := range t.Assignment {
				manual[t.Topic] = append(manual[t.Topic], a.Replicas)
			}
			from[t.Topic] = td.Partitions
		}
	}
	if len(manual) == 0 || r.ValidateOnly {
		return nil
	}
	return func(resp kmsg.Response) {
		for _, rt := range resp.(*kmsg.CreatePartitionsResponse).Topics {
			if as, ok := manual[rt.Topic]; ok && rt.ErrorCode == errNone {
				s.cluster.record(rt.Topic, len(as[0]), as, from[rt.Topic])
			}
		}
	}
}

// record stores a topic's assignment from partition from on: manual's
// replicas where given, the default placement of rf replicas otherwise.
func (c *cluster) record(topic string, rf int, manual [][]int32, from int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	td, err := c.dir.DescribeTopic(topic)
	if err != nil {
		return
	}
	st := c.topics[topic]
	id := fmt.Sprintf("%x", td.ID)
	if st == nil || st.ID != id {
		st = &storedTopic{ID: id}
		c.topics[topic] = st
	}
	st.Partitions = st.Partitions[:min(len(st.Partitions), int(from))]
	for p := int32(len(st.Partitions)); p < td.Partitions; p++ {
		sp := c.placeLocked(topic, p, rf, 0)
		if i := int(p - from); i >= 0 && i < len(manual) && len(manual[i]) > 0 {
			sp.Replicas = slices.Clone(manual[i])
			sp.Leader = c.firstAliveLocked(sp.Replicas)
		}
		st.Partitions = append(st.Partitions, sp)
	}
	if err := c.persistLocked(); err != nil {
		c.lg.Error("kafkaserver: writing the replica assignments failed", "err", err)
	}
}

// isBroker reports whether id is one of the server's brokers (a manual
// replica assignment may name it).
func (s *Server) isBroker(id int32) bool {
	if s.cluster == nil {
		return id == s.dir.NodeID()
	}
	return slices.Contains(s.cluster.ids, id)
}

// replicationFactorOf is a topic's replica count, which the partitions a
// CreatePartitions adds must have.
func (s *Server) replicationFactorOf(topic string) int {
	if s.cluster == nil {
		return 1
	}
	if ps, ok := s.cluster.partition(topic, 0); ok {
		return len(ps.replicas)
	}
	return 1
}

// partitionTags writes a Fetch partition's tagged fields: CurrentLeader
// (tag 1, v12+) when the partition has one to tell (KIP-951).
func (e *fetchEncoder) partitionTags(p kmsg.FetchResponseTopicPartition) {
	cl := p.CurrentLeader
	if cl.LeaderID == -1 && cl.LeaderEpoch == -1 {
		e.tags()
		return
	}
	e.buf = append(e.buf, 1, 1, 9) // one field: tag 1, 9 bytes
	e.i32(cl.LeaderID)
	e.i32(cl.LeaderEpoch)
	e.tags()
}

// responseTags writes a Fetch response's tagged fields: NodeEndpoints
// (tag 0, v16+), the leaders a partition's CurrentLeader names (KIP-951).
func (e *fetchEncoder) responseTags(resp *kmsg.FetchResponse) {
	if e.version < 16 || len(resp.Brokers) == 0 {
		e.tags()
		return
	}
	field := &fetchEncoder{flexible: true}
	field.arrayLen(len(resp.Brokers), false, false)
	for _, b := range resp.Brokers {
		field.i32(b.NodeID)
		field.str(b.Host)
		field.i32(b.Port)
		field.nullableStr(b.Rack)
		field.tags()
	}
	e.buf = append(e.buf, 1, 0)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(field.buf)))
	e.buf = append(e.buf, field.buf...)
}
