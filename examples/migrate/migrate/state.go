package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// stateVersion is the version of state.json this code writes and reads.
const stateVersion = 1

// Directions, as state.json names them.
const (
	toCluster   = "to-cluster"
	fromCluster = "from-cluster"
)

// state is what a migration keeps between runs, in its state directory:
//
//	<state>/state.json            this struct, replaced atomically (write, fsync, rename)
//	<state>/offsets/<topic>-<p>.map  the partition's closed offset runs, "src tgt n" a line
//
// A map file only grows; state.json says how many of its bytes count
// (MapBytes), so a crash between appending runs and replacing state.json
// leaves extra lines that the next run truncates away.
type state struct {
	Version   int    `json:"version"`
	Direction string `json:"direction"`
	// ClusterID is the Kafka cluster's id, DirClusterID the kafkalite
	// directory's (meta.properties): a state is used only with both.
	ClusterID    string                     `json:"cluster_id"`
	DirClusterID string                     `json:"dir_cluster_id"`
	Partitions   map[string]*partitionState `json:"partitions"`
	// Groups holds, per group, the target offsets the migration committed,
	// so that a later run leaves alone a group that moved on since.
	Groups map[string]map[string]int64 `json:"groups,omitempty"`
	// Done is set when a run finished the copy and the groups.
	Done bool `json:"done"`
}

// partitionState is one partition's progress.
type partitionState struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// TgtStart is the target partition's end offset when the copy of this
	// partition began: records below it were not written by the migration.
	TgtStart int64 `json:"tgt_start"`
	// SrcStart is the source offset the copy of this partition began at.
	SrcStart int64 `json:"src_start"`
	// SrcNext is the source offset to copy from next; TgtNext the target
	// offset the next copied record gets. Both count only acknowledged
	// (target-side durable) records.
	SrcNext int64 `json:"src_next"`
	TgtNext int64 `json:"tgt_next"`
	// Open is the offset map's open run; MapBytes how much of the map
	// file holds its closed runs.
	Open     run   `json:"open"`
	MapBytes int64 `json:"map_bytes"`
	// Replica is set when the target is a kafkalite partition written by
	// replica appends: every record keeps its source offset, and the
	// target's log end offset is the resume point.
	Replica bool `json:"replica,omitempty"`
	// Records and Bytes count what was copied (keys, values and headers).
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`

	m offsetMap
	// pending, in a snapshot, are the closed runs to append to the map file.
	pending []run
}

// snapshot copies what save writes, moving the partitions' pending runs
// into the copy: the live state goes on changing while the copy is written.
// After a successful save, commitSnapshot brings the map files' new sizes
// back.
func (st *state) snapshot() *state {
	c := *st
	c.Partitions = make(map[string]*partitionState, len(st.Partitions))
	for k, ps := range st.Partitions {
		cp := *ps
		cp.Open = ps.m.open
		cp.pending = ps.m.pending
		ps.m.pending = nil
		cp.m = offsetMap{}
		c.Partitions[k] = &cp
	}
	c.Groups = make(map[string]map[string]int64, len(st.Groups))
	for g, offs := range st.Groups {
		c.Groups[g] = maps.Clone(offs)
	}
	return &c
}

func (st *state) commitSnapshot(snap *state) {
	for k, cp := range snap.Partitions {
		if ps := st.Partitions[k]; ps != nil {
			ps.MapBytes = cp.MapBytes
		}
	}
}

func tpKey(topic string, p int32) string { return topic + "-" + strconv.Itoa(int(p)) }

// stateStore reads and writes a state directory.
type stateStore struct {
	dir string
}

func (s stateStore) statePath() string         { return filepath.Join(s.dir, "state.json") }
func (s stateStore) mapPath(key string) string { return filepath.Join(s.dir, "offsets", key+".map") }

// load returns the saved state, nil if there is none.
func (s stateStore) load() (*state, error) {
	b, err := os.ReadFile(s.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrState, s.statePath(), err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("%w: %s: version %d, this migrate reads %d", ErrState, s.statePath(), st.Version, stateVersion)
	}
	if st.Partitions == nil {
		st.Partitions = map[string]*partitionState{}
	}
	for key, ps := range st.Partitions {
		if ps == nil || key != tpKey(ps.Topic, ps.Partition) || ps.SrcNext < 0 || ps.TgtNext < ps.TgtStart || ps.MapBytes < 0 {
			return nil, fmt.Errorf("%w: %s: partition %q is inconsistent", ErrState, s.statePath(), key)
		}
		closed, err := readRuns(s.mapPath(key), ps.MapBytes)
		if err != nil {
			return nil, err
		}
		ps.m = offsetMap{closed: closed, open: ps.Open}
		// The map file may hold lines a crash left past MapBytes.
		if err := os.Truncate(s.mapPath(key), ps.MapBytes); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrState, err)
		}
	}
	return &st, nil
}

// save writes a snapshot: it appends each partition's pending runs to its
// map file, fsyncs them, and then replaces state.json.
func (s stateStore) save(st *state) error {
	if err := os.MkdirAll(filepath.Join(s.dir, "offsets"), 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrState, err)
	}
	for _, key := range slices.Sorted(maps.Keys(st.Partitions)) {
		ps := st.Partitions[key]
		if len(ps.pending) == 0 {
			continue
		}
		f, err := os.OpenFile(s.mapPath(key), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrState, err)
		}
		_, err = f.Seek(ps.MapBytes, 0)
		var n int64
		if err == nil {
			n, err = writeRuns(f, ps.pending)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrState, err)
		}
		ps.MapBytes += n
		ps.pending = nil
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.statePath(), b)
}

// writeFileAtomic replaces path with b: a temporary file, fsynced, renamed
// over path, and the directory fsynced.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrState, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrState, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
