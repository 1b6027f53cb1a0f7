package producer

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/internal/testkit/propstest"
	"github.com/kafkalite/kafkalite/partitioner"
	"github.com/kafkalite/kafkalite/record"
)

// kafkaProducerDefaults are Kafka 4.x's producer defaults
// (ProducerConfig.java) for the properties kafkalite uses.
var kafkaProducerDefaults = map[string]string{
	"acks":                                     "all",
	"batch.size":                               "16384",
	"linger.ms":                                "5",
	"buffer.memory":                            "33554432",
	"max.block.ms":                             "60000",
	"max.request.size":                         "1048576",
	"compression.type":                         "none",
	"compression.gzip.level":                   "-1",
	"compression.lz4.level":                    "9",
	"compression.zstd.level":                   "3",
	"delivery.timeout.ms":                      "120000",
	"request.timeout.ms":                       "30000",
	"enable.idempotence":                       "true",
	"transaction.timeout.ms":                   "60000",
	"partitioner.ignore.keys":                  "false",
	"partitioner.adaptive.partitioning.enable": "true",
	"partitioner.availability.timeout.ms":      "0",
}

// configErrors are the producer's configuration errors, for propstest's
// checks.
var configErrors = propstest.Errors[*ConfigError]{Invalid: ErrInvalidConfig, Unknown: ErrUnknownProperty,
	NotSupported: ErrNotSupported, Property: func(ce *ConfigError) string { return ce.Property }}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	require.Equal(t, kafkaProducerDefaults, c.Properties())

	// Field by field, in Go's types.
	assert.Equal(t, "", c.ClientID)
	assert.Equal(t, AcksAll, c.Acks)
	assert.Equal(t, 16384, c.BatchSize)
	assert.Equal(t, 5*time.Millisecond, c.Linger)
	assert.Equal(t, int64(33554432), c.BufferMemory)
	assert.Equal(t, 60*time.Second, c.MaxBlock)
	assert.Equal(t, 1048576, c.MaxRequestSize)
	assert.Equal(t, record.None, c.CompressionType)
	assert.Equal(t, -1, c.CompressionGzipLevel)
	assert.Equal(t, 9, c.CompressionLZ4Level)
	assert.Equal(t, 3, c.CompressionZstdLevel)
	assert.Equal(t, 120*time.Second, c.DeliveryTimeout)
	assert.Equal(t, 30*time.Second, c.RequestTimeout)
	assert.True(t, c.EnableIdempotence)
	assert.Equal(t, "", c.TransactionalID)
	assert.Equal(t, 60*time.Second, c.TransactionTimeout)
	assert.Nil(t, c.Partitioner)
	assert.False(t, c.PartitionerIgnoreKeys)
	assert.True(t, c.PartitionerAdaptive)
	assert.Zero(t, c.PartitionerAvailabilityTimeout)
	assert.False(t, c.AutoCreateTopics)
	assert.Empty(t, c.Interceptors)
	assert.Nil(t, c.Logger)
	assert.Nil(t, c.Now)

	require.Equal(t, c, propstest.Parse(t, ParseConfig, nil))
}

// customConfig changes every property field from its default.
func customConfig() Config {
	return Config{
		ClientID:                       "orders-writer",
		Acks:                           AcksLeader,
		BatchSize:                      0,
		Linger:                         0,
		BufferMemory:                   1,
		MaxBlock:                       0,
		MaxRequestSize:                 math.MaxInt32,
		CompressionType:                record.Zstd,
		CompressionGzipLevel:           9,
		CompressionLZ4Level:            17,
		CompressionZstdLevel:           -131072,
		DeliveryTimeout:                math.MaxInt32 * time.Millisecond,
		RequestTimeout:                 0,
		TransactionTimeout:             time.Millisecond,
		Partitioner:                    partitioner.NewRoundRobin(),
		PartitionerIgnoreKeys:          true,
		PartitionerAdaptive:            false,
		PartitionerAvailabilityTimeout: time.Hour,
	}
}

func TestConfigRoundTrip(t *testing.T) {
	huge := time.Duration(props.MaxMillis) * time.Millisecond
	tests := []struct {
		name   string
		modify func(c *Config)
	}{
		{"defaults", func(*Config) {}},
		{"customised", func(c *Config) { *c = customConfig() }},
		{"acks 0", func(c *Config) { c.Acks, c.EnableIdempotence = AcksNone, false }},
		{"transactional", func(c *Config) { c.TransactionalID, c.TransactionTimeout = "tx-1", 5*time.Second }},
		{"largest long durations", func(c *Config) {
			c.Linger, c.MaxBlock, c.PartitionerAvailabilityTimeout = huge, huge, huge
			c.DeliveryTimeout = math.MaxInt32 * time.Millisecond
		}},
		{"gzip", func(c *Config) { c.CompressionType, c.CompressionGzipLevel = record.Gzip, 1 }},
		{"snappy", func(c *Config) { c.CompressionType = record.Snappy }},
		{"lz4", func(c *Config) { c.CompressionType, c.CompressionLZ4Level = record.LZ4, 1 }},
		{"zstd", func(c *Config) { c.CompressionType, c.CompressionZstdLevel = record.Zstd, 22 }},
		{"uniform sticky", func(c *Config) { c.Partitioner = partitioner.NewUniformSticky(nil) }},
		{"legacy default", func(c *Config) { c.Partitioner = partitioner.NewLegacyDefault(nil) }},
		{"largest buffer memory", func(c *Config) { c.BufferMemory = math.MaxInt64 }},
		{"largest batch", func(c *Config) { c.BatchSize = math.MaxInt32 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.modify(&c)
			require.NoError(t, c.Validate())
			got := propstest.Parse(t, ParseConfig, c.Properties())
			// Partitioners are new values of the same built-in type.
			require.IsType(t, c.Partitioner, got.Partitioner)
			c.Partitioner, got.Partitioner = nil, nil
			require.Equal(t, c, got)
			require.Equal(t, c.Properties(), got.Properties())
		})
	}
}

func TestConfigPropertiesOmitHooks(t *testing.T) {
	c := DefaultConfig()
	c.AutoCreateTopics = true
	c.Interceptors = []Interceptor{nil}
	c.Now = time.Now
	c.Partitioner = customPartitioner{}
	assert.Equal(t, kafkaProducerDefaults, c.Properties(), "hooks are not properties")

	def, err := partitioner.ByClassName("", c.BatchSize)
	require.NoError(t, err)
	c.Partitioner = def
	assert.Equal(t, kafkaProducerDefaults, c.Properties(), "the built-in default prints as no partitioner.class")

	c.ClientID, c.Partitioner = "p1", partitioner.NewRoundRobin()
	props := c.Properties()
	assert.Equal(t, "p1", props["client.id"])
	assert.Equal(t, partitioner.RoundRobinClass, props["partitioner.class"])
	assert.True(t, strings.HasPrefix(c.String(), "acks=all\nbatch.size=16384\nbuffer.memory=33554432\nclient.id=p1\n"), c.String())
}

type customPartitioner struct{}

func (customPartitioner) Partition(string, []byte, []byte, int32) int32 { return 0 }

func TestParseConfigValues(t *testing.T) {
	huge := time.Duration(props.MaxMillis) * time.Millisecond
	tests := []struct {
		props map[string]string
		check func(t *testing.T, c Config)
	}{
		{map[string]string{"acks": "all"}, func(t *testing.T, c Config) { assert.Equal(t, AcksAll, c.Acks) }},
		{map[string]string{"acks": "-1"}, func(t *testing.T, c Config) { assert.Equal(t, AcksAll, c.Acks) }},
		{map[string]string{"acks": " 0 "}, func(t *testing.T, c Config) { assert.Equal(t, AcksNone, c.Acks) }},
		{map[string]string{"acks": "1"}, func(t *testing.T, c Config) { assert.Equal(t, AcksLeader, c.Acks) }},
		{map[string]string{"client.id": " app\t"}, func(t *testing.T, c Config) { assert.Equal(t, "app", c.ClientID) }},
		{map[string]string{"batch.size": "0"}, func(t *testing.T, c Config) { assert.Equal(t, 0, c.BatchSize) }},
		{map[string]string{"batch.size": "+1024"}, func(t *testing.T, c Config) { assert.Equal(t, 1024, c.BatchSize) }},
		{map[string]string{"linger.ms": "0"}, func(t *testing.T, c Config) { assert.Zero(t, c.Linger) }},
		{map[string]string{"linger.ms": "9223372036854775807"}, func(t *testing.T, c Config) {
			assert.Equal(t, huge, c.Linger)
			// The absent delivery.timeout.ms follows, clamped to an int.
			assert.Equal(t, math.MaxInt32*time.Millisecond, c.DeliveryTimeout)
		}},
		{map[string]string{"max.block.ms": "9223372036854775807"}, func(t *testing.T, c Config) { assert.Equal(t, huge, c.MaxBlock) }},
		{map[string]string{"buffer.memory": "1099511627776"}, func(t *testing.T, c Config) { assert.Equal(t, int64(1)<<40, c.BufferMemory) }},
		{map[string]string{"compression.type": "lz4"}, func(t *testing.T, c Config) { assert.Equal(t, record.LZ4, c.CompressionType) }},
		{map[string]string{"compression.type": " gzip "}, func(t *testing.T, c Config) { assert.Equal(t, record.Gzip, c.CompressionType) }},
		{map[string]string{"enable.idempotence": "FALSE"}, func(t *testing.T, c Config) { assert.False(t, c.EnableIdempotence) }},
		// Kafka's rule: an idempotence left to its default gives way.
		{map[string]string{"acks": "1"}, func(t *testing.T, c Config) { assert.False(t, c.EnableIdempotence) }},
		{map[string]string{"transactional.id": "tx-1"}, func(t *testing.T, c Config) {
			assert.Equal(t, "tx-1", c.TransactionalID)
			assert.True(t, c.EnableIdempotence)
		}},
		{map[string]string{"partitioner.ignore.keys": "True"}, func(t *testing.T, c Config) { assert.True(t, c.PartitionerIgnoreKeys) }},
		{map[string]string{"partitioner.adaptive.partitioning.enable": "false"}, func(t *testing.T, c Config) { assert.False(t, c.PartitionerAdaptive) }},
		{map[string]string{"partitioner.availability.timeout.ms": "250"}, func(t *testing.T, c Config) {
			assert.Equal(t, 250*time.Millisecond, c.PartitionerAvailabilityTimeout)
		}},
		{map[string]string{"partitioner.class": ""}, func(t *testing.T, c Config) { assert.Nil(t, c.Partitioner) }},
		{map[string]string{"partitioner.class": " " + partitioner.RoundRobinClass + " "}, func(t *testing.T, c Config) {
			assert.IsType(t, &partitioner.RoundRobin{}, c.Partitioner)
		}},
		{map[string]string{"interceptor.classes": " "}, func(t *testing.T, c Config) { assert.Empty(t, c.Interceptors) }},
		// Kafka raises an absent delivery.timeout.ms to linger + request.
		{map[string]string{"request.timeout.ms": "200000"}, func(t *testing.T, c Config) {
			assert.Equal(t, 200005*time.Millisecond, c.DeliveryTimeout)
		}},
		{map[string]string{"request.timeout.ms": "200000", "linger.ms": "0"}, func(t *testing.T, c Config) {
			assert.Equal(t, 200*time.Second, c.DeliveryTimeout)
		}},
		{map[string]string{"delivery.timeout.ms": "30005"}, func(t *testing.T, c Config) {
			assert.Equal(t, 30005*time.Millisecond, c.DeliveryTimeout)
		}},
		{map[string]string{"delivery.timeout.ms": "0", "linger.ms": "0", "request.timeout.ms": "0"}, func(t *testing.T, c Config) {
			assert.Zero(t, c.DeliveryTimeout)
		}},
	}
	for _, tc := range tests {
		t.Run(propstest.Name(tc.props), func(t *testing.T) {
			tc.check(t, propstest.Parse(t, ParseConfig, tc.props))
		})
	}
}

func TestParseConfigBadValues(t *testing.T) {
	tests := []struct {
		prop, value string
		reason      string // a substring of the error
		sentinel    error  // besides ErrInvalidConfig
	}{
		{"acks", "ALL", "must be one of all, -1, 0, 1", nil},
		{"acks", "2", "must be one of all, -1, 0, 1", nil},
		{"acks", "", "must be one of all, -1, 0, 1", nil},
		{"batch.size", "-1", "between 0 and 2147483647", nil},
		{"batch.size", "2147483648", "not an int", nil},
		{"batch.size", "16k", "not an int", nil},
		{"linger.ms", "-1", "at least 0", nil},
		{"linger.ms", "1.5", "not a long", nil},
		{"buffer.memory", "0", "at least 1", nil},
		{"buffer.memory", "9223372036854775808", "not a long", nil},
		{"max.block.ms", "-5", "at least 0", nil},
		{"max.request.size", "0", "between 1 and 2147483647", nil},
		{"compression.type", "GZIP", "none, gzip, snappy, lz4, zstd", nil},
		{"compression.type", "uncompressed", "none, gzip, snappy, lz4, zstd", nil},
		{"compression.type", "producer", "none, gzip, snappy, lz4, zstd", nil},
		{"compression.gzip.level", "0", "between 1 and 9 or -1", nil},
		{"compression.gzip.level", "10", "between 1 and 9 or -1", nil},
		{"compression.lz4.level", "0", "between 1 and 17", nil},
		{"compression.lz4.level", "18", "between 1 and 17", nil},
		{"compression.zstd.level", "23", "between -131072 and 22", nil},
		{"compression.zstd.level", "-131073", "between -131072 and 22", nil},
		{"delivery.timeout.ms", "30004", "at least linger.ms + request.timeout.ms (30005)", nil},
		{"delivery.timeout.ms", "2147483648", "not an int", nil},
		{"request.timeout.ms", "-1", "at least 0", nil},
		{"transaction.timeout.ms", "-1", "at least 0", nil},
		{"partitioner.availability.timeout.ms", "-1", "at least 0", nil},
		{"enable.idempotence", "yes", "not true or false", nil},
		{"transactional.id", " ", "must be non-empty", nil},
		{"transaction.two.phase.commit.enable", "true", "two-phase commit", ErrNotSupported},
		{"transaction.two.phase.commit.enable", "maybe", "not true or false", nil},
		{"partitioner.class", "com.example.MyPartitioner", "unknown partitioner class", nil},
		{"interceptor.classes", "com.example.Audit", "set Config.Interceptors in code", nil},
		{"retries", "-1", "at least 0", nil},
		{"max.in.flight.requests.per.connection", "0", "at least 1", nil},
		{"enable.metrics.push", "1", "not true or false", nil},
	}
	for _, tc := range tests {
		t.Run(tc.prop+"="+tc.value, func(t *testing.T) {
			_, _, err := ParseConfig(map[string]string{tc.prop: tc.value})
			configErrors.One(t, err, tc.prop, tc.sentinel)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
}

func TestParseConfigUnknownProperty(t *testing.T) {
	_, _, err := ParseConfig(map[string]string{
		"batch.size":        "100",
		"lingr.ms":          "5",      // a typo
		"retention.ms":      "1000",   // a topic property, not a producer one
		"group.id":          "g",      // a consumer property
		"bootstrap.servers": "x:9092", // fine
	})
	require.ErrorIs(t, err, ErrUnknownProperty)
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Equal(t, []string{"group.id", "lingr.ms", "retention.ms"}, configErrors.Properties(t, err, ErrUnknownProperty),
		"one error per name, in name order")
	assert.Contains(t, err.Error(), `producer: unknown property "lingr.ms"`)

	// Unknown names and bad values, together in name order.
	_, _, err = ParseConfig(map[string]string{"zzz": "1", "acks": "2", "retries": "-1", "compression.type": "brotli"})
	assert.Equal(t, []string{"acks", "compression.type", "retries", "zzz"}, configErrors.Properties(t, err))
}

func TestParseConfigUnusedProperties(t *testing.T) {
	props := map[string]string{
		"bootstrap.servers":                        "localhost:9092",
		"key.serializer":                           "org.apache.kafka.common.serialization.StringSerializer",
		"value.serializer":                         "org.apache.kafka.common.serialization.ByteArraySerializer",
		"retries":                                  "2147483647",
		"retry.backoff.ms":                         "100",
		"retry.backoff.max.ms":                     "1000",
		"max.in.flight.requests.per.connection":    "5",
		"security.protocol":                        "SASL_SSL",
		"sasl.mechanism":                           "PLAIN",
		"sasl.jaas.config":                         "org.apache.kafka.common.security.plain.PlainLoginModule required;",
		"sasl.oauthbearer.token.endpoint.url":      "https://example.com",
		"ssl.truststore.location":                  "/etc/kafka/truststore.jks",
		"ssl.endpoint.identification.algorithm":    "https",
		"metadata.max.age.ms":                      "300000",
		"connections.max.idle.ms":                  "540000",
		"send.buffer.bytes":                        "131072",
		"receive.buffer.bytes":                     "32768",
		"reconnect.backoff.ms":                     "50",
		"reconnect.backoff.max.ms":                 "1000",
		"metric.reporters":                         "",
		"metrics.num.samples":                      "2",
		"metrics.sample.window.ms":                 "30000",
		"metrics.recording.level":                  "INFO",
		"enable.metrics.push":                      "true",
		"client.dns.lookup":                        "use_all_dns_ips",
		"metadata.max.idle.ms":                     "300000",
		"metadata.recovery.strategy":               "rebootstrap",
		"metadata.recovery.rebootstrap.trigger.ms": "300000",
		"socket.connection.setup.timeout.ms":       "10000",
		"socket.connection.setup.timeout.max.ms":   "30000",
		"security.providers":                       "",
		"config.providers":                         "",
		"transaction.two.phase.commit.enable":      "false",
		"linger.ms":                                "20", // used
	}
	// Every name Kafka's ProducerConfig defines and kafkalite ignores is
	// accepted.
	c := propstest.Unused(t, ParseConfig, props, ignoredProducerProps, "linger.ms")
	assert.Equal(t, 20*time.Millisecond, c.Linger)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		modify   func(c *Config)
		prop     string
		sentinel error // besides ErrInvalidConfig
	}{
		{"acks", func(c *Config) { c.Acks = 2 }, "acks", nil},
		{"negative batch.size", func(c *Config) { c.BatchSize = -1 }, "batch.size", nil},
		{"batch.size beyond an int", func(c *Config) { c.BatchSize = math.MaxInt32 + 1 }, "batch.size", nil},
		{"negative linger", func(c *Config) { c.Linger = -time.Millisecond }, "linger.ms", nil},
		{"fractional linger", func(c *Config) { c.Linger = 1500 * time.Microsecond }, "linger.ms", nil},
		{"zero buffer.memory", func(c *Config) { c.BufferMemory = 0 }, "buffer.memory", nil},
		{"negative buffer.memory", func(c *Config) { c.BufferMemory = -1 }, "buffer.memory", nil},
		{"negative max.block", func(c *Config) { c.MaxBlock = -time.Second }, "max.block.ms", nil},
		{"zero max.request.size", func(c *Config) { c.MaxRequestSize = 0 }, "max.request.size", nil},
		{"unknown codec", func(c *Config) { c.CompressionType = 5 }, "compression.type", nil},
		{"gzip level 0", func(c *Config) { c.CompressionGzipLevel = 0 }, "compression.gzip.level", nil},
		{"gzip level -2", func(c *Config) { c.CompressionGzipLevel = -2 }, "compression.gzip.level", nil},
		{"lz4 level 0", func(c *Config) { c.CompressionLZ4Level = 0 }, "compression.lz4.level", nil},
		{"zstd level 23", func(c *Config) { c.CompressionZstdLevel = 23 }, "compression.zstd.level", nil},
		{"delivery below linger + request", func(c *Config) {
			c.Linger, c.RequestTimeout, c.DeliveryTimeout = time.Second, time.Second, 1999*time.Millisecond
		}, "delivery.timeout.ms", nil},
		{"delivery beyond an int", func(c *Config) { c.DeliveryTimeout = (math.MaxInt32 + 1) * time.Millisecond }, "delivery.timeout.ms", nil},
		{"request beyond an int", func(c *Config) {
			c.RequestTimeout = (math.MaxInt32 + 1) * time.Millisecond
			c.DeliveryTimeout = math.MaxInt32 * time.Millisecond
		}, "request.timeout.ms", nil},
		{"negative request", func(c *Config) { c.RequestTimeout = -time.Millisecond }, "request.timeout.ms", nil},
		{"negative transaction timeout", func(c *Config) { c.TransactionTimeout = -time.Millisecond }, "transaction.timeout.ms", nil},
		{"negative availability timeout", func(c *Config) { c.PartitionerAvailabilityTimeout = -time.Millisecond }, "partitioner.availability.timeout.ms", nil},
		{"idempotence with acks=1", func(c *Config) { c.Acks = AcksLeader }, "enable.idempotence", nil},
		{"transactional.id without idempotence", func(c *Config) { c.TransactionalID, c.EnableIdempotence = "tx", false }, "transactional.id", nil},
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
		c.BatchSize, c.BufferMemory, c.Acks = -1, 0, AcksNone
		assert.Equal(t, []string{"batch.size", "buffer.memory", "enable.idempotence"}, configErrors.Properties(t, c.Validate()))
	})

	t.Run("edges are valid", func(t *testing.T) {
		c := DefaultConfig()
		c.BatchSize, c.MaxBlock, c.BufferMemory, c.MaxRequestSize = 0, 0, 1, 1
		c.Linger, c.RequestTimeout, c.DeliveryTimeout, c.TransactionTimeout = 5*time.Millisecond, 0, 5*time.Millisecond, 0
		c.CompressionGzipLevel, c.CompressionLZ4Level, c.CompressionZstdLevel = 1, 1, -131072
		require.NoError(t, c.Validate())
		c.DeliveryTimeout = 4 * time.Millisecond
		require.Error(t, c.Validate(), "below the 5 ms linger")
		c.Linger, c.DeliveryTimeout = 0, 0
		require.NoError(t, c.Validate())
	})
}

func TestConfigErrorMessages(t *testing.T) {
	ce := &ConfigError{Component: "producer", Property: "linger.ms", Value: "-1", Reason: "must be at least 0"}
	assert.Equal(t, `producer: invalid linger.ms="-1": must be at least 0`, ce.Error())
	assert.ErrorIs(t, ce, ErrInvalidConfig)

	ce = &ConfigError{Component: "producer", Property: "x.y", Value: "1", Err: ErrUnknownProperty}
	assert.Equal(t, `producer: unknown property "x.y"`, ce.Error())
	assert.ErrorIs(t, ce, ErrInvalidConfig)
	assert.ErrorIs(t, ce, ErrUnknownProperty)

	c := DefaultConfig()
	c.Acks = AcksLeader
	err := c.Validate()
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.Contains(t, err.Error(), "requires acks=all")
	assert.False(t, errors.Is(err, ErrUnknownProperty))
}

func TestAcks(t *testing.T) {
	for _, tc := range []struct {
		acks Acks
		s    string
	}{{AcksNone, "0"}, {AcksLeader, "1"}, {AcksAll, "all"}, {Acks(3), "acks(3)"}} {
		assert.Equal(t, tc.s, tc.acks.String())
	}
	assert.Equal(t, Acks(-1), AcksAll)
}

func TestCompressionLevel(t *testing.T) {
	tests := []struct {
		codec                 record.Compression
		gzip, lz4, zstd, want int
	}{
		{record.None, 9, 17, 22, record.DefaultLevel},
		{record.Snappy, 9, 17, 22, record.DefaultLevel},
		{record.Gzip, -1, 9, 3, record.DefaultLevel}, // Kafka's -1: zlib's 6
		{record.Gzip, 1, 9, 3, 1},
		{record.Gzip, 9, 9, 3, 9},
		{record.LZ4, -1, 9, 3, 9},
		{record.LZ4, -1, 17, 3, 17},
		{record.Zstd, -1, 9, 3, 3},
		{record.Zstd, -1, 9, -7, -7},
		{record.Zstd, -1, 9, 22, 22},
	}
	for _, tc := range tests {
		c := DefaultConfig()
		c.CompressionType, c.CompressionGzipLevel, c.CompressionLZ4Level, c.CompressionZstdLevel = tc.codec, tc.gzip, tc.lz4, tc.zstd
		require.NoError(t, c.Validate())
		assert.Equal(t, tc.want, c.compressionLevel(), "%s gzip=%d lz4=%d zstd=%d", tc.codec, tc.gzip, tc.lz4, tc.zstd)

		// record.Builder accepts the level.
		var b record.Builder
		b.Reset(record.BatchHeader{Attributes: record.Attributes(0).WithCompression(tc.codec)}, c.compressionLevel())
		require.NoError(t, b.Append(0, nil, []byte("value"), nil))
		_, err := b.Build()
		require.NoError(t, err, "%s level %d", tc.codec, c.compressionLevel())
	}
}
