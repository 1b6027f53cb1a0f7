//go:build !(darwin || dragonfly || freebsd || linux || openbsd)

package fileio

// msync does nothing where the syscall package offers no msync: the mapped
// systems among these (AIX, NetBSD, Solaris) have a unified buffer cache, so
// the fsync that [Mapping.Sync] issues next writes the mapped pages too.
func msync([]byte) error { return nil }
