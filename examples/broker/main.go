package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run serves a log directory on a loopback port and runs a client against
// it: produce, a refused batch, fetch, list offsets.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("broker", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "log directory (default: a temporary one, removed at exit)")
	compression := fl.String("compression", "none", "compression.type of the client's batches: none, gzip, snappy, lz4, zstd")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	codec, err := record.ParseCompression(*compression)
	if err != nil {
		fmt.Fprintln(stderr, "broker: -compression:", err)
		return 2
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "kafkalite-broker-")
		if err != nil {
			fmt.Fprintln(stderr, "broker:", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	}
	if err := demo(*dir, codec, stdout); err != nil {
		fmt.Fprintln(stderr, "broker:", err)
		return 1
	}
	return 0
}

// demoBatch is the client's i-th batch: two readings, compressed with
// codec, as a producer without idempotence encodes them.
func demoBatch(i int, codec record.Compression) ([]byte, error) {
	return record.AppendBatch(nil, record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(codec)},
		record.DefaultLevel, []record.Record{
			{Timestamp: 1700000000000 + int64(i)*1000, Key: []byte("sensor-1"), Value: fmt.Appendf(nil, "reading %d.0", i)},
			{Timestamp: 1700000000500 + int64(i)*1000, OffsetDelta: 1, Key: []byte("sensor-2"), Value: fmt.Appendf(nil, "reading %d.5", i)},
		})
}

// demo produces demoBatch 0 to 2, compressed with codec, a batch the log
// refuses, fetches from offset 2 and lists offsets, printing each answer.
func demo(dir string, codec record.Compression, out io.Writer) (err error) {
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	if _, err := d.CreateTopic(ctx, "events", 1, nil); err != nil && !errors.Is(err, log.ErrTopicExists) {
		return err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := NewServer(DirHandler{Dir: d})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		err = errors.Join(err, <-served)
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return err
	}
	defer conn.Close()
	c := NewClient(conn)

	for i := range 3 {
		batch, err := demoBatch(i, codec)
		if err != nil {
			return err
		}
		base, last, _, err := c.Produce("events", 0, batch)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "produced offsets %d-%d\n", base, last)
	}

	bad, err := record.AppendBatch(nil, record.BatchHeader{BaseOffset: 42, PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(codec)},
		record.DefaultLevel, []record.Record{{Timestamp: 1700000000000, Value: []byte("x")}})
	if err != nil {
		return err
	}
	_, _, _, err = c.Produce("events", 0, bad)
	fmt.Fprintf(out, "refused a batch with base offset 42: invalid record %v\n", errors.Is(err, log.ErrInvalidRecord))

	batches, hw, err := c.Fetch("events", 0, 2, 1<<20)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "fetched %d bytes from offset 2, high watermark %d\n", len(batches), hw)
	r := record.NewReader(record.ReaderOptions{})
	for len(batches) > 0 {
		n, err := record.BatchSize(batches)
		if err != nil {
			return err
		}
		if err := r.Reset(batches[:n]); err != nil {
			return err
		}
		for r.Next() {
			rec := r.Record()
			fmt.Fprintf(out, "  offset %d %s=%s\n", rec.Offset, rec.Key, rec.Value)
		}
		if err := r.Err(); err != nil {
			return err
		}
		batches = batches[n:]
	}

	for _, q := range []struct {
		name string
		ts   int64
	}{
		{"earliest", log.EarliestTimestamp},
		{"latest", log.LatestTimestamp},
		{"max timestamp", log.MaxTimestamp},
		{"time 1700000001200", 1700000001200},
	} {
		ot, ok, err := c.ListOffsets("events", 0, q.ts)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "list offsets %s: offset %d timestamp %d found %v\n", q.name, ot.Offset, ot.Timestamp, ok)
	}
	return nil
}
