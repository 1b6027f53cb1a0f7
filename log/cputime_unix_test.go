//go:build unix

package log

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user plus system CPU time, for benchmarks
// that report throughput per CPU second on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
