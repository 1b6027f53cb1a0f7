// Package cputime reads the process's CPU time, for benchmarks and the
// performance suite that report throughput per CPU second on a machine
// whose cores are shared.
package cputime
