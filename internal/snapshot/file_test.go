package snapshot

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

func TestFileName(t *testing.T) {
	for _, offset := range []int64{0, 1, 1200, 99999999999, math.MaxInt64} {
		name := FileName(offset)
		assert.Equal(t, fmt.Sprintf("%020d.snapshot", offset), name)
		assert.Len(t, name, 29)
		got, ok := ParseFileName(name)
		assert.True(t, ok, name)
		assert.Equal(t, offset, got)
	}
	assert.Equal(t, "00000000000000001200.snapshot", FileName(1200))
}

func TestParseFileName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset int64
		ok     bool
	}{
		{"00000000000000000000.snapshot", 0, true},
		{"00000000000000001200.snapshot", 1200, true},
		{"09223372036854775807.snapshot", math.MaxInt64, true},
		{"09223372036854775808.snapshot", 0, false}, // over int64
		{"99999999999999999999.snapshot", 0, false},
		{"00000000000000001200.snapshot.deleted", 0, false},
		{"00000000000000001200.snapshot.tmp", 0, false},
		{"00000000000000001200.log", 0, false},
		{"00000000000000001200.index", 0, false},
		{"1200.snapshot", 0, false},
		{"000000000000000001200.snapshot", 0, false}, // 21 digits
		{"-0000000000000001200.snapshot", 0, false},
		{"+0000000000000001200.snapshot", 0, false},
		{"0000000000000000120a.snapshot", 0, false},
		{".snapshot", 0, false},
		{"", 0, false},
		{"leader-epoch-checkpoint", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offset, ok := ParseFileName(tc.name)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.offset, offset)
		})
	}
}

// fsEnv is a filesystem and a directory on it for the tests.
type fsEnv struct {
	name string
	fs   vfs.FS
	dir  string
}

// filesystems returns a memory filesystem and the operating system's, each
// with an empty directory.
func filesystems(t *testing.T) []fsEnv {
	t.Helper()
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/logs/orders-0"))
	return []fsEnv{
		{"mem", mem, "/logs/orders-0"},
		{"os", vfs.Default, t.TempDir()},
	}
}

func TestWriteReadList(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			offsets, err := List(e.fs, e.dir)
			require.NoError(t, err)
			assert.Empty(t, offsets)

			require.NoError(t, Write(e.fs, e.dir, 1200, goldenTwo))
			require.NoError(t, Write(e.fs, e.dir, 0, nil))
			require.NoError(t, Write(e.fs, e.dir, 99999999999, goldenTwo[:1]))

			// Files that are not snapshots.
			for _, name := range []string{
				"00000000000000000000.log", "00000000000000000000.index",
				"00000000000000000500.snapshot.deleted", "00000000000000000600.snapshot.tmp",
				"leader-epoch-checkpoint", "700.snapshot",
			} {
				writeRaw(t, e.fs, filepath.Join(e.dir, name), []byte("x"))
			}
			require.NoError(t, e.fs.MkdirAll(filepath.Join(e.dir, FileName(800)))) // a directory

			offsets, err = List(e.fs, e.dir)
			require.NoError(t, err)
			assert.Equal(t, []int64{0, 1200, 99999999999}, offsets)

			for _, tc := range []struct {
				offset int64
				want   []Entry
			}{{0, []Entry{}}, {1200, goldenTwo}, {99999999999, goldenTwo[:1]}} {
				path := filepath.Join(e.dir, FileName(tc.offset))
				got, err := Read(e.fs, path)
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			}
			assert.Equal(t, readHex(t, "two-entries.hex"), readRaw(t, e.fs, filepath.Join(e.dir, FileName(1200))),
				"Write writes Encode's bytes")
			assert.Len(t, readRaw(t, e.fs, filepath.Join(e.dir, FileName(0))), 10)

			// Replacing a snapshot.
			require.NoError(t, Write(e.fs, e.dir, 1200, goldenTwo[1:]))
			got, err := Read(e.fs, filepath.Join(e.dir, FileName(1200)))
			require.NoError(t, err)
			assert.Equal(t, goldenTwo[1:], got)
			_, err = e.fs.Stat(filepath.Join(e.dir, FileName(1200)+".tmp"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "no temporary file left")
		})
	}
}

func TestReadErrors(t *testing.T) {
	for _, e := range filesystems(t) {
		t.Run(e.name, func(t *testing.T) {
			path := filepath.Join(e.dir, FileName(7))
			_, err := Read(e.fs, path)
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.NotErrorIs(t, err, ErrCorrupt)

			b := Encode(nil, goldenTwo)
			b[len(b)-1] ^= 1
			writeRaw(t, e.fs, path, b)
			_, err = Read(e.fs, path)
			require.ErrorIs(t, err, ErrCorrupt)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, path, ce.File)
			assert.Contains(t, err.Error(), path+": CRC mismatch")

			_, err = List(e.fs, filepath.Join(e.dir, "missing"))
			require.ErrorIs(t, err, fs.ErrNotExist)
		})
	}
}

func TestReadTooLarge(t *testing.T) {
	mem := vfs.NewMem()
	f, err := mem.Create("/big.snapshot")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(maxFileBytes+1)) // sparse: costs nothing
	require.NoError(t, f.Close())
	_, err = Read(mem, "/big.snapshot")
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "over the 268435456-byte limit")
}

func TestWriteInvalid(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/d"))
	err := Write(mem, "/d", -1, goldenTwo)
	require.ErrorIs(t, err, ErrInvalid)
	infos, err := mem.List("/d")
	require.NoError(t, err)
	assert.Empty(t, infos, "nothing written")

	require.ErrorIs(t, Write(mem, "/missing", 0, nil), fs.ErrNotExist)
}

func writeRaw(t *testing.T, fsys vfs.FS, path string, data []byte) {
	t.Helper()
	_ = fsys.Remove(path)
	f, err := fsys.Create(path)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func readRaw(t *testing.T, fsys vfs.FS, path string) []byte {
	t.Helper()
	f, err := fsys.Open(path)
	require.NoError(t, err)
	defer f.Close()
	size, err := f.Size()
	require.NoError(t, err)
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	require.Equal(t, len(b), n, "read %s: %v", path, err)
	return b
}
