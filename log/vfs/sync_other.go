//go:build !darwin

package vfs

import "os"

// fsync makes f durable: fsync(2) on unix systems, FlushFileBuffers on
// Windows (both through [os.File.Sync]). fsync rather than fdatasync, so that
// a size change made by Truncate is durable too.
func fsync(f *os.File) error { return f.Sync() }
