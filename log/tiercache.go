package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/segment"
)

// remoteCacheDir is where fetched copies are kept, inside the directory's
// remote-log-index-cache (which the Dir, as Kafka's LogManager, leaves
// alone when it scans for partitions).
const remoteCacheDir = "segments"

// remoteCache keeps copies fetched from the remote store as read-only
// segments, at most remote.log.index.file.cache.total.size.bytes of them
// (their .log and indexes), evicting the least recently used. Each load
// gets a directory of its own, so that a segment evicted while a read
// still holds a slice of it (its files go when the slice is released) never
// shares file names with a later load of the same copy.
type remoteCache struct {
	d     *Dir
	root  string
	limit int64

	mu      sync.Mutex
	entries map[remote.UUID]*cacheEntry
	size    int64
	clock   int64 // use counter, for LRU
	loads   int64 // load counter, for directory names
}

type cacheEntry struct {
	seg     *segment.Segment
	size    int64
	dir     string
	lastUse int64
	ready   chan struct{} // closed once loaded (or failed)
	err     error
}

func newRemoteCache(d *Dir) (*remoteCache, error) {
	root := filepath.Join(d.path, remoteIndexCacheDir, remoteCacheDir)
	// What an earlier process cached is not trusted: fetched again.
	if err := d.fsys.RemoveAll(root); err != nil {
		return nil, err
	}
	if err := d.fsys.MkdirAll(root); err != nil {
		return nil, err
	}
	return &remoteCache{d: d, root: root, limit: d.cfg.RemoteLogIndexFileCacheTotalSize,
		entries: map[remote.UUID]*cacheEntry{}}, nil
}

// get returns the copy's segment, fetching it on a miss; hit says whether
// it was cached.
func (c *remoteCache) get(ctx context.Context, store remote.StorageManager, m remote.SegmentMetadata, cfg segment.Config) (*segment.Segment, bool, error) {
	c.mu.Lock()
	e, ok := c.entries[m.ID.ID]
	if ok {
		c.clock++
		e.lastUse = c.clock
		c.mu.Unlock()
		<-e.ready
		if e.err != nil {
			return nil, false, e.err
		}
		return e.seg, true, nil
	}
	c.loads++
	c.clock++
	e = &cacheEntry{ready: make(chan struct{}), lastUse: c.clock,
		dir: filepath.Join(c.root, m.ID.ID.String()+"-"+strconv.FormatInt(c.loads, 10))}
	c.entries[m.ID.ID] = e
	c.mu.Unlock()

	seg, size, err := c.load(ctx, store, m, cfg, e.dir)
	c.mu.Lock()
	e.seg, e.size, e.err = seg, size, err
	if err != nil {
		delete(c.entries, m.ID.ID)
		_ = c.d.fsys.RemoveAll(e.dir)
	} else {
		c.size += size
		c.evictLocked(m.ID.ID)
	}
	c.mu.Unlock()
	close(e.ready)
	return seg, false, err
}

// load fetches the copy's .log and indexes into dir and opens them as a
// segment.
func (c *remoteCache) load(ctx context.Context, store remote.StorageManager, m remote.SegmentMetadata, cfg segment.Config, dir string) (*segment.Segment, int64, error) {
	fsys := c.d.fsys
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, 0, err
	}
	var total int64
	fetch := func(suffix string, open func() (io.ReadCloser, error)) error {
		r, err := open()
		if err != nil {
			return err
		}
		defer r.Close()
		f, err := fsys.Create(filepath.Join(dir, segment.FileName(m.StartOffset, suffix)))
		if err != nil {
			return err
		}
		n, err := io.Copy(f, r)
		total += n
		return errors.Join(err, f.Close())
	}
	err := fetch(".log", func() (io.ReadCloser, error) { return store.FetchLogSegment(ctx, m, 0, -1) })
	if err == nil {
		err = fetch(".index", func() (io.ReadCloser, error) { return store.FetchIndex(ctx, m, remote.OffsetIndex) })
	}
	if err == nil {
		err = fetch(".timeindex", func() (io.ReadCloser, error) { return store.FetchIndex(ctx, m, remote.TimeIndex) })
	}
	if err == nil && !m.TxnIndexEmpty {
		err = fetch(".txnindex", func() (io.ReadCloser, error) { return store.FetchIndex(ctx, m, remote.TransactionIndex) })
	}
	if err == nil && total < int64(m.SizeInBytes) {
		err = fmt.Errorf("%w: %s: %d bytes fetched, the copy has %d", remote.ErrCorrupt, m.ID, total, m.SizeInBytes)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("tiered storage: fetching %s (offsets %d to %d): %w", m.ID, m.StartOffset, m.EndOffset, err)
	}
	s, err := segment.Open(fsys, dir, m.StartOffset, cfg, segment.OpenOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("tiered storage: opening the fetched %s: %w", m.ID, err)
	}
	s.SetNextBaseOffset(m.EndOffset + 1)
	s.MarkTxnIndexVerified()
	return s, total, nil
}

// evictLocked drops the least recently used entries, never keep, until
// the cache is within its limit.
func (c *remoteCache) evictLocked(keep remote.UUID) {
	for c.size > c.limit {
		var victim remote.UUID
		var oldest *cacheEntry
		for id, e := range c.entries {
			if id == keep || e.seg == nil {
				continue
			}
			if oldest == nil || e.lastUse < oldest.lastUse {
				victim, oldest = id, e
			}
		}
		if oldest == nil {
			return
		}
		c.dropLocked(victim, oldest)
	}
}

func (c *remoteCache) dropLocked(id remote.UUID, e *cacheEntry) {
	delete(c.entries, id)
	c.size -= e.size
	if err := e.seg.Remove(); err != nil {
		c.d.logger.Warn("tiered storage: removing a cached segment failed", "dir", e.dir, "err", err)
	}
}

// forget drops a copy from the cache (it was deleted from the store).
func (c *remoteCache) forget(id remote.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[id]; ok && e.seg != nil {
		c.dropLocked(id, e)
	}
}

// close removes every cached segment.
func (c *remoteCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.entries {
		if e.seg != nil {
			c.dropLocked(id, e)
		}
	}
}
