package log

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/segment"
)

// groupCommit coordinates the fsyncs of one partition (group commit):
// one caller fsyncs everything appended so far while later callers wait
// for that round, then check whether it covered them.
type groupCommit struct {
	mu      sync.Mutex // protects the fields below; never held during an fsync
	running bool
	done    chan struct{} // closed when the running round ends
}

// await returns once covered reports true, running round (which fsyncs
// everything appended when it starts) whenever no other caller runs one,
// or when ctx ends (its error), or round or check fail (their error).
// check runs before each look at the state of the rounds.
func (g *groupCommit) await(ctx context.Context, covered func() bool, check func() error, round func() error) error {
	for {
		if covered() {
			return nil
		}
		if err := check(); err != nil {
			return err
		}
		g.mu.Lock()
		if g.running {
			ch := g.done
			g.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		g.running = true
		g.done = make(chan struct{})
		g.mu.Unlock()

		err := round()

		g.mu.Lock()
		g.running = false
		close(g.done)
		g.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// Sync returns once every record below offset is durable: the .log files
// that hold them fsynced and, if segments were created or removed since,
// the partition directory too. Concurrent callers share fsyncs (group
// commit). If ctx ends first, Sync returns its error; the data stays
// appended and becomes durable with the next flush.
//
// The active segment's indexes are not fsynced for it, only those of
// segments sealed since the last flush: the recovery point
// ([Log.RecoveryPoint]), above which a restart after a crash rescans the
// .log and rebuilds the indexes, moves to the active segment's base
// offset. [Log.Flush] fsyncs the indexes too and moves it to the log end.
func (l *Log) Sync(ctx context.Context, offset int64) error {
	return l.local.commits.await(ctx, func() bool { return l.local.durable.Load() >= offset }, l.local.checkOpen,
		func() error { return l.syncTo(l.LogEndOffset(), false) })
}

// Flush fsyncs everything appended so far, indexes included, and moves
// the recovery point to the log end. A done ctx returns its error at once,
// syncing nothing; an fsync under way is not interrupted.
func (l *Log) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.local.checkOpen(); err != nil {
		return err
	}
	return l.syncTo(l.LogEndOffset(), true)
}

// flushLocked fsyncs everything below target holding the write lock
// throughout (the caller appends right after, or closes).
// REQUIRES l.mu held.
func (l *Log) flushLocked(target int64) error {
	w, err := l.local.beginFlushLocked(l.producers)
	if err != nil {
		return err
	}
	rp, err := l.local.syncFlush(w, target, true)
	if err != nil {
		return l.local.failFlushLocked(w, err)
	}
	l.local.flushed(target, rp, true)
	return nil
}

// syncTo fsyncs everything below target without holding the write lock
// during the fsyncs, so that appends go on meanwhile: all of it with full,
// else the data (see Sync).
func (l *Log) syncTo(target int64, full bool) error {
	l.mu.Lock()
	w, err := l.local.beginFlushLocked(l.producers)
	l.mu.Unlock()
	if err != nil {
		return err
	}
	rp, err := l.local.syncFlush(w, target, full)
	if err != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.local.failFlushLocked(w, err)
	}
	l.local.flushed(target, rp, full) // lock-free: a durable append's group commit ends here
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

// beginFlushLocked takes the work of a flush, with the producer snapshot
// ps wrote at the last roll and did not sync. After a failed write or
// fsync the dirty pages may be gone: a second fsync could succeed without
// them, so none is made and nothing more is reported durable until the
// log is reopened.
func (ll *localLog) beginFlushLocked(ps *producerStateManager) (flushWork, error) {
	if failed := ll.failed; failed != nil {
		return flushWork{}, ll.tp.wrap(fmt.Errorf("%w: %w", ErrStorage, failed))
	}
	w := flushWork{segs: ll.segs(), dirDirty: ll.dirDirty, snapshot: ps.takeUnsyncedLocked()}
	ll.dirDirty = false
	ll.unflushedMessages = 0
	return w, nil
}

// syncFlush fsyncs the segments of w holding offsets in [recovery point,
// target), then the last roll's snapshot and the partition directory if w
// says so, and returns the recovery point this makes true. With full every
// segment's .log and indexes are fsynced, and the recovery point is
// target; otherwise the last segment of w (the active one when the flush
// began) has its .log fsynced alone, if it holds offsets not yet durable,
// and the recovery point stops at its base offset. It takes no lock.
func (ll *localLog) syncFlush(w flushWork, target int64, full bool) (int64, error) {
	from, durable := ll.recoveryPoint.Load(), ll.durable.Load()
	rp := target
	var errs []error
	for i, s := range w.segs {
		end := target
		last := i+1 == len(w.segs)
		if !last {
			end = w.segs[i+1].BaseOffset()
		}
		if end <= from || s.BaseOffset() >= target {
			continue
		}
		var err error
		switch {
		case full || !last:
			err = s.Flush()
		case end > durable:
			err = s.FlushData()
		}
		if !full && last {
			rp = s.BaseOffset()
		}
		if err != nil && !ll.removedSegment(s, err) {
			errs = append(errs, err)
		}
	}
	if w.snapshot >= 0 {
		// The snapshot of the last roll; retention may have removed it
		// since, and a later one replaces it.
		if err := snapshot.Sync(ll.fsys, ll.dir, w.snapshot); err != nil && !isNotExist(err) {
			errs = append(errs, err)
		}
	}
	if w.dirDirty {
		if err := ll.fsys.SyncDir(ll.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return rp, errors.Join(errs...)
}

// failFlushLocked ends a flush whose fsyncs failed: the partition fails
// (a failed fsync is never retried on the same dirty pages, see DESIGN.md,
// "Durability").
func (ll *localLog) failFlushLocked(w flushWork, err error) error {
	ll.dirDirty = ll.dirDirty || w.dirDirty
	return ll.failLocked("flush failed", "flush: ", err)
}

// flushed ends a flush that made everything below target durable, and
// the indexes below rp: the durable offset and the recovery point move
// there (neither ever back). A full flush is the last flush of flush.ms.
// It takes no lock.
func (ll *localLog) flushed(target, rp int64, full bool) {
	raise(&ll.durable, target)
	raise(&ll.recoveryPoint, rp)
	if full {
		ll.lastFlush.Store(ll.now().UnixMilli())
	}
}

// raise moves v up to x unless it is there already.
func raise(v *atomic.Int64, x int64) {
	for {
		cur := v.Load()
		if cur >= x || v.CompareAndSwap(cur, x) {
			return
		}
	}
}

// removedSegment reports a flush error of a segment that retention or a
// truncation removed meanwhile: nothing of it needs to be durable.
func (ll *localLog) removedSegment(s *segment.Segment, err error) bool {
	if !errors.Is(err, os.ErrClosed) && !errors.Is(err, vfs.ErrClosed) && !errors.Is(err, segment.ErrClosed) {
		return false
	}
	for _, cur := range ll.segs() {
		if cur == s {
			return false
		}
	}
	return true
}
