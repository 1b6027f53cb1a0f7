package log

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// newClock returns a clock for tests to move by hand, at a time in 2027.
func newClock() *testclock.Clock { return testclock.New(time.UnixMilli(1_800_000_000_000)) }

// env is a memory filesystem, a clock and a config for Dirs on them.
type env struct {
	mem     *vfs.MemFS
	clock   *testclock.Clock
	cfg     Config
	dirPath string // the Dir's path; "" is /data
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{mem: vfs.NewMem(), clock: newClock()}
	e.cfg = DefaultConfig()
	e.cfg.FS = e.mem
	e.cfg.Now = e.clock.Now
	e.cfg.RetentionCheckInterval = time.Hour // tests call EnforceRetention themselves
	return e
}

func (e *env) open(t *testing.T) *Dir {
	t.Helper()
	path := e.dirPath
	if path == "" {
		path = "/data"
	}
	d, err := Open(context.Background(), path, e.cfg)
	require.NoError(t, err)
	return d
}

// crash replaces the filesystem with what survives a power loss now.
func (e *env) crash() {
	e.mem = e.mem.CrashClone()
	e.cfg.FS = e.mem
}

// producerBatch builds a batch as a producer sends it: base offset 0,
// records with keys k<i>, values of size bytes, timestamps ts.
func producerBatch(t testing.TB, n, size int, ts int64, codec record.Compression) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithCompression(codec),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	for i := range n {
		require.NoError(t, b.Append(ts, fmt.Appendf(nil, "k%d", i), bytes.Repeat([]byte{'v'}, size), nil))
	}
	out, err := b.Build()
	require.NoError(t, err)
	return bytes.Clone(out)
}

// records reads every record of a partition from offset.
func records(t *testing.T, l *Log, from int64) []record.Record {
	t.Helper()
	var out []record.Record
	for from < l.LogEndOffset() {
		next, err := l.ReadRecords(from, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
			out = append(out, rec.Clone())
			return nil
		})
		require.NoError(t, err)
		require.Greater(t, next, from)
		from = next
	}
	return out
}

func createTopic(t *testing.T, d *Dir, name string, partitions int32, props map[string]string) {
	t.Helper()
	_, err := d.CreateTopic(context.Background(), name, partitions, props)
	require.NoError(t, err)
}

func partition(t *testing.T, d *Dir, name string, p int32) *Log {
	t.Helper()
	l, err := d.Partition(name, p)
	require.NoError(t, err)
	return l
}
