package log

import "github.com/kafkalite/kafkalite/internal/cputime"

// cpuTime is the process's CPU time, for benchmarks that report
// throughput per CPU second on a shared machine.
var cpuTime = cputime.Process
