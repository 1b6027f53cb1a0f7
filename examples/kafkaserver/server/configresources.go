package server

import (
	"context"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config resource types of ListConfigResources beyond DescribeConfigs'.
const (
	resourceBrokerLogger  = kmsg.ConfigResourceTypeBrokerLogger
	resourceClientMetrics = kmsg.ConfigResourceTypeClientMetrics
)

// listableResourceTypes are the types ListConfigResources may be asked
// for at version v, as Kafka 4.4's ListConfigResourcesRequest allows
// them: v0 (KIP-714's ListClientMetricsResources) only client metrics,
// v1 (KIP-1142) topics, brokers, broker loggers, client metrics and
// groups.
func listableResourceTypes(v int16) []kmsg.ConfigResourceType {
	if v == 0 {
		return []kmsg.ConfigResourceType{resourceClientMetrics}
	}
	return []kmsg.ConfigResourceType{resourceTopic, resourceBroker, resourceBrokerLogger, resourceClientMetrics, resourceGroup}
}

// handleListConfigResources lists the config resources of the types asked
// (every type the version allows when none is asked; a type it does not
// allow answers UNSUPPORTED_VERSION with nothing listed), in Kafka 4.4's
// order: the groups with a configuration of their own, the client metrics
// subscriptions (none: kafkalite has none), the broker, then every topic,
// the internal ones too. Kafka also lists the broker as a BROKER_LOGGER
// resource; kafkalite has no loggers to configure (DescribeConfigs does
// not serve the type), so it lists none.
func (s *Server) handleListConfigResources(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListConfigResourcesRequest)
	resp := kmsg.NewPtrListConfigResourcesResponse()
	allowed := listableResourceTypes(req.Version)
	wanted := allowed
	if len(req.ResourceTypes) > 0 {
		wanted = nil
		for _, t := range req.ResourceTypes {
			if !slices.Contains(allowed, kmsg.ConfigResourceType(t)) {
				resp.ErrorCode = errUnsupportedVersion
				return resp, nil
			}
			wanted = append(wanted, kmsg.ConfigResourceType(t))
		}
	}
	add := func(t kmsg.ConfigResourceType, name string) {
		r := kmsg.NewListConfigResourcesResponseConfigResource()
		r.Name, r.Type = name, int8(t)
		resp.ConfigResources = append(resp.ConfigResources, r)
	}
	if slices.Contains(wanted, resourceGroup) {
		for _, g := range s.dir.ConfiguredGroups() {
			add(resourceGroup, g)
		}
	}
	if slices.Contains(wanted, resourceBroker) {
		add(resourceBroker, strconv.Itoa(int(s.dir.NodeID())))
	}
	if slices.Contains(wanted, resourceTopic) {
		for _, t := range s.dir.Topics() {
			add(resourceTopic, t)
		}
	}
	return resp, nil
}
