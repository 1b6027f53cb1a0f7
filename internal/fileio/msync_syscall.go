//go:build darwin || dragonfly || freebsd || linux || openbsd

package fileio

import (
	"syscall"
	"unsafe"
)

// msync writes the mapping's dirty pages back to the file and waits for
// them (MS_SYNC).
func msync(data []byte) error {
	_, _, errno := syscall.Syscall(syscall.SYS_MSYNC,
		uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), syscall.MS_SYNC)
	if errno != 0 {
		return errno
	}
	return nil
}
