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
// repetition; -workloads and -shared narrow it; bad flags are refused
// before anything runs.
func TestRun(t *testing.T) {
	var out, errs bytes.Buffer
	err := run(context.Background(), []string{"-records", "2000", "-point-reads", "100", "-reps", "1", "-dir", t.TempDir()}, &out, &errs)
	require.NoError(t, err, errs.String())
	for _, w := range []string{"W1", "W2", "W3", "R1", "R2"} {
		require.Contains(t, out.String(), "| "+w, out.String())
	}
	require.Equal(t, 1, strings.Count(out.String(), "shared (6 partitions"), out.String())
	require.Contains(t, errs.String(), "# load after:")

	// -workloads picks rows; -shared=false drops the shared lines.
	out.Reset()
	err = run(context.Background(), []string{"-records", "2000", "-reps", "1", "-workloads", "W2,R1", "-shared=false", "-dir", t.TempDir()}, &out, &errs)
	require.NoError(t, err, errs.String())
	require.Contains(t, out.String(), "| W2", out.String())
	require.Contains(t, out.String(), "| R1", out.String())
	for _, w := range []string{"W1", "W3", "R2", "shared ("} {
		require.NotContains(t, out.String(), w, out.String())
	}

	for _, bad := range [][]string{{"-compression", "brotli"}, {"-records", "0"}, {"-reps", "-1"}, {"-nope"}, {"-workloads", "W9"}} {
		out.Reset()
		require.Error(t, run(context.Background(), bad, &out, &errs), bad)
		require.Empty(t, out.String(), bad)
	}
}
