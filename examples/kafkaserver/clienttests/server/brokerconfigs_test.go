package server_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// describeConfigs sends one DescribeConfigs of a resource with synonyms
// and documentation and returns its answer by property name.
func describeConfigs(t *testing.T, cl *kgo.Client, typ kmsg.ConfigResourceType, name string) (int16, map[string]kmsg.DescribeConfigsResponseResourceConfig) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	req.Resources = []kmsg.DescribeConfigsRequestResource{r}
	kresp, err := cl.Broker(0).Request(context.Background(), req)
	require.NoError(t, err)
	resp := kresp.(*kmsg.DescribeConfigsResponse)
	require.Len(t, resp.Resources, 1)
	got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range resp.Resources[0].Configs {
		got[c.Name] = c
	}
	return resp.Resources[0].ErrorCode, got
}

func synonymsOf(c kmsg.DescribeConfigsResponseResourceConfig) []string {
	var out []string
	for _, s := range c.ConfigSynonyms {
		out = append(out, s.Name+"="+*s.Value+"@"+s.Source.String())
	}
	return out
}

func alterBroker(t *testing.T, cl *kgo.Client, name string, validate bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validate
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeBroker, name, ops
	req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{r}
	// Straight to the broker: kgo would route a broker resource to the
	// broker it names.
	kresp, err := cl.Broker(0).Request(context.Background(), req)
	require.NoError(t, err)
	resp := kresp.(*kmsg.IncrementalAlterConfigsResponse)
	require.Len(t, resp.Resources, 1)
	return resp.Resources[0]
}

// TestBrokerConfigs: DescribeConfigs of the BROKER resource lists every
// broker property with its type, source, synonyms and documentation; the
// dynamic ones change with IncrementalAlterConfigs and AlterConfigs for the
// cluster ("") or the broker ("0"), reach topics at once, survive a
// restart, and everything else is refused with INVALID_REQUEST, as
// Kafka 4.4's broker refuses it.
func TestBrokerConfigs(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	ctx := context.Background()
	createTopic(t, cl, "t", 1)

	code, got := describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "0")
	require.Zero(t, code)
	require.Greater(t, len(got), 80)
	for name, c := range got {
		require.NotEqual(t, kmsg.ConfigTypeUnknown, c.ConfigType, name)
		require.NotNil(t, c.Documentation, name)
		require.NotEmpty(t, c.ConfigSynonyms, name)
		require.Equal(t, c.Source, c.ConfigSynonyms[0].Source, name)
	}
	require.True(t, got["node.id"].ReadOnly)
	require.False(t, got["log.retention.ms"].ReadOnly)
	require.Equal(t, kmsg.ConfigTypeLong, got["log.retention.ms"].ConfigType)
	require.Equal(t, kmsg.ConfigTypeList, got["log.cleanup.policy"].ConfigType)
	require.Equal(t, "104857600", *got["socket.request.max.bytes"].Value)
	require.Equal(t, kmsg.ConfigSourceDefaultConfig, got["socket.request.max.bytes"].Source)
	code, got = describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "")
	require.Zero(t, code)
	require.Empty(t, got, "no dynamic defaults yet")

	r := alterBroker(t, cl, "", false, groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "3600000"),
		groupOp("log.cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, "compact"))
	require.Zero(t, r.ErrorCode, "%v", r.ErrorMessage)
	r = alterBroker(t, cl, "0", false, groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "7200000"))
	require.Zero(t, r.ErrorCode, "%v", r.ErrorMessage)

	check := func() {
		t.Helper()
		_, got := describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "")
		require.Len(t, got, 2)
		require.Equal(t, "3600000", *got["log.retention.ms"].Value)
		require.Equal(t, kmsg.ConfigSourceDynamicDefaultBrokerConfig, got["log.retention.ms"].Source)
		_, got = describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "0")
		require.Equal(t, []string{"log.retention.ms=7200000@DYNAMIC_BROKER_CONFIG", "log.retention.ms=3600000@DYNAMIC_DEFAULT_BROKER_CONFIG",
			"log.retention.ms=604800000@DEFAULT_CONFIG"}, synonymsOf(got["log.retention.ms"]))
		_, got = describeConfigs(t, cl, kmsg.ConfigResourceTypeTopic, "t")
		c := got["retention.ms"]
		require.Equal(t, "7200000", *c.Value)
		require.Equal(t, kmsg.ConfigSourceDynamicBrokerConfig, c.Source)
		require.Equal(t, kmsg.ConfigTypeLong, c.ConfigType)
		require.False(t, c.ReadOnly)
		require.NotNil(t, c.Documentation)
		require.Equal(t, "compact,delete", *got["cleanup.policy"].Value)
		require.Equal(t, kmsg.ConfigSourceDynamicDefaultBrokerConfig, got["cleanup.policy"].Source)
		require.Equal(t, kmsg.ConfigSourceDefaultConfig, got["segment.bytes"].Source)
	}
	check()
	srv.Restart(t)
	cl = client(t, srv.Addr)
	check()

	for _, c := range []struct {
		name string
		ops  []kmsg.IncrementalAlterConfigsRequestResourceConfig
	}{
		{"0", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("node.id", kmsg.IncrementalAlterConfigOpSet, "3")}},
		{"0", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("num.recovery.threads.per.data.dir", kmsg.IncrementalAlterConfigOpSet, "4")}},
		{"", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("socket.request.max.bytes", kmsg.IncrementalAlterConfigOpSet, "2000")}},
		{"", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "soon")}},
		{"", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("no.such.property", kmsg.IncrementalAlterConfigOpSet, "1")}},
		{"7", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "1000")}},
		{"x", []kmsg.IncrementalAlterConfigsRequestResourceConfig{groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "1000")}},
	} {
		r := alterBroker(t, cl, c.name, false, c.ops...)
		require.Equal(t, kerr.InvalidRequest.Code, r.ErrorCode, "%q %s: %v", c.name, c.ops[0].Name, r.ErrorMessage)
		require.NotNil(t, r.ErrorMessage)
	}
	code, _ = describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "7")
	require.Equal(t, kerr.InvalidRequest.Code, code)

	// Validate-only checks and changes nothing.
	r = alterBroker(t, cl, "", true, groupOp("log.retention.ms", kmsg.IncrementalAlterConfigOpSet, "1000"))
	require.Zero(t, r.ErrorCode, "%v", r.ErrorMessage)
	check()

	// The legacy AlterConfigs replaces the broker's settings.
	req := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeBroker, "0"
	ac := kmsg.NewAlterConfigsRequestResourceConfig()
	v := "2097152"
	ac.Name, ac.Value = "log.segment.bytes", &v
	ar.Configs = []kmsg.AlterConfigsRequestResourceConfig{ac}
	req.Resources = []kmsg.AlterConfigsRequestResource{ar}
	resp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, resp.Resources[0].ErrorCode, "%v", resp.Resources[0].ErrorMessage)
	_, got = describeConfigs(t, cl, kmsg.ConfigResourceTypeTopic, "t")
	require.Equal(t, "3600000", *got["retention.ms"].Value, "the broker's retention.ms is gone, the default's is back")
	require.Equal(t, "2097152", *got["segment.bytes"].Value)
	require.Equal(t, kmsg.ConfigSourceDynamicBrokerConfig, got["segment.bytes"].Source)
}

// TestBrokerConfigsCleaner: the log cleaner's settings are dynamic broker
// properties, as in Kafka 4.4: sarama's TestFuncAdminIncrementalAlterConfigs
// raises log.cleaner.backoff.ms by one with IncrementalAlterConfigs (it was
// refused); kadm's incremental and legacy alters set the others for the
// broker and the cluster; DescribeConfigs reports them with their dynamic
// source and synonyms, before and after a restart; thread counts outside
// Kafka's bounds answer INVALID_REQUEST with Kafka's message.
func TestBrokerConfigsCleaner(t *testing.T) {
	srv := servertest.Start(t, nil)
	cl := client(t, srv.Addr)
	adm := kadm.NewClient(cl)
	ctx := context.Background()

	// As sarama's test: describe, then SET the value plus one.
	code, got := describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "0")
	require.Zero(t, code)
	c := got["log.cleaner.backoff.ms"]
	require.False(t, c.ReadOnly)
	n, err := strconv.Atoi(*c.Value)
	require.NoError(t, err)
	backoff := strconv.Itoa(n + 1)
	r := alterBroker(t, cl, "0", false, groupOp("log.cleaner.backoff.ms", kmsg.IncrementalAlterConfigOpSet, backoff))
	require.Zero(t, r.ErrorCode, "%v", r.ErrorMessage)

	// kadm: incremental for this broker, the whole state for the cluster.
	set := func(v string) *string { return &v }
	resps, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "log.cleaner.threads", Value: set("2")},
		{Op: kadm.SetConfig, Name: "log.cleaner.io.buffer.load.factor", Value: set("0.75")},
	}, 0)
	require.NoError(t, err)
	require.NoError(t, resps[0].Err, resps[0].ErrMessage)
	resps, err = adm.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{
		{Name: "log.cleaner.io.max.bytes.per.second", Value: set("1000000")},
		{Name: "log.cleaner.dedupe.buffer.size", Value: set("67108864")},
		{Name: "log.cleaner.io.buffer.size", Value: set("1048576")},
	})
	require.NoError(t, err)
	require.NoError(t, resps[0].Err, resps[0].ErrMessage)

	check := func() {
		t.Helper()
		_, got := describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "0")
		for name, want := range map[string]string{
			"log.cleaner.backoff.ms": backoff, "log.cleaner.threads": "2", "log.cleaner.io.buffer.load.factor": "0.75",
		} {
			c := got[name]
			require.Equal(t, want, *c.Value, name)
			require.Equal(t, kmsg.ConfigSourceDynamicBrokerConfig, c.Source, name)
			require.False(t, c.ReadOnly, name)
		}
		require.Equal(t, []string{"log.cleaner.threads=2@DYNAMIC_BROKER_CONFIG", "log.cleaner.threads=1@DEFAULT_CONFIG"},
			synonymsOf(got["log.cleaner.threads"]))
		require.Equal(t, []string{"log.cleaner.io.max.bytes.per.second=1000000.0@DYNAMIC_DEFAULT_BROKER_CONFIG",
			"log.cleaner.io.max.bytes.per.second=1.7976931348623157E308@DEFAULT_CONFIG"},
			synonymsOf(got["log.cleaner.io.max.bytes.per.second"]), "doubles as Kafka prints them")
		require.Equal(t, kmsg.ConfigTypeDouble, got["log.cleaner.io.max.bytes.per.second"].ConfigType)
		require.Equal(t, kmsg.ConfigSourceDynamicDefaultBrokerConfig, got["log.cleaner.dedupe.buffer.size"].Source)
		require.Equal(t, "1048576", *got["log.cleaner.io.buffer.size"].Value)

		rcs, err := adm.DescribeBrokerConfigs(ctx)
		require.NoError(t, err)
		require.Len(t, rcs, 1)
		defaults := map[string]string{}
		for _, c := range rcs[0].Configs {
			require.Equal(t, kmsg.ConfigSourceDynamicDefaultBrokerConfig, c.Source, c.Key)
			defaults[c.Key] = c.MaybeValue()
		}
		require.Equal(t, map[string]string{"log.cleaner.io.max.bytes.per.second": "1000000.0",
			"log.cleaner.dedupe.buffer.size": "67108864", "log.cleaner.io.buffer.size": "1048576"}, defaults)
	}
	check()
	srv.Restart(t)
	cl = client(t, srv.Addr)
	adm = kadm.NewClient(cl)
	check()

	// Kafka's bounds on the thread count, from 2: at least 1, at least
	// half, at most double; and values the cleaner cannot take.
	for _, c := range []struct{ name, value, message string }{
		{"log.cleaner.threads", "5", "Log cleaner threads cannot be increased to more than double the current value 2"},
		{"log.cleaner.threads", "0", "Log cleaner threads should be at least 1"},
		{"log.cleaner.io.buffer.load.factor", "2", "log.cleaner.io.buffer.load.factor"},
		{"log.cleaner.backoff.ms", "-1", "log.cleaner.backoff.ms"},
	} {
		for _, validate := range []bool{true, false} {
			r := alterBroker(t, cl, "0", validate, groupOp(c.name, kmsg.IncrementalAlterConfigOpSet, c.value))
			require.Equal(t, kerr.InvalidRequest.Code, r.ErrorCode, "%s=%s", c.name, c.value)
			require.NotNil(t, r.ErrorMessage)
			require.Contains(t, *r.ErrorMessage, c.message)
		}
	}
	r = alterBroker(t, cl, "0", false, groupOp("log.cleaner.threads", kmsg.IncrementalAlterConfigOpSet, "4"))
	require.Zero(t, r.ErrorCode, "%v", r.ErrorMessage)
	_, got = describeConfigs(t, cl, kmsg.ConfigResourceTypeBroker, "0")
	require.Equal(t, "4", *got["log.cleaner.threads"].Value)
}
