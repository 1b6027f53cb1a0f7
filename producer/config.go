package producer

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/partitioner"
	"github.com/kafkalite/kafkalite/record"
)

// Configuration of a producer ([Config]), mirroring Kafka's producer
// properties (ProducerConfig.java and KafkaProducer.java of Apache Kafka
// 4.x). A Config is a plain struct started from Kafka's defaults
// ([DefaultConfig]), parsed from and printed to Kafka property maps
// ([ParseConfig], [Config.Properties]) so that a Kafka producer
// configuration round-trips.
//
// # Values
//
// Values are parsed as Kafka's ConfigDef parses them: surrounding whitespace
// (every character up to U+0020) is ignored; longs and ints are decimal with
// an optional sign; booleans are "true" or "false" in any case; lists are
// comma separated. Enumerated strings (acks, compression.type) are case
// sensitive, as in Kafka. Millisecond counts too large for a time.Duration
// (about 292 years; max.block.ms=9223372036854775807, say) clamp to the
// largest whole-millisecond Duration, which is just as "forever".
//
// # Where kafkalite differs from Kafka
//
//   - A typed Config cannot tell a default from a choice, so
//     EnableIdempotence (default true, as in Kafka) with acks 0 or 1 is an
//     error there: set EnableIdempotence to false with them. From a
//     property map, Kafka's rule applies: an enable.idempotence left out
//     gives way to acks=0/1, retries=0 or
//     max.in.flight.requests.per.connection > 5; set explicitly to true,
//     they are an error.
//   - A record for a topic that does not exist fails unless
//     [Config.AutoCreateTopics] is set (Kafka leaves this to the broker's
//     auto.create.topics.enable, default true).
//   - buffer.memory and max.request.size must be positive (Kafka accepts 0,
//     with which every send fails).
//   - Interceptors, a custom partitioner, the logger and the clock are Go
//     values set in code; from a property map, only Kafka's built-in
//     partitioner classes resolve, and interceptor class names are an error.
//     Serializers (key.serializer, value.serializer) are Go code too: the
//     properties are accepted and ignored.

// ErrNotSupported is matched by errors for features kafkalite does not
// have yet; the error names the feature (for configuration, a
// [*ConfigError] whose Err is ErrNotSupported).
var ErrNotSupported = errors.New("producer: not supported")

// ErrInvalidConfig is matched by every configuration error ([*ConfigError]):
// [log.ErrInvalidConfig], one sentinel for every kafkalite configuration.
var ErrInvalidConfig = log.ErrInvalidConfig

// ErrUnknownProperty is matched by the [*ConfigError] for a property name
// Kafka's producer does not define ([log.ErrUnknownProperty]). It also matches
// [ErrInvalidConfig].
var ErrUnknownProperty = log.ErrUnknownProperty

// ConfigError names the property that is wrong, its value and why: a
// [log.ConfigError] whose Component is "producer". It matches
// [ErrInvalidConfig], and its Err ([ErrUnknownProperty], or
// [ErrNotSupported] for a feature kafkalite does not have).
type ConfigError = log.ConfigError

// newConfigError makes a *ConfigError for props; a nil sentinel means
// ErrInvalidConfig.
func newConfigError(prop, value, reason string, sentinel error) error {
	return &ConfigError{Component: "producer", Property: prop, Value: value, Reason: reason, Err: sentinel}
}

// unknownProperty is the error for a name Kafka's producer does not define.
var unknownProperty = props.Unknown(newConfigError, ErrUnknownProperty)

// configErrorProperty is the key errors are sorted by: their property.
func configErrorProperty(err error) string { return err.(*ConfigError).Property }

// Acks mirrors acks: how much of the write the producer waits for before a
// record counts as sent. In-process there are no followers, so acks=1 and
// acks=all differ only in durability (see the log package: acks=all waits
// for the fsync).
type Acks int8

// The acks values.
const (
	AcksNone   Acks = 0  // acks=0: do not wait; the offset reported is -1
	AcksLeader Acks = 1  // acks=1: the leader appended the batch
	AcksAll    Acks = -1 // acks=all (or -1), Kafka's default: the write is durable
)

// String returns Kafka's spelling: "0", "1" or "all".
func (a Acks) String() string {
	switch a {
	case AcksNone:
		return "0"
	case AcksLeader:
		return "1"
	case AcksAll:
		return "all"
	}
	return fmt.Sprintf("acks(%d)", int8(a))
}

func (a Acks) valid() bool { return a == AcksNone || a == AcksLeader || a == AcksAll }

// parseAcks accepts what Kafka's validator accepts: "all", "-1", "0", "1".
func parseAcks(v string) (Acks, error) {
	switch props.Trim(v) {
	case "all", "-1":
		return AcksAll, nil
	case "0":
		return AcksNone, nil
	case "1":
		return AcksLeader, nil
	}
	return 0, errors.New(`must be one of all, -1, 0, 1`)
}

// Config holds a producer's settings: Kafka's producer properties
// (ProducerConfig.java) plus hooks that are Go values (Partitioner,
// Interceptors, Logger, Now) and AutoCreateTopics. Start from
// [DefaultConfig]: the zero value is not valid (a zero Linger or BatchSize
// is a real setting). A Config is a value; methods only read it, and the
// producer keeps its own copy.
type Config struct {
	// ClientID mirrors client.id (default ""): the name in log lines and
	// errors. Empty means the producer names itself "producer-N", N
	// counting producers created in this process from 1, as Kafka does.
	ClientID string
	// Acks mirrors acks (default AcksAll).
	Acks Acks
	// BatchSize mirrors batch.size (default 16384): the bytes a batch is
	// allocated with and filled up to, and the size of the buffers the
	// BufferPool recycles. 0 disables batching: every record is a batch of
	// its own (Kafka then uses 1 as the size). 0 to 2147483647.
	BatchSize int
	// Linger mirrors linger.ms (default 5 ms since Kafka 4.0, 0 before): how
	// long a batch that is not full waits for more records. At least 0.
	Linger time.Duration
	// BufferMemory mirrors buffer.memory (default 33554432, 32 MiB): the
	// bytes all batches not yet written to the log may hold. Send blocks
	// when they are used up (see MaxBlock). At least 1.
	BufferMemory int64
	// MaxBlock mirrors max.block.ms (default 60000, 60 s): the longest Send
	// waits for buffer memory before it fails with [ErrBufferExhausted]; 0
	// fails at once. At least 0.
	MaxBlock time.Duration
	// MaxRequestSize mirrors max.request.size (default 1048576, 1 MiB): a
	// record whose batch, alone, could exceed this is rejected by Send
	// (in Kafka it also caps a produce request). 1 to 2147483647.
	MaxRequestSize int
	// CompressionType mirrors compression.type (default none): none, gzip,
	// snappy, lz4 or zstd.
	CompressionType record.Compression
	// CompressionGzipLevel mirrors compression.gzip.level (default -1,
	// zlib's default, level 6): 1–9 or -1.
	CompressionGzipLevel int
	// CompressionLZ4Level mirrors compression.lz4.level (default 9): 1–17.
	CompressionLZ4Level int
	// CompressionZstdLevel mirrors compression.zstd.level (default 3):
	// -131072–22.
	CompressionZstdLevel int
	// DeliveryTimeout mirrors delivery.timeout.ms (default 120000, 2
	// minutes): the longest a record may wait, from Send's return, for its
	// result. At least Linger + RequestTimeout, as Kafka checks (ParseConfig
	// raises the default to that sum when the map leaves
	// delivery.timeout.ms out, as Kafka does). 0 to 2147483647 ms.
	DeliveryTimeout time.Duration
	// RequestTimeout mirrors request.timeout.ms (default 30000, 30 s): in
	// Kafka, how long the client waits for a broker's response. In-process
	// there is no broker to wait for; it counts in the DeliveryTimeout
	// check. 0 to 2147483647 ms.
	RequestTimeout time.Duration
	// EnableIdempotence mirrors enable.idempotence (default true): the
	// producer gets a producer id from the log directory and numbers its
	// batches per partition, so that the log writes none twice and keeps
	// them in order (as Kafka's ProducerStateManager checks sequences).
	// Requires Acks all.
	EnableIdempotence bool
	// TransactionalID mirrors transactional.id (default unset, ""): set, the
	// producer is transactional (InitTransactions, BeginTransaction,
	// CommitTransaction, ...) and fences earlier producers with the same
	// id. Requires EnableIdempotence.
	TransactionalID string
	// TransactionTimeout mirrors transaction.timeout.ms (default 60000,
	// 60 s): how long a transaction may stay open before the coordinator
	// aborts it (and fences the producer). At most the directory's
	// transaction.max.timeout.ms; 0 to 2147483647 ms.
	TransactionTimeout time.Duration
	// Partitioner mirrors partitioner.class (default unset): nil selects
	// Kafka's built-in partitioning (key hash, else uniform sticky; see the
	// partitioner package doc). From a property map, Kafka's Java class names
	// resolve through [partitioner.ByClassName]; any partitioner can be set
	// in code.
	Partitioner partitioner.Partitioner
	// PartitionerIgnoreKeys mirrors partitioner.ignore.keys (default false):
	// when true the built-in partitioner does not hash keys; every record
	// without an explicit partition goes to the sticky partition. No effect
	// with a custom Partitioner.
	PartitionerIgnoreKeys bool
	// PartitionerAdaptive mirrors partitioner.adaptive.partitioning.enable
	// (default true): the built-in sticky partitioner favours partitions
	// with fewer pending batches. No effect with a custom Partitioner.
	PartitionerAdaptive bool
	// PartitionerAvailabilityTimeout mirrors
	// partitioner.availability.timeout.ms (default 0, off). Accepted and
	// kept; in-process every partition is always available, so it has no
	// effect. At least 0.
	PartitionerAvailabilityTimeout time.Duration
	// AutoCreateTopics is not a producer property: in Kafka, auto-creation
	// is the broker's auto.create.topics.enable (default true there). With
	// kafkalite's default, false, a record for a topic that does not exist
	// fails with an unknown-topic error (log.ErrUnknownTopicOrPartition);
	// true creates the topic with the log directory's defaults
	// (num.partitions and its default topic configuration). ParseConfig
	// leaves it false; Properties does not print it.
	AutoCreateTopics bool
	// Interceptors mirrors interceptor.classes (default none): each sees
	// every record before it is partitioned, in order, and every
	// acknowledgement. Go values only: from a property map, class names are
	// an error.
	Interceptors []Interceptor
	// Logger receives the producer's log lines; nil means slog.Default()
	// at level Warn and above.
	Logger *slog.Logger
	// Now is the clock for record timestamps, linger and timeouts; nil
	// means time.Now. Tests inject one.
	Now func() time.Time
}

// DefaultConfig returns Kafka 4.x's producer defaults (ProducerConfig.java),
// with kafkalite's difference (AutoCreateTopics false) as documented on the
// field.
func DefaultConfig() Config {
	return Config{
		Acks:                 AcksAll,
		BatchSize:            16384,
		Linger:               5 * time.Millisecond,
		BufferMemory:         32 << 20,
		MaxBlock:             time.Minute,
		MaxRequestSize:       1 << 20,
		CompressionType:      record.None,
		CompressionGzipLevel: -1,
		CompressionLZ4Level:  9,
		CompressionZstdLevel: 3,
		DeliveryTimeout:      2 * time.Minute,
		RequestTimeout:       30 * time.Second,
		EnableIdempotence:    true,
		TransactionTimeout:   time.Minute,
		PartitionerAdaptive:  true,
	}
}

// compressionLevel returns the level for CompressionType in the form
// record.Builder takes: record.DefaultLevel for Kafka's gzip -1 and for
// codecs without levels.
func (c Config) compressionLevel() int {
	switch c.CompressionType {
	case record.Gzip:
		if c.CompressionGzipLevel == -1 {
			return record.DefaultLevel // zlib's default, 6
		}
		return c.CompressionGzipLevel
	case record.LZ4:
		return c.CompressionLZ4Level
	case record.Zstd:
		return c.CompressionZstdLevel // zstd's 0 is its default, 3, as record.DefaultLevel
	}
	return record.DefaultLevel
}

// Validate applies Kafka's ranges and cross-checks (ProducerConfig.java,
// KafkaProducer.java) and kafkalite's limits. It returns nil or one
// [*ConfigError] per bad property, joined in name order.
func (c Config) Validate() error {
	v := props.Validator{New: newConfigError, Key: configErrorProperty}
	v.Check(c.Acks.valid(), "acks", c.Acks, "must be one of all, -1, 0, 1")
	v.Check(c.BatchSize >= 0 && c.BatchSize <= math.MaxInt32,
		"batch.size", c.BatchSize, fmt.Sprintf("must be between 0 and %d", math.MaxInt32))
	v.Millis("linger.ms", c.Linger, 0, false)
	v.Check(c.BufferMemory > 0, "buffer.memory", c.BufferMemory, "must be at least 1")
	v.Millis("max.block.ms", c.MaxBlock, 0, false)
	v.Check(c.MaxRequestSize > 0 && c.MaxRequestSize <= math.MaxInt32,
		"max.request.size", c.MaxRequestSize, fmt.Sprintf("must be between 1 and %d", math.MaxInt32))
	v.Check(c.CompressionType.Valid(), "compression.type", c.CompressionType,
		"must be one of none, gzip, snappy, lz4, zstd")
	v.CompressionLevels(c.CompressionGzipLevel, c.CompressionLZ4Level, c.CompressionZstdLevel)
	v.IntMillis("delivery.timeout.ms", c.DeliveryTimeout, 0)
	v.IntMillis("request.timeout.ms", c.RequestTimeout, 0)
	if c.DeliveryTimeout >= 0 && c.Linger >= 0 && c.RequestTimeout >= 0 &&
		c.DeliveryTimeout.Milliseconds() < lingerPlusRequestMillis(c) {
		v.Add("delivery.timeout.ms", props.FormatMillis(c.DeliveryTimeout, false),
			fmt.Sprintf("must be at least linger.ms + request.timeout.ms (%d)", lingerPlusRequestMillis(c)))
	}
	if c.EnableIdempotence && c.Acks.valid() && c.Acks != AcksAll {
		v.Add("enable.idempotence", "true", fmt.Sprintf("requires acks=all, not %s (set EnableIdempotence to false for acks 0 or 1)", c.Acks))
	}
	if c.TransactionalID != "" && !c.EnableIdempotence {
		v.Add("transactional.id", c.TransactionalID, "requires enable.idempotence=true")
	}
	v.IntMillis("transaction.timeout.ms", c.TransactionTimeout, 0)
	v.Millis("partitioner.availability.timeout.ms", c.PartitionerAvailabilityTimeout, 0, false)
	return v.Err()
}

// lingerPlusRequestMillis is Kafka's bound for delivery.timeout.ms:
// linger.ms (clamped to an int) + request.timeout.ms, clamped to an int.
func lingerPlusRequestMillis(c Config) int64 {
	linger := min(c.Linger.Milliseconds(), math.MaxInt32)
	return min(linger+c.RequestTimeout.Milliseconds(), math.MaxInt32)
}

// ParseConfig returns [DefaultConfig] with props, Kafka producer property
// names and values, applied and validated.
//
// Properties Kafka's producer defines that kafkalite does not use
// (networking, security, metrics, retries, serializers: see the list
// below) are accepted and returned, sorted, in unused; a few have their
// values checked as Kafka would. Names Kafka does not define are errors
// matching [ErrUnknownProperty]; a value that does not parse, or a result
// that does not validate, is a [*ConfigError]. Errors for several
// properties are joined, in name order.
//
// As in Kafka: acks accepts "all", "-1", "0" and "1"; when
// delivery.timeout.ms is absent and its default is below linger.ms +
// request.timeout.ms, it is raised to that sum; partitioner.class names a
// Java class, resolved by [partitioner.ByClassName] (with the final
// batch.size) to kafkalite's equivalent. interceptor.classes must be empty:
// Java classes cannot be loaded, so interceptors are set in code
// ([Config.Interceptors]). key.serializer and value.serializer are accepted
// and ignored: serializers are Go code. Any ssl.* or sasl.* name is
// accepted as a security setting, which has no meaning in-process.
//
// Accepted and unused (Apache Kafka 4.x ProducerConfig.java):
// bootstrap.servers, client.dns.lookup, config.providers,
// connections.max.idle.ms, enable.metrics.push, key.serializer,
// max.in.flight.requests.per.connection, metadata.max.age.ms,
// metadata.max.idle.ms, metadata.recovery.rebootstrap.trigger.ms,
// metadata.recovery.strategy, metric.reporters, metrics.num.samples,
// metrics.recording.level, metrics.sample.window.ms,
// receive.buffer.bytes, reconnect.backoff.max.ms, reconnect.backoff.ms,
// retries, retry.backoff.max.ms, retry.backoff.ms, security.protocol,
// security.providers, send.buffer.bytes,
// socket.connection.setup.timeout.max.ms,
// socket.connection.setup.timeout.ms, transaction.two.phase.commit.enable
// (must be false), value.serializer, and ssl.*, sasl.*.
func ParseConfig(props map[string]string) (Config, []string, error) { return parseConfig(props) }

// parseConfig is ParseConfig, with props (the package) in scope.
func parseConfig(m map[string]string) (Config, []string, error) {
	c := DefaultConfig()
	unused, errs := props.Sift(m, producerProps, props.InClient(ignoredProducerProps), unknownProperty, propError)
	errs = append(errs, props.Apply(&c, m, producerProps, producerOrder, propError)...)
	errs = append(errs, idempotenceRules(&c, m)...)
	if _, ok := m["delivery.timeout.ms"]; !ok && c.Linger >= 0 && c.RequestTimeout >= 0 {
		// KafkaProducer.configureDeliveryTimeout: the default yields.
		if bound := lingerPlusRequestMillis(c); c.DeliveryTimeout.Milliseconds() < bound {
			c.DeliveryTimeout = time.Duration(bound) * time.Millisecond
		}
	}
	return props.Parsed(c, unused, errs, configErrorProperty, c.Validate)
}

// idempotenceRules applies Kafka's ProducerConfig rules for
// enable.idempotence: left out of the map, it gives way to acks 0 or 1,
// retries=0 or max.in.flight.requests.per.connection > 5 (which kafkalite
// otherwise ignores); set to true, any of them is an error, and so is a
// transactional.id without idempotence.
func idempotenceRules(c *Config, m map[string]string) []error {
	if !c.EnableIdempotence {
		return nil
	}
	var conflicts []string
	if c.Acks != AcksAll {
		conflicts = append(conflicts, "acks="+c.Acks.String())
	}
	if v, ok := m["retries"]; ok {
		if n, err := props.Int(v); err == nil && n == 0 {
			conflicts = append(conflicts, "retries=0")
		}
	}
	if v, ok := m["max.in.flight.requests.per.connection"]; ok {
		if n, err := props.Int(v); err == nil && n > 5 {
			conflicts = append(conflicts, fmt.Sprintf("max.in.flight.requests.per.connection=%d", n))
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	if _, explicit := m["enable.idempotence"]; explicit || c.TransactionalID != "" {
		return []error{&ConfigError{Property: "enable.idempotence", Value: "true",
			Reason: "conflicts with " + strings.Join(conflicts, ", ") + " (idempotence needs acks=all, retries > 0 and at most 5 requests in flight)"}}
	}
	c.EnableIdempotence = false
	return nil
}

// propError makes err, from parsing property k's value v, a *ConfigError:
// err itself if it is one (given k and v), else one with err as the reason.
func propError(k, v string, err error) error {
	var ce *ConfigError
	if errors.As(err, &ce) {
		ce.Property, ce.Value = k, v
		return ce
	}
	return &ConfigError{Property: k, Value: v, Reason: err.Error()}
}

// Properties prints the settings as Kafka producer properties, so that
// ParseConfig(c.Properties()) returns c for a valid c whose hooks are nil
// (Interceptors, Logger, Now; Partitioner nil or a built-in) and whose
// AutoCreateTopics is false. client.id and transactional.id are printed only
// when set, because Kafka treats an empty client.id as "no name", not as
// "generate one"; partitioner.class only for a built-in partitioner that
// has a Java class name ([partitioner.ClassName]).
func (c Config) Properties() map[string]string { return props.Print(&c, producerProps) }

// String returns the properties as sorted "name=value" lines.
func (c Config) String() string { return props.String(c.Properties()) }

// producerProp parses a producer property into a Config and prints it
// back; Get's false means "not printed".
type producerProp = props.Prop[Config]

// producerProps: the producer properties kafkalite uses. Verified against
// Apache Kafka 4.x ProducerConfig.java.
var producerProps = map[string]producerProp{
	"client.id": {
		Set: func(c *Config, v string) error { c.ClientID = props.Trim(v); return nil },
		Get: func(c *Config) (string, bool) { return c.ClientID, c.ClientID != "" }},
	"acks": {
		Set: func(c *Config, v string) (err error) { c.Acks, err = parseAcks(v); return },
		Get: func(c *Config) (string, bool) { return c.Acks.String(), true }},
	"batch.size":       props.IntProp(func(c *Config) *int { return &c.BatchSize }),
	"linger.ms":        props.MillisProp(func(c *Config) *time.Duration { return &c.Linger }, false),
	"buffer.memory":    props.LongProp(func(c *Config) *int64 { return &c.BufferMemory }),
	"max.block.ms":     props.MillisProp(func(c *Config) *time.Duration { return &c.MaxBlock }, false),
	"max.request.size": props.IntProp(func(c *Config) *int { return &c.MaxRequestSize }),
	"compression.type": {
		Set: func(c *Config, v string) error {
			codec, err := record.ParseCompression(props.Trim(v))
			if err != nil {
				return errors.New("must be one of none, gzip, snappy, lz4, zstd")
			}
			c.CompressionType = codec
			return nil
		},
		Get: func(c *Config) (string, bool) { return c.CompressionType.String(), true }},
	"compression.gzip.level": props.IntProp(func(c *Config) *int { return &c.CompressionGzipLevel }),
	"compression.lz4.level":  props.IntProp(func(c *Config) *int { return &c.CompressionLZ4Level }),
	"compression.zstd.level": props.IntProp(func(c *Config) *int { return &c.CompressionZstdLevel }),
	"delivery.timeout.ms":    props.MillisProp(func(c *Config) *time.Duration { return &c.DeliveryTimeout }, true),
	"request.timeout.ms":     props.MillisProp(func(c *Config) *time.Duration { return &c.RequestTimeout }, true),
	"enable.idempotence":     props.BoolProp(func(c *Config) *bool { return &c.EnableIdempotence }),
	"transactional.id": {
		Set: func(c *Config, v string) error {
			// Kafka's NonEmptyString validator: set means non-empty.
			if c.TransactionalID = props.Trim(v); c.TransactionalID == "" {
				return errors.New("must be non-empty when set")
			}
			return nil
		},
		Get: func(c *Config) (string, bool) { return c.TransactionalID, c.TransactionalID != "" }},
	"transaction.timeout.ms": props.MillisProp(func(c *Config) *time.Duration { return &c.TransactionTimeout }, true),
	"partitioner.class": {
		Set: func(c *Config, v string) error {
			name := props.Trim(v)
			if name == "" {
				c.Partitioner = nil // Kafka's null: the built-in partitioner
				return nil
			}
			p, err := partitioner.ByClassName(name, c.BatchSize)
			if err != nil {
				return err
			}
			c.Partitioner = p
			return nil
		},
		Get: func(c *Config) (string, bool) {
			// A *partitioner.Default prints nothing: it is the built-in.
			name, ok := partitioner.ClassName(c.Partitioner)
			return name, ok && name != ""
		}},
	"partitioner.ignore.keys":                  props.BoolProp(func(c *Config) *bool { return &c.PartitionerIgnoreKeys }),
	"partitioner.adaptive.partitioning.enable": props.BoolProp(func(c *Config) *bool { return &c.PartitionerAdaptive }),
	"partitioner.availability.timeout.ms": props.MillisProp(
		func(c *Config) *time.Duration { return &c.PartitionerAvailabilityTimeout }, false),
	"interceptor.classes": {
		Set: func(c *Config, v string) error {
			if len(props.List(v)) > 0 {
				return errors.New("cannot load Java interceptor classes; set Config.Interceptors in code")
			}
			return nil
		},
		Get: nil}, // Go values: never printed
}

// producerOrder is the order ParseConfig applies properties in: by name,
// except partitioner.class last, because it is built with the final
// batch.size.
var producerOrder = func() []string {
	names := props.SortedKeys(producerProps)
	names = slices.DeleteFunc(names, func(n string) bool { return n == "partitioner.class" })
	return append(names, "partitioner.class")
}()

// ignoredProducerProps: producer properties of Kafka 4.x that kafkalite
// accepts and ignores; a non-nil func checks the value as Kafka would.
// Verified against ProducerConfig.java and CommonClientConfigs.java.
var ignoredProducerProps = map[string]func(string) error{
	// Networking and metadata.
	"bootstrap.servers": nil, "client.dns.lookup": nil, "connections.max.idle.ms": nil,
	"metadata.max.age.ms": nil, "metadata.max.idle.ms": nil, "metadata.recovery.strategy": nil,
	"metadata.recovery.rebootstrap.trigger.ms": nil, "receive.buffer.bytes": nil, "send.buffer.bytes": nil,
	"reconnect.backoff.ms": nil, "reconnect.backoff.max.ms": nil, "socket.connection.setup.timeout.ms": nil,
	"socket.connection.setup.timeout.max.ms": nil,
	// Retries and in-flight requests: in-process writes are not retried.
	"retries":                               props.CheckAtLeast(0, true),
	"retry.backoff.ms":                      nil,
	"retry.backoff.max.ms":                  nil,
	"max.in.flight.requests.per.connection": props.CheckAtLeast(1, true),
	// Serializers are Go code.
	"key.serializer": nil, "value.serializer": nil,
	// Metrics.
	"enable.metrics.push": props.CheckBool, "metric.reporters": nil, "metrics.num.samples": nil,
	"metrics.recording.level": nil, "metrics.sample.window.ms": nil,
	// Security and plugins (ssl.* and sasl.* too: see props.InClient).
	"security.protocol": nil, "security.providers": nil, "config.providers": nil,
	// Transactions.
	"transaction.two.phase.commit.enable": checkNoTwoPhaseCommit,
}

// checkNoTwoPhaseCommit accepts only false: two-phase commit with an
// external transaction manager (KIP-939) is not in kafkalite.
func checkNoTwoPhaseCommit(v string) error {
	b, err := props.Bool(v)
	if err == nil && b {
		return &ConfigError{Reason: "two-phase commit transactions (KIP-939) are not supported by kafkalite",
			Err: ErrNotSupported}
	}
	return err
}
