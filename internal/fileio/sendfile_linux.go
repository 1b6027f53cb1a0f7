//go:build linux

package fileio

import (
	"io"
	"syscall"

	"github.com/kafkalite/kafkalite/log/vfs"
)

// copyRangeKernel uses sendfile(2). handled is false when it could not start
// (not an OS file, a destination without a file descriptor, or a kernel that
// refuses the pair), so the caller copies the rest.
func copyRangeKernel(w io.Writer, f vfs.File, off, n int64) (done int64, handled bool, err error) {
	src := OSFile(f)
	dst, ok := w.(syscall.Conn)
	if src == nil || !ok || n <= 0 {
		return 0, false, nil
	}
	dstRC, err := dst.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	srcRC, err := src.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var werr error
	unsupported := false
	cerr := srcRC.Control(func(sfd uintptr) {
		pos := off
		werr = dstRC.Write(func(dfd uintptr) bool {
			for done < n {
				m, e := syscall.Sendfile(int(dfd), int(sfd), &pos, int(min(n-done, 1<<30)))
				if m > 0 {
					done += int64(m)
				}
				switch {
				case e == syscall.EAGAIN:
					return false // wait until the destination is writable
				case e == syscall.EINTR:
					continue
				case e == syscall.EINVAL || e == syscall.ENOSYS || e == syscall.EOPNOTSUPP:
					unsupported = done == 0
					if !unsupported {
						werr = e
					}
					return true
				case e != nil:
					werr = e
					return true
				case m == 0:
					werr = io.ErrUnexpectedEOF // the file is shorter than the range
					return true
				}
			}
			return true
		})
	})
	if unsupported {
		return 0, false, nil
	}
	if cerr != nil {
		return done, true, cerr
	}
	return done, true, werr
}
