package log

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Describing configurations as Kafka 4.4's DescribeConfigs does for the
// BROKER and TOPIC resources: each property's effective value, where it
// comes from, its lower-precedence synonyms, its ConfigDef type and a line
// of documentation.

// ConfigSource is where a value comes from, numbered as Kafka's
// DescribeConfigs sources.
type ConfigSource int8

// The sources of [ConfigEntry] and [ConfigSynonym] values.
const (
	// SourceTopic: the topic's override (TOPIC_CONFIG).
	SourceTopic ConfigSource = 1
	// SourceDynamicBroker: this broker's dynamic setting
	// (DYNAMIC_BROKER_CONFIG; [ThisBroker]).
	SourceDynamicBroker ConfigSource = 2
	// SourceDynamicDefaultBroker: the cluster's dynamic setting
	// (DYNAMIC_DEFAULT_BROKER_CONFIG; [ClusterDefault]).
	SourceDynamicDefaultBroker ConfigSource = 3
	// SourceStaticBroker: the Dir's [Config], where it differs from
	// [DefaultConfig] (STATIC_BROKER_CONFIG).
	SourceStaticBroker ConfigSource = 4
	// SourceDefault: kafkalite's default (DEFAULT_CONFIG).
	SourceDefault ConfigSource = 5
)

// String returns Kafka's name of the source.
func (s ConfigSource) String() string {
	switch s {
	case SourceTopic:
		return "TOPIC_CONFIG"
	case SourceDynamicBroker:
		return "DYNAMIC_BROKER_CONFIG"
	case SourceDynamicDefaultBroker:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case SourceStaticBroker:
		return "STATIC_BROKER_CONFIG"
	case SourceDefault:
		return "DEFAULT_CONFIG"
	}
	return fmt.Sprintf("ConfigSource(%d)", int8(s))
}

// ConfigEntry is one property as DescribeConfigs lists it.
type ConfigEntry struct {
	Name  string
	Value string
	// Source is where Value comes from: the first of Synonyms.
	Source ConfigSource
	// Type is Kafka's ConfigDef type: BOOLEAN, INT, LONG, DOUBLE, STRING
	// or LIST.
	Type string
	// ReadOnly is true for a broker property that does not change at run
	// time ([DynamicBrokerProperties]); a topic's properties never are.
	ReadOnly bool
	// Synonyms are the values the property has from every source, highest
	// precedence first, as Kafka lists them (for a topic property, its
	// override and then its broker synonym's).
	Synonyms []ConfigSynonym
	// Doc says what the property does.
	Doc string
}

// ConfigSynonym is one source's value of a property or of a synonym.
type ConfigSynonym struct {
	Name   string
	Value  string
	Source ConfigSource
}

// brokerSynonyms lists, highest precedence first, the values of broker
// property name: this broker's and the cluster's dynamic settings, the
// static one where it differs from kafkalite's default, and the default.
// kafkalite folds lower-precedence synonyms (log.retention.hours, ...)
// into the property at parse time, so they are not listed.
func (d *Dir) brokerSynonyms(name string) []ConfigSynonym {
	var out []ConfigSynonym
	b := d.brokerConfigs
	b.mu.RLock()
	if v, ok := b.broker[name]; ok {
		out = append(out, ConfigSynonym{name, v, SourceDynamicBroker})
	}
	if v, ok := b.def[name]; ok {
		out = append(out, ConfigSynonym{name, v, SourceDynamicDefaultBroker})
	}
	b.mu.RUnlock()
	p := brokerProps[name]
	static, _ := p.Get(&d.cfg)
	def := DefaultConfig()
	dv, _ := p.Get(&def)
	if static != dv {
		out = append(out, ConfigSynonym{name, static, SourceStaticBroker})
	}
	return append(out, ConfigSynonym{name, dv, SourceDefault})
}

// DescribeBrokerConfig lists, sorted by name, the broker properties
// kafkalite has ([Config]'s) with their effective values, sources,
// synonyms, types and documentation.
func (d *Dir) DescribeBrokerConfig() []ConfigEntry {
	eff := d.Config()
	values := eff.Properties()
	out := make([]ConfigEntry, 0, len(values))
	for _, name := range slices.Sorted(maps.Keys(values)) {
		syn := d.brokerSynonyms(name)
		out = append(out, ConfigEntry{Name: name, Value: values[name], Source: syn[0].Source,
			Type: brokerPropTypes[name], ReadOnly: !dynamicBrokerProps[name], Synonyms: syn, Doc: brokerPropDoc(name)})
	}
	return out
}

// DescribeTopicConfig lists, sorted by name, topic's properties with their
// effective values, sources (its override, else its broker synonym's
// source), synonyms, types and documentation.
func (d *Dir) DescribeTopicConfig(topic string) ([]ConfigEntry, error) {
	td, err := d.DescribeTopic(topic)
	if err != nil {
		return nil, err
	}
	values := td.Config.Properties()
	out := make([]ConfigEntry, 0, len(values))
	for _, name := range slices.Sorted(maps.Keys(values)) {
		var syn []ConfigSynonym
		if v, ok := td.Overrides[name]; ok {
			syn = append(syn, ConfigSynonym{name, v, SourceTopic})
		}
		if b, ok := topicToBroker[name]; ok {
			syn = append(syn, d.brokerSynonyms(b)...)
		} else {
			tc := DefaultTopicConfig()
			def, _ := topicProps[name].Get(&tc)
			syn = append(syn, ConfigSynonym{name, def, SourceDefault})
		}
		out = append(out, ConfigEntry{Name: name, Value: values[name], Source: syn[0].Source,
			Type: topicPropTypes[name], Synonyms: syn, Doc: topicPropDocs[name]})
	}
	return out, nil
}

// topicPropTypes are the ConfigDef types of the topic properties
// kafkalite prints (Kafka 4.4's LogConfig).
var topicPropTypes = map[string]string{
	"cleanup.policy": "LIST", "compression.gzip.level": "INT", "compression.lz4.level": "INT",
	"compression.type": "STRING", "compression.zstd.level": "INT", "delete.retention.ms": "LONG",
	"file.delete.delay.ms": "LONG", "flush.messages": "LONG", "flush.ms": "LONG",
	"index.interval.bytes": "INT", "local.retention.bytes": "LONG", "local.retention.ms": "LONG",
	"max.compaction.lag.ms": "LONG", "max.message.bytes": "INT", "message.timestamp.after.max.ms": "LONG",
	"message.timestamp.before.max.ms": "LONG", "message.timestamp.type": "STRING", "min.cleanable.dirty.ratio": "DOUBLE",
	"min.compaction.lag.ms": "LONG", "preallocate": "BOOLEAN", "remote.storage.enable": "BOOLEAN",
	"retention.bytes": "LONG", "retention.ms": "LONG", "segment.bytes": "INT",
	"segment.index.bytes": "INT", "segment.jitter.ms": "LONG", "segment.ms": "LONG",
}

// brokerPropTypes are the ConfigDef types of the broker properties
// kafkalite prints (Kafka 4.4's KafkaConfig): those of topic synonyms as
// the topic property's, the rest below.
var brokerPropTypes = func() map[string]string {
	m := map[string]string{
		"auto.create.topics.enable": "BOOLEAN", "group.consumer.assignors": "LIST",
		"log.cleaner.backoff.ms": "LONG", "log.cleaner.dedupe.buffer.size": "LONG", "log.cleaner.enable": "BOOLEAN",
		"log.cleaner.io.buffer.load.factor": "DOUBLE", "log.cleaner.io.buffer.size": "INT",
		"log.cleaner.io.max.bytes.per.second": "DOUBLE", "log.cleaner.threads": "INT",
		"log.flush.offset.checkpoint.interval.ms": "INT", "log.flush.scheduler.interval.ms": "LONG",
		"log.flush.start.offset.checkpoint.interval.ms": "INT", "log.retention.check.interval.ms": "LONG",
		"node.id": "INT", "num.partitions": "INT", "num.recovery.threads.per.data.dir": "INT",
		"offsets.retention.check.interval.ms": "LONG", "offsets.retention.minutes": "INT",
		"offsets.topic.num.partitions": "INT", "producer.id.expiration.check.interval.ms": "INT",
		"producer.id.expiration.ms": "INT", "remote.log.index.file.cache.total.size.bytes": "LONG",
		"remote.log.manager.task.interval.ms": "LONG", "remote.log.metadata.topic.num.partitions": "INT",
		"remote.log.storage.system.enable": "BOOLEAN", "transaction.abort.timed.out.transaction.cleanup.interval.ms": "INT",
		"transaction.max.timeout.ms": "INT", "transaction.remove.expired.transaction.cleanup.interval.ms": "INT",
		"transaction.state.log.num.partitions": "INT", "transactional.id.expiration.ms": "INT",
	}
	for t, b := range topicToBroker {
		m[b] = topicPropTypes[t]
	}
	for name := range brokerProps {
		if _, ok := m[name]; !ok && strings.HasPrefix(name, "group.") {
			m[name] = "INT" // the group.* bounds and timeouts, all ints
		}
	}
	return m
}()

// topicPropDocs say what each topic property does.
var topicPropDocs = map[string]string{
	"cleanup.policy":                  "How old segments are removed: delete (by retention), compact (keep each key's latest record), or both.",
	"compression.gzip.level":          "The level of gzip compression when compression.type is gzip.",
	"compression.lz4.level":           "The level of lz4 compression when compression.type is lz4.",
	"compression.type":                "The codec batches are stored with: producer keeps the producer's; others recompress.",
	"compression.zstd.level":          "The level of zstd compression when compression.type is zstd.",
	"delete.retention.ms":             "How long a compacted topic keeps tombstones and transaction markers.",
	"file.delete.delay.ms":            "How long a deleted segment's files stay before they are removed.",
	"flush.messages":                  "Records appended between forced fsyncs of a partition.",
	"flush.ms":                        "Milliseconds between forced fsyncs of a partition.",
	"index.interval.bytes":            "Bytes appended between entries of the offset index.",
	"local.retention.bytes":           "With tiered storage, the local bytes kept before tiered segments are deleted locally (-2: retention.bytes).",
	"local.retention.ms":              "With tiered storage, how long tiered segments stay local (-2: retention.ms).",
	"max.compaction.lag.ms":           "The longest a record stays uncompacted in a compacted topic.",
	"max.message.bytes":               "The largest record batch the topic takes.",
	"message.timestamp.after.max.ms":  "How far in the future a CreateTime timestamp may lie.",
	"message.timestamp.before.max.ms": "How far in the past a CreateTime timestamp may lie.",
	"message.timestamp.type":          "CreateTime keeps the producer's timestamps; LogAppendTime stamps the append time.",
	"min.cleanable.dirty.ratio":       "The dirty share of a compacted log above which the cleaner cleans it.",
	"min.compaction.lag.ms":           "The least time a record stays uncompacted in a compacted topic.",
	"preallocate":                     "Whether segment files are allocated at full size when rolled.",
	"remote.storage.enable":           "Whether the topic's sealed segments are copied to remote (tiered) storage.",
	"retention.bytes":                 "The bytes a partition keeps before its oldest segments are deleted (-1: no limit).",
	"retention.ms":                    "How long records are kept before their segment is deleted (-1: forever).",
	"segment.bytes":                   "The size at which a segment is rolled.",
	"segment.index.bytes":             "The size of a segment's offset and time indexes.",
	"segment.jitter.ms":               "The most random time taken off segment.ms, so that segments do not roll at once.",
	"segment.ms":                      "The age at which a segment is rolled even if not full.",
}

// brokerDocs say what each broker property without a topic synonym does.
var brokerDocs = map[string]string{
	"auto.create.topics.enable":                                   "Whether a Metadata request naming an unknown topic creates it.",
	"group.consumer.assignors":                                    "The server-side assignors of consumer groups, the first the default.",
	"group.consumer.heartbeat.interval.ms":                        "How often consumer group members heartbeat.",
	"group.consumer.max.heartbeat.interval.ms":                    "The largest heartbeat interval a consumer group may set.",
	"group.consumer.max.session.timeout.ms":                       "The largest session timeout a consumer group may set.",
	"group.consumer.max.size":                                     "The members a consumer group takes.",
	"group.consumer.min.heartbeat.interval.ms":                    "The smallest heartbeat interval a consumer group may set.",
	"group.consumer.min.session.timeout.ms":                       "The smallest session timeout a consumer group may set.",
	"group.consumer.session.timeout.ms":                           "How long a consumer group member may go without a heartbeat.",
	"group.initial.rebalance.delay.ms":                            "How long a new classic group waits for more members before its first rebalance.",
	"group.share.delivery.count.limit":                            "Deliveries of a record to share group members before it is archived.",
	"group.share.heartbeat.interval.ms":                           "How often share group members heartbeat.",
	"group.share.max.delivery.count.limit":                        "The largest delivery count limit a share group may set.",
	"group.share.max.heartbeat.interval.ms":                       "The largest heartbeat interval a share group may set.",
	"group.share.max.partition.max.record.locks":                  "The largest record lock count a share group may set.",
	"group.share.max.record.lock.duration.ms":                     "The longest record lock a share group may set.",
	"group.share.max.session.timeout.ms":                          "The largest session timeout a share group may set.",
	"group.share.max.share.sessions":                              "The share sessions the broker keeps at once.",
	"group.share.max.size":                                        "The members a share group takes.",
	"group.share.min.delivery.count.limit":                        "The smallest delivery count limit a share group may set.",
	"group.share.min.heartbeat.interval.ms":                       "The smallest heartbeat interval a share group may set.",
	"group.share.min.partition.max.record.locks":                  "The smallest record lock count a share group may set.",
	"group.share.min.record.lock.duration.ms":                     "The shortest record lock a share group may set.",
	"group.share.min.session.timeout.ms":                          "The smallest session timeout a share group may set.",
	"group.share.partition.max.record.locks":                      "Records of a share partition that may be in flight at once.",
	"group.share.record.lock.duration.ms":                         "How long a share group member holds fetched records.",
	"group.share.session.timeout.ms":                              "How long a share group member may go without a heartbeat.",
	"log.cleaner.backoff.ms":                                      "How long a cleaner sleeps when no log needs cleaning.",
	"log.cleaner.dedupe.buffer.size":                              "The memory of the cleaners' offset maps.",
	"log.cleaner.enable":                                          "Whether the cleaners run for compacted topics.",
	"log.cleaner.io.buffer.load.factor":                           "How full a cleaner's offset map may get.",
	"log.cleaner.io.buffer.size":                                  "The cleaners' read and write size.",
	"log.cleaner.io.max.bytes.per.second":                         "The I/O rate all cleaners share.",
	"log.cleaner.threads":                                         "The number of cleaner threads.",
	"log.flush.offset.checkpoint.interval.ms":                     "How often the recovery point checkpoint is written.",
	"log.flush.scheduler.interval.ms":                             "How often the flusher checks whether a partition is due an fsync.",
	"log.flush.start.offset.checkpoint.interval.ms":               "How often the log start offset checkpoint is written.",
	"log.retention.check.interval.ms":                             "How often retention runs.",
	"node.id":                                                     "The node id of this broker.",
	"num.partitions":                                              "The partitions of an auto-created topic.",
	"num.recovery.threads.per.data.dir":                           "Partitions loaded or flushed in parallel when the directory opens and closes.",
	"offsets.retention.check.interval.ms":                         "How often expired committed offsets are removed.",
	"offsets.retention.minutes":                                   "How long an empty group's committed offsets are kept.",
	"offsets.topic.num.partitions":                                "The partitions of __consumer_offsets.",
	"producer.id.expiration.check.interval.ms":                    "How often idle producer ids are expired.",
	"producer.id.expiration.ms":                                   "How long a partition keeps an idle producer's state.",
	"remote.log.index.file.cache.total.size.bytes":                "The local space of the copies fetched back from remote storage.",
	"remote.log.manager.task.interval.ms":                         "How often tiered partitions' sealed segments are copied to remote storage.",
	"remote.log.metadata.topic.num.partitions":                    "The partitions of __remote_log_metadata.",
	"remote.log.storage.system.enable":                            "Whether topics may use tiered storage.",
	"transaction.abort.timed.out.transaction.cleanup.interval.ms": "How often transactions open past their timeout are aborted.",
	"transaction.max.timeout.ms":                                  "The longest transaction timeout a producer may ask for.",
	"transaction.remove.expired.transaction.cleanup.interval.ms":  "How often expired transactional ids are removed.",
	"transaction.state.log.num.partitions":                        "The partitions of __transaction_state.",
	"transactional.id.expiration.ms":                              "How long a transactional id without a transaction is kept.",
}

// brokerPropDoc documents broker property name: a topic synonym as the
// default of its topic property.
func brokerPropDoc(name string) string {
	for t, b := range topicToBroker {
		if b == name {
			return "The default of the topic property " + t + ": " + topicPropDocs[t]
		}
	}
	return brokerDocs[name]
}
