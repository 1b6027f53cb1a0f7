package log

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// FetchParams say what [Log.Fetch] reads: the arguments of Kafka's
// UnifiedLog.read.
type FetchParams struct {
	// Offset is the offset to read from. The first batch returned is the
	// one holding it, and may start before it: the caller skips the
	// records below it.
	Offset int64
	// MaxBytes bounds the bytes of the batches returned, but with
	// MinOneBatch the first batch is returned whole even when it is larger
	// (Kafka's minOneMessage), so that a reader always makes progress.
	MaxBytes    int
	MinOneBatch bool
	// Isolation bounds the read (Kafka's FetchIsolation): ReadUncommitted
	// reads up to the high watermark, ReadCommitted up to the last stable
	// offset and returns the aborted transactions of what it read.
	Isolation IsolationLevel
	// AbortedTxns, if not nil, is where a ReadCommitted read appends its
	// aborted transactions (from AbortedTxns[:0]): a loop of reads that
	// passes back the last result's [FetchResult.AbortedTransactions]
	// allocates nothing for them once it has grown.
	AbortedTxns []index.AbortedTxn
}

// FetchResult is what a read returns: whole batches as a file slice, the
// partition's offsets at the time of the read, and, for a read_committed
// read, the aborted transactions among the batches (Kafka's FetchDataInfo,
// with the offsets a FetchResponse carries).
type FetchResult struct {
	// Slice holds the batches; nil when there is nothing at or after the
	// offset below the read's bound yet. Release it when done: it keeps
	// its segment's files alive.
	Slice *segment.Slice
	// HighWatermark, LogStartOffset and LogEndOffset as of the read: taken
	// again after the batches were read, so that they cover them.
	HighWatermark, LogStartOffset, LogEndOffset int64
	// LastStableOffset as of the read, taken before the batches: a
	// ReadCommitted read returns no batch at or past it.
	LastStableOffset int64
	// AbortedTransactions are, for a ReadCommitted read that returned
	// batches, the aborted transactions whose data overlaps them (from the
	// read's offset to its last batch's end: Kafka's
	// FetchDataInfo.abortedTransactions, what a read_committed
	// FetchResponse lists), in the .txnindex order; a reader drops their
	// batches with an [AbortFilter] ([AbortFilter.ResetTxns]). Nil for
	// ReadUncommitted.
	AbortedTransactions []index.AbortedTxn
}

// Release releases the slice, if any.
func (r *FetchResult) Release() {
	if r.Slice != nil {
		r.Slice.Release()
		r.Slice = nil
	}
}

// Fetch reads whole batches from the one holding p.Offset, at most
// p.MaxBytes of them (at least one with p.MinOneBatch), up to the bound
// of p.Isolation: the high watermark, or for [ReadCommitted] the last
// stable offset, where the batches are cut (whole batches below it), with
// the aborted transactions that overlap the batches returned. It is the
// log's one read (Kafka's UnifiedLog.read), which the consumer, the wire
// server's Fetch and the log's other reads ([Log.Read],
// [Log.ReadRecords], [Log.ReadCommittedRecords], [Log.ReadRecord]) make.
//
// Reading at or past the bound, within the log, returns no slice; an
// offset below the log start offset or above the log end offset is an
// [*OffsetOutOfRangeError] (with the offsets in the result). On a tiered
// partition (remote.storage.enable) an offset below the first local
// segment is read from a copy in remote storage, fetched into the Dir's
// cache first if it is not there, and so are the transaction indexes of
// the copies a ReadCommitted read needs: ctx bounds those fetches, and a
// ctx that ends makes Fetch return its error. A ctx already done returns
// its error at once. Local reads do not look at ctx.
func (l *Log) Fetch(ctx context.Context, p FetchParams) (FetchResult, error) {
	if err := ctx.Err(); err != nil {
		return FetchResult{}, err
	}
	if err := l.local.checkOpen(); err != nil {
		return FetchResult{}, err
	}
	outOfRange := func() error {
		return &OffsetOutOfRangeError{Topic: l.tp.Topic, Partition: l.tp.Partition, Offset: p.Offset,
			LogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset()}
	}
	for {
		// The last stable offset is taken before the batches, so that every
		// batch kept below it is decided.
		hw := l.HighWatermark()
		res := FetchResult{HighWatermark: hw, LastStableOffset: l.producers.lastStable(hw), LogStartOffset: l.LogStartOffset(),
			LogEndOffset: l.LogEndOffset()}
		if p.Offset < res.LogStartOffset || p.Offset > res.LogEndOffset {
			return res, outOfRange()
		}
		bound := res.HighWatermark
		if p.Isolation == ReadCommitted {
			bound = res.LastStableOffset
		}
		if p.Offset >= bound || (p.MaxBytes <= 0 && !p.MinOneBatch) {
			return res, nil // nothing to read, or no room for it
		}
		var sl *segment.Slice
		if t := l.remote.tiering(l.Config()); t != nil {
			if local := l.local.startOffset(); p.Offset < local {
				// Below the first local segment: in remote storage.
				var err error
				if sl, err = t.read(ctx, l, p.Offset, p.MaxBytes, p.MinOneBatch, local); err != nil {
					return res, l.tp.wrap(err)
				}
			}
		}
		if sl == nil {
			// The high watermark bounds what readers see; it is the log
			// end offset here, so the bound is each segment's published
			// size: an append publishes its batch only after the log end
			// offset.
			got, how, err := l.local.read(p.Offset, p.MaxBytes, p.MinOneBatch, l.LogStartOffset)
			switch {
			case how == readAgain:
				continue // replaced by the cleaner (or truncated): read the new list
			case how == readVanished:
				return res, outOfRange()
			case err != nil || got == nil:
				return res, err
			}
			sl = got
		}
		// The slice may hold batches appended since the offsets above were
		// taken: take them again, so that they cover it.
		res.HighWatermark, res.LogEndOffset = l.HighWatermark(), l.LogEndOffset()
		if sl.LastOffset >= bound {
			// The batches below the bound, whole (reads end at the high
			// watermark already, so only read_committed cuts).
			if err := sl.CutAt(bound); err != nil {
				sl.Release()
				return res, l.tp.wrap(err)
			}
			if sl.Size == 0 {
				sl.Release()
				return res, nil
			}
		}
		if p.Isolation == ReadCommitted {
			// The aborted transactions of what was read, as Kafka's read
			// collects them: up to the end of the data, not the stable
			// offset.
			txns, err := l.remote.appendAbortedTxns(ctx, l, p.AbortedTxns[:0], p.Offset, sl.LastOffset+1)
			if err != nil {
				sl.Release()
				return res, err
			}
			res.AbortedTransactions = txns
		}
		res.Slice = sl
		return res, nil
	}
}

// Read returns whole batches from the one holding offset, at most maxBytes
// of them, but at least one batch when minOneBatch is set even if it is
// larger (Kafka's fetch returns the first batch whole so that a consumer can
// always make progress). Reading at the log end offset returns no slice;
// an offset below the log start offset or above the log end offset is an
// [*OffsetOutOfRangeError]. The first batch may start before offset: the
// caller skips the records below it. Read is [Log.Fetch] at
// [ReadUncommitted] with context.Background(): a read that may fetch from
// remote storage and should stop when its caller does uses Fetch.
func (l *Log) Read(offset int64, maxBytes int, minOneBatch bool) (FetchResult, error) {
	return l.Fetch(context.Background(), FetchParams{Offset: offset, MaxBytes: maxBytes, MinOneBatch: minOneBatch})
}

// ReadRecords decodes the records from offset on, at most maxBytes of
// batches (at least one batch), and calls fn for each record at or after
// offset, skipping control batches. It returns the offset after the last
// record passed to fn (or after the last batch read, so that a caller can
// continue past gaps and control batches). fn must not keep rec: it
// references buffers reused by the next record. A consumer built on the log
// uses this; a broker uses [Log.Fetch].
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
// that should reuse one uses a [RecordReader], which also takes a ctx for
// reads that may fetch from remote storage.
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
	buf     []byte
	r       *record.Reader
	h       record.BatchHeader
	txns    AbortFilter        // read_committed reads' aborted transactions
	aborted []index.AbortedTxn // the last read_committed read's
}

// ReadRecords is [Log.ReadRecords] on l with rr's buffers.
func (rr *RecordReader) ReadRecords(l *Log, offset int64, maxBytes int, fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	return rr.Read(context.Background(), l, offset, maxBytes, ReadUncommitted, fn)
}

// Read is [RecordReader.ReadRecords] at the isolation level iso
// ([RecordReader.ReadCommittedRecords] for ReadCommitted), over
// [Log.Fetch] with ctx: a ctx that ends while a copy is fetched from
// remote storage makes it return the ctx's error.
func (rr *RecordReader) Read(ctx context.Context, l *Log, offset int64, maxBytes int, iso IsolationLevel,
	fn func(rec *record.Record, h *record.BatchHeader) error) (int64, error) {
	res, err := l.Fetch(ctx, FetchParams{Offset: offset, MaxBytes: maxBytes, MinOneBatch: true, Isolation: iso, AbortedTxns: rr.aborted})
	if err != nil || res.Slice == nil {
		return offset, err
	}
	defer res.Release()
	var filter *AbortFilter
	if iso == ReadCommitted {
		rr.aborted = res.AbortedTransactions
		filter = &rr.txns
		filter.ResetTxns(res.AbortedTransactions)
	}
	buf, err := res.Slice.Bytes(rr.buf[:0])
	if err != nil {
		return offset, l.tp.wrap(err)
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
			return next, l.tp.wrap(&segment.Error{File: res.Slice.LogFile(), Position: res.Slice.Position + int64(pos), Err: err})
		}
		rr.h = r.Header() // kept in rr: a header fn sees by pointer would escape per batch
		h := &rr.h
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
				return next, l.tp.wrap(&segment.Error{File: res.Slice.LogFile(), Position: res.Slice.Position + int64(pos), Err: err})
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
	if err := l.local.checkOpen(); err != nil {
		return OffsetAndTimestamp{}, false, err
	}
	start := l.LogStartOffset()
	var (
		got segment.TimestampOffset
		ok  bool
		err error
	)
	switch {
	case ts == EarliestTimestamp:
		return OffsetAndTimestamp{Offset: start, Timestamp: record.NoTimestamp}, true, nil
	case ts == LatestTimestamp:
		return OffsetAndTimestamp{Offset: l.LogEndOffset(), Timestamp: record.NoTimestamp}, true, nil
	case ts == MaxTimestamp:
		got, ok, err = l.local.maxTimestampOffset(start)
		if err == nil && !ok {
			return OffsetAndTimestamp{Offset: l.LogEndOffset(), Timestamp: record.NoTimestamp}, false, nil
		}
	case ts < 0:
		return OffsetAndTimestamp{}, false, fmt.Errorf("%w: timestamp %d", ErrInvalidTimestamp, ts)
	default:
		if t := l.remote.tiering(l.Config()); t != nil {
			if local := l.local.startOffset(); start < local {
				if got, ok, err = t.offsetForTimestamp(context.Background(), l, ts, start, local); err != nil {
					return OffsetAndTimestamp{}, false, l.tp.wrap(err)
				}
			}
		}
		if !ok {
			got, ok, err = l.local.offsetForTimestamp(ts, start)
		}
	}
	if err != nil || !ok {
		return OffsetAndTimestamp{}, false, err
	}
	// Visible to readers only below the high watermark, as Kafka filters
	// ListOffsets answers by it: an append in progress has indexed its
	// batch before it publishes the log end offset.
	if got.Offset >= l.HighWatermark() {
		return OffsetAndTimestamp{}, false, nil
	}
	return OffsetAndTimestamp{Offset: got.Offset, Timestamp: got.Timestamp}, true, nil
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
			return record.Record{}, false, l.tp.wrap(err)
		}
		rec, found, err := pr.readIn(res.Slice, offset)
		next := res.Slice.LastOffset + 1
		res.Release()
		if err != nil {
			return record.Record{}, false, l.tp.wrap(err)
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
