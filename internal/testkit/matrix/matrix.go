// Package matrix runs a test over every combination of the settings a
// kafkalite user can configure on a path that moves records: the
// compression codec, the consumer's isolation level, whether a poll spans
// one batch or several, and the filesystem the log directory lives on.
//
// A test that produces and consumes records asks for the dimensions it
// depends on and gets one subtest per combination, named after it
// ("codec=lz4/isolation=read_committed/poll=multi-batch/fs=os"):
//
//	matrix.Run(t, matrix.Codecs|matrix.Isolations|matrix.Polls, func(t *testing.T, c matrix.Case) {
//		cfg.CompressionType = c.Codec
//		...
//	})
//
// A dimension not asked for takes its first value (no compression,
// read_uncommitted, multi-batch polls, the memory filesystem) and does not
// appear in the name. The package imports only record and log/vfs, so
// that every package's internal tests can use it; the consumer's own
// isolation type is set from [Case.ReadCommitted].
package matrix

import (
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// Dims selects the dimensions of a run; combine them with |.
type Dims uint

const (
	// Codecs runs every compression codec: none, gzip, snappy, lz4, zstd.
	Codecs Dims = 1 << iota
	// Isolations runs both isolation levels: read_uncommitted and
	// read_committed.
	Isolations
	// Polls runs single-batch polls (every poll returns records of one
	// batch) and multi-batch polls (a poll returns records of many small
	// batches, the case where buffers reused between batches show).
	Polls
	// FSes runs on the memory filesystem and on the operating system's
	// (a t.TempDir()).
	FSes

	// All is every dimension.
	All = Codecs | Isolations | Polls | FSes
)

// AllCodecs is every compression codec a topic or producer can use, in
// their Kafka id order.
var AllCodecs = []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd}

// Poll is how many batches one poll spans.
type Poll int

const (
	// MultiBatch: small batches, many of them per poll.
	MultiBatch Poll = iota
	// SingleBatch: a poll returns at most one batch's records.
	SingleBatch
)

func (p Poll) String() string {
	if p == SingleBatch {
		return "single-batch"
	}
	return "multi-batch"
}

// FS is the filesystem a case's log directory lives on.
type FS int

const (
	// Mem is the crashable memory filesystem (vfs.NewMem).
	Mem FS = iota
	// OS is the operating system's filesystem, in a t.TempDir().
	OS
)

func (f FS) String() string {
	if f == OS {
		return "os"
	}
	return "mem"
}

// Case is one combination.
type Case struct {
	Codec         record.Compression
	ReadCommitted bool
	Poll          Poll
	FS            FS

	dims Dims
}

// Isolation names the case's isolation level as Kafka's property value.
func (c Case) Isolation() string {
	if c.ReadCommitted {
		return "read_committed"
	}
	return "read_uncommitted"
}

// String names the case by the dimensions of its run, as its subtest is
// named.
func (c Case) String() string {
	var parts []string
	if c.dims&Codecs != 0 {
		parts = append(parts, "codec="+c.Codec.String())
	}
	if c.dims&Isolations != 0 {
		parts = append(parts, "isolation="+c.Isolation())
	}
	if c.dims&Polls != 0 {
		parts = append(parts, "poll="+c.Poll.String())
	}
	if c.dims&FSes != 0 {
		parts = append(parts, "fs="+c.FS.String())
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, "/")
}

// Sizing for the two kinds of poll. A producer with BatchSize and
// RecordsPerBatch records per batch makes batches of this shape; a consumer
// with MaxPollRecords polls accordingly.
const (
	multiBatchBytes   = 1024
	multiBatchRecords = 16
	singleBatchRecord = 500
)

// BatchSize is the producer batch.size for the case's kind of poll: 1 KiB
// (many small batches) for multi-batch polls, 1 MiB for single-batch ones.
func (c Case) BatchSize() int {
	if c.Poll == SingleBatch {
		return 1 << 20
	}
	return multiBatchBytes
}

// RecordsPerBatch is how many records a test writing batches itself puts
// in each: a few for multi-batch polls, as many as a poll returns for
// single-batch ones.
func (c Case) RecordsPerBatch() int {
	if c.Poll == SingleBatch {
		return singleBatchRecord
	}
	return multiBatchRecords
}

// MaxPollRecords is the consumer max.poll.records for the case: Kafka's
// default, 500. With multi-batch sizing a poll spans about 30 batches;
// with single-batch sizing a batch holds at least as many records as a
// poll returns.
func (c Case) MaxPollRecords() int { return singleBatchRecord }

// Dir returns the filesystem and directory path for the case's log
// directory: the memory filesystem and "/data", or the operating system's
// and a fresh t.TempDir().
func (c Case) Dir(t testing.TB) (vfs.FS, string) {
	t.Helper()
	if c.FS == OS {
		return vfs.Default, t.TempDir()
	}
	return vfs.NewMem(), "/data"
}

// Cases returns every combination of dims, in the order Run runs them.
func Cases(dims Dims) []Case {
	codecs := []record.Compression{record.None}
	if dims&Codecs != 0 {
		codecs = AllCodecs
	}
	isolations := []bool{false}
	if dims&Isolations != 0 {
		isolations = []bool{false, true}
	}
	polls := []Poll{MultiBatch}
	if dims&Polls != 0 {
		polls = []Poll{MultiBatch, SingleBatch}
	}
	fses := []FS{Mem}
	if dims&FSes != 0 {
		fses = []FS{Mem, OS}
	}
	var out []Case
	for _, codec := range codecs {
		for _, rc := range isolations {
			for _, p := range polls {
				for _, f := range fses {
					out = append(out, Case{Codec: codec, ReadCommitted: rc, Poll: p, FS: f, dims: dims})
				}
			}
		}
	}
	return out
}

// Run runs fn as a subtest of t for every combination of dims, one after
// the other.
func Run(t *testing.T, dims Dims, fn func(t *testing.T, c Case)) {
	t.Helper()
	for _, c := range Cases(dims) {
		t.Run(c.String(), func(t *testing.T) { fn(t, c) })
	}
}

// EachCodec runs fn as a subtest per codec, named "codec=<name>": the one
// dimension most record paths have.
func EachCodec(t *testing.T, fn func(t *testing.T, codec record.Compression)) {
	t.Helper()
	Run(t, Codecs, func(t *testing.T, c Case) { fn(t, c.Codec) })
}
