package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// IncrementalAlterConfigs operations (Kafka's AlterConfigOp.OpType).
const (
	opSet      = 0
	opDelete   = 1
	opAppend   = 2
	opSubtract = 3
)

// handleIncrementalAlterConfigs alters topics' configurations: each
// resource's operations are applied to the topic's overrides in order,
// then the result replaces them (log.Dir.AlterTopicConfig) or, with
// validate-only, is only checked. Broker resources are refused: the
// directory's configuration is the program's, not the clients'.
func (s *Server) handleIncrementalAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	for _, r := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		err := s.alterTopic(ctx, r, req.ValidateOnly)
		rr.ErrorCode, rr.ErrorMessage = codeOf(err), messageOf(err)
		if r.ResourceType != resourceTopic {
			rr.ErrorCode = errInvalidRequest
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func (s *Server) alterTopic(ctx context.Context, r kmsg.IncrementalAlterConfigsRequestResource, validate bool) error {
	if r.ResourceType != resourceTopic {
		return fmt.Errorf("resource type %d cannot be altered here (only topics)", r.ResourceType)
	}
	td, err := s.dir.DescribeTopic(r.ResourceName)
	if err != nil {
		return err
	}
	if td.Internal {
		// Refused before validation too (Dir.AlterTopicConfig refuses
		// it as well): the coordinators' topics keep their configuration.
		return fmt.Errorf("%w: the configuration of %s cannot be altered", log.ErrInternalTopic, td.Name)
	}
	props := maps.Clone(td.Overrides)
	if props == nil {
		props = map[string]string{}
	}
	current := td.Config.Properties()
	for _, c := range r.Configs {
		value := ""
		if c.Value != nil {
			value = *c.Value
		}
		switch c.Op {
		case opSet:
			props[c.Name] = value
		case opDelete:
			delete(props, c.Name)
		case opAppend, opSubtract:
			// List-valued properties (cleanup.policy): comma-separated.
			var list []string
			if v := current[c.Name]; v != "" {
				list = strings.Split(v, ",")
			}
			if o, ok := props[c.Name]; ok {
				list = strings.Split(o, ",")
			}
			for _, item := range strings.Split(value, ",") {
				if c.Op == opAppend && !slices.Contains(list, item) {
					list = append(list, item)
				}
				if c.Op == opSubtract {
					list = slices.DeleteFunc(list, func(x string) bool { return x == item })
				}
			}
			props[c.Name] = strings.Join(list, ",")
		default:
			return fmt.Errorf("%w: operation %d", log.ErrInvalidConfig, c.Op)
		}
	}
	if validate {
		_, _, err := s.dir.Config().DefaultTopic.WithProperties(props)
		return err
	}
	_, err = s.dir.AlterTopicConfig(ctx, r.ResourceName, props)
	return err
}

// handleDescribeProducers answers with each partition's producer state
// (log.Log.Producers), as kafka-transactions describe-producers shows it.
func (s *Server) handleDescribeProducers(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeProducersRequest)
	resp := kmsg.NewPtrDescribeProducersResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = p
			l, err := s.dir.Partition(t.Topic, p)
			if err != nil {
				rp.ErrorCode, rp.ErrorMessage = codeOf(err), messageOf(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			for _, pi := range l.Producers() {
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = pi.ProducerID, int32(pi.ProducerEpoch), pi.LastSequence
				ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = pi.LastTimestamp, pi.CoordinatorEpoch, pi.CurrentTxnStartOffset
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
