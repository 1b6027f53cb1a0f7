//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package fileio

import (
	"os"
	"syscall"
)

const mmapSupported = true

func mmap(f *os.File, size int, writable bool) ([]byte, error) {
	prot := syscall.PROT_READ
	if writable {
		prot |= syscall.PROT_WRITE
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var data []byte
	var mmapErr error
	if err := rc.Control(func(fd uintptr) {
		data, mmapErr = syscall.Mmap(int(fd), 0, size, prot, syscall.MAP_SHARED)
	}); err != nil {
		return nil, err
	}
	return data, mmapErr
}

func munmap(data []byte) error { return syscall.Munmap(data) }
