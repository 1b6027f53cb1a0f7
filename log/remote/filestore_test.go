package remote_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/remote/remotetest"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// TestFileStore runs the store contract on the operating system's
// filesystem and on the memory filesystem.
func TestFileStore(t *testing.T) {
	t.Run("os", func(t *testing.T) {
		remotetest.StorageManager(t, func(t *testing.T) remote.StorageManager {
			return remote.NewFileStore(vfs.Default, t.TempDir())
		})
	})
	t.Run("memory", func(t *testing.T) {
		remotetest.StorageManager(t, func(t *testing.T) remote.StorageManager {
			return remote.NewFileStore(vfs.NewMem(), "/remote")
		})
	})
}

// TestFileStoreDamage damages a stored copy in the ways a store can (a
// file cut short, a byte changed, a file or the manifest lost, a manifest
// of garbage) and checks that every fetch fails with a typed error rather
// than return other bytes.
func TestFileStoreDamage(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   error
	}{
		{name: "log cut short", want: remote.ErrCorrupt, damage: func(t *testing.T, dir string) {
			f := only(t, dir, ".log")
			require.NoError(t, os.Truncate(f, 100))
		}},
		{name: "log byte changed", want: remote.ErrCorrupt, damage: func(t *testing.T, dir string) {
			flip(t, only(t, dir, ".log"), 4000)
		}},
		{name: "index byte changed", want: remote.ErrCorrupt, damage: func(t *testing.T, dir string) {
			flip(t, only(t, dir, ".index"), 7)
		}},
		{name: "log lost", want: remote.ErrCorrupt, damage: func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(only(t, dir, ".log")))
		}},
		{name: "manifest lost", want: remote.ErrNotFound, damage: func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(only(t, dir, ".manifest")))
		}},
		{name: "manifest garbage", want: remote.ErrCorrupt, damage: func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(only(t, dir, ".manifest"), []byte("log x y\n"), 0o644))
		}},
		{name: "manifest huge", want: remote.ErrCorrupt, damage: func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(only(t, dir, ".manifest"), []byte(strings.Repeat("log 1 2\n", 1000)), 0o644))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			store := remote.NewFileStore(vfs.Default, root)
			s := remotetest.NewSegment("t", 0, 0, 10_000, false)
			_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			require.NoError(t, err)
			tt.damage(t, root)
			_, logErr := remotetest.ReadAll(store.FetchLogSegment(ctx, s.Meta, 0, -1))
			_, idxErr := remotetest.ReadAll(store.FetchIndex(ctx, s.Meta, remote.OffsetIndex))
			require.True(t, logErr != nil || idxErr != nil, "some fetch notices")
			for _, err := range []error{logErr, idxErr} {
				if err != nil {
					require.ErrorIs(t, err, tt.want)
				}
			}
			require.NoError(t, store.DeleteLogSegmentData(ctx, s.Meta))
			remotetest.RequireGone(t, store, s)
		})
	}
}

// only returns the one file under dir whose name ends with suffix.
func only(t *testing.T, dir, suffix string) string {
	t.Helper()
	var found []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
			found = append(found, p)
		}
		return err
	}))
	require.Len(t, found, 1, "files ending with %s", suffix)
	return found[0]
}

func flip(t *testing.T, name string, at int64) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, at)
	require.NoError(t, err)
	b[0] ^= 0x40
	_, err = f.WriteAt(b, at)
	require.NoError(t, err)
}

// TestFileStoreCrashPoints crashes a copy (a power loss of the memory
// filesystem) after each of its operations, and a deletion after each of
// its own: what survives is either the whole copy, readable and equal to
// what was copied, or nothing readable (ErrNotFound), and deleting then
// leaves no file of the segment.
func TestFileStoreCrashPoints(t *testing.T) {
	ctx := context.Background()
	s := remotetest.NewSegment("t", 0, 0, 3<<20, true)
	for _, phase := range []string{"copy", "delete"} {
		for point := 1; ; point++ {
			mem := vfs.NewMem()
			ffs := vfs.NewFaultFS(mem)
			store := remote.NewFileStore(ffs, "/remote")
			if phase == "delete" {
				_, err := store.CopyLogSegmentData(ctx, s.Meta, s.Data())
				require.NoError(t, err)
			}
			var crashed *vfs.MemFS
			ops := 0
			ffs.OnOp(func(vfs.Op, string) {
				ops++
				if ops == point {
					crashed = mem.CrashClone()
				}
			})
			var err error
			if phase == "copy" {
				_, err = store.CopyLogSegmentData(ctx, s.Meta, s.Data())
			} else {
				err = store.DeleteLogSegmentData(ctx, s.Meta)
			}
			require.NoError(t, err)
			if crashed == nil {
				t.Logf("%s: %d crash points", phase, point-1)
				break
			}
			after := remote.NewFileStore(crashed, "/remote")
			_, ferr := remotetest.ReadAll(after.FetchLogSegment(ctx, s.Meta, 0, -1))
			if ferr == nil {
				remotetest.RequireStored(t, after, s)
			} else {
				require.ErrorIs(t, ferr, remote.ErrNotFound, "%s crash point %d", phase, point)
			}
			require.NoError(t, after.DeleteLogSegmentData(ctx, s.Meta))
			remotetest.RequireGone(t, after, s)
			left := remotetest.Files(crashed, "/remote")
			require.Empty(t, left, "%s crash point %d: files left after the delete", phase, point)
		}
	}
}
