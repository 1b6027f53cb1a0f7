package log

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// The group config store: the groups' configuration overrides, in one file
// in the root of the log directory, next to the topic store.
//
//	<log.dir>/kafkalite-group-configs.json
//
// Kafka keeps them as ConfigRecords of resource type GROUP in its KRaft
// metadata log; kafkalite keeps them in this file. Its format, version 1
// (UTF-8 JSON; key order and whitespace do not matter):
//
//	{
//	  "version": 1,
//	  "groups": {
//	    "orders-share": {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": "20000"}
//	  }
//	}
//
//   - version: 1. A reader refuses other versions; any change of format
//     bumps it.
//   - groups: one entry per group with overrides, keyed by its group id
//     (not empty), holding Kafka group property names and values as
//     strings, as Kafka prints them. A group without overrides has no
//     entry. Each name must be one kafkalite accepts and each value parse
//     (the broker's bounds are not checked again: an override keeps its
//     value when they change, as a dynamic config does in Kafka).
//
// Unknown fields are an error, as is anything else that breaks these
// rules: a [*CorruptStoreError]. The file is written as the
// topic store is (a .tmp file, fsynced, renamed over it, the directory
// fsynced), so after a crash it is the old one or the new one.

const (
	groupConfigStoreFile    = "kafkalite-group-configs.json"
	groupConfigStoreVersion = 1
	// maxGroupConfigStoreBytes bounds the store: an alter that would
	// make it larger is refused, and loadGroupConfigStore reads no more.
	// GroupMaxCount (100000 by default) groups with a few overrides each
	// take about 20 MiB; long group ids are what could reach it.
	maxGroupConfigStoreBytes = 64 << 20
)

// ErrCorruptGroupConfigStore matches a [*CorruptStoreError] about this store.
var ErrCorruptGroupConfigStore = errors.New("log: corrupt group config store")

type groupConfigStoreDoc struct {
	Version *int                         `json:"version"`
	Groups  map[string]map[string]string `json:"groups"`
}

// loadGroupConfigStore reads dir's group config store, checking it against
// c. A missing file is an empty store.
func loadGroupConfigStore(fsys vfs.FS, dir string, c Config) (map[string]map[string]string, error) {
	name := filepath.Join(dir, groupConfigStoreFile)
	data, err := readRootFile(fsys, name, maxGroupConfigStoreBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]map[string]string{}, nil
	}
	var tooLarge *storeTooLargeError
	if errors.As(err, &tooLarge) {
		return nil, &CorruptStoreError{Store: ErrCorruptGroupConfigStore, File: name, Reason: tooLarge.Error()}
	}
	if err != nil {
		return nil, err
	}
	return decodeGroupConfigStore(name, data, c)
}

func decodeGroupConfigStore(name string, data []byte, c Config) (map[string]map[string]string, error) {
	corrupt := func(reason string, err error) (map[string]map[string]string, error) {
		return nil, &CorruptStoreError{Store: ErrCorruptGroupConfigStore, File: name, Reason: reason, Err: err}
	}
	var doc groupConfigStoreDoc
	if err := decodeVersionedStore(name, data, &doc, func() *int { return doc.Version }, groupConfigStoreVersion, ErrCorruptGroupConfigStore); err != nil {
		return nil, err
	}
	groups := make(map[string]map[string]string, len(doc.Groups))
	for group, overrides := range doc.Groups {
		if group == "" {
			return corrupt("empty group id", nil)
		}
		if len(overrides) == 0 {
			return corrupt(fmt.Sprintf("group %q: no overrides", group), nil)
		}
		checked, err := checkGroupProps(c, overrides, false)
		if err != nil {
			return corrupt(fmt.Sprintf("group %q: %v", group, err), err)
		}
		if !maps.Equal(checked, overrides) {
			return corrupt(fmt.Sprintf("group %q: values not as Kafka prints them", group), nil)
		}
		groups[group] = overrides
	}
	return groups, nil
}

// errGroupConfigStoreFull is saveGroupConfigStore's error for a store
// that would exceed its bound.
var errGroupConfigStoreFull = errors.New("log: the group config store would exceed its bound")

// saveGroupConfigStore replaces dir's group config store with groups,
// atomically and durably (writeRootFile); a store above limit bytes is
// refused with errGroupConfigStoreFull, writing nothing.
func saveGroupConfigStore(fsys vfs.FS, dir string, groups map[string]map[string]string, limit int) error {
	doc := groupConfigStoreDoc{Version: new(int), Groups: groups}
	*doc.Version = groupConfigStoreVersion
	if doc.Groups == nil {
		doc.Groups = map[string]map[string]string{}
	}
	data, err := json.MarshalIndent(doc, "", "  ") // keys sorted: the same groups give the same bytes
	if err != nil {
		return err
	}
	if data = append(data, '\n'); len(data) > limit {
		return errGroupConfigStoreFull
	}
	return writeRootFile(fsys, dir, groupConfigStoreFile, data)
}

// groupConfigs holds a Dir's group configuration overrides and writes
// them to the store.
type groupConfigs struct {
	fsys     vfs.FS
	dir      string
	cfg      Config
	maxBytes int // the store's bound: maxGroupConfigStoreBytes

	writeMu sync.Mutex // serialises alters, from the store's write to their publication; taken before mu
	mu      sync.RWMutex
	// overrides and effective hold the groups with overrides; others
	// have defaults.
	overrides map[string]map[string]string
	effective map[string]GroupConfig
	defaults  GroupConfig
}

func openGroupConfigs(fsys vfs.FS, dir string, cfg Config) (*groupConfigs, error) {
	stored, err := loadGroupConfigStore(fsys, dir, cfg)
	if err != nil {
		return nil, err
	}
	g := &groupConfigs{fsys: fsys, dir: dir, cfg: cfg, maxBytes: maxGroupConfigStoreBytes, overrides: stored,
		effective: make(map[string]GroupConfig, len(stored)), defaults: defaultGroupConfig(cfg)}
	for group, o := range stored {
		g.effective[group] = groupConfigWith(cfg, o)
	}
	return g, nil
}

func (g *groupConfigs) config(group string) GroupConfig {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if c, ok := g.effective[group]; ok {
		return c
	}
	return g.defaults
}

func (g *groupConfigs) overridesOf(group string) map[string]string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return maps.Clone(g.overrides[group])
}

func (g *groupConfigs) alter(group string, m map[string]string) (GroupConfig, error) {
	if group == "" {
		return GroupConfig{}, fmt.Errorf("%w: a group id must not be empty", ErrInvalidConfig)
	}
	checked, err := checkGroupProps(g.cfg, m, true)
	if err != nil {
		return GroupConfig{}, err
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	g.mu.RLock()
	before := g.overrides
	_, had := before[group]
	g.mu.RUnlock()
	if !had && len(checked) > 0 && len(before) >= g.cfg.GroupMaxCount {
		return GroupConfig{}, newConfigError("group", group,
			fmt.Sprintf("kafkalite keeps the configuration of at most %d groups (GroupMaxCount)", g.cfg.GroupMaxCount), nil)
	}
	after := maps.Clone(before)
	if len(checked) == 0 {
		delete(after, group)
	} else {
		after[group] = checked
	}
	if err := saveGroupConfigStore(g.fsys, g.dir, after, g.maxBytes); errors.Is(err, errGroupConfigStoreFull) {
		return GroupConfig{}, newConfigError("group", group,
			fmt.Sprintf("the group config store would exceed %d bytes", g.maxBytes), nil)
	} else if err != nil {
		// The failed write may have left the new store in place
		// (renamed, not synced): put the old one back.
		return GroupConfig{}, errors.Join(err, saveGroupConfigStore(g.fsys, g.dir, before, math.MaxInt))
	}
	eff := groupConfigWith(g.cfg, checked)
	g.mu.Lock()
	g.overrides = after
	if len(checked) == 0 {
		delete(g.effective, group)
		eff = g.defaults
	} else {
		g.effective[group] = eff
	}
	g.mu.Unlock()
	return eff, nil
}

// GroupConfig returns group's effective configuration: the broker's
// settings ([Config]'s group properties) with the group's overrides
// ([Dir.AlterGroupConfig]) applied. Any group id may be asked, one the
// coordinator does not know too.
func (d *Dir) GroupConfig(group string) GroupConfig { return d.groupConfigs.config(group) }

// GroupConfigOverrides returns group's overrides, Kafka group property
// names and values as Kafka prints them; nil for none. The map is the
// caller's.
func (d *Dir) GroupConfigOverrides(group string) map[string]string {
	return d.groupConfigs.overridesOf(group)
}

// ConfiguredGroups returns the groups with overrides
// ([Dir.AlterGroupConfig]), sorted: the groups Kafka's ListConfigResources
// lists as having a configuration.
func (d *Dir) ConfiguredGroups() []string {
	g := d.groupConfigs
	g.mu.RLock()
	defer g.mu.RUnlock()
	return slices.Sorted(maps.Keys(g.overrides))
}

// DescribeGroupConfig lists group's configuration as Kafka 4.4's
// DescribeConfigs does for resource type GROUP: the properties with a
// broker setting, at their effective values, and the group's overrides;
// sorted by name.
func (d *Dir) DescribeGroupConfig(group string) []GroupConfigEntry {
	return describeGroupConfig(d.cfg, d.GroupConfigOverrides(group))
}

// AlterGroupConfig replaces group's overrides with props (Kafka group
// property names and values; none: back to the broker's settings), durably
// (the group config store is written before it returns), and returns the
// group's effective configuration. The overrides are checked first, as
// Kafka's GroupConfig.validate checks them (names, values, the broker's
// bounds, session timeouts above heartbeat intervals); an invalid one is a
// [*ConfigError] matching [ErrInvalidConfig] (and [ErrUnknownProperty] or
// [ErrNotSupported]; see [GroupConfig]) and nothing is changed. Values are
// kept as Kafka prints them (trimmed; numbers and booleans canonical).
// kafkalite keeps the configuration of at most Config.GroupMaxCount
// groups, in a store of at most 64 MiB; an alter beyond either is refused
// likewise.
func (d *Dir) AlterGroupConfig(ctx context.Context, group string, props map[string]string) (GroupConfig, error) {
	if err := ctx.Err(); err != nil {
		return GroupConfig{}, err
	}
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return GroupConfig{}, ErrClosed
	}
	return d.groupConfigs.alter(group, props)
}
