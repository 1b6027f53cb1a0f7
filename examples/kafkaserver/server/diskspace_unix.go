//go:build unix

package server

import "syscall"

// diskSpace returns the total and usable bytes of the filesystem holding
// path, or -1, -1 if they cannot be read.
func diskSpace(path string) (total, usable int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return -1, -1
	}
	return int64(st.Blocks) * int64(st.Bsize), int64(st.Bavail) * int64(st.Bsize)
}
