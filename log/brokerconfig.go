package log

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/internal/props"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Dynamic broker configs: the broker properties that change at run time
// (Kafka's DynamicBrokerConfig), set for the cluster (Kafka's default
// broker resource, named "") or for this broker (the resource named by its
// node id), kept in one file in the root of the log directory:
//
//	<log.dir>/kafkalite-broker-configs.json
//
// Kafka keeps them as ConfigRecords of resource type BROKER in its KRaft
// metadata log. Format, version 1 (UTF-8 JSON; key order and whitespace do
// not matter):
//
//	{
//	  "version": 1,
//	  "default": {"log.retention.ms": "3600000"},
//	  "broker": {"log.segment.bytes": "1048576"}
//	}
//
//   - version: 1. A reader refuses other versions.
//   - default, broker: the cluster's and this broker's dynamic settings,
//     names from [DynamicBrokerProperties], values as Kafka prints them.
//     A broker setting wins over a default one, which wins over the
//     static [Config].
//
// Unknown fields, names or values that do not parse are a
// [*CorruptStoreError]. The file is written as the topic store
// is (a .tmp file, fsynced, renamed over it, the directory fsynced), so
// after a crash it is the old one or the new one.

const (
	brokerConfigStoreFile    = "kafkalite-broker-configs.json"
	brokerConfigStoreVersion = 1
	// maxBrokerConfigStoreBytes bounds the store read at Open: the
	// dynamic properties' values fit in a few kilobytes.
	maxBrokerConfigStoreBytes = 1 << 20
)

// BrokerConfigScope says which dynamic broker settings an alter replaces:
// the cluster's defaults or this broker's own.
type BrokerConfigScope int8

const (
	// ClusterDefault is Kafka's default broker resource (resource name
	// ""): DYNAMIC_DEFAULT_BROKER_CONFIG.
	ClusterDefault BrokerConfigScope = iota
	// ThisBroker is the broker resource named by the node id:
	// DYNAMIC_BROKER_CONFIG, over ClusterDefault.
	ThisBroker
)

// ErrCorruptBrokerConfigStore matches a [*CorruptStoreError] about this store.
var ErrCorruptBrokerConfigStore = errors.New("log: corrupt broker config store")

// dynamicBrokerProps are the broker properties kafkalite changes at run
// time, as Kafka 4.4 does: the defaults of topic properties (the
// log.-prefixed synonyms, message.max.bytes, compression.*; Kafka's
// DynamicLogConfig), a change of which applies at once to every topic
// without its own override, and the cleaner's settings
// (cleanerDynamicProps; Kafka's LogCleaner reconfigurable configs), a
// change of which restarts the cleaner goroutines.
var dynamicBrokerProps = func() map[string]bool {
	m := make(map[string]bool, len(topicToBroker)+len(cleanerDynamicProps))
	for _, b := range topicToBroker {
		m[b] = true
	}
	for _, name := range cleanerDynamicProps {
		m[name] = true
	}
	return m
}()

// kafkaDynamicBrokerProps are the broker properties kafkalite has that
// Kafka 4.4 changes at run time but kafkalite applies at Open only
// (recovery threads, producer id expiration, the remote index cache): an
// alter of one is refused with [ErrNotSupported] rather than stored and
// not honoured.
var kafkaDynamicBrokerProps = map[string]bool{
	"num.recovery.threads.per.data.dir":            true,
	"producer.id.expiration.ms":                    true,
	"remote.log.index.file.cache.total.size.bytes": true,
}

// DynamicBrokerProperties returns, sorted, the broker properties
// [Dir.AlterBrokerConfig] changes at run time.
func DynamicBrokerProperties() []string { return props.SortedKeys(dynamicBrokerProps) }

// IsDynamicBrokerProperty reports whether [Dir.AlterBrokerConfig] changes
// the broker property name at run time.
func IsDynamicBrokerProperty(name string) bool { return dynamicBrokerProps[name] }

type brokerConfigStoreDoc struct {
	Version *int              `json:"version"`
	Default map[string]string `json:"default"`
	Broker  map[string]string `json:"broker"`
}

// checkDynamicBrokerProps checks m's names and values: each name one of
// dynamicBrokerProps, each value parsing. It returns the values as Kafka
// prints them.
func checkDynamicBrokerProps(m map[string]string) (map[string]string, error) {
	var errs []error
	out := make(map[string]string, len(m))
	for _, name := range props.SortedKeys(m) {
		v := m[name]
		p, known := brokerProps[name]
		switch {
		case dynamicBrokerProps[name]:
		case kafkaDynamicBrokerProps[name]:
			errs = append(errs, newConfigError(name, v, "kafkalite applies it when the directory opens only, not at run time", ErrNotSupported))
			continue
		case known || ignoredBrokerProps[name] != nil:
			errs = append(errs, newConfigError(name, v, "cannot be updated dynamically", nil))
			continue
		default:
			errs = append(errs, unknownProperty(name, v))
			continue
		}
		c := DefaultConfig()
		if err := p.Set(&c, v); err != nil {
			errs = append(errs, invalidProperty(name, v, err))
			continue
		}
		printed, _ := p.Get(&c)
		out[name] = printed
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// withDynamic returns static with the dynamic defaults, then the broker's
// settings, applied, and validated.
func withDynamic(static Config, def, broker map[string]string) (Config, error) {
	c := static
	var errs []error
	for _, m := range []map[string]string{def, broker} {
		errs = append(errs, props.Apply(&c, m, brokerProps, brokerOrder, invalidProperty)...)
	}
	if len(errs) == 0 {
		if err := c.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return c, errors.Join(errs...)
}

func loadBrokerConfigStore(fsys vfs.FS, dir string) (def, broker map[string]string, err error) {
	name := filepath.Join(dir, brokerConfigStoreFile)
	data, err := readRootFile(fsys, name, maxBrokerConfigStoreBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, map[string]string{}, nil
	}
	var tooLarge *storeTooLargeError
	if errors.As(err, &tooLarge) {
		return nil, nil, &CorruptStoreError{Store: ErrCorruptBrokerConfigStore, File: name, Reason: tooLarge.Error()}
	}
	if err != nil {
		return nil, nil, err
	}
	return decodeBrokerConfigStore(name, data)
}

func decodeBrokerConfigStore(name string, data []byte) (def, broker map[string]string, err error) {
	corrupt := func(reason string, err error) (map[string]string, map[string]string, error) {
		return nil, nil, &CorruptStoreError{Store: ErrCorruptBrokerConfigStore, File: name, Reason: reason, Err: err}
	}
	var doc brokerConfigStoreDoc
	if err := decodeVersionedStore(name, data, &doc, func() *int { return doc.Version }, brokerConfigStoreVersion, ErrCorruptBrokerConfigStore); err != nil {
		return nil, nil, err
	}
	for _, m := range []map[string]string{doc.Default, doc.Broker} {
		checked, err := checkDynamicBrokerProps(m)
		if err != nil {
			return corrupt(err.Error(), err)
		}
		if !maps.Equal(checked, m) {
			return corrupt("values not as Kafka prints them", nil)
		}
	}
	if doc.Default == nil {
		doc.Default = map[string]string{}
	}
	if doc.Broker == nil {
		doc.Broker = map[string]string{}
	}
	return doc.Default, doc.Broker, nil
}

func saveBrokerConfigStore(fsys vfs.FS, dir string, def, broker map[string]string) error {
	doc := brokerConfigStoreDoc{Version: new(int), Default: def, Broker: broker}
	*doc.Version = brokerConfigStoreVersion
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeRootFile(fsys, dir, brokerConfigStoreFile, append(data, '\n'))
}

// brokerConfigs holds a Dir's dynamic broker settings and the effective
// configuration they make.
type brokerConfigs struct {
	static Config

	mu     sync.RWMutex // protects def and broker
	def    map[string]string
	broker map[string]string
	// effective is static with def and broker applied: what topics
	// without overrides get (read without mu by every topic creation).
	effective atomic.Pointer[Config]
}

func openBrokerConfigs(fsys vfs.FS, dir string, static Config) (*brokerConfigs, error) {
	def, broker, err := loadBrokerConfigStore(fsys, dir)
	if err != nil {
		return nil, err
	}
	eff, err := withDynamic(static, def, broker)
	if err != nil {
		// Values that parse but no longer fit the static configuration
		// (a bound it changed): refused rather than dropped.
		return nil, &CorruptStoreError{Store: ErrCorruptBrokerConfigStore, File: filepath.Join(dir, brokerConfigStoreFile),
			Reason: "the dynamic settings do not fit the configuration: " + err.Error(), Err: err}
	}
	b := &brokerConfigs{static: static, def: def, broker: broker}
	b.effective.Store(&eff)
	return b, nil
}

func (b *brokerConfigs) config() Config { return *b.effective.Load() }

func (b *brokerConfigs) overrides(scope BrokerConfigScope) map[string]string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if scope == ThisBroker {
		return maps.Clone(b.broker)
	}
	return maps.Clone(b.def)
}

// BrokerConfigOverrides returns the dynamic broker settings of scope
// ([Dir.AlterBrokerConfig]): Kafka broker property names and values as
// Kafka prints them. The map is the caller's.
func (d *Dir) BrokerConfigOverrides(scope BrokerConfigScope) map[string]string {
	return d.brokerConfigs.overrides(scope)
}

// StaticConfig returns the Config the Dir was opened with, without the
// dynamic broker settings ([Dir.Config] has them).
func (d *Dir) StaticConfig() Config { return d.cfg }

// AlterBrokerConfig replaces the dynamic broker settings of scope with
// props (Kafka broker property names and values; none: back to the static
// Config), durably (the broker config store is written before it
// returns), and applies them: every topic's configuration is its
// overrides over the new defaults at once; a change of the cleaner's
// settings (log.cleaner.threads, log.cleaner.dedupe.buffer.size,
// log.cleaner.io.buffer.size, log.cleaner.io.buffer.load.factor,
// log.cleaner.backoff.ms) restarts the cleaner goroutines with them, as
// Kafka's LogCleaner restarts its threads, each goroutine stopping once
// the round it is in ends (no round is aborted, so nothing is cleaned
// twice, and the new goroutines start once the old ones are gone, so
// that they never share log.cleaner.dedupe.buffer.size), and
// log.cleaner.io.max.bytes.per.second applies to the rounds in progress
// at once. Only [DynamicBrokerProperties] change; another name is refused
// with a [*ConfigError] matching [ErrInvalidConfig] (and [ErrNotSupported]
// for a property Kafka changes at run time but kafkalite does not,
// [ErrUnknownProperty] for a name Kafka does not define), as is a value
// that does not parse, a configuration that does not validate, a topic
// whose overrides would not fit the new defaults, or, with
// log.cleaner.enable, a change of the cleaner's settings (or of
// message.max.bytes) that leaves log.cleaner.threads below 1, below half
// its current value or above double it (Kafka's bounds); then nothing is
// changed.
func (d *Dir) AlterBrokerConfig(ctx context.Context, scope BrokerConfigScope, props map[string]string) error {
	return d.alterBrokerConfig(ctx, scope, props, false)
}

// CheckBrokerConfig checks what [Dir.AlterBrokerConfig] would check of
// the same arguments, changing nothing (Kafka's validate-only).
func (d *Dir) CheckBrokerConfig(ctx context.Context, scope BrokerConfigScope, props map[string]string) error {
	return d.alterBrokerConfig(ctx, scope, props, true)
}

func (d *Dir) alterBrokerConfig(ctx context.Context, scope BrokerConfigScope, props map[string]string, validate bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	checked, err := checkDynamicBrokerProps(props)
	if err != nil {
		return err
	}
	b := d.brokerConfigs
	// storeMu: no topic is created or altered between the check of every
	// topic's configuration and the publication of the new defaults.
	d.storeMu.Lock()
	defer d.storeMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	def, broker := b.def, b.broker
	if scope == ThisBroker {
		broker = checked
	} else {
		def = checked
	}
	eff, err := withDynamic(b.static, def, broker)
	if err != nil {
		return err
	}
	if err := d.checkCleanerReconfiguration(b.config(), eff, mergeDynamic(b.def, b.broker), mergeDynamic(def, broker)); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	type applied struct {
		t   *topic
		cfg TopicConfig
	}
	var topics []applied
	for _, name := range slices.Sorted(maps.Keys(d.topics)) {
		t := d.topics[name]
		c, err := effectiveTopicConfig(eff, t.overrides)
		if err != nil {
			return fmt.Errorf("topic %s: %w", name, err)
		}
		topics = append(topics, applied{t, c})
	}
	if validate {
		return nil
	}
	if err := saveBrokerConfigStore(d.fsys, d.path, def, broker); err != nil {
		// The failed write may have left the new store in place: put the
		// old one back.
		return errors.Join(err, saveBrokerConfigStore(d.fsys, d.path, b.def, b.broker))
	}
	b.def, b.broker = def, broker
	b.effective.Store(&eff)
	d.reconfigureCleaner(eff)
	for _, a := range topics {
		for _, l := range a.t.partitions {
			c := a.cfg
			l.local.config.Store(&c)
		}
	}
	return nil
}

// effectiveTopicConfig is c's default topic configuration with a topic's
// overrides applied.
func effectiveTopicConfig(c Config, overrides map[string]string) (TopicConfig, error) {
	tc, _, err := c.DefaultTopic.WithProperties(overrides)
	if err == nil && tc.RemoteStorageEnable && (!c.RemoteLogStorageSystemEnable || c.RemoteStorage == nil) {
		err = newConfigError("remote.storage.enable", "true",
			"needs the directory's remote.log.storage.system.enable and Config.RemoteStorage (tiered storage is off)", nil)
	}
	return tc, err
}
