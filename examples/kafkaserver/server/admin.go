package server

import (
	"context"
	"errors"
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

// handleIncrementalAlterConfigs alters topics', groups' and the broker's
// configurations: each resource's operations are applied to its overrides
// in order, then the result replaces them (log.Dir.AlterTopicConfig,
// log.Dir.AlterGroupConfig, log.Dir.AlterBrokerConfig for the dynamic
// broker properties, log.DynamicBrokerProperties) or, with validate-only,
// is only checked.
func (s *Server) handleIncrementalAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	for _, r := range req.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		var err error
		switch r.ResourceType {
		case resourceTopic:
			err = s.alterTopic(ctx, r.ResourceName, req.ValidateOnly, func(props, current map[string]string) error {
				return applyOps(props, current, r.Configs, true)
			})
		case resourceGroup:
			err = s.alterGroup(ctx, r.ResourceName, req.ValidateOnly, func(props map[string]string) error {
				return applyOps(props, nil, r.Configs, false)
			})
		case resourceBroker:
			err = s.alterBroker(ctx, r.ResourceName, req.ValidateOnly, func(props, current map[string]string) error {
				return applyOps(props, current, r.Configs, true)
			})
		default:
			err = errNotAlterable(r.ResourceType)
		}
		rr.ErrorCode, rr.ErrorMessage = alterCode(err), messageOf(err)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// errInvalidResource is the cause of the alterations answered with
// INVALID_REQUEST: a resource type not served, a group without a name.
var errInvalidResource = errors.New("invalid resource")

func errNotAlterable(t kmsg.ConfigResourceType) error {
	return fmt.Errorf("%w: resource type %d cannot be altered here (only topics, groups and the broker)", errInvalidResource, t)
}

func alterCode(err error) int16 {
	if errors.Is(err, errInvalidResource) {
		return errInvalidRequest
	}
	return codeOf(err)
}

// alterGroup applies change to a copy of group's overrides, then stores
// the result or, with validate, only checks it. An empty group name is
// Kafka's default group resource, which it refuses (INVALID_REQUEST).
func (s *Server) alterGroup(ctx context.Context, group string, validate bool, change func(map[string]string) error) error {
	if group == "" {
		return fmt.Errorf("%w: default group resources are not allowed", errInvalidResource)
	}
	props := s.dir.GroupConfigOverrides(group)
	if props == nil {
		props = map[string]string{}
	}
	if err := change(props); err != nil {
		return err
	}
	if validate {
		_, err := s.dir.Config().GroupConfigWith(props)
		return err
	}
	_, err := s.dir.AlterGroupConfig(ctx, group, props)
	return err
}

// applyOps applies IncrementalAlterConfigs operations to props. current
// holds the effective values that APPEND and SUBTRACT start from when
// lists may be appended to (topics' cleanup.policy); without lists (every
// group property kafkalite accepts is an INT, a BOOLEAN or a STRING), they
// are refused as Kafka refuses them for a property not of type LIST.
func applyOps(props, current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, lists bool) error {
	for _, c := range ops {
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
			if !lists {
				return fmt.Errorf("%w: %s: cannot APPEND or SUBTRACT to a property whose type is not LIST", log.ErrInvalidConfig, c.Name)
			}
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
	return nil
}

// handleAlterConfigs (the legacy API kafka-configs.sh used before
// IncrementalAlterConfigs) replaces a topic's, a group's or the broker's
// dynamic settings with the configs given, as Kafka does; validate-only
// only checks them.
func (s *Server) handleAlterConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := kmsg.NewPtrAlterConfigsResponse()
	for _, r := range req.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		props := make(map[string]string, len(r.Configs))
		for _, c := range r.Configs {
			if c.Value != nil {
				props[c.Name] = *c.Value
			} else {
				props[c.Name] = ""
			}
		}
		var err error
		switch r.ResourceType {
		case resourceTopic:
			err = s.alterTopic(ctx, r.ResourceName, req.ValidateOnly, func(m, _ map[string]string) error {
				clear(m)
				maps.Copy(m, props)
				return nil
			})
		case resourceGroup:
			err = s.alterGroup(ctx, r.ResourceName, req.ValidateOnly, func(m map[string]string) error {
				clear(m)
				maps.Copy(m, props)
				return nil
			})
		case resourceBroker:
			err = s.alterBroker(ctx, r.ResourceName, req.ValidateOnly, func(m, _ map[string]string) error {
				clear(m)
				maps.Copy(m, props)
				return nil
			})
		default:
			err = errNotAlterable(r.ResourceType)
		}
		rr.ErrorCode, rr.ErrorMessage = alterCode(err), messageOf(err)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// alterTopic applies change to a copy of topic's overrides (current
// holds its effective properties), then stores the result or, with
// validate, only checks it.
func (s *Server) alterTopic(ctx context.Context, topic string, validate bool, change func(props, current map[string]string) error) error {
	td, err := s.dir.DescribeTopic(topic)
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
	if err := change(props, td.Config.Properties()); err != nil {
		return err
	}
	if validate {
		_, _, err := s.dir.Config().DefaultTopic.WithProperties(props)
		return err
	}
	_, err = s.dir.AlterTopicConfig(ctx, topic, props)
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
