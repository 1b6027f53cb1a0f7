package log

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/segment"
)

// lockFile is the log directory's lock file, as Kafka names it.
const lockFile = ".lock"

// Dir is an open log directory: Kafka's LogManager, and the broker for
// everything built on kafkalite. It holds the directory's lock, its topics
// and their partitions, the checkpoints, and the background work (retention,
// scheduled flushes, checkpointing, removal of deleted files) that a broker
// runs. One Dir per directory per process: a second [Open] of the same
// directory fails with [ErrDirLocked].
//
// A Dir is safe for concurrent use.
type Dir struct {
	path   string
	fsys   vfs.FS
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	lock   io.Closer
	meta   checkpoint.MetaProperties

	lockCreated bool // Open made the lock file; a failed Open removes it

	// storeMu serialises the changes of the topic store, each from its
	// decision to its publication in topics, so that the store is written
	// in the order of the changes; taken before mu.
	storeMu sync.Mutex
	mu      sync.RWMutex // protects topics, creating and closed
	topics  map[string]*topic
	// creating holds the names of the topics being created (reserved,
	// not yet in topics); nil until the first creation.
	creating map[string]bool
	closed   bool
	// building counts the topic creations and AddPartitions building
	// partitions without mu; Close waits for them.
	building sync.WaitGroup

	svcMu    sync.Mutex // protects services; taken before mu, never inside it
	services []namedService

	stop     chan struct{}
	bg       sync.WaitGroup
	changed  dataNotifier // woken at every append anywhere
	recovery RecoveryStats
	ckptMu   sync.Mutex // serialises checkpoint writes

	pidMu sync.Mutex // protects pids; taken before a Log's mu
	pids  producerIDs

	cleaner cleanerState

	tier *tierManager // tiered storage; nil without remote.log.storage.system.enable

	groupConfigs  *groupConfigs     // the groups' configuration overrides
	brokerConfigs *brokerConfigs    // the dynamic broker settings
	scram         *scramCredentials // the users' SCRAM credentials
	quotas        *clientQuotas     // the users' and client ids' quotas
}

type topic struct {
	name string
	id   checkpoint.TopicID
	// changeMu serialises the changes of this topic (AddPartitions,
	// AlterTopicConfig, DeleteTopic), which an AddPartitions holds while
	// it builds partitions; taken before Dir.storeMu.
	changeMu   sync.Mutex
	overrides  map[string]string // properties set for this topic; Dir.mu
	partitions []*Log            // Dir.mu
}

// RecoveryStats report what opening the directory did.
type RecoveryStats struct {
	// Clean is true when Kafka's clean-shutdown marker was found and no
	// segment needed a scan.
	Clean bool
	// Partitions is the number of partitions loaded; PartitionsLeft how
	// many were still loading when the stats were taken.
	Partitions, PartitionsLeft int
	// SegmentsRecovered, BytesScanned and BytesTruncated add up the
	// recovery scans.
	SegmentsRecovered int
	BytesScanned      int64
	BytesTruncated    int64
	// CorruptLogStartOffsets counts the log-start-offset-checkpoint
	// entries that were ignored because they lay past their partition's
	// log end.
	CorruptLogStartOffsets int
	// Duration is how long opening took.
	Duration time.Duration
}

// Open opens the log directory at path, creating it if it does not exist,
// and loads every topic in it. It takes the directory's lock, writes or
// checks meta.properties (the node id must match), and recovers partitions
// in parallel (num.recovery.threads.per.data.dir): after a clean shutdown
// (Kafka's .kafka_cleanshutdown marker) nothing is scanned; otherwise each
// partition's segments from its recovery point on are validated and their
// torn or corrupt tails truncated. Open then starts the Dir's background
// goroutines; Close stops them.
//
// A directory that exists must be kafkalite's (it holds the topic store,
// kafkalite-topics.json) or hold nothing but the root files Kafka and
// kafkalite write; anything else is refused with [ErrNotLogDir] before
// Open writes a byte, unless Config.AdoptBrokerDirectory asks to adopt a
// Kafka broker's directory (its topics then get the default
// configuration; see that field for what is adopted).
//
// If ctx ends or a partition fails to load, Open stops, releases what it
// opened and returns that one error (a partition's, naming it, or ctx's).
// A failed Open creates no partition directory and saves no topic store;
// a directory that was shut down cleanly keeps its clean-shutdown marker.
func Open(ctx context.Context, path string, cfg Config) (*Dir, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Dir{path: filepath.Clean(path), fsys: cfg.fs(), cfg: cfg, logger: cfg.logger(), now: cfg.clock(),
		topics: map[string]*topic{}, stop: make(chan struct{})}
	// A new directory's entry in its parent is durable only once the parent
	// is synced.
	if err := errors.Join(d.fsys.MkdirAll(d.path), d.fsys.SyncDir(filepath.Dir(d.path))); err != nil {
		return nil, err
	}
	if err := d.checkFormatted(); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(d.path, lockFile)
	_, statErr := d.fsys.Stat(lockPath)
	d.lockCreated = isNotExist(statErr)
	lock, err := d.fsys.Lock(lockPath)
	if errors.Is(err, vfs.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrDirLocked, d.path)
	}
	if err != nil {
		return nil, err
	}
	d.lock = lock
	if err := d.load(ctx); err != nil {
		return nil, d.abandon(err)
	}
	if err := d.startTier(ctx); err != nil {
		return nil, d.abandon(err)
	}
	d.recovery.Duration = time.Since(start)
	d.logger.Info("opened log directory", "dir", d.path, "topics", len(d.topics), "partitions", d.recovery.Partitions,
		"clean", d.recovery.Clean, "segmentsRecovered", d.recovery.SegmentsRecovered, "bytesTruncated", d.recovery.BytesTruncated,
		"duration", d.recovery.Duration)
	d.startBackground()
	return d, nil
}

// abandon undoes a failed Open: it closes the partitions loaded so far,
// puts back the clean-shutdown marker that load took if they all closed
// cleanly (the partitions not loaded were not touched, the loaded ones are
// flushed), and releases the lock. It returns err joined with what failed.
func (d *Dir) abandon(err error) error {
	closeErr := d.closeLogs()
	if d.recovery.Clean && closeErr == nil {
		closeErr = checkpoint.WriteCleanShutdown(d.fsys, d.path, 0)
	}
	if d.lockCreated {
		// Removed while still held, so that no other Open can take the
		// file in between; where an open file cannot be removed (Windows)
		// it stays, as Kafka's does.
		_ = d.fsys.Remove(filepath.Join(d.path, lockFile))
	}
	return errors.Join(err, closeErr, d.lock.Close())
}

// checkFormatted refuses, before Open writes anything, a directory that is
// neither kafkalite's (it has the topic store) nor empty of all but root
// files, unless the Config adopts a broker's directory, which must then be
// formatted (meta.properties).
func (d *Dir) checkFormatted() error {
	entries, err := d.fsys.List(d.path)
	if err != nil {
		return err
	}
	var foreign []string
	haveMeta := false
	for _, e := range entries {
		switch {
		case e.Name == topicStoreFile:
			return nil
		case e.Name == checkpoint.MetaPropertiesFile:
			haveMeta = true
		case !e.IsDir && (rootFiles[e.Name] || strings.HasSuffix(e.Name, ".tmp")):
		default:
			foreign = append(foreign, e.Name)
		}
	}
	switch {
	case len(foreign) == 0:
		return nil
	case !d.cfg.AdoptBrokerDirectory:
		return fmt.Errorf("%w: %s holds %s but no %s; set Config.AdoptBrokerDirectory to adopt a Kafka broker's log directory",
			ErrNotLogDir, d.path, someNames(foreign), topicStoreFile)
	case !haveMeta:
		return fmt.Errorf("%w: %s has no %s: it is not a formatted Kafka log directory (kafka-storage format writes one)",
			ErrNotLogDir, d.path, checkpoint.MetaPropertiesFile)
	}
	return nil
}

// someNames lists up to three names of many, for an error.
func someNames(names []string) string {
	sort.Strings(names)
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// Path returns the directory's path.
func (d *Dir) Path() string { return d.path }

// ClusterID returns the cluster.id of meta.properties.
func (d *Dir) ClusterID() string { return d.meta.ClusterID }

// DirectoryID returns the directory.id of meta.properties.
func (d *Dir) DirectoryID() string { return d.meta.DirectoryID }

// NodeID returns the node.id of meta.properties.
func (d *Dir) NodeID() int32 { return d.meta.NodeID }

// Config returns the Dir's configuration: the one it was opened with
// ([Dir.StaticConfig]) with the dynamic broker settings applied
// ([Dir.AlterBrokerConfig]).
func (d *Dir) Config() Config { return d.brokerConfigs.config() }

// Recovery returns what Open did.
func (d *Dir) Recovery() RecoveryStats { return d.recovery }

// load reads meta.properties, the markers and checkpoints, and the topics.
func (d *Dir) load(ctx context.Context) error {
	if err := d.loadMeta(); err != nil {
		return err
	}
	_, err := d.fsys.Stat(filepath.Join(d.path, topicStoreFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	haveStore := err == nil
	store, err := loadTopicStore(d.fsys, d.path)
	if err != nil {
		return err
	}
	if d.groupConfigs, err = openGroupConfigs(d.fsys, d.path, d.cfg); err != nil {
		return err
	}
	if d.scram, err = openScramCredentials(d.fsys, d.path); err != nil {
		return err
	}
	if d.quotas, err = openClientQuotas(d.fsys, d.path); err != nil {
		return err
	}
	if d.brokerConfigs, err = openBrokerConfigs(d.fsys, d.path, d.cfg); err != nil {
		return err
	}
	// A store an earlier kafkalite wrote may list the KRaft metadata log,
	// which it adopted as a topic: it is not one (scanPartitionDirs).
	delete(store, metadataTopic)
	found, err := d.scanPartitionDirs()
	if err != nil {
		return err
	}
	if err := d.reconcileTopics(store, found, haveStore); err != nil {
		return err
	}
	// The marker goes only now, once the directory is known to be one
	// Open will load: as in Kafka, a crash from here on is unclean.
	clean, err := d.takeCleanShutdown()
	if err != nil {
		return err
	}
	d.recovery.Clean = clean
	recoveryPoints := d.readOffsets(checkpoint.RecoveryPointFile, &clean) // unreadable: recover as after a crash
	cp := loadCheckpoints{
		clean:          clean,
		recoveryPoints: recoveryPoints,
		startOffsets:   d.readOffsets(checkpoint.LogStartOffsetFile, nil),
		cleanerOffsets: d.readOffsets(checkpoint.CleanerOffsetFile, nil),
	}
	jobs, err := d.openTopics(store)
	if err != nil {
		return err
	}
	if err := d.loadPartitions(ctx, jobs, found, cp); err != nil {
		return err
	}
	if len(store) > 0 || !haveStore {
		// Written even when empty, so that the next Open knows which
		// partition directories are topics.
		return d.saveTopicsLocked()
	}
	return nil
}

// takeCleanShutdown reports whether the last Close left the clean-shutdown
// marker, and removes it: as in Kafka, a crash from now on is unclean. An
// unreadable marker is an unclean shutdown.
func (d *Dir) takeCleanShutdown() (bool, error) {
	clean, _, err := checkpoint.ReadCleanShutdown(d.fsys, d.path)
	if err != nil {
		d.logger.Warn("unreadable clean-shutdown marker: recovering as after a crash", "err", err)
		clean = false
	}
	if clean || err != nil {
		if err := checkpoint.RemoveCleanShutdown(d.fsys, d.path); err != nil {
			return false, err
		}
	}
	return clean, nil
}

// reconcileTopics settles the partition directories found against the
// topic store. Topics Kafka wrote (partition directories, no store) are
// adopted into store with the default configuration. With a store,
// partition directories it does not list are what a crash left of a
// CreateTopic (directories made, store not yet saved) or a DeleteTopic
// (store saved, directories not yet renamed), neither of which returned —
// or directories copied in by hand. The topic does not exist, and adopting
// it would bring it back with the default configuration; deleting it could
// lose data someone put there. As Kafka does with the replicas its
// metadata does not list, they are renamed "<topic>-<p>.<uuid>-stray" and
// left for the operator, and dropped from found.
//
// Without a store (Config.AdoptBrokerDirectory, checked by Open), only
// directories holding Kafka's partition files are partitions; the others
// are left alone. A topic whose partitions are not 0 to n-1 is refused
// ([ErrIncompleteTopic]) before anything is written.
func (d *Dir) reconcileTopics(store map[string]topicMeta, found map[string]map[int32]bool, haveStore bool) error {
	if !haveStore {
		if err := d.keepKafkaPartitions(found); err != nil {
			return err
		}
	}
	for name, parts := range found {
		if _, ok := store[name]; ok {
			continue
		}
		if haveStore {
			for p := range parts {
				if err := d.markStray(name, p); err != nil {
					return err
				}
			}
			delete(found, name)
			continue
		}
		n := int32(len(parts))
		// The internal topics get Kafka's configuration for them; other
		// topics the default (the broker's own overrides are in its
		// metadata log, which kafkalite does not read).
		meta := topicMeta{Partitions: n, Config: maps.Clone(internalTopicConfigs[name])}
		for p := range parts {
			// The topic id the broker gave it, from partition.metadata.
			if id, err := checkpoint.ReadPartitionMetadata(d.fsys, filepath.Join(d.path, PartitionDirName(name, p), checkpoint.PartitionMetadataFile)); err == nil {
				meta.ID = id.String()
				break
			}
		}
		store[name] = meta
		d.logger.Info("adopting a topic found in the directory", "topic", name, "partitions", n, "id", meta.ID)
	}
	return nil
}

// keepKafkaPartitions drops from found the directories of a directory
// being adopted that hold none of Kafka's partition files (a .log segment
// or partition.metadata), and refuses topics that are not partitions 0 to
// n-1.
func (d *Dir) keepKafkaPartitions(found map[string]map[int32]bool) error {
	var incomplete []string
	for name, parts := range found {
		for p := range parts {
			dir := PartitionDirName(name, p)
			ok, err := d.holdsPartitionFiles(filepath.Join(d.path, dir))
			if err != nil {
				return err
			}
			if !ok {
				d.logger.Warn("leaving alone a directory named like a partition that holds no partition files", "name", dir)
				delete(parts, p)
			}
		}
		if len(parts) == 0 {
			delete(found, name)
			continue
		}
		n := int32(0)
		for p := range parts {
			n = max(n, p+1)
		}
		if int(n) != len(parts) {
			held := slices.Sorted(maps.Keys(parts))
			incomplete = append(incomplete, fmt.Sprintf("%s (partitions %s of at least %d)", name, partitionList(held), n))
		}
	}
	if len(incomplete) > 0 {
		return fmt.Errorf("%w: %s in %s; kafkalite adopts whole topics only (move the others out, or copy the cluster's topics with the migration tool)",
			ErrIncompleteTopic, someNames(incomplete), d.path)
	}
	return nil
}

// holdsPartitionFiles reports whether dir holds a file only a partition
// has: a segment's .log or partition.metadata.
func (d *Dir) holdsPartitionFiles(dir string) (bool, error) {
	entries, err := d.fsys.List(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		if e.Name == checkpoint.PartitionMetadataFile {
			return true, nil
		}
		if _, suffix, err := segment.ParseFileName(e.Name); err == nil && suffix == ".log" {
			return true, nil
		}
	}
	return false, nil
}

// partitionList writes sorted partition numbers for an error, eliding a
// long list.
func partitionList(ps []int32) string {
	const most = 5
	parts := make([]string, 0, most+1)
	for i, p := range ps {
		if i == most {
			parts = append(parts, fmt.Sprintf("... %d more", len(ps)-most))
			break
		}
		parts = append(parts, strconv.Itoa(int(p)))
	}
	return strings.Join(parts, ", ")
}

// loadJob is one partition for loadPartitions.
type loadJob struct {
	t *topic
	p int32
}

// openTopics makes the Dir's topics from the store, their partitions not
// yet loaded, and returns the partitions to load.
func (d *Dir) openTopics(store map[string]topicMeta) ([]loadJob, error) {
	var jobs []loadJob
	for name, meta := range store {
		if len(meta.Config) == 0 && internalTopicConfigs[name] != nil {
			// Adopted by a kafkalite that gave internal topics the
			// default configuration (delete after 7 days): theirs.
			meta.Config = maps.Clone(internalTopicConfigs[name])
			d.logger.Info("giving an internal topic Kafka's configuration", "topic", name)
		}
		t := &topic{name: name, overrides: meta.Config, partitions: make([]*Log, meta.Partitions)}
		var err error
		if meta.ID != "" {
			if t.id, err = checkpoint.ParseTopicID(meta.ID); err != nil {
				return nil, fmt.Errorf("%w: topic %s: %v", ErrCorruptTopicStore, name, err)
			}
		} else if t.id, err = checkpoint.NewTopicID(rand.Reader); err != nil {
			return nil, err
		}
		if _, err := d.topicConfig(t.overrides); err != nil {
			return nil, fmt.Errorf("topic %s: %w", name, err)
		}
		d.topics[name] = t
		for p := range meta.Partitions {
			jobs = append(jobs, loadJob{t, p})
		}
	}
	return jobs, nil
}

// loadCheckpoints are the root checkpoints partitions load from.
type loadCheckpoints struct {
	clean                                        bool
	recoveryPoints, startOffsets, cleanerOffsets map[TopicPartition]int64
}

// loadPartitions loads (recovering where needed) the partitions of jobs on
// num.recovery.threads.per.data.dir goroutines, which it waits for; a
// partition not in found is created.
func (d *Dir) loadPartitions(ctx context.Context, jobs []loadJob, found map[string]map[int32]bool, cp loadCheckpoints) error {
	d.recovery.Partitions = len(jobs)
	var left atomic.Int64
	left.Store(int64(len(jobs)))
	// The first failure stops the loading: the partitions in flight finish,
	// no other starts, and Open returns that one error.
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		errMu    sync.Mutex
		firstErr error
		others   int
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstErr == nil {
			firstErr = err
			stop()
		} else {
			others++
		}
	}
	work := make(chan loadJob)
	var wg sync.WaitGroup
	var statsMu sync.Mutex
	for range max(d.cfg.RecoveryThreads, 1) {
		wg.Go(func() {
			for j := range work {
				if lctx.Err() != nil {
					continue
				}
				tp := TopicPartition{Topic: j.t.name, Partition: j.p}
				cleanerOffset, ok := cp.cleanerOffsets[tp]
				if !ok {
					cleanerOffset = -1
				}
				cfg, _ := d.topicConfig(j.t.overrides)
				l, st, err := loadLog(loadOptions{topic: j.t.name, partition: j.p, dir: filepath.Join(d.path, PartitionDirName(j.t.name, j.p)),
					fsys: d.fsys, config: cfg, logger: d.logger, now: d.now, clean: cp.clean, recoveryPoint: cp.recoveryPoints[tp],
					logStartOffset: cp.startOffsets[tp], topicID: j.t.id, create: !found[j.t.name][j.p], onAppend: d.changed.wake, tier: d.tiering,
					producerIDExpiration: d.cfg.ProducerIDExpiration, cleanerOffset: cleanerOffset,
					overlapBytes: d.cfg.OverlapAppendBytes})
				if err != nil {
					fail(fmt.Errorf("loading %s: %w", tp, err))
					continue
				}
				j.t.partitions[j.p] = l
				statsMu.Lock()
				d.recovery.SegmentsRecovered += st.recovered
				d.recovery.BytesScanned += st.bytesScanned
				d.recovery.BytesTruncated += st.bytesTruncated
				if st.corruptLogStart {
					d.recovery.CorruptLogStartOffsets++
				}
				statsMu.Unlock()
				if n := left.Add(-1); st.recovered > 0 || n%100 == 0 {
					d.logger.Info("recovery progress", "partition", tp, "partitionsLeft", n, "segmentsRecovered", st.recovered,
						"bytesScanned", st.bytesScanned, "bytesTruncated", st.bytesTruncated)
				}
			}
		})
	}
dispatch:
	for _, j := range jobs {
		select {
		case work <- j:
		case <-lctx.Done():
			break dispatch
		}
	}
	close(work)
	wg.Wait()
	switch {
	case firstErr != nil && others > 0:
		return fmt.Errorf("%w (and %d more partitions failed to load)", firstErr, others)
	case firstErr != nil:
		return firstErr
	}
	return ctx.Err()
}

// readOffsets reads a checkpoint file; a missing or unreadable one counts as
// empty (recovery then scans from the start), and clean is cleared for an
// unreadable recovery-point file.
func (d *Dir) readOffsets(name string, clean *bool) map[TopicPartition]int64 {
	m, err := checkpoint.ReadOffsets(d.fsys, filepath.Join(d.path, name))
	if err != nil {
		d.logger.Warn("unreadable checkpoint file: rebuilding from the segments", "file", name, "err", err)
		if clean != nil {
			*clean = false
		}
		return map[TopicPartition]int64{}
	}
	return fromCheckpointOffsets(m)
}

// loadMeta reads meta.properties, or writes a new one with fresh cluster and
// directory ids. An existing file must name this Dir's node id, as a Kafka
// broker refuses a directory of another node ([ErrInvalidConfig]); one that
// does not parse or names no node is [ErrCorruptMetaProperties].
func (d *Dir) loadMeta() error {
	path := filepath.Join(d.path, checkpoint.MetaPropertiesFile)
	mp, err := checkpoint.ReadMetaProperties(d.fsys, path)
	if errors.Is(err, checkpoint.ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorruptMetaProperties, err)
	}
	if err == nil && mp.NodeID < 0 {
		// Java's properties format reads nearly any bytes, so garbage
		// parses, as a version 0 file naming nothing. Every file Kafka
		// or kafkalite writes names its node.
		return fmt.Errorf("%w: %s names no node (neither node.id nor broker.id)", ErrCorruptMetaProperties, path)
	}
	if err == nil {
		if mp.NodeID != d.cfg.NodeID {
			return fmt.Errorf("%w: %s has node.id %d, this Dir is node %d", ErrInvalidConfig, path, mp.NodeID, d.cfg.NodeID)
		}
		d.meta = mp
		return nil
	}
	if !isNotExist(err) {
		return err
	}
	cluster, err := checkpoint.NewTopicID(rand.Reader)
	if err != nil {
		return err
	}
	dirID, err := checkpoint.NewTopicID(rand.Reader)
	if err != nil {
		return err
	}
	d.meta = checkpoint.MetaProperties{Version: 1, ClusterID: cluster.String(), NodeID: d.cfg.NodeID, DirectoryID: dirID.String()}
	return checkpoint.WriteMetaProperties(d.fsys, path, d.meta)
}

// Directories of a broker's log directory that are not partitions of
// topics the LogManager loads, and that Kafka's LogManager.loadLogs skips
// without a word: the KRaft metadata log (__cluster_metadata-0, kept by the
// raft client, with its quorum-state and snapshot files), and tiered
// storage's index cache. kafkalite leaves them alone likewise.
const (
	metadataTopic       = "__cluster_metadata"
	remoteIndexCacheDir = "remote-log-index-cache"
)

// Files in the log directory root that are not partitions.
var rootFiles = map[string]bool{
	lockFile: true, checkpoint.MetaPropertiesFile: true, checkpoint.CleanShutdownFile: true,
	checkpoint.RecoveryPointFile: true, checkpoint.LogStartOffsetFile: true, checkpoint.ReplicationOffsetFile: true,
	checkpoint.CleanerOffsetFile: true, topicStoreFile: true, checkpoint.ProducerIDsFile: true,
	groupConfigStoreFile:  true,
	"kafkalite-acls.json": true, // package log/acl's ACL store, a Dir service
	// The wire server's replica assignments of its virtual brokers.
	"kafkalite-replica-assignments.json": true,
	brokerConfigStoreFile:                true,
	scramStoreFile:                       true,
	quotaStoreFile:                       true,
}

// markStray renames a partition directory the topic store does not list to
// Kafka's stray name, durably.
func (d *Dir) markStray(topic string, partition int32) error {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	from := filepath.Join(d.path, PartitionDirName(topic, partition))
	name := PartitionDir{Topic: topic, Partition: partition, Kind: StrayPartitionDir, UniqueID: fmt.Sprintf("%x", id)}.String()
	if len(name) > 255 {
		topic = topic[:len(topic)-(len(name)-255)]
		name = PartitionDir{Topic: topic, Partition: partition, Kind: StrayPartitionDir, UniqueID: fmt.Sprintf("%x", id)}.String()
	}
	to := filepath.Join(d.path, name)
	d.logger.Warn("renaming a partition directory the topic store does not list (an interrupted topic creation or deletion, or a copy) as a stray", "dir", from, "to", to)
	if err := d.fsys.Rename(from, to); err != nil {
		return err
	}
	return d.fsys.SyncDir(d.path)
}

// scanPartitionDirs lists the partition directories by topic, removes
// leftovers of topic deletions and temp files, and warns about the rest.
func (d *Dir) scanPartitionDirs() (map[string]map[int32]bool, error) {
	entries, err := d.fsys.List(d.path)
	if err != nil {
		return nil, err
	}
	found := map[string]map[int32]bool{}
	for _, e := range entries {
		full := filepath.Join(d.path, e.Name)
		if !e.IsDir {
			if strings.HasSuffix(e.Name, ".tmp") {
				if err := d.fsys.Remove(full); err != nil {
					return nil, err
				}
			} else if !rootFiles[e.Name] {
				d.logger.Warn("ignoring a stray file in the log directory", "name", e.Name)
			}
			continue
		}
		if e.Name == remoteIndexCacheDir {
			continue
		}
		topic, p, err := ParsePartitionDirName(e.Name)
		switch {
		case err == nil && topic == metadataTopic:
			// The KRaft metadata log: the raft client's, not a topic.
		case errors.Is(err, ErrDeletedPartitionDir):
			// A topic deletion that did not finish: finish it.
			if err := d.fsys.RemoveAll(full); err != nil {
				return nil, err
			}
		case err != nil:
			d.logger.Warn("ignoring a directory that is not a partition", "name", e.Name, "reason", err)
		default:
			if found[topic] == nil {
				found[topic] = map[int32]bool{}
			}
			found[topic][p] = true
		}
	}
	return found, nil
}

// topicConfig is the directory's default topic configuration with a topic's
// overrides applied.
func (d *Dir) topicConfig(overrides map[string]string) (TopicConfig, error) {
	return effectiveTopicConfig(d.brokerConfigs.config(), overrides)
}

// saveTopicsLocked writes the topic store. REQUIRES d.storeMu and d.mu
// held (or Open).
func (d *Dir) saveTopicsLocked() error {
	return saveTopicStore(d.fsys, d.path, d.topicMetasLocked())
}

// topicMetasLocked returns the topic store's entries of the topics.
// REQUIRES d.mu held, shared at least (or Open).
func (d *Dir) topicMetasLocked() map[string]topicMeta {
	m := make(map[string]topicMeta, len(d.topics))
	for name, t := range d.topics {
		m[name] = t.meta()
	}
	return m
}

// Service is a broker-side service attached to a Dir (the group and
// transaction coordinators, the cleaner): it lives as long as the Dir and is
// closed by Dir.Close, after the background work stops and before the logs
// close, in the reverse order of attachment.
type Service interface {
	Close() error
}

type namedService struct {
	name string
	svc  Service
}

// Service returns the service attached under name, creating it with create
// on first use, so that one instance per Dir serves every client.
func (d *Dir) Service(name string, create func(*Dir) (Service, error)) (Service, error) {
	// svcMu, not mu: creating a service may create topics, which takes mu.
	d.svcMu.Lock()
	defer d.svcMu.Unlock()
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	for _, s := range d.services {
		if s.name == name {
			return s.svc, nil
		}
	}
	svc, err := create(d)
	if err != nil {
		return nil, err
	}
	d.services = append(d.services, namedService{name, svc})
	return svc, nil
}

// Close stops the background goroutines, closes the attached services in
// reverse order, flushes every partition, writes the checkpoints and Kafka's
// clean-shutdown marker, and releases the lock. Errors are joined; a second
// Close returns nil.
func (d *Dir) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	d.svcMu.Lock()
	services := d.services
	d.services = nil
	d.svcMu.Unlock()

	close(d.stop)
	d.stopCleaner()
	d.bg.Wait()
	d.building.Wait()
	if d.tier != nil {
		d.tier.cache.close()
	}
	var errs []error
	for i := len(services) - 1; i >= 0; i-- {
		if err := services[i].svc.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", services[i].name, err))
		}
	}
	logsErr := d.closeLogs()
	errs = append(errs, logsErr)
	errs = append(errs, d.writeCheckpoints(true))
	if logsErr == nil && errors.Join(errs...) == nil {
		// Only a Dir whose every partition flushed and closed cleanly may
		// tell the next Open to skip recovery.
		errs = append(errs, checkpoint.WriteCleanShutdown(d.fsys, d.path, 0))
	}
	errs = append(errs, d.lock.Close())
	return errors.Join(errs...)
}

func (d *Dir) closeLogs() error {
	var errs []error
	for _, t := range d.topics {
		for _, l := range t.partitions {
			if l != nil {
				errs = append(errs, l.RemoveDeleted(true), l.close())
			}
		}
	}
	return errors.Join(errs...)
}

// allLogs returns every partition, sorted by topic and partition.
func (d *Dir) allLogs() []*Log {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []*Log
	for _, t := range d.topics {
		for _, l := range t.partitions {
			if l != nil {
				out = append(out, l)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].tp.Topic != out[j].tp.Topic {
			return out[i].tp.Topic < out[j].tp.Topic
		}
		return out[i].tp.Partition < out[j].tp.Partition
	})
	return out
}

// writeCheckpoints writes recovery-point-offset-checkpoint,
// log-start-offset-checkpoint and replication-offset-checkpoint in Kafka's
// format. closing says every log was flushed and closed.
func (d *Dir) writeCheckpoints(closing bool) error {
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	rp := map[TopicPartition]int64{}
	lso := map[TopicPartition]int64{}
	hw := map[TopicPartition]int64{}
	for _, l := range d.allLogs() {
		if l.local.deleted.Load() {
			continue
		}
		tp := l.tp
		rp[tp] = l.RecoveryPoint()
		hw[tp] = l.HighWatermark()
		// Kafka records a start offset only when it is not the first
		// segment's base: above it, or below it where the segments before
		// are in remote storage.
		if segs := l.local.segs(); len(segs) > 0 && l.LogStartOffset() != segs[0].BaseOffset() {
			lso[tp] = l.LogStartOffset()
		}
	}
	var cleanerErr error
	if co := d.cleanerOffsets(); len(co) > 0 {
		cleanerErr = checkpoint.WriteOffsets(d.fsys, filepath.Join(d.path, checkpoint.CleanerOffsetFile), checkpointOffsets(co))
	}
	return errors.Join(cleanerErr,
		checkpoint.WriteOffsets(d.fsys, filepath.Join(d.path, checkpoint.RecoveryPointFile), checkpointOffsets(rp)),
		checkpoint.WriteOffsets(d.fsys, filepath.Join(d.path, checkpoint.LogStartOffsetFile), checkpointOffsets(lso)),
		checkpoint.WriteOffsets(d.fsys, filepath.Join(d.path, checkpoint.ReplicationOffsetFile), checkpointOffsets(hw)),
	)
}

// Changed returns a channel closed at the next append to any partition of
// the Dir (or when a partition is closed or deleted). A consumer reading
// several partitions waits on it instead of polling; it re-checks its
// partitions after each wake-up.
func (d *Dir) Changed() <-chan struct{} { return d.changed.next() }

// InternalTopic returns the partitions of an internal topic, creating it
// with partitions partitions and the given properties (nil: Kafka's
// configuration of that internal topic) if it does not exist.
// It is for kafkalite's coordinators; code outside this module cannot call
// it.
func (d *Dir) InternalTopic(_ access.Internal, ctx context.Context, name string, partitions int32, props map[string]string) ([]*Log, error) {
	if !IsInternalTopic(name) {
		return nil, fmt.Errorf("%w: %s is not an internal topic", ErrInvalidConfig, name)
	}
	if props == nil {
		props = internalTopicConfigs[name]
	}
	if _, _, err := d.createTopic(ctx, name, partitions, props); err != nil && !errors.Is(err, ErrTopicExists) {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	t, ok := d.topics[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTopicOrPartition, name)
	}
	return append([]*Log(nil), t.partitions...), nil
}
