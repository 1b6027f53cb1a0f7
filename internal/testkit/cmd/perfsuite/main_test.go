package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRun: a small suite prints the ratio table (a row per workload, the
// baseline's ratio 1.00) and the shared-producer lines, one per
// repetition; bad flags are refused before anything runs.
func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	err := run(context.Background(), []string{"-records", "2000", "-point-reads", "100", "-reps", "1", "-dir", t.TempDir()}, &out, &errs)
	require.NoError(t, err, errs.String())
	for _, w := range []string{"W1", "W2", "W3", "R1", "R2"} {
		require.Contains(t, out.String(), "| "+w, out.String())
	}
	require.Equal(t, 1, strings.Count(out.String(), "shared (6 partitions"), out.String())
	require.Contains(t, errs.String(), "# load after:")

	for _, bad := range [][]string{{"-compression", "brotli"}, {"-records", "0"}, {"-reps", "-1"}, {"-nope"}} {
		out.Reset()
		require.Error(t, run(context.Background(), bad, &out, &errs), bad)
		require.Empty(t, out.String(), bad)
	}
}
