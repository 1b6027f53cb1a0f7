package segment

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// overlapHeaderLen is the part of a batch that AppendOverlapped writes
// last: the base offset and the batch length.
const overlapHeaderLen = 12

// AppendOverlapped implements [LogHooks.AppendOverlapped].
func (logHooks) AppendOverlapped(s *Segment, batch []byte, check func() (record.BatchHeader, error)) error {
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	pos := s.log.size.Load()
	if len(batch) <= overlapHeaderLen || pos+int64(len(batch)) > maxLogBytes {
		h, err := check()
		if err != nil {
			return err
		}
		return s.Append(batch, &h)
	}
	a := &s.ahead
	gen := a.start(s.log.f, batch[overlapHeaderLen:], pos+overlapHeaderLen)
	go a.run(gen)
	// The new goroutine would wait on this P while check runs; yielding
	// lets another P take check over at once, and costs nothing when
	// there is none.
	yieldToAhead()
	h, cerr := check()
	written, werr := a.finish(gen, cerr == nil)
	takeBack := func(n int) error {
		if err := a.takeBack(pos, n, s.cfg.Preallocate); err != nil {
			s.failed = err
			return &Error{File: s.LogFile(), Position: pos, Err: err}
		}
		return nil
	}
	switch {
	case werr != nil:
		return s.failAppend(pos, werr)
	case cerr != nil:
		if err := takeBack(written); err != nil {
			return errors.Join(cerr, err)
		}
		return cerr
	}
	p, err := s.prepareAppend(batch, &h)
	if err != nil {
		if terr := takeBack(len(batch)); terr != nil {
			return errors.Join(err, terr)
		}
		return err
	}
	if _, err := s.log.f.WriteAt(batch[:overlapHeaderLen], pos); err != nil {
		return s.failAppend(pos, err)
	}
	return s.commitAppend(p, batch, &h)
}

// yieldToAhead is runtime.Gosched; a test stops it to have the caller
// claim the write.
var yieldToAhead = runtime.Gosched

// writeAhead is the segment's one write ahead of an AppendOverlapped.
// state holds the call's generation (its upper bits) and where the write
// is (the lowest two): pending until the goroutine or the caller claims it
// (running, or taken by the caller), then done. A goroutine of an earlier
// call that runs late finds another generation and leaves.
type writeAhead struct {
	state atomic.Uint64
	gen   uint64         // the caller's last generation; the writer's
	wg    sync.WaitGroup // the goroutines; the segment's Close waits
	done  chan struct{}  // capacity 1: the goroutine's write is done
	f     vfs.File
	body  []byte
	at    int64
	err   error // the goroutine's write, read after done
	taken int   // writes the caller claimed (for tests); the writer's
}

const (
	aheadPending = iota
	aheadRunning
	aheadTaken
)

// start readies the write of body at position at of f, for the goroutine
// (run) or the caller (finish), and returns its generation.
func (a *writeAhead) start(f vfs.File, body []byte, at int64) uint64 {
	if a.done == nil {
		a.done = make(chan struct{}, 1)
	}
	a.gen++
	a.f, a.body, a.at, a.err = f, body, at, nil
	a.state.Store(a.gen<<2 | aheadPending)
	a.wg.Add(1)
	return a.gen
}

// run is the goroutine: it writes the body unless the caller took it.
func (a *writeAhead) run(gen uint64) {
	defer a.wg.Done()
	if !a.state.CompareAndSwap(gen<<2|aheadPending, gen<<2|aheadRunning) {
		return
	}
	_, a.err = a.f.WriteAt(a.body, a.at)
	a.state.Store(gen<<2 | 3)
	a.done <- struct{}{}
}

// finish waits for the goroutine's write, or, when it has not started,
// claims it and writes the body itself if want (the check passed). It
// returns how many bytes past the segment's end may now be written.
func (a *writeAhead) finish(gen uint64, want bool) (n int, err error) {
	n = len(a.body) + overlapHeaderLen
	if a.state.CompareAndSwap(gen<<2|aheadPending, gen<<2|aheadTaken) {
		a.taken++
		if want {
			_, err = a.f.WriteAt(a.body, a.at)
		} else {
			n = 0
		}
	} else {
		<-a.done
		err = a.err
	}
	a.body = nil // the caller's batch is not kept
	return n, err
}

// takeBack restores the n bytes past the segment's end at pos that the
// write wrote (none when n is 0): the file ends at pos again, or, when
// preallocated, holds zeros there.
func (a *writeAhead) takeBack(pos int64, n int, preallocated bool) error {
	if n == 0 {
		return nil
	}
	if preallocated {
		_, err := a.f.WriteAt(make([]byte, n), pos)
		return err
	}
	return a.f.Truncate(pos)
}

// wait waits for the goroutines of earlier writes: one that lost to its
// caller may not have run yet.
func (a *writeAhead) wait() { a.wg.Wait() }
