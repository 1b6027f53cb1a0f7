package segment

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// testFS is a filesystem and a directory in it.
type testFS struct {
	name string
	fs   vfs.FS
	dir  string
	mem  *vfs.MemFS // nil for the OS filesystem
}

func fsKinds(t *testing.T) []testFS {
	mem := vfs.NewMem()
	require.NoError(t, mem.MkdirAll("/p-0"))
	require.NoError(t, mem.SyncDir("/"))
	return []testFS{
		{name: "os", fs: vfs.Default, dir: t.TempDir()},
		{name: "mem", fs: mem, dir: "/p-0", mem: mem},
	}
}

// forEachFS runs fn on the OS filesystem and on the memory FS.
func forEachFS(t *testing.T, fn func(t *testing.T, e testFS)) {
	for _, e := range fsKinds(t) {
		t.Run(e.name, func(t *testing.T) { fn(t, e) })
	}
}

// testConfig spaces index entries every 1 KiB so small tests get some.
func testConfig() Config {
	c := DefaultConfig()
	c.IndexIntervalBytes = 1024
	c.MaxIndexBytes = 64 << 10
	return c
}

// batchAt builds a batch of n records starting at offset base, each record's
// value valueSize bytes, timestamps ts, ts+1, ...
func batchAt(t testing.TB, base int64, n, valueSize int, ts int64) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: 0, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	for i := range n {
		v := bytes.Repeat([]byte{byte('a' + (int(base)+i)%26)}, valueSize)
		require.NoError(t, b.Append(ts+int64(i), fmt.Appendf(nil, "k%d", base+int64(i)), v, nil))
	}
	out, err := b.Build()
	require.NoError(t, err)
	out = bytes.Clone(out)
	require.NoError(t, record.SetBaseOffset(out, base))
	return out
}

func header(t testing.TB, b []byte) *record.BatchHeader {
	t.Helper()
	h, err := record.Validate(b)
	require.NoError(t, err)
	return &h
}

// fill appends count batches of perBatch records and returns them.
func fill(t *testing.T, s *Segment, from int64, count, perBatch, valueSize int, ts int64) [][]byte {
	t.Helper()
	var out [][]byte
	next := from
	for i := range count {
		b := batchAt(t, next, perBatch, valueSize, ts+int64(i)*10)
		require.NoError(t, s.Append(b, header(t, b)))
		out = append(out, b)
		next += int64(perBatch)
	}
	return out
}

func create(t *testing.T, e testFS, base int64, cfg Config) *Segment {
	t.Helper()
	s, err := Create(e.fs, e.dir, base, cfg, 0)
	require.NoError(t, err)
	return s
}

func path(e testFS, base int64, suffix string) string {
	return filepath.Join(e.dir, FileName(base, suffix))
}

func fileSize(t *testing.T, e testFS, name string) int64 {
	t.Helper()
	fi, err := e.fs.Stat(name)
	require.NoError(t, err)
	return fi.Size
}

// fixedClock is a clock tests move by hand.
type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// readAll reads every batch of the segment from offset from.
func readAll(t *testing.T, s *Segment, from int64) []byte {
	t.Helper()
	sl, err := s.Read(from, 1<<30, s.Size(), true)
	require.NoError(t, err)
	if sl == nil {
		return nil
	}
	defer sl.Release()
	b, err := sl.Bytes(nil)
	require.NoError(t, err)
	return b
}

var testStart = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// hooks are the LogHooks, as the log gets them.
var hooks = Hooks(access.Internal{})
