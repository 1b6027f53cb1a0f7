package vfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLockConflictsWithRecordLocks: a Kafka broker locks its log
// directory's .lock with Java's FileChannel.tryLock, an fcntl(2) record
// lock, which Linux keeps apart from flock(2). Lock must fail while such a
// lock is held, and a record lock must fail while Lock holds the file, so
// that kafkalite and a broker never open the same directory at once.
// Before the fix Lock took only the flock and opened a running broker's
// directory (whose index files it then trimmed under the broker's maps).
func TestLockConflictsWithRecordLocks(t *testing.T) {
	name := filepath.Join(t.TempDir(), ".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	// What Java's FileChannel.tryLock does on Linux: a POSIX write lock
	// on the whole file (here from this process, with which an
	// open-file-description lock conflicts too).
	whole := syscall.Flock_t{Type: syscall.F_WRLCK}
	require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &whole))

	_, err = Default.Lock(name)
	require.ErrorIs(t, err, ErrLocked, "Lock while a record lock is held")

	unlock := syscall.Flock_t{Type: syscall.F_UNLCK}
	require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &unlock))
	l, err := Default.Lock(name)
	require.NoError(t, err, "Lock once the record lock is released")

	// And the other way: the broker's tryLock fails while Lock holds it.
	other, err := os.OpenFile(name, os.O_RDWR, 0)
	require.NoError(t, err)
	defer other.Close()
	err = syscall.FcntlFlock(other.Fd(), syscall.F_SETLK, &whole)
	require.ErrorIs(t, err, syscall.EAGAIN, "a record lock while Lock holds the file")

	require.NoError(t, l.Close())
	require.NoError(t, syscall.FcntlFlock(other.Fd(), syscall.F_SETLK, &whole), "a record lock once Lock released the file")
}
