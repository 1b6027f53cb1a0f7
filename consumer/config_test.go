package consumer

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/consumer/assignor"
	"github.com/kafkalite/kafkalite/internal/testkit/propstest"
)

// Kafka's assignor classes (ConsumerConfig.java).
const (
	rangeClass             = "org.apache.kafka.clients.consumer.RangeAssignor"
	roundRobinClass        = "org.apache.kafka.clients.consumer.RoundRobinAssignor"
	stickyClass            = "org.apache.kafka.clients.consumer.StickyAssignor"
	cooperativeStickyClass = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
)

// kafkaConsumerDefaults are Kafka 4.x's consumer defaults
// (ConsumerConfig.java) for the properties kafkalite uses and prints by
// default, except allow.auto.create.topics (Kafka: true; kafkalite:
// false, see Config).
var kafkaConsumerDefaults = map[string]string{
	"auto.offset.reset":             "latest",
	"enable.auto.commit":            "true",
	"auto.commit.interval.ms":       "5000",
	"max.poll.records":              "500",
	"fetch.max.bytes":               "52428800",
	"max.partition.fetch.bytes":     "1048576",
	"fetch.min.bytes":               "1",
	"fetch.max.wait.ms":             "500",
	"isolation.level":               "read_uncommitted",
	"session.timeout.ms":            "45000",
	"heartbeat.interval.ms":         "3000",
	"max.poll.interval.ms":          "300000",
	"partition.assignment.strategy": rangeClass + "," + cooperativeStickyClass,
	"check.crcs":                    "true",
	"allow.auto.create.topics":      "false",
	"exclude.internal.topics":       "true",
	"group.protocol":                "classic",
}

// withProps returns a copy of m with kv (name, value, name, value, ...)
// set; an odd trailing name is deleted.
func withProps(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if i+1 == len(kv) {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// assignorNames returns the protocol names of as.
func assignorNames(as []assignor.Assignor) []string {
	var names []string
	for _, a := range as {
		names = append(names, a.Name())
	}
	return names
}

// requireSameConfig compares two configs: assignors by type and name (a
// parsed config has new assignor values), everything else by value.
func requireSameConfig(t *testing.T, want, got Config) {
	t.Helper()
	require.Len(t, got.PartitionAssignmentStrategy, len(want.PartitionAssignmentStrategy))
	for i := range want.PartitionAssignmentStrategy {
		require.IsType(t, want.PartitionAssignmentStrategy[i], got.PartitionAssignmentStrategy[i])
		require.Equal(t, want.PartitionAssignmentStrategy[i].Name(), got.PartitionAssignmentStrategy[i].Name())
	}
	want.PartitionAssignmentStrategy, got.PartitionAssignmentStrategy = nil, nil
	require.Equal(t, want, got)
}

// configErrors are the consumer's configuration errors, for propstest's
// checks.
var configErrors = propstest.Errors[*ConfigError]{Invalid: ErrInvalidConfig, Unknown: ErrUnknownProperty,
	NotSupported: ErrNotSupported, Property: func(ce *ConfigError) string { return ce.Property }}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	// Without a group.id, enable.auto.commit=true is not printed (Kafka
	// rejects it there).
	require.Equal(t, withProps(kafkaConsumerDefaults, "enable.auto.commit"), c.Properties())
	c.GroupID = "g"
	require.NoError(t, c.Validate())
	require.Equal(t, withProps(kafkaConsumerDefaults, "group.id", "g"), c.Properties())

	// Field by field, in Go's types.
	c = DefaultConfig()
	assert.Equal(t, "", c.GroupID)
	assert.Equal(t, "", c.GroupInstanceID)
	assert.Equal(t, "", c.ClientID)
	assert.Equal(t, "", c.ClientRack)
	assert.Equal(t, OffsetResetLatest, c.AutoOffsetReset)
	assert.Zero(t, c.AutoOffsetResetDuration)
	assert.True(t, c.EnableAutoCommit)
	assert.Equal(t, 5*time.Second, c.AutoCommitInterval)
	assert.Equal(t, 500, c.MaxPollRecords)
	assert.Equal(t, 52428800, c.FetchMaxBytes)
	assert.Equal(t, 1048576, c.MaxPartitionFetchBytes)
	assert.Equal(t, 1, c.FetchMinBytes)
	assert.Equal(t, 500*time.Millisecond, c.FetchMaxWait)
	assert.Equal(t, ReadUncommitted, c.IsolationLevel)
	assert.Equal(t, 45*time.Second, c.SessionTimeout)
	assert.Equal(t, 3*time.Second, c.HeartbeatInterval)
	assert.Equal(t, 300*time.Second, c.MaxPollInterval)
	assert.Equal(t, []string{"range", "cooperative-sticky"}, assignorNames(c.PartitionAssignmentStrategy))
	assert.IsType(t, assignor.Range(), c.PartitionAssignmentStrategy[0])
	assert.IsType(t, assignor.CooperativeSticky(), c.PartitionAssignmentStrategy[1])
	assert.True(t, c.CheckCRCs)
	assert.False(t, c.AllowAutoCreateTopics)
	assert.True(t, c.ExcludeInternalTopics)
	assert.Equal(t, "classic", c.GroupProtocol)
	assert.Nil(t, c.Logger)
	assert.Nil(t, c.Now)

	requireSameConfig(t, c, propstest.Parse(t, ParseConfig, nil))

	// Kafka's defaults, spelled out, parse to the same config.
	parsed := propstest.Parse(t, ParseConfig, withProps(kafkaConsumerDefaults, "group.id", "g"))
	c.GroupID = "g"
	requireSameConfig(t, c, parsed)
}

// customConfig changes every property field from its default.
func customConfig() Config {
	return Config{
		GroupID:                     "orders",
		GroupInstanceID:             "orders-reader-1",
		ClientID:                    "orders-reader",
		ClientRack:                  "rack-a",
		AutoOffsetReset:             OffsetResetByDuration,
		AutoOffsetResetDuration:     90 * time.Minute,
		EnableAutoCommit:            false,
		AutoCommitInterval:          0,
		MaxPollRecords:              1,
		FetchMaxBytes:               0,
		MaxPartitionFetchBytes:      math.MaxInt32,
		FetchMinBytes:               1 << 20,
		FetchMaxWait:                0,
		IsolationLevel:              ReadUncommitted,
		SessionTimeout:              10 * time.Second,
		HeartbeatInterval:           9999 * time.Millisecond,
		MaxPollInterval:             math.MaxInt32 * time.Millisecond,
		PartitionAssignmentStrategy: []assignor.Assignor{assignor.Sticky(), assignor.RoundRobin()},
		CheckCRCs:                   false,
		AllowAutoCreateTopics:       true,
		ExcludeInternalTopics:       false,
		GroupProtocol:               "CLASSIC",
	}
}

func TestConfigRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
	}{
		{"defaults", func(*Config) {}},
		{"customised", func(c *Config) { *c = customConfig() }},
		{"group", func(c *Config) { c.GroupID = "g" }},
		{"group without auto-commit", func(c *Config) { c.GroupID, c.EnableAutoCommit = "g", false }},
		{"no group, auto-commit off", func(c *Config) { c.EnableAutoCommit = false }},
		{"earliest", func(c *Config) { c.AutoOffsetReset = OffsetResetEarliest }},
		{"none", func(c *Config) { c.AutoOffsetReset = OffsetResetNone }},
		{"by_duration 0", func(c *Config) { c.AutoOffsetReset = OffsetResetByDuration }},
		{"by_duration 1ns", func(c *Config) { c.AutoOffsetReset, c.AutoOffsetResetDuration = OffsetResetByDuration, 1 }},
		{"by_duration days", func(c *Config) {
			c.AutoOffsetReset, c.AutoOffsetResetDuration = OffsetResetByDuration, 7*24*time.Hour+1500*time.Millisecond
		}},
		{"by_duration largest", func(c *Config) {
			c.AutoOffsetReset, c.AutoOffsetResetDuration = OffsetResetByDuration, math.MaxInt64
		}},
		{"all four assignors", func(c *Config) {
			c.PartitionAssignmentStrategy = []assignor.Assignor{assignor.CooperativeSticky(), assignor.Sticky(),
				assignor.RoundRobin(), assignor.Range()}
		}},
		{"no assignors without a group", func(c *Config) { c.PartitionAssignmentStrategy = nil }},
		{"largest values", func(c *Config) {
			huge := math.MaxInt32 * time.Millisecond
			c.GroupID = "g"
			c.AutoCommitInterval, c.FetchMaxWait, c.SessionTimeout, c.MaxPollInterval = huge, huge, huge, huge
			c.HeartbeatInterval = huge - time.Millisecond
			c.MaxPollRecords, c.FetchMaxBytes, c.MaxPartitionFetchBytes, c.FetchMinBytes =
				math.MaxInt32, math.MaxInt32, math.MaxInt32, math.MaxInt32
		}},
		{"smallest values", func(c *Config) {
			c.GroupID = "g"
			c.SessionTimeout, c.HeartbeatInterval, c.MaxPollInterval = 2*time.Millisecond, time.Millisecond, time.Millisecond
			c.MaxPollRecords, c.FetchMaxBytes, c.MaxPartitionFetchBytes, c.FetchMinBytes = 1, 0, 0, 0
		}},
		{"heartbeat not below session without a group", func(c *Config) { c.HeartbeatInterval = time.Minute }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.modify(&c)
			require.NoError(t, c.Validate())
			got := propstest.Parse(t, ParseConfig, c.Properties())
			requireSameConfig(t, c, got)
			require.Equal(t, c.Properties(), got.Properties())
			require.Equal(t, c.String(), got.String())
		})
	}
}

func TestConfigPropertiesOmitHooks(t *testing.T) {
	c := DefaultConfig()
	c.Logger = nil
	c.Now = time.Now
	assert.Equal(t, withProps(kafkaConsumerDefaults, "enable.auto.commit"), c.Properties(), "hooks are not properties")

	c = customConfig()
	props := c.Properties()
	assert.Equal(t, "orders", props["group.id"])
	assert.Equal(t, "orders-reader-1", props["group.instance.id"])
	assert.Equal(t, "orders-reader", props["client.id"])
	assert.Equal(t, "rack-a", props["client.rack"])
	assert.Equal(t, "by_duration:PT1H30M", props["auto.offset.reset"])
	assert.Equal(t, stickyClass+","+roundRobinClass, props["partition.assignment.strategy"])
	assert.Equal(t, "false", props["enable.auto.commit"])
	assert.Equal(t, "CLASSIC", props["group.protocol"])
	assert.True(t, strings.HasPrefix(c.String(),
		"allow.auto.create.topics=true\nauto.commit.interval.ms=0\nauto.offset.reset=by_duration:PT1H30M\n"), c.String())
}

// namedAssignor is an assignor that is not a built-in, supporting the
// eager rebalance protocol.
type namedAssignor string

func (a namedAssignor) Name() string { return string(a) }

func (namedAssignor) Protocols() []assignor.Protocol { return []assignor.Protocol{assignor.Eager} }

func (namedAssignor) Assign(map[string]int32, []assignor.Member) (map[string][]assignor.TopicPartition, error) {
	return nil, errors.New("not implemented")
}

// cooperativeOnly is an assignor supporting only the cooperative
// rebalance protocol.
type cooperativeOnly struct{ namedAssignor }

func (cooperativeOnly) Protocols() []assignor.Protocol {
	return []assignor.Protocol{assignor.Cooperative}
}

func TestConfigAssignors(t *testing.T) {
	c := DefaultConfig()
	c.PartitionAssignmentStrategy = []assignor.Assignor{namedAssignor("custom"), assignor.Range(), namedAssignor("range2")}
	require.NoError(t, c.Validate())
	assert.Equal(t, "custom,"+rangeClass+",range2", c.Properties()["partition.assignment.strategy"],
		"built-ins print as Kafka's classes, others by protocol name")

	// An assignor named like a built-in but of another type is not the
	// built-in.
	c.PartitionAssignmentStrategy = []assignor.Assignor{namedAssignor("range")}
	assert.Equal(t, "range", c.Properties()["partition.assignment.strategy"])

	c.PartitionAssignmentStrategy = []assignor.Assignor{}
	assert.Equal(t, "", c.Properties()["partition.assignment.strategy"])

	// Each class resolves to the matching constructor's assignor; protocol
	// names resolve too.
	for _, tc := range []struct {
		class, name string
		want        assignor.Assignor
	}{
		{rangeClass, "range", assignor.Range()},
		{roundRobinClass, "roundrobin", assignor.RoundRobin()},
		{stickyClass, "sticky", assignor.Sticky()},
		{cooperativeStickyClass, "cooperative-sticky", assignor.CooperativeSticky()},
	} {
		for _, v := range []string{tc.class, " " + tc.name + " "} {
			got, _, err := ParseConfig(map[string]string{"partition.assignment.strategy": v})
			require.NoError(t, err, v)
			require.Len(t, got.PartitionAssignmentStrategy, 1)
			assert.IsType(t, tc.want, got.PartitionAssignmentStrategy[0], v)
			assert.Equal(t, tc.name, got.PartitionAssignmentStrategy[0].Name(), v)
		}
		class, ok := assignorClassName(tc.want)
		assert.True(t, ok)
		assert.Equal(t, tc.class, class)
		a, err := assignor.ByClassName(tc.class)
		require.NoError(t, err)
		assert.Equal(t, tc.name, a.Name())
	}

	got, _, err := ParseConfig(map[string]string{
		"partition.assignment.strategy": cooperativeStickyClass + " , range,\t" + roundRobinClass,
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"cooperative-sticky", "range", "roundrobin"}, assignorNames(got.PartitionAssignmentStrategy))

	for _, props := range []map[string]string{
		{"partition.assignment.strategy": " "},
		{"partition.assignment.strategy": "", "group.id": "g"},
	} {
		got, _, err = ParseConfig(props)
		require.NoError(t, err, "an empty list is valid, as in Kafka (Subscribe fails then)")
		assert.Empty(t, got.PartitionAssignmentStrategy)
	}

	// With a group, the assignors need a rebalance protocol in common
	// (range: eager; cooperative-sticky: both).
	c = DefaultConfig()
	c.GroupID = "g"
	c.PartitionAssignmentStrategy = []assignor.Assignor{cooperativeOnly{"coop"}, assignor.CooperativeSticky()}
	require.NoError(t, c.Validate())
	c.PartitionAssignmentStrategy = append(c.PartitionAssignmentStrategy, assignor.Range())
	err = c.Validate()
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "no rebalance protocol in common")
	c.GroupID = ""
	require.NoError(t, c.Validate(), "checked only with a group, as Kafka")

	// Each call returns new assignors.
	a, b := DefaultConfig(), DefaultConfig()
	assert.NotSame(t, a.PartitionAssignmentStrategy[1], b.PartitionAssignmentStrategy[1])
}

func TestParseConfigValues(t *testing.T) {
	tests := []struct {
		props map[string]string
		check func(t *testing.T, c Config)
	}{
		{map[string]string{"group.id": " orders "}, func(t *testing.T, c Config) { assert.Equal(t, "orders", c.GroupID) }},
		{map[string]string{"group.id": "g", "group.instance.id": "a.b_c-D9"}, func(t *testing.T, c Config) {
			assert.Equal(t, "a.b_c-D9", c.GroupInstanceID)
		}},
		{map[string]string{"group.instance.id": "solo"}, func(t *testing.T, c Config) {
			assert.Equal(t, "solo", c.GroupInstanceID, "kept without a group too, as Kafka accepts it")
		}},
		{map[string]string{"client.id": " app\t"}, func(t *testing.T, c Config) { assert.Equal(t, "app", c.ClientID) }},
		{map[string]string{"client.id": ""}, func(t *testing.T, c Config) { assert.Equal(t, "", c.ClientID) }},
		{map[string]string{"client.rack": "use1-az1"}, func(t *testing.T, c Config) { assert.Equal(t, "use1-az1", c.ClientRack) }},
		{map[string]string{"auto.offset.reset": " earliest "}, func(t *testing.T, c Config) {
			assert.Equal(t, OffsetResetEarliest, c.AutoOffsetReset)
		}},
		{map[string]string{"auto.offset.reset": "none"}, func(t *testing.T, c Config) { assert.Equal(t, OffsetResetNone, c.AutoOffsetReset) }},
		{map[string]string{"auto.offset.reset": "latest"}, func(t *testing.T, c Config) { assert.Equal(t, OffsetResetLatest, c.AutoOffsetReset) }},
		{map[string]string{"auto.offset.reset": "by_duration:PT1H"}, func(t *testing.T, c Config) {
			assert.Equal(t, OffsetResetByDuration, c.AutoOffsetReset)
			assert.Equal(t, time.Hour, c.AutoOffsetResetDuration)
		}},
		{map[string]string{"auto.offset.reset": "by_duration:p1dt12h"}, func(t *testing.T, c Config) {
			assert.Equal(t, 36*time.Hour, c.AutoOffsetResetDuration)
		}},
		{map[string]string{"auto.offset.reset": "by_duration:PT0S"}, func(t *testing.T, c Config) {
			assert.Equal(t, OffsetResetByDuration, c.AutoOffsetReset)
			assert.Zero(t, c.AutoOffsetResetDuration)
		}},
		{map[string]string{"enable.auto.commit": "FALSE"}, func(t *testing.T, c Config) { assert.False(t, c.EnableAutoCommit) }},
		{map[string]string{"group.id": "g", "enable.auto.commit": "true"}, func(t *testing.T, c Config) { assert.True(t, c.EnableAutoCommit) }},
		{map[string]string{"auto.commit.interval.ms": "0"}, func(t *testing.T, c Config) { assert.Zero(t, c.AutoCommitInterval) }},
		{map[string]string{"max.poll.records": "+1"}, func(t *testing.T, c Config) { assert.Equal(t, 1, c.MaxPollRecords) }},
		{map[string]string{"fetch.max.bytes": "0"}, func(t *testing.T, c Config) { assert.Zero(t, c.FetchMaxBytes) }},
		{map[string]string{"max.partition.fetch.bytes": "2147483647"}, func(t *testing.T, c Config) {
			assert.Equal(t, math.MaxInt32, c.MaxPartitionFetchBytes)
		}},
		{map[string]string{"fetch.min.bytes": "0"}, func(t *testing.T, c Config) { assert.Zero(t, c.FetchMinBytes) }},
		{map[string]string{"fetch.max.wait.ms": "100"}, func(t *testing.T, c Config) { assert.Equal(t, 100*time.Millisecond, c.FetchMaxWait) }},
		{map[string]string{"isolation.level": " read_uncommitted"}, func(t *testing.T, c Config) {
			assert.Equal(t, ReadUncommitted, c.IsolationLevel)
		}},
		{map[string]string{"isolation.level": "read_committed "}, func(t *testing.T, c Config) {
			assert.Equal(t, ReadCommitted, c.IsolationLevel)
			assert.Equal(t, "read_committed", c.Properties()["isolation.level"], "prints back")
		}},
		{map[string]string{"group.id": "g", "session.timeout.ms": "6000", "heartbeat.interval.ms": "2000"}, func(t *testing.T, c Config) {
			assert.Equal(t, 6*time.Second, c.SessionTimeout)
			assert.Equal(t, 2*time.Second, c.HeartbeatInterval)
		}},
		{map[string]string{"session.timeout.ms": "1000"}, func(t *testing.T, c Config) {
			assert.Equal(t, time.Second, c.SessionTimeout, "without a group, heartbeat.interval.ms is not checked against it")
		}},
		{map[string]string{"max.poll.interval.ms": "1"}, func(t *testing.T, c Config) { assert.Equal(t, time.Millisecond, c.MaxPollInterval) }},
		{map[string]string{"check.crcs": "False"}, func(t *testing.T, c Config) { assert.False(t, c.CheckCRCs) }},
		{map[string]string{"allow.auto.create.topics": "true"}, func(t *testing.T, c Config) { assert.True(t, c.AllowAutoCreateTopics) }},
		{map[string]string{"exclude.internal.topics": "false"}, func(t *testing.T, c Config) { assert.False(t, c.ExcludeInternalTopics) }},
		{map[string]string{"group.protocol": " Classic "}, func(t *testing.T, c Config) { assert.Equal(t, "Classic", c.GroupProtocol) }},
		{map[string]string{"group.protocol": "consumer", "group.remote.assignor": " range "}, func(t *testing.T, c Config) {
			assert.Equal(t, "consumer", c.GroupProtocol)
			assert.Equal(t, "range", c.GroupRemoteAssignor)
		}},
	}
	for _, tc := range tests {
		t.Run(propstest.Name(tc.props), func(t *testing.T) {
			tc.check(t, propstest.Parse(t, ParseConfig, tc.props))
		})
	}
}

// TestJavaDuration checks by_duration's durations against what
// java.time.Duration.parse and toString do.
func TestJavaDuration(t *testing.T) {
	maxDuration := time.Duration(math.MaxInt64)
	valid := []struct {
		in    string
		want  time.Duration
		print string // Duration.toString
	}{
		{"PT0S", 0, "PT0S"},
		{"P0D", 0, "PT0S"},
		{"PT0.000000001S", 1, "PT0.000000001S"},
		{"PT1H", time.Hour, "PT1H"},
		{"pt1h", time.Hour, "PT1H"},
		{"P1D", 24 * time.Hour, "PT24H"},
		{"P2DT3H4M5.5S", 51*time.Hour + 4*time.Minute + 5500*time.Millisecond, "PT51H4M5.5S"},
		{"PT90M", 90 * time.Minute, "PT1H30M"},
		{"PT3600S", time.Hour, "PT1H"},
		{"PT1,25S", 1250 * time.Millisecond, "PT1.25S"},
		{"PT1.S", time.Second, "PT1S"},
		{"+PT+10M", 10 * time.Minute, "PT10M"},
		{"PT1H-30M", 30 * time.Minute, "PT30M"}, // Java adds the parts
		{"-PT-1H", time.Hour, "PT1H"},
		{"PT0.123456789S", 123456789, "PT0.123456789S"},
		{"PT-0S", 0, "PT0S"},
		{"P106751D", 106751 * 24 * time.Hour, "PT2562024H"},
		{"P106752D", maxDuration, "PT2562047H47M16.854775807S"}, // beyond time.Duration: clamped
		{"PT9223372036854775807S", maxDuration, "PT2562047H47M16.854775807S"},
		{"PT2562047H47M16.854775807S", maxDuration, "PT2562047H47M16.854775807S"},
	}
	for _, tc := range valid {
		got, err := parseJavaDuration(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.print, formatJavaDuration(got), tc.in)
		back, err := parseJavaDuration(formatJavaDuration(got))
		require.NoError(t, err, tc.in)
		assert.Equal(t, got, back, tc.in)
	}
	invalid := []struct{ in, reason string }{
		{"", "not an ISO-8601 duration"},
		{"P", "not an ISO-8601 duration"},
		{"PT", "not an ISO-8601 duration"},
		{"P1DT", "not an ISO-8601 duration"},
		{"1H", "not an ISO-8601 duration"},
		{"PT1.5H", "not an ISO-8601 duration"},
		{"PT.5S", "not an ISO-8601 duration"},
		{"PT0.1234567891S", "not an ISO-8601 duration"},
		{"P1W", "not an ISO-8601 duration"},
		{"P1Y", "not an ISO-8601 duration"},
		{"PT1M1H", "not an ISO-8601 duration"},
		{" PT1H", "not an ISO-8601 duration"},
		{"PT1H ", "not an ISO-8601 duration"},
		{"-PT1H", "negative"},
		{"PT-1S", "negative"},
		{"PT-0.5S", "negative"},
		{"PT1H-61M", "negative"},
		{"PT9223372036854775808S", "out of range"},
		{"P106751991167301D", "out of range"}, // days * 86400 overflows a long, as in Java
		{"PT9223372036854775807S1S", "not an ISO-8601 duration"},
		{"PT2562047788015215H1H", "not an ISO-8601 duration"},
		{"P1DT9223372036854775807S", "out of range"},
		{"-PT-9223372036854775808S", "out of range"},
	}
	for _, tc := range invalid {
		_, err := parseJavaDuration(tc.in)
		require.Error(t, err, tc.in)
		assert.Contains(t, err.Error(), tc.reason, tc.in)
	}
}

func TestParseConfigBadValues(t *testing.T) {
	tests := []struct {
		props    map[string]string
		prop     string
		reason   string // a substring of the error
		sentinel error  // besides ErrInvalidConfig
	}{
		{map[string]string{"group.id": ""}, "group.id", "should not be an empty string", nil},
		{map[string]string{"group.id": " \t"}, "group.id", "should not be an empty string", nil},
		{map[string]string{"group.instance.id": " "}, "group.instance.id", "must be non-empty", nil},
		{map[string]string{"group.instance.id": ".."}, "group.instance.id", `must not be "." or ".."`, nil},
		{map[string]string{"group.instance.id": "a b"}, "group.instance.id", "ASCII letters, digits", nil},
		{map[string]string{"group.instance.id": "é"}, "group.instance.id", "ASCII letters, digits", nil},
		{map[string]string{"group.instance.id": strings.Repeat("x", 250)}, "group.instance.id", "at most 249", nil},
		{map[string]string{"auto.offset.reset": "LATEST"}, "auto.offset.reset", "must be one of latest, earliest, none, by_duration", nil},
		{map[string]string{"auto.offset.reset": "smallest"}, "auto.offset.reset", "must be one of", nil},
		{map[string]string{"auto.offset.reset": ""}, "auto.offset.reset", "must be one of", nil},
		{map[string]string{"auto.offset.reset": "by_duration"}, "auto.offset.reset", "needs a duration", nil},
		{map[string]string{"auto.offset.reset": "by_duration:"}, "auto.offset.reset", "not an ISO-8601 duration", nil},
		{map[string]string{"auto.offset.reset": "by_duration:1h"}, "auto.offset.reset", "not an ISO-8601 duration", nil},
		{map[string]string{"auto.offset.reset": "by_duration: PT1H"}, "auto.offset.reset", "not an ISO-8601 duration", nil},
		{map[string]string{"auto.offset.reset": "BY_DURATION:PT1H"}, "auto.offset.reset", "must be one of", nil},
		{map[string]string{"auto.offset.reset": "by_duration:-PT1H"}, "auto.offset.reset", "negative", nil},
		{map[string]string{"enable.auto.commit": "yes"}, "enable.auto.commit", "not true or false", nil},
		{map[string]string{"enable.auto.commit": "true"}, "enable.auto.commit", "cannot be true when group.id is not set", nil},
		{map[string]string{"auto.commit.interval.ms": "-1"}, "auto.commit.interval.ms", "at least 0", nil},
		{map[string]string{"auto.commit.interval.ms": "2147483648"}, "auto.commit.interval.ms", "not an int", nil},
		{map[string]string{"max.poll.records": "0"}, "max.poll.records", "between 1 and 2147483647", nil},
		{map[string]string{"max.poll.records": "1k"}, "max.poll.records", "not an int", nil},
		{map[string]string{"fetch.max.bytes": "-1"}, "fetch.max.bytes", "between 0 and 2147483647", nil},
		{map[string]string{"max.partition.fetch.bytes": "-1"}, "max.partition.fetch.bytes", "between 0 and 2147483647", nil},
		{map[string]string{"fetch.min.bytes": "-1"}, "fetch.min.bytes", "between 0 and 2147483647", nil},
		{map[string]string{"fetch.max.wait.ms": "-1"}, "fetch.max.wait.ms", "at least 0", nil},
		{map[string]string{"fetch.max.wait.ms": "0.5"}, "fetch.max.wait.ms", "not an int", nil},
		{map[string]string{"isolation.level": "READ_UNCOMMITTED"}, "isolation.level", "must be one of read_committed, read_uncommitted", nil},
		{map[string]string{"isolation.level": "READ_COMMITTED"}, "isolation.level", "must be one of read_committed, read_uncommitted", nil},
		{map[string]string{"session.timeout.ms": "0"}, "session.timeout.ms", "at least 1", nil},
		{map[string]string{"heartbeat.interval.ms": "0"}, "heartbeat.interval.ms", "at least 1", nil},
		{map[string]string{"group.id": "g", "heartbeat.interval.ms": "45000"}, "heartbeat.interval.ms",
			"must be lower than session.timeout.ms (45000)", nil},
		{map[string]string{"group.id": "g", "session.timeout.ms": "3000"}, "heartbeat.interval.ms",
			"must be lower than session.timeout.ms (3000)", nil},
		{map[string]string{"max.poll.interval.ms": "0"}, "max.poll.interval.ms", "at least 1", nil},
		{map[string]string{"partition.assignment.strategy": "com.example.MyAssignor"}, "partition.assignment.strategy",
			`unknown assignor "com.example.MyAssignor"`, nil},
		{map[string]string{"partition.assignment.strategy": "range,range"}, "partition.assignment.strategy", "listed twice", nil},
		{map[string]string{"partition.assignment.strategy": "range,,sticky"}, "partition.assignment.strategy", "empty entry", nil},
		{map[string]string{"partition.assignment.strategy": "range," + rangeClass}, "partition.assignment.strategy",
			`two assignors are named "range"`, nil},
		{map[string]string{"check.crcs": "1"}, "check.crcs", "not true or false", nil},
		{map[string]string{"allow.auto.create.topics": "no"}, "allow.auto.create.topics", "not true or false", nil},
		{map[string]string{"exclude.internal.topics": ""}, "exclude.internal.topics", "not true or false", nil},
		{map[string]string{"group.protocol": "consumer", "session.timeout.ms": "10000"}, "session.timeout.ms", "cannot be set when group.protocol=consumer", nil},
		{map[string]string{"group.protocol": "CONSUMER", "heartbeat.interval.ms": "100"}, "heartbeat.interval.ms", "cannot be set when group.protocol=consumer", nil},
		{map[string]string{"group.protocol": "consumer", "partition.assignment.strategy": "range"}, "partition.assignment.strategy", "cannot be set when group.protocol=consumer", nil},
		{map[string]string{"group.protocol": "share"}, "group.protocol", "must be one of classic, consumer", nil},
		{map[string]string{"group.protocol": ""}, "group.protocol", "must be one of classic, consumer", nil},
		{map[string]string{"group.remote.assignor": "uniform"}, "group.remote.assignor", "group.protocol=classic", nil},
		{map[string]string{"share.acknowledgement.mode": "explicit"}, "share.acknowledgement.mode", "a share consumer's setting", nil},
		{map[string]string{"interceptor.classes": "com.example.Audit"}, "interceptor.classes", "cannot load Java interceptor classes", nil},
		{map[string]string{"request.timeout.ms": "-1"}, "request.timeout.ms", "at least 0", nil},
		{map[string]string{"default.api.timeout.ms": "x"}, "default.api.timeout.ms", "not an int", nil},
		{map[string]string{"enable.metrics.push": "1"}, "enable.metrics.push", "not true or false", nil},
		{map[string]string{"internal.leave.group.on.close": "maybe"}, "internal.leave.group.on.close", "not true or false", nil},
	}
	for _, tc := range tests {
		t.Run(propstest.Name(tc.props), func(t *testing.T) {
			_, _, err := ParseConfig(tc.props)
			configErrors.One(t, err, tc.prop, tc.sentinel)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
}

func TestParseConfigUnknownProperty(t *testing.T) {
	_, _, err := ParseConfig(map[string]string{
		"max.poll.records":  "100",
		"max.pol.records":   "5",      // a typo
		"retention.ms":      "1000",   // a topic property, not a consumer one
		"linger.ms":         "5",      // a producer property
		"bootstrap.servers": "x:9092", // fine
	})
	require.ErrorIs(t, err, ErrUnknownProperty)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Equal(t, []string{"linger.ms", "max.pol.records", "retention.ms"}, configErrors.Properties(t, err, ErrUnknownProperty),
		"one error per name, in name order")
	assert.Contains(t, err.Error(), `consumer: unknown property "max.pol.records"`)

	// Unknown names and bad values, together in name order.
	_, _, err = ParseConfig(map[string]string{"zzz": "1", "max.poll.records": "0x10", "request.timeout.ms": "-1",
		"isolation.level": "serializable", "enable.auto.commit": "true"})
	assert.Equal(t, []string{"enable.auto.commit", "isolation.level", "max.poll.records", "request.timeout.ms", "zzz"},
		configErrors.Properties(t, err))
}

func TestParseConfigUnusedProperties(t *testing.T) {
	props := map[string]string{
		"bootstrap.servers":                                 "localhost:9092",
		"key.deserializer":                                  "org.apache.kafka.common.serialization.StringDeserializer",
		"value.deserializer":                                "org.apache.kafka.common.serialization.ByteArrayDeserializer",
		"interceptor.classes":                               "",
		"request.timeout.ms":                                "30000",
		"default.api.timeout.ms":                            "60000",
		"retry.backoff.ms":                                  "100",
		"retry.backoff.max.ms":                              "1000",
		"security.protocol":                                 "SASL_SSL",
		"sasl.mechanism":                                    "PLAIN",
		"sasl.jaas.config":                                  "org.apache.kafka.common.security.plain.PlainLoginModule required;",
		"ssl.truststore.location":                           "/etc/kafka/truststore.jks",
		"ssl.endpoint.identification.algorithm":             "https",
		"metadata.max.age.ms":                               "300000",
		"connections.max.idle.ms":                           "540000",
		"send.buffer.bytes":                                 "131072",
		"receive.buffer.bytes":                              "65536",
		"reconnect.backoff.ms":                              "50",
		"reconnect.backoff.max.ms":                          "1000",
		"metric.reporters":                                  "",
		"metrics.num.samples":                               "2",
		"metrics.sample.window.ms":                          "30000",
		"metrics.recording.level":                           "INFO",
		"enable.metrics.push":                               "true",
		"client.dns.lookup":                                 "use_all_dns_ips",
		"metadata.recovery.strategy":                        "rebootstrap",
		"metadata.recovery.rebootstrap.trigger.ms":          "300000",
		"socket.connection.setup.timeout.ms":                "10000",
		"socket.connection.setup.timeout.max.ms":            "30000",
		"security.providers":                                "",
		"config.providers":                                  "",
		"share.acknowledgement.mode":                        "",
		"share.acquire.mode":                                "",
		"internal.leave.group.on.close":                     "true",
		"internal.throw.on.fetch.stable.offset.unsupported": "false",
		"max.poll.records":                                  "20", // used
		"group.id":                                          "g",  // used
	}
	// Every name Kafka's ConsumerConfig defines and kafkalite ignores is
	// accepted.
	c := propstest.Unused(t, ParseConfig, props, ignoredConsumerProps, "max.poll.records", "group.id")
	assert.Equal(t, 20, c.MaxPollRecords)
	assert.Equal(t, "g", c.GroupID)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		modify   func(c *Config)
		prop     string
		sentinel error // besides ErrInvalidConfig
	}{
		{"group.instance.id .", func(c *Config) { c.GroupInstanceID = "." }, "group.instance.id", nil},
		{"group.instance.id slash", func(c *Config) { c.GroupInstanceID = "a/b" }, "group.instance.id", nil},
		{"unknown reset", func(c *Config) { c.AutoOffsetReset = 4 }, "auto.offset.reset", nil},
		{"negative reset duration", func(c *Config) {
			c.AutoOffsetReset, c.AutoOffsetResetDuration = OffsetResetByDuration, -time.Second
		}, "auto.offset.reset", nil},
		{"duration without by_duration", func(c *Config) { c.AutoOffsetResetDuration = time.Hour }, "auto.offset.reset", nil},
		{"negative auto-commit interval", func(c *Config) { c.AutoCommitInterval = -time.Millisecond }, "auto.commit.interval.ms", nil},
		{"fractional auto-commit interval", func(c *Config) { c.AutoCommitInterval = 1500 * time.Microsecond }, "auto.commit.interval.ms", nil},
		{"auto-commit interval beyond an int", func(c *Config) {
			c.AutoCommitInterval = (math.MaxInt32 + 1) * time.Millisecond
		}, "auto.commit.interval.ms", nil},
		{"zero max.poll.records", func(c *Config) { c.MaxPollRecords = 0 }, "max.poll.records", nil},
		{"max.poll.records beyond an int", func(c *Config) { c.MaxPollRecords = math.MaxInt32 + 1 }, "max.poll.records", nil},
		{"negative fetch.max.bytes", func(c *Config) { c.FetchMaxBytes = -1 }, "fetch.max.bytes", nil},
		{"negative max.partition.fetch.bytes", func(c *Config) { c.MaxPartitionFetchBytes = -1 }, "max.partition.fetch.bytes", nil},
		{"fetch.min.bytes beyond an int", func(c *Config) { c.FetchMinBytes = math.MaxInt32 + 1 }, "fetch.min.bytes", nil},
		{"negative fetch.max.wait", func(c *Config) { c.FetchMaxWait = -time.Second }, "fetch.max.wait.ms", nil},
		{"unknown isolation level", func(c *Config) { c.IsolationLevel = 2 }, "isolation.level", nil},
		{"zero session timeout", func(c *Config) { c.SessionTimeout = 0 }, "session.timeout.ms", nil},
		{"zero heartbeat", func(c *Config) { c.HeartbeatInterval = 0 }, "heartbeat.interval.ms", nil},
		{"heartbeat equal to session with a group", func(c *Config) {
			c.GroupID, c.HeartbeatInterval = "g", c.SessionTimeout
		}, "heartbeat.interval.ms", nil},
		{"zero max.poll.interval", func(c *Config) { c.MaxPollInterval = 0 }, "max.poll.interval.ms", nil},
		{"nil assignor", func(c *Config) {
			c.PartitionAssignmentStrategy = append(c.PartitionAssignmentStrategy, nil)
		}, "partition.assignment.strategy", nil},
		{"two assignors of one name", func(c *Config) {
			c.PartitionAssignmentStrategy = []assignor.Assignor{assignor.Sticky(), namedAssignor("sticky")}
		}, "partition.assignment.strategy", nil},
		{"no common rebalance protocol with a group", func(c *Config) {
			c.GroupID = "g"
			c.PartitionAssignmentStrategy = []assignor.Assignor{assignor.Range(), cooperativeOnly{"coop"}}
		}, "partition.assignment.strategy", nil},
		{"remote assignor with the classic protocol", func(c *Config) { c.GroupRemoteAssignor = "uniform" }, "group.remote.assignor", nil},
		{"empty protocol", func(c *Config) { c.GroupProtocol = "" }, "group.protocol", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.modify(&c)
			configErrors.One(t, c.Validate(), tc.prop, tc.sentinel)
		})
	}

	t.Run("several", func(t *testing.T) {
		c := DefaultConfig()
		c.MaxPollRecords, c.IsolationLevel, c.FetchMinBytes, c.GroupProtocol = 0, IsolationLevel(2), -1, "share"
		assert.Equal(t, []string{"fetch.min.bytes", "group.protocol", "isolation.level", "max.poll.records"},
			configErrors.Properties(t, c.Validate()))
	})

	t.Run("edges are valid", func(t *testing.T) {
		c := DefaultConfig()
		c.GroupID, c.GroupInstanceID = "g", strings.Repeat("a", 249)
		c.SessionTimeout, c.HeartbeatInterval = 2*time.Millisecond, time.Millisecond
		c.MaxPollRecords, c.FetchMaxBytes, c.MaxPartitionFetchBytes, c.FetchMinBytes = 1, 0, 0, 0
		c.AutoCommitInterval, c.FetchMaxWait, c.MaxPollInterval = 0, 0, time.Millisecond
		c.AutoOffsetReset, c.AutoOffsetResetDuration = OffsetResetByDuration, math.MaxInt64
		c.PartitionAssignmentStrategy = []assignor.Assignor{namedAssignor("mine")}
		c.GroupProtocol = "ClAsSiC"
		c.IsolationLevel = ReadCommitted
		require.NoError(t, c.Validate())
		c.HeartbeatInterval = c.SessionTimeout
		require.Error(t, c.Validate(), "heartbeat not below the session timeout")
		c.GroupID = ""
		require.NoError(t, c.Validate(), "checked only with a group, as Kafka")
		c.GroupID, c.HeartbeatInterval, c.PartitionAssignmentStrategy = "g", time.Millisecond, nil
		require.NoError(t, c.Validate(), "no assignor is needed until Subscribe, as in Kafka")
	})
}

func TestConfigErrorMessages(t *testing.T) {
	ce := &ConfigError{Component: "consumer", Property: "max.poll.records", Value: "0", Reason: "must be between 1 and 2147483647"}
	assert.Equal(t, `consumer: invalid max.poll.records="0": must be between 1 and 2147483647`, ce.Error())
	assert.ErrorIs(t, ce, ErrInvalidConfig)

	ce = &ConfigError{Component: "consumer", Property: "x.y", Value: "1", Err: ErrUnknownProperty}
	assert.Equal(t, `consumer: unknown property "x.y"`, ce.Error())
	assert.ErrorIs(t, ce, ErrInvalidConfig)
	assert.ErrorIs(t, ce, ErrUnknownProperty)

	c := DefaultConfig()
	c.IsolationLevel = IsolationLevel(7)
	err := c.Validate()
	assert.NotErrorIs(t, err, ErrNotSupported)
	assert.Contains(t, err.Error(), `consumer: invalid isolation.level="isolation_level(7)"`)
	assert.False(t, errors.Is(err, ErrUnknownProperty))

	c = DefaultConfig()
	c.AutoOffsetReset, c.AutoOffsetResetDuration = OffsetResetByDuration, -time.Hour
	assert.Contains(t, c.Validate().Error(), `auto.offset.reset="by_duration:-PT1H"`)
}

func TestEnumStrings(t *testing.T) {
	for _, tc := range []struct {
		r OffsetReset
		s string
	}{
		{OffsetResetLatest, "latest"}, {OffsetResetEarliest, "earliest"}, {OffsetResetNone, "none"},
		{OffsetResetByDuration, "by_duration"}, {OffsetReset(9), "offset_reset(9)"},
	} {
		assert.Equal(t, tc.s, tc.r.String())
	}
	assert.Equal(t, OffsetResetLatest, OffsetReset(0), "the zero value is Kafka's default")
	for _, tc := range []struct {
		l IsolationLevel
		s string
	}{{ReadUncommitted, "read_uncommitted"}, {ReadCommitted, "read_committed"}, {IsolationLevel(-1), "isolation_level(-1)"}} {
		assert.Equal(t, tc.s, tc.l.String())
	}
	assert.Equal(t, ReadUncommitted, IsolationLevel(0), "the zero value is Kafka's default")
}
