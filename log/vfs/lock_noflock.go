//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package vfs

import "os"

// crossProcessLocks reports whether [osFS.Lock] excludes other processes.
// Here the syscall package offers no flock, so only the in-process registry
// guards the lock: two processes can both hold it.
const crossProcessLocks = false

func lockFile(*os.File) error { return nil }
