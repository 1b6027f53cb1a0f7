package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, run(dir, 10))
	data, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	require.NoError(t, err)
	var next int64
	for pos := 0; pos < len(data); {
		size, err := record.BatchSize(data[pos:])
		require.NoError(t, err)
		h, err := record.Validate(data[pos : pos+size])
		require.NoError(t, err)
		require.Equal(t, next, h.BaseOffset, "offsets continue from batch to batch")
		next = h.NextOffset()
		pos += size
	}
	require.Equal(t, int64(50), next, "five batches of ten records")
}
