package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logdir"
	"github.com/kafkalite/kafkalite/segment"
)

// Files of a log directory's root and of a partition directory (see the
// directory tree in the log/logdir package doc).
const (
	metaPropertiesFile    = "meta.properties"
	cleanShutdownFile     = ".kafka_cleanshutdown"
	leaderEpochFile       = "leader-epoch-checkpoint"
	partitionMetadataFile = "partition.metadata"
)

// offsetCheckpoints are the log directory's offset checkpoint files, in the
// order they are printed.
var offsetCheckpoints = []string{
	"recovery-point-offset-checkpoint",
	"log-start-offset-checkpoint",
	"replication-offset-checkpoint",
	"cleaner-offset-checkpoint",
}

// logDirFiles are the other files a log directory's root may hold that are
// not dumped: the lock, and kafkalite's own records.
var logDirFiles = []string{".lock", "kafkalite-topics.json", "kafkalite-producer-ids", "kafkalite-group-configs.json", "kafkalite-scram-credentials.json", "kafkalite-client-quotas.json"}

// partitionDir is one partition directory to dump.
type partitionDir struct {
	dir       string
	topic     string
	partition int32
	// only, if set, is the one file of dir to dump.
	only string
}

// isLogDir reports whether dir is a log directory (it has meta.properties,
// or a subdirectory named like a partition) rather than a partition directory.
func isLogDir(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, metaPropertiesFile)); err == nil {
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if _, err := log.ParsePartitionDir(e.Name()); e.IsDir() && err == nil {
			return true, nil
		}
	}
	return false, nil
}

// partitionFor names the partition in dir: from the directory's name, or from
// the -topic and -partition flags, which take precedence.
func (d *dumper) partitionFor(dir string) partitionDir {
	p := partitionDir{dir: dir, partition: -1}
	if pd, err := log.ParsePartitionDir(filepath.Base(dir)); err == nil {
		p.topic, p.partition = pd.Topic, pd.Partition
	}
	if d.opts.topic != "" {
		p.topic = d.opts.topic
	}
	if d.opts.partition >= 0 {
		p.partition = int32(d.opts.partition)
	}
	return p
}

// dumpLogDir dumps a log directory: its own files, then every live partition
// directory in topic and partition order (only those -topic and -partition
// select).
func (d *dumper) dumpLogDir(dir string) error {
	d.dumpMetaProperties(filepath.Join(dir, metaPropertiesFile))
	d.dumpCleanShutdown(dir)
	for _, name := range offsetCheckpoints {
		d.dumpOffsets(filepath.Join(dir, name))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var parts []partitionDir
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			if e.Name() != metaPropertiesFile && e.Name() != cleanShutdownFile &&
				!slices.Contains(offsetCheckpoints, e.Name()) && !slices.Contains(logDirFiles, e.Name()) {
				d.ignore(path, " (not a log directory file)")
			}
			continue
		}
		pd, err := log.ParsePartitionDir(e.Name())
		switch {
		case err != nil:
			d.ignore(path, " (not a partition directory)")
			continue
		case pd.Kind != log.LivePartitionDir:
			d.ignore(path, fmt.Sprintf(" (a %s directory)", pd.Kind))
			continue
		case d.opts.topic != "" && pd.Topic != d.opts.topic,
			d.opts.partition >= 0 && pd.Partition != int32(d.opts.partition):
			continue
		}
		parts = append(parts, partitionDir{dir: path, topic: pd.Topic, partition: pd.Partition})
	}
	slices.SortFunc(parts, func(a, b partitionDir) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	var errs []error
	for _, p := range parts {
		errs = append(errs, d.dumpPartition(p))
	}
	d.dumpRemoteSegments(dir)
	return errors.Join(errs...)
}

// dumpMetaProperties prints meta.properties.
func (d *dumper) dumpMetaProperties(path string) {
	mp, err := logdir.ReadMetaProperties(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	d.printf("Dumping %s\n", path)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	d.printf("version: %d cluster.id: %s node.id: %d directory.id: %s\n", mp.Version, mp.ClusterID, mp.NodeID, mp.DirectoryID)
}

// dumpCleanShutdown prints the clean-shutdown marker, if there is one.
func (d *dumper) dumpCleanShutdown(dir string) {
	path := filepath.Join(dir, cleanShutdownFile)
	if _, err := os.Stat(path); err != nil {
		return
	}
	d.printf("Dumping %s\n", path)
	_, epoch, err := logdir.ReadCleanShutdown(dir)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	d.printf("brokerEpoch: %d\n", epoch)
}

// dumpOffsets prints an offset checkpoint file, sorted by partition.
func (d *dumper) dumpOffsets(path string) {
	if _, err := os.Stat(path); err != nil {
		return
	}
	d.printf("Dumping %s\n", path)
	offsets, err := logdir.ReadOffsetCheckpoint(path)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	tps := make([]log.TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b log.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for _, tp := range tps {
		d.printf("topic: %s partition: %d offset: %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
}

// fileProblem reports a file that cannot be read or parsed: a -verify
// problem; otherwise a line of the text dump and, as for a path that cannot
// be read, a line on stderr and exit status 1 (kafka-dump-log fails on a
// file it cannot read).
func (d *dumper) fileProblem(path string, err error) {
	if !strings.Contains(err.Error(), path) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	if d.opts.verify {
		d.problemf("%v", err)
		return
	}
	d.printf("error: %v\n", err)
	d.fail(err)
}

// partitionFiles lists a partition directory's segments (base offsets of its
// .log files, ascending) and snapshots, and the names of files that are none
// of Kafka's.
type partitionFiles struct {
	segments  []int64
	snapshots []int64
	has       map[string]bool
	unknown   []string
}

// listPartition reads a partition directory's names.
func listPartition(dir string) (partitionFiles, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return partitionFiles{}, err
	}
	pf := partitionFiles{has: make(map[string]bool)}
	for _, e := range entries {
		name := e.Name()
		pf.has[name] = true
		if base, suffix, err := segment.ParseFileName(name); err == nil {
			switch suffix {
			case segment.LogSuffix:
				pf.segments = append(pf.segments, base)
			case segment.IndexSuffix, segment.TimeIndexSuffix, segment.TxnIndexSuffix:
			case logdir.ProducerSnapshotSuffix:
				pf.snapshots = append(pf.snapshots, base)
			default:
				pf.unknown = append(pf.unknown, name)
			}
			continue
		}
		if name != leaderEpochFile && name != partitionMetadataFile {
			pf.unknown = append(pf.unknown, name)
		}
	}
	slices.Sort(pf.segments)
	slices.Sort(pf.snapshots)
	return pf, nil
}

// dumpLeaderEpochs prints leader-epoch-checkpoint and returns its entries.
func (d *dumper) dumpLeaderEpochs(dir string) []logdir.EpochEntry {
	path := filepath.Join(dir, leaderEpochFile)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	d.printf("Dumping %s\n", path)
	entries, err := logdir.ReadLeaderEpochCheckpoint(path)
	if err != nil {
		d.fileProblem(path, err)
		return nil
	}
	for _, e := range entries {
		d.printf("epoch: %d startOffset: %d\n", e.Epoch, e.StartOffset)
	}
	return entries
}

// dumpPartitionMetadata prints partition.metadata.
func (d *dumper) dumpPartitionMetadata(dir string) {
	path := filepath.Join(dir, partitionMetadataFile)
	if _, err := os.Stat(path); err != nil {
		return
	}
	d.printf("Dumping %s\n", path)
	id, err := logdir.ReadPartitionMetadata(path)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	d.printf("version: 0 topic_id: %s\n", id)
}

// dumpSnapshot prints a producer-state snapshot as kafka-dump-log does.
func (d *dumper) dumpSnapshot(path string) {
	d.printf("Dumping %s\n", path)
	entries, err := logdir.ReadProducerSnapshot(path)
	if err != nil {
		d.fileProblem(path, err)
		return
	}
	slices.SortFunc(entries, func(a, b logdir.ProducerSnapshotEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	for _, e := range entries {
		d.printf("producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %d lastTimestamp: %d",
			e.ProducerID, e.ProducerEpoch, e.CoordinatorEpoch, e.CurrentTxnFirstOffset, e.Timestamp)
		if e.LastOffset >= 0 {
			first := int64(e.LastSequence) - int64(e.OffsetDelta)
			if first < 0 {
				first += 1 << 31 // sequences wrap past MaxInt32 to 0
			}
			d.printf(" firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				first, e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp)
		}
		d.printf("\n")
	}
}
