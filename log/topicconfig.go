package log

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/record"
)

// Configuration of a log directory ([Config]) and of its topics
// ([TopicConfig]), mirroring Kafka's broker and topic properties
// (LogConfig.java, TopicConfig.java, ServerLogConfigs.java and
// ServerTopicConfigSynonyms.java of Apache Kafka 4.x). Both are plain
// structs started from Kafka's defaults ([DefaultTopicConfig],
// [DefaultConfig]), parsed from and printed to Kafka property maps
// ([ParseTopicConfig], [TopicConfig.Properties], [ParseConfig],
// [Config.Properties]) so that a Kafka configuration round-trips.
//
// # Values
//
// Values are parsed as Kafka's ConfigDef parses them: surrounding whitespace
// (every character up to U+0020) is ignored; longs and ints are decimal with
// an optional sign; doubles are decimal or exponent notation; booleans are
// "true" or "false" in any case; lists are comma separated with spaces
// around the commas ignored, and an empty value is the empty list. Enumerated
// strings (cleanup.policy, compression.type, message.timestamp.type) are case
// sensitive, as in Kafka.
//
// # Durations and "unlimited"
//
// Kafka spells "no limit" two ways: -1 (retention.ms, retention.bytes) and
// Long.MAX_VALUE milliseconds (flush.ms, max.compaction.lag.ms,
// message.timestamp.before.max.ms, message.timestamp.after.max.ms,
// log.flush.scheduler.interval.ms), which does not fit a [time.Duration].
// Both become [Unlimited]. The rule, for the fields whose doc says they take
// Unlimited:
//
//   - parsing: -1, 9223372036854775807, and any other value too large for a
//     time.Duration (more than about 292 years) parse to Unlimited;
//   - printing: Unlimited prints as Kafka prints that property's infinite
//     value: "-1" for retention.ms, "9223372036854775807" for the others.
//
// So ParseTopicConfig(c.Properties()) == c for every valid c, and a Kafka
// property map parses to the same meaning it has in Kafka, though not always
// to the same string (retention.ms=9223372036854775807 prints back as -1;
// both mean "forever"). kafkalite accepts -1 also where Kafka's validator
// would reject it (flush.ms=-1, max.compaction.lag.ms=-1, ...); what it
// prints Kafka accepts. Durations that do not take Unlimited (segment.ms,
// delete.retention.ms, ...) clamp values beyond time.Duration's range to the
// largest whole-millisecond Duration, which is just as "forever".
// flush.messages uses [UnlimitedMessages] the same way.
//
// Durations must be whole milliseconds, the unit of every Kafka property;
// [TopicConfig.Validate] rejects others.

// Unlimited is the time.Duration meaning "no limit": Kafka's -1 and its
// Long.MAX_VALUE ms both map to it (see the rules above). It is negative, so
// code that compares a duration with elapsed time must test for it.
const Unlimited time.Duration = -1

// RetentionOfTopic is local.retention.ms's and local.retention.bytes'
// default, Kafka's -2: the topic's own retention.ms or retention.bytes.
// For local.retention.ms it is a time.Duration of -2 ns (as Unlimited is
// -1 ns); for local.retention.bytes the int64 -2.
const RetentionOfTopic = -2

// UnlimitedMessages is the flush.messages value meaning "never flush by
// count": Kafka's default Long.MAX_VALUE. "-1" and "9223372036854775807"
// parse to it; it prints as "9223372036854775807".
const UnlimitedMessages int64 = -1

// MinSegmentBytes is the smallest segment.bytes kafkalite accepts: 14 bytes,
// Kafka's minimum before 4.0 (4.0 raised it to 1048576, KIP-1030). The small
// minimum lets tests roll segments quickly; a segment must still hold each
// batch whole: a larger one is refused with [ErrRecordTooLarge], and
// kafkalite's producer then splits its batch until the parts fit.
const MinSegmentBytes = 14

// ErrInvalidConfig is matched by every configuration error ([*ConfigError]):
// a Dir's, a topic's, and, under their own names, a producer's and a
// consumer's.
var ErrInvalidConfig = errors.New("invalid configuration")

// ErrUnknownProperty is matched by the [*ConfigError] for a property name
// Kafka does not define. It also matches [ErrInvalidConfig].
var ErrUnknownProperty = errors.New("unknown property")

// ConfigError names the property that is wrong, its value and why. It is
// every kafkalite configuration's error: the producer's and the consumer's
// (producer.ConfigError, consumer.ConfigError) are this type. It matches
// [ErrInvalidConfig], and Err.
type ConfigError struct {
	// Component is whose configuration it is, and the message's prefix:
	// "log" (a Dir's or a topic's; also when empty), "producer",
	// "consumer".
	Component string
	Property  string // Kafka property name, e.g. "retention.ms"
	Value     string // the value as given (or, from Validate, as it prints)
	Reason    string
	// Err is the sentinel: ErrInvalidConfig; ErrUnknownProperty for a name
	// Kafka does not define; the component's ErrNotSupported for a feature
	// kafkalite does not have. Nil means ErrInvalidConfig.
	Err error
}

func (e *ConfigError) Error() string {
	component := e.Component
	if component == "" {
		component = "log"
	}
	return props.ErrorMessage(component, e.Property, e.Value, e.Reason, errors.Is(e.Err, ErrUnknownProperty))
}

// Unwrap returns Err (ErrInvalidConfig if nil).
func (e *ConfigError) Unwrap() error { return props.Unwrap(e.Err, ErrInvalidConfig) }

// Is matches ErrInvalidConfig, whatever Err is.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// newConfigError makes a *ConfigError for props; a nil sentinel means
// ErrInvalidConfig.
func newConfigError(prop, value, reason string, sentinel error) error {
	return &ConfigError{Component: "log", Property: prop, Value: value, Reason: reason, Err: sentinel}
}

// unknownProperty and invalidProperty make the errors for a name Kafka
// does not define and for a value that does not parse.
var (
	unknownProperty = props.Unknown(newConfigError, ErrUnknownProperty)
	invalidProperty = props.Invalid(newConfigError)
)

// CleanupPolicy mirrors cleanup.policy: a list of "delete" and "compact", in
// any order. Neither (the empty list) is valid too: Kafka 4.x documents it
// as infinite retention with no compaction.
type CleanupPolicy struct {
	Delete  bool // "delete": segments are removed by retention.ms / retention.bytes
	Compact bool // "compact": the cleaner keeps the latest record per key
}

// String returns Kafka's spelling: "delete", "compact", "compact,delete" or
// "" for neither.
func (p CleanupPolicy) String() string {
	switch {
	case p.Delete && p.Compact:
		return "compact,delete"
	case p.Delete:
		return "delete"
	case p.Compact:
		return "compact"
	}
	return ""
}

// ParseCleanupPolicy parses a cleanup.policy list.
func ParseCleanupPolicy(s string) (CleanupPolicy, error) {
	var p CleanupPolicy
	for _, v := range props.List(s) {
		switch v {
		case "delete":
			p.Delete = true
		case "compact":
			p.Compact = true
		default:
			return CleanupPolicy{}, fmt.Errorf("%q is not delete or compact", v)
		}
	}
	return p, nil
}

// CompressionType mirrors compression.type at the topic level: the codec
// the log stores batches with, or "producer" to keep each batch's own.
type CompressionType string

// The compression.type values. ("none" is the producer's name for no
// compression; topics say "uncompressed".)
const (
	CompressionProducer     CompressionType = "producer"
	CompressionUncompressed CompressionType = "uncompressed"
	CompressionGzip         CompressionType = "gzip"
	CompressionSnappy       CompressionType = "snappy"
	CompressionLZ4          CompressionType = "lz4"
	CompressionZstd         CompressionType = "zstd"
)

// ParseCompressionType parses a compression.type value.
func ParseCompressionType(s string) (CompressionType, error) {
	t := CompressionType(props.Trim(s))
	if !t.Valid() {
		return "", fmt.Errorf("%q is not one of producer, uncompressed, gzip, snappy, lz4, zstd", string(t))
	}
	return t, nil
}

// Valid reports whether t is one of the six values.
func (t CompressionType) Valid() bool {
	switch t {
	case CompressionProducer, CompressionUncompressed, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd:
		return true
	}
	return false
}

// Codec returns the codec batches are stored with, or keepProducer = true
// for "producer" (the log keeps the codec each batch came with).
func (t CompressionType) Codec() (codec record.Compression, keepProducer bool) {
	switch t {
	case CompressionProducer:
		return record.None, true
	case CompressionGzip:
		return record.Gzip, false
	case CompressionSnappy:
		return record.Snappy, false
	case CompressionLZ4:
		return record.LZ4, false
	case CompressionZstd:
		return record.Zstd, false
	}
	return record.None, false
}

func (t CompressionType) String() string { return string(t) }

// TopicConfig holds one topic's settings, Kafka's topic-level properties
// (TopicConfig.java, LogConfig.java). Start from [DefaultTopicConfig]: the
// zero value is not valid. A TopicConfig is a value: copies are independent,
// and its methods only read it, so concurrent use of one is safe.
type TopicConfig struct {
	// CleanupPolicy mirrors cleanup.policy (default delete).
	CleanupPolicy CleanupPolicy
	// Retention mirrors retention.ms (default 604800000, 7 days): segments
	// whose newest record is older are deleted (delete policy). Unlimited
	// (Kafka's -1) keeps them forever; 0 is allowed.
	Retention time.Duration
	// RetentionBytes mirrors retention.bytes (default -1): the most bytes a
	// partition keeps (delete policy). Any negative value means no limit,
	// as in Kafka.
	RetentionBytes int64
	// SegmentBytes mirrors segment.bytes (default 1073741824, 1 GiB): a
	// segment rolls before it would exceed this. Kafka 4.0's minimum is
	// 1048576; kafkalite allows down to [MinSegmentBytes] (14), Kafka's old
	// minimum, so tests can roll quickly. At most 2^31-1 (an int in Kafka).
	SegmentBytes int64
	// SegmentRollTime mirrors segment.ms (default 604800000, 7 days): a
	// non-empty segment rolls once its records span this long (a
	// compacted topic's once they span MaxCompactionLag, when that is
	// shorter). At least 1 ms.
	SegmentRollTime time.Duration
	// SegmentJitter mirrors segment.jitter.ms (default 0): the largest
	// random amount subtracted from SegmentRollTime, chosen per segment.
	SegmentJitter time.Duration
	// SegmentIndexBytes mirrors segment.index.bytes (default 10485760): the
	// size the active segment's index files are preallocated to. At least 4.
	SegmentIndexBytes int
	// IndexIntervalBytes mirrors index.interval.bytes (default 4096): bytes
	// appended between offset index entries. At least 0.
	IndexIntervalBytes int
	// MaxMessageBytes mirrors max.message.bytes (default 1048588, 1 MiB +
	// 12): the largest record batch, after compression, the log accepts.
	MaxMessageBytes int
	// MessageTimestampType mirrors message.timestamp.type: CreateTime (the
	// default) or LogAppendTime.
	MessageTimestampType record.TimestampType
	// MessageTimestampBeforeMax mirrors message.timestamp.before.max.ms
	// (default Long.MAX_VALUE = Unlimited): how far a CreateTime record's
	// timestamp may lie before the log's clock.
	MessageTimestampBeforeMax time.Duration
	// RemoteStorageEnable mirrors remote.storage.enable (default false):
	// tiered storage for the topic. Sealed segments are copied to the
	// Dir's Config.RemoteStorage and recorded in __remote_log_metadata;
	// once copied, local segments beyond LocalRetention or
	// LocalRetentionBytes are deleted, and reads below the first local
	// segment are served from the copies. Retention and RetentionBytes then
	// expire copies, counting the copies and the local data not copied;
	// local data is never deleted before it is copied (see
	// [Log.EnforceRetention]). The Dir must have
	// remote.log.storage.system.enable and a store; a compacted topic may
	// not set it (Kafka's rule).
	RemoteStorageEnable bool
	// LocalRetention mirrors local.retention.ms (default -2,
	// RetentionOfTopic: Retention): how long a tiered topic's copied
	// segments stay local. Unlimited keeps them. At most Retention.
	LocalRetention time.Duration
	// LocalRetentionBytes mirrors local.retention.bytes (default -2,
	// RetentionOfTopic: RetentionBytes): the most bytes of a tiered topic's
	// partition kept local (copied segments beyond go). -1: no limit. At
	// most RetentionBytes.
	LocalRetentionBytes int64
	// MessageTimestampAfterMax mirrors message.timestamp.after.max.ms
	// (default 3600000, 1 hour, since Kafka 4.0; Long.MAX_VALUE before): how
	// far a CreateTime record's timestamp may lie after the log's clock.
	// Takes Unlimited.
	MessageTimestampAfterMax time.Duration
	// CompressionType mirrors compression.type (default producer).
	CompressionType CompressionType
	// CompressionGzipLevel mirrors compression.gzip.level (default -1,
	// zlib's default level 6): 1–9 or -1. Used when the log recompresses.
	CompressionGzipLevel int
	// CompressionLZ4Level mirrors compression.lz4.level (default 9): 1–17.
	CompressionLZ4Level int
	// CompressionZstdLevel mirrors compression.zstd.level (default 3):
	// -131072–22.
	CompressionZstdLevel int
	// FlushMessages mirrors flush.messages (default Long.MAX_VALUE =
	// UnlimitedMessages): the log fsyncs after this many appended records.
	// At least 1, or UnlimitedMessages.
	FlushMessages int64
	// FlushInterval mirrors flush.ms (default Long.MAX_VALUE = Unlimited):
	// the log fsyncs data older than this.
	FlushInterval time.Duration
	// FileDeleteDelay mirrors file.delete.delay.ms (default 60000): how long
	// a segment renamed to .deleted waits before its files are removed.
	FileDeleteDelay time.Duration
	// Preallocate mirrors preallocate (default false): new .log files are
	// created at SegmentBytes and trimmed when sealed.
	Preallocate bool
	// MinCompactionLag mirrors min.compaction.lag.ms (default 0): records
	// younger than this are not compacted.
	MinCompactionLag time.Duration
	// MaxCompactionLag mirrors max.compaction.lag.ms (default Long.MAX_VALUE
	// = Unlimited): records older than this make the log eligible for
	// cleaning whatever its dirty ratio, and a compacted topic's active
	// segment rolls once its records span this long, when that is shorter
	// than SegmentRollTime, so that they can be cleaned. At least 1 ms.
	MaxCompactionLag time.Duration
	// DeleteRetention mirrors delete.retention.ms (default 86400000, 1 day):
	// how long the cleaner keeps tombstones and transaction markers.
	DeleteRetention time.Duration
	// MinCleanableDirtyRatio mirrors min.cleanable.dirty.ratio (default 0.5):
	// the dirty fraction above which a compacted log is cleaned. 0–1.
	MinCleanableDirtyRatio float64
}

// DefaultTopicConfig returns Kafka 4.x's topic defaults (LogConfig.java,
// ServerLogConfigs.java), each given in the field's doc.
func DefaultTopicConfig() TopicConfig {
	return TopicConfig{
		CleanupPolicy:             CleanupPolicy{Delete: true},
		Retention:                 7 * 24 * time.Hour,
		RetentionBytes:            -1,
		SegmentBytes:              1 << 30,
		SegmentRollTime:           7 * 24 * time.Hour,
		SegmentIndexBytes:         10 << 20,
		IndexIntervalBytes:        4096,
		MaxMessageBytes:           1048588,
		MessageTimestampType:      record.CreateTime,
		MessageTimestampBeforeMax: Unlimited,
		MessageTimestampAfterMax:  time.Hour,
		CompressionType:           CompressionProducer,
		CompressionGzipLevel:      -1,
		CompressionLZ4Level:       9,
		CompressionZstdLevel:      3,
		FlushMessages:             UnlimitedMessages,
		FlushInterval:             Unlimited,
		FileDeleteDelay:           time.Minute,
		MaxCompactionLag:          Unlimited,
		DeleteRetention:           24 * time.Hour,
		MinCleanableDirtyRatio:    0.5,
		LocalRetention:            RetentionOfTopic,
		LocalRetentionBytes:       RetentionOfTopic,
	}
}

// compressionLevel returns the configured level for codec, in the form
// record.Builder takes (record.DefaultLevel for codecs without levels).
func (c TopicConfig) compressionLevel(codec record.Compression) int {
	switch codec {
	case record.Gzip:
		return c.CompressionGzipLevel
	case record.LZ4:
		return c.CompressionLZ4Level
	case record.Zstd:
		return c.CompressionZstdLevel
	}
	return record.DefaultLevel
}

// Validate applies Kafka's ranges (and kafkalite's smaller segment.bytes
// minimum). It returns nil or one [*ConfigError] per bad property, joined.
func (c TopicConfig) Validate() error {
	v := props.Validator{New: newConfigError}
	v.Check(!c.RemoteStorageEnable || !c.CleanupPolicy.Compact, "remote.storage.enable", c.RemoteStorageEnable,
		"is not supported for compacted topics")
	v.Check(c.LocalRetention == RetentionOfTopic || c.LocalRetention == Unlimited ||
		(c.LocalRetention >= 0 && c.LocalRetention%time.Millisecond == 0), "local.retention.ms", c.LocalRetention.Milliseconds(),
		"must be -2, -1 or at least 0")
	v.Check(c.LocalRetention == RetentionOfTopic || c.Retention == Unlimited ||
		(c.LocalRetention != Unlimited && c.LocalRetention <= c.Retention), "local.retention.ms", c.LocalRetention.Milliseconds(),
		"must not exceed retention.ms")
	v.Check(c.LocalRetentionBytes >= RetentionOfTopic, "local.retention.bytes", c.LocalRetentionBytes, "must be at least -2")
	v.Check(c.LocalRetentionBytes == RetentionOfTopic || c.RetentionBytes < 0 ||
		(c.LocalRetentionBytes >= 0 && c.LocalRetentionBytes <= c.RetentionBytes), "local.retention.bytes", c.LocalRetentionBytes,
		"must not exceed retention.bytes")
	v.Millis("retention.ms", c.Retention, 0, true)
	v.Check(c.SegmentBytes >= MinSegmentBytes && c.SegmentBytes <= math.MaxInt32,
		"segment.bytes", c.SegmentBytes, fmt.Sprintf("must be between %d and %d", MinSegmentBytes, math.MaxInt32))
	v.Millis("segment.ms", c.SegmentRollTime, 1, false)
	v.Millis("segment.jitter.ms", c.SegmentJitter, 0, false)
	v.IntRange("segment.index.bytes", c.SegmentIndexBytes, 4)
	v.IntRange("index.interval.bytes", c.IndexIntervalBytes, 0)
	v.IntRange("max.message.bytes", c.MaxMessageBytes, 0)
	v.Check(c.MessageTimestampType == record.CreateTime || c.MessageTimestampType == record.LogAppendTime,
		"message.timestamp.type", int8(c.MessageTimestampType), "must be CreateTime or LogAppendTime")
	v.Millis("message.timestamp.before.max.ms", c.MessageTimestampBeforeMax, 0, true)
	v.Millis("message.timestamp.after.max.ms", c.MessageTimestampAfterMax, 0, true)
	v.Check(c.CompressionType.Valid(), "compression.type", c.CompressionType,
		"must be one of producer, uncompressed, gzip, snappy, lz4, zstd")
	v.CompressionLevels(c.CompressionGzipLevel, c.CompressionLZ4Level, c.CompressionZstdLevel)
	v.Check(c.FlushMessages >= 1 || c.FlushMessages == UnlimitedMessages,
		"flush.messages", c.FlushMessages, "must be at least 1, or -1 (unlimited)")
	v.Millis("flush.ms", c.FlushInterval, 0, true)
	v.Millis("file.delete.delay.ms", c.FileDeleteDelay, 0, false)
	v.Millis("min.compaction.lag.ms", c.MinCompactionLag, 0, false)
	v.Millis("max.compaction.lag.ms", c.MaxCompactionLag, 1, true)
	v.Millis("delete.retention.ms", c.DeleteRetention, 0, false)
	v.Check(c.MinCleanableDirtyRatio >= 0 && c.MinCleanableDirtyRatio <= 1, // false for NaN
		"min.cleanable.dirty.ratio", c.MinCleanableDirtyRatio, "must be between 0 and 1")
	if c.MaxCompactionLag != Unlimited && c.MinCompactionLag > c.MaxCompactionLag {
		v.Add("min.compaction.lag.ms", props.FormatMillis(c.MinCompactionLag, false),
			"greater than max.compaction.lag.ms ("+props.FormatMillis(c.MaxCompactionLag, true)+")")
	}
	return v.Err()
}

// ParseTopicConfig returns [DefaultTopicConfig] with props, Kafka topic
// property names and values, applied; see [TopicConfig.WithProperties].
func ParseTopicConfig(props map[string]string) (TopicConfig, []string, error) {
	return DefaultTopicConfig().WithProperties(props)
}

// WithProperties returns c with props (Kafka topic property names) applied,
// validated. Properties Kafka defines but kafkalite does not use are
// checked for type and returned, sorted, in unused (see
// [UnusedTopicProperties]). A name Kafka does not define is an error
// matching [ErrUnknownProperty]; a value that does not parse, or a result
// that does not validate, is a [*ConfigError]. Errors for several
// properties are joined, in name order.
//
// internal.segment.bytes, Kafka's testing override of segment.bytes, is
// accepted and sets SegmentBytes, winning over segment.bytes as in Kafka;
// [TopicConfig.Properties] prints segment.bytes.
func (c TopicConfig) WithProperties(props map[string]string) (TopicConfig, []string, error) {
	return c.withProperties(props)
}

// withProperties is WithProperties, with props (the package) in scope.
func (c TopicConfig) withProperties(m map[string]string) (TopicConfig, []string, error) {
	var unused []string
	var errs []error
	keys := props.SortedKeys(m)
	for _, k := range keys {
		if k == internalSegmentBytes {
			continue // applied last
		}
		p, ok := topicProps[k]
		if !ok {
			if check, ok := ignoredTopicProps[k]; ok {
				unused = append(unused, k)
				if err := check(m[k]); err != nil {
					errs = append(errs, invalidProperty(k, m[k], err))
				}
				continue
			}
			errs = append(errs, unknownProperty(k, m[k]))
			continue
		}
		if err := p.Set(&c, m[k]); err != nil {
			errs = append(errs, invalidProperty(k, m[k], err))
		}
	}
	if v, ok := m[internalSegmentBytes]; ok {
		if err := topicProps["segment.bytes"].Set(&c, v); err != nil {
			errs = append(errs, invalidProperty(internalSegmentBytes, v, err))
		}
	}
	if len(errs) == 0 {
		if err := c.Validate(); err != nil {
			_, internal := m[internalSegmentBytes]
			errs = renameProperties(err, func(p string) string {
				if internal && p == "segment.bytes" {
					return internalSegmentBytes // the value came from there
				}
				return p
			})
		}
	}
	if len(errs) > 0 {
		return TopicConfig{}, nil, errors.Join(errs...)
	}
	return c, unused, nil
}

// renameProperties returns the errors joined in err with each
// ConfigError's Property passed through rename.
func renameProperties(err error, rename func(string) string) []error {
	var out []error
	for _, e := range props.FlattenJoin(err) {
		var ce *ConfigError
		if errors.As(e, &ce) {
			renamed := *ce
			renamed.Property = rename(ce.Property)
			e = &renamed
		}
		out = append(out, e)
	}
	return out
}

// Properties prints every field as a Kafka topic property, so that
// ParseTopicConfig(c.Properties()) returns c for a valid c (Unlimited
// prints as the property's Kafka spelling of infinity; see the package's
// rules above).
func (c TopicConfig) Properties() map[string]string {
	return props.Print(&c, topicProps)
}

// Overrides returns the properties of c whose printed value differs from
// base's: what a topic stores when base is the directory's default.
func (c TopicConfig) Overrides(base TopicConfig) map[string]string {
	m := props.Print(&c, topicProps)
	for name, v := range props.Print(&base, topicProps) {
		if m[name] == v {
			delete(m, name)
		}
	}
	return m
}

// String returns the properties as sorted "name=value" lines.
func (c TopicConfig) String() string { return props.String(c.Properties()) }

// UnusedTopicProperties returns, sorted, the topic properties Kafka 4.x
// defines that kafkalite accepts (checking their values' types) but does
// not use: replication, throttling and some tiered storage settings.
func UnusedTopicProperties() []string { return props.SortedKeys(ignoredTopicProps) }

// maxSegmentTime is how long a segment's records may span before it rolls
// (Kafka's LogConfig.maxSegmentMs): segment.ms, or max.compaction.lag.ms
// for a compacted topic when that is shorter.
func (c TopicConfig) maxSegmentTime() time.Duration {
	if c.CleanupPolicy.Compact && c.MaxCompactionLag > 0 {
		return min(c.MaxCompactionLag, c.SegmentRollTime)
	}
	return c.SegmentRollTime
}

// localRetention returns the local retention in force: local.retention.ms
// and local.retention.bytes, or the topic's retention where they are -2.
func (c TopicConfig) localRetention() (time.Duration, int64) {
	ms, bytes := c.LocalRetention, c.LocalRetentionBytes
	if ms == RetentionOfTopic {
		ms = c.Retention
	}
	if bytes == RetentionOfTopic {
		bytes = c.RetentionBytes
	}
	return ms, bytes
}
