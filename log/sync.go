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

func (l *Log) flushLocked(target int64) error { return l.flushSegments(target, true) }

func (l *Log) flushTo(target int64) error { return l.flushSegments(target, false) }

// flushSegments fsyncs the segments holding offsets in [recovery point,
// target), then the partition directory if its entries changed, and moves
// the recovery point to target. The fsyncs run without the write lock
// unless the caller holds it already (locked).
func (l *Log) flushSegments(target int64, locked bool) error {
	if !locked {
		l.mu.Lock()
	}
	if failed := l.failed; failed != nil {
		// After a failed write or fsync the dirty pages may be gone: a
		// second fsync could succeed without them, so none is made and
		// nothing more is reported durable until the log is reopened.
		if !locked {
			l.mu.Unlock()
		}
		return l.perr(fmt.Errorf("%w: %w", ErrStorage, failed))
	}
	segs := l.segs()
	dirty := l.dirDirty
	l.dirDirty = false
	snap := l.unsyncedSnapshot
	l.unsyncedSnapshot = -1
	l.unflushedMessages = 0
	if !locked {
		l.mu.Unlock()
	}
	from := l.recoveryPoint.Load()
	var errs []error
	for i, s := range segs {
		end := target
		if i+1 < len(segs) {
			end = segs[i+1].BaseOffset()
		}
		if end <= from || s.BaseOffset() >= target {
			continue
		}
		if err := s.Flush(); err != nil && !l.removedSegment(s, err) {
			errs = append(errs, err)
		}
	}
	if snap >= 0 {
		// The snapshot of the last roll; retention may have removed it
		// since, and a later one replaces it.
		if err := snapshot.Sync(l.fsys, l.dir, snap); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	if dirty {
		if err := l.fsys.SyncDir(l.dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		// A failed fsync is never retried on the same dirty pages (see
		// DESIGN.md, "Durability"): the partition refuses appends until it
		// is reopened.
		if !locked {
			l.mu.Lock()
			defer l.mu.Unlock()
		}
		l.dirDirty = l.dirDirty || dirty
		if l.failed == nil {
			l.failed = err
		}
		return l.perr(fmt.Errorf("%w: flush: %w", ErrStorage, err))
	}
	for {
		rp := l.recoveryPoint.Load()
		if rp >= target || l.recoveryPoint.CompareAndSwap(rp, target) {
			break
		}
	}
	l.lastFlush.Store(l.now().UnixMilli())
	return nil
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
