package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
)

// Consumer groups are served by the directory's own group coordinator
// (the one kafkalite's in-process consumers use), so that network clients
// and in-process consumers can be members of one group and share its
// committed offsets in __consumer_offsets. They are Kafka's classic
// groups: the coordinator keeps membership and generations, and the
// group's leader assigns the partitions with its own assignor. A network
// leader gets every member's metadata in its JoinGroup response and sends
// the assignments in its SyncGroup, which the coordinator hands to the
// other members; an in-process leader's assignor runs inside the
// coordinator (see package coordinator). Any protocol type and protocol
// names the members share are accepted, as Kafka accepts them; a group
// whose leader is an in-process consumer needs a protocol kafkalite
// implements (range, roundrobin, sticky, cooperative-sticky).

// Kafka's group error codes.
const (
	errCoordinatorNotAvailable    int16 = 15
	errIllegalGeneration          int16 = 22
	errInconsistentGroupProto     int16 = 23
	errInvalidGroupID             int16 = 24
	errUnknownMemberID            int16 = 25
	errInvalidSessionTimeout      int16 = 26
	errRebalanceInProgress        int16 = 27
	errNonEmptyGroup              int16 = 68
	errGroupIDNotFound            int16 = 69
	errMemberIDRequired           int16 = 79
	errGroupMaxSizeReached        int16 = 81
	errFencedInstanceID           int16 = 82
	errFencedMemberEpoch          int16 = 110
	errUnreleasedInstanceID       int16 = 111
	errUnsupportedAssignor        int16 = 112
	errStaleMemberEpoch           int16 = 113
	errInvalidRegularExpression   int16 = 128
	groupMinSessionTimeout              = 6 * time.Second  // group.min.session.timeout.ms
	groupMaxSessionTimeout              = 30 * time.Minute // group.max.session.timeout.ms
	coordinatorKeyTypeTransaction int8  = 1
	coordinatorKeyTypeShare       int8  = 2
)

// errBadSharePartitionKey is a FindCoordinator share key not of the form
// "group:topicId:partition" (Kafka's SharePartitionKey).
var errBadSharePartitionKey = errors.New("server: share partition key is not group:topicId:partition")

// checkSharePartitionKey checks a share coordinator key as Kafka parses
// it: the partition after the last colon, the topic id (22 characters of
// URL-safe base64) before it, and a group id, not blank, before that
// (which may itself hold colons).
func checkSharePartitionKey(key string) error {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return fmt.Errorf("%w: %q", errBadSharePartitionKey, key)
	}
	rest, part := key[:i], key[i+1:]
	j := strings.LastIndexByte(rest, ':')
	if j < 0 {
		return fmt.Errorf("%w: %q", errBadSharePartitionKey, key)
	}
	group, id := rest[:j], rest[j+1:]
	if strings.TrimSpace(group) == "" {
		return fmt.Errorf("%w: %q: the group id is empty", errBadSharePartitionKey, key)
	}
	if b, err := base64.RawURLEncoding.DecodeString(id); err != nil || len(b) != 16 {
		return fmt.Errorf("%w: %q: bad topic id", errBadSharePartitionKey, key)
	}
	if _, err := strconv.ParseInt(part, 10, 32); err != nil {
		return fmt.Errorf("%w: %q: bad partition", errBadSharePartitionKey, key)
	}
	return nil
}

// coordinator returns the directory's group coordinator, made on first use.
func (s *Server) coordinator(ctx context.Context) (*coordinator.GroupCoordinator, error) {
	return coordinator.Groups(ctx, s.dir)
}

// groupCode maps the coordinator's errors to Kafka's codes.
func groupCode(err error) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, coordinator.ErrUnknownMember):
		return errUnknownMemberID
	case errors.Is(err, coordinator.ErrIllegalGeneration):
		return errIllegalGeneration
	case errors.Is(err, coordinator.ErrRebalanceInProgress):
		return errRebalanceInProgress
	case errors.Is(err, coordinator.ErrInconsistentProtocol):
		return errInconsistentGroupProto
	case errors.Is(err, coordinator.ErrFencedInstanceID):
		return errFencedInstanceID
	case errors.Is(err, coordinator.ErrGroupNotEmpty):
		return errNonEmptyGroup
	case errors.Is(err, coordinator.ErrUnknownGroup):
		return errGroupIDNotFound
	case errors.Is(err, coordinator.ErrGroupMaxCount):
		// Kafka bounds a group's members (group.max.size), not the
		// number of groups; its answer to a bound reached, not retried.
		return errGroupMaxSizeReached
	case errors.Is(err, coordinator.ErrClosed), errors.Is(err, log.ErrClosed):
		return errCoordinatorNotAvailable
	case errors.Is(err, coordinator.ErrFencedMemberEpoch):
		return errFencedMemberEpoch
	case errors.Is(err, coordinator.ErrStaleMemberEpoch):
		return errStaleMemberEpoch
	case errors.Is(err, coordinator.ErrUnreleasedInstanceID):
		return errUnreleasedInstanceID
	case errors.Is(err, coordinator.ErrUnsupportedAssignor):
		return errUnsupportedAssignor
	case errors.Is(err, coordinator.ErrInvalidRegularExpression):
		return errInvalidRegularExpression
	case errors.Is(err, coordinator.ErrInvalidHeartbeat):
		return errInvalidRequest
	case errors.Is(err, coordinator.ErrGroupMaxSize):
		return errGroupMaxSizeReached
	}
	return codeOf(err)
}

func (s *Server) handleFindCoordinator(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := kmsg.NewPtrFindCoordinatorResponse()
	node, host, port := s.broker(ctx)
	// One node coordinates every group and every transactional id. As
	// Kafka's getCoordinator, a lookup that finds the coordinator's
	// internal topic (__consumer_offsets, __transaction_state,
	// __share_group_state) missing makes it and answers
	// COORDINATOR_NOT_AVAILABLE with no node: the client asks again.
	answer := func(kind int8, key string) (int16, *string) {
		topic := coordinator.OffsetsTopic
		var err error
		switch kind {
		case coordinatorKeyTypeTransaction:
			topic = coordinator.TransactionStateTopic
		case coordinatorKeyTypeShare:
			topic = share.StateTopic
			// KIP-932's share coordinator (v6+), keyed by
			// "group:topicId:partition"; an older version, or a key
			// not of that form, is INVALID_REQUEST, as Kafka answers.
			if req.Version < 6 {
				return errInvalidRequest, nil
			}
			if err := checkSharePartitionKey(key); err != nil {
				msg := err.Error()
				return errInvalidRequest, &msg
			}
		}
		_, missing := s.dir.DescribeTopic(topic)
		switch kind {
		case coordinatorKeyTypeTransaction:
			_, err = s.txns(ctx)
		case coordinatorKeyTypeShare:
			_, err = share.Partitions(ctx, s.dir)
		default:
			_, err = s.coordinator(ctx)
		}
		if err == nil && errors.Is(missing, log.ErrUnknownTopicOrPartition) {
			err = fmt.Errorf("%s created on this lookup", topic)
		}
		if err != nil {
			msg := err.Error()
			return errCoordinatorNotAvailable, &msg
		}
		return errNone, nil
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.Host, c.Port = key, node, host, port
			c.ErrorCode, c.ErrorMessage = answer(req.CoordinatorType, key)
			if c.ErrorCode != errNone {
				c.NodeID, c.Host, c.Port = -1, "", -1 // Kafka's Node.noNode
			}
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp, nil
	}
	resp.NodeID, resp.Host, resp.Port = node, host, port
	resp.ErrorCode, resp.ErrorMessage = answer(req.CoordinatorType, req.CoordinatorKey)
	if resp.ErrorCode != errNone {
		resp.NodeID, resp.Host, resp.Port = -1, "", -1
	}
	return resp, nil
}

func (s *Server) handleJoinGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.JoinGroupRequest)
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Generation, resp.MemberID = -1, req.MemberID
	pt := req.ProtocolType
	resp.ProtocolType = &pt
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := session
	if req.Version >= 1 {
		rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	clientID, clientHost := "", ""
	if st := stateOf(ctx); st != nil {
		clientID, clientHost = st.clientID, st.clientHost
	}
	switch {
	case req.Group == "":
		resp.ErrorCode = errInvalidGroupID
		return resp, nil
	case req.ProtocolType == "" || len(req.Protocols) == 0:
		resp.ErrorCode = errInconsistentGroupProto
		return resp, nil
	case session < groupMinSessionTimeout || session > groupMaxSessionTimeout:
		resp.ErrorCode = errInvalidSessionTimeout
		return resp, nil
	}
	coord, err := s.coordinator(ctx)
	if err != nil {
		resp.ErrorCode = groupCode(err)
		return resp, nil
	}
	if req.MemberID == "" && req.Version >= 4 && req.InstanceID == nil {
		// KIP-394: a new member first learns its id, then joins with it
		// (a static member gets its id in its join).
		id, err := coord.PendingMember(req.Group, clientID, session)
		resp.ErrorCode, resp.MemberID = errMemberIDRequired, id
		if err != nil {
			resp.ErrorCode = groupCode(err)
		}
		return resp, nil
	}
	jr := coordinator.JoinRequest{GroupID: req.Group, MemberID: req.MemberID, ClientID: clientID, ClientHost: clientHost,
		ProtocolType: req.ProtocolType, SessionTimeout: session, RebalanceTimeout: rebalance}
	if req.InstanceID != nil {
		jr.InstanceID = *req.InstanceID
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, coordinator.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	jctx, cancel := context.WithTimeout(ctx, rebalance+5*time.Second)
	defer cancel()
	unpark := parked(ctx)
	res, err := coord.JoinGroup(jctx, jr)
	unpark()
	if err != nil {
		resp.ErrorCode, resp.MemberID = groupCode(err), jr.MemberID
		if errors.Is(err, context.DeadlineExceeded) {
			resp.ErrorCode = errRebalanceInProgress
		}
		return resp, nil
	}
	resp.Generation, resp.MemberID, resp.LeaderID = res.Generation, res.MemberID, res.Leader
	proto := res.Protocol
	resp.Protocol = &proto
	for _, m := range res.Members {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.ProtocolMetadata = m.MemberID, m.Metadata
		if m.InstanceID != "" {
			id := m.InstanceID
			jm.InstanceID = &id
		}
		resp.Members = append(resp.Members, jm)
	}
	return resp, nil
}

func (s *Server) handleSyncGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SyncGroupRequest)
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.ProtocolType, resp.Protocol = req.ProtocolType, req.Protocol
	coord, err := s.coordinator(ctx)
	if err != nil {
		resp.ErrorCode = groupCode(err)
		return resp, nil
	}
	sr := coordinator.SyncRequest{Member: coordinator.GroupMetadata{GroupID: req.Group, MemberID: req.MemberID,
		GenerationID: req.Generation, GroupInstanceID: deref(req.InstanceID)}, Assignments: make(map[string][]byte, len(req.GroupAssignment))}
	if req.Version >= 5 {
		// The protocol type and name, when sent, must be the group's.
		sr.ProtocolType, sr.Protocol = req.ProtocolType, req.Protocol
	}
	for _, a := range req.GroupAssignment {
		sr.Assignments[a.MemberID] = a.MemberAssignment
	}
	sctx, cancel := context.WithTimeout(ctx, groupMaxSessionTimeout)
	defer cancel()
	unpark := parked(ctx)
	b, err := coord.SyncGroup(sctx, sr)
	unpark()
	if errors.Is(err, context.DeadlineExceeded) {
		err = coordinator.ErrRebalanceInProgress
	}
	resp.ErrorCode, resp.MemberAssignment = groupCode(err), b
	if b == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp, nil
}

func (s *Server) handleHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.HeartbeatRequest)
	resp := kmsg.NewPtrHeartbeatResponse()
	coord, err := s.coordinator(ctx)
	if err == nil {
		err = coord.Heartbeat(coordinator.GroupMetadata{GroupID: req.Group, MemberID: req.MemberID, GenerationID: req.Generation,
			GroupInstanceID: deref(req.InstanceID)})
	}
	resp.ErrorCode = groupCode(err)
	return resp, nil
}

// deref is a nullable string's value, "" for null.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Server) handleLeaveGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.LeaveGroupRequest)
	resp := kmsg.NewPtrLeaveGroupResponse()
	coord, err := s.coordinator(ctx)
	if err != nil {
		resp.ErrorCode = groupCode(err)
		return resp, nil
	}
	// leave removes a member by its id, or a static member by its
	// instance id alone (as kafka-consumer-groups --delete of a static
	// member sends it); a member id that is not the instance's is fenced.
	leave := func(id, instance string) int16 {
		return groupCode(coord.LeaveGroup(coordinator.GroupMetadata{GroupID: req.Group, MemberID: id, GroupInstanceID: instance}))
	}
	if req.Version < 3 {
		resp.ErrorCode = leave(req.MemberID, "")
		return resp, nil
	}
	for _, m := range req.Members {
		lm := kmsg.NewLeaveGroupResponseMember()
		lm.MemberID, lm.InstanceID, lm.ErrorCode = m.MemberID, m.InstanceID, leave(m.MemberID, deref(m.InstanceID))
		resp.Members = append(resp.Members, lm)
	}
	return resp, nil
}

// committedOffset is a partition's offset as an OffsetCommit or a
// TxnOffsetCommit carries it: with its leader epoch where the request's
// version has one (else -1), and its metadata unless null.
func committedOffset(offset int64, leaderEpoch int32, withEpoch bool, metadata *string) coordinator.OffsetAndMetadata {
	om := coordinator.OffsetAndMetadata{Offset: offset, LeaderEpoch: -1}
	if withEpoch {
		om.LeaderEpoch = leaderEpoch
	}
	if metadata != nil {
		om.Metadata = *metadata
	}
	return om
}

func (s *Server) handleOffsetCommit(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	resp := kmsg.NewPtrOffsetCommitResponse()
	// v10 (KIP-848) names topics by id: an id no topic has is answered
	// UNKNOWN_TOPIC_ID for its partitions, and the others are committed,
	// as Kafka's KafkaApis answers.
	// A partition that does not exist is answered
	// UNKNOWN_TOPIC_OR_PARTITION and not committed, at every version, as
	// Kafka's KafkaApis answers it before the coordinator sees the rest.
	names := make([]string, len(req.Topics))
	offsets := map[log.TopicPartition]coordinator.OffsetAndMetadata{}
	known := s.partitionChecker()
	for i, t := range req.Topics {
		names[i] = t.Topic
		if req.Version >= 10 {
			names[i], _ = s.topicByID(t.TopicID)
		}
		if names[i] == "" && req.Version >= 10 {
			continue
		}
		for _, p := range t.Partitions {
			if known(names[i], p.Partition) {
				offsets[log.TopicPartition{Topic: names[i], Partition: p.Partition}] = committedOffset(p.Offset, p.LeaderEpoch, req.Version >= 6, p.Metadata)
			}
		}
	}
	coord, err := s.coordinator(ctx)
	if err == nil && len(offsets) > 0 {
		err = coord.CommitOffsets(ctx, coordinator.GroupMetadata{GroupID: req.Group, MemberID: req.MemberID, GenerationID: req.Generation,
			GroupInstanceID: deref(req.InstanceID)}, offsets)
	}
	code := groupCode(err)
	if req.Group == "" {
		code = errInvalidGroupID
	}
	for i, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			switch {
			case names[i] == "" && req.Version >= 10:
				rp.ErrorCode = errUnknownTopicID
			case !known(names[i], p.Partition):
				rp.ErrorCode = errUnknownTopicOrPartition
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// partitionChecker returns a function telling whether a topic's
// partition exists, describing each topic once for the request that uses
// it.
func (s *Server) partitionChecker() func(topic string, partition int32) bool {
	counts := map[string]int32{}
	return func(topic string, partition int32) bool {
		n, ok := counts[topic]
		if !ok {
			n = -1
			if td, err := s.dir.DescribeTopic(topic); err == nil {
				n = td.Partitions
			}
			counts[topic] = n
		}
		return partition >= 0 && partition < n
	}
}

// fetchOffsets answers one group's OffsetFetch: every committed offset
// when topics is nil, else those asked (-1 where there is none).
func (s *Server) fetchOffsets(coord *coordinator.GroupCoordinator, group string, topics map[string][]int32, all bool) map[string]map[int32]coordinator.OffsetAndMetadata {
	var tps []log.TopicPartition
	if !all {
		for t, parts := range topics {
			for _, p := range parts {
				tps = append(tps, log.TopicPartition{Topic: t, Partition: p})
			}
		}
		if tps == nil {
			tps = []log.TopicPartition{}
		}
	}
	got := coord.FetchOffsets(group, tps)
	out := map[string]map[int32]coordinator.OffsetAndMetadata{}
	add := func(tp log.TopicPartition, om coordinator.OffsetAndMetadata) {
		if out[tp.Topic] == nil {
			out[tp.Topic] = map[int32]coordinator.OffsetAndMetadata{}
		}
		out[tp.Topic][tp.Partition] = om
	}
	for _, tp := range tps {
		add(tp, coordinator.OffsetAndMetadata{Offset: -1, LeaderEpoch: -1})
	}
	for tp, om := range got {
		add(tp, om)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedParts(m map[int32]coordinator.OffsetAndMetadata) []int32 {
	parts := make([]int32, 0, len(m))
	for p := range m {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return parts
}

func (s *Server) handleOffsetFetch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	resp := kmsg.NewPtrOffsetFetchResponse()
	coord, err := s.coordinator(ctx)
	if err != nil {
		resp.ErrorCode = groupCode(err)
		for _, g := range req.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, resp.ErrorCode
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil
	}
	if req.Version >= 8 {
		for _, g := range req.Groups {
			if err := coord.CheckConsumerOffsetFetch(g.Group, deref(g.MemberID), g.MemberEpoch); err != nil {
				rg := kmsg.NewOffsetFetchResponseGroup()
				rg.Group, rg.ErrorCode = g.Group, groupCode(err)
				resp.Groups = append(resp.Groups, rg)
				continue
			}
			// v10 (KIP-848) names topics by id: an id no topic has is
			// answered UNKNOWN_TOPIC_ID for its partitions (offset -1),
			// as Kafka's KafkaApis answers.
			topics := map[string][]int32{}
			var unknown []kmsg.OffsetFetchResponseGroupTopic
			for _, t := range g.Topics {
				name := t.Topic
				if req.Version >= 10 {
					var ok bool
					if name, ok = s.topicByID(t.TopicID); !ok {
						rt := kmsg.NewOffsetFetchResponseGroupTopic()
						rt.TopicID = t.TopicID
						for _, p := range t.Partitions {
							rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
							rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, errUnknownTopicID
							rt.Partitions = append(rt.Partitions, rp)
						}
						unknown = append(unknown, rt)
						continue
					}
				}
				topics[name] = t.Partitions
			}
			got := s.fetchOffsets(coord, g.Group, topics, g.Topics == nil)
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group = g.Group
			rg.Topics = unknown
			for _, t := range sortedKeys(got) {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t
				if req.Version >= 10 {
					rt.TopicID = s.topicIDOf(t)
				}
				for _, p := range sortedParts(got[t]) {
					om := got[t][p]
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch = p, om.Offset, om.LeaderEpoch
					md := om.Metadata
					rp.Metadata = &md
					rt.Partitions = append(rt.Partitions, rp)
				}
				rg.Topics = append(rg.Topics, rt)
			}
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil
	}
	topics := map[string][]int32{}
	for _, t := range req.Topics {
		topics[t.Topic] = t.Partitions
	}
	got := s.fetchOffsets(coord, req.Group, topics, req.Topics == nil && req.Version >= 2)
	for _, t := range sortedKeys(got) {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t
		for _, p := range sortedParts(got[t]) {
			om := got[t][p]
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, om.Offset, om.LeaderEpoch
			md := om.Metadata
			rp.Metadata = &md
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleListGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListGroupsRequest)
	resp := kmsg.NewPtrListGroupsResponse()
	coord, err := s.coordinator(ctx)
	if err != nil {
		resp.ErrorCode = groupCode(err)
		return resp, nil
	}
	for _, d := range coord.ListGroups() {
		// Kafka matches both filters without regard to case (the Java
		// Admin sends "Classic" and "Consumer").
		if len(req.StatesFilter) > 0 && !slices.ContainsFunc(req.StatesFilter, func(st string) bool { return strings.EqualFold(st, string(d.State)) }) {
			continue
		}
		if len(req.TypesFilter) > 0 && !slices.ContainsFunc(req.TypesFilter, func(t string) bool { return strings.EqualFold(t, string(d.Type)) }) {
			continue
		}
		g := kmsg.NewListGroupsResponseGroup()
		g.Group, g.ProtocolType, g.GroupState, g.GroupType = d.GroupID, d.ProtocolType, string(d.State), string(d.Type)
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

func (s *Server) handleDescribeGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	resp := kmsg.NewPtrDescribeGroupsResponse()
	coord, err := s.coordinator(ctx)
	for _, id := range req.Groups {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group = id
		if err != nil {
			g.ErrorCode = groupCode(err)
			resp.Groups = append(resp.Groups, g)
			continue
		}
		d, derr := coord.DescribeGroup(id)
		if derr != nil {
			// As Kafka answers a group it does not know: Dead, and from
			// v6 (KIP-1043) GROUP_ID_NOT_FOUND with a message.
			g.State = string(coordinator.StateDead)
			if req.Version >= 6 {
				msg := fmt.Sprintf("Group %s not found.", id)
				g.ErrorCode, g.ErrorMessage = errGroupIDNotFound, &msg
			}
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.State, g.ProtocolType, g.Protocol = string(d.State), d.ProtocolType, d.Protocol
		for _, m := range d.Members {
			gm := kmsg.NewDescribeGroupsResponseGroupMember()
			gm.MemberID, gm.ClientID, gm.ClientHost = m.MemberID, m.ClientID, m.ClientHost
			if m.InstanceID != "" {
				iid := m.InstanceID
				gm.InstanceID = &iid
			}
			gm.ProtocolMetadata, gm.MemberAssignment = m.Metadata, m.AssignmentBytes
			g.Members = append(g.Members, gm)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

func (s *Server) handleDeleteGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	resp := kmsg.NewPtrDeleteGroupsResponse()
	coord, err := s.coordinator(ctx)
	for _, id := range req.Groups {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group = id
		derr := err
		if derr == nil {
			derr = coord.DeleteGroup(ctx, id)
		}
		g.ErrorCode, g.ErrorMessage = groupCode(derr), messageOf(derr)
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// errGroupSubscribedToTopic is GROUP_SUBSCRIBED_TO_TOPIC.
const errGroupSubscribedToTopic int16 = 86

func (s *Server) handleOffsetDelete(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	resp := kmsg.NewPtrOffsetDeleteResponse()
	var tps []log.TopicPartition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, log.TopicPartition{Topic: t.Topic, Partition: p.Partition})
		}
	}
	coord, err := s.coordinator(ctx)
	var refused map[log.TopicPartition]error
	if err == nil {
		refused, err = coord.DeleteOffsets(ctx, req.Group, tps)
	}
	if err != nil {
		resp.ErrorCode = groupCode(err)
		return resp, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if refused[log.TopicPartition{Topic: t.Topic, Partition: p.Partition}] != nil {
				rp.ErrorCode = errGroupSubscribedToTopic
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
