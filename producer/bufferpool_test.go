package producer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkPoolAccounting asserts that every byte of the pool is in exactly
// one place (free list, non-pooled budget, a waiter's reservation, handed
// out) and that nothing is available while somebody waits.
func checkPoolAccounting(t *testing.T, p *bufferPool) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var reserved int64
	for _, w := range p.mu.waiters {
		reserved += w.accumulated
		assert.False(t, w.granted, "a granted waiter is still queued")
	}
	for _, b := range p.mu.free {
		assert.Equal(t, p.poolableSize, cap(b), "free list buffer")
	}
	free := int64(len(p.mu.free)) * int64(p.poolableSize)
	assert.Equal(t, p.totalMemory, p.mu.nonPooled+free+reserved+p.mu.allocated,
		"nonPooled %d + free %d + reserved %d + allocated %d", p.mu.nonPooled, free, reserved, p.mu.allocated)
	assert.GreaterOrEqual(t, p.mu.nonPooled, int64(0))
	if len(p.mu.waiters) > 0 {
		assert.Zero(t, p.mu.nonPooled+free, "memory available while %d wait", len(p.mu.waiters))
	}
}

func mustAllocate(t *testing.T, p *bufferPool, size int) []byte {
	t.Helper()
	buf, err := p.Allocate(context.Background(), size, 0)
	require.NoError(t, err)
	require.Len(t, buf, 0)
	require.Equal(t, size, cap(buf))
	return buf
}

// allocation is the outcome of an Allocate run in a goroutine.
type allocation struct {
	name string
	buf  []byte
	err  error
}

// goAllocate starts Allocate in a goroutine that reports to out.
func goAllocate(ctx context.Context, p *bufferPool, name string, size int, maxBlock time.Duration, out chan<- allocation) {
	go func() {
		buf, err := p.Allocate(ctx, size, maxBlock)
		out <- allocation{name, buf, err}
	}()
}

// both receives the two allocations that one event completes (a waiter
// that gives up hands its memory to the next), keyed by name: their
// goroutines race to report, so the order is not fixed.
func both(t *testing.T, out <-chan allocation) map[string]allocation {
	t.Helper()
	got := map[string]allocation{}
	for range 2 {
		a := <-out
		got[a.name] = a
	}
	require.Len(t, got, 2)
	return got
}

// noneDone asserts that no allocation has completed.
func noneDone(t *testing.T, out <-chan allocation) {
	t.Helper()
	select {
	case a := <-out:
		t.Fatalf("%s completed early (err %v)", a.name, a.err)
	default:
	}
}

func TestBufferPoolReusesPooledBuffers(t *testing.T) {
	p := newBufferPool(64, 16)
	require.Equal(t, int64(64), p.TotalMemory())
	require.Equal(t, 16, p.PoolableSize())

	a := mustAllocate(t, p, 16)
	b := mustAllocate(t, p, 16)
	assert.Equal(t, int64(32), p.AvailableMemory())
	assert.Equal(t, int64(32), p.UnallocatedMemory())

	a = append(a, "sixteen bytes..."...)
	p.Deallocate(a)
	assert.Equal(t, int64(48), p.AvailableMemory(), "the buffer is on the free list")
	assert.Equal(t, int64(32), p.UnallocatedMemory(), "and not in the budget")
	checkPoolAccounting(t, p)

	c := mustAllocate(t, p, 16)
	assert.Same(t, &a[0], &c[:1][0], "the pooled buffer comes back")
	assert.Equal(t, "sixteen bytes...", string(c[:16]), "not zeroed")
	assert.Equal(t, int64(32), p.AvailableMemory())

	p.Deallocate(b)
	p.Deallocate(c[:5]) // a reslice with the same capacity
	assert.Equal(t, int64(64), p.AvailableMemory())
	assert.Equal(t, int64(32), p.UnallocatedMemory())
	checkPoolAccounting(t, p)
}

func TestBufferPoolNonPooledAccounting(t *testing.T) {
	p := newBufferPool(100, 16)
	a := mustAllocate(t, p, 30)
	b := mustAllocate(t, p, 16)
	assert.Equal(t, int64(54), p.AvailableMemory())
	assert.Equal(t, int64(54), p.UnallocatedMemory())

	p.Deallocate(b) // pooled
	assert.Equal(t, int64(70), p.AvailableMemory())
	assert.Equal(t, int64(54), p.UnallocatedMemory())

	// 60 bytes: more than the budget (54), so the pooled buffer is dropped
	// to make room.
	c := mustAllocate(t, p, 60)
	assert.Equal(t, int64(10), p.AvailableMemory())
	assert.Equal(t, int64(10), p.UnallocatedMemory())
	checkPoolAccounting(t, p)

	p.Deallocate(a) // non-pooled: back to the budget
	assert.Equal(t, int64(40), p.UnallocatedMemory())
	p.Deallocate(c)
	assert.Equal(t, int64(100), p.AvailableMemory())
	assert.Equal(t, int64(100), p.UnallocatedMemory())

	// A zero-size request touches nothing.
	z := mustAllocate(t, p, 0)
	assert.NotNil(t, z)
	p.Deallocate(z)
	assert.Equal(t, int64(100), p.AvailableMemory())
	checkPoolAccounting(t, p)

	_, err := p.Allocate(context.Background(), -1, time.Second)
	require.Error(t, err)
}

// TestBufferPoolMemoryBound shows the bound: the bytes handed out never
// exceed totalMemory, whatever the mix of sizes.
func TestBufferPoolMemoryBound(t *testing.T) {
	p := newBufferPool(1000, 64)
	var held [][]byte
	var total int
	for _, size := range []int{64, 100, 64, 300, 7, 64, 200, 64, 64} {
		held = append(held, mustAllocate(t, p, size))
		total += size
	}
	require.Equal(t, 927, total)
	assert.Equal(t, int64(1000-927), p.AvailableMemory())

	_, err := p.Allocate(context.Background(), 74, 0)
	require.ErrorIs(t, err, ErrBufferExhausted, "74 bytes more would be 1001")
	held = append(held, mustAllocate(t, p, 73))
	assert.Zero(t, p.AvailableMemory())
	_, err = p.Allocate(context.Background(), 1, 0)
	require.ErrorIs(t, err, ErrBufferExhausted)
	checkPoolAccounting(t, p)

	for _, b := range held {
		p.Deallocate(b)
	}
	assert.Equal(t, int64(1000), p.AvailableMemory())
	// The whole memory in one buffer.
	all := mustAllocate(t, p, 1000)
	p.Deallocate(all)
	checkPoolAccounting(t, p)
}

func TestBufferPoolTooLarge(t *testing.T) {
	p := newBufferPool(100, 16)
	_, err := p.Allocate(context.Background(), 101, time.Hour) // fails at once, no waiting
	require.ErrorIs(t, err, errBufferTooLarge)
	assert.Contains(t, err.Error(), "101")
	assert.Zero(t, p.Waiters())
	mustAllocate(t, p, 100)

	_, err = newBufferPool(-5, -1).Allocate(context.Background(), 1, time.Hour)
	require.ErrorIs(t, err, errBufferTooLarge)
}

func TestBufferPoolBlocksUntilDeallocate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(64, 16)
		a := mustAllocate(t, p, 16)
		b := mustAllocate(t, p, 48)

		out := make(chan allocation, 1)
		goAllocate(context.Background(), p, "waiter", 16, time.Hour, out)
		synctest.Wait() // the waiter is blocked
		noneDone(t, out)
		assert.Equal(t, 1, p.Waiters())
		checkPoolAccounting(t, p)

		p.Deallocate(a)
		got := <-out
		require.NoError(t, got.err)
		assert.Same(t, &a[:1][0], &got.buf[:1][0], "the freed pooled buffer went to the waiter")
		assert.Zero(t, p.Waiters())
		checkPoolAccounting(t, p)
		p.Deallocate(b)
		p.Deallocate(got.buf)
		assert.Equal(t, int64(64), p.AvailableMemory())
	})
}

// TestBufferPoolPooledBufferCompletesHead: a poolable waiter that has
// gathered part of its size from the budget takes a freed pooled buffer
// instead, and what it had gathered goes back.
func TestBufferPoolPooledBufferCompletesHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(48, 16)
		a, c, d := mustAllocate(t, p, 16), mustAllocate(t, p, 8), mustAllocate(t, p, 24)
		out := make(chan allocation, 1)
		goAllocate(context.Background(), p, "W", 16, time.Hour, out)
		synctest.Wait()
		p.Deallocate(c) // W gathers 8
		synctest.Wait()
		noneDone(t, out)
		checkPoolAccounting(t, p)

		p.Deallocate(a)
		got := <-out
		require.NoError(t, got.err)
		assert.Same(t, &a[:1][0], &got.buf[:1][0])
		assert.Equal(t, int64(8), p.AvailableMemory(), "W's 8 bytes went back")
		checkPoolAccounting(t, p)
		p.Deallocate(d)
		p.Deallocate(got.buf)
		assert.Equal(t, int64(48), p.AvailableMemory())
	})
}

// TestBufferPoolFIFO: waiters are served strictly in arrival order; the
// head accumulates freed memory, and a later waiter asking for less does
// not overtake it.
func TestBufferPoolFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(100, 16)
		b40, b30, b20, b10 := mustAllocate(t, p, 40), mustAllocate(t, p, 30), mustAllocate(t, p, 20), mustAllocate(t, p, 10)

		out := make(chan allocation, 3)
		for _, w := range []struct {
			name string
			size int
		}{{"A", 60}, {"B", 10}, {"C", 35}} {
			goAllocate(context.Background(), p, w.name, w.size, time.Hour, out)
			synctest.Wait() // so they queue in this order
		}
		require.Equal(t, 3, p.Waiters())

		p.Deallocate(b10) // enough for B, but A is first: A holds 10
		synctest.Wait()
		noneDone(t, out)
		checkPoolAccounting(t, p)
		p.Deallocate(b20) // A holds 30
		synctest.Wait()
		noneDone(t, out)
		assert.Zero(t, p.AvailableMemory())

		p.Deallocate(b30) // A complete
		got := <-out
		require.NoError(t, got.err)
		require.Equal(t, "A", got.name)
		require.Equal(t, 60, cap(got.buf))
		synctest.Wait()
		noneDone(t, out)
		assert.Equal(t, 2, p.Waiters())

		p.Deallocate(b40) // B complete (10), C holds 30 of 35
		got = <-out
		require.Equal(t, "B", got.name)
		synctest.Wait()
		noneDone(t, out)
		assert.Equal(t, 1, p.Waiters())
		checkPoolAccounting(t, p)

		p.Deallocate(got.buf) // C complete
		got = <-out
		require.Equal(t, "C", got.name)
		require.Equal(t, 35, cap(got.buf))
		assert.Zero(t, p.Waiters())
		assert.Equal(t, int64(5), p.AvailableMemory())
		checkPoolAccounting(t, p)
	})
}

// TestBufferPoolLargeRequestNotStarved: small requests keep coming and
// going, but the large one at the head gets all memory as it is freed.
func TestBufferPoolLargeRequestNotStarved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(100, 10)
		var held [][]byte
		for range 10 {
			held = append(held, mustAllocate(t, p, 10))
		}
		out := make(chan allocation, 20)
		goAllocate(context.Background(), p, "large", 100, time.Hour, out)
		synctest.Wait()
		for i := range 9 {
			goAllocate(context.Background(), p, fmt.Sprint("small", i), 10, time.Hour, out)
			synctest.Wait()
			p.Deallocate(held[i]) // each freed buffer goes to the large request
			synctest.Wait()
			noneDone(t, out)
		}
		p.Deallocate(held[9])
		got := <-out
		require.Equal(t, "large", got.name)
		require.Equal(t, 100, cap(got.buf))
		assert.Equal(t, 9, p.Waiters())
		p.Deallocate(got.buf)
		for range 9 {
			got := <-out
			require.NoError(t, got.err)
		}
		checkPoolAccounting(t, p)
	})
}

func TestBufferPoolTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(100, 16)
		a, b := mustAllocate(t, p, 60), mustAllocate(t, p, 40)

		out := make(chan allocation, 2)
		start := time.Now()
		goAllocate(context.Background(), p, "W", 80, time.Second, out)
		synctest.Wait()
		p.Deallocate(b) // W holds 40 of 80
		goAllocate(context.Background(), p, "X", 30, time.Hour, out)
		synctest.Wait()
		noneDone(t, out)
		assert.Zero(t, p.AvailableMemory())

		// The clock moves to W's deadline; W's memory then completes X.
		done := both(t, out)
		got := done["W"]
		assert.Equal(t, time.Second, time.Since(start))
		require.ErrorIs(t, got.err, ErrBufferExhausted)
		require.ErrorIs(t, got.err, os.ErrDeadlineExceeded)
		var be *BufferExhaustedError
		require.ErrorAs(t, got.err, &be)
		assert.Equal(t, BufferExhaustedError{Size: 80, MaxBlock: time.Second, TotalMemory: 100,
			AvailableMemory: 10, PoolableSize: 16}, *be)
		assert.True(t, be.Timeout())
		assert.Contains(t, be.Error(), "failed to allocate 80 bytes within max.block.ms=1000")

		// W gave back its 40: X, next in line, got 30 of it.
		got = done["X"]
		require.NoError(t, got.err)
		assert.Equal(t, int64(10), p.AvailableMemory())
		checkPoolAccounting(t, p)
		p.Deallocate(a)
		p.Deallocate(got.buf)
		assert.Equal(t, int64(100), p.AvailableMemory())
	})
}

func TestBufferPoolMaxBlockZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(32, 16)
		a := mustAllocate(t, p, 32)
		start := time.Now()
		_, err := p.Allocate(context.Background(), 16, 0)
		require.ErrorIs(t, err, ErrBufferExhausted)
		_, err = p.Allocate(context.Background(), 16, -time.Second)
		require.ErrorIs(t, err, ErrBufferExhausted)
		assert.Zero(t, time.Since(start), "no waiting")
		assert.Zero(t, p.Waiters())
		p.Deallocate(a)
		checkPoolAccounting(t, p)
	})
}

func TestBufferPoolContext(t *testing.T) {
	t.Run("cancel while waiting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newBufferPool(100, 16)
			a, b := mustAllocate(t, p, 50), mustAllocate(t, p, 50)
			ctx, cancel := context.WithCancel(context.Background())
			out := make(chan allocation, 2)
			goAllocate(ctx, p, "W", 100, time.Hour, out)
			synctest.Wait()
			p.Deallocate(a) // W holds 50
			goAllocate(context.Background(), p, "X", 40, time.Hour, out)
			synctest.Wait()

			cancel()
			done := both(t, out)
			got := done["W"]
			require.ErrorIs(t, got.err, context.Canceled)
			require.NotErrorIs(t, got.err, ErrBufferExhausted)
			got = done["X"]
			require.NoError(t, got.err, "W's 50 bytes went to X")
			assert.Equal(t, int64(10), p.AvailableMemory())
			checkPoolAccounting(t, p)
			p.Deallocate(b)
			p.Deallocate(got.buf)
		})
	})
	t.Run("deadline while waiting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newBufferPool(10, 10)
			a := mustAllocate(t, p, 10)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			_, err := p.Allocate(ctx, 10, time.Hour)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, time.Second, time.Since(start))
			assert.Zero(t, p.Waiters())
			p.Deallocate(a)
			checkPoolAccounting(t, p)
		})
	})
	t.Run("already done", func(t *testing.T) {
		p := newBufferPool(100, 16)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := p.Allocate(ctx, 16, time.Hour)
		require.ErrorIs(t, err, context.Canceled, "fails even though memory is free")
		assert.Equal(t, int64(100), p.AvailableMemory())
	})
}

func TestBufferPoolClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newBufferPool(100, 10)
		a, b := mustAllocate(t, p, 10), mustAllocate(t, p, 90)
		p.Deallocate(a) // on the free list
		a = mustAllocate(t, p, 10)

		out := make(chan allocation, 2)
		goAllocate(context.Background(), p, "W1", 50, time.Hour, out)
		synctest.Wait()
		p.Deallocate(a) // W1 holds 10
		goAllocate(context.Background(), p, "W2", 10, time.Hour, out)
		synctest.Wait()
		require.Equal(t, 2, p.Waiters())

		p.Close()
		for range 2 {
			got := <-out
			require.ErrorIs(t, got.err, errPoolClosed, got.name)
		}
		assert.Zero(t, p.Waiters())
		assert.Equal(t, int64(10), p.AvailableMemory(), "W1's reservation returned")

		_, err := p.Allocate(context.Background(), 10, time.Hour)
		require.ErrorIs(t, err, errPoolClosed)
		p.Deallocate(b) // still accepted
		assert.Equal(t, int64(100), p.UnallocatedMemory())
		checkPoolAccounting(t, p)
		p.Close() // idempotent
	})
}

func TestBufferPoolDeallocateMisuse(t *testing.T) {
	p := newBufferPool(100, 16)
	a := mustAllocate(t, p, 16)
	p.Deallocate(make([]byte, 0, 1000)) // not from the pool: only what is out (16) comes back
	assert.Equal(t, int64(100), p.AvailableMemory())
	checkPoolAccounting(t, p)
	p.Deallocate(a) // and now nothing is out
	assert.Equal(t, int64(100), p.AvailableMemory())
	p.Deallocate(nil)
	checkPoolAccounting(t, p)
}

// TestBufferPoolConcurrent: many goroutines allocate and deallocate mixed
// sizes (one of them the whole memory). The bytes held never exceed the
// total, no buffer is handed to two holders, and everything comes back.
func TestBufferPoolConcurrent(t *testing.T) {
	const total = 64 << 10
	p := newBufferPool(total, 4096)
	sizes := []int{4096, 4096, 4096, 1000, 9000, 20000, total}
	var held, peak atomic.Int64
	var violations atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	iterations := 300
	if testing.Short() {
		iterations = 50
	}
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range iterations {
				size := sizes[rng.IntN(len(sizes))]
				buf, err := p.Allocate(context.Background(), size, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				n := held.Add(int64(size))
				if n > total {
					violations.Add(1)
				}
				for {
					if m := peak.Load(); n <= m || peak.CompareAndSwap(m, n) {
						break
					}
				}
				buf = buf[:size]
				for i := range buf {
					buf[i] = byte(g)
				}
				runtime.Gosched()
				for i := range buf {
					if buf[i] != byte(g) {
						violations.Add(1) // shared with another holder
						break
					}
				}
				held.Add(-int64(size))
				p.Deallocate(buf)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, violations.Load())
	assert.LessOrEqual(t, peak.Load(), int64(total))
	t.Logf("peak held %d of %d bytes", peak.Load(), total)
	assert.Zero(t, p.Waiters())
	assert.Equal(t, int64(total), p.AvailableMemory())
	checkPoolAccounting(t, p)
}

func TestBufferPoolZeroAllocs(t *testing.T) {
	p := newBufferPool(1<<20, 16384)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Warm up: the buffers and the free list's backing array.
	var bufs [][]byte
	for range 8 {
		bufs = append(bufs, mustAllocate(t, p, 16384))
	}
	for _, b := range bufs {
		p.Deallocate(b)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		a, _ := p.Allocate(ctx, 16384, time.Second)
		b, _ := p.Allocate(context.Background(), 16384, time.Second)
		p.Deallocate(a)
		p.Deallocate(b)
	})
	assert.Zero(t, allocs)
}

func BenchmarkBufferPool(b *testing.B) {
	const poolable = 16384
	for _, bc := range []struct {
		name string
		size int
	}{
		{"pooled/size=16KiB", poolable},
		{"nonpooled/size=1KiB", 1 << 10},
		{"nonpooled/size=64KiB", 64 << 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newBufferPool(32<<20, poolable)
			ctx := context.Background()
			b.SetBytes(int64(bc.size))
			b.ReportAllocs()
			for b.Loop() {
				buf, err := p.Allocate(ctx, bc.size, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				p.Deallocate(buf)
			}
		})
	}
	b.Run("pooled/parallel/size=16KiB", func(b *testing.B) {
		p := newBufferPool(32<<20, poolable)
		b.SetBytes(poolable)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				buf, err := p.Allocate(ctx, poolable, time.Second)
				if err != nil {
					b.Error(err)
					return
				}
				p.Deallocate(buf)
			}
		})
	})
	// Contended: the memory holds 4 buffers and 8 goroutines per CPU cycle
	// through them, so most Allocates wait (and allocate their waiter,
	// channel and timer).
	b.Run("pooled/contended/size=16KiB", func(b *testing.B) {
		p := newBufferPool(4*poolable, poolable)
		b.SetBytes(poolable)
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				buf, err := p.Allocate(ctx, poolable, time.Minute)
				if err != nil {
					b.Error(err)
					return
				}
				p.Deallocate(buf)
			}
		})
	})
}
