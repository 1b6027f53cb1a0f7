package log

import (
	"errors"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Config configures a log directory (Kafka's LogManager) and the defaults of
// its topics: Kafka's broker properties. Start from [DefaultConfig].
// Logger, FS and Now are hooks, not properties. A Config is a value; the Dir
// keeps its own copy.
type Config struct {
	// NodeID mirrors node.id: the node identity written to meta.properties
	// (Kafka's MetaProperties). Kafka requires it in KRaft mode (its
	// default, -1, means unset); kafkalite, a single node, defaults to 0.
	// At least 0.
	NodeID int32
	// RecoveryThreads mirrors num.recovery.threads.per.data.dir (default 2
	// since Kafka 4.0, 1 before): partitions loaded or flushed in parallel
	// at open and close. At least 1.
	RecoveryThreads int
	// RetentionCheckInterval mirrors log.retention.check.interval.ms
	// (default 300000, 5 minutes): how often retention runs. At least 1 ms.
	RetentionCheckInterval time.Duration
	// FlushOffsetCheckpointInterval mirrors
	// log.flush.offset.checkpoint.interval.ms (default 60000): how often
	// recovery-point-offset-checkpoint is written.
	FlushOffsetCheckpointInterval time.Duration
	// FlushStartOffsetCheckpointInterval mirrors
	// log.flush.start.offset.checkpoint.interval.ms (default 60000): how
	// often log-start-offset-checkpoint is written.
	FlushStartOffsetCheckpointInterval time.Duration
	// FlushSchedulerInterval mirrors log.flush.scheduler.interval.ms
	// (default Long.MAX_VALUE = Unlimited: never): how often the flusher
	// checks flush.ms. It is also the fallback for DefaultTopic's flush.ms
	// when log.flush.interval.ms is absent, as in Kafka. Unlimited or at
	// least 1 ms.
	FlushSchedulerInterval time.Duration
	// DefaultTopic holds the broker-level defaults of topic settings
	// (log.segment.bytes, log.retention.ms, ...), applied to every topic
	// without its own override.
	DefaultTopic TopicConfig
	// AutoCreateTopics mirrors auto.create.topics.enable. Kafka's default is
	// true; kafkalite's is false, following the usual production advice: a
	// typo in a topic name should fail, not silently create a topic.
	AutoCreateTopics bool
	// OffsetsTopicNumPartitions mirrors offsets.topic.num.partitions: the
	// partitions of __consumer_offsets, fixed once the topic exists (an
	// existing topic keeps its count whatever this says). Kafka's default
	// is 50, to spread the group coordinators over a cluster's brokers;
	// one process has one coordinator, and 50 partitions would cost it
	// 150 open files and a gigabyte of preallocated index files at rest,
	// so kafkalite's default is 1.
	OffsetsTopicNumPartitions int
	// OffsetsRetention mirrors offsets.retention.minutes (default 10080,
	// 7 days): committed offsets of an empty group expire after it.
	OffsetsRetention time.Duration
	// GroupInitialRebalanceDelay mirrors group.initial.rebalance.delay.ms.
	// Kafka's broker default is 3000 ms, to let a group's first members
	// arrive together; in process the members are already there, so
	// kafkalite's default is 0.
	GroupInitialRebalanceDelay time.Duration
	// ProducerIDExpiration mirrors producer.id.expiration.ms (default
	// 86400000, 1 day): a partition forgets an idempotent producer whose
	// latest batch is at least that old, unless it has a transaction open.
	// At least 1 ms.
	ProducerIDExpiration time.Duration
	// ProducerIDExpirationCheckInterval mirrors
	// producer.id.expiration.check.interval.ms (default 600000, 10 minutes).
	// At least 1 ms.
	ProducerIDExpirationCheckInterval time.Duration
	// TransactionStateNumPartitions mirrors
	// transaction.state.log.num.partitions: the partitions of
	// __transaction_state, fixed once the topic exists. Kafka's default is
	// 50; kafkalite's is 1, for the reason OffsetsTopicNumPartitions gives.
	TransactionStateNumPartitions int
	// TransactionMaxTimeout mirrors transaction.max.timeout.ms (default
	// 900000, 15 minutes): the longest transaction.timeout.ms a producer
	// may ask for. At least 1 ms.
	TransactionMaxTimeout time.Duration
	// TransactionalIDExpiration mirrors transactional.id.expiration.ms
	// (default 604800000, 7 days): a transactional id without a transaction
	// for this long is removed. At least 1 ms.
	TransactionalIDExpiration time.Duration
	// TransactionAbortTimedOutInterval mirrors
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (default
	// 10000): how often the transaction coordinator aborts transactions
	// open past their timeout. At least 1 ms.
	TransactionAbortTimedOutInterval time.Duration
	// TransactionRemoveExpiredInterval mirrors
	// transaction.remove.expired.transaction.cleanup.interval.ms (default
	// 3600000, 1 hour): how often expired transactional ids are removed.
	// At least 1 ms.
	TransactionRemoveExpiredInterval time.Duration

	// CleanerEnable mirrors log.cleaner.enable (default true): whether the
	// Dir runs cleaner goroutines for compacted topics. [Dir.CleanNow]
	// cleans whatever it says.
	CleanerEnable bool
	// CleanerThreads mirrors log.cleaner.threads (default 1): the number of
	// cleaner goroutines. At least 0 (0: none, as with CleanerEnable false).
	CleanerThreads int
	// CleanerDedupeBufferSize mirrors log.cleaner.dedupe.buffer.size
	// (default 134217728, 128 MiB): the memory of the cleaners' offset maps,
	// shared equally by the cleaner goroutines (and [Dir.CleanNow], which
	// counts as one more). Each map is allocated on first use and only as
	// large as the dirty section needs. At least 1 KiB per cleaner.
	CleanerDedupeBufferSize int64
	// CleanerIOBufferSize mirrors log.cleaner.io.buffer.size (default
	// 524288): the cleaners' read and write size. At least 0 (below 64 KiB
	// counts as 64 KiB).
	CleanerIOBufferSize int
	// CleanerIOBufferLoadFactor mirrors log.cleaner.io.buffer.load.factor
	// (default 0.9): how full an offset map may get. In (0, 1].
	CleanerIOBufferLoadFactor float64
	// CleanerBackoff mirrors log.cleaner.backoff.ms (default 15000): how
	// long a cleaner goroutine sleeps when no log needs cleaning. At least
	// 0.
	CleanerBackoff time.Duration
	// CleanerIOMaxBytesPerSecond mirrors
	// log.cleaner.io.max.bytes.per.second (default Double.MAX_VALUE =
	// math.MaxFloat64: unlimited): the I/O rate all cleaners share. Above 0.
	CleanerIOMaxBytesPerSecond float64

	// OverlapAppendBytes is kafkalite's own setting (no Kafka property;
	// default 65536): a leader append of a batch at least this large
	// writes the batch into the page cache on a goroutine of its own while
	// it validates the batch (segment.Segment.AppendOverlapped), so that
	// on a second core the append costs about as long as the longer of the
	// two. The goroutine lives for that append only: nothing runs between
	// appends. 0 turns the overlap off; it needs GOMAXPROCS of at least 2.
	// What is on disk, and when, does not change (see AppendOverlapped for
	// the crash case).
	OverlapAppendBytes int

	// NumPartitions mirrors num.partitions (default 1): the partition count
	// of auto-created topics. At least 1.
	NumPartitions int
	// Logger receives the directory's log lines (and its coordinators' and
	// cleaners'); nil means slog.Default() at level Warn and above.
	Logger *slog.Logger
	// FS is the filesystem; nil means the operating system's. A test gives
	// vfs.NewMem() (a memory filesystem that can simulate a power loss) or
	// a vfs.FaultFS; a user may give an FS of their own. Not a property.
	FS vfs.FS
	// Now is the clock for retention, rolls and timestamps; nil means
	// time.Now. Tests inject one.
	Now func() time.Time
}

// DefaultConfig returns Kafka 4.x's broker defaults, with kafkalite's
// differences (NodeID 0, AutoCreateTopics false) as documented on the
// fields.
func DefaultConfig() Config {
	return Config{
		RecoveryThreads:                    2,
		RetentionCheckInterval:             5 * time.Minute,
		FlushOffsetCheckpointInterval:      time.Minute,
		FlushStartOffsetCheckpointInterval: time.Minute,
		FlushSchedulerInterval:             Unlimited,
		DefaultTopic:                       DefaultTopicConfig(),
		NumPartitions:                      1,
		OffsetsTopicNumPartitions:          1,
		OffsetsRetention:                   7 * 24 * time.Hour,
		ProducerIDExpiration:               24 * time.Hour,
		ProducerIDExpirationCheckInterval:  10 * time.Minute,
		TransactionStateNumPartitions:      1,
		TransactionMaxTimeout:              15 * time.Minute,
		TransactionalIDExpiration:          7 * 24 * time.Hour,
		TransactionAbortTimedOutInterval:   10 * time.Second,
		TransactionRemoveExpiredInterval:   time.Hour,
		CleanerEnable:                      true,
		CleanerThreads:                     1,
		CleanerDedupeBufferSize:            128 << 20,
		CleanerIOBufferSize:                512 << 10,
		CleanerIOBufferLoadFactor:          0.9,
		CleanerBackoff:                     15 * time.Second,
		CleanerIOMaxBytesPerSecond:         math.MaxFloat64,
		OverlapAppendBytes:                 64 << 10,
	}
}

// Validate checks the directory's settings and DefaultTopic; errors about
// DefaultTopic name the broker property (log.roll.ms, not segment.ms).
func (c Config) Validate() error {
	v := props.Validator{New: newConfigError, Key: error.Error}
	v.Check(c.NodeID >= 0, "node.id", c.NodeID, "must be at least 0")
	v.IntRange("num.recovery.threads.per.data.dir", c.RecoveryThreads, 1)
	v.Millis("log.retention.check.interval.ms", c.RetentionCheckInterval, 1, false)
	for prop, d := range map[string]time.Duration{
		"log.flush.offset.checkpoint.interval.ms":       c.FlushOffsetCheckpointInterval,
		"log.flush.start.offset.checkpoint.interval.ms": c.FlushStartOffsetCheckpointInterval,
	} {
		v.Millis(prop, d, 0, false)
		v.Check(d.Milliseconds() <= math.MaxInt32, prop, d.Milliseconds(), "must be at most 2147483647 (an int in Kafka)")
	}
	v.Millis("log.flush.scheduler.interval.ms", c.FlushSchedulerInterval, 1, true)
	v.IntRange("num.partitions", c.NumPartitions, 1)
	v.IntRange("offsets.topic.num.partitions", c.OffsetsTopicNumPartitions, 1)
	v.Check(c.OffsetsRetention >= time.Minute, "offsets.retention.minutes", c.OffsetsRetention, "must be at least 1 minute")
	v.Check(c.GroupInitialRebalanceDelay >= 0, "group.initial.rebalance.delay.ms", c.GroupInitialRebalanceDelay, "must not be negative")
	v.IntRange("transaction.state.log.num.partitions", c.TransactionStateNumPartitions, 1)
	for prop, d := range map[string]time.Duration{
		"producer.id.expiration.ms":                                   c.ProducerIDExpiration,
		"producer.id.expiration.check.interval.ms":                    c.ProducerIDExpirationCheckInterval,
		"transaction.max.timeout.ms":                                  c.TransactionMaxTimeout,
		"transactional.id.expiration.ms":                              c.TransactionalIDExpiration,
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": c.TransactionAbortTimedOutInterval,
		"transaction.remove.expired.transaction.cleanup.interval.ms":  c.TransactionRemoveExpiredInterval,
	} {
		v.Millis(prop, d, 1, false)
	}
	v.Check(c.CleanerThreads >= 0, "log.cleaner.threads", c.CleanerThreads, "must be at least 0")
	v.Check(c.CleanerDedupeBufferSize >= 1024*int64(max(c.CleanerThreads, 0)+1), "log.cleaner.dedupe.buffer.size", c.CleanerDedupeBufferSize,
		"must be at least 1024 bytes per cleaner thread (plus one for Dir.CleanNow)")
	v.Check(c.CleanerIOBufferSize >= 0, "log.cleaner.io.buffer.size", c.CleanerIOBufferSize, "must be at least 0")
	v.Check(c.CleanerIOBufferLoadFactor > 0 && c.CleanerIOBufferLoadFactor <= 1, // false for NaN
		"log.cleaner.io.buffer.load.factor", c.CleanerIOBufferLoadFactor, "must be above 0 and at most 1")
	v.Millis("log.cleaner.backoff.ms", c.CleanerBackoff, 0, false)
	v.Check(c.CleanerIOMaxBytesPerSecond > 0, "log.cleaner.io.max.bytes.per.second", c.CleanerIOMaxBytesPerSecond, "must be above 0")
	v.Check(c.OverlapAppendBytes >= 0, "OverlapAppendBytes", c.OverlapAppendBytes, "must be at least 0")
	if err := c.DefaultTopic.Validate(); err != nil {
		v.Append(renameProperties(err, brokerNameOf)...)
	}
	return v.Err()
}

// ParseConfig returns [DefaultConfig] with props, Kafka broker property
// names and values, applied and validated. The log.-prefixed synonyms of
// topic properties (log.segment.bytes, log.roll.ms, ...) set DefaultTopic,
// with Kafka's precedence: log.roll.ms over log.roll.hours,
// log.roll.jitter.ms over log.roll.jitter.hours, log.retention.ms over
// log.retention.minutes over log.retention.hours (a negative value of any
// of them means Unlimited, as in Kafka), log.flush.interval.ms over
// log.flush.scheduler.interval.ms. Broker properties Kafka defines that
// kafkalite ignores (see [UnusedBrokerProperties]) are returned, sorted;
// their values are not interpreted. Unknown names are errors matching
// [ErrUnknownProperty].
func ParseConfig(props map[string]string) (Config, []string, error) { return parseConfig(props) }

// parseConfig is ParseConfig, with props (the package) in scope.
func parseConfig(m map[string]string) (Config, []string, error) {
	c := DefaultConfig()
	unused, errs := props.Sift(m, brokerProps, props.In(ignoredBrokerProps), unknownProperty, invalidProperty)
	for _, name := range brokerOrder {
		if v, ok := m[name]; ok {
			if err := brokerProps[name].set(&c, v); err != nil {
				errs = append(errs, invalidProperty(name, v, err))
			}
		}
	}
	if len(errs) == 0 {
		if err := c.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return Config{}, nil, errors.Join(errs...)
	}
	return c, unused, nil
}

// Properties prints the settings as Kafka broker properties (the highest
// precedence synonym of each: log.roll.ms, log.retention.ms, ...), so that
// ParseConfig(c.Properties()) returns c for a valid c with nil Logger, FS
// and Now.
func (c Config) Properties() map[string]string {
	m := make(map[string]string, len(brokerProps))
	for name, p := range brokerProps {
		if p.get != nil {
			m[name] = p.get(&c)
		}
	}
	return m
}

// String returns the properties as sorted "name=value" lines.
func (c Config) String() string { return props.String(c.Properties()) }

// UnusedBrokerProperties returns, sorted, the broker properties ParseConfig
// accepts and ignores: networking, KRaft, replication, coordinators, the
// and topic defaults kafkalite does not use. (log.dir and
// log.dirs are among them: a Dir's path is an argument of its Open.)
// remote.log.storage.system.enable must be false.
func UnusedBrokerProperties() []string { return props.SortedKeys(ignoredBrokerProps) }

type brokerProp struct {
	set func(c *Config, v string) error
	get func(c *Config) string // nil: a lower-precedence synonym, never printed
}

// topicToBroker maps each topic property kafkalite uses to its
// highest-precedence broker synonym (ServerTopicConfigSynonyms.java).
var topicToBroker = map[string]string{
	"cleanup.policy":                  "log.cleanup.policy",
	"retention.ms":                    "log.retention.ms",
	"retention.bytes":                 "log.retention.bytes",
	"segment.bytes":                   "log.segment.bytes",
	"segment.ms":                      "log.roll.ms",
	"segment.jitter.ms":               "log.roll.jitter.ms",
	"segment.index.bytes":             "log.index.size.max.bytes",
	"index.interval.bytes":            "log.index.interval.bytes",
	"max.message.bytes":               "message.max.bytes",
	"message.timestamp.type":          "log.message.timestamp.type",
	"message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
	"message.timestamp.after.max.ms":  "log.message.timestamp.after.max.ms",
	"compression.type":                "compression.type",
	"compression.gzip.level":          "compression.gzip.level",
	"compression.lz4.level":           "compression.lz4.level",
	"compression.zstd.level":          "compression.zstd.level",
	"flush.messages":                  "log.flush.interval.messages",
	"flush.ms":                        "log.flush.interval.ms",
	"file.delete.delay.ms":            "log.segment.delete.delay.ms",
	"preallocate":                     "log.preallocate",
	"min.compaction.lag.ms":           "log.cleaner.min.compaction.lag.ms",
	"max.compaction.lag.ms":           "log.cleaner.max.compaction.lag.ms",
	"delete.retention.ms":             "log.cleaner.delete.retention.ms",
	"min.cleanable.dirty.ratio":       "log.cleaner.min.cleanable.ratio",
}

func brokerNameOf(topicProp string) string {
	if b, ok := topicToBroker[topicProp]; ok {
		return b
	}
	return topicProp
}

var brokerProps = func() map[string]brokerProp {
	m := map[string]brokerProp{
		"node.id": {
			func(c *Config, v string) error {
				n, err := props.Int(v)
				c.NodeID = int32(n)
				return err
			},
			func(c *Config) string { return strconv.FormatInt(int64(c.NodeID), 10) }},
		"num.recovery.threads.per.data.dir": {
			func(c *Config, v string) (err error) { c.RecoveryThreads, err = props.Int(v); return },
			func(c *Config) string { return strconv.Itoa(c.RecoveryThreads) }},
		"num.partitions": {
			func(c *Config, v string) (err error) { c.NumPartitions, err = props.Int(v); return },
			func(c *Config) string { return strconv.Itoa(c.NumPartitions) }},
		"offsets.topic.num.partitions": {
			func(c *Config, v string) (err error) { c.OffsetsTopicNumPartitions, err = props.Int(v); return },
			func(c *Config) string { return strconv.Itoa(c.OffsetsTopicNumPartitions) }},
		"offsets.retention.minutes": {
			func(c *Config, v string) error {
				n, err := props.Int(v)
				c.OffsetsRetention = time.Duration(n) * time.Minute
				return err
			},
			func(c *Config) string { return strconv.FormatInt(int64(c.OffsetsRetention/time.Minute), 10) }},
		"group.initial.rebalance.delay.ms": configMillis(func(c *Config) *time.Duration { return &c.GroupInitialRebalanceDelay }, false),
		"transaction.state.log.num.partitions": {
			func(c *Config, v string) (err error) { c.TransactionStateNumPartitions, err = props.Int(v); return },
			func(c *Config) string { return strconv.Itoa(c.TransactionStateNumPartitions) }},
		"producer.id.expiration.ms":                                   configMillis(func(c *Config) *time.Duration { return &c.ProducerIDExpiration }, false),
		"producer.id.expiration.check.interval.ms":                    configMillis(func(c *Config) *time.Duration { return &c.ProducerIDExpirationCheckInterval }, false),
		"transaction.max.timeout.ms":                                  configMillis(func(c *Config) *time.Duration { return &c.TransactionMaxTimeout }, false),
		"transactional.id.expiration.ms":                              configMillis(func(c *Config) *time.Duration { return &c.TransactionalIDExpiration }, false),
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": configMillis(func(c *Config) *time.Duration { return &c.TransactionAbortTimedOutInterval }, false),
		"transaction.remove.expired.transaction.cleanup.interval.ms":  configMillis(func(c *Config) *time.Duration { return &c.TransactionRemoveExpiredInterval }, false),
		"auto.create.topics.enable": {
			func(c *Config, v string) (err error) { c.AutoCreateTopics, err = props.Bool(v); return },
			func(c *Config) string { return strconv.FormatBool(c.AutoCreateTopics) }},
		"log.cleaner.enable": {
			func(c *Config, v string) (err error) { c.CleanerEnable, err = props.Bool(v); return },
			func(c *Config) string { return strconv.FormatBool(c.CleanerEnable) }},
		"log.cleaner.threads": {
			func(c *Config, v string) (err error) { c.CleanerThreads, err = props.Int(v); return },
			func(c *Config) string { return strconv.Itoa(c.CleanerThreads) }},
		"log.cleaner.dedupe.buffer.size": {
			func(c *Config, v string) (err error) { c.CleanerDedupeBufferSize, err = props.Long(v); return },
			func(c *Config) string { return strconv.FormatInt(c.CleanerDedupeBufferSize, 10) }},
		"log.cleaner.io.buffer.size": {
			func(c *Config, v string) (err error) { c.CleanerIOBufferSize, err = props.Int(v); return },
			func(c *Config) string { return strconv.Itoa(c.CleanerIOBufferSize) }},
		"log.cleaner.io.buffer.load.factor": {
			func(c *Config, v string) (err error) { c.CleanerIOBufferLoadFactor, err = props.Double(v); return },
			func(c *Config) string { return strconv.FormatFloat(c.CleanerIOBufferLoadFactor, 'g', -1, 64) }},
		"log.cleaner.io.max.bytes.per.second": {
			func(c *Config, v string) (err error) { c.CleanerIOMaxBytesPerSecond, err = props.Double(v); return },
			func(c *Config) string { return strconv.FormatFloat(c.CleanerIOMaxBytesPerSecond, 'g', -1, 64) }},
		"log.cleaner.backoff.ms":                        configMillis(func(c *Config) *time.Duration { return &c.CleanerBackoff }, false),
		"log.retention.check.interval.ms":               configMillis(func(c *Config) *time.Duration { return &c.RetentionCheckInterval }, false),
		"log.flush.offset.checkpoint.interval.ms":       configMillis(func(c *Config) *time.Duration { return &c.FlushOffsetCheckpointInterval }, false),
		"log.flush.start.offset.checkpoint.interval.ms": configMillis(func(c *Config) *time.Duration { return &c.FlushStartOffsetCheckpointInterval }, false),
		"log.flush.scheduler.interval.ms": {
			func(c *Config, v string) error {
				d, err := props.Millis(v, true)
				c.FlushSchedulerInterval, c.DefaultTopic.FlushInterval = d, d // flush.ms's last synonym
				return err
			},
			func(c *Config) string { return props.FormatMillis(c.FlushSchedulerInterval, true) }},
		// Lower-precedence synonyms, applied before the ones above them.
		"log.roll.hours":        hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.SegmentRollTime }, time.Hour, false),
		"log.roll.jitter.hours": hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.SegmentJitter }, time.Hour, false),
		"log.retention.hours":   hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.Retention }, time.Hour, true),
		"log.retention.minutes": hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.Retention }, time.Minute, true),
	}
	for topicName, brokerName := range topicToBroker {
		tp := topicProps[topicName]
		m[brokerName] = brokerProp{
			func(c *Config, v string) error { return tp.set(&c.DefaultTopic, v) },
			func(c *Config) string { return tp.get(&c.DefaultTopic) }}
	}
	m["log.retention.ms"] = brokerProp{ // any negative value is Unlimited at the broker level
		func(c *Config, v string) error {
			if n, err := props.Long(v); err == nil && n < 0 {
				c.DefaultTopic.Retention = Unlimited
				return nil
			}
			return topicProps["retention.ms"].set(&c.DefaultTopic, v)
		},
		m["log.retention.ms"].get}
	return m
}()

// brokerOrder is the order ParseConfig applies broker properties in: lower
// precedence synonyms first, so that the higher ones override them.
var brokerOrder = func() []string {
	low := []string{"log.roll.hours", "log.roll.jitter.hours", "log.retention.hours", "log.retention.minutes",
		"log.flush.scheduler.interval.ms"}
	var rest []string
	for name := range brokerProps {
		if !slices.Contains(low, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(low, rest...)
}()

func configMillis(field func(*Config) *time.Duration, unlimited bool) brokerProp {
	return brokerProp{
		func(c *Config, v string) (err error) { *field(c), err = props.Millis(v, unlimited); return },
		func(c *Config) string { return props.FormatMillis(*field(c), unlimited) }}
}

// hoursProp parses an int count of unit (log.roll.hours, ...). With
// negativeUnlimited, any negative count means Unlimited (Kafka's retention
// rule); otherwise a negative count is an error.
func hoursProp(field func(*Config) *time.Duration, unit time.Duration, negativeUnlimited bool) brokerProp {
	return brokerProp{set: func(c *Config, v string) error {
		n, err := props.Int(v)
		switch {
		case err != nil:
			return err
		case n < 0 && negativeUnlimited:
			*field(c) = Unlimited
		case n < 0:
			return errors.New("must be at least 0")
		case int64(n) > props.MaxMillis/unit.Milliseconds():
			*field(c) = time.Duration(props.MaxMillis) * time.Millisecond
			if negativeUnlimited {
				*field(c) = Unlimited
			}
		default:
			*field(c) = time.Duration(n) * unit
		}
		return nil
	}}
}

// ignoredBrokerProps: broker properties of Kafka 4.x that kafkalite accepts
// and ignores; a non-nil func checks the value. Verified against Kafka's
// ServerConfigs, ServerLogConfigs, KRaftConfigs, ReplicationConfigs,
// SocketServerConfigs, CleanerConfig, GroupCoordinatorConfig and
// TransactionLogConfig.
var ignoredBrokerProps = map[string]func(string) error{
	// Identity, roles and KRaft.
	"broker.id": nil, "broker.rack": nil, "process.roles": nil, "controller.quorum.voters": nil,
	"controller.quorum.bootstrap.servers": nil, "controller.listener.names": nil, "metadata.log.dir": nil,
	"log.dir": nil, "log.dirs": nil, "log.dir.failure.timeout.ms": nil, "log.initial.task.delay.ms": nil,
	// Networking and request handling.
	"listeners": nil, "advertised.listeners": nil, "listener.security.protocol.map": nil,
	"inter.broker.listener.name": nil, "security.inter.broker.protocol": nil, "early.start.listeners": nil,
	"num.network.threads": nil, "num.io.threads": nil, "background.threads": nil,
	"socket.send.buffer.bytes": nil, "socket.receive.buffer.bytes": nil, "socket.request.max.bytes": nil,
	"request.timeout.ms": nil, "fetch.max.bytes": nil, "max.incremental.fetch.session.cache.slots": nil,
	"authorizer.class.name": nil, "config.providers": nil, "controlled.shutdown.enable": nil,
	"delete.topic.enable": nil, "create.topic.policy.class.name": nil, "alter.config.policy.class.name": nil,
	// Replication.
	"default.replication.factor": nil, "num.replica.fetchers": nil, "num.replica.alter.log.dirs.threads": nil,
	"replica.lag.time.max.ms": nil, "replica.fetch.max.bytes": nil, "replica.fetch.wait.max.ms": nil,
	"replica.high.watermark.checkpoint.interval.ms": nil, "auto.leader.rebalance.enable": nil,
	"unclean.leader.election.enable": props.CheckBool, "min.insync.replicas": props.CheckAtLeast(1, true),
	// Coordinators' internal topics.
	"offsets.topic.replication.factor":         nil,
	"transaction.state.log.replication.factor": nil, "transaction.state.log.min.isr": nil,
	// Tiered storage and removed features.
	"log.local.retention.ms": props.CheckAtLeast(-2, false), "log.local.retention.bytes": props.CheckAtLeast(-2, false),
	"log.message.downconversion.enable": props.CheckBool,
	"remote.log.storage.system.enable":  checkNoTieredStorage,
}
