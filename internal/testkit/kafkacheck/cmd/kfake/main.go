// Command kfake runs franz-go's kfake (a fake Kafka cluster in Go, kept
// in memory) as one broker on a loopback port, so that TestPerfKgo
// measures it in a process of its own, as it measures kafkaserver and
// Kafka's broker: its memory is its own and it does not share the
// benchmark's Go scheduler. It prints "kfake: serving on HOST:PORT" once it
// listens and runs until SIGINT or SIGTERM.
//
//	go run ./cmd/kfake -port 9092
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "the port to listen on, on 127.0.0.1; 0 picks a free one")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	fmt.Printf("kfake: serving on %s\n", c.ListenAddrs()[0])
	<-ctx.Done()
	c.Close()
}
