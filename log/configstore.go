package log

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// The topic store: kafkalite's record of its topics, in one file in the root
// of the log directory.
//
//	<log.dir>/kafkalite-topics.json
//
// Kafka keeps topic ids, partition counts and per-topic configuration in its
// KRaft metadata log, which a library has no use for; kafkalite keeps them
// in this file instead. Kafka's LogManager treats every directory in a log
// dir as a partition (and refuses to start on one whose name does not
// parse) but ignores regular files it does not know, so the store is a
// file. Its format, version 1 (UTF-8 JSON; key order and whitespace do not
// matter):
//
//	{
//	  "version": 1,
//	  "topics": {
//	    "orders": {
//	      "id": "Zz1UmjQmQVSrV7fHkdHmbw",
//	      "partitions": 3,
//	      "config": {"retention.ms": "86400000", "cleanup.policy": "compact"}
//	    }
//	  }
//	}
//
//   - version: 1. A reader refuses other versions; any change of format
//     bumps it.
//   - topics: one entry per topic, keyed by its name (a valid topic name).
//   - id: the topic id, as in partition.metadata (Kafka's
//     PartitionMetadataFile; see the internal/checkpoint package doc): 16
//     bytes in URL-safe base64 without padding, 22 characters, not all
//     zero.
//   - partitions: the partition count, at least 1.
//   - config: the topic's overrides, Kafka topic property names and values
//     as strings; only those that differ from the directory's defaults
//     ([Config.DefaultTopic]) when they were set, so a topic without
//     overrides follows later changes of the defaults, as in Kafka. Absent
//     or {} for none.
//
// Unknown fields are an error. The file is replaced atomically and durably:
// kafkalite-topics.json.tmp is written, fsynced, renamed over the file and
// the directory fsynced, so after a crash the store is the old one or the
// new one, never a mixture. A leftover .tmp file is garbage.

const (
	topicStoreFile    = "kafkalite-topics.json"
	topicStoreTmpFile = topicStoreFile + ".tmp"
	topicStoreVersion = 1
	// maxTopicStoreBytes bounds what loadTopicStore reads: far above any
	// real store (about 200 bytes per topic), far below harm.
	maxTopicStoreBytes = 64 << 20
)

// ErrCorruptTopicStore matches a [*CorruptStoreError] about this store.
var ErrCorruptTopicStore = errors.New("log: corrupt topic store")

// topicMeta is one topic's entry in the store.
type topicMeta struct {
	// ID is the topic id, 22 characters of URL-safe base64 (16 bytes).
	ID string `json:"id"`
	// Partitions is the partition count, at least 1.
	Partitions int32 `json:"partitions"`
	// Config holds the topic's property overrides (name → value), relative
	// to the directory's DefaultTopic. Loaded stores never have it nil.
	Config map[string]string `json:"config"`
}

type topicStoreDoc struct {
	Version *int                 `json:"version"`
	Topics  map[string]topicMeta `json:"topics"`
}

// loadTopicStore reads dir's topic store. A missing file is an empty store;
// a file that is not a valid store is a [*CorruptStoreError]; other
// failures are the filesystem's errors.
func loadTopicStore(fsys vfs.FS, dir string) (map[string]topicMeta, error) {
	name := filepath.Join(dir, topicStoreFile)
	data, err := readRootFile(fsys, name, maxTopicStoreBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]topicMeta{}, nil
	}
	var tooLarge *storeTooLargeError
	if errors.As(err, &tooLarge) {
		return nil, &CorruptStoreError{Store: ErrCorruptTopicStore, File: name, Reason: tooLarge.Error()}
	}
	if err != nil {
		return nil, err
	}
	return decodeTopicStore(name, data)
}

// storeTooLargeError is readRootFile's error for a file above its bound.
type storeTooLargeError struct{ size, limit int64 }

func (e *storeTooLargeError) Error() string {
	return fmt.Sprintf("%d bytes, more than the %d allowed", e.size, e.limit)
}

// readRootFile reads the whole of name, a store file of the directory's
// root, refusing one above limit bytes with a *storeTooLargeError; a
// missing file is the filesystem's fs.ErrNotExist.
func readRootFile(fsys vfs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err == nil && size > limit {
		err = &storeTooLargeError{size: size, limit: limit}
	}
	var data []byte
	if err == nil {
		data = make([]byte, size)
		var n int
		n, err = f.ReadAt(data, 0)
		if err == io.EOF && int64(n) == size {
			err = nil
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// decodeTopicStore parses and checks a store's bytes; name is for errors.
func decodeTopicStore(name string, data []byte) (map[string]topicMeta, error) {
	corrupt := func(reason string, err error) (map[string]topicMeta, error) {
		return nil, &CorruptStoreError{Store: ErrCorruptTopicStore, File: name, Reason: reason, Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var file topicStoreDoc
	if err := dec.Decode(&file); err != nil {
		return corrupt("not a JSON topic store: "+err.Error(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return corrupt("data after the JSON object", nil)
	}
	if file.Version == nil {
		return corrupt("no version", nil)
	}
	if *file.Version != topicStoreVersion {
		return corrupt(fmt.Sprintf("unsupported version %d", *file.Version), nil)
	}
	topics := make(map[string]topicMeta, len(file.Topics))
	for topic, meta := range file.Topics {
		if err := checkTopicMeta(topic, meta); err != nil {
			return corrupt(err.Error(), nil)
		}
		if meta.Config == nil {
			meta.Config = map[string]string{}
		}
		topics[topic] = meta
	}
	return topics, nil
}

// checkTopicMeta checks one entry's invariants (see the format above).
func checkTopicMeta(topic string, meta topicMeta) error {
	if err := ValidateTopicName(topic); err != nil {
		return err
	}
	if !validTopicID(meta.ID) {
		return fmt.Errorf("topic %q: id %q is not 22 characters of URL-safe base64 encoding 16 bytes, not all zero", topic, meta.ID)
	}
	if meta.Partitions < 1 {
		return fmt.Errorf("topic %q: %d partitions", topic, meta.Partitions)
	}
	for k := range meta.Config {
		if k == "" {
			return fmt.Errorf("topic %q: empty property name", topic)
		}
	}
	return nil
}

// validTopicID reports whether id is a topic id as Kafka prints one: 16
// bytes, not all zero, in URL-safe base64 without padding (canonical: the
// unused low bits of the last character are zero).
func validTopicID(id string) bool {
	if len(id) != 22 {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(id)
	return err == nil && len(b) == 16 && !bytes.Equal(b, make([]byte, 16))
}

// saveTopicStore replaces dir's topic store with topics, atomically and
// durably: it writes kafkalite-topics.json.tmp (removing a stale one
// first), fsyncs it, renames it over kafkalite-topics.json and fsyncs dir.
// When it returns nil the new store survives a crash; when it fails the
// store on disk is the old one or the new one. It refuses (writing nothing)
// topics that would not load back.
func saveTopicStore(fsys vfs.FS, dir string, topics map[string]topicMeta) error {
	file := topicStoreDoc{Version: new(int), Topics: make(map[string]topicMeta, len(topics))}
	*file.Version = topicStoreVersion
	for topic, meta := range topics {
		if err := checkTopicMeta(topic, meta); err != nil {
			return fmt.Errorf("log: refusing to save the topic store: %w", err)
		}
		if meta.Config == nil {
			meta.Config = map[string]string{}
		}
		file.Topics[topic] = meta
	}
	data, err := json.MarshalIndent(file, "", "  ") // map keys sorted: the same topics give the same bytes
	if err != nil {
		return err
	}
	data = append(data, '\n')
	return writeRootFile(fsys, dir, topicStoreFile, data)
}

// writeRootFile replaces dir/file with data atomically and durably: it
// writes file+".tmp" (removing a stale one first), fsyncs it, renames it
// over file and fsyncs dir. When it returns nil the new file survives a
// crash; when it fails the file on disk is the old one or the new one.
func writeRootFile(fsys vfs.FS, dir, file string, data []byte) error {
	tmp := filepath.Join(dir, file+".tmp")
	if err := fsys.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		if rerr := fsys.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return err
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, file)); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}
