package checkpoint

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

var update = flag.Bool("update", false, "rewrite the generated golden files in testdata/ (see testdata/README)")

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// The values of the golden files.
var (
	goldenOffsets = map[TopicPartition]int64{
		{"__consumer_offsets", 17}: 5021,
		{"orders", 0}:              1200,
		{"orders", 2}:              1,
		{"orders", 10}:             7,
		{"payments", 0}:            42,
	}
	goldenEpochs  = []EpochEntry{{0, 0}, {2, 1200}, {5, 4711}}
	goldenTopicID = "scQOWnwvTT6aG2yNLk9wgQ" // b1c40e5a7c2f4d3e9a1b6c8d2e4f7081
	goldenExtra   = MetaProperties{
		Version:     MetaPropertiesV1,
		ClusterID:   "XzqcDhKrTH2OnwARIjOquw",
		NodeID:      2147483647,
		DirectoryID: "DH4dKzpPTl2ci3ppWEc2JQ",
		Extra: map[string]string{
			"broker.id":         "7",
			"key with spaces":   " leading space, trailing space ",
			"separators=:#!":    "a=b:c#d!e",
			"tab\tnewline\n":    "back\\slash\r\f",
			"unicode.caf\u00e9": "\u20ac \U0001F600 \x01",
		},
	}
)

// TestGolden writes every file kind with this package's writers and compares
// the bytes with the files in testdata/ (written by hand from the formats in
// the package doc, or generated: see testdata/README), then reads each file
// back.
func TestGolden(t *testing.T) {
	id, err := ParseTopicID(goldenTopicID)
	require.NoError(t, err)
	for _, tc := range []struct {
		file      string
		generated bool // rewritten by -update; otherwise written by hand
		write     func(fsys vfs.FS, path string) error
		check     func(t *testing.T, fsys vfs.FS, path string)
	}{
		{
			file:  RecoveryPointFile,
			write: func(fsys vfs.FS, path string) error { return WriteOffsets(fsys, path, goldenOffsets) },
			check: func(t *testing.T, fsys vfs.FS, path string) {
				got, err := ReadOffsets(fsys, path)
				require.NoError(t, err)
				assert.Equal(t, goldenOffsets, got)
			},
		},
		{
			file:  ReplicationOffsetFile,
			write: func(fsys vfs.FS, path string) error { return WriteOffsets(fsys, path, nil) },
			check: func(t *testing.T, fsys vfs.FS, path string) {
				got, err := ReadOffsets(fsys, path)
				require.NoError(t, err)
				assert.Empty(t, got)
			},
		},
		{
			file:  LeaderEpochFile,
			write: func(fsys vfs.FS, path string) error { return WriteLeaderEpochs(fsys, path, goldenEpochs) },
			check: func(t *testing.T, fsys vfs.FS, path string) {
				got, err := ReadLeaderEpochs(fsys, path)
				require.NoError(t, err)
				assert.Equal(t, goldenEpochs, got)
				c, err := OpenLeaderEpochCache(fsys, path)
				require.NoError(t, err)
				assert.Equal(t, goldenEpochs, c.Entries())
				assert.False(t, c.Dirty())
			},
		},
		{
			file:  PartitionMetadataFile,
			write: func(fsys vfs.FS, path string) error { return WritePartitionMetadata(fsys, path, id) },
			check: func(t *testing.T, fsys vfs.FS, path string) {
				got, err := ReadPartitionMetadata(fsys, path)
				require.NoError(t, err)
				assert.Equal(t, id, got)
			},
		},
		{
			file:  MetaPropertiesFile,
			write: writeGoldenMeta(kraftMeta()),
			check: func(t *testing.T, fsys vfs.FS, path string) {
				got, err := ReadMetaProperties(fsys, path)
				require.NoError(t, err)
				assert.Equal(t, kraftMeta(), got)
			},
		},
		{
			file:      "meta-extra.properties",
			generated: true,
			write:     writeGoldenMeta(goldenExtra),
			check: func(t *testing.T, fsys vfs.FS, path string) {
				got, err := ReadMetaProperties(fsys, path)
				require.NoError(t, err)
				assert.Equal(t, goldenExtra, got)
			},
		},
		{
			file:  CleanShutdownFile,
			write: func(fsys vfs.FS, path string) error { return WriteCleanShutdown(fsys, filepath.Dir(path), 42) },
			check: func(t *testing.T, fsys vfs.FS, path string) {
				found, epoch, err := ReadCleanShutdown(fsys, filepath.Dir(path))
				require.NoError(t, err)
				assert.True(t, found)
				assert.Equal(t, int64(42), epoch)
			},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			for _, e := range filesystems(t) {
				path := e.path(tc.file)
				require.NoError(t, tc.write(e.fs, path))
				got := readAll(t, e.fs, path)
				if *update && tc.generated && e.name == "mem" {
					require.NoError(t, os.WriteFile(filepath.Join("testdata", tc.file), got, 0o644))
				}
				assert.Equal(t, string(readGolden(t, tc.file)), string(got), "%s: our bytes", e.name)
			}
			// Read the committed file itself.
			e := filesystems(t)[0]
			path := e.path(tc.file)
			writeRaw(t, e.fs, path, readGolden(t, tc.file))
			tc.check(t, e.fs, path)
		})
	}
}

// writeGoldenMeta writes mp with WriteMetaProperties and replaces the date
// line with the golden date, which is the only part that changes.
func writeGoldenMeta(mp MetaProperties) func(fsys vfs.FS, path string) error {
	return func(fsys vfs.FS, path string) error {
		if err := WriteMetaProperties(fsys, path, mp); err != nil {
			return err
		}
		b, err := readFile(fsys, path, maxSmallFileBytes)
		if err != nil {
			return err
		}
		lines := bytes.SplitN(b, []byte("\n"), 3)
		want, err := appendMetaProperties(nil, mp, goldenDate)
		if err != nil {
			return err
		}
		wantLines := bytes.SplitN(want, []byte("\n"), 3)
		b = bytes.Join([][]byte{lines[0], wantLines[1], lines[2]}, []byte("\n"))
		return WriteFileAtomic(fsys, path, b)
	}
}

// TestGoldenJava reads a meta.properties written by the JDK's
// Properties.store as Kafka writes it (generated by TestJava -update).
func TestGoldenJava(t *testing.T) {
	got, err := parseMetaProperties("f", readGolden(t, "meta-java17.properties"))
	require.NoError(t, err)
	assert.Equal(t, kraftMeta(), got)
}
