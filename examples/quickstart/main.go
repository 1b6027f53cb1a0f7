// Command quickstart is kafkalite's first command: it writes Kafka record
// batches to a .log file the way a partition stores them, reads them back
// and prints what it found.
//
// Until the log, producer and consumer packages land, it exercises the
// record package: one batch per compression codec, appended to
// 00000000000000000000.log with offsets assigned as a log assigns them,
// then a scan of the file that validates every batch and counts records.
//
//	go run ./examples/quickstart            # in a temporary directory, removed after
//	go run ./examples/quickstart -dir DIR   # keeps the file in DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kafkalite/kafkalite/record"
)

func main() {
	dir := flag.String("dir", "", "directory to write the segment file into (kept); default a temporary directory")
	n := flag.Int("records", 1000, "records per batch")
	flag.Parse()
	if err := run(*dir, *n); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(dir string, perBatch int) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "kafkalite-quickstart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "00000000000000000000.log")

	// Write: one batch per codec, offsets assigned by rewriting each batch's
	// base offset, as Kafka's log does on append.
	start := time.Now()
	var segment []byte
	var next int64
	var b record.Builder
	for _, c := range []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
		b.Reset(record.BatchHeader{
			PartitionLeaderEpoch: 0,
			Attributes:           record.Attributes(0).WithCompression(c),
			ProducerID:           record.NoProducerID,
			ProducerEpoch:        record.NoProducerEpoch,
			BaseSequence:         record.NoSequence,
		}, record.DefaultLevel)
		now := time.Now().UnixMilli()
		for i := range perBatch {
			key := fmt.Appendf(nil, "user-%d", i%100)
			value := fmt.Appendf(nil, `{"event":"page_view","user":"user-%d","page":"/item/%d","codec":%q}`, i%100, i, c)
			if err := b.Append(now, key, value, nil); err != nil {
				return err
			}
		}
		batch, err := b.Build()
		if err != nil {
			return err
		}
		if err := record.SetBaseOffset(batch, next); err != nil {
			return err
		}
		next += int64(b.Len())
		segment = append(segment, batch...)
	}
	if err := os.WriteFile(path, segment, 0o644); err != nil {
		return err
	}
	wrote := time.Since(start)

	// Read: scan the file batch by batch, validate, decode every record.
	start = time.Now()
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r := record.NewReader(record.ReaderOptions{})
	records := 0
	for pos := 0; pos < len(data); {
		size, err := record.BatchSize(data[pos:])
		if err != nil {
			return fmt.Errorf("position %d: %w", pos, err)
		}
		if err := r.Reset(data[pos : pos+size]); err != nil {
			return fmt.Errorf("position %d: %w", pos, err)
		}
		h := r.Header()
		n := 0
		for r.Next() {
			n++
		}
		if err := r.Err(); err != nil {
			return err
		}
		fmt.Printf("batch at position %7d: offsets %5d-%5d  %-6s %7d bytes  %d records  crc %#08x ok\n",
			pos, h.BaseOffset, h.LastOffset(), h.Attributes.Compression(), size, n, h.CRC)
		records += n
		pos += size
	}
	read := time.Since(start)
	fmt.Printf("wrote %d records in %d bytes to %s in %v; read them back in %v\n", records, len(data), path, wrote.Round(time.Microsecond), read.Round(time.Microsecond))
	return nil
}
