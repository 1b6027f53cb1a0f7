//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// crossProcessLocks reports whether [osFS.Lock] excludes other processes.
const crossProcessLocks = true

// lockFile takes flock(2) LOCK_EX|LOCK_NB on f; the lock lasts until f is
// closed. Another holder makes it fail with [ErrLocked].
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	var lockErr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lockErr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if lockErr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	switch {
	case lockErr == nil:
		return nil
	case errors.Is(lockErr, syscall.EWOULDBLOCK):
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: ErrLocked}
	default:
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: lockErr}
	}
}
