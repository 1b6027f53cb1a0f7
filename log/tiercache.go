package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/segment"
)

// remoteCacheDir is where fetched copies are kept, inside the directory's
// remote-log-index-cache (which the Dir, as Kafka's LogManager, leaves
// alone when it scans for partitions).
const remoteCacheDir = "segments"

// cacheKind is what a cache entry holds of a copy.
type cacheKind uint8

const (
	// wholeCopy is a copy's .log and indexes, opened as a read-only
	// segment: what reads of records and timestamps use.
	wholeCopy cacheKind = iota
	// txnIndexOnly is a copy's .txnindex alone: what the aborted
	// transactions of a read_committed read need of the copies after the
	// one it reads (Kafka fetches only that index for them).
	txnIndexOnly
)

type cacheKey struct {
	id   remote.UUID
	kind cacheKind
}

// remoteCache keeps what reads fetched of the copies in the remote store:
// whole copies as read-only segments, and transaction indexes alone, at
// most remote.log.index.file.cache.total.size.bytes of them (their files'
// bytes), in a directory of their own per load, so that a segment evicted
// while a slice still reads it (its files go when the slice is released)
// never shares file names with a later load of the same copy.
//
// A reader pins the entry it uses ([remoteCache.acquire], then
// [remoteCache.release]): eviction never closes a pinned entry, and an
// entry dropped while pinned (its copy deleted from the store, or the Dir
// closing) is closed at its last release. When the bound is passed, the
// least recently used unpinned entries go, transaction indexes before
// whole copies; the most recently used whole copy stays even when it alone
// is over the bound (a partition whose segments are larger than the cache
// would otherwise fetch a copy again for every read). So the cache holds
// at most the bound, plus that copy, plus the entries pinned at the
// moment: one per read of remote data in progress. Slices of evicted
// copies that callers still hold keep those copies' files until they are
// released, as they keep a deleted local segment's.
type remoteCache struct {
	fsys   vfs.FS
	logger *slog.Logger
	root   string
	limit  int64

	mu      sync.Mutex // guards the fields below and every entry's pins, out, lastUse
	entries map[cacheKey]*cacheEntry
	size    int64 // bytes of the loaded entries in entries
	clock   int64 // use counter, for LRU
	loads   int64 // load counter, for directory names
	closed  bool
	// leftDirs are load directories an evicted segment's live slices still
	// used when it was freed: removed once empty, at a later free.
	leftDirs []string
}

type cacheEntry struct {
	key   cacheKey
	dir   string
	ready chan struct{} // closed once loaded (or failed)

	// Set by the loader under remoteCache.mu before ready is closed; a
	// reader reads them after ready without the lock, while it pins the
	// entry (only the last release frees them).
	seg  *segment.Segment // wholeCopy
	txn  *index.TxnIndex  // txnIndexOnly
	size int64
	err  error

	lastUse int64
	pins    int  // readers using the entry (its loader first)
	out     bool // dropped from entries: freed at its last release
}

// appendAbortedTxns is [index.TxnIndex.AppendAbortedTxns] over the entry's
// transaction index: the whole copy's, or the one fetched alone.
func (e *cacheEntry) appendAbortedTxns(dst []index.AbortedTxn, fetchOffset, upperBound int64) ([]index.AbortedTxn, bool, error) {
	if e.seg != nil {
		return e.seg.AppendAbortedTxns(dst, fetchOffset, upperBound)
	}
	return e.txn.AppendAbortedTxns(dst, fetchOffset, upperBound)
}

// newRemoteCache makes the cache in root, a directory of its own, holding
// at most limit bytes (remote.log.index.file.cache.total.size.bytes).
func newRemoteCache(fsys vfs.FS, root string, limit int64, logger *slog.Logger) (*remoteCache, error) {
	// What an earlier process cached is not trusted: fetched again.
	if err := fsys.RemoveAll(root); err != nil {
		return nil, err
	}
	if err := fsys.MkdirAll(root); err != nil {
		return nil, err
	}
	return &remoteCache{fsys: fsys, logger: logger, root: root, limit: limit, entries: map[cacheKey]*cacheEntry{}}, nil
}

// acquire returns the copy's entry of the kind, pinned, fetching it on a
// miss; hit says whether it was cached. The caller must release it. For
// txnIndexOnly, a cached whole copy is returned instead when there is one
// (its segment has the .txnindex). REQUIRES: for txnIndexOnly,
// !m.TxnIndexEmpty.
//
// ctx bounds the fetch from the store, and the wait for another reader's
// fetch of the same copy: a done ctx returns its error. A fetch that ended
// because its reader's ctx did is not the others' failure: a reader
// waiting for it fetches the copy itself.
func (c *remoteCache) acquire(ctx context.Context, store remote.StorageManager, m remote.SegmentMetadata, kind cacheKind,
	cfg segment.Config) (*cacheEntry, bool, error) {
	for {
		e, hit, err := c.acquireOnce(ctx, store, m, kind, cfg)
		if err != nil && hit && ctx.Err() == nil && isContextError(err) {
			continue // another reader's fetch, cut short by its ctx
		}
		return e, hit, err
	}
}

// isContextError reports an error of a context that ended.
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// acquireOnce is acquire once: hit is set when it waited for an entry
// another reader loads (or loaded), whatever the outcome.
func (c *remoteCache) acquireOnce(ctx context.Context, store remote.StorageManager, m remote.SegmentMetadata, kind cacheKind,
	cfg segment.Config) (*cacheEntry, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, false, ErrClosed
	}
	key := cacheKey{id: m.ID.ID, kind: kind}
	e, ok := c.entries[key]
	if kind == txnIndexOnly {
		if w, cached := c.entries[cacheKey{id: m.ID.ID, kind: wholeCopy}]; cached && w.seg != nil {
			e, ok = w, true
		}
	}
	if ok {
		c.clock++
		e.lastUse = c.clock
		e.pins++
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(e)
			return nil, false, ctx.Err()
		}
		if e.err != nil {
			c.release(e)
			return nil, true, e.err
		}
		return e, true, nil
	}
	c.loads++
	c.clock++
	e = &cacheEntry{key: key, ready: make(chan struct{}), lastUse: c.clock, pins: 1,
		dir: filepath.Join(c.root, m.ID.ID.String()+"-"+strconv.FormatInt(c.loads, 10))}
	c.entries[key] = e
	c.mu.Unlock()

	var (
		seg  *segment.Segment
		txn  *index.TxnIndex
		size int64
		err  error
	)
	if kind == wholeCopy {
		seg, size, err = c.loadCopy(ctx, store, m, cfg, e.dir)
	} else {
		txn, size, err = c.loadTxnIndex(ctx, store, m, e.dir)
	}
	c.mu.Lock()
	e.seg, e.txn, e.size = seg, txn, size
	if err != nil {
		e.err = err
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		e.out = true
		if rerr := c.fsys.RemoveAll(e.dir); rerr != nil {
			c.logger.Warn("tiered storage: removing a failed load from the cache failed", "dir", e.dir, "err", rerr)
		}
	} else if !e.out {
		c.size += e.size
	}
	c.mu.Unlock()
	close(e.ready)
	if err != nil {
		c.release(e)
		return nil, false, err
	}
	return e, false, nil
}

// release unpins an entry acquire returned. The last release of an entry
// dropped meanwhile frees it; otherwise the cache goes back within its
// bound.
func (c *remoteCache) release(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.pins--
	if e.pins > 0 {
		return
	}
	if e.out {
		c.freeLocked(e)
		return
	}
	c.evictLocked()
}

// loadCopy fetches the copy's .log and indexes into dir and opens them as
// a segment.
func (c *remoteCache) loadCopy(ctx context.Context, store remote.StorageManager, m remote.SegmentMetadata, cfg segment.Config, dir string) (*segment.Segment, int64, error) {
	fsys := c.fsys
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, 0, err
	}
	var total int64
	fetch := func(suffix string, open func() (io.ReadCloser, error), limit int64) error {
		n, err := c.fetchFile(filepath.Join(dir, segment.FileName(m.StartOffset, suffix)), open, limit)
		total += n
		return err
	}
	err := fetch(segment.LogSuffix, func() (io.ReadCloser, error) { return store.FetchLogSegment(ctx, m, 0, -1) }, -1)
	if err == nil {
		err = fetch(segment.IndexSuffix, func() (io.ReadCloser, error) { return store.FetchIndex(ctx, m, remote.OffsetIndex) }, -1)
	}
	if err == nil {
		err = fetch(segment.TimeIndexSuffix, func() (io.ReadCloser, error) { return store.FetchIndex(ctx, m, remote.TimeIndex) }, -1)
	}
	if err == nil && !m.TxnIndexEmpty {
		err = fetch(segment.TxnIndexSuffix, func() (io.ReadCloser, error) {
			return store.FetchIndex(ctx, m, remote.TransactionIndex)
		}, txnIndexLimit(m))
		if err == nil {
			var txn *index.TxnIndex
			if txn, err = openTxnIndexCopy(fsys, dir, m); err == nil {
				err = txn.Close()
			}
		}
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
	segHooks.SetNextBaseOffset(s, m.EndOffset+1)
	segHooks.MarkTxnIndexVerified(s)
	return s, total, nil
}

// loadTxnIndex fetches the copy's .txnindex alone into dir, opens it and
// checks every entry ([index.TxnIndex.Validate]): one entry per ABORT
// marker of the copy, so at most that many bytes are read.
func (c *remoteCache) loadTxnIndex(ctx context.Context, store remote.StorageManager, m remote.SegmentMetadata, dir string) (*index.TxnIndex, int64, error) {
	fsys := c.fsys
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, 0, err
	}
	name := filepath.Join(dir, segment.FileName(m.StartOffset, segment.TxnIndexSuffix))
	n, err := c.fetchFile(name, func() (io.ReadCloser, error) { return store.FetchIndex(ctx, m, remote.TransactionIndex) }, txnIndexLimit(m))
	var txn *index.TxnIndex
	if err == nil {
		txn, err = openTxnIndexCopy(fsys, dir, m)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("tiered storage: fetching the transaction index of %s (offsets %d to %d): %w",
			m.ID, m.StartOffset, m.EndOffset, err)
	}
	return txn, n, nil
}

// txnIndexLimit is the largest .txnindex the copy can have: an entry per
// ABORT marker, so one per offset at most.
func txnIndexLimit(m remote.SegmentMetadata) int64 {
	return (m.EndOffset - m.StartOffset + 1) * index.AbortedTxnBytes
}

// openTxnIndexCopy opens a fetched .txnindex in dir and checks every entry
// against the copy's offsets ([index.TxnIndex.Validate]): damage is
// [remote.ErrCorrupt], never a wrong list of aborted transactions.
func openTxnIndexCopy(fsys vfs.FS, dir string, m remote.SegmentMetadata) (*index.TxnIndex, error) {
	txn, err := index.OpenTxnIndex(fsys, filepath.Join(dir, segment.FileName(m.StartOffset, segment.TxnIndexSuffix)),
		m.StartOffset, index.ReadOnly)
	if err != nil {
		return nil, err
	}
	if err := txn.Validate(m.EndOffset + 1); err != nil {
		return nil, errors.Join(fmt.Errorf("%w: %w", remote.ErrCorrupt, err), txn.Close())
	}
	return txn, nil
}

// fetchFile copies what open returns into a new file name: at most limit
// bytes (none when negative), more being [remote.ErrCorrupt].
func (c *remoteCache) fetchFile(name string, open func() (io.ReadCloser, error), limit int64) (int64, error) {
	r, err := open()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	f, err := c.fsys.Create(name)
	if err != nil {
		return 0, err
	}
	var src io.Reader = r
	if limit >= 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, err := io.Copy(f, src)
	if err == nil && limit >= 0 && n > limit {
		err = fmt.Errorf("%w: %s: more than the %d bytes it can have", remote.ErrCorrupt, filepath.Base(name), limit)
	}
	return n, errors.Join(err, f.Close())
}

// evictLocked drops unpinned entries until the cache is within its limit:
// the least recently used transaction indexes first, then the least
// recently used whole copies but the most recently used one.
func (c *remoteCache) evictLocked() {
	for c.size > c.limit {
		var newest *cacheEntry // the most recently used whole copy
		for _, e := range c.entries {
			if e.key.kind == wholeCopy && (newest == nil || e.lastUse > newest.lastUse) {
				newest = e
			}
		}
		var victim *cacheEntry
		for _, e := range c.entries {
			if e.pins > 0 || e == newest {
				continue
			}
			if victim == nil || e.key.kind > victim.key.kind ||
				(e.key.kind == victim.key.kind && e.lastUse < victim.lastUse) {
				victim = e
			}
		}
		if victim == nil {
			return
		}
		c.dropLocked(victim)
	}
}

// dropLocked takes an entry out of the cache: freed now if no reader pins
// it, else at its last release.
func (c *remoteCache) dropLocked(e *cacheEntry) {
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
	if e.out {
		return
	}
	e.out = true
	loaded := e.seg != nil || e.txn != nil
	if loaded {
		c.size -= e.size
	}
	if e.pins == 0 {
		c.freeLocked(e)
	}
}

// freeLocked closes a dropped entry and removes its files (a segment's
// .log stays while a slice of it is live, and goes at its release).
func (c *remoteCache) freeLocked(e *cacheEntry) {
	fsys := c.fsys
	var err error
	switch {
	case e.seg != nil:
		err = e.seg.Remove()
		if rerr := fsys.Remove(e.dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			c.leftDirs = append(c.leftDirs, e.dir) // a live slice's files are in it
		}
	case e.txn != nil:
		err = errors.Join(e.txn.Close(), fsys.RemoveAll(e.dir))
	}
	e.seg, e.txn = nil, nil
	if err != nil {
		c.logger.Warn("tiered storage: removing a cached copy failed", "dir", e.dir, "err", err)
	}
	left := c.leftDirs[:0]
	for _, dir := range c.leftDirs {
		if rerr := fsys.Remove(dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			left = append(left, dir)
		}
	}
	c.leftDirs = left
}

// forget drops a copy from the cache (it was deleted from the store).
func (c *remoteCache) forget(id remote.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kind := range []cacheKind{wholeCopy, txnIndexOnly} {
		if e, ok := c.entries[cacheKey{id: id, kind: kind}]; ok {
			c.dropLocked(e)
		}
	}
}

// close drops every entry (those pinned go at their last release) and
// refuses later loads with ErrClosed.
func (c *remoteCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, e := range c.entries {
		c.dropLocked(e)
	}
}
