package log

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/record"
)

// The property tables: every Kafka topic and broker property kafkalite
// reads, with its parser and printer (internal/props), and the ones it
// accepts and ignores.

const internalSegmentBytes = "internal.segment.bytes"

// topicProp parses a topic property into a TopicConfig and prints it back.
type topicProp = props.Prop[TopicConfig]

// Property tables. Verified against Apache Kafka 4.x LogConfig.java,
// TopicConfig.java and ServerTopicConfigSynonyms.java.
var topicProps = map[string]topicProp{
	"cleanup.policy": props.Func(
		func(c *TopicConfig, v string) (err error) { c.CleanupPolicy, err = ParseCleanupPolicy(v); return },
		func(c *TopicConfig) string { return c.CleanupPolicy.String() }),
	"retention.ms":          millisProp(func(c *TopicConfig) *time.Duration { return &c.Retention }, true, "-1"),
	"remote.storage.enable": props.BoolProp(func(c *TopicConfig) *bool { return &c.RemoteStorageEnable }),
	"local.retention.ms": props.Func(
		func(c *TopicConfig, v string) (err error) {
			if v == "-2" {
				c.LocalRetention = RetentionOfTopic
				return nil
			}
			c.LocalRetention, err = props.Millis(v, true)
			return err
		},
		func(c *TopicConfig) string {
			switch c.LocalRetention {
			case RetentionOfTopic:
				return "-2"
			case Unlimited:
				return "-1"
			}
			return props.FormatMillis(c.LocalRetention, false)
		}),
	"local.retention.bytes":           props.LongProp(func(c *TopicConfig) *int64 { return &c.LocalRetentionBytes }),
	"retention.bytes":                 props.LongProp(func(c *TopicConfig) *int64 { return &c.RetentionBytes }),
	"segment.bytes":                   intProp64(func(c *TopicConfig) *int64 { return &c.SegmentBytes }),
	"segment.ms":                      millisProp(func(c *TopicConfig) *time.Duration { return &c.SegmentRollTime }, false, ""),
	"segment.jitter.ms":               millisProp(func(c *TopicConfig) *time.Duration { return &c.SegmentJitter }, false, ""),
	"segment.index.bytes":             props.IntProp(func(c *TopicConfig) *int { return &c.SegmentIndexBytes }),
	"index.interval.bytes":            props.IntProp(func(c *TopicConfig) *int { return &c.IndexIntervalBytes }),
	"max.message.bytes":               props.IntProp(func(c *TopicConfig) *int { return &c.MaxMessageBytes }),
	"message.timestamp.before.max.ms": millisProp(func(c *TopicConfig) *time.Duration { return &c.MessageTimestampBeforeMax }, true, props.MaxLong),
	"message.timestamp.after.max.ms":  millisProp(func(c *TopicConfig) *time.Duration { return &c.MessageTimestampAfterMax }, true, props.MaxLong),
	"message.timestamp.type": props.Func(
		func(c *TopicConfig, v string) error {
			switch props.Trim(v) {
			case "CreateTime":
				c.MessageTimestampType = record.CreateTime
			case "LogAppendTime":
				c.MessageTimestampType = record.LogAppendTime
			default:
				return errors.New("must be CreateTime or LogAppendTime")
			}
			return nil
		},
		func(c *TopicConfig) string { return c.MessageTimestampType.String() }),
	"compression.type": props.Func(
		func(c *TopicConfig, v string) (err error) { c.CompressionType, err = ParseCompressionType(v); return },
		func(c *TopicConfig) string { return string(c.CompressionType) }),
	"compression.gzip.level": props.IntProp(func(c *TopicConfig) *int { return &c.CompressionGzipLevel }),
	"compression.lz4.level":  props.IntProp(func(c *TopicConfig) *int { return &c.CompressionLZ4Level }),
	"compression.zstd.level": props.IntProp(func(c *TopicConfig) *int { return &c.CompressionZstdLevel }),
	"flush.messages": props.Func(
		func(c *TopicConfig, v string) error {
			n, err := props.Long(v)
			if n == -1 || n == math.MaxInt64 {
				n = UnlimitedMessages
			}
			c.FlushMessages = n
			return err
		},
		func(c *TopicConfig) string {
			if c.FlushMessages == UnlimitedMessages {
				return props.MaxLong
			}
			return strconv.FormatInt(c.FlushMessages, 10)
		}),
	"flush.ms":              millisProp(func(c *TopicConfig) *time.Duration { return &c.FlushInterval }, true, props.MaxLong),
	"file.delete.delay.ms":  millisProp(func(c *TopicConfig) *time.Duration { return &c.FileDeleteDelay }, false, ""),
	"preallocate":           props.BoolProp(func(c *TopicConfig) *bool { return &c.Preallocate }),
	"min.compaction.lag.ms": millisProp(func(c *TopicConfig) *time.Duration { return &c.MinCompactionLag }, false, ""),
	"max.compaction.lag.ms": millisProp(func(c *TopicConfig) *time.Duration { return &c.MaxCompactionLag }, true, props.MaxLong),
	"delete.retention.ms":   millisProp(func(c *TopicConfig) *time.Duration { return &c.DeleteRetention }, false, ""),
	"min.cleanable.dirty.ratio": props.Func(
		func(c *TopicConfig, v string) (err error) { c.MinCleanableDirtyRatio, err = props.Double(v); return },
		func(c *TopicConfig) string { return strconv.FormatFloat(c.MinCleanableDirtyRatio, 'f', -1, 64) }),
}

// ignoredTopicProps: defined by Kafka 4.x, not used by kafkalite; each
// value is type-checked as Kafka's ConfigDef would.
var ignoredTopicProps = map[string]func(string) error{
	"unclean.leader.election.enable":          props.CheckBool,
	"min.insync.replicas":                     props.CheckAtLeast(1, true),
	"leader.replication.throttled.replicas":   checkThrottledReplicas,
	"follower.replication.throttled.replicas": checkThrottledReplicas,
	"message.downconversion.enable":           props.CheckBool, // a no-op since 4.0
	"remote.log.copy.disable":                 props.CheckBool,
	"remote.log.delete.on.disable":            props.CheckBool,
	"remote.copy.lag.ms":                      props.CheckAtLeast(-1, false), // KIP-1241
	"remote.copy.lag.bytes":                   props.CheckAtLeast(-1, false), // KIP-1241
}

func millisProp(field func(*TopicConfig) *time.Duration, unlimited bool, infinite string) topicProp {
	return props.Func(
		func(c *TopicConfig, v string) (err error) { *field(c), err = props.Millis(v, unlimited); return },
		func(c *TopicConfig) string {
			if d := *field(c); unlimited && d == Unlimited {
				return infinite
			}
			return props.FormatMillis(*field(c), false)
		})
}

// intProp64 is an int property (32 bits in Kafka) held in an int64 field.
func intProp64(field func(*TopicConfig) *int64) topicProp {
	return props.Func(
		func(c *TopicConfig, v string) error {
			n, err := props.Int(v)
			*field(c) = int64(n)
			return err
		},
		func(c *TopicConfig) string { return strconv.FormatInt(*field(c), 10) })
}

// brokerProp parses a broker property into a Config and prints it back; a
// lower-precedence synonym is never printed.
type brokerProp = props.Prop[Config]

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
	"local.retention.ms":              "log.local.retention.ms",
	"local.retention.bytes":           "log.local.retention.bytes",
}

func brokerNameOf(topicProp string) string {
	if b, ok := topicToBroker[topicProp]; ok {
		return b
	}
	return topicProp
}

var brokerProps = func() map[string]brokerProp {
	m := map[string]brokerProp{
		"node.id": props.Func(
			func(c *Config, v string) error {
				n, err := props.Int(v)
				c.NodeID = int32(n)
				return err
			},
			func(c *Config) string { return strconv.FormatInt(int64(c.NodeID), 10) }),
		"num.recovery.threads.per.data.dir": props.IntProp(func(c *Config) *int { return &c.RecoveryThreads }),
		"num.partitions":                    props.IntProp(func(c *Config) *int { return &c.NumPartitions }),
		"offsets.topic.num.partitions":      props.IntProp(func(c *Config) *int { return &c.OffsetsTopicNumPartitions }),
		"offsets.retention.minutes": props.Func(
			func(c *Config, v string) error {
				n, err := props.Int(v)
				c.OffsetsRetention = time.Duration(n) * time.Minute
				return err
			},
			func(c *Config) string { return strconv.FormatInt(int64(c.OffsetsRetention/time.Minute), 10) }),
		"offsets.retention.check.interval.ms":        configMillis(func(c *Config) *time.Duration { return &c.OffsetsRetentionCheckInterval }, false),
		"group.initial.rebalance.delay.ms":           configMillis(func(c *Config) *time.Duration { return &c.GroupInitialRebalanceDelay }, false),
		"group.consumer.session.timeout.ms":          configMillis(func(c *Config) *time.Duration { return &c.ConsumerGroupSessionTimeout }, false),
		"group.consumer.heartbeat.interval.ms":       configMillis(func(c *Config) *time.Duration { return &c.ConsumerGroupHeartbeatInterval }, false),
		"group.consumer.max.size":                    props.IntProp(func(c *Config) *int { return &c.ConsumerGroupMaxSize }),
		"group.consumer.min.session.timeout.ms":      configMillis(func(c *Config) *time.Duration { return &c.ConsumerGroupMinSessionTimeout }, false),
		"group.consumer.max.session.timeout.ms":      configMillis(func(c *Config) *time.Duration { return &c.ConsumerGroupMaxSessionTimeout }, false),
		"group.consumer.min.heartbeat.interval.ms":   configMillis(func(c *Config) *time.Duration { return &c.ConsumerGroupMinHeartbeatInterval }, false),
		"group.consumer.max.heartbeat.interval.ms":   configMillis(func(c *Config) *time.Duration { return &c.ConsumerGroupMaxHeartbeatInterval }, false),
		"group.share.session.timeout.ms":             configMillis(func(c *Config) *time.Duration { return &c.ShareSessionTimeout }, false),
		"group.share.min.session.timeout.ms":         configMillis(func(c *Config) *time.Duration { return &c.ShareMinSessionTimeout }, false),
		"group.share.max.session.timeout.ms":         configMillis(func(c *Config) *time.Duration { return &c.ShareMaxSessionTimeout }, false),
		"group.share.heartbeat.interval.ms":          configMillis(func(c *Config) *time.Duration { return &c.ShareHeartbeatInterval }, false),
		"group.share.min.heartbeat.interval.ms":      configMillis(func(c *Config) *time.Duration { return &c.ShareMinHeartbeatInterval }, false),
		"group.share.max.heartbeat.interval.ms":      configMillis(func(c *Config) *time.Duration { return &c.ShareMaxHeartbeatInterval }, false),
		"group.share.record.lock.duration.ms":        configMillis(func(c *Config) *time.Duration { return &c.ShareRecordLockDuration }, false),
		"group.share.min.record.lock.duration.ms":    configMillis(func(c *Config) *time.Duration { return &c.ShareMinRecordLockDuration }, false),
		"group.share.max.record.lock.duration.ms":    configMillis(func(c *Config) *time.Duration { return &c.ShareMaxRecordLockDuration }, false),
		"group.share.delivery.count.limit":           props.IntProp(func(c *Config) *int { return &c.ShareDeliveryCountLimit }),
		"group.share.min.delivery.count.limit":       props.IntProp(func(c *Config) *int { return &c.ShareMinDeliveryCountLimit }),
		"group.share.max.delivery.count.limit":       props.IntProp(func(c *Config) *int { return &c.ShareMaxDeliveryCountLimit }),
		"group.share.partition.max.record.locks":     props.IntProp(func(c *Config) *int { return &c.SharePartitionMaxRecordLocks }),
		"group.share.min.partition.max.record.locks": props.IntProp(func(c *Config) *int { return &c.ShareMinPartitionMaxRecordLocks }),
		"group.share.max.partition.max.record.locks": props.IntProp(func(c *Config) *int { return &c.ShareMaxPartitionMaxRecordLocks }),
		"group.share.max.size":                       props.IntProp(func(c *Config) *int { return &c.ShareGroupMaxSize }),
		"group.share.max.share.sessions":             props.IntProp(func(c *Config) *int { return &c.ShareMaxSessions }),
		"group.consumer.assignors": props.Func(
			func(c *Config, v string) error {
				c.ConsumerGroupAssignors = nil
				for _, a := range strings.Split(v, ",") {
					if a = strings.TrimSpace(a); a != "" {
						c.ConsumerGroupAssignors = append(c.ConsumerGroupAssignors, a)
					}
				}
				return nil
			},
			func(c *Config) string { return strings.Join(c.ConsumerGroupAssignors, ",") }),
		"transaction.state.log.num.partitions":                        props.IntProp(func(c *Config) *int { return &c.TransactionStateNumPartitions }),
		"producer.id.expiration.ms":                                   configMillis(func(c *Config) *time.Duration { return &c.ProducerIDExpiration }, false),
		"producer.id.expiration.check.interval.ms":                    configMillis(func(c *Config) *time.Duration { return &c.ProducerIDExpirationCheckInterval }, false),
		"transaction.max.timeout.ms":                                  configMillis(func(c *Config) *time.Duration { return &c.TransactionMaxTimeout }, false),
		"transactional.id.expiration.ms":                              configMillis(func(c *Config) *time.Duration { return &c.TransactionalIDExpiration }, false),
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": configMillis(func(c *Config) *time.Duration { return &c.TransactionAbortTimedOutInterval }, false),
		"transaction.remove.expired.transaction.cleanup.interval.ms":  configMillis(func(c *Config) *time.Duration { return &c.TransactionRemoveExpiredInterval }, false),
		"auto.create.topics.enable":                                   props.BoolProp(func(c *Config) *bool { return &c.AutoCreateTopics }),
		"log.cleaner.enable":                                          props.BoolProp(func(c *Config) *bool { return &c.CleanerEnable }),
		"remote.log.storage.system.enable":                            props.BoolProp(func(c *Config) *bool { return &c.RemoteLogStorageSystemEnable }),
		"remote.log.manager.task.interval.ms":                         configMillis(func(c *Config) *time.Duration { return &c.RemoteLogManagerTaskInterval }, false),
		"remote.log.metadata.topic.num.partitions":                    props.IntProp(func(c *Config) *int { return &c.RemoteLogMetadataTopicNumPartitions }),
		"remote.log.index.file.cache.total.size.bytes":                props.LongProp(func(c *Config) *int64 { return &c.RemoteLogIndexFileCacheTotalSize }),
		"log.cleaner.threads":                                         props.IntProp(func(c *Config) *int { return &c.CleanerThreads }),
		"log.cleaner.dedupe.buffer.size":                              props.LongProp(func(c *Config) *int64 { return &c.CleanerDedupeBufferSize }),
		"log.cleaner.io.buffer.size":                                  props.IntProp(func(c *Config) *int { return &c.CleanerIOBufferSize }),
		"log.cleaner.io.buffer.load.factor": props.Func(
			func(c *Config, v string) (err error) { c.CleanerIOBufferLoadFactor, err = props.Double(v); return },
			func(c *Config) string { return props.FormatDouble(c.CleanerIOBufferLoadFactor) }),
		"log.cleaner.io.max.bytes.per.second": props.Func(
			func(c *Config, v string) (err error) { c.CleanerIOMaxBytesPerSecond, err = props.Double(v); return },
			func(c *Config) string { return props.FormatDouble(c.CleanerIOMaxBytesPerSecond) }),
		"log.cleaner.backoff.ms":                        configMillis(func(c *Config) *time.Duration { return &c.CleanerBackoff }, false),
		"log.retention.check.interval.ms":               configMillis(func(c *Config) *time.Duration { return &c.RetentionCheckInterval }, false),
		"log.flush.offset.checkpoint.interval.ms":       configMillis(func(c *Config) *time.Duration { return &c.FlushOffsetCheckpointInterval }, false),
		"log.flush.start.offset.checkpoint.interval.ms": configMillis(func(c *Config) *time.Duration { return &c.FlushStartOffsetCheckpointInterval }, false),
		"log.flush.scheduler.interval.ms": props.Func(
			func(c *Config, v string) error {
				d, err := props.Millis(v, true)
				c.FlushSchedulerInterval, c.DefaultTopic.FlushInterval = d, d // flush.ms's last synonym
				return err
			},
			func(c *Config) string { return props.FormatMillis(c.FlushSchedulerInterval, true) }),
		// Lower-precedence synonyms, applied before the ones above them.
		"log.roll.hours":        hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.SegmentRollTime }, time.Hour, false),
		"log.roll.jitter.hours": hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.SegmentJitter }, time.Hour, false),
		"log.retention.hours":   hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.Retention }, time.Hour, true),
		"log.retention.minutes": hoursProp(func(c *Config) *time.Duration { return &c.DefaultTopic.Retention }, time.Minute, true),
	}
	for topicName, brokerName := range topicToBroker {
		tp := topicProps[topicName]
		m[brokerName] = brokerProp{
			Set: func(c *Config, v string) error { return tp.Set(&c.DefaultTopic, v) },
			Get: func(c *Config) (string, bool) { return tp.Get(&c.DefaultTopic) }}
	}
	m["log.retention.ms"] = brokerProp{ // any negative value is Unlimited at the broker level
		Set: func(c *Config, v string) error {
			if n, err := props.Long(v); err == nil && n < 0 {
				c.DefaultTopic.Retention = Unlimited
				return nil
			}
			return topicProps["retention.ms"].Set(&c.DefaultTopic, v)
		},
		Get: m["log.retention.ms"].Get}
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
	return props.Func(
		func(c *Config, v string) (err error) { *field(c), err = props.Millis(v, unlimited); return },
		func(c *Config) string { return props.FormatMillis(*field(c), unlimited) })
}

// hoursProp parses an int count of unit (log.roll.hours, ...). With
// negativeUnlimited, any negative count means Unlimited (Kafka's retention
// rule); otherwise a negative count is an error.
func hoursProp(field func(*Config) *time.Duration, unit time.Duration, negativeUnlimited bool) brokerProp {
	return brokerProp{Set: func(c *Config, v string) error {
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
	"log.message.downconversion.enable": props.CheckBool,
}

// checkThrottledReplicas applies Kafka's ThrottledReplicaListValidator:
// "*", or a list of partition:brokerId pairs.
func checkThrottledReplicas(v string) error {
	items := props.List(v)
	if strings.Join(items, "") == "*" {
		return nil
	}
	for _, it := range items {
		p, b, ok := strings.Cut(it, ":")
		if it != "" && (!ok || !isDigits(p) || !isDigits(b)) {
			return errors.New(`must be "*" or a list of partition:brokerId pairs`)
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
