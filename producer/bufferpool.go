package producer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// Errors of the buffer pool; only ErrBufferExhausted reaches a caller of
// Send (the others are answered before, or as ErrClosed).
var (
	// ErrBufferExhausted: buffer memory did not become free within
	// max.block.ms (Kafka's BufferExhaustedException). Returned as a
	// [*BufferExhaustedError].
	ErrBufferExhausted = errors.New("producer: buffer memory exhausted")
	// errBufferTooLarge: a request for more bytes than the pool's whole
	// memory (buffer.memory), which could never be met. It fails at once.
	errBufferTooLarge = errors.New("producer: buffer larger than buffer.memory")
	// errPoolClosed: the pool was closed, before or while the caller waited.
	errPoolClosed = errors.New("producer: buffer pool closed")
)

// BufferExhaustedError reports an allocation that timed out, with the
// pool's state when it gave up. It matches [ErrBufferExhausted] and, being
// a timeout (Kafka's BufferExhaustedException is a TimeoutException),
// os.ErrDeadlineExceeded; its Timeout method returns true.
type BufferExhaustedError struct {
	Size            int           // bytes requested
	MaxBlock        time.Duration // how long the caller was willing to wait
	TotalMemory     int64         // the pool's buffer.memory
	AvailableMemory int64         // free list plus non-pooled budget when it gave up
	PoolableSize    int           // the size the pool recycles (batch.size)
}

func (e *BufferExhaustedError) Error() string {
	return fmt.Sprintf("producer: buffer memory exhausted: failed to allocate %d bytes within max.block.ms=%d"+
		" (buffer.memory %d, available %d, poolable size %d)",
		e.Size, e.MaxBlock.Milliseconds(), e.TotalMemory, e.AvailableMemory, e.PoolableSize)
}

// Is matches ErrBufferExhausted.
func (e *BufferExhaustedError) Is(target error) bool { return target == ErrBufferExhausted }

// Unwrap returns os.ErrDeadlineExceeded: the wait's deadline passed.
func (e *BufferExhaustedError) Unwrap() error { return os.ErrDeadlineExceeded }

// Timeout reports true: the error is a timeout.
func (e *BufferExhaustedError) Timeout() bool { return true }

// bufferPool is Kafka's producer BufferPool (BufferPool.java): it bounds
// the memory of the batches a producer holds to totalMemory
// (buffer.memory), and recycles buffers of one size, poolableSize
// (batch.size), through a free list.
//
// # Accounting
//
// Every byte of totalMemory is in exactly one place: in a pooled buffer on
// the free list, in the non-pooled budget (memory not backed by a buffer),
// reserved by a waiter, or handed out. A request of exactly poolableSize
// takes a buffer from the free list when there is one; any other request,
// and a poolable one when the free list is empty, is carved out of the
// non-pooled budget, first dropping pooled buffers (to the garbage
// collector) to make room. Deallocate puts a buffer of
// capacity poolableSize back on the free list and credits any other to the
// budget.
//
// # Waiting and fairness
//
// When memory is short, Allocate waits: strictly first come, first served.
// The waiter at the head of the queue receives memory as it is released,
// accumulating it until it has enough (Kafka's "all memory is given to the
// longest waiting thread"), so a large request is not starved by small
// ones; no request is served, even one that would fit, while an earlier one
// waits. Memory is handed to waiters by the goroutine that releases it,
// under the pool's lock, and each waiter is woken once, through its own
// channel, when its request is complete. A waiter that times out or whose
// context ends leaves the queue and returns what it had accumulated, which
// then goes to the next waiter.
//
// A bufferPool is safe for concurrent use. It starts no goroutines. In
// steady state, Allocate and Deallocate of poolable buffers do not
// allocate; a caller that has to wait allocates its waiter, channel and
// timer.
type bufferPool struct {
	totalMemory  int64
	poolableSize int

	mu struct {
		sync.Mutex
		// free holds pooled buffers, each of capacity poolableSize and
		// length 0, used as a stack.
		free [][]byte
		// nonPooled is the budget not backed by a buffer and not reserved:
		// Kafka's nonPooledAvailableMemory.
		nonPooled int64
		// allocated counts the bytes handed out and not yet returned.
		allocated int64
		// waiters is the FIFO queue of blocked Allocate calls; waiters[0]
		// is the head, the only one that receives memory.
		waiters []*bufferWaiter
		closed  bool
	}
}

// bufferWaiter is one blocked Allocate call. Its fields are guarded by the
// pool's mu.
type bufferWaiter struct {
	size int
	// accumulated is the memory reserved for it so far, taken from the
	// non-pooled budget.
	accumulated int64
	// buf is a pooled buffer handed over whole (accumulated is then size
	// and the budget holds nothing for it).
	buf     []byte
	granted bool  // the request is complete and counted as allocated
	err     error // ErrPoolClosed: the pool closed while it waited
	// ready receives one value when granted or err is set. Buffered, so
	// the releasing goroutine never blocks on it.
	ready chan struct{}
}

// newBufferPool returns a pool of totalMemory bytes (buffer.memory) that
// recycles buffers of poolableSize bytes (batch.size). A poolableSize of 0
// or less recycles nothing; a negative totalMemory counts as 0 (every
// request fails with ErrBufferTooLarge).
func newBufferPool(totalMemory int64, poolableSize int) *bufferPool {
	p := &bufferPool{totalMemory: max(totalMemory, 0), poolableSize: max(poolableSize, 0)}
	p.mu.nonPooled = p.totalMemory
	return p
}

// Allocate returns a buffer of length 0 and capacity exactly size, for the
// caller to append into. A recycled buffer holds old bytes beyond its
// length; nothing is zeroed. Give it back with Deallocate.
//
// If the memory is not free, Allocate waits, in FIFO order with other
// waiters (see bufferPool), until enough is released. It fails:
//   - with ErrBufferTooLarge at once, if size exceeds the total memory;
//   - with a [*BufferExhaustedError] (matching [ErrBufferExhausted]) after
//     maxBlock (max.block.ms); maxBlock ≤ 0 fails at once if it would wait;
//   - with ctx's error (wrapped) when ctx ends; also at once, even if memory
//     is free, if ctx has already ended;
//   - with ErrPoolClosed if the pool is closed, or closes while it waits.
//
// A failed wait leaves nothing reserved. A size of 0 returns an empty
// buffer without touching the pool's memory.
func (p *bufferPool) Allocate(ctx context.Context, size int, maxBlock time.Duration) ([]byte, error) {
	switch {
	case size < 0:
		return nil, fmt.Errorf("producer: buffer size %d is negative", size)
	case int64(size) > p.totalMemory:
		return nil, fmt.Errorf("%w: %d bytes requested, buffer.memory is %d", errBufferTooLarge, size, p.totalMemory)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("producer: waiting for %d bytes of buffer memory: %w", size, err)
	}

	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	if size == 0 {
		p.mu.Unlock()
		return []byte{}, nil
	}
	if len(p.mu.waiters) == 0 {
		if size == p.poolableSize && len(p.mu.free) > 0 {
			buf := p.popFreeLocked()
			p.mu.allocated += int64(size)
			p.mu.Unlock()
			return buf, nil
		}
		if p.mu.nonPooled+p.freeBytesLocked() >= int64(size) {
			p.freeUpLocked(int64(size))
			p.mu.nonPooled -= int64(size)
			p.mu.allocated += int64(size)
			p.mu.Unlock()
			return make([]byte, 0, size), nil
		}
	}
	if maxBlock <= 0 {
		err := p.exhaustedLocked(size, maxBlock)
		p.mu.Unlock()
		return nil, err
	}

	// Join the queue; if this is the head it takes what there is now.
	w := &bufferWaiter{size: size, ready: make(chan struct{}, 1)}
	p.mu.waiters = append(p.mu.waiters, w)
	p.serveLocked()
	p.mu.Unlock()

	timer := time.NewTimer(maxBlock)
	defer timer.Stop()
	var ctxErr error
	select {
	case <-w.ready:
	case <-timer.C:
	case <-ctx.Done():
		ctxErr = ctx.Err()
	}

	p.mu.Lock()
	switch {
	case w.granted: // possibly just as the wait ended: the memory is ours
		p.mu.Unlock()
		if w.buf != nil {
			return w.buf, nil
		}
		return make([]byte, 0, size), nil
	case w.err != nil:
		p.mu.Unlock()
		return nil, w.err
	}
	// Give up: leave the queue and hand back what was reserved, which may
	// complete the next waiter.
	if i := slices.Index(p.mu.waiters, w); i >= 0 {
		p.mu.waiters = slices.Delete(p.mu.waiters, i, i+1)
	}
	p.mu.nonPooled += w.accumulated
	w.accumulated = 0
	p.serveLocked()
	var err error
	if ctxErr != nil {
		err = fmt.Errorf("producer: waiting for %d bytes of buffer memory: %w", size, ctxErr)
	} else {
		err = p.exhaustedLocked(size, maxBlock)
	}
	p.mu.Unlock()
	return nil, err
}

// Deallocate returns a buffer from Allocate to the pool: one of capacity
// poolableSize goes on the free list, any other is credited to the
// non-pooled budget (and left to the garbage collector). The freed memory
// goes to waiters first, in order.
//
// REQUIRES: buf came from this pool's Allocate, is given back once, and has
// its capacity as allocated (buf[:n] is fine; buf[i:] and a buffer grown by
// append are not): the capacity is what is credited. The caller must not
// use buf afterwards. If more comes back than is out, the excess is
// ignored, so the pool never holds more than its total memory.
func (p *bufferPool) Deallocate(buf []byte) {
	size := cap(buf)
	if size == 0 {
		return
	}
	p.mu.Lock()
	n := min(int64(size), p.mu.allocated)
	p.mu.allocated -= n
	if size == p.poolableSize && n == int64(size) && !p.mu.closed {
		p.mu.free = append(p.mu.free, buf[:0])
	} else {
		p.mu.nonPooled += n
	}
	p.serveLocked()
	p.mu.Unlock()
}

// AvailableMemory returns the bytes that could be allocated now: the free
// list plus the non-pooled budget (memory reserved by waiters is not
// available).
func (p *bufferPool) AvailableMemory() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.nonPooled + p.freeBytesLocked()
}

// UnallocatedMemory returns the non-pooled budget: available memory not
// held in pooled buffers (Kafka's unallocatedMemory).
func (p *bufferPool) UnallocatedMemory() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.nonPooled
}

// Waiters returns the number of Allocate calls waiting for memory (Kafka's
// queued()). The producer treats a non-zero count as "memory is
// exhausted": batches are sent without waiting for linger.ms.
func (p *bufferPool) Waiters() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.waiters)
}

// TotalMemory returns the pool's size in bytes (buffer.memory).
func (p *bufferPool) TotalMemory() int64 { return p.totalMemory }

// PoolableSize returns the buffer size the pool recycles (batch.size).
func (p *bufferPool) PoolableSize() int { return p.poolableSize }

// Close fails every waiting Allocate with ErrPoolClosed, and every later
// one. Buffers still out may be given back with Deallocate. The free list
// is dropped. Close is idempotent.
func (p *bufferPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return
	}
	p.mu.closed = true
	for _, w := range p.mu.waiters {
		p.mu.nonPooled += w.accumulated
		w.accumulated = 0
		w.err = errPoolClosed
		w.ready <- struct{}{}
	}
	clear(p.mu.waiters)
	p.mu.waiters = p.mu.waiters[:0]
	p.freeUpLocked(p.totalMemory)
}

// serveLocked hands free memory to the waiters, head first, completing
// each whose request is met, until the head needs more than there is.
// REQUIRES: p.mu is held.
func (p *bufferPool) serveLocked() {
	for len(p.mu.waiters) > 0 {
		w := p.mu.waiters[0]
		if w.size == p.poolableSize && len(p.mu.free) > 0 {
			// A pooled buffer meets it whole; what it had gathered goes
			// back to the budget, for the next waiter.
			p.mu.nonPooled += w.accumulated
			w.accumulated = int64(w.size)
			w.buf = p.popFreeLocked()
		} else {
			need := int64(w.size) - w.accumulated
			p.freeUpLocked(need)
			got := min(need, p.mu.nonPooled)
			p.mu.nonPooled -= got
			w.accumulated += got
			if w.accumulated < int64(w.size) {
				return
			}
		}
		p.mu.allocated += w.accumulated
		w.accumulated = 0
		w.granted = true
		p.mu.waiters = slices.Delete(p.mu.waiters, 0, 1)
		w.ready <- struct{}{}
	}
}

// freeUpLocked drops pooled buffers until the non-pooled budget reaches
// size or the free list is empty. REQUIRES: p.mu is held.
func (p *bufferPool) freeUpLocked(size int64) {
	for len(p.mu.free) > 0 && p.mu.nonPooled < size {
		p.popFreeLocked()
		p.mu.nonPooled += int64(p.poolableSize)
	}
}

// popFreeLocked removes the top of the free list. REQUIRES: p.mu is held
// and the free list is not empty.
func (p *bufferPool) popFreeLocked() []byte {
	n := len(p.mu.free) - 1
	buf := p.mu.free[n]
	p.mu.free[n] = nil
	p.mu.free = p.mu.free[:n]
	return buf
}

func (p *bufferPool) freeBytesLocked() int64 {
	return int64(len(p.mu.free)) * int64(p.poolableSize)
}

func (p *bufferPool) exhaustedLocked(size int, maxBlock time.Duration) error {
	return &BufferExhaustedError{Size: size, MaxBlock: maxBlock, TotalMemory: p.totalMemory,
		AvailableMemory: p.mu.nonPooled + p.freeBytesLocked(), PoolableSize: p.poolableSize}
}
