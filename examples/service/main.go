// Command service is an order service built on an embedded log instead of a
// database and a Kafka cluster: its write path appends order events to the
// topic "order-events" (acks=all, idempotent: an event is durable when the
// call returns), and a projection running in the background as a member of
// a consumer group folds them into an in-memory view of totals per customer,
// writes each change to the compacted changelog "order-totals" and commits
// its offsets. A restarted service restores the view from the changelog and
// resumes at its committed offsets: every event counts once (at-least-once
// delivery, idempotent projection; see Service).
//
//	go run ./examples/service                    # a demo in a temporary directory
//	go run ./examples/service -dir DIR           # kept in DIR: run it twice to see the restart
//	go run ./examples/service -compression lz4   # events and totals compressed with lz4
//
// -compression is the producers' compression.type (Config.CompressionType):
// none (the default, as Kafka's), gzip, snappy, lz4 or zstd.
//
// The core (service.go) is plain functions and methods, with no HTTP; its
// tests stop and crash the service mid-stream, with each codec, and check
// the view.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

func main() {
	dir := flag.String("dir", "", "log directory (kept); default a temporary directory, removed after")
	orders := flag.Int("orders", 300, "orders to place in each of the two runs")
	compression := flag.String("compression", "none", "compression.type of the producers: none, gzip, snappy, lz4, zstd")
	flag.Parse()
	cfg := DefaultConfig()
	var err error
	if cfg.CompressionType, err = record.ParseCompression(*compression); err != nil {
		fmt.Fprintln(os.Stderr, "service: -compression:", err)
		os.Exit(2)
	}
	if err := demo(context.Background(), *dir, *orders, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(1)
	}
}

// dirConfig keeps a small example's directory small: one partition for each
// internal topic.
func dirConfig() log.Config {
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	return cfg
}

// demo runs the service twice on one directory with the configuration
// cfg: each run places orders from eight concurrent clients (cancelling
// some), waits for the projection and prints the view; the second run
// starts from the first one's changelog and offsets.
func demo(ctx context.Context, dir string, orders int, cfg Config, out io.Writer) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kafkalite-service-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	for run := 1; run <= 2; run++ {
		if err := runOnce(ctx, dir, run, orders, cfg, out); err != nil {
			return fmt.Errorf("run %d: %w", run, err)
		}
	}
	return nil
}

func runOnce(ctx context.Context, dir string, run, orders int, cfg Config, out io.Writer) (err error) {
	d, err := log.Open(ctx, dir, dirConfig())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	svc, err := Start(ctx, d, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, svc.Close(ctx)) }()
	restored := svc.Totals()
	fmt.Fprintf(out, "run %d: view restored from %s: %d customers\n", run, TotalsTopic, len(restored))

	// Eight clients at once, as requests would come: their durable appends
	// share fsyncs (group commit).
	const clients = 8
	errs := make(chan error, clients)
	for w := range clients {
		go func() {
			for i := w; i < orders; i += clients {
				id, customer, cents := fmt.Sprintf("o-%d-%d", run, i), fmt.Sprintf("customer-%d", i%5), int64(100+i%7*250)
				if err := svc.PlaceOrder(ctx, id, customer, cents); err != nil {
					errs <- err
					return
				}
				if i%6 == 5 {
					if err := svc.CancelOrder(ctx, id, customer, cents); err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		return err
	}
	if err := svc.CaughtUp(ctx); err != nil {
		return err
	}
	view := svc.Totals()
	customers := make([]string, 0, len(view))
	for c := range view {
		customers = append(customers, c)
	}
	sort.Strings(customers)
	for _, c := range customers {
		t := view[c]
		fmt.Fprintf(out, "  %-11s %5d orders  %9.2f  (%d events, last at %s-%d@%d)\n",
			c, t.Orders, float64(t.Cents)/100, t.Events, EventsTopic, t.Partition, t.Offset)
	}
	st := svc.Stats()
	fmt.Fprintf(out, "  projection: %d events applied, %d skipped as already applied, %d commits\n", st.Applied, st.Skipped, st.Commits)
	return nil
}
