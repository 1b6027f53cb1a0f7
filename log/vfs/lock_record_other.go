//go:build darwin || dragonfly || freebsd || illumos || netbsd || openbsd

package vfs

// lockRecord does nothing here: these systems build flock(2) on the same
// advisory-lock table as fcntl(2) record locks, so the flock alone also
// conflicts with a holder of a record lock (a Kafka broker, whose Java
// FileChannel.tryLock takes one). Only Linux keeps the two apart.
func lockRecord(uintptr) error { return nil }
