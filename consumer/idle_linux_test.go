//go:build linux

package consumer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

// openFiles returns the files this process has open under dir, and the
// number of its memory maps of files under dir.
func openFiles(t *testing.T, dir string) (fds []string, maps int) {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir) {
			fds = append(fds, target)
		}
	}
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, dir) {
			maps++
		}
	}
	return fds, maps
}

// apparentSize is the sum of the sizes of the files under dir.
func apparentSize(t *testing.T, dir string) (size int64) {
	t.Helper()
	require.NoError(t, filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			size += info.Size()
		}
		return err
	}))
	return size
}

// TestIdleCost: a Dir with the default configuration, one topic and one
// group consumer that joined and committed holds few open files, memory
// maps and preallocated bytes: an embedded library is cheap at rest. With
// Kafka's 50 partitions of __consumer_offsets it held 154 open files, 102
// maps and 1.07 GB of apparent size (preallocated indexes) for a few KB.
func TestIdleCost(t *testing.T) {
	dir := t.TempDir()
	d, err := log.Open(context.Background(), dir, log.DefaultConfig())
	require.NoError(t, err)
	defer d.Close()
	_, err = d.CreateTopic(context.Background(), "events", 1, nil)
	require.NoError(t, err)
	cfg := DefaultConfig()
	cfg.GroupID = "g"
	cfg.AutoOffsetReset = OffsetResetEarliest
	c, err := New(d, cfg)
	require.NoError(t, err)
	defer c.Close(context.Background())
	require.NoError(t, c.Subscribe([]string{"events"}, nil))
	deadline := time.Now().Add(10 * time.Second)
	for len(c.Assignment()) == 0 {
		require.True(t, time.Now().Before(deadline), "no assignment")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, _ = c.Poll(ctx)
		cancel()
	}
	require.NoError(t, c.CommitSync(context.Background(), nil))
	fds, maps := openFiles(t, dir)
	t.Logf("open files %d, maps %d, apparent size %d", len(fds), maps, apparentSize(t, dir))
	require.LessOrEqual(t, len(fds), 32, "open files under the directory (%d): %v", len(fds), fds[:min(len(fds), 10)])
	require.LessOrEqual(t, maps, 32, "memory maps of files under the directory")
	require.Less(t, apparentSize(t, dir), int64(64<<20), "apparent size of the directory")
}
