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

// lockFile takes flock(2) LOCK_EX|LOCK_NB on f, and where flock and
// fcntl(2) record locks do not see each other (Linux) a record lock too
// (see lockRecord); the locks last until f is closed. Another holder of
// either makes it fail with [ErrLocked].
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
				break
			}
		}
		if lockErr == nil {
			lockErr = lockRecord(fd)
		}
	}); err != nil {
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	switch {
	case lockErr == nil:
		return nil
	case errors.Is(lockErr, syscall.EWOULDBLOCK), errors.Is(lockErr, syscall.EAGAIN), errors.Is(lockErr, syscall.EACCES):
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: ErrLocked}
	default:
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: lockErr}
	}
}
