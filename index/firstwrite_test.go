package index

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/fileio"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// writeCountingFS is the OS filesystem with files that still map (they
// hand out their *os.File) but count their WriteAt calls.
type writeCountingFS struct {
	vfs.FS
	writes *atomic.Int64
}

func (c writeCountingFS) Create(name string) (vfs.File, error) {
	f, err := c.FS.Create(name)
	return writeCountingFile{f, c.writes}, err
}

func (c writeCountingFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := c.FS.OpenReadWrite(name)
	return writeCountingFile{f, c.writes}, err
}

type writeCountingFile struct {
	vfs.File
	writes *atomic.Int64
}

func (f writeCountingFile) WriteAt(p []byte, off int64) (int, error) {
	f.writes.Add(1)
	return f.File.WriteAt(p, off)
}

func (f writeCountingFile) OSFile() *os.File { return fileio.OSFile(f.File) }

// TestFirstWriteOfAPageGoesThroughTheFile: a mapped index writes the entry
// that first reaches into a page with WriteAt (a write fault allocating a
// block costs milliseconds on some filesystems) and the others through
// the mapping, which sees the written ones at once; after a reopen the
// pages holding entries count as written.
func TestFirstWriteOfAPageGoesThroughTheFile(t *testing.T) {
	if !osMaps(t) || !fileio.WriteCoherent() {
		t.Skip("indexes are not mapped here, or written pages do not show in mappings")
	}
	writes := &atomic.Int64{}
	fsys := writeCountingFS{vfs.Default, writes}
	name := newTestFS(t, "os").path("00000000000000000000.timeindex")
	ix, err := CreateTimeIndex(fsys, name, 0, DefaultMaxIndexBytes)
	require.NoError(t, err)
	require.True(t, ix.Mapped())
	pages := func(entries int) int64 {
		return (int64(entries)*TimeIndexEntryBytes + pageSize - 1) / pageSize
	}
	for i := range 1000 {
		require.NoError(t, ix.MaybeAppend(int64(1000+i), int64(i), false))
	}
	require.Equal(t, pages(1000), writes.Load(), "one WriteAt per page reached")
	for i := range 1000 {
		e, err := ix.Entry(i)
		require.NoError(t, err)
		require.Equal(t, TimestampOffset{Timestamp: int64(1000 + i), Offset: int64(i)}, e, "entry %d through the mapping", i)
	}
	require.NoError(t, ix.Close())

	ix, err = OpenTimeIndex(fsys, name, 0, DefaultMaxIndexBytes, ReadWrite)
	require.NoError(t, err)
	require.Equal(t, 1000, ix.Entries())
	_, err = ix.Resize(DefaultMaxIndexBytes) // Close trimmed it; an active segment's index grows back
	require.NoError(t, err)
	for i := 1000; i < 1400; i++ {
		require.NoError(t, ix.MaybeAppend(int64(1000+i), int64(i), false))
	}
	require.Equal(t, pages(1400), writes.Load(), "the pages of the entries found at open are written ones")
	require.NoError(t, ix.TrimToValidSize())
	require.NoError(t, ix.Close())

	ro, err := OpenTimeIndex(vfs.Default, name, 0, DefaultMaxIndexBytes, ReadOnly)
	require.NoError(t, err)
	defer func() { require.NoError(t, ro.Close()) }()
	require.Equal(t, 1400, ro.Entries())
	for i := range 1400 {
		e, err := ro.Entry(i)
		require.NoError(t, err)
		require.Equal(t, TimestampOffset{Timestamp: int64(1000 + i), Offset: int64(i)}, e, "entry %d on disk", i)
	}
}
