package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
)

// Config resource types of DescribeConfigs.
const (
	resourceTopic  = kmsg.ConfigResourceTypeTopic
	resourceBroker = kmsg.ConfigResourceTypeBroker
	resourceGroup  = kmsg.ConfigResourceTypeGroupConfig
)

// handleDescribeConfigs describes topics (log.Dir.DescribeTopicConfig),
// the broker (log.Dir.DescribeBrokerConfig and the server's own
// properties) and groups, as Kafka 4.4 does: each entry's source, its
// synonyms when asked (v1+), its type and documentation when asked (v3+).
// The broker resource named "" (the cluster default) lists only the
// dynamic defaults set, as Kafka lists them.
func (s *Server) handleDescribeConfigs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := kmsg.NewPtrDescribeConfigsResponse()
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		var entries []log.ConfigEntry
		var err error
		switch r.ResourceType {
		case resourceTopic:
			entries, err = s.dir.DescribeTopicConfig(r.ResourceName)
		case resourceBroker:
			var scope log.BrokerConfigScope
			if scope, err = s.brokerScope(ctx, r.ResourceName); err == nil {
				entries = s.describeBroker(scope)
			}
		case resourceGroup:
			if r.ResourceName == "" {
				rr.ErrorCode, rr.ErrorMessage = errInvalidRequest, messageOf(errors.New("group name must not be empty"))
			} else {
				rr.Configs = describeGroup(s.dir, r.ResourceName, r.ConfigNames, req.IncludeSynonyms)
			}
			resp.Resources = append(resp.Resources, rr)
			continue
		default:
			err = fmt.Errorf("%w: resource type %d is not served", errInvalidResource, r.ResourceType)
		}
		if err != nil {
			rr.ErrorCode, rr.ErrorMessage = alterCode(err), messageOf(err)
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		for _, e := range entries {
			if r.ConfigNames != nil && !slices.Contains(r.ConfigNames, e.Name) {
				continue
			}
			rr.Configs = append(rr.Configs, configEntry(e, req.IncludeSynonyms, req.IncludeDocumentation))
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

func configEntry(e log.ConfigEntry, synonyms, doc bool) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	v := e.Value
	c.Name, c.Value, c.ReadOnly = e.Name, &v, e.ReadOnly
	c.Source = kmsg.ConfigSource(e.Source) // log.ConfigSource has Kafka's numbers
	c.IsDefault = e.Source == log.SourceDefault
	c.ConfigType = configType(e.Type)
	if synonyms {
		for _, sy := range e.Synonyms {
			ks := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			sv := sy.Value
			ks.Name, ks.Value, ks.Source = sy.Name, &sv, kmsg.ConfigSource(sy.Source)
			c.ConfigSynonyms = append(c.ConfigSynonyms, ks)
		}
	}
	if doc && e.Doc != "" {
		d := e.Doc
		c.Documentation = &d
	}
	return c
}

func configType(t string) kmsg.ConfigType {
	switch t {
	case "BOOLEAN":
		return kmsg.ConfigTypeBoolean
	case "INT":
		return kmsg.ConfigTypeInt
	case "LONG":
		return kmsg.ConfigTypeLong
	case "DOUBLE":
		return kmsg.ConfigTypeDouble
	case "LIST":
		return kmsg.ConfigTypeList
	case "STRING":
		return kmsg.ConfigTypeString
	}
	return kmsg.ConfigTypeUnknown
}

// brokerScope maps a broker resource name to the settings it names: ""
// the cluster default, the id of the broker the request came to (the
// node id; on virtual brokers the one the connection reached, all of them
// sharing the directory's settings) this broker's. Another name is
// refused with INVALID_REQUEST, as Kafka refuses a broker id not its own.
func (s *Server) brokerScope(ctx context.Context, name string) (log.BrokerConfigScope, error) {
	if name == "" {
		return log.ClusterDefault, nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: broker id must be an integer, but it is: %s", errInvalidResource, name)
	}
	if node := s.brokerOf(ctx); int32(id) != node {
		return 0, fmt.Errorf("%w: unexpected broker id, expected %d or empty string, but received %s", errInvalidResource, node, name)
	}
	return log.ThisBroker, nil
}

// describeBroker lists the broker's configuration: the directory's
// properties and the server's own (which take the place of the
// directory's auto.create.topics.enable and num.partitions: the server's
// decide), sorted; for the cluster default, only the dynamic defaults set.
func (s *Server) describeBroker(scope log.BrokerConfigScope) []log.ConfigEntry {
	all := s.dir.DescribeBrokerConfig()
	if scope == log.ClusterDefault {
		var out []log.ConfigEntry
		for _, e := range all {
			for _, sy := range e.Synonyms {
				if sy.Source == log.SourceDynamicDefaultBroker {
					out = append(out, log.ConfigEntry{Name: e.Name, Value: sy.Value, Source: sy.Source, Type: e.Type,
						Synonyms: []log.ConfigSynonym{sy}, Doc: e.Doc})
				}
			}
		}
		return out
	}
	own := s.serverProperties()
	all = slices.DeleteFunc(all, func(e log.ConfigEntry) bool { _, ok := own[e.Name]; return ok })
	for _, e := range own {
		all = append(all, e)
	}
	all = slices.DeleteFunc(all, func(e log.ConfigEntry) bool {
		return e.Name == "listeners" || e.Name == "advertised.listeners" || e.Name == "listener.security.protocol.map"
	})
	all = append(all, s.listenerProperties()...)
	slices.SortFunc(all, func(a, b log.ConfigEntry) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// serverProperty is one of the server's own broker properties.
type serverProperty struct {
	typ, doc string
	value    func(Config) string
}

// serverProps are the broker properties the server's Config sets, read
// only (the server applies them when it starts).
var serverProps = map[string]serverProperty{
	"socket.request.max.bytes": {"INT", "The largest request the server reads.",
		func(c Config) string { return strconv.Itoa(int(c.MaxRequestBytes)) }},
	"fetch.max.bytes": {"INT", "The most record bytes one Fetch response carries.",
		func(c Config) string { return strconv.Itoa(int(c.FetchMaxBytes)) }},
	"max.connections": {"INT", "The connections the server holds open at once.",
		func(c Config) string { return strconv.Itoa(c.MaxConnections) }},
	"max.connections.per.ip": {"INT", "The connections one address may hold open.",
		func(c Config) string { return strconv.Itoa(c.MaxConnectionsPerIP) }},
	"max.connections.per.ip.overrides": {"STRING", "Per-address limits in place of max.connections.per.ip.",
		func(c Config) string {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(c.MaxConnectionsPerIPOverrides)) {
				parts = append(parts, k+":"+strconv.Itoa(c.MaxConnectionsPerIPOverrides[k]))
			}
			return strings.Join(parts, ",")
		}},
	"connections.max.idle.ms": {"LONG", "How long a connection may stay idle before it is closed.",
		func(c Config) string { return strconv.FormatInt(c.IdleTimeout.Milliseconds(), 10) }},
	"connections.max.reauth.ms": {"LONG", "How long a SASL session lasts before the client must re-authenticate; 0, for ever.",
		func(c Config) string { return strconv.FormatInt(c.ConnectionsMaxReauth.Milliseconds(), 10) }},
	"connection.failed.authentication.delay.ms": {"INT", "How long the answer to a failed authentication waits.",
		func(c Config) string { return strconv.FormatInt(c.FailedAuthenticationDelay.Milliseconds(), 10) }},
	"auto.create.topics.enable": {"BOOLEAN", "Whether a Metadata request naming an unknown topic creates it.",
		func(c Config) string { return strconv.FormatBool(c.AutoCreateTopics) }},
	"num.partitions": {"INT", "The partitions of an auto-created topic.",
		func(c Config) string { return strconv.Itoa(int(c.NumPartitions)) }},
	"sasl.enabled.mechanisms": {"LIST", "The SASL mechanisms the listener accepts.",
		func(c Config) string { return strings.Join(c.SASLMechanisms, ",") }},
	"group.share.max.share.sessions": {"INT", "The share sessions the broker keeps at once.",
		func(c Config) string { return strconv.Itoa(c.MaxShareSessions) }},
	"max.request.partition.size.limit": {"INT", "The most partitions one DescribeTopicPartitions response lists.",
		func(c Config) string { return strconv.Itoa(c.MaxRequestPartitionSizeLimit) }},
}

// serverProperties are the server's own properties: STATIC_BROKER_CONFIG
// where the Config differs from DefaultConfig, else DEFAULT_CONFIG.
func (s *Server) serverProperties() map[string]log.ConfigEntry {
	def := DefaultConfig()
	out := make(map[string]log.ConfigEntry, len(serverProps))
	for name, p := range serverProps {
		v, dv := p.value(s.cfg), p.value(def)
		syn := []log.ConfigSynonym{{Name: name, Value: dv, Source: log.SourceDefault}}
		if v != dv {
			syn = append([]log.ConfigSynonym{{Name: name, Value: v, Source: log.SourceStaticBroker}}, syn...)
		}
		out[name] = log.ConfigEntry{Name: name, Value: v, Source: syn[0].Source, Type: p.typ, ReadOnly: true, Synonyms: syn, Doc: p.doc}
	}
	return out
}

// alterBroker applies change to a copy of the dynamic settings the
// broker resource name names, then stores the result (log.Dir.
// AlterBrokerConfig) or, with validate, only checks it. Every refusal is
// INVALID_REQUEST, as Kafka's broker answers a broker config change it
// refuses.
func (s *Server) alterBroker(ctx context.Context, name string, validate bool, change func(props, current map[string]string) error) error {
	scope, err := s.brokerScope(ctx, name)
	if err != nil {
		return err
	}
	props := s.dir.BrokerConfigOverrides(scope)
	if err := change(props, s.dir.Config().Properties()); err != nil {
		return fmt.Errorf("%w: %w", errInvalidResource, err)
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if _, own := serverProps[k]; own {
			return fmt.Errorf("%w: %s: the server applies it when it starts only; it cannot be updated dynamically", errInvalidResource, k)
		}
	}
	if validate {
		err = s.dir.CheckBrokerConfig(ctx, scope, props)
	} else {
		err = s.dir.AlterBrokerConfig(ctx, scope, props)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%w: %w", errInvalidResource, err)
	}
	return err
}

// describeGroup lists a group's configuration as Kafka 4.4 does
// (log.Dir.DescribeGroupConfig): the properties with a broker setting and
// the group's overrides, each with its type; an override's source is
// GROUP_CONFIG, a default's DEFAULT_CONFIG. With synonyms, an override
// lists itself, and a property with a broker setting lists that setting.
func describeGroup(dir *log.Dir, group string, names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	brokerProps := dir.Config().Properties()
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, e := range dir.DescribeGroupConfig(group) {
		if names != nil && !slices.Contains(names, e.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		v := e.Value
		c.Name, c.Value = e.Name, &v
		c.Source, c.IsDefault = kmsg.ConfigSourceDefaultConfig, true
		if e.Override {
			c.Source, c.IsDefault = kmsg.ConfigSourceGroupConfig, false
		}
		c.ConfigType = configType(e.Type)
		if synonyms {
			if e.Override {
				sy := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				sv := e.Value
				sy.Name, sy.Value, sy.Source = e.Name, &sv, kmsg.ConfigSourceGroupConfig
				c.ConfigSynonyms = append(c.ConfigSynonyms, sy)
			}
			if bv, ok := brokerProps["group."+e.Name]; ok {
				sy := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				sy.Name, sy.Value, sy.Source = "group."+e.Name, &bv, kmsg.ConfigSourceDefaultConfig
				c.ConfigSynonyms = append(c.ConfigSynonyms, sy)
			}
		}
		out = append(out, c)
	}
	return out
}
