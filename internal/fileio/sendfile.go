package fileio

import (
	"io"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// CopyRange writes n bytes of f, starting at off, to w. Where the platform
// can move them inside the kernel (Linux sendfile(2) from an OS file to a
// socket or file that exposes syscall.Conn), it does, with an explicit
// offset, so concurrent callers do not share a file position and the bytes
// never pass through a user-space buffer; elsewhere it copies through
// io.Copy. It returns the number of bytes written.
func CopyRange(w io.Writer, f vfs.File, off, n int64) (int64, error) {
	done, handled, err := copyRangeKernel(w, f, off, n)
	if handled || err != nil {
		return done, err
	}
	m, err := io.Copy(w, io.NewSectionReader(f, off+done, n-done))
	return done + m, err
}
