//go:build !unix

package server

// diskSpace returns -1, -1: the filesystem's space is not read here.
func diskSpace(string) (total, usable int64) { return -1, -1 }
