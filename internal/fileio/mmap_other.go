//go:build !(aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package fileio

import "os"

// mmapSupported is false: the syscall package offers no mmap here (on
// Windows it offers MapViewOfFile, but a mapped file there cannot be
// truncated or deleted, which segment roll and deletion need). Map checks
// it before calling the stubs below.
const mmapSupported = false

func mmap(*os.File, int, bool) ([]byte, error) { return nil, ErrNotSupported }

func munmap([]byte) error { return ErrNotSupported }
