package log

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/internal/testkit/propstest"
	"github.com/kafkalite/kafkalite/record"
)

// customTopicConfig changes every field from its default.
func customTopicConfig() TopicConfig {
	return TopicConfig{
		CleanupPolicy:             CleanupPolicy{Delete: true, Compact: true},
		Retention:                 36 * time.Hour,
		RetentionBytes:            1 << 40,
		SegmentBytes:              MinSegmentBytes,
		SegmentRollTime:           time.Millisecond,
		SegmentJitter:             90 * time.Second,
		SegmentIndexBytes:         4,
		IndexIntervalBytes:        0,
		MaxMessageBytes:           math.MaxInt32,
		MessageTimestampType:      record.LogAppendTime,
		MessageTimestampBeforeMax: 0,
		MessageTimestampAfterMax:  Unlimited,
		CompressionType:           CompressionZstd,
		CompressionGzipLevel:      9,
		CompressionLZ4Level:       17,
		CompressionZstdLevel:      -131072,
		FlushMessages:             1,
		FlushInterval:             0,
		FileDeleteDelay:           0,
		Preallocate:               true,
		MinCompactionLag:          time.Minute,
		MaxCompactionLag:          time.Hour,
		DeleteRetention:           0,
		MinCleanableDirtyRatio:    0.00001,
	}
}

// configErrors are the log's configuration errors, for propstest's checks.
var configErrors = propstest.Errors[*ConfigError]{Invalid: ErrInvalidConfig, Unknown: ErrUnknownProperty,
	Property: func(ce *ConfigError) string { return ce.Property }}

func TestTopicConfigDefaults(t *testing.T) {
	c := DefaultTopicConfig()
	require.NoError(t, c.Validate())
	want := map[string]string{ // Kafka 4.x: LogConfig, ServerLogConfigs
		"cleanup.policy":                  "delete",
		"retention.ms":                    "604800000",
		"retention.bytes":                 "-1",
		"segment.bytes":                   "1073741824",
		"segment.ms":                      "604800000",
		"segment.jitter.ms":               "0",
		"segment.index.bytes":             "10485760",
		"index.interval.bytes":            "4096",
		"max.message.bytes":               "1048588",
		"message.timestamp.type":          "CreateTime",
		"message.timestamp.before.max.ms": "9223372036854775807",
		"message.timestamp.after.max.ms":  "3600000",
		"compression.type":                "producer",
		"compression.gzip.level":          "-1",
		"compression.lz4.level":           "9",
		"compression.zstd.level":          "3",
		"flush.messages":                  "9223372036854775807",
		"flush.ms":                        "9223372036854775807",
		"file.delete.delay.ms":            "60000",
		"preallocate":                     "false",
		"remote.storage.enable":           "false",
		"local.retention.ms":              "-2",
		"local.retention.bytes":           "-2",
		"min.compaction.lag.ms":           "0",
		"max.compaction.lag.ms":           "9223372036854775807",
		"delete.retention.ms":             "86400000",
		"min.cleanable.dirty.ratio":       "0.5",
	}
	require.Equal(t, want, c.Properties())

	require.Equal(t, c, propstest.Parse(t, ParseTopicConfig, nil))
}

func TestTopicConfigRoundTrip(t *testing.T) {
	huge := time.Duration(props.MaxMillis) * time.Millisecond
	tests := []struct {
		name   string
		modify func(c *TopicConfig)
	}{
		{"defaults", func(*TopicConfig) {}},
		{"customised", func(c *TopicConfig) { *c = customTopicConfig() }},
		{"all unlimited", func(c *TopicConfig) {
			c.Retention, c.MessageTimestampBeforeMax, c.MessageTimestampAfterMax = Unlimited, Unlimited, Unlimited
			c.FlushInterval, c.MaxCompactionLag, c.FlushMessages = Unlimited, Unlimited, UnlimitedMessages
		}},
		{"largest durations", func(c *TopicConfig) {
			c.Retention, c.SegmentRollTime, c.SegmentJitter, c.MessageTimestampBeforeMax = huge, huge, huge, huge
			c.FlushInterval, c.FileDeleteDelay, c.MinCompactionLag, c.MaxCompactionLag, c.DeleteRetention = huge, huge, huge, huge, huge
		}},
		{"no cleanup policy", func(c *TopicConfig) { c.CleanupPolicy = CleanupPolicy{} }},
		{"compact only", func(c *TopicConfig) { c.CleanupPolicy = CleanupPolicy{Compact: true} }},
		{"retention zero", func(c *TopicConfig) { c.Retention, c.RetentionBytes = 0, 0 }},
		{"negative retention bytes", func(c *TopicConfig) { c.RetentionBytes = -5 }},
		{"largest segment", func(c *TopicConfig) { c.SegmentBytes = math.MaxInt32 }},
		{"flush messages max-1", func(c *TopicConfig) { c.FlushMessages = math.MaxInt64 - 1 }},
		{"ratio bounds", func(c *TopicConfig) { c.MinCleanableDirtyRatio = 1 }},
		{"ratio odd", func(c *TopicConfig) { c.MinCleanableDirtyRatio = 1.0 / 3 }},
		{"uncompressed", func(c *TopicConfig) { c.CompressionType = CompressionUncompressed }},
		{"gzip", func(c *TopicConfig) { c.CompressionType, c.CompressionGzipLevel = CompressionGzip, 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultTopicConfig()
			tc.modify(&c)
			require.NoError(t, c.Validate())
			got := propstest.Parse(t, ParseTopicConfig, c.Properties())
			require.Equal(t, c, got)
			require.Equal(t, c.Properties(), got.Properties())

			// The overrides against the defaults rebuild c too.
			got, _, err := DefaultTopicConfig().WithProperties(c.Overrides(DefaultTopicConfig()))
			require.NoError(t, err)
			require.Equal(t, c, got)
		})
	}
}

func TestTopicConfigParseValues(t *testing.T) {
	huge := time.Duration(props.MaxMillis) * time.Millisecond
	tests := []struct {
		prop, value string
		check       func(t *testing.T, c TopicConfig)
	}{
		{"retention.ms", "-1", func(t *testing.T, c TopicConfig) { assert.Equal(t, Unlimited, c.Retention) }},
		{"retention.ms", "9223372036854775807", func(t *testing.T, c TopicConfig) { assert.Equal(t, Unlimited, c.Retention) }},
		{"retention.ms", "9223372036855", func(t *testing.T, c TopicConfig) { assert.Equal(t, Unlimited, c.Retention) }},
		{"retention.ms", "9223372036854", func(t *testing.T, c TopicConfig) { assert.Equal(t, huge, c.Retention) }},
		{"retention.ms", " 86400000\t", func(t *testing.T, c TopicConfig) { assert.Equal(t, 24*time.Hour, c.Retention) }},
		{"retention.ms", "+1000", func(t *testing.T, c TopicConfig) { assert.Equal(t, time.Second, c.Retention) }},
		{"retention.ms", "0", func(t *testing.T, c TopicConfig) { assert.Equal(t, time.Duration(0), c.Retention) }},
		{"retention.bytes", "-7", func(t *testing.T, c TopicConfig) { assert.Equal(t, int64(-7), c.RetentionBytes) }},
		{"segment.ms", "9223372036854775807", func(t *testing.T, c TopicConfig) { assert.Equal(t, huge, c.SegmentRollTime) }},
		{"segment.bytes", "14", func(t *testing.T, c TopicConfig) { assert.Equal(t, int64(14), c.SegmentBytes) }},
		{"flush.ms", "-1", func(t *testing.T, c TopicConfig) { assert.Equal(t, Unlimited, c.FlushInterval) }},
		{"flush.ms", "1000", func(t *testing.T, c TopicConfig) { assert.Equal(t, time.Second, c.FlushInterval) }},
		{"flush.messages", "-1", func(t *testing.T, c TopicConfig) { assert.Equal(t, UnlimitedMessages, c.FlushMessages) }},
		{"flush.messages", "9223372036854775807", func(t *testing.T, c TopicConfig) { assert.Equal(t, UnlimitedMessages, c.FlushMessages) }},
		{"flush.messages", "1", func(t *testing.T, c TopicConfig) { assert.Equal(t, int64(1), c.FlushMessages) }},
		{"max.compaction.lag.ms", "9223372036854775807", func(t *testing.T, c TopicConfig) { assert.Equal(t, Unlimited, c.MaxCompactionLag) }},
		{"message.timestamp.after.max.ms", "9223372036854775807", func(t *testing.T, c TopicConfig) {
			assert.Equal(t, Unlimited, c.MessageTimestampAfterMax)
		}},
		{"cleanup.policy", "compact", func(t *testing.T, c TopicConfig) { assert.Equal(t, CleanupPolicy{Compact: true}, c.CleanupPolicy) }},
		{"cleanup.policy", "delete , compact", func(t *testing.T, c TopicConfig) {
			assert.Equal(t, CleanupPolicy{Delete: true, Compact: true}, c.CleanupPolicy)
		}},
		{"cleanup.policy", "compact,delete", func(t *testing.T, c TopicConfig) {
			assert.Equal(t, CleanupPolicy{Delete: true, Compact: true}, c.CleanupPolicy)
		}},
		{"cleanup.policy", "  ", func(t *testing.T, c TopicConfig) { assert.Equal(t, CleanupPolicy{}, c.CleanupPolicy) }},
		{"preallocate", "TRUE", func(t *testing.T, c TopicConfig) { assert.True(t, c.Preallocate) }},
		{"preallocate", " False ", func(t *testing.T, c TopicConfig) { assert.False(t, c.Preallocate) }},
		{"message.timestamp.type", "LogAppendTime", func(t *testing.T, c TopicConfig) {
			assert.Equal(t, record.LogAppendTime, c.MessageTimestampType)
		}},
		{"compression.type", "uncompressed", func(t *testing.T, c TopicConfig) {
			assert.Equal(t, CompressionUncompressed, c.CompressionType)
		}},
		{"compression.type", " lz4 ", func(t *testing.T, c TopicConfig) { assert.Equal(t, CompressionLZ4, c.CompressionType) }},
		{"min.cleanable.dirty.ratio", "1e-1", func(t *testing.T, c TopicConfig) { assert.Equal(t, 0.1, c.MinCleanableDirtyRatio) }},
		{"min.cleanable.dirty.ratio", "0", func(t *testing.T, c TopicConfig) { assert.Equal(t, 0.0, c.MinCleanableDirtyRatio) }},
		{"compression.gzip.level", "-1", func(t *testing.T, c TopicConfig) { assert.Equal(t, -1, c.CompressionGzipLevel) }},
		{"compression.zstd.level", "0", func(t *testing.T, c TopicConfig) { assert.Equal(t, 0, c.CompressionZstdLevel) }},
		{"internal.segment.bytes", "100", func(t *testing.T, c TopicConfig) { assert.Equal(t, int64(100), c.SegmentBytes) }},
	}
	for _, tc := range tests {
		t.Run(tc.prop+"="+tc.value, func(t *testing.T) {
			tc.check(t, propstest.Parse(t, ParseTopicConfig, map[string]string{tc.prop: tc.value}))
		})
	}
}

func TestTopicConfigParseErrors(t *testing.T) {
	tests := []struct {
		prop, value string
		unknown     bool
	}{
		{"retention.ms", "abc", false},
		{"retention.ms", "", false},
		{"retention.ms", "1.5", false},
		{"retention.ms", "0x10", false},
		{"retention.ms", "1_000", false},
		{"retention.ms", "-2", false},
		{"retention.ms", "99999999999999999999", false},
		{"retention.ms", "-9223372036854775808", false},
		{"segment.bytes", "13", false},
		{"segment.bytes", "2147483648", false},
		{"segment.ms", "0", false},
		{"segment.ms", "-1", false},
		{"segment.jitter.ms", "-1", false},
		{"segment.index.bytes", "3", false},
		{"index.interval.bytes", "-1", false},
		{"max.message.bytes", "-1", false},
		{"flush.messages", "0", false},
		{"flush.messages", "-2", false},
		{"flush.ms", "-2", false},
		{"max.compaction.lag.ms", "0", false},
		{"min.compaction.lag.ms", "-1", false},
		{"delete.retention.ms", "-1", false},
		{"file.delete.delay.ms", "-1", false},
		{"message.timestamp.before.max.ms", "-2", false},
		{"message.timestamp.type", "createtime", false},
		{"message.timestamp.type", "NoTimestamp", false},
		{"compression.type", "none", false},
		{"compression.type", "GZIP", false},
		{"compression.type", "brotli", false},
		{"compression.gzip.level", "0", false},
		{"compression.gzip.level", "10", false},
		{"compression.lz4.level", "0", false},
		{"compression.lz4.level", "18", false},
		{"compression.zstd.level", "23", false},
		{"compression.zstd.level", "-131073", false},
		{"cleanup.policy", "Delete", false},
		{"cleanup.policy", "delete,", false},
		{"cleanup.policy", "retain", false},
		{"preallocate", "yes", false},
		{"preallocate", "1", false},
		{"min.cleanable.dirty.ratio", "1.5", false},
		{"min.cleanable.dirty.ratio", "-0.1", false},
		{"min.cleanable.dirty.ratio", "NaN", false},
		{"min.cleanable.dirty.ratio", "half", false},
		{"internal.segment.bytes", "1", false},
		{"min.insync.replicas", "0", false},
		{"unclean.leader.election.enable", "maybe", false},
		{"leader.replication.throttled.replicas", "1:x", false},
		{"local.retention.ms", "-3", false},
		{"remote.storage.enable", "maybe", false},
		{"message.format.version", "3.0", true}, // removed in Kafka 4.0
		{"message.timestamp.difference.max.ms", "1000", true},
		{"log.retention.ms", "1000", true}, // a broker name
		{"retention.MS", "1000", true},
		{"no.such.property", "1", true},
	}
	for _, tc := range tests {
		t.Run(tc.prop+"="+tc.value, func(t *testing.T) {
			_, unused, err := ParseTopicConfig(map[string]string{tc.prop: tc.value})
			require.Nil(t, unused)
			configErrors.One(t, err, tc.prop, unknownIf(tc.unknown))
		})
	}
}

// unknownIf is the sentinel a parse error matches besides ErrInvalidConfig:
// ErrUnknownProperty for an unknown name, none otherwise.
func unknownIf(unknown bool) error {
	if unknown {
		return ErrUnknownProperty
	}
	return nil
}

func TestTopicConfigParseJoinsErrors(t *testing.T) {
	_, _, err := ParseTopicConfig(map[string]string{"a.b": "1", "retention.ms": "x", "segment.ms": "y"})
	require.ErrorIs(t, err, ErrUnknownProperty)
	msg := err.Error()
	for _, want := range []string{`"a.b"`, "retention.ms", "segment.ms"} {
		require.Contains(t, msg, want)
	}
	require.Less(t, strings.Index(msg, "a.b"), strings.Index(msg, "segment.ms"), "errors in name order")
}

func TestTopicConfigMinCompactionLagAboveMax(t *testing.T) {
	_, _, err := ParseTopicConfig(map[string]string{"min.compaction.lag.ms": "2000", "max.compaction.lag.ms": "1000"})
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "min.compaction.lag.ms", ce.Property)

	c, _, err := ParseTopicConfig(map[string]string{"min.compaction.lag.ms": "2000"}) // max is Unlimited
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, c.MinCompactionLag)
}

func TestTopicConfigUnusedProperties(t *testing.T) {
	props := map[string]string{
		"unclean.leader.election.enable":          "true",
		"min.insync.replicas":                     "2",
		"follower.replication.throttled.replicas": "0:1, 1:2",
		"leader.replication.throttled.replicas":   "*",
		"message.downconversion.enable":           "false",
		"local.retention.ms":                      "-2",
		"local.retention.bytes":                   "1000",
		"remote.storage.enable":                   "false",
		"remote.log.copy.disable":                 "false",
		"remote.log.delete.on.disable":            "false",
		"remote.copy.lag.ms":                      "-1",
		"remote.copy.lag.bytes":                   "0",
		"retention.ms":                            "1000",
	}
	c, unused, err := ParseTopicConfig(props)
	require.NoError(t, err)
	require.Equal(t, time.Second, c.Retention)
	require.True(t, slices.IsSorted(unused))
	require.Equal(t, UnusedTopicProperties(), unused)
	require.NotContains(t, unused, "retention.ms")
	for _, name := range []string{"unclean.leader.election.enable", "min.insync.replicas",
		"follower.replication.throttled.replicas", "leader.replication.throttled.replicas",
		"message.downconversion.enable"} {
		require.Contains(t, unused, name)
	}
}

func TestTopicConfigThrottledReplicas(t *testing.T) {
	for _, ok := range []string{"", "*", " * ", "0:1", "0:1,2:3", "0:1, 1:1 ,"} {
		require.NoError(t, checkThrottledReplicas(ok), "%q", ok)
	}
	for _, bad := range []string{"x", "0:", ":1", "0:1,*", "-1:1", "0:1:2", "a:b"} {
		require.Error(t, checkThrottledReplicas(bad), "%q", bad)
	}
}

func TestTopicConfigInternalSegmentBytesWins(t *testing.T) {
	c, unused, err := ParseTopicConfig(map[string]string{"segment.bytes": "1048576", "internal.segment.bytes": "1024"})
	require.NoError(t, err)
	require.Empty(t, unused)
	require.Equal(t, int64(1024), c.SegmentBytes)
	require.Equal(t, "1024", c.Properties()["segment.bytes"])
	require.NotContains(t, c.Properties(), "internal.segment.bytes")
}

func TestTopicConfigValidate(t *testing.T) {
	tests := []struct {
		prop   string
		modify func(c *TopicConfig)
	}{
		{"retention.ms", func(c *TopicConfig) { c.Retention = -time.Millisecond * 2 }},
		{"retention.ms", func(c *TopicConfig) { c.Retention = 1500 * time.Microsecond }},
		{"segment.bytes", func(c *TopicConfig) { c.SegmentBytes = 13 }},
		{"segment.bytes", func(c *TopicConfig) { c.SegmentBytes = math.MaxInt32 + 1 }},
		{"segment.ms", func(c *TopicConfig) { c.SegmentRollTime = 0 }},
		{"segment.ms", func(c *TopicConfig) { c.SegmentRollTime = Unlimited }},
		{"segment.jitter.ms", func(c *TopicConfig) { c.SegmentJitter = -time.Millisecond }},
		{"segment.index.bytes", func(c *TopicConfig) { c.SegmentIndexBytes = 3 }},
		{"segment.index.bytes", func(c *TopicConfig) { c.SegmentIndexBytes = math.MaxInt32 + 1 }},
		{"index.interval.bytes", func(c *TopicConfig) { c.IndexIntervalBytes = -1 }},
		{"max.message.bytes", func(c *TopicConfig) { c.MaxMessageBytes = -1 }},
		{"message.timestamp.type", func(c *TopicConfig) { c.MessageTimestampType = 2 }},
		{"message.timestamp.before.max.ms", func(c *TopicConfig) { c.MessageTimestampBeforeMax = -time.Second }},
		{"message.timestamp.after.max.ms", func(c *TopicConfig) { c.MessageTimestampAfterMax = time.Nanosecond }},
		{"compression.type", func(c *TopicConfig) { c.CompressionType = "none" }},
		{"compression.type", func(c *TopicConfig) { c.CompressionType = "" }},
		{"compression.gzip.level", func(c *TopicConfig) { c.CompressionGzipLevel = 0 }},
		{"compression.lz4.level", func(c *TopicConfig) { c.CompressionLZ4Level = 0 }},
		{"compression.zstd.level", func(c *TopicConfig) { c.CompressionZstdLevel = 23 }},
		{"flush.messages", func(c *TopicConfig) { c.FlushMessages = 0 }},
		{"flush.ms", func(c *TopicConfig) { c.FlushInterval = -2 * time.Millisecond }},
		{"file.delete.delay.ms", func(c *TopicConfig) { c.FileDeleteDelay = Unlimited }},
		{"min.compaction.lag.ms", func(c *TopicConfig) { c.MinCompactionLag = -time.Millisecond }},
		{"min.compaction.lag.ms", func(c *TopicConfig) { c.MinCompactionLag, c.MaxCompactionLag = time.Hour, time.Minute }},
		{"max.compaction.lag.ms", func(c *TopicConfig) { c.MaxCompactionLag = 0 }},
		{"delete.retention.ms", func(c *TopicConfig) { c.DeleteRetention = -time.Millisecond }},
		{"min.cleanable.dirty.ratio", func(c *TopicConfig) { c.MinCleanableDirtyRatio = math.NaN() }},
		{"min.cleanable.dirty.ratio", func(c *TopicConfig) { c.MinCleanableDirtyRatio = 1.01 }},
	}
	for _, tc := range tests {
		t.Run(tc.prop, func(t *testing.T) {
			c := DefaultTopicConfig()
			tc.modify(&c)
			configErrors.One(t, c.Validate(), tc.prop, nil)
		})
	}

	t.Run("zero value", func(t *testing.T) {
		err := TopicConfig{}.Validate()
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Contains(t, err.Error(), "segment.bytes")
		require.Contains(t, err.Error(), "compression.type")
	})
}

func TestTopicConfigOverrides(t *testing.T) {
	base := DefaultTopicConfig()
	require.Empty(t, base.Overrides(base))
	c := base
	c.Retention = time.Hour
	c.CleanupPolicy = CleanupPolicy{Compact: true}
	require.Equal(t, map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact"}, c.Overrides(base))
}

func TestTopicConfigString(t *testing.T) {
	s := DefaultTopicConfig().String()
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	require.Len(t, lines, len(topicProps))
	require.True(t, slices.IsSorted(lines))
	require.Contains(t, lines, "retention.ms=604800000")
	require.Contains(t, lines, "cleanup.policy=delete")
}

func TestConfigCleanupPolicy(t *testing.T) {
	for _, p := range []CleanupPolicy{{}, {Delete: true}, {Compact: true}, {Delete: true, Compact: true}} {
		got, err := ParseCleanupPolicy(p.String())
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	require.Equal(t, "compact,delete", CleanupPolicy{Delete: true, Compact: true}.String())
	got, err := ParseCleanupPolicy("delete,delete")
	require.NoError(t, err)
	require.Equal(t, CleanupPolicy{Delete: true}, got)
}

func TestConfigCompressionType(t *testing.T) {
	tests := []struct {
		t     CompressionType
		codec record.Compression
		keep  bool
		level int
	}{
		{CompressionProducer, record.None, true, record.DefaultLevel},
		{CompressionUncompressed, record.None, false, record.DefaultLevel},
		{CompressionGzip, record.Gzip, false, -1},
		{CompressionSnappy, record.Snappy, false, record.DefaultLevel},
		{CompressionLZ4, record.LZ4, false, 9},
		{CompressionZstd, record.Zstd, false, 3},
	}
	c := DefaultTopicConfig()
	for _, tc := range tests {
		codec, keep := tc.t.Codec()
		require.Equal(t, tc.codec, codec, tc.t)
		require.Equal(t, tc.keep, keep, tc.t)
		require.Equal(t, tc.level, c.compressionLevel(codec), tc.t)
		parsed, err := ParseCompressionType(tc.t.String())
		require.NoError(t, err)
		require.Equal(t, tc.t, parsed)
	}
	// The levels are ones record accepts.
	payload := []byte(strings.Repeat("kafkalite ", 100))
	for _, codec := range []record.Compression{record.Gzip, record.LZ4, record.Zstd} {
		for _, cfg := range []TopicConfig{DefaultTopicConfig(), customTopicConfig()} {
			h := record.BatchHeader{Attributes: record.Attributes(0).WithCompression(codec),
				ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence}
			_, err := record.AppendBatch(nil, h, cfg.compressionLevel(codec), []record.Record{{Value: payload}})
			require.NoError(t, err, "%s level %d", codec, cfg.compressionLevel(codec))
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	require.Equal(t, int32(0), c.NodeID)
	require.Equal(t, 2, c.RecoveryThreads)
	require.Equal(t, 5*time.Minute, c.RetentionCheckInterval)
	require.Equal(t, time.Minute, c.FlushOffsetCheckpointInterval)
	require.Equal(t, time.Minute, c.FlushStartOffsetCheckpointInterval)
	require.Equal(t, Unlimited, c.FlushSchedulerInterval)
	require.Equal(t, DefaultTopicConfig(), c.DefaultTopic)
	require.False(t, c.AutoCreateTopics)
	require.Equal(t, 1, c.NumPartitions)
	require.True(t, c.CleanerEnable)
	require.Equal(t, 1, c.CleanerThreads)
	require.Equal(t, int64(134217728), c.CleanerDedupeBufferSize)
	require.Equal(t, 524288, c.CleanerIOBufferSize)
	require.Equal(t, 0.9, c.CleanerIOBufferLoadFactor)
	require.Equal(t, 15*time.Second, c.CleanerBackoff)
	require.Equal(t, math.MaxFloat64, c.CleanerIOMaxBytesPerSecond)

	p := c.Properties()
	require.Equal(t, "9223372036854775807", p["log.flush.scheduler.interval.ms"])
	require.Equal(t, "604800000", p["log.retention.ms"])
	require.Equal(t, "1073741824", p["log.segment.bytes"])
	require.Equal(t, "false", p["auto.create.topics.enable"])
	require.NotContains(t, p, "log.retention.hours") // only the highest-precedence synonym prints

	require.Equal(t, c, propstest.Parse(t, ParseConfig, nil))
}

func TestConfigRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
	}{
		{"defaults", func(*Config) {}},
		{"customised", func(c *Config) {
			c.NodeID = 7
			c.RecoveryThreads = 16
			c.RetentionCheckInterval = time.Millisecond
			c.FlushOffsetCheckpointInterval = 0
			c.FlushStartOffsetCheckpointInterval = time.Second
			c.FlushSchedulerInterval = 3 * time.Second
			c.DefaultTopic = customTopicConfig()
			c.AutoCreateTopics = true
			c.NumPartitions = 12
			c.CleanerEnable = false
			c.CleanerThreads = 3
			c.CleanerDedupeBufferSize = 1 << 20
			c.CleanerIOBufferSize = 0
			c.CleanerIOBufferLoadFactor = 0.5
			c.CleanerBackoff = 0
			c.CleanerIOMaxBytesPerSecond = 1.5e6
			c.OffsetsRetentionCheckInterval = time.Second
		}},
		{"scheduler differs from flush.ms", func(c *Config) {
			c.FlushSchedulerInterval = time.Second
			c.DefaultTopic.FlushInterval = Unlimited
		}},
		{"retention unlimited", func(c *Config) { c.DefaultTopic.Retention = Unlimited }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.modify(&c)
			require.NoError(t, c.Validate())
			require.Equal(t, c, propstest.Parse(t, ParseConfig, c.Properties()))
		})
	}
}

func TestConfigParsePrecedence(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		check func(t *testing.T, c Config)
	}{
		{"retention hours", map[string]string{"log.retention.hours": "1"},
			func(t *testing.T, c Config) { assert.Equal(t, time.Hour, c.DefaultTopic.Retention) }},
		{"retention minutes over hours", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2"},
			func(t *testing.T, c Config) { assert.Equal(t, 2*time.Minute, c.DefaultTopic.Retention) }},
		{"retention ms over minutes and hours", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "3"},
			func(t *testing.T, c Config) { assert.Equal(t, 3*time.Millisecond, c.DefaultTopic.Retention) }},
		{"retention hours negative", map[string]string{"log.retention.hours": "-1"},
			func(t *testing.T, c Config) { assert.Equal(t, Unlimited, c.DefaultTopic.Retention) }},
		{"retention ms -2 is unlimited at the broker", map[string]string{"log.retention.ms": "-2"},
			func(t *testing.T, c Config) { assert.Equal(t, Unlimited, c.DefaultTopic.Retention) }},
		{"retention hours beyond Duration", map[string]string{"log.retention.hours": "2147483647"},
			func(t *testing.T, c Config) { assert.Equal(t, Unlimited, c.DefaultTopic.Retention) }},
		{"roll hours", map[string]string{"log.roll.hours": "2"},
			func(t *testing.T, c Config) { assert.Equal(t, 2*time.Hour, c.DefaultTopic.SegmentRollTime) }},
		{"roll ms over hours", map[string]string{"log.roll.hours": "2", "log.roll.ms": "5000"},
			func(t *testing.T, c Config) { assert.Equal(t, 5*time.Second, c.DefaultTopic.SegmentRollTime) }},
		{"roll jitter hours", map[string]string{"log.roll.jitter.hours": "1"},
			func(t *testing.T, c Config) { assert.Equal(t, time.Hour, c.DefaultTopic.SegmentJitter) }},
		{"roll jitter ms over hours", map[string]string{"log.roll.jitter.hours": "1", "log.roll.jitter.ms": "10"},
			func(t *testing.T, c Config) { assert.Equal(t, 10*time.Millisecond, c.DefaultTopic.SegmentJitter) }},
		{"flush scheduler is flush.ms's fallback", map[string]string{"log.flush.scheduler.interval.ms": "2000"},
			func(t *testing.T, c Config) {
				assert.Equal(t, 2*time.Second, c.FlushSchedulerInterval)
				assert.Equal(t, 2*time.Second, c.DefaultTopic.FlushInterval)
			}},
		{"flush interval over scheduler", map[string]string{"log.flush.scheduler.interval.ms": "2000", "log.flush.interval.ms": "500"},
			func(t *testing.T, c Config) {
				assert.Equal(t, 2*time.Second, c.FlushSchedulerInterval)
				assert.Equal(t, 500*time.Millisecond, c.DefaultTopic.FlushInterval)
			}},
		{"topic synonyms", map[string]string{
			"log.segment.bytes": "1048576", "log.cleanup.policy": "compact", "log.index.size.max.bytes": "4096",
			"log.index.interval.bytes": "100", "message.max.bytes": "2000000", "log.message.timestamp.type": "LogAppendTime",
			"log.message.timestamp.before.max.ms": "1000", "log.message.timestamp.after.max.ms": "2000",
			"compression.type": "gzip", "compression.gzip.level": "5", "log.cleaner.delete.retention.ms": "3000",
			"log.cleaner.min.compaction.lag.ms": "4000", "log.cleaner.max.compaction.lag.ms": "5000",
			"log.cleaner.min.cleanable.ratio": "0.25", "log.segment.delete.delay.ms": "6000",
			"log.flush.interval.messages": "10", "log.preallocate": "true", "log.retention.bytes": "12345",
		}, func(t *testing.T, c Config) {
			want := DefaultTopicConfig()
			want.SegmentBytes, want.CleanupPolicy, want.SegmentIndexBytes = 1048576, CleanupPolicy{Compact: true}, 4096
			want.IndexIntervalBytes, want.MaxMessageBytes, want.MessageTimestampType = 100, 2000000, record.LogAppendTime
			want.MessageTimestampBeforeMax, want.MessageTimestampAfterMax = time.Second, 2*time.Second
			want.CompressionType, want.CompressionGzipLevel, want.DeleteRetention = CompressionGzip, 5, 3*time.Second
			want.MinCompactionLag, want.MaxCompactionLag, want.MinCleanableDirtyRatio = 4*time.Second, 5*time.Second, 0.25
			want.FileDeleteDelay, want.FlushMessages, want.Preallocate, want.RetentionBytes = 6*time.Second, 10, true, 12345
			assert.Equal(t, want, c.DefaultTopic)
		}},
		{"dir settings", map[string]string{"node.id": "3", "num.recovery.threads.per.data.dir": "4",
			"log.retention.check.interval.ms": "1000", "auto.create.topics.enable": "true", "num.partitions": "6",
			"log.flush.offset.checkpoint.interval.ms": "10", "log.flush.start.offset.checkpoint.interval.ms": "20"},
			func(t *testing.T, c Config) {
				assert.Equal(t, int32(3), c.NodeID)
				assert.Equal(t, 4, c.RecoveryThreads)
				assert.Equal(t, time.Second, c.RetentionCheckInterval)
				assert.True(t, c.AutoCreateTopics)
				assert.Equal(t, 6, c.NumPartitions)
				assert.Equal(t, 10*time.Millisecond, c.FlushOffsetCheckpointInterval)
				assert.Equal(t, 20*time.Millisecond, c.FlushStartOffsetCheckpointInterval)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, propstest.Parse(t, ParseConfig, tc.props))
		})
	}
}

func TestConfigParseUnused(t *testing.T) {
	props := map[string]string{
		"process.roles":            "broker,controller",
		"controller.quorum.voters": "1@localhost:9093",
		"listeners":                "PLAINTEXT://:9092,CONTROLLER://:9093",
		"log.dirs":                 "/var/lib/kafka",
		"num.network.threads":      "3",
		"log.cleaner.threads":      "2",
		"min.insync.replicas":      "1",
		"node.id":                  "1",
	}
	c, unused, err := ParseConfig(props)
	require.NoError(t, err)
	require.Equal(t, int32(1), c.NodeID)
	require.Equal(t, 2, c.CleanerThreads)
	require.Equal(t, []string{"controller.quorum.voters", "listeners", "log.dirs",
		"min.insync.replicas", "num.network.threads", "process.roles"}, unused)
	all := UnusedBrokerProperties()
	require.True(t, slices.IsSorted(all))
	for name := range brokerProps {
		require.NotContains(t, all, name, "a used property is not also ignored")
	}
	for name := range ignoredTopicProps {
		require.NotContains(t, brokerProps, name)
	}
}

func TestConfigParseErrors(t *testing.T) {
	tests := []struct {
		prop, value string
		unknown     bool
	}{
		{"node.id", "-1", false},
		{"node.id", "x", false},
		{"num.recovery.threads.per.data.dir", "0", false},
		{"num.partitions", "0", false},
		{"log.retention.check.interval.ms", "0", false},
		{"log.flush.offset.checkpoint.interval.ms", "-1", false},
		{"log.flush.offset.checkpoint.interval.ms", "2147483648", false},
		{"log.flush.scheduler.interval.ms", "0", false},
		{"log.roll.ms", "0", false},
		{"log.roll.hours", "-1", false},
		{"log.roll.hours", "x", false},
		{"log.segment.bytes", "10", false},
		{"log.cleaner.min.cleanable.ratio", "2", false},
		{"auto.create.topics.enable", "sure", false},
		{"log.cleaner.enable", "maybe", false},
		{"log.cleaner.threads", "-1", false},
		{"log.cleaner.dedupe.buffer.size", "1000", false},
		{"log.cleaner.io.buffer.size", "-1", false},
		{"log.cleaner.io.buffer.load.factor", "0", false},
		{"log.cleaner.io.buffer.load.factor", "1.5", false},
		{"log.cleaner.io.buffer.load.factor", "NaN", false},
		{"log.cleaner.backoff.ms", "-1", false},
		{"log.cleaner.io.max.bytes.per.second", "0", false},
		{"min.insync.replicas", "0", false},
		{"remote.log.storage.system.enable", "maybe", false},
		{"remote.log.manager.task.interval.ms", "0", false},
		{"remote.log.metadata.topic.num.partitions", "0", false},
		{"segment.bytes", "1048576", true}, // a topic name
		{"log.message.format.version", "3.0", true},
		{"zookeeper.connect", "localhost:2181", true},
		{"no.such.property", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.prop+"="+tc.value, func(t *testing.T) {
			_, _, err := ParseConfig(map[string]string{tc.prop: tc.value})
			configErrors.One(t, err, tc.prop, unknownIf(tc.unknown))
		})
	}
}

func TestConfigValidateNamesBrokerProperty(t *testing.T) {
	c := DefaultConfig()
	c.DefaultTopic.SegmentRollTime = 0
	c.NumPartitions = 0
	err := c.Validate()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, err.Error(), "log.roll.ms")
	require.Contains(t, err.Error(), "num.partitions")
	require.NotContains(t, err.Error(), "segment.ms")
}

func TestConfigString(t *testing.T) {
	s := DefaultConfig().String()
	require.True(t, strings.HasSuffix(s, "\n"))
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	require.True(t, slices.IsSorted(lines))
	require.Contains(t, lines, "node.id=0")
	require.Contains(t, lines, "log.roll.ms=604800000")
}

func TestConfigErrorMessages(t *testing.T) {
	e := &ConfigError{Property: "retention.ms", Value: "x", Reason: "not a long"}
	require.Equal(t, `log: invalid retention.ms="x": not a long`, e.Error())
	require.ErrorIs(t, e, ErrInvalidConfig)
	require.NotErrorIs(t, e, ErrUnknownProperty)
	u := &ConfigError{Property: "foo", Err: ErrUnknownProperty}
	require.Equal(t, `log: unknown property "foo"`, u.Error())
	require.ErrorIs(t, u, ErrInvalidConfig)
	require.ErrorIs(t, u, ErrUnknownProperty)
}

// FuzzTopicConfigParse sets one property (chosen by index, known or not) to
// an arbitrary value. Invariants: no panic; an error matches
// ErrInvalidConfig; a config that parses is valid and round-trips through
// Properties.
func FuzzTopicConfigParse(f *testing.F) {
	names := append(props.SortedKeys(topicProps), append(props.SortedKeys(ignoredTopicProps), internalSegmentBytes, "unknown")...)
	for i := range names {
		f.Add(uint8(i), "-1")
		f.Add(uint8(i), "9223372036854775807")
		f.Add(uint8(i), " 1 ")
	}
	f.Add(uint8(0), "compact , delete")
	f.Fuzz(func(t *testing.T, i uint8, value string) {
		name := names[int(i)%len(names)]
		c, _, err := ParseTopicConfig(map[string]string{name: value})
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidConfig)
			return
		}
		require.NoError(t, c.Validate())
		again, _, err := ParseTopicConfig(c.Properties())
		require.NoError(t, err)
		require.Equal(t, c, again)
	})
}
