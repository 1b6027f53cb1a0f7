package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log"
	"github.com/stretchr/testify/require"
)

func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	devnull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devnull.Close()
	require.NoError(t, run(context.Background(), dir, 3000, 100, devnull))
	// A second run appends to the same directory.
	require.NoError(t, run(context.Background(), dir, 3000, 100, devnull))

	d, err := log.Open(context.Background(), dir, log.DefaultConfig())
	require.NoError(t, err)
	defer d.Close()
	require.True(t, d.Recovery().Clean)
	var total int64
	for p := int32(0); p < 3; p++ {
		l, err := d.Partition("quickstart", p)
		require.NoError(t, err)
		total += l.LogEndOffset()
	}
	require.Equal(t, int64(6000), total)
	for _, f := range []string{"meta.properties", "quickstart-0/00000000000000000000.log", "quickstart-2/partition.metadata"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
}
