package kafkacheck

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// SegmentFile is one file of a partition directory named by an offset
// (Kafka's 20-digit base offsets: segment files and snapshots).
type SegmentFile struct {
	Path   string // absolute
	Offset int64
	Size   int64
}

// PartitionFiles returns the files of the partition directory of tp under
// dir whose name is an offset and whose extension is ext (".log",
// ".index", ".timeindex", ".txnindex", ".snapshot"), sorted by offset.
func PartitionFiles(t testing.TB, dir string, tp TopicPartition, ext string) []SegmentFile {
	t.Helper()
	pdir, err := filepath.Abs(filepath.Join(dir, tp.String()))
	require.NoError(t, err)
	ents, err := os.ReadDir(pdir)
	require.NoError(t, err)
	var out []SegmentFile
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ext)
		if !ok || len(name) != 20 {
			continue
		}
		off, err := strconv.ParseInt(name, 10, 64)
		require.NoError(t, err, "%s/%s", pdir, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		out = append(out, SegmentFile{Path: filepath.Join(pdir, e.Name()), Offset: off, Size: info.Size()})
	}
	slices.SortFunc(out, func(a, b SegmentFile) int { return int(a.Offset - b.Offset) })
	return out
}

// Paths returns the files' paths.
func Paths(files []SegmentFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// SortedPartitions returns the partitions of e, by topic then partition,
// those of the given topics only if topics are given.
func (e *Expected) SortedPartitions(topics ...string) []TopicPartition {
	var out []TopicPartition
	for tp := range e.Partitions {
		if len(topics) == 0 || slices.Contains(topics, tp.Topic) {
			out = append(out, tp)
		}
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}
