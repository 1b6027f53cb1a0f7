package log

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// logValidator checks the batches a partition's producers send and builds
// those the log writes itself (Kafka's LogValidator, with the record
// builders UnifiedLog uses for markers): it validates a client batch
// (validate), recompresses it when the topic's compression.type asks for
// another codec, decides whether its write may overlap its validation
// (overlaps), makes the point-read marks of a large batch just appended
// (appendedMarks) and encodes end-transaction markers (marker).
//
// Its decoder and builders are reused from batch to batch: it has no lock
// of its own, and runs under its Log's write lock (Log.mu), but
// overlapped, which Stats reads.
type logValidator struct {
	tp  TopicPartition
	now func() time.Time
	// overlapBytes is Config.OverlapAppendBytes; overlapped counts the
	// appends whose write overlapped their validation.
	overlapBytes int
	overlapped   atomic.Int64

	reader    *record.Reader // validation decoder (CRCs are checked first, by record.Validate)
	rebuilder record.Builder // recompression
	markerBuf []byte         // the last marker batch
}

func newLogValidator(tp TopicPartition, now func() time.Time, overlapBytes int) *logValidator {
	return &logValidator{tp: tp, now: now, overlapBytes: overlapBytes, reader: record.NewReader(record.ReaderOptions{SkipCRC: true})}
}

// checkSize applies max.message.bytes and segment.bytes to a batch of n
// bytes.
func checkSize(c TopicConfig, n int) error {
	if n > c.MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes, max.message.bytes is %d", ErrRecordTooLarge, n, c.MaxMessageBytes)
	}
	if int64(n) > c.SegmentBytes {
		return fmt.Errorf("%w: %d bytes, segment.bytes is %d", ErrRecordTooLarge, n, c.SegmentBytes)
	}
	return nil
}

// overlaps says whether the append of batch may overlap its write with its
// validation (Config.OverlapAppendBytes): a batch large enough, on two Ps
// or more, that validation will not rewrite as far as its header tells (it
// comes with base offset 0 and is not recompressed or stamped with the log
// append time) and that fits, with its header. It changes nothing.
func (v *logValidator) overlaps(batch []byte, c TopicConfig) (record.BatchHeader, bool) {
	if v.overlapBytes <= 0 || len(batch) < v.overlapBytes || runtime.GOMAXPROCS(0) < 2 {
		return record.BatchHeader{}, false
	}
	h, err := record.ParseHeader(batch)
	if err != nil || h.Size() != len(batch) || h.BaseOffset != 0 || c.MessageTimestampType != record.CreateTime ||
		checkSize(c, len(batch)) != nil {
		return h, false // refused or rewritten either way
	}
	codec, keep := c.CompressionType.Codec()
	return h, keep || codec == h.Attributes.Compression()
}

// validate applies the checks of Kafka's
// UnifiedLog.analyzeAndValidateRecords and LogValidator to a client batch.
// It returns the header and the batch to write: the same bytes, or a
// rebuilt batch (owned by the validator until its next use) when the
// topic's codec differs or a compressed batch's offset deltas are not
// 0..n-1; or no batch, when the header's max timestamp is wrong: the
// caller then rewrites it (fixMaxTimestamp), once no write ahead reads the
// batch.
func (v *logValidator) validate(batch []byte, c TopicConfig) (record.BatchHeader, []byte, error) {
	h, err := record.Validate(batch)
	if err != nil {
		return h, nil, err
	}
	switch {
	case h.BaseOffset != 0:
		// Kafka's words. The likeliest cause in process is a batch appended
		// before: Append wrote its offset into it.
		return h, nil, fmt.Errorf("%w: the baseOffset of the record batch in the append to %s should be 0, but it is %d"+
			" (a batch Append took already carries the offset it assigned: resend a copy made before)", ErrInvalidRecord, v.tp, h.BaseOffset)
	case h.RecordsCount <= 0 || int64(h.LastOffsetDelta)+1 != int64(h.RecordsCount):
		return h, nil, fmt.Errorf("%w: %d records with lastOffsetDelta %d", ErrInvalidRecord, h.RecordsCount, h.LastOffsetDelta)
	case h.Attributes.IsControl():
		return h, nil, fmt.Errorf("%w: clients may not produce control batches", ErrInvalidRecord)
	case h.ProducerID >= 0 && h.BaseSequence < 0:
		return h, nil, fmt.Errorf("%w: producer id %d without a base sequence", ErrInvalidRecord, h.ProducerID)
	case h.Attributes.TimestampType() == record.LogAppendTime:
		return h, nil, fmt.Errorf("%w: producers must not set LogAppendTime", ErrInvalidTimestamp)
	}
	if err := checkSize(c, len(batch)); err != nil {
		return h, nil, err
	}
	codec, keep := c.CompressionType.Codec()
	if keep {
		codec = h.Attributes.Compression()
	}
	rebuild := codec != h.Attributes.Compression()

	r := v.reader
	if err := r.Reset(batch); err != nil {
		return h, nil, err
	}
	now := v.now().UnixMilli()
	maxTS := record.NoTimestamp
	compacted := c.CleanupPolicy.Compact
	// The accepted timestamp window, computed once: [now-before, now+after].
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.MessageTimestampType == record.CreateTime {
		if c.MessageTimestampBeforeMax >= 0 {
			lo = now - c.MessageTimestampBeforeMax.Milliseconds()
		}
		if c.MessageTimestampAfterMax >= 0 {
			hi = now + c.MessageTimestampAfterMax.Milliseconds()
		}
	}
	// Every record is checked (layout, offset delta, key, timestamp) with
	// SkimWhile, which validates as a full decode does without producing
	// the records' fields, and stops at each record that fails a check.
	check := record.SkimCheck{MinTimestamp: lo, MaxTimestamp: hi, KeyRequired: compacted}
	// Records refused for a key or a timestamp are all reported, each
	// for its first fault, as Kafka's LogValidator reports them.
	var refused []RecordError
	for {
		ts, rec, stopped := r.SkimWhile(check)
		maxTS = max(maxTS, ts)
		if !stopped {
			break
		}
		if rec.OffsetDelta != rec.Index {
			if h.Attributes.Compression() == record.None {
				return h, nil, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, rec.Index, rec.OffsetDelta)
			}
			rebuild = true // Kafka rebuilds compressed batches with bad inner offsets
		}
		switch {
		case compacted && rec.NullKey:
			refused = append(refused, RecordError{Index: rec.Index,
				Message: "Compacted topic cannot accept message without key in topic partition " + v.tp.String()})
		case (rec.Timestamp < lo || rec.Timestamp > hi) && rec.Timestamp != record.NoTimestamp:
			// The offset is the record's in the batch as the client
			// sent it (base offset 0), as Kafka reports it.
			refused = append(refused, RecordError{Index: rec.Index, Message: fmt.Sprintf(
				"Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
				rec.Timestamp, h.BaseOffset+int64(rec.OffsetDelta), lo, hi)})
		}
		maxTS = max(maxTS, rec.Timestamp)
	}
	if err := r.Err(); err != nil {
		return h, nil, err
	}
	if len(refused) > 0 {
		return h, nil, &RecordValidationError{Partition: v.tp, Records: refused}
	}
	if rebuild {
		return v.rebuild(batch, h, codec, c)
	}
	if c.MessageTimestampType == record.CreateTime && h.MaxTimestamp != maxTS {
		// The header's max timestamp is wrong: the caller rewrites it
		// (and the CRC) with fixMaxTimestamp.
		h.MaxTimestamp = maxTS
		return h, nil, nil
	}
	return h, batch, nil
}

// fixMaxTimestamp is the rewrite validate asks for by returning no batch:
// the batch's max timestamp (and so its CRC) becomes h's.
func fixMaxTimestamp(batch []byte, h *record.BatchHeader) ([]byte, error) {
	if err := record.SetMaxTimestamp(batch, h.MaxTimestamp); err != nil {
		return nil, err
	}
	return batch, nil
}

// rebuild re-encodes batch with codec, keeping its producer fields and
// transactional flag, with fresh offset deltas 0..n-1 and the records' own
// timestamps (Kafka's LogValidator rebuild).
func (v *logValidator) rebuild(batch []byte, h record.BatchHeader, codec record.Compression, c TopicConfig) (record.BatchHeader, []byte, error) {
	r := v.reader
	if err := r.Reset(batch); err != nil {
		return h, nil, err
	}
	attrs := record.Attributes(0).WithCompression(codec).WithTransactional(h.Attributes.IsTransactional())
	v.rebuilder.Reset(record.BatchHeader{PartitionLeaderEpoch: h.PartitionLeaderEpoch, Attributes: attrs,
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}, c.compressionLevel(codec))
	for r.Next() {
		rec := r.Record()
		if err := v.rebuilder.Append(rec.Timestamp, rec.Key, rec.Value, rec.Headers); err != nil {
			return h, nil, fmt.Errorf("%w: %w", ErrInvalidRecord, err)
		}
	}
	if err := r.Err(); err != nil {
		return h, nil, err
	}
	out, err := v.rebuilder.Build()
	if err != nil {
		return h, nil, err
	}
	if len(out) > c.MaxMessageBytes {
		return h, nil, fmt.Errorf("%w: %d bytes after recompression with %s, max.message.bytes is %d", ErrRecordTooLarge, len(out), codec, c.MaxMessageBytes)
	}
	return v.rebuilder.Header(), out, nil
}

// appendedMarks returns the marks of a batch just appended when it is
// large enough (appendMarksMinBytes), else nil: the first point read into
// it then jumps at once instead of walking bytes that are by then out of
// the CPU's caches.
func (v *logValidator) appendedMarks(batch []byte, h *record.BatchHeader) *segment.BatchMarks {
	if len(batch) < appendMarksMinBytes || h.RecordsCount < marksMinRecords ||
		h.Attributes.Compression() != record.None || h.Attributes.IsControl() {
		return nil
	}
	r := v.reader
	if r.Reset(batch) != nil {
		return nil // cannot happen: the batch was validated
	}
	step := marksStep(h.RecordsCount)
	m, err := extendMarks(r, h, &segment.BatchMarks{Step: step, Pos: []int32{0}, N: []int32{0}}, int(h.LastOffsetDelta/step))
	_ = r.Reset(noBatch)
	if err != nil {
		return nil
	}
	return m
}

// marker encodes the end-transaction marker batch of producerID at
// offset base (its bytes are the validator's until its next marker).
func (v *logValidator) marker(base int64, leaderEpoch int32, producerID int64, producerEpoch int16, m record.EndTxnMarker) ([]byte, record.BatchHeader, error) {
	var err error
	v.markerBuf, err = record.AppendEndTxnMarkerBatch(v.markerBuf[:0], base, leaderEpoch, producerID, producerEpoch, v.now().UnixMilli(), m)
	if err != nil {
		return nil, record.BatchHeader{}, err
	}
	h, err := record.ParseHeader(v.markerBuf)
	return v.markerBuf, h, err
}

// parseMarker decodes the single record of an end-transaction marker
// batch with r.
func parseMarker(r *record.Reader, batch []byte) (record.EndTxnMarker, error) {
	if err := r.Reset(batch); err != nil {
		return record.EndTxnMarker{}, err
	}
	if !r.Next() {
		return record.EndTxnMarker{}, errors.Join(r.Err(), fmt.Errorf("%w: a control batch without a record", ErrInvalidRecord))
	}
	rec := r.Record()
	m, err := record.ParseEndTxnMarker(rec.Key, rec.Value)
	if err != nil {
		typ, kerr := record.ParseControlKey(rec.Key)
		if kerr == nil && typ != record.ControlCommit && typ != record.ControlAbort {
			return record.EndTxnMarker{Type: typ}, nil
		}
	}
	return m, err
}
