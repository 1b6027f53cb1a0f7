package checkpoint

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// TestWritersCrash replaces each kind of file and crashes before every
// filesystem operation of the write: reading the crashed filesystem gives
// the old value or the new one, never an error.
func TestWritersCrash(t *testing.T) {
	id1, id2 := mustHex(t, "b1c40e5a7c2f4d3e9a1b6c8d2e4f7081"), mustHex(t, "5f3a9c0e12ab4c7d8e9f00112233aabb")
	meta2 := kraftMeta()
	meta2.NodeID = 2
	for _, tc := range []struct {
		name     string
		old, new func(fsys vfs.FS, dir string) error
		read     func(fsys vfs.FS, dir string) (any, error)
	}{
		{
			name: "offsets",
			old: func(fsys vfs.FS, dir string) error {
				return WriteOffsets(fsys, dir+"/"+RecoveryPointFile, map[TopicPartition]int64{{"a", 0}: 1})
			},
			new: func(fsys vfs.FS, dir string) error {
				return WriteOffsets(fsys, dir+"/"+RecoveryPointFile, map[TopicPartition]int64{{"a", 0}: 2, {"b", 1}: 3})
			},
			read: func(fsys vfs.FS, dir string) (any, error) { return ReadOffsets(fsys, dir+"/"+RecoveryPointFile) },
		},
		{
			name: "leader epochs",
			old: func(fsys vfs.FS, dir string) error {
				return WriteLeaderEpochs(fsys, dir+"/"+LeaderEpochFile, []EpochEntry{{0, 0}})
			},
			new: func(fsys vfs.FS, dir string) error {
				return WriteLeaderEpochs(fsys, dir+"/"+LeaderEpochFile, []EpochEntry{{0, 0}, {1, 100}})
			},
			read: func(fsys vfs.FS, dir string) (any, error) { return ReadLeaderEpochs(fsys, dir+"/"+LeaderEpochFile) },
		},
		{
			name: "partition.metadata",
			old: func(fsys vfs.FS, dir string) error {
				return WritePartitionMetadata(fsys, dir+"/"+PartitionMetadataFile, id1)
			},
			new: func(fsys vfs.FS, dir string) error {
				return WritePartitionMetadata(fsys, dir+"/"+PartitionMetadataFile, id2)
			},
			read: func(fsys vfs.FS, dir string) (any, error) {
				return ReadPartitionMetadata(fsys, dir+"/"+PartitionMetadataFile)
			},
		},
		{
			name: "meta.properties",
			old: func(fsys vfs.FS, dir string) error {
				return WriteMetaProperties(fsys, dir+"/"+MetaPropertiesFile, kraftMeta())
			},
			new: func(fsys vfs.FS, dir string) error {
				return WriteMetaProperties(fsys, dir+"/"+MetaPropertiesFile, meta2)
			},
			read: func(fsys vfs.FS, dir string) (any, error) {
				return ReadMetaProperties(fsys, dir+"/"+MetaPropertiesFile)
			},
		},
		{
			name: "clean shutdown",
			old:  func(fsys vfs.FS, dir string) error { return WriteCleanShutdown(fsys, dir, 1) },
			new:  func(fsys vfs.FS, dir string) error { return WriteCleanShutdown(fsys, dir, 2) },
			read: func(fsys vfs.FS, dir string) (any, error) {
				found, epoch, err := ReadCleanShutdown(fsys, dir)
				return fmt.Sprint(found, epoch), err
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const dir = "/logdir"
			mem := vfs.NewMem()
			require.NoError(t, mem.MkdirAll(dir))
			require.NoError(t, mem.SyncDir("/"))
			require.NoError(t, tc.old(mem, dir))
			oldValue, err := tc.read(mem, dir)
			require.NoError(t, err)

			ffs := vfs.NewFaultFS(mem)
			var crashes []*vfs.MemFS
			ffs.OnOp(func(vfs.Op, string) { crashes = append(crashes, mem.CrashClone()) })
			require.NoError(t, tc.new(ffs, dir))
			ffs.OnOp(nil)
			newValue, err := tc.read(mem, dir)
			require.NoError(t, err)
			require.NotEqual(t, oldValue, newValue)

			sawOld, sawNew := false, false
			for i, crashed := range append(crashes, mem.CrashClone()) {
				got, err := tc.read(crashed, dir)
				require.NoError(t, err, "crash before op %d", i+1)
				switch {
				case fmt.Sprint(got) == fmt.Sprint(oldValue):
					sawOld = true
				case fmt.Sprint(got) == fmt.Sprint(newValue):
					sawNew = true
				default:
					t.Fatalf("crash before op %d: read %v, want %v or %v", i+1, got, oldValue, newValue)
				}
			}
			require.True(t, sawOld && sawNew)
			got, err := tc.read(mem.CrashClone(), dir)
			require.NoError(t, err)
			require.Equal(t, newValue, got, "durable once the writer returned")
		})
	}
}
