// Command dumplog is kafkalite's kafka-dump-log: it prints what a Kafka log
// directory holds, batch by batch and record by record, and checks it. It
// reads a log directory (every partition in it), one partition directory, or
// a single segment file (.log, .index, .timeindex, .txnindex, .snapshot), and
// reads directories a Kafka broker wrote as well as kafkalite's own.
//
//	go run ./examples/dumplog DIR                       # batches, as kafka-dump-log prints them
//	go run ./examples/dumplog -records DIR              # and every record (--print-data-log)
//	go run ./examples/dumplog -json DIR                 # one JSON object per record
//	go run ./examples/dumplog -json -isolation read_committed DIR/orders-0
//	go run ./examples/dumplog -verify DIR               # CRCs and indexes; exit status 1 on a problem
//
// Text output follows kafka-dump-log's lines ("baseOffset: 0 lastOffset: 2
// count: 3 ... isvalid: true", "| offset: 0 CreateTime: ... payload: ..."),
// with one difference: keys and payloads that are not printable UTF-8 have
// their unprintable bytes escaped (\n, \x00, \u2028), so a record never
// breaks a line. With -json each record is one line:
//
//	{"topic":"orders","partition":0,"offset":7,"timestamp":1700000000000,"key":"dXNlci00Mg==","value":null,"headers":[{"key":"trace-id","value":"NGJm"}]}
//
// timestamp is in milliseconds since the epoch as a Kafka consumer reports it
// (a LogAppendTime batch gives every record the batch's max timestamp); key,
// value and header values are base64, or null when null. Control records
// (transaction markers) are never printed as data; the text mode shows them
// as "endTxnMarker: ABORT coordinatorEpoch: 12", as kafka-dump-log does.
//
// A log directory with tiered storage ends with the segments of its tiered
// partitions that are in remote storage, as its __remote_log_metadata
// records them: "partition: tiered-0 startOffset: 0 endOffset: 29 size:
// 3804 maxTimestamp: ... state: COPY_SEGMENT_FINISHED id: ..." (the copies
// being made, or being deleted, with their state).
//
// -isolation read_committed shows what a read_committed consumer would get:
// no records of aborted transactions (found, as Kafka's broker finds them, in
// the partition's .txnindex files) and nothing from the first offset of the
// earliest transaction still open (the last stable offset) on. Batch lines in
// the text mode are the physical layout and are always printed; the filter
// applies to records.
//
// -verify checks every batch (CRC, layout, decompression, offsets increasing
// across batches and segments), every .index and .timeindex entry (it points
// at a batch boundary whose last offset, and for the time index whose max
// timestamp, it names; entries increase; nothing points past the .log; the
// indexes of sealed segments are trimmed), every .txnindex entry against the
// ABORT markers in the log, the leader-epoch-checkpoint against the batches'
// leader epochs, and that the small files parse. It prints each problem on
// standard error and exits with status 1 if there was any; only a clean run
// prints "verified N partition(s) ...: no problems".
//
// A path that cannot be read (missing, a symlink loop, permission denied), a
// file in it that cannot be read or parsed, and a directory under which no
// segment (.log) is found — an empty directory, a log directory without
// partitions, or none that -topic and -partition select — are said on
// standard error, naming the path, and make the exit status 1 in every
// mode, as kafka-dump-log fails on a file it cannot open; under -verify
// each counts as a problem. The other paths are dumped all the same.
//
// What the JSON lines cannot show is said on standard error, without
// changing the exit status: a batch that is not valid (a CRC mismatch, as
// the text mode's "isvalid: false"; its records are printed as they are, as
// kafka-dump-log prints them — -verify reports it and exits with status 1),
// and, once, that records print with "topic":"" or "partition":-1 because a
// segment's directory is not named <topic>-<partition> (give -topic and
// -partition).
//
// dumplog never modifies anything and takes no lock: it opens every file
// read-only, and reads segments with the record and index packages rather
// than log.Open (which recovers, trims and writes checkpoints) or
// segment.Open (which creates a missing .timeindex). So it can read a
// directory that a kafkalite Dir or a Kafka broker has open; what it prints
// is then a snapshot, and a batch being appended at that moment shows up as
// trailing bytes, as it does in kafka-dump-log.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line's flags.
type options struct {
	records   bool
	json      bool
	verify    bool
	committed bool
	topic     string
	partition int
	paths     []string
}

// run is the command: it parses args, writes the dump to stdout and problems
// and warnings to stderr, and returns the exit status (0 fine, 1 a path or
// file unreadable, a directory without segments, or with -verify a problem
// found; 2 bad usage).
func run(args []string, stdout, stderr io.Writer) int {
	var o options
	var isolation string
	fl := flag.NewFlagSet("dumplog", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.BoolVar(&o.records, "records", false, "print every record, with its key and payload (kafka-dump-log --print-data-log)")
	fl.BoolVar(&o.json, "json", false, "print one JSON object per record instead of the text dump")
	fl.BoolVar(&o.verify, "verify", false, "check CRCs, indexes and small files instead of printing them; exit status 1 on a problem")
	fl.StringVar(&isolation, "isolation", "read_uncommitted", "read_uncommitted or read_committed: which records to print")
	fl.StringVar(&o.topic, "topic", "", "topic of a partition directory or segment file whose name does not say it; with a log directory, only this topic")
	fl.IntVar(&o.partition, "partition", -1, "partition, as -topic")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: dumplog [flags] PATH...  (a log directory, a partition directory or a segment file)")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	switch isolation {
	case "read_uncommitted":
	case "read_committed":
		o.committed = true
	default:
		fmt.Fprintf(stderr, "dumplog: -isolation must be read_committed or read_uncommitted, not %q\n", isolation)
		return 2
	}
	if o.verify && (o.json || o.records) {
		fmt.Fprintln(stderr, "dumplog: -verify prints problems only; it does not combine with -json or -records")
		return 2
	}
	o.paths = fl.Args()
	if len(o.paths) == 0 {
		fl.Usage()
		return 2
	}

	out := bufio.NewWriter(stdout)
	d := &dumper{opts: o, out: out, stderr: stderr}
	d.enc = json.NewEncoder(out)
	d.enc.SetEscapeHTML(false)
	for _, p := range o.paths {
		if err := d.dumpPath(p); err != nil {
			d.fail(err)
		}
	}
	d.flush()
	if o.verify {
		for _, p := range d.problems {
			fmt.Fprintln(stderr, p)
		}
		if n := len(d.problems) + d.failed; n > 0 {
			fmt.Fprintf(stderr, "dumplog: %d problem(s) found\n", n)
			return 1
		}
		fmt.Fprintf(stdout, "verified %d partition(s), %d segment(s), %d batch(es): no problems\n", d.partitions, d.segments, d.batches)
		return 0
	}
	if d.failed > 0 {
		return 1
	}
	return 0
}

// dumper holds the output and the state of one run.
type dumper struct {
	opts   options
	out    *bufio.Writer
	enc    *json.Encoder
	stderr io.Writer

	problems                      []string
	partitions, segments, batches int
	// failed counts the paths and files that could not be read (each said
	// on stderr at once): they make the exit status 1, and count as
	// problems under -verify.
	failed int
	// warnedUnnamed is set once the -json warning about records without a
	// topic or partition was given.
	warnedUnnamed bool
}

func (d *dumper) flush() { _ = d.out.Flush() }

// fail reports on stderr a path or file that cannot be read.
func (d *dumper) fail(err error) {
	d.flush()
	fmt.Fprintln(d.stderr, "dumplog:", err)
	d.failed++
}

// warnf says something on stderr that does not change the exit status:
// what the -json output cannot show.
func (d *dumper) warnf(format string, args ...any) {
	d.flush()
	fmt.Fprintf(d.stderr, "dumplog: warning: "+format+"\n", args...)
}

// problemf records a -verify problem.
func (d *dumper) problemf(format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

// text reports whether the human-readable dump is being printed.
func (d *dumper) text() bool { return !d.opts.json && !d.opts.verify }

// printf writes to the text dump, if it is being printed.
func (d *dumper) printf(format string, args ...any) {
	if d.text() {
		fmt.Fprintf(d.out, format, args...)
	}
}

// ignore says on stderr that a file is skipped, as kafka-dump-log does.
func (d *dumper) ignore(path, why string) {
	if d.text() {
		d.flush()
		fmt.Fprintf(d.stderr, "Ignoring %s%s\n", path, why)
	}
}

// dumpPath dumps a log directory, a partition directory or one file. A
// directory under which no segment is found is an error: the path was
// mistyped, or names something else than a log.
func (d *dumper) dumpPath(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		p := d.partitionFor(filepath.Dir(path))
		p.only = filepath.Base(path)
		return d.dumpPartition(p)
	}
	logDir, err := isLogDir(path)
	if err != nil {
		return err
	}
	before := d.segments
	if logDir {
		err = d.dumpLogDir(path)
	} else {
		err = d.dumpPartition(d.partitionFor(path))
	}
	if err == nil && d.segments == before {
		return fmt.Errorf("no log segments found under %s%s", path, d.selection(logDir))
	}
	return err
}

// selection describes the -topic and -partition flags that select the
// partitions of a log directory, or "".
func (d *dumper) selection(logDir bool) string {
	var sel []string
	if logDir && d.opts.topic != "" {
		sel = append(sel, "-topic "+d.opts.topic)
	}
	if logDir && d.opts.partition >= 0 {
		sel = append(sel, fmt.Sprintf("-partition %d", d.opts.partition))
	}
	if len(sel) == 0 {
		return ""
	}
	return " (with " + strings.Join(sel, " ") + ")"
}

// escape makes bytes printable on one line: valid UTF-8 stays as it is
// (as kafka-dump-log's StringDecoder prints it); control characters and
// invalid bytes become Go escapes.
func escape(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case n == 1 && r == utf8.RuneError:
			fmt.Fprintf(&sb, `\x%02x`, b[i])
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.Write(b[i : i+n])
		}
		i += n
	}
	return sb.String()
}
