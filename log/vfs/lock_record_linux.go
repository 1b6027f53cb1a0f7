package vfs

import "syscall"

// fOFDSetLK is F_OFD_SETLK (Linux 3.15), which the syscall package does
// not name on every architecture; its value is the same on all of them.
const fOFDSetLK = 37

// lockRecord takes an exclusive fcntl(2) record lock on the whole file as
// well. On Linux flock(2) locks and fcntl record locks are separate: a Kafka
// broker locks its log directory's .lock with Java's FileChannel.tryLock,
// a POSIX record lock, which a flock never sees, so kafkalite would open a
// directory a running broker holds (and the broker one kafkalite holds).
// The lock is an open-file-description lock, which conflicts with POSIX
// record locks of other processes and of this one, and, unlike a POSIX
// lock, is not dropped when another descriptor of the file closes. Kernels
// before 3.15 (EINVAL) get a POSIX record lock instead.
func lockRecord(fd uintptr) error {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	for {
		err := syscall.FcntlFlock(fd, fOFDSetLK, &lk)
		if err == syscall.EINVAL {
			err = syscall.FcntlFlock(fd, syscall.F_SETLK, &lk)
		}
		if err != syscall.EINTR {
			return err
		}
	}
}
