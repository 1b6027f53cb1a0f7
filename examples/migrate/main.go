// Command migrate copies a kafkalite directory into an Apache Kafka cluster,
// or a cluster's topics into a kafkalite directory (package migrate):
//
//	cd examples/migrate
//	go run . -from /data/kafkalite -to broker1:9092,broker2:9092
//	go run . -from /data/kafkalite -to broker1:9092 -verify
//	go run . -from broker1:9092 -to /tmp/replay -topics orders,payments -since 2026-12-01T00:00:00Z
//
// It stops on SIGINT or SIGTERM after saving its progress; run it again to
// continue. The exit status is 0 when everything was copied (or, with
// -verify, both sides agree), 1 otherwise, 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kafkalite/kafkalite/examples/migrate/migrate"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	from := fs.String("from", "", "a kafkalite directory, or a cluster's host:port[,host:port...]")
	to := fs.String("to", "", "a cluster's host:port[,host:port...], or a kafkalite directory")
	topics := fs.String("topics", "", "comma-separated topics (default: every user topic of the directory; required from a cluster)")
	groups := fs.String("groups", "", "comma-separated consumer groups whose offsets are copied (default: all with offsets on the copied topics)")
	noGroups := fs.Bool("no-groups", false, "copy no group offsets")
	since := fs.String("since", "", "from a cluster: copy only records from this time on (RFC 3339, or a duration ago such as 24h)")
	stateDir := fs.String("state", "", "the migration's state directory (default: the kafkalite directory's path + \".migrate\")")
	compression := fs.String("compression", "lz4", "the producer's codec to the cluster: none, gzip, snappy, lz4, zstd")
	rf := fs.Int("replication-factor", -1, "replication factor of the topics created on the cluster (-1: the broker's default)")
	verify := fs.Bool("verify", false, "compare both sides record by record and group by group instead of copying")
	dryRun := fs.Bool("dry-run", false, "print the plan and change nothing")
	progress := fs.String("progress", "auto", "progress display: bar, log or auto (a bar on a terminal)")
	checkpoint := fs.Duration("checkpoint", time.Second, "how often the progress is saved while copying")
	verbose := fs.Bool("v", false, "log each step")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := migrate.Options{Compression: *compression, ReplicationFactor: int16(*rf), DryRun: *dryRun,
		NoGroups: *noGroups, StateDir: *stateDir, Out: os.Stdout, CheckpointEvery: *checkpoint}
	switch {
	case *from == "" || *to == "":
		fmt.Fprintln(os.Stderr, "migrate: -from and -to are required")
		return 2
	case migrate.LooksLikeBrokers(*to) && !migrate.LooksLikeBrokers(*from):
		o.Direction, o.Dir, o.Brokers = migrate.ToCluster, *from, strings.Split(*to, ",")
	case migrate.LooksLikeBrokers(*from) && !migrate.LooksLikeBrokers(*to):
		o.Direction, o.Dir, o.Brokers = migrate.FromCluster, *to, strings.Split(*from, ",")
	default:
		fmt.Fprintln(os.Stderr, "migrate: one of -from and -to must be a directory and the other host:port[,host:port...]")
		return 2
	}
	if *topics != "" {
		o.Topics = strings.Split(*topics, ",")
	}
	if *groups != "" {
		o.Groups = strings.Split(*groups, ",")
	}
	if *since != "" {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			fmt.Fprintln(os.Stderr, "migrate:", err)
			return 2
		}
		o.Since = t
	}
	switch *progress {
	case "bar":
		o.ProgressBar = true
	case "log":
	case "auto":
		o.ProgressBar = isTerminal(os.Stdout)
	default:
		fmt.Fprintln(os.Stderr, "migrate: -progress is bar, log or auto")
		return 2
	}
	if *verbose {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *verify {
		rep, err := migrate.Verify(ctx, o)
		if rep != nil {
			rep.Print(os.Stdout)
		}
		if err != nil {
			if !errors.Is(err, migrate.ErrDifferent) {
				printError(err)
			}
			return 1
		}
		return 0
	}
	sum, err := migrate.Run(ctx, o)
	if sum != nil && !o.DryRun {
		sum.Print(os.Stdout)
	}
	if err != nil {
		printError(err)
		if errors.Is(err, migrate.ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// parseSince reads -since: an RFC 3339 time, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("-since %q is neither an RFC 3339 time nor a duration such as 24h", s)
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// printError prints err, each of joined errors on its line, with the
// command's name once.
func printError(err error) {
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if !strings.HasPrefix(line, "migrate:") {
			line = "migrate: " + line
		}
		fmt.Fprintln(os.Stderr, line)
	}
}
