package log

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// The remote log manager's cache of fetched copies, alone: a store and
// its copies, no Dir.

var copySegmentConfig = segment.Config{IndexIntervalBytes: 4096, MaxIndexBytes: 1 << 20, SegmentBytes: 1 << 20, Now: time.Now}

// storedCopy writes a segment of n batches of 5 records to mem and copies
// it to store, as a tiering pass does; it returns the copy's metadata.
func storedCopy(t *testing.T, mem *vfs.MemFS, store remote.StorageManager, id byte, n int) remote.SegmentMetadata {
	t.Helper()
	dir := filepath.Join("/src", string('a'+rune(id)))
	require.NoError(t, mem.MkdirAll(dir))
	s, err := segment.Create(mem, dir, 0, copySegmentConfig, 0)
	require.NoError(t, err)
	ts := time.Now().UnixMilli()
	for i := range n {
		b := producerBatch(t, 5, 100, ts, record.None)
		require.NoError(t, record.SetBaseOffset(b, int64(5*i)))
		h, err := record.Validate(b)
		require.NoError(t, err)
		require.NoError(t, s.Append(b, &h))
	}
	require.NoError(t, s.Seal())
	require.NoError(t, s.Close())
	var data remote.SegmentData
	for _, f := range []struct {
		src    *remote.Source
		suffix string
	}{{&data.Log, segment.LogSuffix}, {&data.OffsetIndex, segment.IndexSuffix}, {&data.TimeIndex, segment.TimeIndexSuffix}} {
		file, err := mem.Open(filepath.Join(dir, segment.FileName(0, f.suffix)))
		require.NoError(t, err)
		t.Cleanup(func() { file.Close() })
		size, err := file.Size()
		require.NoError(t, err)
		*f.src = remote.Source{R: file, Size: size}
	}
	data.ProducerSnapshot = remote.Source{R: emptyReaderAt{}, Size: 0}
	data.LeaderEpochIndex = epochCheckpointText([]remote.EpochStart{{LeaderEpoch: 0, StartOffset: 0}})
	m := remote.SegmentMetadata{ID: remote.SegmentID{Topic: "t", TopicID: remote.UUID{1}, ID: remote.UUID{id}},
		StartOffset: 0, EndOffset: int64(5*n - 1), MaxTimestamp: ts, SizeInBytes: int32(data.Log.Size), TxnIndexEmpty: true,
		LeaderEpochs: []remote.EpochStart{{LeaderEpoch: 0, StartOffset: 0}}, State: remote.CopySegmentFinished}
	_, err = store.CopyLogSegmentData(context.Background(), m, data)
	require.NoError(t, err)
	return m
}

type emptyReaderAt struct{}

func (emptyReaderAt) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }

// holdingStore counts a store's .log fetches and, for the first one
// while holdFirst is set, holds it until its context ends.
type holdingStore struct {
	remote.StorageManager
	holdFirst bool
	fetches   atomic.Int32
}

func (s *holdingStore) FetchLogSegment(ctx context.Context, m remote.SegmentMetadata, start, end int64) (io.ReadCloser, error) {
	if s.fetches.Add(1) == 1 && s.holdFirst {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.StorageManager.FetchLogSegment(ctx, m, start, end)
}

// TestRemoteCacheAlone: the cache fetches a copy once and serves it from
// its files after, opened as a read-only segment, pins it while a reader
// uses it, keeps the most recently used copy beyond its bound and evicts
// the others, and refuses loads once closed.
func TestRemoteCacheAlone(t *testing.T) {
	mem := vfs.NewMem()
	store := &holdingStore{StorageManager: remote.NewFileStore(mem, "/remote")}
	a, b := storedCopy(t, mem, store, 1, 4), storedCopy(t, mem, store, 2, 4)
	cache, err := newRemoteCache(mem, "/cache", 1, quiet)
	require.NoError(t, err)
	ctx := context.Background()

	e, hit, err := cache.acquire(ctx, store, a, wholeCopy, copySegmentConfig)
	require.NoError(t, err)
	require.False(t, hit)
	sl, err := e.seg.Read(7, 1<<20, segHooks.ReadableSize(e.seg), true)
	require.NoError(t, err)
	require.Equal(t, int64(5), sl.FirstOffset)
	require.Equal(t, int64(19), sl.LastOffset)
	sl.Release()
	again, hit, err := cache.acquire(ctx, store, a, wholeCopy, copySegmentConfig)
	require.NoError(t, err)
	require.True(t, hit)
	require.Same(t, e, again)
	require.Equal(t, int32(1), store.fetches.Load(), "fetched once")
	cache.release(again)
	cache.release(e)

	eb, _, err := cache.acquire(ctx, store, b, wholeCopy, copySegmentConfig)
	require.NoError(t, err)
	cache.release(eb)
	_, err = mem.Stat(e.dir)
	require.True(t, isNotExist(err), "a, unpinned and not the latest, is evicted past the 1-byte bound")
	_, err = mem.Stat(eb.dir)
	require.NoError(t, err, "the most recently used copy stays")

	cache.close()
	_, _, err = cache.acquire(ctx, store, a, wholeCopy, copySegmentConfig)
	require.ErrorIs(t, err, ErrClosed)
}

// TestRemoteCacheWaiterOutlivesACancelledFetch: a reader waiting for
// another's fetch of the same copy is not failed by the other's ctx
// ending: the other gets its ctx's error, and the waiter fetches the copy
// itself and reads it.
func TestRemoteCacheWaiterOutlivesACancelledFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		store := &holdingStore{StorageManager: remote.NewFileStore(mem, "/remote"), holdFirst: true}
		m := storedCopy(t, mem, store, 1, 4)
		cache, err := newRemoteCache(mem, "/cache", 1<<20, quiet)
		require.NoError(t, err)

		first, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var errFirst, errWaiter error
		var waiter *cacheEntry
		var hit bool
		wg.Go(func() { _, _, errFirst = cache.acquire(first, store, m, wholeCopy, copySegmentConfig) })
		synctest.Wait() // the first reader's fetch is held
		wg.Go(func() {
			waiter, hit, errWaiter = cache.acquire(context.Background(), store, m, wholeCopy, copySegmentConfig)
		})
		synctest.Wait() // the waiter waits for it
		cancel()
		wg.Wait()
		require.ErrorIs(t, errFirst, context.Canceled)
		require.NoError(t, errWaiter, "not the first reader's error")
		require.False(t, hit, "fetched by the waiter")
		require.Equal(t, int32(2), store.fetches.Load())
		sl, err := waiter.seg.Read(0, 1<<20, segHooks.ReadableSize(waiter.seg), true)
		require.NoError(t, err)
		require.Equal(t, int64(19), sl.LastOffset)
		sl.Release()
		cache.release(waiter)
		cache.close()
	})
}
