package snapshot

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// TestWriteCrash writes a snapshot and simulates a power loss before every
// filesystem operation of the write (the renames included) and after it
// returns: the crashed filesystem holds the old snapshot (or none, for a
// new offset) or the new one, never a torn or corrupt file; once Write has
// returned, only the new one.
func TestWriteCrash(t *testing.T) {
	const dir = "/logs/orders-0"
	newEntries := goldenTwo
	for _, tc := range []struct {
		name string
		old  []Entry // nil: no snapshot at the offset before the write
	}{
		{name: "new offset"},
		{name: "replace", old: []Entry{{ProducerID: 1, ProducerEpoch: 0, LastSequence: -1, LastOffset: -1,
			CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}}},
		{name: "replace empty", old: []Entry{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			require.NoError(t, mem.MkdirAll(dir))
			require.NoError(t, mem.SyncDir("/"))
			require.NoError(t, mem.SyncDir("/logs"))
			require.NoError(t, mem.SyncDir(dir))
			if tc.old != nil {
				require.NoError(t, Write(mem, dir, 1200, tc.old))
			}

			ffs := vfs.NewFaultFS(mem)
			type crash struct {
				before string
				fs     *vfs.MemFS
			}
			var crashes []crash
			ffs.OnOp(func(op vfs.Op, path string) {
				crashes = append(crashes, crash{fmt.Sprintf("before %s %s", op, path), mem.CrashClone()})
			})
			require.NoError(t, Write(ffs, dir, 1200, newEntries))
			ffs.OnOp(nil)
			require.Positive(t, ffs.Count(vfs.OpRename))
			crashes = append(crashes, crash{"after Write returned", mem.CrashClone()})

			sawOld, sawNew, sawRename := false, false, false
			for _, c := range crashes {
				if c.before == "before rename "+filepath.Join(dir, FileName(1200))+".tmp" {
					sawRename = true
				}
				offsets, err := List(c.fs, dir)
				require.NoError(t, err, c.before)
				got, err := Read(c.fs, filepath.Join(dir, FileName(1200)))
				switch {
				case tc.old == nil && err != nil:
					require.ErrorIs(t, err, fs.ErrNotExist, "%s: nothing or the new file", c.before)
					require.Empty(t, offsets, c.before)
					sawOld = true
				case err != nil:
					t.Fatalf("%s: %v", c.before, err)
				case fmt.Sprint(got) == fmt.Sprint(tc.old):
					require.Equal(t, tc.old, got, c.before)
					sawOld = true
				default:
					require.Equal(t, newEntries, got, "%s: the old file or the new one", c.before)
					sawNew = true
				}
				if err == nil {
					require.Equal(t, []int64{1200}, offsets, c.before)
				}
			}
			require.True(t, sawRename, "a crash was taken just before the rename")
			require.True(t, sawOld && sawNew)
			got, err := Read(crashes[len(crashes)-1].fs, filepath.Join(dir, FileName(1200)))
			require.NoError(t, err)
			require.Equal(t, newEntries, got, "durable once Write returned")
		})
	}
}
