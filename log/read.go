package log

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// FetchResult is what a read returns: whole batches as a file slice, and the
// partition's offsets at the time of the read.
type FetchResult struct {
	// Slice holds the batches; nil when there is nothing at or after the
	// offset yet. Release it when done: it keeps its segment's files alive.
	Slice *segment.Slice
	// HighWatermark, LogStartOffset and LogEndOffset as of the read.
	HighWatermark, LogStartOffset, LogEndOffset int64
}

// Release releases the slice, if any.
func (r *FetchResult) Release() {
	if r.Slice != nil {
		r.Slice.Release()
		r.Slice = nil
	}
}

// Read returns whole batches from the one holding offset, at most maxBytes
// of them, but at least one batch when minOneBatch is set even if it is
// larger (Kafka's fetch returns the first batch whole so that a consumer can
// always make progress). Reading at the log end offset returns no slice;
// an offset below the log start offset or above the log end offset is an
// [*OffsetOutOfRangeError]. The first batch may start before offset: the
// caller skips the records below it.
func (l *Log) Read(offset int64, maxBytes int, minOneBatch bool) (FetchResult, error) {
	if err := l.checkOpen(); err != nil {
		return FetchResult{}, err
	}
	for {
		res, retry, err := l.readOnce(offset, maxBytes, minOneBatch)
		if !retry {
			return res, err
		}
	}
}

// readOnce is Read over one snapshot of the segment list. retry says that
// a segment of the snapshot was closed after the cleaner replaced it: the
// data is in its replacement, so the read starts over with the new list.
func (l *Log) readOnce(offset int64, maxBytes int, minOneBatch bool) (FetchResult, bool, error) {
	list := l.segments.Load()
	segs := *list
	res := FetchResult{HighWatermark: l.HighWatermark(), LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	if offset < res.LogStartOffset || offset > res.LogEndOffset {
		return res, false, &OffsetOutOfRangeError{Topic: l.topic, Partition: l.partition, Offset: offset,
			LogStartOffset: res.LogStartOffset, LogEndOffset: res.LogEndOffset}
	}
	if offset == res.LogEndOffset {
		return res, false, nil
	}
	if t := l.tiering(); t != nil && len(segs) > 0 && offset < segs[0].BaseOffset() {
		// Below the first local segment: in remote storage.
		sl, err := t.read(l, offset, maxBytes, minOneBatch, segs[0].BaseOffset())
		if err != nil {
			return res, false, l.perr(err)
		}
		if sl != nil {
			res.Slice = sl
			res.HighWatermark, res.LogEndOffset = l.HighWatermark(), l.LogEndOffset()
			return res, false, nil
		}
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].BaseOffset() > offset }) - 1
	for i = max(i, 0); i < len(segs); i++ {
		s := segs[i]
		// The high watermark bounds what readers see; it is the log end
		// offset here, so the bound is the segment's published size: an
		// append publishes its batch only after the log end offset.
		sl, err := s.Read(offset, maxBytes, segHooks.ReadableSize(s), minOneBatch)
		if errors.Is(err, segment.ErrClosed) {
			if l.segments.Load() != list && l.checkOpen() == nil && offset >= l.LogStartOffset() {
				return res, true, nil // replaced by the cleaner (or truncated): read the new list
			}
			// Retention removed the segment after the snapshot: the data
			// is gone, so the offset is out of range now.
			return res, false, &OffsetOutOfRangeError{Topic: l.topic, Partition: l.partition, Offset: offset,
				LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
		}
		if err != nil {
			return res, false, l.perr(err)
		}
		if sl != nil {
			res.Slice = sl
			// The slice may hold batches appended since the offsets
			// above were taken: take them again, so that they cover it.
			res.HighWatermark, res.LogEndOffset = l.HighWatermark(), l.LogEndOffset()
			return res, false, nil
		}
		// Nothing at or after offset in this segment (a gap left by the
		// cleaner, or an empty segment): the next one has it.
	}
	return res, false, nil
}

// ReadRecords decodes the records from offset on, at most maxBytes of
// batches (at least one batch), and calls fn for each record at or after
// offset, skipping control batches. It returns the offset after the last
// record passed to fn (or after the last batch read, so that a caller can
// continue past gaps and control batches). fn must not keep rec: it
// references buffers reused by the next record. A consumer built on the log
// uses this; a broker uses [Log.Read].
//
// Every batch's CRC is checked, as Kafka's consumer does with its default
// check.crcs=true: a batch that fails is never decoded. If it is the first
// batch of the read, ReadRecords returns an error matching record.ErrCRC
// (and record.ErrCorrupt) inside a [*segment.Error] naming the .log and
// the batch's position; after the first, the read ends before it (the
// next read, from where this one stopped, reports it). Corrupt batches
// otherwise are reported the same way.
//
// Each call reads into a new buffer of up to maxBytes; a loop of reads
// that should reuse one uses a [RecordReader].
func (l *Log) ReadRecords(offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	var rr RecordReader
	return rr.ReadRecords(l, offset, maxBytes, fn)
}

// A RecordReader reads a Log's records as [Log.ReadRecords] and
// [Log.ReadCommittedRecords] do, but keeps its read buffer and its record
// decoder (with its decompression buffers) from one call to the next, so
// that a loop of reads stops allocating once they have grown to the
// largest read. The zero value is ready to use, for any Log; it is not
// safe for concurrent use. The records passed to fn are valid only during
// fn, as for ReadRecords.
type RecordReader struct {
	buf  []byte
	r    *record.Reader
	h    record.BatchHeader
	txns AbortFilter // read_committed reads' aborted transactions
}

// ReadRecords is [Log.ReadRecords] on l with rr's buffers.
func (rr *RecordReader) ReadRecords(l *Log, offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	return l.readBatches(rr, offset, maxBytes, math.MaxInt64, nil, fn)
}

// readBatches reads batches from offset on, at most maxBytes (at least one
// batch), stopping at the first batch at or above upper, and calls fn for
// each record at or after offset of its data batches. With a filter (a
// read_committed read) it drops the batches of aborted transactions: the
// filter is reset, once the batches are read, with the aborted
// transactions overlapping what was read (from offset up to the end of
// the read or upper, whichever is lower), as Kafka collects them only up
// to the end of the data it fetched. It returns the offset after the last
// record or batch read.
func (l *Log) readBatches(rr *RecordReader, offset int64, maxBytes int, upper int64, filter *AbortFilter,
	fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	res, err := l.Read(offset, maxBytes, true)
	if err != nil || res.Slice == nil {
		return offset, err
	}
	defer res.Release()
	if filter != nil {
		if err := filter.Reset(l, offset, min(upper, res.Slice.LastOffset+1)); err != nil {
			return offset, err
		}
	}
	buf, err := res.Slice.Bytes(rr.buf[:0])
	if err != nil {
		return offset, l.perr(err)
	}
	rr.buf = buf
	if rr.r == nil {
		rr.r = record.NewReader(record.ReaderOptions{})
	}
	r := rr.r
	next := offset
	for pos := 0; pos < len(buf); {
		n, err := record.BatchSize(buf[pos:])
		if err == nil && pos+n > len(buf) {
			err = record.ErrTruncated
		}
		if err == nil {
			err = r.Reset(buf[pos : pos+n])
		}
		if err != nil {
			if pos > 0 {
				break // the next read, from the batch on, reports it
			}
			return next, l.perr(&segment.Error{File: res.Slice.LogFile(), Position: res.Slice.Position + int64(pos), Err: err})
		}
		rr.h = r.Header() // kept in rr: a header fn sees by pointer would escape per batch
		h := &rr.h
		if h.BaseOffset >= upper {
			break
		}
		aborted := filter != nil && filter.Aborted(h) // every batch, control batches too
		if !h.Attributes.IsControl() && !aborted {
			for r.Next() {
				rec := r.Record()
				if rec.Offset < offset {
					continue
				}
				if err := fn(rec, h); err != nil {
					return next, err
				}
				next = rec.Offset + 1
			}
			if err := r.Err(); err != nil {
				return next, l.perr(&segment.Error{File: res.Slice.LogFile(), Position: res.Slice.Position + int64(pos), Err: err})
			}
		}
		next = max(next, h.NextOffset())
		pos += n
	}
	return next, nil
}

// Special timestamps of [Log.OffsetForTimestamp], as in Kafka's ListOffsets.
const (
	// LatestTimestamp asks for the log end offset.
	LatestTimestamp int64 = -1
	// EarliestTimestamp asks for the log start offset.
	EarliestTimestamp int64 = -2
	// MaxTimestamp asks for the offset of the record with the largest
	// timestamp.
	MaxTimestamp int64 = -3
)

// OffsetAndTimestamp is an offset with its record's timestamp (-1 where the
// query has none, as for LatestTimestamp and EarliestTimestamp).
type OffsetAndTimestamp struct {
	Offset    int64
	Timestamp int64
}

// OffsetForTimestamp answers Kafka's ListOffsets for one partition: the
// earliest offset whose record timestamp is at least ts, found through the
// time indexes; or, for the special values, the log start offset
// (EarliestTimestamp), the log end offset (LatestTimestamp), or the offset
// of the record with the largest timestamp (MaxTimestamp). As in Kafka,
// transaction markers count as records: a marker can be the answer, with
// its timestamp. ok is false when no record has a timestamp at or after
// ts.
func (l *Log) OffsetForTimestamp(ts int64) (OffsetAndTimestamp, bool, error) {
	if err := l.checkOpen(); err != nil {
		return OffsetAndTimestamp{}, false, err
	}
	switch ts {
	case EarliestTimestamp:
		return OffsetAndTimestamp{Offset: l.LogStartOffset(), Timestamp: record.NoTimestamp}, true, nil
	case LatestTimestamp:
		return OffsetAndTimestamp{Offset: l.LogEndOffset(), Timestamp: record.NoTimestamp}, true, nil
	case MaxTimestamp:
		return l.maxTimestampOffset()
	}
	if ts < 0 {
		return OffsetAndTimestamp{}, false, fmt.Errorf("%w: timestamp %d", ErrInvalidTimestamp, ts)
	}
	start := l.LogStartOffset()
	if t := l.tiering(); t != nil {
		if local := l.segs()[0].BaseOffset(); start < local {
			got, ok, err := t.offsetForTimestamp(l, ts, start, local)
			if err != nil {
				return OffsetAndTimestamp{}, false, l.perr(err)
			}
			if ok {
				return l.visible(OffsetAndTimestamp{Offset: got.Offset, Timestamp: got.Timestamp})
			}
		}
	}
	for _, s := range l.segs() {
		maxTS, err := s.MaxTimestamp()
		if err != nil {
			return OffsetAndTimestamp{}, false, l.perr(err)
		}
		if maxTS < ts {
			continue
		}
		got, ok, err := s.FindOffsetByTimestamp(ts, start)
		if err != nil {
			return OffsetAndTimestamp{}, false, l.perr(err)
		}
		if ok {
			return l.visible(OffsetAndTimestamp{Offset: got.Offset, Timestamp: got.Timestamp})
		}
	}
	return OffsetAndTimestamp{}, false, nil
}

// visible returns found if readers can see its offset, as Kafka filters
// ListOffsets answers by the high watermark: an append in progress has
// indexed its batch before it publishes the log end offset.
func (l *Log) visible(found OffsetAndTimestamp) (OffsetAndTimestamp, bool, error) {
	if found.Offset >= l.HighWatermark() {
		return OffsetAndTimestamp{}, false, nil
	}
	return found, true, nil
}

// maxTimestampOffset finds the record with the largest timestamp: the
// segment with the largest max timestamp, then its first record carrying it.
func (l *Log) maxTimestampOffset() (OffsetAndTimestamp, bool, error) {
	var best *segment.Segment
	bestTS := record.NoTimestamp
	for _, s := range l.segs() {
		ts, err := s.MaxTimestamp()
		if err != nil {
			return OffsetAndTimestamp{}, false, l.perr(err)
		}
		if ts > bestTS {
			best, bestTS = s, ts
		}
	}
	if best == nil {
		return OffsetAndTimestamp{Offset: l.LogEndOffset(), Timestamp: record.NoTimestamp}, false, nil
	}
	got, ok, err := best.FindOffsetByTimestamp(bestTS, l.LogStartOffset())
	if err != nil || !ok {
		return OffsetAndTimestamp{}, ok, err
	}
	return l.visible(OffsetAndTimestamp{Offset: got.Offset, Timestamp: got.Timestamp})
}

// pointReadPool holds the buffers and decoders of ReadRecord.
var pointReadPool = sync.Pool{New: func() any {
	return &pointReader{r: record.NewReader(record.ReaderOptions{SkipCRC: true})}
}}

type pointReader struct {
	buf []byte
	r   *record.Reader
}

// ReadRecord returns a copy of the first record at or after offset (the
// record at offset unless compaction removed it or it is a control record),
// for point lookups: the offset index finds the batch; the records before
// it in an uncompressed batch are skipped by their lengths and offset
// deltas without being decoded. On the operating system's filesystem the
// batch is read in place from the segment's memory mapping
// ([segment.Slice.View]) and only the record is copied; elsewhere only the
// prefix of the batch up to the record is read. ok is false if no record
// follows offset. ReadRecord is safe for concurrent use, also with appends,
// truncation, retention and Close, which may make it fail.
//
// The CRC of the record's whole batch is checked
// ([segment.Slice.VerifyCRC]), as ReadRecords checks it: a damaged batch
// gives an error matching record.ErrCRC that names the file and position,
// never a record. The segment remembers the batches it verified and
// those this process appended (their CRC was checked or computed before
// the append), so point reads into a batch cost the check at most once;
// bytes changed under the running process after that are found by
// ReadRecords and by the next process, not by ReadRecord. Into a large
// uncompressed batch appended by this process, even the first read jumps
// near its record (marks the append left) and reads little of the batch.
func (l *Log) ReadRecord(offset int64) (rec record.Record, ok bool, err error) {
	pr := pointReadPool.Get().(*pointReader)
	defer pointReadPool.Put(pr)
	for {
		res, err := l.Read(offset, 1, true)
		if err != nil || res.Slice == nil {
			return record.Record{}, false, err
		}
		if err := res.Slice.VerifyCRC(); err != nil {
			res.Release()
			return record.Record{}, false, l.perr(err)
		}
		rec, found, err := pr.readIn(res.Slice, offset)
		next := res.Slice.LastOffset + 1
		res.Release()
		if err != nil {
			return record.Record{}, false, l.perr(err)
		}
		if found {
			return rec, true, nil
		}
		offset = next // a control batch, or nothing at or after offset in it
	}
}

// pointReadChunk is the first read of a point read inside a batch; later
// reads double it.
const pointReadChunk = 16 << 10

// readIn finds the record at or after offset in the slice's first batch:
// in place where the segment is memory-mapped, else by reading it.
func (pr *pointReader) readIn(sl *segment.Slice, offset int64) (record.Record, bool, error) {
	var rec record.Record
	var found bool
	mapped, err := sl.View(func(b []byte) error {
		var err error
		rec, found, err = pr.readInPlace(sl, b, offset)
		return err
	})
	if mapped {
		return rec, found, err
	}
	return pr.readInCopy(sl, offset)
}

// noBatch is an empty batch: the point reader's decoder is reset to it after
// a read in place, so that it keeps no reference into the mapping.
var noBatch = record.AppendEmptyBatch(nil, record.BatchHeader{BaseTimestamp: record.NoTimestamp})

// readInPlace finds the record at or after offset in the batch at the start
// of b, the slice's bytes viewed in place: the records before it are skipped
// by their lengths and offset deltas, only it is decoded, and what is
// returned is a copy. b must not be referenced once it returns.
func (pr *pointReader) readInPlace(sl *segment.Slice, b []byte, offset int64) (record.Record, bool, error) {
	defer func() { _ = pr.r.Reset(noBatch) }()
	h, err := record.ParseHeader(b)
	if err != nil {
		return record.Record{}, false, err
	}
	if h.Attributes.IsControl() {
		return record.Record{}, false, nil
	}
	if err := pr.r.Reset(b[:min(h.Size(), len(b))]); err != nil {
		return record.Record{}, false, err
	}
	if h.RecordsCount >= marksMinRecords && h.Attributes.Compression() == record.None {
		if err := pr.jump(sl, &h, offset); err != nil {
			return record.Record{}, false, err
		}
	}
	if pr.r.SkipTo(offset) && pr.r.Next() {
		return pr.r.Record().Clone(), true, nil
	}
	return record.Record{}, false, pr.r.Err()
}

// Point reads into an uncompressed batch of at least marksMinRecords
// records jump to the mark before their record (segment.BatchMarks): the
// marks are every marksStep(count) offset deltas, at most marksMax per
// batch. The log makes all of a batch's marks as it appends it when the
// batch has at least appendMarksMinBytes (its bytes are then in the CPU's
// caches, a few nanoseconds a record); for the other batches the first
// reads that walk that far make them. The segment keeps them. A read then
// skips fewer than a mark's step of records, where it skipped half the
// batch on average: in a batch of 1,000 records whose bytes are not in the
// CPU's caches a skipped record costs about 30 ns.
const (
	marksMinRecords     = 64
	marksMax            = 64
	appendMarksMinBytes = 64 << 10
)

func marksStep(count int32) int32 { return max(16, (count+marksMax-1)/marksMax) }

// jump moves pr.r, reset to the batch h, to the mark at or before offset,
// first adding the marks the batch lacks up to it (walking from the last
// one there is) and remembering them in sl. Called within a View of sl: the
// bytes cannot be cut meanwhile.
func (pr *pointReader) jump(sl *segment.Slice, h *record.BatchHeader, offset int64) error {
	k := offset - h.BaseOffset
	step := marksStep(h.RecordsCount)
	if k < int64(step) {
		return nil
	}
	want := int(min(k/int64(step), int64(h.LastOffsetDelta)/int64(step)))
	m := segHooks.Marks(sl)
	if m == nil || m.Step != step {
		m = &segment.BatchMarks{Step: step, Pos: []int32{0}, N: []int32{0}}
	}
	if want < len(m.Pos) {
		return pr.r.Resume(int(m.Pos[want]), m.N[want])
	}
	grown, err := extendMarks(pr.r, h, m, want)
	if err != nil {
		return err
	}
	segHooks.RememberSliceMarks(sl, grown)
	return nil
}

// extendMarks returns m with the marks up to the want-th added, walking
// r, reset to the batch h, from m's last mark; r is left at the last mark
// made. m is not changed.
func extendMarks(r *record.Reader, h *record.BatchHeader, m *segment.BatchMarks, want int) (*segment.BatchMarks, error) {
	last := len(m.Pos) - 1
	if err := r.Resume(int(m.Pos[last]), m.N[last]); err != nil {
		return nil, err
	}
	grown := &segment.BatchMarks{Step: m.Step, Pos: slices.Grow(slices.Clone(m.Pos), want-last), N: slices.Grow(slices.Clone(m.N), want-last)}
	for j := last + 1; j <= want; j++ {
		if !r.SkipTo(h.BaseOffset + int64(j)*int64(m.Step)) {
			break // the batch ends first, or is damaged: the caller's SkipTo reports it
		}
		pos, n := r.Position()
		grown.Pos, grown.N = append(grown.Pos, int32(pos)), append(grown.N, n)
	}
	return grown, r.Err()
}

// rememberAppendedMarksLocked gives seg the marks of the batch just
// appended to it when it is large enough (appendMarksMinBytes): the
// first point read into it then jumps at once instead of walking bytes
// that are by then out of the CPU's caches.
func (l *Log) rememberAppendedMarksLocked(seg *segment.Segment, batch []byte, h *record.BatchHeader) {
	if len(batch) < appendMarksMinBytes || h.RecordsCount < marksMinRecords ||
		h.Attributes.Compression() != record.None || h.Attributes.IsControl() {
		return
	}
	r := l.appendReader
	if r.Reset(batch) != nil {
		return // cannot happen: the batch was validated
	}
	step := marksStep(h.RecordsCount)
	m, err := extendMarks(r, h, &segment.BatchMarks{Step: step, Pos: []int32{0}, N: []int32{0}}, int(h.LastOffsetDelta/step))
	_ = r.Reset(noBatch)
	if err == nil {
		segHooks.RememberMarks(seg, seg.Size()-int64(len(batch)), m)
	}
}

// readInCopy is readIn by reading the batch into pr.buf, in growing chunks.
func (pr *pointReader) readInCopy(sl *segment.Slice, offset int64) (record.Record, bool, error) {
	// The first read takes the header and the first records together.
	have := int(min(sl.Size, int64(record.BatchHeaderLen+pointReadChunk)))
	pr.buf = slices.Grow(pr.buf[:0], have)[:have]
	if _, err := sl.ReadAt(pr.buf, 0); err != nil {
		return record.Record{}, false, err
	}
	h, err := record.ParseHeader(pr.buf)
	if err != nil {
		return record.Record{}, false, err
	}
	size := min(h.Size(), int(sl.Size))
	if h.Attributes.IsControl() {
		return record.Record{}, false, nil
	}
	if h.Attributes.Compression() != record.None {
		// The whole batch is needed to decompress it.
		return pr.decode(sl, size, offset, -1)
	}
	have = min(have, size)
	pr.buf = pr.buf[:have]
	chunk := pointReadChunk
	pos, skipped := 0, 0
	for first := true; ; first = false {
		if !first {
			// The record lies further on: read the next, doubled, chunk.
			want := min(size, have+chunk)
			pr.buf = slices.Grow(pr.buf, want-len(pr.buf))[:want]
			if _, err := sl.ReadAt(pr.buf[have:want], int64(have)); err != nil {
				return record.Record{}, false, err
			}
			have = want
		}
		next, n, k, more, err := record.SkipRecords(pr.buf[record.BatchHeaderLen:have], pos, h.BaseOffset, offset)
		if err != nil {
			return record.Record{}, false, err
		}
		pos, skipped = next, skipped+k
		if !more {
			end := record.BatchHeaderLen + next + n
			return pr.decode(sl, end, offset, int32(skipped+1))
		}
		if have == size {
			return record.Record{}, false, nil // no record at or after offset here
		}
		chunk *= 2
	}
}

// decode reads the first size bytes of the slice's batch (already in
// pr.buf when count >= 0, which trims the batch to count records) and
// returns the record at or after offset.
func (pr *pointReader) decode(sl *segment.Slice, size int, offset int64, count int32) (record.Record, bool, error) {
	b := pr.buf[:size]
	if count < 0 {
		pr.buf = slices.Grow(pr.buf[:0], size)[:size]
		b = pr.buf
		if _, err := sl.ReadAt(b, 0); err != nil {
			return record.Record{}, false, err
		}
	} else if err := record.TrimBatch(b, count); err != nil {
		return record.Record{}, false, err
	}
	if err := pr.r.Reset(b); err != nil {
		return record.Record{}, false, err
	}
	if pr.r.SkipTo(offset) && pr.r.Next() {
		return pr.r.Record().Clone(), true, nil
	}
	return record.Record{}, false, pr.r.Err()
}
