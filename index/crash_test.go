package index

import (
	"io/fs"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// TestOffsetIndexCrashRecovery crashes the memory filesystem at points of an
// index's life and checks that the reopened active index holds exactly the
// entries flushed before the crash.
func TestOffsetIndexCrashRecovery(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p"))
	require.NoError(t, mem.SyncDir("/"))
	ix, err := CreateOffsetIndex(mem, "/p/0.index", 0, 1024)
	require.NoError(t, err)
	require.NoError(t, mem.SyncDir("/p"))

	var flushed []OffsetPosition
	crashes := []*vfs.MemFS{mem.CrashClone()}
	want := [][]OffsetPosition{nil}
	for i := range 20 {
		require.NoError(t, ix.Append(int64(i*10+5), Position(i*5000+1)))
		if i%3 == 2 {
			require.NoError(t, ix.Flush())
			flushed, err = ix.AppendEntries(nil)
			require.NoError(t, err)
		}
		crashes = append(crashes, mem.CrashClone())
		want = append(want, flushed)
	}
	require.NoError(t, ix.Close())

	for i, crashed := range crashes {
		ix, err := OpenOffsetIndex(crashed, "/p/0.index", 0, 1024, ReadWrite)
		require.NoError(t, err, "crash %d", i)
		require.NoError(t, ix.SanityCheck())
		got, err := ix.AppendEntries(nil)
		require.NoError(t, err)
		require.Equal(t, want[i], got, "crash %d", i)
		require.NoError(t, ix.Close())
	}
}

// TestOffsetIndexWriteFailures injects I/O errors under the fallback path
// and checks that a failed write is sticky.
func TestOffsetIndexWriteFailures(t *testing.T) {
	tests := []struct {
		name string
		rule vfs.Rule
		act  func(ix *OffsetIndex) error
	}{
		{name: "preallocate", rule: vfs.ENOSPC(vfs.OpTruncate, "f.index", 1)},
		{name: "append", rule: vfs.EIO(vfs.OpWrite, "f.index", 2), act: func(ix *OffsetIndex) error { return ix.Append(20, 2) }},
		{name: "flush", rule: vfs.EIO(vfs.OpSync, "f.index", 1), act: func(ix *OffsetIndex) error { return ix.Flush() }},
		{name: "trim", rule: vfs.EIO(vfs.OpTruncate, "f.index", 2), act: func(ix *OffsetIndex) error { return ix.TrimToValidSize() }},
		{name: "truncate", rule: vfs.EIO(vfs.OpWrite, "f.index", 2), act: func(ix *OffsetIndex) error { return ix.TruncateTo(0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			ffs := vfs.NewFaultFS(mem)
			ffs.Inject(tc.rule)
			ix, err := CreateOffsetIndex(ffs, "f.index", 0, 64)
			if tc.act == nil {
				require.ErrorIs(t, err, vfs.ErrInjected)
				_, err := mem.Stat("f.index")
				require.ErrorIs(t, err, fs.ErrNotExist, "a failed Create removes its file")
				return
			}
			require.NoError(t, err)
			require.NoError(t, ix.Append(10, 1))
			first := tc.act(ix)
			require.ErrorIs(t, first, vfs.ErrInjected)
			// Sticky: every later mutation returns the first error.
			require.ErrorIs(t, ix.Append(30, 3), vfs.ErrInjected)
			require.ErrorIs(t, ix.Flush(), vfs.ErrInjected)
			// Lookups still work.
			got, err := ix.Lookup(10)
			require.NoError(t, err)
			assert.Equal(t, OffsetPosition{10, 1}, got)
			require.NoError(t, ix.Close(), "close skips the trim of a failed index")
		})
	}
}

// TestOffsetIndexConcurrentLookups runs lookups while entries are appended
// and the index is resized; run with -race.
func TestOffsetIndexConcurrentLookups(t *testing.T) {
	forEachFS(t, func(t *testing.T, e testFS) {
		ix := createOffsetIndex(t, e, "c.index", 0, 4096)
		defer func() { require.NoError(t, ix.Close()) }()
		var wg sync.WaitGroup
		done := make(chan struct{})
		for r := range 3 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					got, err := ix.Lookup(int64(i*7 + r))
					if !assert.NoError(t, err) {
						return
					}
					// Entries are (10k, 100k): a found entry is consistent.
					assert.Equal(t, int64(got.Position), got.Offset*10)
				}
			})
		}
		for i := 1; i <= 300; i++ {
			require.NoError(t, ix.Append(int64(i*10), Position(i*100)))
			if i == 150 {
				require.NoError(t, ix.TrimToValidSize())
				_, err := ix.Resize(4096)
				require.NoError(t, err)
			}
		}
		close(done)
		wg.Wait()
	})
}

func TestTimeIndexCrashRecovery(t *testing.T) {
	mem := vfs.NewMem()
	require.NoError(t, mem.SyncDir("/"))
	ix, err := CreateTimeIndex(mem, "/0.timeindex", 0, 1200)
	require.NoError(t, err)
	require.NoError(t, mem.SyncDir("/"))
	var flushed []TimestampOffset
	for i := range 30 {
		require.NoError(t, ix.MaybeAppend(int64(1000+i*10), int64(i*3), false))
		if i%4 == 1 {
			require.NoError(t, ix.Flush())
			flushed, err = ix.AppendEntries(nil)
			require.NoError(t, err)
		}
		crashed, err := OpenTimeIndex(mem.CrashClone(), "/0.timeindex", 0, 1200, ReadWrite)
		require.NoError(t, err)
		require.NoError(t, crashed.SanityCheck())
		got, err := crashed.AppendEntries(nil)
		require.NoError(t, err)
		require.Equal(t, flushed, got, "crash after entry %d", i)
		require.NoError(t, crashed.Close())
	}
	require.NoError(t, ix.Close())
}
