//go:build unix

package server

import "syscall"

// descriptorLimit is the process's soft RLIMIT_NOFILE (which Go raises to
// the hard limit when the process starts).
func descriptorLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == 0 {
		return noDescriptorLimit
	}
	return r.Cur
}
