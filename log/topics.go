package log

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
)

// TopicDescription describes a topic.
type TopicDescription struct {
	Name       string
	ID         string // Kafka's topic id, as in partition.metadata
	Partitions int32
	Internal   bool
	// Config is the configuration in force; Overrides the properties set
	// for this topic (the rest are the directory's defaults).
	Config    TopicConfig
	Overrides map[string]string
}

// CreateTopic creates a topic with partitions partitions and returns its
// description (its topic id, the configuration in force), as Kafka's
// CreateTopics answers. props are Kafka topic properties (nil for the
// directory's defaults); names Kafka defines but kafkalite does not use
// (min.insync.replicas, say) are accepted and logged at Info, and
// [ParseTopicConfig] lists them beforehand. The name follows Kafka's rules
// ([ValidateTopicName]) and must not collide with an existing topic once
// '.' and '_' are made equal. The partition directories and the topic
// store are durable when CreateTopic returns. An internal topic is
// created by its coordinator: CreateTopic of one is [ErrTopicExists] if it
// exists (Kafka's answer), [ErrInternalTopic] otherwise.
//
// The Dir's lock is held only to take the name and to publish the topic:
// appends, reads and other administration go on while the partitions are
// built. Meanwhile the name is taken (another CreateTopic of it is
// ErrTopicExists) and the topic is not listed; it appears once the topic
// store lists it durably. A CreateTopic that fails (or whose ctx ends)
// removes every partition directory it made.
func (d *Dir) CreateTopic(ctx context.Context, name string, partitions int32, props map[string]string) (TopicDescription, error) {
	if err := ValidateTopicName(name); err != nil {
		return TopicDescription{}, err
	}
	if IsInternalTopic(name) {
		if _, err := d.DescribeTopic(name); err == nil {
			return TopicDescription{}, fmt.Errorf("%w: %s", ErrTopicExists, name)
		}
		return TopicDescription{}, fmt.Errorf("%w: %s is created by its coordinator, not by users", ErrInternalTopic, name)
	}
	desc, unused, err := d.createTopic(ctx, name, partitions, props)
	if err != nil {
		return TopicDescription{}, err
	}
	if len(unused) > 0 {
		d.logger.Info("topic properties kafkalite does not use", "topic", name, "properties", unused)
	}
	// The topic as created: a deletion that runs right after does not
	// make the creation fail.
	return desc, nil
}

func (d *Dir) createTopic(ctx context.Context, name string, partitions int32, props map[string]string) (TopicDescription, []string, error) {
	if partitions < 1 {
		return TopicDescription{}, nil, fmt.Errorf("%w: %d partitions", ErrInvalidConfig, partitions)
	}
	_, ignored, err := ParseTopicConfig(props)
	if err != nil {
		return TopicDescription{}, nil, err
	}
	cfg, err := d.topicConfig(props)
	if err != nil {
		return TopicDescription{}, nil, err
	}
	if err := d.reserve(name); err != nil {
		return TopicDescription{}, nil, err
	}
	defer d.unreserve(name)
	id, err := checkpoint.NewTopicID(rand.Reader)
	if err != nil {
		return TopicDescription{}, nil, err
	}
	t := &topic{name: name, id: id, overrides: maps.Clone(props)}
	// Built without the Dir's lock: appends, reads and other
	// administration go on meanwhile.
	if t.partitions, err = d.buildPartitions(ctx, t, 0, partitions, cfg); err != nil {
		return TopicDescription{}, nil, err
	}
	err = d.publish(func(m map[string]topicMeta) { m[name] = t.meta() }, func() {
		d.topics[name] = t
		// The dynamic broker settings may have changed while the
		// partitions were built; AlterBrokerConfig, which waits for
		// publish (storeMu), covers the topic from now on.
		if c, err := d.topicConfig(t.overrides); err == nil && c != cfg {
			cfg = c
			for _, l := range t.partitions {
				l.local.config.Store(&c)
			}
		}
	})
	if err != nil {
		return TopicDescription{}, nil, errors.Join(err, d.discardPartitions(t, t.partitions, 0, partitions))
	}
	d.logger.Info("created topic", "topic", name, "partitions", partitions, "id", id)
	return TopicDescription{Name: name, ID: id.String(), Partitions: partitions, Internal: IsInternalTopic(name),
		Config: cfg, Overrides: maps.Clone(props)}, ignored, nil
}

// reserve takes name for a creation: it fails with ErrTopicExists if a
// topic, or a creation in progress, has it (or a name colliding with it
// once '.' and '_' are made equal). Close waits for the creation until
// unreserve.
func (d *Dir) reserve(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	taken := func(existing string) error {
		if existing == name {
			return fmt.Errorf("%w: %s", ErrTopicExists, name)
		}
		if TopicNamesCollide(existing, name) {
			return fmt.Errorf("%w: %s collides with %s ('.' and '_' are the same in metric names)", ErrTopicExists, name, existing)
		}
		return nil
	}
	for existing := range d.topics {
		if err := taken(existing); err != nil {
			return err
		}
	}
	for existing := range d.creating {
		if err := taken(existing); err != nil {
			return err
		}
	}
	if d.creating == nil {
		d.creating = map[string]bool{}
	}
	d.creating[name] = true
	d.building.Add(1)
	return nil
}

// unreserve ends a creation reserve began: published or failed.
func (d *Dir) unreserve(name string) {
	d.mu.Lock()
	delete(d.creating, name)
	d.mu.Unlock()
	d.building.Done()
}

// buildPartitions makes partitions from to to-1 of t, durably, without
// the Dir's lock. If one fails (or ctx ends), the logs made are closed
// and the directories of from to the failed one removed: a failed
// creation leaves no directory behind.
func (d *Dir) buildPartitions(ctx context.Context, t *topic, from, to int32, cfg TopicConfig) ([]*Log, error) {
	var logs []*Log
	for p := from; p < to; p++ {
		err := ctx.Err()
		var l *Log
		if err == nil {
			l, err = d.newPartition(t, p, cfg)
		}
		if err != nil {
			return nil, errors.Join(err, d.discardPartitions(t, logs, from, p+1))
		}
		logs = append(logs, l)
	}
	return logs, nil
}

// discardPartitions closes logs, partitions of t that were never
// published, and removes the directories of partitions from to to-1 (a
// partition whose making failed may have left its directory), durably.
func (d *Dir) discardPartitions(t *topic, logs []*Log, from, to int32) error {
	errs := []error{closeLogs(logs)}
	for p := from; p < to; p++ {
		errs = append(errs, d.fsys.RemoveAll(filepath.Join(d.path, PartitionDirName(t.name, p))))
	}
	errs = append(errs, d.fsys.SyncDir(d.path))
	if err := errors.Join(errs...); err != nil {
		d.logger.Warn("removing the partitions of a failed topic change failed; the next Open sets them aside as strays", "topic", t.name, "err", err)
		return err
	}
	return nil
}

// publish makes a change of the topics durable, then visible: holding
// storeMu, it writes the topic store with change applied to the current
// entries, and then runs apply under mu. If the write fails, nothing is
// applied and the store is written again as it was, since the failed
// write may have left the new one in place (renamed, not yet synced).
// REQUIRES d.storeMu not held.
func (d *Dir) publish(change func(map[string]topicMeta), apply func()) error {
	d.storeMu.Lock()
	defer d.storeMu.Unlock()
	d.mu.RLock()
	before := d.topicMetasLocked()
	d.mu.RUnlock()
	after := maps.Clone(before)
	change(after)
	if err := saveTopicStore(d.fsys, d.path, after); err != nil {
		return errors.Join(err, saveTopicStore(d.fsys, d.path, before))
	}
	d.mu.Lock()
	apply()
	d.mu.Unlock()
	return nil
}

// meta is t's entry in the topic store. REQUIRES d.mu held, shared at
// least, once t is published.
func (t *topic) meta() topicMeta {
	return topicMeta{ID: t.id.String(), Partitions: int32(len(t.partitions)), Config: t.overrides}
}

func (d *Dir) newPartition(t *topic, p int32, cfg TopicConfig) (*Log, error) {
	l, _, err := loadLog(loadOptions{topic: t.name, partition: p, dir: filepath.Join(d.path, PartitionDirName(t.name, p)),
		fsys: d.fsys, config: cfg, logger: d.logger, now: d.now, clean: true, topicID: t.id, create: true, onAppend: d.changed.wake, tier: d.tiering,
		producerIDExpiration: d.cfg.ProducerIDExpiration, overlapBytes: d.cfg.OverlapAppendBytes})
	if err != nil {
		return nil, err
	}
	// The new partition's files and its directory entry are durable before
	// the topic is announced.
	if err := errors.Join(l.Flush(context.Background()), d.fsys.SyncDir(d.path)); err != nil {
		return nil, errors.Join(err, l.close())
	}
	return l, nil
}

func closeLogs(logs []*Log) error {
	var errs []error
	for _, l := range logs {
		if l != nil {
			errs = append(errs, l.close())
		}
	}
	return errors.Join(errs...)
}

// Topics returns the names of the topics, sorted.
func (d *Dir) Topics() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Sorted(maps.Keys(d.topics))
}

// DescribeTopic describes a topic; [ErrClosed] once the Dir is closed.
func (d *Dir) DescribeTopic(name string) (TopicDescription, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return TopicDescription{}, ErrClosed
	}
	t, ok := d.topics[name]
	if !ok {
		return TopicDescription{}, fmt.Errorf("%w: %s", ErrUnknownTopicOrPartition, name)
	}
	cfg, err := d.topicConfig(t.overrides)
	if err != nil {
		return TopicDescription{}, err
	}
	return TopicDescription{Name: name, ID: t.id.String(), Partitions: int32(len(t.partitions)), Internal: IsInternalTopic(name),
		Config: cfg, Overrides: maps.Clone(t.overrides)}, nil
}

// Partition returns a partition's log. The Dir owns it: callers share one
// *Log per partition, and the Dir closes it (see [Log]).
func (d *Dir) Partition(topicName string, partition int32) (*Log, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	t, ok := d.topics[topicName]
	if !ok || partition < 0 || int(partition) >= len(t.partitions) {
		return nil, fmt.Errorf("%w: %s-%d", ErrUnknownTopicOrPartition, topicName, partition)
	}
	return t.partitions[partition], nil
}

// AlterTopicConfig replaces a topic's overrides with props (Kafka's
// incremental alter is the caller's merge of DescribeTopic's Overrides) and
// applies the new configuration to its partitions at once, and returns
// the topic's new description. Names Kafka defines that kafkalite does not
// use are accepted and logged at Info, as CreateTopic does. A done ctx
// returns its error at once, changing nothing. Internal topics keep the
// configuration their coordinators gave them: altering one is
// [ErrInternalTopic] (a cleanup.policy of delete would let retention erase
// the coordinators' state; Kafka, which allows it to an authorized client,
// differs here).
func (d *Dir) AlterTopicConfig(ctx context.Context, name string, props map[string]string) (TopicDescription, error) {
	if err := ctx.Err(); err != nil {
		return TopicDescription{}, err
	}
	if err := refuseInternal(name, "its configuration cannot be altered"); err != nil {
		return TopicDescription{}, err
	}
	_, unused, err := ParseTopicConfig(props)
	if err != nil {
		return TopicDescription{}, err
	}
	cfg, err := d.topicConfig(props)
	if err != nil {
		return TopicDescription{}, err
	}
	if err := d.alterTopicConfig(name, props, cfg); err != nil {
		return TopicDescription{}, err
	}
	if len(unused) > 0 {
		d.logger.Info("topic properties kafkalite does not use", "topic", name, "properties", unused)
	}
	return d.DescribeTopic(name)
}

func (d *Dir) alterTopicConfig(name string, props map[string]string, cfg TopicConfig) error {
	t, err := d.lockTopic(name)
	if err != nil {
		return err
	}
	defer t.changeMu.Unlock()
	d.storeMu.Lock()
	defer d.storeMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	// The defaults under storeMu: a dynamic broker config change
	// (AlterBrokerConfig) waits for it.
	if cfg, err = d.topicConfig(props); err != nil {
		return err
	}
	old := t.overrides
	t.overrides = maps.Clone(props)
	if err := d.saveTopicsLocked(); err != nil {
		t.overrides = old
		return err
	}
	for _, l := range t.partitions {
		c := cfg
		l.local.config.Store(&c)
	}
	return nil
}

// AddPartitions grows a topic to total partitions (Kafka never removes
// partitions). Keyed records map to partitions by the partition count, so
// adding partitions moves keys, as in Kafka. An internal topic keeps its
// count ([ErrInternalTopic]): its coordinator maps its keys to partitions
// by it. The new partitions are built without the Dir's lock (appends,
// reads and the administration of other topics go on; other changes of
// this topic wait) and published once the topic store lists them
// durably; if it fails, every directory it made is removed.
func (d *Dir) AddPartitions(ctx context.Context, name string, total int32) error {
	if err := refuseInternal(name, "its partition count is fixed"); err != nil {
		return err
	}
	t, err := d.lockTopic(name)
	if err != nil {
		return err
	}
	defer t.changeMu.Unlock()
	d.mu.RLock()
	closed := d.closed
	n, overrides := int32(len(t.partitions)), t.overrides
	if !closed {
		d.building.Add(1)
	}
	d.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	defer d.building.Done()
	if total <= n {
		return fmt.Errorf("%w: %s has %d partitions, cannot shrink or keep at %d", ErrInvalidConfig, name, n, total)
	}
	cfg, err := d.topicConfig(overrides)
	if err != nil {
		return err
	}
	logs, err := d.buildPartitions(ctx, t, n, total, cfg)
	if err != nil {
		return err
	}
	err = d.publish(func(m map[string]topicMeta) {
		e := m[name]
		e.Partitions = total
		m[name] = e
	}, func() { t.partitions = append(t.partitions, logs...) })
	if err != nil {
		return errors.Join(err, d.discardPartitions(t, logs, n, total))
	}
	return nil
}

// lockTopic returns the topic called name with its changeMu held.
func (d *Dir) lockTopic(name string) (*topic, error) {
	for {
		d.mu.RLock()
		closed, t := d.closed, d.topics[name]
		d.mu.RUnlock()
		switch {
		case closed:
			return nil, ErrClosed
		case t == nil:
			return nil, fmt.Errorf("%w: %s", ErrUnknownTopicOrPartition, name)
		}
		t.changeMu.Lock()
		d.mu.RLock()
		same := d.topics[name] == t
		d.mu.RUnlock()
		if same {
			return t, nil
		}
		t.changeMu.Unlock() // deleted meanwhile, maybe created again: look again
	}
}

// DeleteTopic deletes a topic as Kafka does: its partition directories are
// renamed to <topic>-<partition>.<id>-delete at once (so the topic is gone
// if the process crashes now) and removed in the background. Readers and
// writers still holding its logs get [ErrTopicDeleted]. Internal topics
// cannot be deleted ([ErrInternalTopic]; an unknown name is
// [ErrUnknownTopicOrPartition] first). A done ctx returns its error at
// once, deleting nothing.
func (d *Dir) DeleteTopic(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := d.lockTopic(name)
	if err != nil {
		return err
	}
	defer t.changeMu.Unlock()
	if err := refuseInternal(name, "it cannot be deleted"); err != nil {
		return err
	}
	d.storeMu.Lock()
	defer d.storeMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	delete(d.topics, name)
	if err := d.saveTopicsLocked(); err != nil {
		d.topics[name] = t
		return err
	}
	var errs []error
	var renamed []string
	for _, l := range t.partitions {
		l.local.deleted.Store(true)
		l.notify.wake()
		errs = append(errs, l.RemoveDeleted(true), l.close())
		to := filepath.Join(d.path, deletedDirName(l.tp.Topic, l.tp.Partition, t.id))
		if err := d.fsys.Rename(l.local.dir, to); err != nil {
			errs = append(errs, err)
			continue
		}
		renamed = append(renamed, to)
	}
	errs = append(errs, d.fsys.SyncDir(d.path))
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		for _, dir := range renamed {
			if err := d.fsys.RemoveAll(dir); err != nil {
				d.logger.Warn("removing a deleted topic's directory failed; retried at the next Open", "dir", dir, "err", err)
			}
		}
	}()
	d.logger.Info("deleted topic", "topic", name)
	return errors.Join(errs...)
}

// refuseInternal is ErrInternalTopic, saying why, for an internal topic.
func refuseInternal(name, why string) error {
	if IsInternalTopic(name) {
		return fmt.Errorf("%w: %s is internal: %s", ErrInternalTopic, name, why)
	}
	return nil
}

// deletedDirName is Kafka's name for a partition directory awaiting
// deletion: <topic>-<partition>.<uuid without dashes>-delete, with the topic
// cut so that the name stays within 255 characters.
func deletedDirName(topicName string, partition int32, id checkpoint.TopicID) string {
	suffix := fmt.Sprintf("-%d.%x-delete", partition, id[:])
	if len(topicName)+len(suffix) > 255 {
		topicName = topicName[:255-len(suffix)]
	}
	return topicName + suffix
}
