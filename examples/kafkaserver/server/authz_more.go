package server

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log/acl"
)

// The rules of the KIP-848 and share group APIs, the transaction
// descriptions and the configuration APIs, as Kafka 4.4's KafkaApis
// checks them.

func init() {
	for key, rule := range map[int16]authzRule{
		kmsg.ConsumerGroupHeartbeat.Int16(): authzGroupHeartbeat(func(r kmsg.Request) (string, []string) {
			req := r.(*kmsg.ConsumerGroupHeartbeatRequest)
			return req.Group, req.SubscribedTopicNames
		}),
		kmsg.ShareGroupHeartbeat.Int16(): authzGroupHeartbeat(func(r kmsg.Request) (string, []string) {
			req := r.(*kmsg.ShareGroupHeartbeatRequest)
			return req.GroupID, req.SubscribedTopicNames
		}),
		kmsg.ConsumerGroupDescribe.Int16():        authzConsumerGroupDescribe,
		kmsg.ShareGroupDescribe.Int16():           authzShareGroupDescribe,
		kmsg.ShareFetch.Int16():                   authzShareFetch,
		kmsg.ShareAcknowledge.Int16():             authzShareAcknowledge,
		kmsg.DescribeShareGroupOffsets.Int16():    authzDescribeShareGroupOffsets,
		kmsg.AlterShareGroupOffsets.Int16():       authzAlterShareGroupOffsets,
		kmsg.DeleteShareGroupOffsets.Int16():      authzDeleteShareGroupOffsets,
		kmsg.ListTransactions.Int16():             authzListTransactions,
		kmsg.DescribeTransactions.Int16():         authzDescribeTransactions,
		kmsg.DescribeProducers.Int16():            authzDescribeProducers,
		kmsg.DescribeConfigs.Int16():              authzDescribeConfigs,
		kmsg.AlterConfigs.Int16():                 authzAlterConfigs,
		kmsg.IncrementalAlterConfigs.Int16():      authzIncrementalAlterConfigs,
		kmsg.DescribeLogDirs.Int16():              authzDescribeLogDirs,
		kmsg.AlterReplicaLogDirs.Int16():          authzAlterReplicaLogDirs,
		kmsg.DescribeTopicPartitions.Int16():      authzDescribeTopicPartitions,
		kmsg.ElectLeaders.Int16():                 authzClusterWhole(acl.OpAlter),
		kmsg.UpdateFeatures.Int16():               authzClusterWhole(acl.OpAlter),
		kmsg.DescribeUserSCRAMCredentials.Int16(): authzClusterWhole(acl.OpDescribe),
		kmsg.AlterUserSCRAMCredentials.Int16():    authzClusterWhole(acl.OpAlter),
		kmsg.DescribeClientQuotas.Int16():         authzClusterWhole(acl.OpDescribeConfigs),
		kmsg.AlterClientQuotas.Int16():            authzClusterWhole(acl.OpAlterConfigs),
		// The controller's APIs, as Kafka 4.4's ControllerApis and
		// KafkaApis check them.
		kmsg.AlterPartitionAssignments.Int16():  authzClusterWhole(acl.OpAlter),
		kmsg.ListPartitionReassignments.Int16(): authzClusterWhole(acl.OpDescribe),
		kmsg.DescribeQuorum.Int16():             authzClusterWhole(acl.OpDescribe),
		kmsg.ListConfigResources.Int16():        authzClusterWhole(acl.OpDescribeConfigs),
	} {
		authzRules[key] = rule
	}
}

// authzGroupHeartbeat: READ on the group, else GROUP_AUTHORIZATION_FAILED;
// DESCRIBE on every topic named in the subscription, else
// TOPIC_AUTHORIZATION_FAILED (Kafka's handleConsumerGroupHeartbeat and
// handleShareGroupHeartbeat). A regular expression's topics are not
// checked here: the coordinator resolves it over every topic.
func authzGroupHeartbeat(of func(kmsg.Request) (string, []string)) authzRule {
	return func(z *authCtx, req kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
		group, topics := of(req)
		code := int16(0)
		switch {
		case !z.mayGroup(acl.OpRead, group):
			code = errGroupAuthorizationFailed
		case slices.ContainsFunc(topics, func(t string) bool { return !z.mayTopic(acl.OpDescribe, t) }):
			code = errTopicAuthorizationFailed
		default:
			return nil, nil
		}
		switch r := req.ResponseKind().(type) {
		case *kmsg.ConsumerGroupHeartbeatResponse:
			r.ErrorCode = code
			return r, nil
		case *kmsg.ShareGroupHeartbeatResponse:
			r.ErrorCode = code
			return r, nil
		}
		return nil, nil
	}
}

// authzConsumerGroupDescribe: DESCRIBE on each group, else the group's
// GROUP_AUTHORIZATION_FAILED.
func authzConsumerGroupDescribe(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	var refused []string
	req.Groups = slices.DeleteFunc(req.Groups, func(g string) bool {
		no := !z.mayGroup(acl.OpDescribe, g)
		if no {
			refused = append(refused, g)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range refused {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = g, errGroupAuthorizationFailed
			resp.Groups = append(resp.Groups, rg)
		}
	}
}

// authzShareGroupDescribe: DESCRIBE on each group, else the group's
// GROUP_AUTHORIZATION_FAILED.
func authzShareGroupDescribe(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.ShareGroupDescribeRequest)
	var refused []string
	req.GroupIDs = slices.DeleteFunc(req.GroupIDs, func(g string) bool {
		no := !z.mayGroup(acl.OpDescribe, g)
		if no {
			refused = append(refused, g)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ShareGroupDescribeResponse)
		for _, g := range refused {
			rg := kmsg.NewShareGroupDescribeResponseGroup()
			rg.GroupID, rg.ErrorCode = g, errGroupAuthorizationFailed
			resp.Groups = append(resp.Groups, rg)
		}
	}
}

// mayTopicID reports whether the principal may perform op on the topic of
// id; an id of no topic is the handler's to answer.
func (z *authCtx) mayTopicID(op acl.Operation, id [16]byte) bool {
	name, ok := z.s.topicByID(id)
	return !ok || z.mayTopic(op, name)
}

// authzShareFetch: READ on the group, else GROUP_AUTHORIZATION_FAILED for
// the whole request; READ on each topic, else its partitions'
// TOPIC_AUTHORIZATION_FAILED (acquisition and acknowledgement alike).
func authzShareFetch(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.ShareFetchRequest)
	if req.GroupID == nil || !z.mayGroup(acl.OpRead, *req.GroupID) {
		resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		return resp, nil
	}
	var refused []kmsg.ShareFetchRequestTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.ShareFetchRequestTopic) bool {
		no := !z.mayTopicID(acl.OpRead, t.TopicID)
		if no {
			refused = append(refused, t)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ShareFetchResponse)
		for _, t := range refused {
			rt := kmsg.NewShareFetchResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewShareFetchResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuthorizationFailed
				if len(p.AcknowledgementBatches) > 0 {
					rp.AcknowledgeErrorCode = errTopicAuthorizationFailed
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzShareAcknowledge: as authzShareFetch.
func authzShareAcknowledge(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	if req.GroupID == nil || !z.mayGroup(acl.OpRead, *req.GroupID) {
		resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		return resp, nil
	}
	var refused []kmsg.ShareAcknowledgeRequestTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.ShareAcknowledgeRequestTopic) bool {
		no := !z.mayTopicID(acl.OpRead, t.TopicID)
		if no {
			refused = append(refused, t)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ShareAcknowledgeResponse)
		for _, t := range refused {
			rt := kmsg.NewShareAcknowledgeResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzDescribeShareGroupOffsets: DESCRIBE on each group, else the
// group's GROUP_AUTHORIZATION_FAILED; DESCRIBE on each topic named, else
// its partitions' TOPIC_AUTHORIZATION_FAILED; a group asked for all its
// topics gets only those the principal may describe.
func authzDescribeShareGroupOffsets(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
	var refusedGroups []string
	refusedTopics := map[string][]kmsg.DescribeShareGroupOffsetsRequestGroupTopic{}
	all := map[string]bool{}
	req.Groups = slices.DeleteFunc(req.Groups, func(g kmsg.DescribeShareGroupOffsetsRequestGroup) bool {
		if !z.mayGroup(acl.OpDescribe, g.GroupID) {
			refusedGroups = append(refusedGroups, g.GroupID)
			return true
		}
		return false
	})
	for i := range req.Groups {
		g := &req.Groups[i]
		if g.Topics == nil {
			all[g.GroupID] = true
			continue
		}
		g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.DescribeShareGroupOffsetsRequestGroupTopic) bool {
			no := !z.mayTopic(acl.OpDescribe, t.Topic)
			if no {
				refusedTopics[g.GroupID] = append(refusedTopics[g.GroupID], t)
			}
			return no
		})
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeShareGroupOffsetsResponse)
		for i := range resp.Groups {
			g := &resp.Groups[i]
			if all[g.GroupID] {
				g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.DescribeShareGroupOffsetsResponseGroupTopic) bool {
					return !z.mayTopic(acl.OpDescribe, t.Topic)
				})
			}
			for _, t := range refusedTopics[g.GroupID] {
				rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
					rp.Partition, rp.ErrorCode, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, errTopicAuthorizationFailed, -1, -1, -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
		}
		for _, id := range refusedGroups {
			rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			rg.GroupID, rg.ErrorCode = id, errGroupAuthorizationFailed
			resp.Groups = append(resp.Groups, rg)
		}
	}
}

// authzAlterShareGroupOffsets: READ on the group, else
// GROUP_AUTHORIZATION_FAILED for the whole request; READ on each topic,
// else its partitions' TOPIC_AUTHORIZATION_FAILED.
func authzAlterShareGroupOffsets(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	if !z.mayGroup(acl.OpRead, req.GroupID) {
		resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		return resp, nil
	}
	var refused []kmsg.AlterShareGroupOffsetsRequestTopic
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.AlterShareGroupOffsetsRequestTopic) bool {
		no := !z.mayTopic(acl.OpRead, t.Topic)
		if no {
			refused = append(refused, t)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.AlterShareGroupOffsetsResponse)
		for _, t := range refused {
			rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errTopicAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzDeleteShareGroupOffsets: DELETE on the group, else
// GROUP_AUTHORIZATION_FAILED for the whole request; READ on each topic,
// else the topic's TOPIC_AUTHORIZATION_FAILED.
func authzDeleteShareGroupOffsets(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DeleteShareGroupOffsetsRequest)
	if !z.mayGroup(acl.OpDelete, req.GroupID) {
		resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
		resp.ErrorCode = errGroupAuthorizationFailed
		return resp, nil
	}
	var refused []string
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.DeleteShareGroupOffsetsRequestTopic) bool {
		no := !z.mayTopic(acl.OpRead, t.Topic)
		if no {
			refused = append(refused, t.Topic)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteShareGroupOffsetsResponse)
		for _, t := range refused {
			rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
			rt.Topic, rt.ErrorCode = t, errTopicAuthorizationFailed
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// authzListTransactions: only the transactional ids the principal may
// DESCRIBE are listed.
func authzListTransactions(z *authCtx, _ kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.ListTransactionsResponse)
		resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
			return !z.mayTxn(acl.OpDescribe, s.TransactionalID)
		})
	}
}

// authzDescribeTransactions: DESCRIBE on each transactional id, else its
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the topics of a transaction the
// principal may not DESCRIBE are left out.
func authzDescribeTransactions(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	var refused []string
	req.TransactionalIDs = slices.DeleteFunc(req.TransactionalIDs, func(id string) bool {
		no := !z.mayTxn(acl.OpDescribe, id)
		if no {
			refused = append(refused, id)
		}
		return no
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeTransactionsResponse)
		for i := range resp.TransactionStates {
			s := &resp.TransactionStates[i]
			s.Topics = slices.DeleteFunc(s.Topics, func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) bool {
				return !z.mayTopic(acl.OpDescribe, t.Topic)
			})
		}
		for _, id := range refused {
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.ErrorCode, s.ProducerID, s.ProducerEpoch, s.StartTimestamp = id, errTransactionalIDAuthorizationFail, -1, -1, -1
			resp.TransactionStates = append(resp.TransactionStates, s)
		}
	}
}

// authzDescribeProducers: READ on each topic, else its partitions'
// TOPIC_AUTHORIZATION_FAILED.
func authzDescribeProducers(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeProducersRequest)
	var refused []kmsg.DescribeProducersRequestTopic
	req.Topics, refused = keepTopics(z, acl.OpRead, req.Topics, func(t *kmsg.DescribeProducersRequestTopic) string { return t.Topic })
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeProducersResponse)
		for _, t := range refused {
			rt := kmsg.NewDescribeProducersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeProducersResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, errTopicAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
}

// configAuthorized reports whether the principal may perform op (DESCRIBE_CONFIGS
// or ALTER_CONFIGS) on a config resource, and the code of a refusal:
// brokers and broker loggers are the cluster's, topics and groups their
// own (Kafka's authorizedResources of handleDescribeConfigsRequest and
// the alter handlers). Other types are the handler's to refuse.
func configAuthorized(z *authCtx, op acl.Operation, t kmsg.ConfigResourceType, name string) (bool, int16) {
	switch t {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		return z.mayCluster(op), errClusterAuthorizationFailed
	case kmsg.ConfigResourceTypeTopic:
		return z.mayTopic(op, name), errTopicAuthorizationFailed
	case kmsg.ConfigResourceTypeGroupConfig:
		return z.mayGroup(op, name), errGroupAuthorizationFailed
	}
	return true, 0
}

// refusedConfig is a config resource authorization refused, with the code.
type refusedConfig struct {
	t    kmsg.ConfigResourceType
	name string
	code int16
}

// dropRefusedConfigs removes from resources those the principal may not
// perform op on, and returns them with their codes.
func dropRefusedConfigs[R any](z *authCtx, op acl.Operation, resources *[]R, key func(*R) (kmsg.ConfigResourceType, string)) []refusedConfig {
	var refused []refusedConfig
	*resources = slices.DeleteFunc(*resources, func(r R) bool {
		t, name := key(&r)
		ok, code := configAuthorized(z, op, t, name)
		if !ok {
			refused = append(refused, refusedConfig{t, name, code})
		}
		return !ok
	})
	return refused
}

// authzDescribeConfigs: DESCRIBE_CONFIGS on each resource, else the
// resource's error.
func authzDescribeConfigs(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	refused := dropRefusedConfigs(z, acl.OpDescribeConfigs, &req.Resources, func(r *kmsg.DescribeConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return r.ResourceType, r.ResourceName
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeConfigsResponse)
		for _, f := range refused {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = f.t, f.name, f.code
			resp.Resources = append(resp.Resources, rr)
		}
	}
}

// authzAlterConfigs: ALTER_CONFIGS on each resource, else the resource's
// error.
func authzAlterConfigs(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	refused := dropRefusedConfigs(z, acl.OpAlterConfigs, &req.Resources, func(r *kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return r.ResourceType, r.ResourceName
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.AlterConfigsResponse)
		for _, f := range refused {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = f.t, f.name, f.code
			resp.Resources = append(resp.Resources, rr)
		}
	}
}

// authzIncrementalAlterConfigs: as authzAlterConfigs.
func authzIncrementalAlterConfigs(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	refused := dropRefusedConfigs(z, acl.OpAlterConfigs, &req.Resources, func(r *kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
		return r.ResourceType, r.ResourceName
	})
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.IncrementalAlterConfigsResponse)
		for _, f := range refused {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = f.t, f.name, f.code
			resp.Resources = append(resp.Resources, rr)
		}
	}
}

// authzClusterWhole refuses a request unless the principal may perform op
// on the cluster: the whole request's CLUSTER_AUTHORIZATION_FAILED
// (ElectLeaders, UpdateFeatures, the SCRAM credential and client quota
// APIs, as Kafka's handlers refuse them).
func authzClusterWhole(op acl.Operation) authzRule {
	return func(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
		if z.mayCluster(op) {
			return nil, nil
		}
		switch req := kreq.(type) {
		case *kmsg.ElectLeadersRequest:
			resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
			resp.ErrorCode = errClusterAuthorizationFailed
			for _, t := range req.Topics {
				rt := kmsg.NewElectLeadersResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewElectLeadersResponseTopicPartition()
					rp.Partition, rp.ErrorCode = p, errClusterAuthorizationFailed
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		case *kmsg.UpdateFeaturesRequest:
			resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
			resp.ErrorCode = errClusterAuthorizationFailed
			for _, u := range req.FeatureUpdates {
				r := kmsg.NewUpdateFeaturesResponseResult()
				r.Feature, r.ErrorCode = u.Feature, errClusterAuthorizationFailed
				resp.Results = append(resp.Results, r)
			}
			return resp, nil
		case *kmsg.DescribeUserSCRAMCredentialsRequest:
			resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
			resp.ErrorCode = errClusterAuthorizationFailed
			return resp, nil
		case *kmsg.AlterUserSCRAMCredentialsRequest:
			resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
			users := map[string]bool{}
			add := func(user string) {
				if !users[user] {
					users[user] = true
					r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
					r.User, r.ErrorCode = user, errClusterAuthorizationFailed
					resp.Results = append(resp.Results, r)
				}
			}
			for _, d := range req.Deletions {
				add(d.Name)
			}
			for _, u := range req.Upsertions {
				add(u.Name)
			}
			return resp, nil
		case *kmsg.DescribeClientQuotasRequest:
			resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
			resp.ErrorCode, resp.Entries = errClusterAuthorizationFailed, []kmsg.DescribeClientQuotasResponseEntry{}
			return resp, nil
		case *kmsg.AlterClientQuotasRequest:
			resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
			for _, e := range req.Entries {
				re := kmsg.NewAlterClientQuotasResponseEntry()
				re.ErrorCode = errClusterAuthorizationFailed
				for _, en := range e.Entity {
					ree := kmsg.NewAlterClientQuotasResponseEntryEntity()
					ree.Type, ree.Name = en.Type, en.Name
					re.Entity = append(re.Entity, ree)
				}
				resp.Entries = append(resp.Entries, re)
			}
			return resp, nil
		case *kmsg.AlterPartitionAssignmentsRequest:
			// Kafka's controller refuses the request as a whole: the
			// error and its message at the top and on every partition.
			resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
			msg := clusterAuthorizationFailedMessage
			resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
			for _, t := range req.Topics {
				rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
					rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, errClusterAuthorizationFailed, &msg
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		case *kmsg.ListPartitionReassignmentsRequest:
			// Kafka's error response names each topic asked, with its
			// partitions and no replicas.
			resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
			msg := clusterAuthorizationFailedMessage
			resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
			for _, t := range req.Topics {
				rt := kmsg.NewListPartitionReassignmentsResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
					rp.Partition = p
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		case *kmsg.DescribeQuorumRequest:
			resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
			msg := clusterAuthorizationFailedMessage
			resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
			return resp, nil
		case *kmsg.ListConfigResourcesRequest:
			resp := req.ResponseKind().(*kmsg.ListConfigResourcesResponse)
			resp.ErrorCode = errClusterAuthorizationFailed
			return resp, nil
		}
		return nil, nil
	}
}

// clusterAuthorizationFailedMessage is Kafka's message of
// CLUSTER_AUTHORIZATION_FAILED, for the responses that carry one.
const clusterAuthorizationFailedMessage = "Cluster authorization failed."

// authzDescribeLogDirs: DESCRIBE on the cluster, else no directories and
// CLUSTER_AUTHORIZATION_FAILED (v3+'s error code).
func authzDescribeLogDirs(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if z.mayCluster(acl.OpDescribe) {
		return nil, nil
	}
	resp := kreq.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	resp.ErrorCode = errClusterAuthorizationFailed
	return resp, nil
}

// authzAlterReplicaLogDirs: ALTER on the cluster, else every partition's
// CLUSTER_AUTHORIZATION_FAILED.
func authzAlterReplicaLogDirs(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	if z.mayCluster(acl.OpAlter) {
		return nil, nil
	}
	req := kreq.(*kmsg.AlterReplicaLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	for _, d := range req.Dirs {
		for _, t := range d.Topics {
			rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, errClusterAuthorizationFailed
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp, nil
}

// authzDescribeTopicPartitions: DESCRIBE on each topic named, else its
// TOPIC_AUTHORIZATION_FAILED; a listing of all leaves out the topics the
// principal may not describe; authorized operations filled in.
func authzDescribeTopicPartitions(z *authCtx, kreq kmsg.Request) (kmsg.Response, func(kmsg.Response)) {
	req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
	all := len(req.Topics) == 0
	var refused []string
	req.Topics = slices.DeleteFunc(req.Topics, func(t kmsg.DescribeTopicPartitionsRequestTopic) bool {
		no := !z.mayTopic(acl.OpDescribe, t.Topic)
		if no {
			refused = append(refused, t.Topic)
		}
		return no
	})
	if !all && len(req.Topics) == 0 {
		resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
		for _, name := range refused {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), errTopicAuthorizationFailed
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	return nil, func(r kmsg.Response) {
		resp := r.(*kmsg.DescribeTopicPartitionsResponse)
		resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.DescribeTopicPartitionsResponseTopic) bool {
			return t.Topic != nil && t.ErrorCode == 0 && !z.mayTopic(acl.OpDescribe, *t.Topic)
		})
		for i := range resp.Topics {
			if t := &resp.Topics[i]; t.Topic != nil && t.ErrorCode == 0 {
				t.AuthorizedOperations = z.operations(acl.ResourceTopic, *t.Topic)
			}
		}
		for _, name := range refused {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), errTopicAuthorizationFailed
			resp.Topics = append(resp.Topics, rt)
		}
	}
}
