package log

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/segment"
)

// prewriter is the Dir's helper goroutine for large leader appends
// (Config.OverlapAppendBytes): while an append validates its batch (CRC,
// every record), the helper writes the batch's body into the active
// segment past its end (segment.Segment.Prewrite), and the append then
// writes the header or takes the body back. The write into the page cache
// and the validation are the two halves of an append's time, so on an
// idle second core the append takes about as long as the write alone.
//
// One append uses it at a time; another append meanwhile writes its batch
// itself. The appender waits for the helper by yielding
// (runtime.Gosched) for up to prewriteSpin and then parks: waking a parked
// goroutine costs more than the overlap gains (measured: the overlap is
// lost when the appender parks at once), and yielding lets other
// goroutines of the process run meanwhile.
//
// The Dir owns the goroutine: it starts with the Dir and stops in Close,
// after every partition closed, when no append can be using it.
type prewriter struct {
	busy    atomic.Bool   // held by the append using the helper
	done    atomic.Uint64 // the last job finished
	waiting atomic.Bool   // the appender parks on doneCh
	seq     uint64        // the last job posted; owned by the busy holder
	err     error         // the last job's result, set before done
	jobs    chan prewriteJob
	doneCh  chan struct{} // capacity 1: wakes a parked appender
	stop    chan struct{}
	wg      sync.WaitGroup
}

type prewriteJob struct {
	seq   uint64
	seg   *segment.Segment
	batch []byte
}

// prewriteIdleSpin is how long the helper yields, after a job, before it
// parks: appends in a stream come back within a few microseconds, and a
// parked helper takes longer than that to wake.
const prewriteIdleSpin = 50 * time.Microsecond

// prewriteSpin bounds how long an appender yields before it parks: longer
// than the page-cache write of a batch of some MiB.
const prewriteSpin = 500 * time.Microsecond

func newPrewriter() *prewriter {
	p := &prewriter{jobs: make(chan prewriteJob, 1), doneCh: make(chan struct{}, 1), stop: make(chan struct{})}
	p.wg.Go(p.run)
	return p
}

func (p *prewriter) run() {
	var idle time.Time // when the last job ended; zero: park at once
	for {
		var j prewriteJob
		select {
		case j = <-p.jobs:
		case <-p.stop:
			return
		default:
			if !idle.IsZero() && time.Since(idle) < prewriteIdleSpin {
				runtime.Gosched()
				continue
			}
			select {
			case j = <-p.jobs:
			case <-p.stop:
				return
			}
		}
		p.err = j.seg.Prewrite(j.batch)
		p.done.Store(j.seq)
		if p.waiting.Load() {
			select {
			case p.doneCh <- struct{}{}:
			default:
			}
		}
		idle = time.Now()
	}
}

// close stops the helper. No append may be using it.
func (p *prewriter) close() {
	close(p.stop)
	p.wg.Wait()
}

// start hands the prewrite of batch into seg to the helper, unless another
// append is using it (false: write the batch yourself). A true start must
// be followed by wait.
func (p *prewriter) start(seg *segment.Segment, batch []byte) bool {
	if runtime.GOMAXPROCS(0) < 2 || !p.busy.CompareAndSwap(false, true) {
		return false
	}
	p.seq++
	p.jobs <- prewriteJob{seq: p.seq, seg: seg, batch: batch}
	return true
}

// wait waits for the job of the last start and releases the helper.
func (p *prewriter) wait() error {
	begin := time.Now()
	for i := 0; p.done.Load() < p.seq; i++ {
		if i%64 == 63 && time.Since(begin) > prewriteSpin {
			p.waiting.Store(true)
			if p.done.Load() < p.seq {
				<-p.doneCh // a token left by an earlier job only makes the loop look again
			}
			p.waiting.Store(false)
			continue
		}
		runtime.Gosched()
	}
	err := p.err
	p.busy.Store(false)
	return err
}
