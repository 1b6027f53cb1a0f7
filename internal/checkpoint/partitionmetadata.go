package checkpoint

import (
	"github.com/kafkalite/kafkalite/log/vfs"
)

// PartitionMetadataFile is the name of a partition directory's topic id
// file (Kafka's PartitionMetadataFile; the package doc gives its
// contents). Part of the on-disk format.
const PartitionMetadataFile = "partition.metadata"

// partitionMetadataVersion is the version Kafka writes
// (PartitionMetadataFile.CURRENT_VERSION).
const partitionMetadataVersion = 0

// ReadPartitionMetadata reads a partition.metadata file and returns its
// topic id, with the rules of Kafka's PartitionMetadataReadBuffer: the
// first line is "version" and the second "topic_id", each key separated
// from its value by ':' and at least one whitespace character (the first
// such separator on the line); the version is any integer ≥ 0 (a newer
// broker's file is accepted); the topic id parses with [ParseTopicID] and
// is not the zero id. Lines after the second are ignored, as Kafka ignores
// them (though its UTF-8 decoder may fail on bytes there that are not
// UTF-8). Anything else is a [*FormatError] matching [ErrCorrupt].
//
// A missing file is an error matching fs.ErrNotExist: a KRaft broker treats
// a partition directory without one as a stray replica.
func ReadPartitionMetadata(fsys vfs.FS, path string) (TopicID, error) {
	data, err := readFile(fsys, path, maxSmallFileBytes)
	if err != nil {
		return TopicID{}, err
	}
	return parsePartitionMetadata(path, data)
}

func parsePartitionMetadata(file string, data []byte) (TopicID, error) {
	s := lineScanner{data: data}
	line, ok := s.next()
	if !ok {
		return TopicID{}, corruptf(file, 1, "missing version line")
	}
	key, value, ok := splitKeyValue(line)
	if !ok || string(key) != "version" {
		return TopicID{}, corruptf(file, s.line, "malformed line %q, expected \"version: <n>\"", clip(line))
	}
	version, ok := parseInt(value, 32)
	if !ok {
		return TopicID{}, corruptf(file, s.line, "malformed version %q", clip(value))
	}
	if version < partitionMetadataVersion {
		return TopicID{}, corruptf(file, s.line, "unrecognized version %d", version)
	}
	line, ok = s.next()
	if !ok {
		return TopicID{}, corruptf(file, 2, "missing topic_id line")
	}
	key, value, ok = splitKeyValue(line)
	if !ok || string(key) != "topic_id" {
		return TopicID{}, corruptf(file, s.line, "malformed line %q, expected \"topic_id: <id>\"", clip(line))
	}
	id, err := ParseTopicID(string(value))
	if err != nil {
		return TopicID{}, corruptf(file, s.line, "malformed topic id %q", clip(value))
	}
	if id.IsZero() {
		return TopicID{}, corruptf(file, s.line, "zero topic id")
	}
	return id, nil
}

// splitKeyValue splits a line as Java's line.split(":\\s+", 2): at the first
// ':' followed by whitespace, dropping the ':' and the whole whitespace run.
// It returns false if there is no such separator.
func splitKeyValue(line []byte) (key, value []byte, ok bool) {
	for i := 0; i+1 < len(line); i++ {
		if line[i] == ':' && isJavaSpace(line[i+1]) {
			j := i + 1
			for j < len(line) && isJavaSpace(line[j]) {
				j++
			}
			return line[:i], line[j:], true
		}
	}
	return nil, nil, false
}

// WritePartitionMetadata replaces a partition.metadata file with id's, with
// [WriteFileAtomic] (durable and atomic when it returns nil). The bytes are
// exactly "version: 0\ntopic_id: <id>", with no final newline. The zero id
// is an error matching [ErrInvalid]. Kafka writes the file before any data
// is appended to a new log.
func WritePartitionMetadata(fsys vfs.FS, path string, id TopicID) error {
	data, err := appendPartitionMetadata(nil, id)
	if err != nil {
		return err
	}
	return WriteFileAtomic(fsys, path, data)
}

func appendPartitionMetadata(dst []byte, id TopicID) ([]byte, error) {
	if id.IsZero() {
		return nil, invalidf("zero topic id")
	}
	dst = append(dst, "version: 0\ntopic_id: "...)
	return topicIDEncoding.AppendEncode(dst, id[:]), nil
}
