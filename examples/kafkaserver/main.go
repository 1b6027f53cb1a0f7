// Command kafkaserver serves a kafkalite directory over Kafka's wire
// protocol (package server), so that Kafka's own clients and tools produce
// to it and fetch from it:
//
//	cd examples/kafkaserver && go run . -dir /tmp/kl -listen 127.0.0.1:9092
//	kcat -b 127.0.0.1:9092 -t orders -P <<<'hello'
//
// It runs until SIGINT or SIGTERM, then closes the connections and the
// directory cleanly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
)

func main() {
	dir := flag.String("dir", "", "the kafkalite directory to serve (created if missing)")
	listen := flag.String("listen", "127.0.0.1:9092", "host:port to listen on")
	advertised := flag.String("advertised", "", "host:port to give clients (advertised.listeners); default -listen's")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "kafkaserver: -dir is required")
		os.Exit(2)
	}
	if err := run(*dir, *listen, *advertised); err != nil {
		fmt.Fprintln(os.Stderr, "kafkaserver:", err)
		os.Exit(1)
	}
}

func run(path, listen, advertised string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := log.Open(ctx, path, log.DefaultConfig())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return errors.Join(err, d.Close())
	}
	cfg := server.DefaultConfig()
	cfg.AdvertisedAddr = advertised
	fmt.Printf("kafkaserver: serving %s on %s\n", path, ln.Addr())
	err = server.Serve(ctx, ln, d, cfg)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, d.Close())
}
