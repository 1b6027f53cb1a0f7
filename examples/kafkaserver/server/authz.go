package server

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/acl"
)

// StandardAuthorizer is the one value Config.AuthorizerClassName takes
// besides empty: Kafka's own authorizer, whose rules log/acl follows.
const StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// Kafka's error codes of authorization.
const (
	errTopicAuthorizationFailed         int16 = 29
	errGroupAuthorizationFailed         int16 = 30
	errClusterAuthorizationFailed       int16 = 31
	errTransactionalIDAuthorizationFail int16 = 53
	errSecurityDisabled                 int16 = 54
	errOperationNotAttempted            int16 = 55
)

// anonymous is the principal of a connection without SASL or a client
// certificate, as Kafka names it.
const anonymous = "User:ANONYMOUS"

// authCtx is one request's view of the authorizer: who asks, from where.
type authCtx struct {
	s         *Server
	principal string
	host      string
}

func (s *Server) authCtxOf(ctx context.Context) *authCtx {
	z := &authCtx{s: s, principal: anonymous}
	if st := stateOf(ctx); st != nil {
		z.host = javaHost(strings.TrimPrefix(st.clientHost, "/"))
		z.principal = st.principal
	}
	return z
}

// javaHost prints an address as Java's InetAddress.getHostAddress does
// (the host ACLs compare): IPv4 dotted, IPv6 as eight groups of
// unpadded hex, IPv4-mapped IPv6 as IPv4.
func javaHost(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[i])<<8|uint64(b[i+1]), 16))
	}
	if z := a.Zone(); z != "" {
		sb.WriteString("%" + z)
	}
	return sb.String()
}

func (z *authCtx) may(op acl.Operation, t acl.ResourceType, name string) bool {
	return z.s.authz.Authorize(z.principal, z.host, op, acl.Resource{Type: t, Name: name})
}

func (z *authCtx) mayCluster(op acl.Operation) bool {
	return z.may(op, acl.ResourceCluster, acl.ClusterName)
}

func (z *authCtx) mayTopic(op acl.Operation, topic string) bool {
	return z.may(op, acl.ResourceTopic, topic)
}

func (z *authCtx) mayGroup(op acl.Operation, group string) bool {
	return z.may(op, acl.ResourceGroup, group)
}

func (z *authCtx) mayTxn(op acl.Operation, id string) bool {
	return z.may(op, acl.ResourceTransactionalID, id)
}

// operations is Kafka's authorized operations bit field for a resource:
// bit n set for the operation of code n.
func (z *authCtx) operations(t acl.ResourceType, name string) int32 {
	var bits int32
	for _, op := range z.s.authz.AuthorizedOperations(z.principal, z.host, acl.Resource{Type: t, Name: name}) {
		bits |= 1 << op
	}
	return bits
}

// mayByResourceType is Kafka's Authorizer.authorizeByResourceType: may
// the principal perform op on some resource of type t? Yes if it may on
// a resource named as no ACL names one (a super user, or
// allow.everyone.if.no.acl.found), or if an ALLOW for it (op or ALL) is
// not dominated by a DENY: a wildcard DENY denies everything, a LITERAL
// DENY its own name, a PREFIXED DENY every name it prefixes.
func (z *authCtx) mayByResourceType(op acl.Operation, t acl.ResourceType) bool {
	if z.may(op, t, "hardcode") {
		return true
	}
	denyLiteral, denyPrefixed := map[string]bool{}, map[string]bool{}
	var allowLiteral, allowPrefixed []string
	wildcardAllow := false
	for _, b := range z.s.authz.DescribeAcls(acl.Filter{ResourceType: t, PatternType: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}) {
		if b.Host != z.host && b.Host != acl.Wildcard {
			continue
		}
		if b.Principal != z.principal && b.Principal != acl.WildcardPrincipal {
			continue
		}
		if b.Operation != op && b.Operation != acl.OpAll {
			continue
		}
		switch {
		case b.Permission == acl.Deny && b.PatternType == acl.PatternLiteral && b.ResourceName == acl.Wildcard:
			return false
		case b.Permission == acl.Deny && b.PatternType == acl.PatternLiteral:
			denyLiteral[b.ResourceName] = true
		case b.Permission == acl.Deny:
			denyPrefixed[b.ResourceName] = true
		case b.PatternType == acl.PatternLiteral && b.ResourceName == acl.Wildcard:
			wildcardAllow = true
		case b.PatternType == acl.PatternLiteral:
			allowLiteral = append(allowLiteral, b.ResourceName)
		default:
			allowPrefixed = append(allowPrefixed, b.ResourceName)
		}
	}
	if wildcardAllow {
		return true
	}
	dominated := func(name string) bool {
		for i := 1; i <= len(name); i++ {
			if denyPrefixed[name[:i]] {
				return true
			}
		}
		return false
	}
	for _, name := range allowLiteral {
		if !denyLiteral[name] && !dominated(name) {
			return true
		}
	}
	for _, name := range allowPrefixed {
		if !dominated(name) {
			return true
		}
	}
	return false
}

// authzRule is one API's authorization, as Kafka's KafkaApis checks it
// before handling the request. It returns either a response refusing the
// whole request, or nil to go on; in that case it may have removed from
// req what the principal may not touch, and fix, if not nil, puts their
// errors (and anything else authorization adds: authorized operations,
// hidden entries) into the handler's response.
type authzRule func(z *authCtx, req kmsg.Request) (refuse kmsg.Response, fix func(kmsg.Response))

// authzRules holds a rule for every API served (TestEveryAPIHasAnAuthzRule
// checks it): an API added to apis gets its row here.
var authzRules map[int16]authzRule

func init() {
	authzRules = map[int16]authzRule{
		// Kafka authorizes none of these: they come before or without
		// a principal's action.
		kmsg.ApiVersions.Int16():      authzNone,
		kmsg.SASLHandshake.Int16():    authzNone,
		kmsg.SASLAuthenticate.Int16(): authzNone,

		kmsg.Metadata.Int16():             authzMetadata,
		kmsg.Produce.Int16():              authzProduce,
		kmsg.Fetch.Int16():                authzFetch,
		kmsg.ListOffsets.Int16():          authzListOffsets,
		kmsg.OffsetForLeaderEpoch.Int16(): authzOffsetForLeaderEpoch,
		kmsg.InitProducerID.Int16():       authzInitProducerID,
		kmsg.CreateTopics.Int16():         authzCreateTopics,
		kmsg.DeleteTopics.Int16():         authzDeleteTopics,
		kmsg.CreatePartitions.Int16():     authzCreatePartitions,
		kmsg.DeleteRecords.Int16():        authzDeleteRecords,
		kmsg.DescribeCluster.Int16():      authzDescribeCluster,
		kmsg.FindCoordinator.Int16():      authzFindCoordinator,

		kmsg.JoinGroup.Int16():      authzGroupRead(func(r kmsg.Request) string { return r.(*kmsg.JoinGroupRequest).Group }),
		kmsg.SyncGroup.Int16():      authzGroupRead(func(r kmsg.Request) string { return r.(*kmsg.SyncGroupRequest).Group }),
		kmsg.Heartbeat.Int16():      authzGroupRead(func(r kmsg.Request) string { return r.(*kmsg.HeartbeatRequest).Group }),
		kmsg.LeaveGroup.Int16():     authzGroupRead(func(r kmsg.Request) string { return r.(*kmsg.LeaveGroupRequest).Group }),
		kmsg.OffsetCommit.Int16():   authzOffsetCommit,
		kmsg.OffsetFetch.Int16():    authzOffsetFetch,
		kmsg.ListGroups.Int16():     authzListGroups,
		kmsg.DescribeGroups.Int16(): authzDescribeGroups,
		kmsg.DeleteGroups.Int16():   authzDeleteGroups,
		kmsg.OffsetDelete.Int16():   authzOffsetDelete,

		kmsg.AddPartitionsToTxn.Int16(): authzAddPartitionsToTxn,
		kmsg.AddOffsetsToTxn.Int16():    authzAddOffsetsToTxn,
		kmsg.EndTxn.Int16():             authzEndTxn,
		kmsg.TxnOffsetCommit.Int16():    authzTxnOffsetCommit,

		kmsg.CreateACLs.Int16():   authzCluster(acl.OpAlter),
		kmsg.DescribeACLs.Int16(): authzCluster(acl.OpDescribe),
		kmsg.DeleteACLs.Int16():   authzCluster(acl.OpAlter),
	}
}

// served reports whether the API is served: with authorization on, only
// the APIs with a rule in authzRules are (the others are neither
// advertised nor answered, rather than served unchecked).
func (s *Server) served(key int16) bool {
	if s.authz == nil {
		return true
	}
	_, ok := authzRules[key]
	return ok
}

// authorize runs req's rule. REQUIRES: s.served(req.Key()).
func (s *Server) authorize(ctx context.Context, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	return authzRules[req.Key()](s.authCtxOf(ctx), req)
}

func authzNone(*authCtx, kmsg.Request) (kmsg.Response, func(kmsg.Response)) { return nil, nil }

// authzCluster refuses the request unless the principal may perform op on
// the cluster (Kafka's authorizeClusterOperation).
func authzCluster(op acl.Operation) authzRule {
	return func(z *authCtx, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
		if z.mayCluster(op) {
			return nil, nil
		}
		return refuseWhole(req, errClusterAuthorizationFailed), nil
	}
}

// authzGroupRead refuses a group request unless the principal may READ
// the group.
func authzGroupRead(group func(kmsg.Request) string) authzRule {
	return func(z *authCtx, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
		if z.mayGroup(acl.OpRead, group(req)) {
			return nil, nil
		}
		return refuseWhole(req, errGroupAuthorizationFailed), nil
	}
}

// refuseWhole is Kafka's getErrorResponse for the requests whose
// authorization refuses them whole: code on every entry. Requests not
// listed are not refused whole by any rule.
func refuseWhole(kreq kmsg.Request, code int16) kmsg.Response {
	switch req := kreq.(type) {
	case *kmsg.JoinGroupRequest:
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = code, -1
		if req.Version < 7 {
			resp.Protocol = new(string)
		}
		return resp
	case *kmsg.SyncGroupRequest:
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode, resp.MemberAssignment = code, []byte{}
		return resp
	case *kmsg.HeartbeatRequest:
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.InitProducerIDRequest:
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return resp
	case *kmsg.EndTxnRequest:
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return resp
	case *kmsg.AddOffsetsToTxnRequest:
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.CreateACLsRequest:
		resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
		for range req.Creations {
			r := kmsg.NewCreateACLsResponseResult()
			r.ErrorCode = code
			resp.Results = append(resp.Results, r)
		}
		return resp
	case *kmsg.DescribeACLsRequest:
		resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.DeleteACLsRequest:
		resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
		for range req.Filters {
			r := kmsg.NewDeleteACLsResponseResult()
			r.ErrorCode = code
			resp.Results = append(resp.Results, r)
		}
		return resp
	case *kmsg.OffsetCommitRequest:
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.TxnOffsetCommitRequest:
		resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID // v6 names topics by id
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.OffsetDeleteRequest:
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ProduceRequest:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			resp.Topics = append(resp.Topics, produceErrors(t, code))
		}
		return resp
	}
	panic(fmt.Sprintf("server: no whole-request refusal for %s", kmsg.NameForKey(kreq.Key())))
}

// unknownTopicID is the name keepTopics' topic function gives a topic
// named by an id no topic has: kept, for the handler to answer
// UNKNOWN_TOPIC_ID as Kafka answers it, not refused for authorization.
const unknownTopicID = "\x00unknown topic id"

// topicOf is the name of the topic a request names by name, or by id when
// byID (the versions that do): unknownTopicID for an id no topic has.
func (z *authCtx) topicOf(byID bool, name string, id [16]byte) string {
	if !byID {
		return name
	}
	if n, ok := z.s.topicByID(id); ok {
		return n
	}
	return unknownTopicID
}

// keepTopics splits items by whether the principal may perform op on the
// topic each names.
func keepTopics[T any](z *authCtx, op acl.Operation, items []T, topic func(*T) string) (kept, refused []T) {
	for i := range items {
		if name := topic(&items[i]); name == unknownTopicID || z.mayTopic(op, name) {
			kept = append(kept, items[i])
		} else {
			refused = append(refused, items[i])
		}
	}
	return kept, refused
}

func produceErrors(t kmsg.ProduceRequestTopic, code int16) kmsg.ProduceResponseTopic {
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic, rt.TopicID = t.Topic, t.TopicID
	for _, p := range t.Partitions {
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.Partition, rp.ErrorCode = p.Partition, code
		rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// authzProduce: WRITE on the transactional id, if any, else every
// partition fails; WRITE on each topic, else its partitions fail.
func authzProduce(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.ProduceRequest)
	if req.TransactionID != nil && !z.mayTxn(acl.OpWrite, *req.TransactionID) {
		if req.Acks == 0 {
			return noResponse{}, nil
		}
		return refuseWhole(req, errTransactionalIDAuthorizationFail), nil
	}
	kept, refused := keepTopics(z, acl.OpWrite, req.Topics, func(t *kmsg.ProduceRequestTopic) string {
		return z.topicOf(req.Version >= 13, t.Topic, t.TopicID)
	})
	req.Topics = kept
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ProduceResponse)
		for _, t := range refused {
			resp.Topics = append(resp.Topics, produceErrors(t, errTopicAuthorizationFailed))
		}
	}
}

// noResponse is a refusal that sends nothing (a Produce with acks=0).
type noResponse struct{ kmsg.Response }

// authzFetch: READ on each topic, else its partitions fail (a client's
// fetch; kafkalite has no followers).
func authzFetch(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.FetchRequest)
	kept, refused := keepTopics(z, acl.OpRead, req.Topics, func(t *kmsg.FetchRequestTopic) string {
		return z.topicOf(req.Version >= 13, t.Topic, t.TopicID)
	})
	if len(refused) == 0 {
		return nil, nil
	}
	errs := func(resp *kmsg.FetchResponse) {
		for _, t := range refused {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := newFetchPartition(p.Partition)
				rp.ErrorCode = errTopicAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	if len(kept) == 0 {
		// Nothing to wait for: answered at once, as Kafka answers it.
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		errs(resp)
		return resp, nil
	}
	req.Topics = kept
	return nil, func(r kmsg.Response) { errs(r.(*kmsg.FetchResponse)) }
}

// authzListOffsets: DESCRIBE on each topic, else its partitions fail.
func authzListOffsets(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	var refused []kmsg.ListOffsetsRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpDescribe, req.Topics, func(t *kmsg.ListOffsetsRequestTopic) string { return t.Topic })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ListOffsetsResponse)
		for _, t := range refused {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.Timestamp, rp.Offset, rp.LeaderEpoch = p.Partition, errTopicAuthorizationFailed, -1, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzOffsetForLeaderEpoch: CLUSTER_ACTION on the cluster for all, else
// DESCRIBE on each topic.
func authzOffsetForLeaderEpoch(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	if z.mayCluster(acl.OpClusterAction) {
		return nil, nil
	}
	var refused []kmsg.OffsetForLeaderEpochRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpDescribe, req.Topics, func(t *kmsg.OffsetForLeaderEpochRequestTopic) string { return t.Topic })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetForLeaderEpochResponse)
		for _, t := range refused {
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.Partition, errTopicAuthorizationFailed, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzInitProducerID: WRITE on the transactional id; without one,
// IDEMPOTENT_WRITE on the cluster or WRITE on some topic.
func authzInitProducerID(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	if req.TransactionalID != nil {
		if !z.mayTxn(acl.OpWrite, *req.TransactionalID) {
			return refuseWhole(req, errTransactionalIDAuthorizationFail), nil
		}
		return nil, nil
	}
	if !z.mayCluster(acl.OpIdempotentWrite) && !z.mayByResourceType(acl.OpWrite, acl.ResourceTopic) {
		return refuseWhole(req, errClusterAuthorizationFailed), nil
	}
	return nil, nil
}

// authzMetadata: topics the principal may not DESCRIBE are hidden from a
// listing of all and refused when named; one that would be created needs
// CREATE on the cluster or the topic; authorized operations where asked.
func authzMetadata(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.MetadataRequest)
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	type refusal struct {
		name *string
		id   [16]byte
	}
	var refused []refusal
	askedNone := false // every topic named was refused
	if !all {
		autoCreate := z.s.cfg.AutoCreateTopics && (req.Version < 4 || req.AllowAutoTopicCreation)
		kept := req.Topics[:0]
		for _, t := range req.Topics {
			var name string
			switch {
			case t.Topic != nil:
				name = *t.Topic
			default:
				n, ok := z.s.topicByID(t.TopicID)
				if !ok {
					kept = append(kept, t) // UNKNOWN_TOPIC_ID, the handler's
					continue
				}
				name = n
			}
			switch {
			case !z.mayTopic(acl.OpDescribe, name):
				if t.Topic != nil {
					refused = append(refused, refusal{name: &name})
				} else {
					refused = append(refused, refusal{id: t.TopicID})
				}
			case autoCreate && !z.mayCluster(acl.OpCreate) && !z.mayTopic(acl.OpCreate, name) && !z.s.topicExists(name):
				refused = append(refused, refusal{name: &name})
			default:
				kept = append(kept, t)
			}
		}
		req.Topics = kept
		askedNone = len(kept) == 0
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.MetadataResponse)
		if askedNone {
			resp.Topics = resp.Topics[:0] // v0 read the empty list as "all"
		}
		if all {
			resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.MetadataResponseTopic) bool {
				return t.Topic != nil && !z.mayTopic(acl.OpDescribe, *t.Topic)
			})
		}
		if req.Version >= 8 && req.IncludeTopicAuthorizedOperations {
			for i := range resp.Topics {
				if t := &resp.Topics[i]; t.Topic != nil {
					t.AuthorizedOperations = z.operations(acl.ResourceTopic, *t.Topic)
				}
			}
		}
		if req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
			resp.AuthorizedOperations = 0
			if z.mayCluster(acl.OpDescribe) {
				resp.AuthorizedOperations = z.operations(acl.ResourceCluster, acl.ClusterName)
			}
		}
		for _, f := range refused {
			mt := kmsg.NewMetadataResponseTopic()
			mt.ErrorCode, mt.Topic, mt.TopicID = errTopicAuthorizationFailed, f.name, f.id
			mt.Partitions = []kmsg.MetadataResponseTopicPartition{}
			resp.Topics = append(resp.Topics, mt)
		}
	}
}

func (s *Server) topicExists(name string) bool {
	_, err := s.dir.DescribeTopic(name)
	return err == nil
}

// authzCreateTopics: CREATE on the cluster or on each topic, else
// TOPIC_AUTHORIZATION_FAILED; a topic created without DESCRIBE_CONFIGS
// on it gets its configs' error instead of its configs.
func authzCreateTopics(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	cluster := z.mayCluster(acl.OpCreate)
	var refused []string
	kept := req.Topics[:0]
	for _, t := range req.Topics {
		if cluster || z.mayTopic(acl.OpCreate, t.Topic) {
			kept = append(kept, t)
		} else {
			refused = append(refused, t.Topic)
		}
	}
	req.Topics = kept
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.CreateTopicsResponse)
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.ErrorCode == errNone && !z.mayTopic(acl.OpDescribeConfigs, t.Topic) {
				t.ConfigErrorCode, t.Configs = errTopicAuthorizationFailed, nil
			}
		}
		for _, name := range refused {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor = name, errTopicAuthorizationFailed, -1, -1
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzDeleteTopics: DELETE on each topic (and DESCRIBE, for one named by
// id), else TOPIC_AUTHORIZATION_FAILED.
func authzDeleteTopics(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	var refused []kmsg.DeleteTopicsResponseTopic
	keep := func(name *string, id [16]byte) bool {
		byID := name == nil
		n := ""
		if byID {
			var ok bool
			if n, ok = z.s.topicByID(id); !ok {
				return true // the handler's UNKNOWN_TOPIC_ID
			}
		} else {
			n = *name
		}
		if (byID && !z.mayTopic(acl.OpDescribe, n)) || !z.mayTopic(acl.OpDelete, n) {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = name, id, errTopicAuthorizationFailed
			if !byID {
				rt.Topic = &n
			}
			refused = append(refused, rt)
			return false
		}
		return true
	}
	if req.Version < 6 {
		req.TopicNames = slices.DeleteFunc(req.TopicNames, func(n string) bool { return !keep(&n, [16]byte{}) })
	} else {
		req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.DeleteTopicsRequestTopic) bool { return !keep(t.Topic, t.TopicID) })
	}
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteTopicsResponse)
		resp.Topics = append(resp.Topics, refused...)
	}
}

// authzCreatePartitions: ALTER on each topic.
func authzCreatePartitions(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	var refused []kmsg.CreatePartitionsRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpAlter, req.Topics, func(t *kmsg.CreatePartitionsRequestTopic) string { return t.Topic })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.CreatePartitionsResponse)
		for _, t := range refused {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			msg := "The topic authorization is failed."
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, errTopicAuthorizationFailed, &msg
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzDeleteRecords: DELETE on each topic.
func authzDeleteRecords(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	var refused []kmsg.DeleteRecordsRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpDelete, req.Topics, func(t *kmsg.DeleteRecordsRequestTopic) string { return t.Topic })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteRecordsResponse)
		for _, t := range refused {
			rt := kmsg.NewDeleteRecordsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDeleteRecordsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.LowWatermark = p.Partition, errTopicAuthorizationFailed, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzDescribeCluster: the cluster's authorized operations where asked
// (0 without DESCRIBE on it); nothing is refused.
func authzDescribeCluster(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeClusterRequest)
	if !req.IncludeClusterAuthorizedOperations {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeClusterResponse)
		resp.ClusterAuthorizedOperations = 0
		if z.mayCluster(acl.OpDescribe) {
			resp.ClusterAuthorizedOperations = z.operations(acl.ResourceCluster, acl.ClusterName)
		}
	}
}

// authzFindCoordinator: DESCRIBE on the group or transactional id each
// key names, else GROUP_ or TRANSACTIONAL_ID_AUTHORIZATION_FAILED; a
// share key needs CLUSTER_ACTION on the cluster.
func authzFindCoordinator(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	code := func(key string) int16 {
		switch req.CoordinatorType {
		case 0:
			if !z.mayGroup(acl.OpDescribe, key) {
				return errGroupAuthorizationFailed
			}
		case 1:
			if !z.mayTxn(acl.OpDescribe, key) {
				return errTransactionalIDAuthorizationFail
			}
		case 2:
			if !z.mayCluster(acl.OpClusterAction) {
				return errClusterAuthorizationFailed
			}
		}
		return errNone
	}
	if req.Version < 4 {
		if c := code(req.CoordinatorKey); c != errNone {
			resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode, resp.NodeID, resp.Port = c, -1, -1
			return resp, nil
		}
		return nil, nil
	}
	refused := map[string]int16{}
	req.CoordinatorKeys = slices.DeleteFunc(req.CoordinatorKeys, func(k string) bool {
		if c := code(k); c != errNone {
			refused[k] = c
			return true
		}
		return false
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.FindCoordinatorResponse)
		for _, k := range slices.Sorted(mapKeys(refused)) {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.ErrorCode, c.NodeID, c.Port = k, refused[k], -1, -1
			resp.Coordinators = append(resp.Coordinators, c)
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// authzOffsetCommit: READ on the group, else every partition fails; READ
// on each topic, else its partitions fail.
func authzOffsetCommit(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.OffsetCommitRequest)
	if !z.mayGroup(acl.OpRead, req.Group) {
		return refuseWhole(req, errGroupAuthorizationFailed), nil
	}
	var refused []kmsg.OffsetCommitRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpRead, req.Topics, func(t *kmsg.OffsetCommitRequestTopic) string {
		return z.topicOf(req.Version >= 10, t.Topic, t.TopicID)
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetCommitResponse)
		resp.Topics = append(resp.Topics, refuseWhole(&kmsg.OffsetCommitRequest{Topics: refused}, errTopicAuthorizationFailed).(*kmsg.OffsetCommitResponse).Topics...)
	}
}

// authzTxnOffsetCommit: WRITE on the transactional id, READ on the group,
// else every partition fails; READ on each topic, else its partitions.
func authzTxnOffsetCommit(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	if !z.mayTxn(acl.OpWrite, req.TransactionalID) {
		return refuseWhole(req, errTransactionalIDAuthorizationFail), nil
	}
	if !z.mayGroup(acl.OpRead, req.Group) {
		return refuseWhole(req, errGroupAuthorizationFailed), nil
	}
	var refused []kmsg.TxnOffsetCommitRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpRead, req.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) string {
		return z.topicOf(req.Version >= 6, t.Topic, t.TopicID)
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.TxnOffsetCommitResponse)
		resp.Topics = append(resp.Topics, refuseWhole(&kmsg.TxnOffsetCommitRequest{Topics: refused}, errTopicAuthorizationFailed).(*kmsg.TxnOffsetCommitResponse).Topics...)
	}
}

// authzOffsetFetch: DESCRIBE on each group, else the group fails; the
// topics the principal may not DESCRIBE are left out of a fetch of all
// and fail when named (v0–7: the request's one group, at the top).
func authzOffsetFetch(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	if req.Version < 8 {
		if !z.mayGroup(acl.OpDescribe, req.Group) {
			resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
			resp.ErrorCode = errGroupAuthorizationFailed
			return resp, nil
		}
		var refused []kmsg.OffsetFetchRequestTopic
		all := req.Topics == nil
		if !all {
			req.Topics, refused = keepTopics(z, acl.OpDescribe, req.Topics, func(t *kmsg.OffsetFetchRequestTopic) string { return t.Topic })
			if req.Topics == nil {
				req.Topics = []kmsg.OffsetFetchRequestTopic{}
			}
		}
		return nil, func(r kmsg.Response) {
			resp := r.(*kmsg.OffsetFetchResponse)
			if all {
				resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool { return !z.mayTopic(acl.OpDescribe, t.Topic) })
			}
			for _, t := range refused {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, errTopicAuthorizationFailed
					rp.Metadata = new(string)
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
	}
	refusedGroups := map[string]bool{}
	refusedTopics := map[string][]kmsg.OffsetFetchRequestGroupTopic{}
	allTopics := map[string]bool{}
	for i := range req.Groups {
		g := &req.Groups[i]
		if !z.mayGroup(acl.OpDescribe, g.Group) {
			refusedGroups[g.Group] = true
			continue
		}
		if g.Topics == nil {
			allTopics[g.Group] = true
			continue
		}
		var refused []kmsg.OffsetFetchRequestGroupTopic
		g.Topics, refused = keepTopics(z, acl.OpDescribe, g.Topics, func(t *kmsg.OffsetFetchRequestGroupTopic) string {
			return z.topicOf(req.Version >= 10, t.Topic, t.TopicID)
		})
		if g.Topics == nil {
			g.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
		}
		refusedTopics[g.Group] = refused
	}
	groups := req.Groups
	req.Groups = slices.DeleteFunc(slices.Clone(req.Groups), func(g kmsg.OffsetFetchRequestGroup) bool { return refusedGroups[g.Group] })
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetFetchResponse)
		byGroup := map[string]kmsg.OffsetFetchResponseGroup{}
		for _, g := range resp.Groups {
			if allTopics[g.Group] {
				g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool { return !z.mayTopic(acl.OpDescribe, t.Topic) })
			}
			for _, t := range refusedTopics[g.Group] {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic, rt.TopicID = t.Topic, t.TopicID
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, errTopicAuthorizationFailed
					rp.Metadata = new(string)
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
			byGroup[g.Group] = g
		}
		// The answer keeps the request's order of groups.
		resp.Groups = resp.Groups[:0]
		for _, g := range groups {
			if refusedGroups[g.Group] {
				rg := kmsg.NewOffsetFetchResponseGroup()
				rg.Group, rg.ErrorCode = g.Group, errGroupAuthorizationFailed
				resp.Groups = append(resp.Groups, rg)
			} else if rg, ok := byGroup[g.Group]; ok {
				resp.Groups = append(resp.Groups, rg)
				delete(byGroup, g.Group)
			}
		}
	}
}

// authzListGroups: every group with DESCRIBE on the cluster, else those
// the principal may DESCRIBE.
func authzListGroups(z *authCtx, _ kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if z.mayCluster(acl.OpDescribe) {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ListGroupsResponse)
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return !z.mayGroup(acl.OpDescribe, g.Group) })
	}
}

// authzDescribeGroups: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED;
// the groups' authorized operations where asked.
func authzDescribeGroups(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	order := req.Groups
	refused := map[string]bool{}
	req.Groups = slices.DeleteFunc(slices.Clone(req.Groups), func(g string) bool {
		refused[g] = !z.mayGroup(acl.OpDescribe, g)
		return refused[g]
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeGroupsResponse)
		byGroup := map[string]kmsg.DescribeGroupsResponseGroup{}
		for _, g := range resp.Groups {
			if req.IncludeAuthorizedOperations {
				g.AuthorizedOperations = z.operations(acl.ResourceGroup, g.Group)
			}
			byGroup[g.Group] = g
		}
		resp.Groups = resp.Groups[:0]
		for _, name := range order {
			if refused[name] {
				g := kmsg.NewDescribeGroupsResponseGroup()
				g.Group, g.ErrorCode, g.Members = name, errGroupAuthorizationFailed, []kmsg.DescribeGroupsResponseGroupMember{}
				resp.Groups = append(resp.Groups, g)
			} else if g, ok := byGroup[name]; ok {
				resp.Groups = append(resp.Groups, g)
				delete(byGroup, name)
			}
		}
	}
}

// authzDeleteGroups: DELETE on each group.
func authzDeleteGroups(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	var refused []string
	req.Groups = slices.DeleteFunc(req.Groups, func(g string) bool {
		if z.mayGroup(acl.OpDelete, g) {
			return false
		}
		refused = append(refused, g)
		return true
	})
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteGroupsResponse)
		for _, g := range refused {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, errGroupAuthorizationFailed
			resp.Groups = append(resp.Groups, rg)
		}
	}
}

// authzOffsetDelete: DELETE on the group, else the whole request fails;
// READ on each topic, else its partitions fail.
func authzOffsetDelete(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	if !z.mayGroup(acl.OpDelete, req.Group) {
		return refuseWhole(req, errGroupAuthorizationFailed), nil
	}
	var refused []kmsg.OffsetDeleteRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpRead, req.Topics, func(t *kmsg.OffsetDeleteRequestTopic) string { return t.Topic })
	if len(refused) == 0 {
		return nil, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.OffsetDeleteResponse)
		for _, t := range refused {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzAddPartitionsToTxn: v4+ (a broker's) needs CLUSTER_ACTION on the
// cluster; v0–3 (a client's) WRITE on the transactional
// id, else every partition fails; WRITE on each topic, else its
// partitions fail and the others are not attempted.
func authzAddPartitionsToTxn(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	if req.Version >= 4 { // a broker's: CLUSTER_ACTION on the cluster
		if !z.mayCluster(acl.OpClusterAction) {
			resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ErrorCode = errClusterAuthorizationFailed
			return resp, nil
		}
		return nil, nil
	}
	answer := func(code func(topic string) int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, code(t.Topic)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if !z.mayTxn(acl.OpWrite, req.TransactionalID) {
		return answer(func(string) int16 { return errTransactionalIDAuthorizationFail }), nil
	}
	refused := map[string]bool{}
	for _, t := range req.Topics {
		if !log.IsInternalTopic(t.Topic) && !z.mayTopic(acl.OpWrite, t.Topic) {
			refused[t.Topic] = true
		}
	}
	if len(refused) == 0 {
		return nil, nil
	}
	return answer(func(topic string) int16 {
		if refused[topic] {
			return errTopicAuthorizationFailed
		}
		return errOperationNotAttempted
	}), nil
}

// authzAddOffsetsToTxn: WRITE on the transactional id, READ on the group.
func authzAddOffsetsToTxn(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	switch {
	case !z.mayTxn(acl.OpWrite, req.TransactionalID):
		return refuseWhole(req, errTransactionalIDAuthorizationFail), nil
	case !z.mayGroup(acl.OpRead, req.Group):
		return refuseWhole(req, errGroupAuthorizationFailed), nil
	}
	return nil, nil
}

// authzEndTxn: WRITE on the transactional id.
func authzEndTxn(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.EndTxnRequest)
	if !z.mayTxn(acl.OpWrite, req.TransactionalID) {
		return refuseWhole(req, errTransactionalIDAuthorizationFail), nil
	}
	return nil, nil
}
