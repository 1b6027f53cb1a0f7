package server_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// groupOp is one IncrementalAlterConfigs operation on a group property.
func groupOp(name string, op kmsg.IncrementalAlterConfigOp, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op, c.Value = name, op, &value
	return c
}

func alterGroupConfig(t *testing.T, cl *kgo.Client, group string, validate bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validate
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeGroupConfig, group, ops
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{r}
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	require.Len(t, resp.Resources, 1)
	return resp.Resources[0]
}

// describedGroupConfig is one entry of a DescribeConfigs answer.
type describedGroupConfig struct {
	value    string
	source   kmsg.ConfigSource
	typ      kmsg.ConfigType
	synonyms []string
}

func describeGroupConfig(t *testing.T, cl *kgo.Client, group string, synonyms bool, names ...string) (int16, map[string]describedGroupConfig) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = synonyms
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = kmsg.ConfigResourceTypeGroupConfig, group, names
	req.Resources = []kmsg.DescribeConfigsRequestResource{r}
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	require.Len(t, resp.Resources, 1)
	got := map[string]describedGroupConfig{}
	for _, c := range resp.Resources[0].Configs {
		d := describedGroupConfig{value: *c.Value, source: c.Source, typ: c.ConfigType}
		for _, s := range c.ConfigSynonyms {
			d.synonyms = append(d.synonyms, s.Name+"="+*s.Value+"@"+s.Source.String())
		}
		got[c.Name] = d
	}
	return resp.Resources[0].ErrorCode, got
}

// TestGroupConfigs: IncrementalAlterConfigs and DescribeConfigs of
// resource type GROUP (32), as franz-go's share group tests and
// kafka-configs --entity-type groups send them: SET and DELETE, the
// answers Kafka 4.4 gives to bad values and names, validate-only, and the
// overrides surviving a restart of the server.
func TestGroupConfigs(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)

	// A group no one has joined: the defaults, as Kafka lists them.
	code, got := describeGroupConfig(t, cl, "g", false)
	require.Zero(t, code)
	require.Equal(t, map[string]describedGroupConfig{
		"consumer.assignment.interval.ms":  {"1000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"consumer.heartbeat.interval.ms":   {"5000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"consumer.session.timeout.ms":      {"45000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"share.assignment.interval.ms":     {"1000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"share.delivery.count.limit":       {"5", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"share.heartbeat.interval.ms":      {"5000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"share.partition.max.record.locks": {"2000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"share.record.lock.duration.ms":    {"30000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
		"share.session.timeout.ms":         {"45000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil},
	}, got)

	// SET, as franz-go's share group tests do.
	r := alterGroupConfig(t, cl, "g", false,
		groupOp("share.auto.offset.reset", kmsg.IncrementalAlterConfigOpSet, "earliest"),
		groupOp("share.record.lock.duration.ms", kmsg.IncrementalAlterConfigOpSet, "20000"))
	require.Zero(t, r.ErrorCode, "%v", r.ErrorMessage)
	require.Equal(t, kmsg.ConfigResourceTypeGroupConfig, r.ResourceType)
	require.Equal(t, "g", r.ResourceName)
	code, got = describeGroupConfig(t, cl, "g", true)
	require.Zero(t, code)
	require.Equal(t, describedGroupConfig{"earliest", kmsg.ConfigSourceGroupConfig, kmsg.ConfigTypeString,
		[]string{"share.auto.offset.reset=earliest@GROUP_CONFIG"}}, got["share.auto.offset.reset"])
	require.Equal(t, describedGroupConfig{"20000", kmsg.ConfigSourceGroupConfig, kmsg.ConfigTypeInt,
		[]string{"share.record.lock.duration.ms=20000@GROUP_CONFIG", "group.share.record.lock.duration.ms=30000@DEFAULT_CONFIG"}},
		got["share.record.lock.duration.ms"])
	require.Equal(t, describedGroupConfig{"45000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt,
		[]string{"group.consumer.session.timeout.ms=45000@DEFAULT_CONFIG"}}, got["consumer.session.timeout.ms"])
	require.Len(t, got, 10)
	_, got = describeGroupConfig(t, cl, "g", false, "share.auto.offset.reset", "share.isolation.level")
	require.Equal(t, map[string]describedGroupConfig{
		"share.auto.offset.reset": {"earliest", kmsg.ConfigSourceGroupConfig, kmsg.ConfigTypeString, nil},
	}, got, "ConfigNames filters; share.isolation.level is listed only when set, as in Kafka")
	require.Equal(t, 20*1000, int(srv.Dir.GroupConfig("g").ShareRecordLockDuration.Milliseconds()))
	_, got = describeGroupConfig(t, cl, "other", false)
	require.Equal(t, "30000", got["share.record.lock.duration.ms"].value, "other groups keep the defaults")

	// Refused alterations change nothing.
	for _, tc := range []struct {
		why  string
		code int16
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
	}{
		{"unknown name", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.bogus", 0, "1")}},
		{"a broker property", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("group.share.record.lock.duration.ms", 0, "20000")}},
		{"bad reset", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.auto.offset.reset", 0, "EARLIEST")}},
		{"negative duration", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.auto.offset.reset", 0, "by_duration:-PT1H")}},
		{"below the broker's bound", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.record.lock.duration.ms", 0, "14999")}},
		{"above the broker's bound", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.delivery.count.limit", 0, "11")}},
		{"not a number", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.partition.max.record.locks", 0, "many")}},
		{"consumer bounds", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("consumer.session.timeout.ms", 0, "10000")}},
		{"streams", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("streams.session.timeout.ms", 0, "50000")}},
		{"APPEND", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.isolation.level", 2, "read_committed")}},
		{"SUBTRACT", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("share.auto.offset.reset", 3, "earliest")}},
		{"one bad of two", 40, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
			groupOp("share.isolation.level", 0, "read_committed"), groupOp("share.delivery.count.limit", 0, "1")}},
	} {
		r := alterGroupConfig(t, cl, "g", false, tc.ops...)
		require.Equal(t, tc.code, r.ErrorCode, tc.why)
		require.NotNil(t, r.ErrorMessage, tc.why)
	}
	require.Equal(t, map[string]string{"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": "20000"},
		srv.Dir.GroupConfigOverrides("g"))
	require.Equal(t, int16(42), alterGroupConfig(t, cl, "", false, groupOp("share.auto.offset.reset", 0, "earliest")).ErrorCode,
		"an empty group name is INVALID_REQUEST")
	code, _ = describeGroupConfig(t, cl, "", false)
	require.Equal(t, int16(42), code)

	// Validate-only checks and changes nothing.
	require.Equal(t, int16(40), alterGroupConfig(t, cl, "g", true, groupOp("share.delivery.count.limit", 0, "1")).ErrorCode)
	require.Zero(t, alterGroupConfig(t, cl, "g", true, groupOp("share.delivery.count.limit", 0, "3")).ErrorCode)
	require.NotContains(t, srv.Dir.GroupConfigOverrides("g"), "share.delivery.count.limit")

	// DELETE goes back to the default; deleting what is not set is no
	// error.
	r = alterGroupConfig(t, cl, "g", false,
		groupOp("share.record.lock.duration.ms", kmsg.IncrementalAlterConfigOpDelete, ""),
		groupOp("share.isolation.level", kmsg.IncrementalAlterConfigOpDelete, ""))
	require.Zero(t, r.ErrorCode)
	_, got = describeGroupConfig(t, cl, "g", false)
	require.Equal(t, describedGroupConfig{"30000", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeInt, nil}, got["share.record.lock.duration.ms"])

	// The overrides survive a restart.
	require.Zero(t, alterGroupConfig(t, cl, "h", false, groupOp("share.isolation.level", 0, "read_committed")).ErrorCode)
	srv.Restart(t)
	_, got = describeGroupConfig(t, cl, "g", false)
	require.Equal(t, describedGroupConfig{"earliest", kmsg.ConfigSourceGroupConfig, kmsg.ConfigTypeString, nil}, got["share.auto.offset.reset"])
	require.Len(t, got, 10)
	_, got = describeGroupConfig(t, cl, "h", false, "share.isolation.level")
	require.Equal(t, "read_committed", got["share.isolation.level"].value)
}

// TestAlterConfigsReplaces: the legacy AlterConfigs replaces a group's or
// a topic's overrides with those it names, as in Kafka.
func TestAlterConfigsReplaces(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "cfg", 1)
	ctx := context.Background()
	require.Zero(t, alterGroupConfig(t, cl, "g", false, groupOp("share.auto.offset.reset", 0, "earliest")).ErrorCode)

	// alter answers each resource's error code, in the request's order
	// (the client may split the request and merge the answers).
	alter := func(validate bool, resources ...kmsg.AlterConfigsRequestResource) []int16 {
		req := kmsg.NewPtrAlterConfigsRequest()
		req.ValidateOnly, req.Resources = validate, resources
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Len(t, resp.Resources, len(resources))
		codes := make([]int16, len(resources))
		for i, r := range resources {
			found := false
			for _, rr := range resp.Resources {
				if rr.ResourceType == r.ResourceType && rr.ResourceName == r.ResourceName {
					codes[i], found = rr.ErrorCode, true
				}
			}
			require.True(t, found, "no answer for %v %q", r.ResourceType, r.ResourceName)
		}
		return codes
	}
	resource := func(typ kmsg.ConfigResourceType, name string, kv ...string) kmsg.AlterConfigsRequestResource {
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, name
		for i := 0; i < len(kv); i += 2 {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = kv[i], &kv[i+1]
			r.Configs = append(r.Configs, c)
		}
		return r
	}
	got := alter(false,
		resource(kmsg.ConfigResourceTypeGroupConfig, "g", "share.delivery.count.limit", "4"),
		resource(kmsg.ConfigResourceTypeTopic, "cfg", "retention.ms", "60000"),
		resource(kmsg.ConfigResourceTypeGroupConfig, "bad", "share.delivery.count.limit", "40"),
		resource(kmsg.ConfigResourceTypeBroker, "0", "log.retention.ms", "86400000"),
		resource(kmsg.ConfigResourceTypeGroupConfig, ""))
	require.Equal(t, []int16{0, 0, 40, 0, 42}, got, "a broker's dynamic default is altered too; an empty group name is INVALID_REQUEST")
	require.Equal(t, map[string]string{"share.delivery.count.limit": "4"}, srv.Dir.GroupConfigOverrides("g"), "replaced as a whole")
	td, err := srv.Dir.DescribeTopic("cfg")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"retention.ms": "60000"}, td.Overrides)
	require.Nil(t, srv.Dir.GroupConfigOverrides("bad"))

	require.Zero(t, alter(true, resource(kmsg.ConfigResourceTypeGroupConfig, "g"))[0])
	require.Equal(t, map[string]string{"share.delivery.count.limit": "4"}, srv.Dir.GroupConfigOverrides("g"), "validate-only")
	require.Zero(t, alter(false, resource(kmsg.ConfigResourceTypeGroupConfig, "g"))[0])
	require.Nil(t, srv.Dir.GroupConfigOverrides("g"), "none: back to the defaults")

	// After a power loss the store holds what was acknowledged.
	require.Zero(t, alterGroupConfig(t, cl, "p", false, groupOp("share.auto.offset.reset", 0, "by_duration:PT1H")).ErrorCode)
	srv.RestartAfterPowerLoss(t)
	require.Equal(t, map[string]string{"share.auto.offset.reset": "by_duration:PT1H"}, srv.Dir.GroupConfigOverrides("p"))
}

// TestListGroupsFilters: ListGroups' type filter (v5) and state filter
// (v4), matched without regard to case as Kafka matches them; a type
// the coordinator has no group of ("share") lists none, and so does one
// Kafka does not know.
func TestListGroupsFilters(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "t", 1)
	ctx := context.Background()
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "committer", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic, ct.TopicID = "t", topicIDFor(t, cl, "t")
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Offset = 0
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{cp}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	cr, err := commit.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, cr.Topics[0].Partitions[0].ErrorCode)

	list := func(types, states []string) []string {
		req := kmsg.NewPtrListGroupsRequest()
		req.TypesFilter, req.StatesFilter = types, states
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Zero(t, resp.ErrorCode)
		var got []string
		for _, g := range resp.Groups {
			got = append(got, g.Group+"/"+g.GroupType+"/"+g.GroupState)
		}
		return got
	}
	require.Equal(t, []string{"committer/classic/Empty"}, list(nil, nil))
	require.Equal(t, []string{"committer/classic/Empty"}, list([]string{"Classic"}, []string{"empty"}))
	require.Empty(t, list([]string{"share"}, nil))
	require.Empty(t, list([]string{"consumer"}, nil))
	require.Empty(t, list([]string{"streams", "bogus"}, nil))
	require.Empty(t, list(nil, []string{"Stable"}))
	require.Equal(t, []string{"committer/classic/Empty"}, list(nil, []string{"Stable", "Empty"}))
}
