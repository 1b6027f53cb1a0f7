//go:build !linux

package fileio

import (
	"io"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// copyRangeKernel is not available on this platform: the caller copies.
func copyRangeKernel(io.Writer, vfs.File, int64, int64) (int64, bool, error) { return 0, false, nil }
