package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// fsync makes f durable with fcntl(F_FULLFSYNC): on macOS plain fsync(2)
// only hands the data to the drive, which may keep it in its volatile cache.
// Filesystems that do not support F_FULLFSYNC (SMB mounts, for one) answer
// ENOTSUP; for them it falls back to fsync(2), the best they offer.
func fsync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	var syncErr error
	if err := rc.Control(func(fd uintptr) { syncErr = fullFsync(fd) }); err != nil {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	if syncErr != nil {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: syncErr}
	}
	return nil
}

func fullFsync(fd uintptr) error {
	for {
		_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_FULLFSYNC, 0)
		var err error
		switch errno {
		case 0:
			return nil
		case syscall.ENOTSUP:
			err = syscall.Fsync(int(fd))
		default:
			err = errno
		}
		if err != syscall.EINTR {
			return err
		}
	}
}
