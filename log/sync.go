package log

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/segment"
)

// syncState coordinates group commit: one caller fsyncs everything appended
// so far while later callers wait for that round, then check whether it
// covered them.
type syncState struct {
	mu      sync.Mutex
	running bool
	done    chan struct{} // closed when the running round ends
}

// Sync returns once every record below offset is durable: the segments that
// hold them fsynced and, if segments were created or removed since, the
// partition directory too. Concurrent callers share fsyncs (group commit).
// If ctx ends first, Sync returns its error; the data stays appended and
// becomes durable with the next flush.
func (l *Log) Sync(ctx context.Context, offset int64) error {
	for {
		if l.recoveryPoint.Load() >= offset {
			return nil
		}
		if err := l.checkOpen(); err != nil {
			return err
		}
		l.sync.mu.Lock()
		if l.sync.running {
			ch := l.sync.done
			l.sync.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		l.sync.running = true
		l.sync.done = make(chan struct{})
		l.sync.mu.Unlock()

		err := l.flushTo(l.LogEndOffset())

		l.sync.mu.Lock()
		l.sync.running = false
		close(l.sync.done)
		l.sync.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// Flush fsyncs everything appended so far. A done ctx returns its error at
// once, syncing nothing; an fsync under way is not interrupted.
func (l *Log) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.checkOpen(); err != nil {
		return err
	}
	return l.flushTo(l.LogEndOffset())
}

// flushLocked fsyncs everything below target holding the write lock
// throughout (the caller appends right after, or closes).
// REQUIRES l.mu held.
func (l *Log) flushLocked(target int64) error {
	w, err := l.beginFlushLocked()
	if err != nil {
		return err
	}
	if err := l.syncFlush(w, target); err != nil {
		return l.failFlushLocked(w, err)
	}
	l.flushed(target)
	return nil
}

// flushTo fsyncs everything below target without holding the write lock
// during the fsyncs, so that appends go on meanwhile.
func (l *Log) flushTo(target int64) error {
	l.mu.Lock()
	w, err := l.beginFlushLocked()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if err := l.syncFlush(w, target); err != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.failFlushLocked(w, err)
	}
	l.flushed(target) // lock-free: a durable append's group commit ends here
	return nil
}

// flushWork is what one flush takes from the log under its lock: the
// segments to fsync, and whether the directory and the last roll's
// snapshot need it too.
type flushWork struct {
	segs     []*segment.Segment
	dirDirty bool
	snapshot int64 // -1 for none
}

// beginFlushLocked takes the work of a flush. After a failed write or
// fsync the dirty pages may be gone: a second fsync could succeed without
// them, so none is made and nothing more is reported durable until the
// log is reopened. REQUIRES l.mu held.
func (l *Log) beginFlushLocked() (flushWork, error) {
	if failed := l.failed; failed != nil {
		return flushWork{}, l.perr(fmt.Errorf("%w: %w", ErrStorage, failed))
	}
	w := flushWork{segs: l.segs(), dirDirty: l.dirDirty, snapshot: l.unsyncedSnapshot}
	l.dirDirty = false
	l.unsyncedSnapshot = -1
	l.unflushedMessages = 0
	return w, nil
}

// syncFlush fsyncs the segments of w holding offsets in [recovery point,
// target), then the last roll's snapshot and the partition directory if w
// says so. It takes no lock.
func (l *Log) syncFlush(w flushWork, target int64) error {
	from := l.recoveryPoint.Load()
	var errs []error
	for i, s := range w.segs {
		end := target
		if i+1 < len(w.segs) {
			end = w.segs[i+1].BaseOffset()
		}
		if end <= from || s.BaseOffset() >= target {
			continue
		}
		if err := s.Flush(); err != nil && !l.removedSegment(s, err) {
			errs = append(errs, err)
		}
	}
	if w.snapshot >= 0 {
		// The snapshot of the last roll; retention may have removed it
		// since, and a later one replaces it.
		if err := snapshot.Sync(l.fsys, l.dir, w.snapshot); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	if w.dirDirty {
		if err := l.fsys.SyncDir(l.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// failFlushLocked ends a flush whose fsyncs failed: the partition fails
// (a failed fsync is never retried on the same dirty pages, see DESIGN.md,
// "Durability"). REQUIRES l.mu held.
func (l *Log) failFlushLocked(w flushWork, err error) error {
	l.dirDirty = l.dirDirty || w.dirDirty
	return l.failLocked("flush failed", "flush: ", err)
}

// flushed ends a flush that made everything below target durable: the
// recovery point moves there. It takes no lock.
func (l *Log) flushed(target int64) {
	for {
		rp := l.recoveryPoint.Load()
		if rp >= target || l.recoveryPoint.CompareAndSwap(rp, target) {
			break
		}
	}
	l.lastFlush.Store(l.now().UnixMilli())
}

// failLocked makes the partition refuse appends and fsyncs after a
// storage failure (keeping the first cause: what happened first is what
// the disk lost), logs it, and returns the error callers see: ErrStorage
// wrapping prefix and err. Every storage failure of a Log goes through it.
// REQUIRES l.mu held.
func (l *Log) failLocked(what, prefix string, err error) error {
	if l.failed == nil {
		l.failed = err
	}
	l.logger.Error(what+"; the partition refuses appends until its directory is reopened", "partition", l.tp(), "err", err)
	return l.perr(fmt.Errorf("%w: %s%w", ErrStorage, prefix, err))
}

// removedSegment reports a flush error of a segment that retention or a
// truncation removed meanwhile: nothing of it needs to be durable.
func (l *Log) removedSegment(s *segment.Segment, err error) bool {
	if !errors.Is(err, os.ErrClosed) && !errors.Is(err, vfs.ErrClosed) && !errors.Is(err, segment.ErrClosed) {
		return false
	}
	for _, cur := range l.segs() {
		if cur == s {
			return false
		}
	}
	return true
}
