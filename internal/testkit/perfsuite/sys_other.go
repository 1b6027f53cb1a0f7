//go:build !unix

package perfsuite

import "os"

// fdatasync is an fsync where the system has no fdatasync.
func fdatasync(f *os.File) error { return f.Sync() }
