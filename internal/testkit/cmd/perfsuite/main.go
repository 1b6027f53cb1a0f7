// Command perfsuite runs the workloads of the README's "Against a plain
// file" table (package perfsuite: W1–W3, R1, R2 on a plain-file baseline,
// the raw log API and the clients, interleaved -reps times) and prints the
// table with each path's median as a ratio to the baseline's, then -reps
// runs of the shared-producer workload (perfsuite.Shared). Each run goes
// to stderr as it ends, with the load average before and after.
//
//	go run ./internal/testkit/cmd/perfsuite                       # uncompressed, 1,000,000 records, 3 repetitions
//	go run ./internal/testkit/cmd/perfsuite -compression lz4 -reps 5
//	go run ./internal/testkit/cmd/perfsuite -workloads W2 -shared=false
//
// It is the project's own measuring tool, not an example: a user's
// measure of the producer is examples/perf, Kafka's producer perf test
// against a directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/perfsuite"
	"github.com/kafkalite/kafkalite/record"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "perfsuite:", err)
		os.Exit(1)
	}
}

// run parses the flags and prints the table to stdout, the runs to
// stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	so := perfsuite.DefaultOptions()
	fs := flag.NewFlagSet("perfsuite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&so.Records, "records", so.Records, "records of W1, W3, R1 and R2 (W2 writes a tenth)")
	fs.IntVar(&so.PointReads, "point-reads", so.PointReads, "R2's reads")
	compression := fs.String("compression", "none", "compression.type of the raw and client paths: none, gzip, snappy, lz4, zstd")
	fs.StringVar(&so.Dir, "dir", so.Dir, "where each run makes its directory")
	reps := fs.Int("reps", 3, "repetitions of each workload")
	workloads := fs.String("workloads", "", "comma-separated workloads of the table (W1,W2,W3,R1,R2; empty is all)")
	shared := fs.Bool("shared", true, "run the shared-producer workload after the table")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if so.Codec, err = record.ParseCompression(*compression); err != nil {
		return err
	}
	if *workloads != "" {
		for _, w := range strings.Split(*workloads, ",") {
			if !slices.Contains(perfsuite.Workloads, perfsuite.Workload(w)) {
				return fmt.Errorf("-workloads: no workload %q", w)
			}
			so.Workloads = append(so.Workloads, perfsuite.Workload(w))
		}
	}
	if so.Records <= 0 || *reps <= 0 {
		return fmt.Errorf("-records %d and -reps %d must be positive", so.Records, *reps)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(err, f.Close())
		}
		defer func() {
			pprof.StopCPUProfile()
			if cerr := f.Close(); cerr != nil {
				fmt.Fprintln(stderr, "perfsuite: -cpuprofile:", cerr)
			}
		}()
	}
	fmt.Fprintf(stderr, "# %d records, %s, %d repetitions, load %s\n", so.Records, so.Codec, *reps, loadAverage())
	rows, err := perfsuite.Table(ctx, so, *reps, func(r perfsuite.Result) {
		fmt.Fprintf(stderr, "%s %-8s %12.0f records/s  %v CPU\n", r.Workload, r.Path, r.PerSecond(), r.CPU.Round(time.Millisecond))
	})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, perfsuite.Markdown(rows))
	for range *reps * btoi(*shared) {
		res, err := perfsuite.Shared(ctx, so.Dir, 6, 4, so.Records, 200, so.Codec)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "shared (6 partitions, 4 goroutines, 200-byte values, acks=all): %.0f records/s, %v CPU per record\n",
			res.PerSecond(), (res.CPU / time.Duration(res.Records)).Round(10*time.Nanosecond))
	}
	fmt.Fprintf(stderr, "# load after: %s\n", loadAverage())
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loadAverage is /proc/loadavg's first three fields, where there is one.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
