package record

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kafkalite/kafkalite/internal/crc"
)

// Builder appends records into a reusable buffer and seals them into one
// RecordBatch v2, as Kafka's MemoryRecordsBuilder does: offset deltas 0, 1,
// 2, … (or the caller's, for rebuilt batches), baseTimestamp = the first
// record's timestamp, maxTimestamp = the largest, then lengths, compression
// and the CRC-32C on Build.
//
//	var b record.Builder
//	b.Reset(record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}, 0)
//	b.Append(ts, key, value, nil)
//	batch, err := b.Build()
//
// The zero Builder is ready after Reset. A Builder is not safe for concurrent
// use. Building allocates nothing per record once its buffers have grown.
type Builder struct {
	hdr   BatchHeader
	level int
	buf   []byte // header space + records (uncompressed codec) or the sealed batch
	raw   []byte // records awaiting compression
	ext   []byte // the caller's buffer of ResetBuffer, nil after Reset
	// own and ownRaw are the Builder's own buffers, kept across batches so
	// that building allocates nothing once they have grown.
	own, ownRaw []byte
	count       int32
	built       bool
	compressed  bool // Compress ran: buf holds header space + compressed records
	started     bool // Reset or ResetBuffer was called
}

// Reset starts a new batch. From h it takes BaseOffset,
// PartitionLeaderEpoch, Attributes (codec, timestamp type, transactional,
// control, delete horizon), ProducerID, ProducerEpoch and BaseSequence; for a
// LogAppendTime batch, MaxTimestamp is the append time; with the
// delete-horizon flag, BaseTimestamp is the horizon. The other fields are
// computed by Build. level is the codec's compression level, or
// [DefaultLevel].
func (b *Builder) Reset(h BatchHeader, level int) {
	b.ext = nil
	b.resetFields(h, level)
	if h.Attributes.Compression() == None {
		b.buf = append(b.own[:0], make([]byte, BatchHeaderLen)...)
	} else {
		b.raw = b.ownRaw[:0]
	}
}

func (b *Builder) resetFields(h BatchHeader, level int) {
	b.hdr = h
	b.hdr.Magic = Magic
	b.level = level
	if !b.hdr.Attributes.HasDeleteHorizon() {
		b.hdr.BaseTimestamp = NoTimestamp
	}
	if b.hdr.Attributes.TimestampType() != LogAppendTime {
		b.hdr.MaxTimestamp = NoTimestamp
	}
	b.hdr.LastOffsetDelta = -1
	b.count = 0
	b.built = false
	b.compressed = false
	b.started = true
}

// ResetBuffer starts a new batch like Reset, appending the records into buf
// (from its start, using its capacity) instead of the Builder's own buffer:
// a producer hands in memory from its buffer pool. For an uncompressed batch
// buf holds the whole batch and Build returns it; for a compressed one buf
// holds the uncompressed records and Build compresses them into the
// Builder's own buffer. buf is not grown while the records fit: callers
// check [Builder.Size] plus [EstimateRecordSize] against [Builder.Cap]
// before appending. [Builder.Buffer] returns buf when the batch is done.
func (b *Builder) ResetBuffer(h BatchHeader, level int, buf []byte) {
	b.ext = buf[:0]
	b.resetFields(h, level)
	if h.Attributes.Compression() == None {
		b.buf = append(buf[:0], make([]byte, BatchHeaderLen)...)
	} else {
		b.raw = buf[:0]
	}
}

// Buffer returns the buffer given to ResetBuffer (nil after Reset), for the
// caller to return to its pool once the batch's bytes are no longer used.
func (b *Builder) Buffer() []byte { return b.ext }

// Cap returns how many bytes the header and records may take without
// growing the buffer given to ResetBuffer.
func (b *Builder) Cap() int {
	if b.hdr.Attributes.Compression() == None {
		return cap(b.buf)
	}
	return BatchHeaderLen + cap(b.raw)
}

// Len returns the number of records appended since Reset.
func (b *Builder) Len() int { return int(b.count) }

// Size returns the batch size so far, before compression: header plus
// encoded records. Producers use it to decide when a batch is full.
func (b *Builder) Size() int {
	if b.hdr.Attributes.Compression() == None {
		return len(b.buf)
	}
	return BatchHeaderLen + len(b.raw)
}

// EstimateRecordSize returns the encoded size of a record with the given
// fields (length varint included), assuming the worst-case deltas.
func EstimateRecordSize(key, value []byte, headers []Header) int {
	n := encodedBodyLen(math.MaxInt32, math.MinInt64, key, value, headers)
	return varintLen(int32(n)) + n
}

// Append adds a record with the next offset delta (the number of records
// appended so far).
func (b *Builder) Append(timestamp int64, key, value []byte, headers []Header) error {
	return b.AppendWithOffsetDelta(b.hdr.LastOffsetDelta+1, timestamp, key, value, headers)
}

// AppendWithOffsetDelta adds a record at an explicit offset delta, which must
// be greater than the previous record's: the cleaner and the log's
// recompression keep the original offsets, so deltas may have gaps.
// timestamp must be >= 0 or -1 (no timestamp); header keys must not be nil.
func (b *Builder) AppendWithOffsetDelta(offsetDelta int32, timestamp int64, key, value []byte, headers []Header) error {
	if b.built || b.compressed || !b.started {
		return fmt.Errorf("record: Append without Reset")
	}
	if offsetDelta <= b.hdr.LastOffsetDelta || offsetDelta < 0 {
		return fmt.Errorf("%w: %d after %d", ErrOffsetDelta, offsetDelta, b.hdr.LastOffsetDelta)
	}
	if timestamp < NoTimestamp {
		return fmt.Errorf("%w: %d", ErrInvalidTimestamp, timestamp)
	}
	for i := range headers {
		if headers[i].Key == nil {
			return ErrNilHeaderKey
		}
	}
	if b.count == 0 && !b.hdr.Attributes.HasDeleteHorizon() {
		b.hdr.BaseTimestamp = timestamp
	}
	if b.hdr.Attributes.TimestampType() != LogAppendTime && timestamp > b.hdr.MaxTimestamp {
		b.hdr.MaxTimestamp = timestamp
	}
	tsDelta := timestamp - b.hdr.BaseTimestamp
	body := encodedBodyLen(offsetDelta, tsDelta, key, value, headers)
	if body > math.MaxInt32-maxVarintLen-BatchHeaderLen-b.Size() {
		return fmt.Errorf("record: batch would exceed 2 GiB")
	}
	if b.hdr.Attributes.Compression() == None {
		b.buf = appendRecord(b.buf, body, offsetDelta, tsDelta, key, value, headers)
	} else {
		b.raw = appendRecord(b.raw, body, offsetDelta, tsDelta, key, value, headers)
	}
	b.hdr.LastOffsetDelta = offsetDelta
	b.count++
	return nil
}

// SetLastOffsetDelta overrides the batch's lastOffsetDelta, which must not be
// below the last record's offset delta: the cleaner keeps a rebuilt batch's
// original last offset even when its last records were removed.
func (b *Builder) SetLastOffsetDelta(delta int32) error {
	if delta < b.hdr.LastOffsetDelta {
		return fmt.Errorf("%w: last offset delta %d below the last record's %d", ErrOffsetDelta, delta, b.hdr.LastOffsetDelta)
	}
	b.hdr.LastOffsetDelta = delta
	return nil
}

// Build seals the batch: it compresses the records if the codec asks for it,
// writes the header with lengths, counts and timestamps, and computes the
// CRC. The returned bytes belong to the Builder and are valid until its next
// Reset; copy them to keep them. Build fails with [ErrNoRecords] on an empty
// builder (see [AppendEmptyBatch] for empty batches).
func (b *Builder) Build() ([]byte, error) {
	if b.built {
		return b.buf, nil
	}
	if b.count == 0 {
		return nil, ErrNoRecords
	}
	if b.hdr.Attributes.Compression() != None {
		if err := b.Compress(); err != nil {
			return nil, err
		}
	} else if b.ext == nil {
		b.own = b.buf
	}
	if len(b.buf)-LogOverhead > math.MaxInt32 {
		return nil, fmt.Errorf("record: batch exceeds 2 GiB")
	}
	b.hdr.BatchLength = int32(len(b.buf) - LogOverhead)
	b.hdr.RecordsCount = b.count
	putHeader(b.buf, &b.hdr)
	b.hdr.CRC = crc.Checksum(b.buf[offAttributes:])
	binary.BigEndian.PutUint32(b.buf[offCRC:], b.hdr.CRC)
	b.built = true
	return b.buf, nil
}

// Compress compresses the records appended so far, the costly part of
// [Builder.Build], leaving Build only the header and the CRC: a producer
// compresses several batches on as many goroutines and then stamps and
// builds them in order. No record can be appended after it. It does
// nothing for an uncompressed batch, after Build, or a second time; it
// fails with [ErrNoRecords] on an empty builder.
func (b *Builder) Compress() error {
	c := b.hdr.Attributes.Compression()
	if c == None || b.built || b.compressed {
		return nil
	}
	if b.count == 0 {
		return ErrNoRecords
	}
	out, err := appendCompressed(append(b.own[:0], make([]byte, BatchHeaderLen)...), b.raw, c, b.level)
	if err != nil {
		return err
	}
	b.buf, b.own = out, out
	if b.ext == nil {
		b.ownRaw = b.raw
	}
	b.compressed = true
	return nil
}

// SetProducer sets the batch's producer id, epoch, base sequence and
// transactional flag before Build: an idempotent producer learns the
// sequence only when it sends the batch, after the records were added.
// Calling it after Build has no effect on the built bytes.
func (b *Builder) SetProducer(producerID int64, producerEpoch int16, baseSequence int32, transactional bool) {
	b.hdr.ProducerID, b.hdr.ProducerEpoch, b.hdr.BaseSequence = producerID, producerEpoch, baseSequence
	b.hdr.Attributes = b.hdr.Attributes.WithTransactional(transactional)
}

// Header returns the header as Build wrote it (meaningful after Build).
func (b *Builder) Header() BatchHeader { return b.hdr }

// AppendBatch encodes records into one batch appended to dst, for tests and
// tools: a convenience over [Builder] that allocates. Records take offset
// deltas from their OffsetDelta fields when strictly increasing from 0 as
// written, and their Timestamp fields as timestamps.
func AppendBatch(dst []byte, h BatchHeader, level int, records []Record) ([]byte, error) {
	var b Builder
	b.Reset(h, level)
	for i := range records {
		r := &records[i]
		if err := b.AppendWithOffsetDelta(r.OffsetDelta, r.Timestamp, r.Key, r.Value, r.Headers); err != nil {
			return dst, err
		}
	}
	if h.LastOffsetDelta > b.hdr.LastOffsetDelta {
		if err := b.SetLastOffsetDelta(h.LastOffsetDelta); err != nil {
			return dst, err
		}
	}
	out, err := b.Build()
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil
}
