package checkpoint

import (
	"cmp"
	"errors"
	"io/fs"
	"slices"
	"strconv"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// The offset checkpoint files in the root of a log directory (Kafka's
// OffsetCheckpointFile; the package doc says what each holds and when Kafka
// writes it). All four have the same format: version 0, entry lines
// "<topic> <partition> <offset>". These names are part of the on-disk
// format and must not change.
const (
	// RecoveryPointFile holds each partition's recovery point: the offset
	// up to which its data is known to be flushed. Recovery after an unclean
	// shutdown starts at the segment that contains it.
	RecoveryPointFile = "recovery-point-offset-checkpoint"
	// LogStartOffsetFile holds the log start offset of the partitions whose
	// log start offset is above their first segment's base offset.
	LogStartOffsetFile = "log-start-offset-checkpoint"
	// ReplicationOffsetFile holds each partition's high watermark.
	ReplicationOffsetFile = "replication-offset-checkpoint"
	// CleanerOffsetFile holds each compacted partition's first dirty offset.
	CleanerOffsetFile = "cleaner-offset-checkpoint"
)

// offsetsVersion is the version line of the offset checkpoint files
// (Kafka's OffsetCheckpointFile.CURRENT_VERSION).
const offsetsVersion = 0

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns "<topic>-<partition>", the partition's directory name and
// Kafka's TopicPartition.toString.
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// maxTopicLen is Kafka's limit on a topic name's length (Topic.MAX_NAME_LENGTH).
const maxTopicLen = 249

// checkTopic returns why name is not a valid Kafka topic name (Kafka's
// Topic.validate), or "" if it is: non-empty, not "." or "..", at most 249
// characters from [a-zA-Z0-9._-]. Such a name has no whitespace, so
// splitting an entry line on whitespace is unambiguous.
func checkTopic(name string) string {
	switch {
	case name == "":
		return "empty topic name"
	case name == "." || name == "..":
		return "topic name " + strconv.Quote(name) + " is not allowed"
	case len(name) > maxTopicLen:
		return "topic name is " + strconv.Itoa(len(name)) + " characters, over 249"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "topic name " + strconv.Quote(clip([]byte(name))) + " has a character outside [a-zA-Z0-9._-]"
		}
	}
	return ""
}

// ReadOffsets reads an offset checkpoint file ([RecoveryPointFile],
// [LogStartOffsetFile], [ReplicationOffsetFile], [CleanerOffsetFile]).
//
// A missing file is no checkpoint: ReadOffsets returns an empty map and a
// nil error, as for an empty file (Kafka creates the file empty when it
// first opens it). A file that breaks the format gives a [*FormatError]
// matching [ErrCorrupt], and what to do is the caller's choice: Kafka's
// reader reports the log directory as failed, and at startup its
// LogManager logs a warning and carries on with no recovery points (so
// recovers every segment) or no log start offsets.
//
// The rules are Kafka's reader's: version line 0; a count line equal to the
// number of entry lines; each entry line three fields split on whitespace
// (trailing whitespace ignored, leading whitespace malformed); "\n", "\r\n"
// and "\r" end lines. In addition to Kafka's checks, the topic must be a
// valid topic name and the partition ≥ 0 (what Kafka would never write).
// Offsets may be any int64. When a partition appears twice the last entry
// wins, as in Kafka.
func ReadOffsets(fsys vfs.FS, path string) (map[TopicPartition]int64, error) {
	data, err := readFile(fsys, path, maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseOffsets(path, data)
}

func parseOffsets(file string, data []byte) (map[TopicPartition]int64, error) {
	offsets := make(map[TopicPartition]int64)
	p := checkpointParser{
		file:    file,
		version: offsetsVersion,
		fields:  3,
		entry: func(line int, f [][]byte) error {
			if reason := checkTopic(string(f[0])); reason != "" {
				return corruptf(file, line, "%s", reason)
			}
			partition, ok := parseInt(f[1], 32)
			if !ok || partition < 0 {
				return corruptf(file, line, "malformed partition %q", clip(f[1]))
			}
			offset, ok := parseInt(f[2], 64)
			if !ok {
				return corruptf(file, line, "malformed offset %q", clip(f[2]))
			}
			offsets[TopicPartition{string(f[0]), int32(partition)}] = offset
			return nil
		},
	}
	if err := p.parse(data); err != nil {
		return nil, err
	}
	return offsets, nil
}

// WriteOffsets replaces an offset checkpoint file with offsets, with
// [WriteFileAtomic] (durable and atomic when it returns nil). Entries are
// sorted by topic, then partition, so the same map always gives the same
// bytes (Kafka writes them in hash-map order, which readers do not rely on).
// An invalid topic name or a negative partition is an error matching
// [ErrInvalid], and nothing is written.
func WriteOffsets(fsys vfs.FS, path string, offsets map[TopicPartition]int64) error {
	data, err := appendOffsets(nil, offsets)
	if err != nil {
		return err
	}
	return WriteFileAtomic(fsys, path, data)
}

func appendOffsets(dst []byte, offsets map[TopicPartition]int64) ([]byte, error) {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		if reason := checkTopic(tp.Topic); reason != "" {
			return nil, invalidf("%s", reason)
		}
		if tp.Partition < 0 {
			return nil, invalidf("partition %s: negative partition", tp)
		}
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	dst = appendHeader(dst, offsetsVersion, len(tps))
	for _, tp := range tps {
		dst = append(dst, tp.Topic...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(tp.Partition), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, offsets[tp], 10)
		dst = append(dst, '\n')
	}
	return dst, nil
}
