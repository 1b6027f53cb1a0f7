package log

import (
	"errors"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/log/remote"
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
	// 7 days): the committed offsets of a group that had members expire
	// this long after it became empty; those of a group that never had
	// members (commits only), and those of a stable group's topics no
	// member subscribes to, this long after their commit. An empty group
	// without offsets is deleted (Kafka's rule; see
	// log/coordinator).
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval mirrors
	// offsets.retention.check.interval.ms (default 600000, 10 minutes):
	// how often the group coordinator expires offsets and deletes empty
	// groups. At least 1 ms.
	OffsetsRetentionCheckInterval time.Duration
	// GroupMaxCount is kafkalite's own bound (no Kafka property: Kafka
	// does not bound the number of groups; default 100000): the group
	// coordinator creates no group beyond it (a JoinGroup or an
	// OffsetCommit of a new group id fails; coordinator.ErrGroupMaxCount,
	// GROUP_MAX_SIZE_REACHED on the wire) until expiry or DeleteGroups
	// removes some. Each group costs memory (about a kilobyte with one
	// committed offset) and, with offsets, records in __consumer_offsets
	// for offsets.retention.minutes. At least 1.
	GroupMaxCount int
	// GroupInitialRebalanceDelay mirrors group.initial.rebalance.delay.ms.
	// Kafka's broker default is 3000 ms, to let a group's first members
	// arrive together; in process the members are already there, so
	// kafkalite's default is 0.
	GroupInitialRebalanceDelay time.Duration
	// ConsumerGroupSessionTimeout mirrors
	// group.consumer.session.timeout.ms (default 45000): a member of a
	// consumer group (KIP-848's protocol) that does not heartbeat for this
	// long is removed. At least 1 ms.
	ConsumerGroupSessionTimeout time.Duration
	// ConsumerGroupHeartbeatInterval mirrors
	// group.consumer.heartbeat.interval.ms (default 5000): how often the
	// coordinator asks consumer group members to heartbeat. At least 1 ms,
	// below ConsumerGroupSessionTimeout.
	ConsumerGroupHeartbeatInterval time.Duration
	// ConsumerGroupAssignors mirrors group.consumer.assignors (default
	// uniform, range): the server-side assignors consumer groups may use,
	// the first the default. Kafka names them by class
	// (org.apache.kafka.coordinator.group.assignor.UniformAssignor) or by
	// name; kafkalite has "uniform" and "range" and takes either spelling.
	ConsumerGroupAssignors []string
	// ConsumerGroupMaxSize mirrors group.consumer.max.size: the members a
	// consumer group takes, more being refused (GROUP_MAX_SIZE_REACHED).
	// Kafka's default is 2147483647; kafkalite's is 1000, a bound on what
	// one client id can make the coordinator keep. At least 1.
	ConsumerGroupMaxSize int
	// ConsumerGroupMinSessionTimeout and ConsumerGroupMaxSessionTimeout
	// mirror group.consumer.min.session.timeout.ms (default 45000) and
	// group.consumer.max.session.timeout.ms (default 60000): the bounds of
	// a group's consumer.session.timeout.ms ([GroupConfig]). At least 1 ms,
	// min at most max. Unlike Kafka, ConsumerGroupSessionTimeout itself
	// need not lie within them (tests run with short sessions).
	ConsumerGroupMinSessionTimeout, ConsumerGroupMaxSessionTimeout time.Duration
	// ConsumerGroupMinHeartbeatInterval and
	// ConsumerGroupMaxHeartbeatInterval mirror
	// group.consumer.min.heartbeat.interval.ms (default 5000) and
	// group.consumer.max.heartbeat.interval.ms (default 15000): the bounds
	// of a group's consumer.heartbeat.interval.ms, as the session bounds.
	ConsumerGroupMinHeartbeatInterval, ConsumerGroupMaxHeartbeatInterval time.Duration

	// ShareSessionTimeout mirrors group.share.session.timeout.ms (default
	// 45000): a share group member that does not heartbeat for this long
	// is removed; the default of a group's share.session.timeout.ms. At
	// least 1 ms.
	ShareSessionTimeout time.Duration
	// ShareMinSessionTimeout and ShareMaxSessionTimeout mirror
	// group.share.min.session.timeout.ms (default 45000) and
	// group.share.max.session.timeout.ms (default 60000): the bounds of a
	// group's share.session.timeout.ms. At least 1 ms, min at most max.
	ShareMinSessionTimeout, ShareMaxSessionTimeout time.Duration
	// ShareHeartbeatInterval mirrors group.share.heartbeat.interval.ms
	// (default 5000): how often share group members heartbeat; the default
	// of a group's share.heartbeat.interval.ms. At least 1 ms, below
	// ShareSessionTimeout.
	ShareHeartbeatInterval time.Duration
	// ShareMinHeartbeatInterval and ShareMaxHeartbeatInterval mirror
	// group.share.min.heartbeat.interval.ms (default 5000) and
	// group.share.max.heartbeat.interval.ms (default 15000): the bounds of
	// a group's share.heartbeat.interval.ms. At least 1 ms, min at most max.
	ShareMinHeartbeatInterval, ShareMaxHeartbeatInterval time.Duration
	// ShareRecordLockDuration mirrors group.share.record.lock.duration.ms
	// (default 30000): how long a share group member holds the records it
	// fetched before they are released for redelivery; the default of a
	// group's share.record.lock.duration.ms. At least 1 ms. Unlike Kafka
	// (whose floor is 1000 ms and which requires it within the bounds
	// below), kafkalite lets tests use short locks.
	ShareRecordLockDuration time.Duration
	// ShareMinRecordLockDuration and ShareMaxRecordLockDuration mirror
	// group.share.min.record.lock.duration.ms (default 15000, 1000 to
	// 30000) and group.share.max.record.lock.duration.ms (default 60000,
	// 30000 to 3600000): the bounds of a group's
	// share.record.lock.duration.ms.
	ShareMinRecordLockDuration, ShareMaxRecordLockDuration time.Duration
	// ShareDeliveryCountLimit mirrors group.share.delivery.count.limit
	// (default 5, 2 to 10): how many times a record is delivered to share
	// group members before it is archived; the default of a group's
	// share.delivery.count.limit. Within the bounds below, as in Kafka.
	ShareDeliveryCountLimit int
	// ShareMinDeliveryCountLimit and ShareMaxDeliveryCountLimit mirror
	// group.share.min.delivery.count.limit (default 2, 2 to 5) and
	// group.share.max.delivery.count.limit (default 10, 5 to 25): the
	// bounds of share.delivery.count.limit.
	ShareMinDeliveryCountLimit, ShareMaxDeliveryCountLimit int
	// SharePartitionMaxRecordLocks mirrors
	// group.share.partition.max.record.locks (default 2000, 100 to 10000):
	// the records of a share partition that may be locked (in flight) at
	// once; the default of a group's share.partition.max.record.locks.
	// Within the bounds below, as in Kafka.
	SharePartitionMaxRecordLocks int
	// ShareMinPartitionMaxRecordLocks and ShareMaxPartitionMaxRecordLocks
	// mirror group.share.min.partition.max.record.locks (default 100, 100
	// to 2000) and group.share.max.partition.max.record.locks (default
	// 4000, 2000 to 10000): the bounds of
	// share.partition.max.record.locks.
	ShareMinPartitionMaxRecordLocks, ShareMaxPartitionMaxRecordLocks int
	// ShareGroupMaxSize mirrors group.share.max.size (default 200, 1 to
	// 1000): the members a share group takes, more being refused
	// (GROUP_MAX_SIZE_REACHED).
	ShareGroupMaxSize int
	// ShareMaxSessions mirrors group.share.max.share.sessions (default
	// 2000): the share sessions (KIP-932's ShareFetch sessions) the broker
	// keeps at once. At least 1.
	ShareMaxSessions int

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
	//
	// This field and the five below are dynamic broker properties, as in
	// Kafka: [Dir.AlterBrokerConfig] changes them at run time (a change
	// of log.cleaner.threads within Kafka's bounds: at least 1, at least
	// half and at most double the current value).
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
	// it validates the batch (segment.LogHooks.AppendOverlapped), so that
	// on a second core the append costs about as long as the longer of the
	// two. The goroutine lives for that append only: nothing runs between
	// appends. 0 turns the overlap off; it needs GOMAXPROCS of at least 2.
	// What is on disk, and when, does not change (see AppendOverlapped for
	// the crash case).
	OverlapAppendBytes int

	// RemoteLogStorageSystemEnable mirrors remote.log.storage.system.enable
	// (default false): whether topics may set remote.storage.enable
	// (tiered storage). With it, RemoteStorage must be set.
	RemoteLogStorageSystemEnable bool
	// RemoteStorage is the store tiered topics' sealed segments are copied
	// to (what Kafka's remote.log.storage.manager.class.name names; here a
	// value, not a property): a remote.FileStore, an s3store.Store, or one
	// of the user's. The Dir does not close it.
	RemoteStorage remote.StorageManager
	// RemoteLogManagerTaskInterval mirrors
	// remote.log.manager.task.interval.ms (default 30000): how often the
	// tiered partitions' sealed segments are copied, and copies below the
	// log start offset deleted. [Dir.TierNow] does it at once. At least 1
	// ms.
	RemoteLogManagerTaskInterval time.Duration
	// RemoteLogIndexFileCacheTotalSize mirrors
	// remote.log.index.file.cache.total.size.bytes (default 1073741824, 1
	// GiB): the local space of the copies fetched back from the remote
	// store to be read. Kafka caches only the indexes there and streams
	// the .log; kafkalite caches whole copies (their .log and indexes), so
	// the bound covers both. At least 1.
	RemoteLogIndexFileCacheTotalSize int64
	// RemoteLogMetadataTopicNumPartitions mirrors
	// remote.log.metadata.topic.num.partitions: the partitions of
	// __remote_log_metadata when it is created. Kafka's default is 50;
	// kafkalite's is 1, as for the coordinators' topics. At least 1.
	RemoteLogMetadataTopicNumPartitions int

	// NumPartitions mirrors num.partitions (default 1): the partition count
	// of auto-created topics. At least 1.
	NumPartitions int

	// AdoptBrokerDirectory is kafkalite's own setting (no Kafka property;
	// default false): whether [Open] may adopt a directory that holds no
	// kafkalite topic store but other entries, as a Kafka broker's log
	// directory does. Without it such a directory is refused with
	// [ErrNotLogDir], before anything is written into it. With it, the
	// directory must be formatted (meta.properties, naming NodeID), and
	// each topic's partition directories (those holding Kafka's files: a
	// .log segment or partition.metadata) must be partitions 0 to n-1
	// ([ErrIncompleteTopic] otherwise); no partition is created that the
	// directory does not hold. Other directories are left alone.
	AdoptBrokerDirectory bool
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
		RecoveryThreads:                     2,
		RetentionCheckInterval:              5 * time.Minute,
		FlushOffsetCheckpointInterval:       time.Minute,
		FlushStartOffsetCheckpointInterval:  time.Minute,
		FlushSchedulerInterval:              Unlimited,
		DefaultTopic:                        DefaultTopicConfig(),
		NumPartitions:                       1,
		OffsetsTopicNumPartitions:           1,
		OffsetsRetention:                    7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval:       10 * time.Minute,
		GroupMaxCount:                       100_000,
		ConsumerGroupSessionTimeout:         45 * time.Second,
		ConsumerGroupHeartbeatInterval:      5 * time.Second,
		ConsumerGroupAssignors:              []string{"uniform", "range"},
		ConsumerGroupMaxSize:                1000,
		ConsumerGroupMinSessionTimeout:      45 * time.Second,
		ConsumerGroupMaxSessionTimeout:      time.Minute,
		ConsumerGroupMinHeartbeatInterval:   5 * time.Second,
		ConsumerGroupMaxHeartbeatInterval:   15 * time.Second,
		ShareSessionTimeout:                 45 * time.Second,
		ShareMinSessionTimeout:              45 * time.Second,
		ShareMaxSessionTimeout:              time.Minute,
		ShareHeartbeatInterval:              5 * time.Second,
		ShareMinHeartbeatInterval:           5 * time.Second,
		ShareMaxHeartbeatInterval:           15 * time.Second,
		ShareRecordLockDuration:             30 * time.Second,
		ShareMinRecordLockDuration:          15 * time.Second,
		ShareMaxRecordLockDuration:          time.Minute,
		ShareDeliveryCountLimit:             5,
		ShareMinDeliveryCountLimit:          2,
		ShareMaxDeliveryCountLimit:          10,
		SharePartitionMaxRecordLocks:        2000,
		ShareMinPartitionMaxRecordLocks:     100,
		ShareMaxPartitionMaxRecordLocks:     4000,
		ShareGroupMaxSize:                   200,
		ShareMaxSessions:                    2000,
		ProducerIDExpiration:                24 * time.Hour,
		ProducerIDExpirationCheckInterval:   10 * time.Minute,
		TransactionStateNumPartitions:       1,
		TransactionMaxTimeout:               15 * time.Minute,
		TransactionalIDExpiration:           7 * 24 * time.Hour,
		TransactionAbortTimedOutInterval:    10 * time.Second,
		TransactionRemoveExpiredInterval:    time.Hour,
		CleanerEnable:                       true,
		CleanerThreads:                      1,
		CleanerDedupeBufferSize:             128 << 20,
		CleanerIOBufferSize:                 512 << 10,
		CleanerIOBufferLoadFactor:           0.9,
		CleanerBackoff:                      15 * time.Second,
		CleanerIOMaxBytesPerSecond:          math.MaxFloat64,
		OverlapAppendBytes:                  64 << 10,
		RemoteLogManagerTaskInterval:        30 * time.Second,
		RemoteLogMetadataTopicNumPartitions: 1,
		RemoteLogIndexFileCacheTotalSize:    1 << 30,
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
	v.Millis("offsets.retention.check.interval.ms", c.OffsetsRetentionCheckInterval, 1, false)
	v.Check(c.GroupMaxCount >= 1, "GroupMaxCount", c.GroupMaxCount, "must be at least 1")
	v.Check(c.GroupInitialRebalanceDelay >= 0, "group.initial.rebalance.delay.ms", c.GroupInitialRebalanceDelay, "must not be negative")
	v.Millis("group.consumer.session.timeout.ms", c.ConsumerGroupSessionTimeout, 1, false)
	v.Millis("group.consumer.heartbeat.interval.ms", c.ConsumerGroupHeartbeatInterval, 1, false)
	v.Check(c.ConsumerGroupHeartbeatInterval < c.ConsumerGroupSessionTimeout, "group.consumer.heartbeat.interval.ms",
		c.ConsumerGroupHeartbeatInterval.Milliseconds(), "must be below group.consumer.session.timeout.ms")
	v.Check(len(c.ConsumerGroupAssignors) > 0, "group.consumer.assignors", strings.Join(c.ConsumerGroupAssignors, ","), "must name at least one assignor")
	for _, a := range c.ConsumerGroupAssignors {
		v.Check(ConsumerGroupAssignorName(a) != "", "group.consumer.assignors", a, "must be uniform or range")
	}
	v.Check(c.ConsumerGroupMaxSize >= 1, "group.consumer.max.size", c.ConsumerGroupMaxSize, "must be at least 1")
	c.validateGroupBounds(&v)
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
	v.Millis("remote.log.manager.task.interval.ms", c.RemoteLogManagerTaskInterval, 1, false)
	v.IntRange("remote.log.metadata.topic.num.partitions", c.RemoteLogMetadataTopicNumPartitions, 1)
	v.Check(c.RemoteLogIndexFileCacheTotalSize >= 1, "remote.log.index.file.cache.total.size.bytes", c.RemoteLogIndexFileCacheTotalSize, "must be at least 1")
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
	errs = append(errs, props.Apply(&c, m, brokerProps, brokerOrder, invalidProperty)...)
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
	return props.Print(&c, brokerProps)
}

// String returns the properties as sorted "name=value" lines.
func (c Config) String() string { return props.String(c.Properties()) }

// UnusedBrokerProperties returns, sorted, the broker properties ParseConfig
// accepts and ignores: networking, KRaft, replication, coordinators, the
// and topic defaults kafkalite does not use. (log.dir and
// log.dirs are among them: a Dir's path is an argument of its Open.)
func UnusedBrokerProperties() []string { return props.SortedKeys(ignoredBrokerProps) }

func (c *Config) fs() vfs.FS {
	if c.FS != nil {
		return c.FS
	}
	return vfs.Default
}

func (c *Config) logger() *slog.Logger {
	return logging.OrDefault(c.Logger)
}

func (c *Config) clock() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	return time.Now
}

// ConsumerGroupAssignorName returns the name ("uniform" or "range") of a
// server-side assignor given by name or by Kafka's class name, and ""
// for another.
func ConsumerGroupAssignorName(a string) string {
	switch a {
	case "uniform", "org.apache.kafka.coordinator.group.assignor.UniformAssignor":
		return "uniform"
	case "range", "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
		return "range"
	}
	return ""
}
