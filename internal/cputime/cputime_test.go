package cputime

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProcessGrows: CPU spent between two reads shows in the second.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not measured on this platform")
	}
	before := Process()
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	require.NotZero(t, x|1)
	require.Greater(t, Process(), before)
}
