package logtest

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// partitionPrefix returns the path prefix of the files of a partition: its
// directory with a trailing separator (so that "t-1" does not match "t-10").
func (b *Broker) partitionPrefix(topic string, partition int32) string {
	b.t.Helper()
	require.NoError(b.t, b.ensureTopic(topic), "logtest: creating topic %q", topic)
	l, err := b.Dir().Partition(topic, partition)
	require.NoError(b.t, err, "logtest: partition %d of %q", partition, topic)
	return l.Dir() + string(filepath.Separator)
}

// isAppend reports whether a filesystem operation is a write to a segment's
// .log file: what an append to a partition does first.
func isAppend(op vfs.Op, path string) bool {
	return op == vfs.OpWrite && strings.HasSuffix(path, ".log")
}

// FailNextAppend makes the next append to a partition fail: the write of the
// batch to the partition's active segment returns an error matching err
// (and vfs.ErrInjected), and nothing is written. The log wraps it in
// log.ErrStorage and, as Kafka takes a log directory offline after an I/O
// error, refuses every later append to the partition until Restart.
// A producer reports the error through the records' futures and callbacks.
// err is typically syscall.ENOSPC or syscall.EIO; nil means vfs.ErrInjected.
func (b *Broker) FailNextAppend(topic string, partition int32, err error) {
	b.t.Helper()
	prefix := b.partitionPrefix(topic, partition)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fault.Inject(vfs.Rule{
		Op:    vfs.OpWrite,
		Path:  prefix,
		Match: func(op vfs.Op, path string) bool { return strings.HasPrefix(path, prefix) && isAppend(op, path) },
		Nth:   1,
		Err:   err,
	})
}

// Hold is a delay on a partition's appends, made by Broker.Delay. It is safe
// for concurrent use.
type Hold struct {
	waiting     chan struct{} // closed when the first append waits
	waitingOnce sync.Once
	released    chan struct{} // closed by Release
	releaseOnce sync.Once
}

// Waiting returns a channel closed when an append to the partition is
// waiting on the hold.
func (h *Hold) Waiting() <-chan struct{} { return h.waiting }

// Release lets the waiting append, and every later one, proceed. A second
// Release does nothing. Close, Restart and Crash release every hold.
func (h *Hold) Release() {
	h.releaseOnce.Do(func() { close(h.released) })
}

// wait blocks until the hold is released.
func (h *Hold) wait() {
	h.waitingOnce.Do(func() { close(h.waiting) })
	<-h.released
}

// Delay holds every append to a partition until the returned Hold is
// released: the write of a batch to the partition's log waits (holding the
// partition's write lock, as a slow disk would), and so does whoever
// appended it — for a producer, its one sender goroutine, so that its appends
// to other partitions wait too. Hold.Waiting tells when an append arrived.
// A second Delay of the same partition replaces the first, which is released.
func (b *Broker) Delay(topic string, partition int32) *Hold {
	b.t.Helper()
	prefix := b.partitionPrefix(topic, partition)
	h := &Hold{waiting: make(chan struct{}), released: make(chan struct{})}
	b.holdMu.Lock()
	old := b.holds[prefix]
	b.holds[prefix] = h
	b.holdMu.Unlock()
	if old != nil {
		old.Release()
	}
	return h
}

// onOp is the FaultFS hook: an append to a held partition waits.
func (b *Broker) onOp(op vfs.Op, path string) {
	if !isAppend(op, path) {
		return
	}
	b.holdMu.Lock()
	var h *Hold
	for prefix, hold := range b.holds {
		if strings.HasPrefix(path, prefix) {
			h = hold
			break
		}
	}
	b.holdMu.Unlock()
	if h != nil {
		h.wait()
	}
}

// releaseHolds releases and forgets every hold.
func (b *Broker) releaseHolds() {
	b.holdMu.Lock()
	holds := b.holds
	b.holds = map[string]*Hold{}
	b.holdMu.Unlock()
	for _, h := range holds {
		h.Release()
	}
}
