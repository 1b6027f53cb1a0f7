package checkpoint

import (
	"io"
	"maps"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// MetaPropertiesFile is the name of a log directory's identity file
// (Kafka's MetaProperties; the package doc gives its keys). Part of the
// on-disk format.
const MetaPropertiesFile = "meta.properties"

// The meta.properties versions (Kafka's MetaPropertiesVersion).
const (
	// MetaPropertiesV0 is the ZooKeeper-era layout: broker.id and
	// cluster.id both optional. A file without a version key is v0.
	MetaPropertiesV0 = 0
	// MetaPropertiesV1 is the KRaft layout: cluster.id and node.id
	// required.
	MetaPropertiesV1 = 1
)

// The keys of meta.properties (Kafka's MetaProperties constants).
const (
	propVersion     = "version"
	propClusterID   = "cluster.id"
	propNodeID      = "node.id"   // v1
	propBrokerID    = "broker.id" // v0
	propDirectoryID = "directory.id"
)

// MetaProperties is the contents of a log directory's meta.properties. A
// KRaft broker refuses a directory whose cluster.id or node.id differ from
// its own, or whose directory.id is shared with another of its directories.
type MetaProperties struct {
	// Version is [MetaPropertiesV1] for KRaft ("version"); [MetaPropertiesV0]
	// is read and written for old directories.
	Version int
	// ClusterID is the cluster's id ("cluster.id"), in practice a
	// [TopicID] string; required in v1, "" for none in v0.
	ClusterID string
	// NodeID is the node's id: "node.id" in v1, where it is required and
	// ≥ 0; "broker.id" in v0, where −1 means none.
	NodeID int32
	// DirectoryID is the log directory's id ("directory.id", since Kafka
	// 3.7), the canonical string of a [TopicID] that is not one of the 100
	// ids Kafka reserves; "" for none.
	DirectoryID string
	// Extra holds every other key of the file, kept and written back (Kafka
	// itself drops unknown keys when it rewrites the file). Nil when there
	// are none.
	Extra map[string]string
}

// NewMetaProperties returns KRaft (v1) meta.properties for a new log
// directory of node nodeID: a fresh directory.id, and clusterID, or a fresh
// cluster id if clusterID is "" (as kafka-storage random-uuid makes one).
// Ids are drawn from r with [NewTopicID]; nil r means crypto/rand.Reader.
func NewMetaProperties(clusterID string, nodeID int32, r io.Reader) (MetaProperties, error) {
	if clusterID == "" {
		id, err := NewTopicID(r)
		if err != nil {
			return MetaProperties{}, err
		}
		clusterID = id.String()
	}
	dir, err := NewTopicID(r)
	if err != nil {
		return MetaProperties{}, err
	}
	mp := MetaProperties{Version: MetaPropertiesV1, ClusterID: clusterID, NodeID: nodeID, DirectoryID: dir.String()}
	if err := mp.Validate(); err != nil {
		return MetaProperties{}, err
	}
	return mp, nil
}

// Validate checks what Kafka requires of the file (MetaProperties.Builder
// and MetaPropertiesEnsemble.verify) and what this package needs to write
// it back unchanged. Errors match [ErrInvalid].
//
//   - Version is 0 or 1 (Kafka's trunk has a version 2, not supported here).
//   - v1: ClusterID is not empty and NodeID ≥ 0. v0: NodeID ≥ −1.
//   - ClusterID has no leading or trailing whitespace or control characters
//     (the reader trims them).
//   - DirectoryID is "" or a canonical [TopicID] string, not reserved.
//   - Extra has none of the keys the version defines; all strings are valid
//     UTF-8.
func (mp MetaProperties) Validate() error {
	switch mp.Version {
	case MetaPropertiesV0:
		if mp.NodeID < -1 {
			return invalidf("meta.properties: broker.id %d is negative (−1 means none)", mp.NodeID)
		}
	case MetaPropertiesV1:
		if mp.ClusterID == "" {
			return invalidf("meta.properties: version 1 requires a cluster.id")
		}
		if mp.NodeID < 0 {
			return invalidf("meta.properties: node.id %d is negative", mp.NodeID)
		}
	default:
		return invalidf("meta.properties: unsupported version %d", mp.Version)
	}
	if !utf8.ValidString(mp.ClusterID) || javaTrim(mp.ClusterID) != mp.ClusterID {
		return invalidf("meta.properties: cluster.id %q is not valid UTF-8 or has surrounding whitespace", mp.ClusterID)
	}
	if mp.DirectoryID != "" {
		id, err := ParseTopicID(mp.DirectoryID)
		if err != nil || id.String() != mp.DirectoryID {
			return invalidf("meta.properties: directory.id %q is not a canonical Uuid string", mp.DirectoryID)
		}
		if reservedDirectoryID(id) {
			return invalidf("meta.properties: directory.id %s is reserved", mp.DirectoryID)
		}
	}
	for k, v := range mp.Extra {
		if isMetaKey(mp.Version, k) {
			return invalidf("meta.properties: Extra holds the key %q", k)
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return invalidf("meta.properties: Extra key or value %q is not valid UTF-8", k)
		}
	}
	return nil
}

// isMetaKey reports whether key is one version defines.
func isMetaKey(version int, key string) bool {
	switch key {
	case propVersion, propClusterID, propDirectoryID:
		return true
	case propNodeID:
		return version != MetaPropertiesV0
	case propBrokerID:
		return version == MetaPropertiesV0
	}
	return false
}

// javaTrim trims what Java's String.trim does: characters ≤ ' '.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// ReadMetaProperties reads a meta.properties file in Java's properties
// format (see properties.go: comments, continuations, escapes,
// ISO-8859-1). version, cluster.id, node.id/broker.id and directory.id are
// trimmed of surrounding whitespace (Kafka trims only the version) and
// checked as Kafka's MetaProperties.Builder does, plus [MetaProperties.Validate];
// a missing version key means v0. Every other key goes to Extra. A file that
// breaks these rules is a [*FormatError] matching [ErrCorrupt].
//
// A missing file is an error matching fs.ErrNotExist: to Kafka, an empty
// log directory that it will format.
func ReadMetaProperties(fsys vfs.FS, path string) (MetaProperties, error) {
	data, err := readFile(fsys, path, maxSmallFileBytes)
	if err != nil {
		return MetaProperties{}, err
	}
	return parseMetaProperties(path, data)
}

func parseMetaProperties(file string, data []byte) (MetaProperties, error) {
	props, err := parseProperties(file, data)
	if err != nil {
		return MetaProperties{}, err
	}
	mp := MetaProperties{Version: MetaPropertiesV0, NodeID: -1}
	if v, ok := props[propVersion]; ok {
		n, ok := parseInt([]byte(javaTrim(v)), 32)
		if !ok {
			return MetaProperties{}, corruptf(file, 0, "malformed version %q", clip([]byte(v)))
		}
		if n != MetaPropertiesV0 && n != MetaPropertiesV1 {
			return MetaProperties{}, corruptf(file, 0, "unsupported version %d", n)
		}
		mp.Version = int(n)
	}
	mp.ClusterID = javaTrim(props[propClusterID])
	nodeKey := propNodeID
	if mp.Version == MetaPropertiesV0 {
		nodeKey = propBrokerID
	}
	if v, ok := props[nodeKey]; ok {
		n, ok := parseInt([]byte(javaTrim(v)), 32)
		if !ok || n < 0 {
			return MetaProperties{}, corruptf(file, 0, "malformed %s %q", nodeKey, clip([]byte(v)))
		}
		mp.NodeID = int32(n)
	} else if mp.Version == MetaPropertiesV1 {
		return MetaProperties{}, corruptf(file, 0, "missing node.id")
	}
	if v, ok := props[propDirectoryID]; ok {
		id, err := ParseTopicID(javaTrim(v))
		if err != nil {
			return MetaProperties{}, corruptf(file, 0, "malformed directory.id %q", clip([]byte(v)))
		}
		mp.DirectoryID = id.String()
	}
	for k, v := range props {
		if !isMetaKey(mp.Version, k) {
			if mp.Extra == nil {
				mp.Extra = make(map[string]string)
			}
			mp.Extra[k] = v
		}
	}
	if err := mp.Validate(); err != nil {
		return MetaProperties{}, corruptf(file, 0, "%v", err)
	}
	return mp, nil
}

// WriteMetaProperties replaces a meta.properties file with mp, with
// [WriteFileAtomic] (durable and atomic when it returns nil), in the form
// Properties.store writes (see properties.go): "#", the current date as a
// comment, then every key sorted ("cluster.id", "directory.id", "node.id",
// "version" for v1, Extra among them). For ASCII values the bytes are
// those of Kafka on JDK 18 or later, but for the date. mp must pass
// [MetaProperties.Validate], or nothing is written.
func WriteMetaProperties(fsys vfs.FS, path string, mp MetaProperties) error {
	data, err := appendMetaProperties(nil, mp, time.Now())
	if err != nil {
		return err
	}
	return WriteFileAtomic(fsys, path, data)
}

func appendMetaProperties(dst []byte, mp MetaProperties, now time.Time) ([]byte, error) {
	if err := mp.Validate(); err != nil {
		return nil, err
	}
	props := maps.Clone(mp.Extra)
	if props == nil {
		props = make(map[string]string, 4)
	}
	props[propVersion] = strconv.Itoa(mp.Version)
	if mp.ClusterID != "" {
		props[propClusterID] = mp.ClusterID
	}
	switch {
	case mp.Version == MetaPropertiesV1:
		props[propNodeID] = strconv.FormatInt(int64(mp.NodeID), 10)
	case mp.NodeID >= 0:
		props[propBrokerID] = strconv.FormatInt(int64(mp.NodeID), 10)
	}
	if mp.DirectoryID != "" {
		props[propDirectoryID] = mp.DirectoryID
	}
	return appendProperties(dst, props, now), nil
}
