//go:build !unix

package perfsuite

import (
	"os"
	"time"
)

// cpuTime is not measured here: 0.
func cpuTime() time.Duration { return 0 }

// fdatasync is an fsync where the system has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }
