package migrate

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProgress checks both displays: the bar, redrawn in place with the
// share done, and the plain lines a log gets, each with records, bytes,
// rate and time left.
func TestProgress(t *testing.T) {
	var records, left int64 = 250, 750
	sample := func() (int64, int64, int64) { return records, records * 100, left }

	var bar bytes.Buffer
	p := &progress{out: &bar, bar: true, sample: sample}
	p.start()
	p.stop()
	out := bar.String()
	require.True(t, strings.HasPrefix(out, "\r["), "redrawn in place: %q", out)
	require.Contains(t, out, "]  25% 250 records, 24.4 KiB")
	require.True(t, strings.HasSuffix(out, "left \n"), "the last draw ends the line: %q", out)

	lines := &lockedBuffer{}
	p = &progress{out: lines, every: time.Millisecond, sample: sample}
	p.start()
	for !strings.Contains(lines.String(), "\n") {
		time.Sleep(time.Millisecond) // the printer's own tick
	}
	p.stop()
	first := strings.SplitN(lines.String(), "\n", 2)[0]
	require.Regexp(t, `^migrate: progress: \d+ records, [\d.]+ KiB, \d+ records/s \([\d.]+ [KM]iB/s\), (\S+) left$`, first)

	records, left = 1000, 0
	var done bytes.Buffer
	p = &progress{out: &done, bar: true, sample: sample}
	p.start()
	p.stop()
	require.Contains(t, done.String(), "100% 1000 records")
	require.Contains(t, done.String(), "0s left")
}

// lockedBuffer is a bytes.Buffer the printer's goroutine writes while the
// test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
