package log

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// This file builds the partitions the damage tests break: a partition of
// several segments, written on a test case's filesystem and closed
// cleanly, whose files a test then damages before it opens the directory
// again, with or without the clean-shutdown marker.

// Shape of a fixture: fixtureSegments segments (the last one active) of
// fixtureBatches batches of fixtureRecords records each.
const (
	fixtureSegments = 6
	fixtureBatches  = 10
	fixtureRecords  = 5
)

// fixtureBatch is where one batch of a fixture lives.
type fixtureBatch struct {
	segment    int   // index of its segment
	position   int64 // byte position in the segment's .log
	size       int64
	baseOffset int64
	lastOffset int64
}

// fixture is a closed log directory holding topic "t" with one partition.
type fixture struct {
	fsys    vfs.FS
	path    string
	cfg     Config
	logs    *logCapture
	codec   record.Compression
	recs    []record.Record // every record written, indexed by offset
	batches []fixtureBatch
	bases   []int64 // the segments' base offsets
}

// newFixture writes the partition with the case's filesystem and codec.
// write, if set, replaces the default workload (fixtureSegments segments
// of plain batches): it gets the open partition and returns the records
// it appended, in offset order; it rolls segments itself.
func newFixture(t *testing.T, c matrix.Case, write func(t *testing.T, f *fixture, l *Log) []record.Record) *fixture {
	t.Helper()
	fsys, path := c.Dir(t)
	f := &fixture{fsys: fsys, path: path, logs: &logCapture{}, codec: c.Codec}
	clk := newClock()
	f.cfg = DefaultConfig()
	f.cfg.FS = fsys
	f.cfg.Now = clk.Now
	f.cfg.RetentionCheckInterval = time.Hour
	f.cfg.Logger = slog.New(slog.NewTextHandler(f.logs, nil))
	d, err := Open(context.Background(), path, f.cfg)
	require.NoError(t, err)
	// Index entries every 512 bytes, so that every segment has several.
	createTopic(t, d, "t", 1, map[string]string{"index.interval.bytes": "512"})
	l := partition(t, d, "t", 0)
	if write == nil {
		write = writeSegments
	}
	f.recs = write(t, f, l)
	require.Equal(t, int64(len(f.recs)), l.LogEndOffset())
	f.scanBatches(t, l)
	require.NoError(t, d.Close())
	return f
}

// writeSegments is the default workload: fixtureSegments segments of
// fixtureBatches batches, values unique per offset.
func writeSegments(t *testing.T, f *fixture, l *Log) []record.Record {
	t.Helper()
	var recs []record.Record
	for s := range fixtureSegments {
		for range fixtureBatches {
			recs = append(recs, f.appendBatch(t, l, fixtureRecords)...)
		}
		if s < fixtureSegments-1 {
			require.NoError(t, l.Roll(context.Background()))
		}
	}
	return recs
}

// appendBatch appends one batch of n records whose keys and values name
// their offsets, and returns its records.
func (f *fixture) appendBatch(t *testing.T, l *Log, n int) []record.Record {
	t.Helper()
	first := l.LogEndOffset()
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithCompression(f.codec),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	var recs []record.Record
	for i := range n {
		off := first + int64(i)
		rec := record.Record{Offset: off, Timestamp: fixtureTimestamp(off), Key: fmt.Appendf(nil, "k%d", off),
			Value: fmt.Appendf(bytes.Repeat([]byte{'v'}, 60), "-%d", off)}
		require.NoError(t, b.Append(rec.Timestamp, rec.Key, rec.Value, nil))
		recs = append(recs, rec)
	}
	batch, err := b.Build()
	require.NoError(t, err)
	res, err := l.Append(bytes.Clone(batch))
	require.NoError(t, err)
	require.Equal(t, first, res.BaseOffset)
	return recs
}

// fixtureTimestamp is the timestamp of the record at offset: shortly
// before the test clock (markers take the clock's time, and a segment
// whose timestamps span more than segment.ms would roll).
func fixtureTimestamp(offset int64) int64 { return 1_799_990_000_000 + 10*offset }

// scanBatches records where every batch of l is.
func (f *fixture) scanBatches(t *testing.T, l *Log) {
	t.Helper()
	f.batches, f.bases = nil, nil
	for _, s := range l.local.segs() {
		f.bases = append(f.bases, s.BaseOffset())
	}
	var buf []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		res, err := l.Read(off, 1<<20, true)
		require.NoError(t, err)
		require.NotNil(t, res.Slice)
		seg := -1
		for i, s := range l.local.segs() {
			if s.LogFile() == res.Slice.LogFile() {
				seg = i
			}
		}
		require.GreaterOrEqual(t, seg, 0)
		pos := res.Slice.Position
		buf, err = res.Slice.Batches(buf, func(h *record.BatchHeader, batch []byte) error {
			f.batches = append(f.batches, fixtureBatch{segment: seg, position: pos, size: int64(len(batch)),
				baseOffset: h.BaseOffset, lastOffset: h.LastOffset()})
			pos += int64(len(batch))
			off = h.NextOffset()
			return nil
		})
		res.Release()
		require.NoError(t, err)
	}
}

// partDir is the partition directory.
func (f *fixture) partDir() string { return filepath.Join(f.path, PartitionDirName("t", 0)) }

// file is the path of segment i's file with the suffix.
func (f *fixture) file(i int, suffix string) string {
	return filepath.Join(f.partDir(), segment.FileName(f.bases[i], suffix))
}

// batchesOf returns the batches of segment i.
func (f *fixture) batchesOf(i int) []fixtureBatch {
	var out []fixtureBatch
	for _, b := range f.batches {
		if b.segment == i {
			out = append(out, b)
		}
	}
	return out
}

// reopen opens the directory again; without clean, as after a crash (the
// clean-shutdown marker removed: the partition recovers from its recovery
// point, the start of the active segment).
func (f *fixture) reopen(t *testing.T, clean bool) (*Dir, *Log) {
	t.Helper()
	if !clean {
		require.NoError(t, checkpoint.RemoveCleanShutdown(f.fsys, f.path))
	}
	d, err := Open(context.Background(), f.path, f.cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d, partition(t, d, "t", 0)
}

// requireRecords checks that ReadRecords returns exactly the fixture's
// records in [from, to).
func (f *fixture) requireRecords(t *testing.T, l *Log, from, to int64) {
	t.Helper()
	var got []record.Record
	for off := from; off < to; {
		next, err := l.ReadRecords(off, 4096, func(rec *record.Record, _ *record.BatchHeader) error {
			if rec.Offset < to {
				got = append(got, rec.Clone())
			}
			return nil
		})
		require.NoError(t, err, "ReadRecords at %d", off)
		require.Greater(t, next, off)
		off = next
	}
	require.Equal(t, len(f.recs[from:to]), len(got), "records in [%d, %d)", from, to)
	for i, rec := range got {
		requireSameRecord(t, f.recs[from+int64(i)], rec)
	}
}

// requirePointReads checks that ReadRecord returns the fixture's record at
// every offset of [from, to).
func (f *fixture) requirePointReads(t *testing.T, l *Log, from, to int64) {
	t.Helper()
	for off := from; off < to; off++ {
		rec, ok, err := l.ReadRecord(off)
		require.NoError(t, err, "ReadRecord(%d)", off)
		require.True(t, ok, "ReadRecord(%d)", off)
		requireSameRecord(t, f.recs[off], rec)
	}
}

func requireSameRecord(t *testing.T, want, got record.Record) {
	t.Helper()
	require.Equal(t, want.Offset, got.Offset)
	require.Equal(t, want.Timestamp, got.Timestamp, "timestamp of offset %d", want.Offset)
	require.Equal(t, string(want.Key), string(got.Key), "key of offset %d", want.Offset)
	require.Equal(t, string(want.Value), string(got.Value), "value of offset %d", want.Offset)
}

// requireCorruptAt checks that err is a typed corruption error naming the
// .log file and the byte position, and returns it.
func requireCorruptAt(t *testing.T, err error, file string, position int64) *segment.Error {
	t.Helper()
	require.ErrorIs(t, err, record.ErrCorrupt)
	var se *segment.Error
	require.ErrorAs(t, err, &se, "the error names the file and position: %v", err)
	require.Equal(t, file, se.File)
	require.Equal(t, position, se.Position, "%v", err)
	return se
}

// Ways to damage a file, by name.

// appendByte adds one byte at the end of the file.
func appendByte(t *testing.T, fsys vfs.FS, name string) {
	t.Helper()
	writeAt(t, fsys, name, fileLen(t, fsys, name), []byte{0x5a})
}

// truncateFile cuts the file to size bytes.
func truncateFile(t *testing.T, fsys vfs.FS, name string, size int64) {
	t.Helper()
	f, err := fsys.OpenReadWrite(name)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// garbage overwrites the whole file with pseudo-random bytes.
func garbage(t *testing.T, fsys vfs.FS, name string) {
	t.Helper()
	b := make([]byte, fileLen(t, fsys, name))
	r := rand.New(rand.NewPCG(uint64(len(b)), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	writeAt(t, fsys, name, 0, b)
}

// writeAt overwrites bytes of the file at off.
func writeAt(t *testing.T, fsys vfs.FS, name string, off int64, b []byte) {
	t.Helper()
	f, err := fsys.OpenReadWrite(name)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// readAt reads n bytes of the file at off.
func readAt(t *testing.T, fsys vfs.FS, name string, off int64, n int) []byte {
	t.Helper()
	f, err := fsys.Open(name)
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, n)
	_, err = f.ReadAt(b, off)
	require.NoError(t, err)
	return b
}

func fileLen(t *testing.T, fsys vfs.FS, name string) int64 {
	t.Helper()
	fi, err := fsys.Stat(name)
	require.NoError(t, err)
	return fi.Size
}

// shutdowns are the two ways a damaged directory is opened again.
var shutdowns = []struct {
	name  string
	clean bool
}{{"clean shutdown", true}, {"crash", false}}
