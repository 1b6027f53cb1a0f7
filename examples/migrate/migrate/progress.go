package migrate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports how far a copy is: a bar redrawn in place on a
// terminal, a line every few seconds otherwise. Its goroutine is started by
// start and stopped by stop, both called by the run that owns it.
type progress struct {
	out   io.Writer
	bar   bool
	every time.Duration
	// sample returns the records and bytes done so far and the offsets
	// left to copy (an estimate of the records left: gaps and markers
	// count too).
	sample func() (records, bytes, offsetsLeft int64)

	began time.Time
	stopc chan struct{}
	done  sync.WaitGroup
}

func (p *progress) start() {
	p.began = time.Now()
	p.stopc = make(chan struct{})
	every := p.every
	if p.bar {
		every = 200 * time.Millisecond
	}
	p.done.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				return
			case <-t.C:
				p.print(false)
			}
		}
	})
}

// stop ends the goroutine and prints the last state.
func (p *progress) stop() {
	if p.stopc == nil {
		return
	}
	close(p.stopc)
	p.done.Wait()
	p.stopc = nil
	p.print(true)
}

func (p *progress) print(final bool) {
	records, bytes, left := p.sample()
	elapsed := time.Since(p.began)
	var perSec float64
	if s := elapsed.Seconds(); s > 0 {
		perSec = float64(records) / s
	}
	eta := "-"
	if perSec > 0 && left > 0 {
		eta = time.Duration(float64(left) / perSec * float64(time.Second)).Round(time.Second).String()
	} else if left == 0 {
		eta = "0s"
	}
	line := fmt.Sprintf("%d records, %s, %.0f records/s (%s/s), %s left", records, formatBytes(bytes), perSec,
		formatBytes(int64(float64(bytes)/max(elapsed.Seconds(), 1e-9))), eta)
	if !p.bar {
		if !final {
			fmt.Fprintf(p.out, "migrate: progress: %s\n", line)
		}
		return
	}
	const width = 30
	frac := 1.0
	if total := records + left; total > 0 {
		frac = float64(records) / float64(total)
	}
	filled := int(frac * width)
	fmt.Fprintf(p.out, "\r[%s%s] %3.0f%% %s ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), frac*100, line)
	if final {
		fmt.Fprintln(p.out)
	}
}
