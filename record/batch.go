package record

import (
	"encoding/binary"
	"fmt"

	"github.com/kafkalite/kafkalite/internal/crc"
)

// Wire-format constants of RecordBatch v2 (Kafka's DefaultRecordBatch and
// RecordBatch). They are part of Kafka's on-disk format and must not be
// changed.
const (
	// Magic is the only supported magic value (RecordBatch v2).
	Magic int8 = 2
	// BatchHeaderLen is the size of the batch header (Kafka's
	// RECORD_BATCH_OVERHEAD); an empty batch is exactly this long.
	BatchHeaderLen = 61
	// LogOverhead is the size of baseOffset + batchLength (Kafka's
	// LOG_OVERHEAD): a batch's total size is LogOverhead + batchLength.
	LogOverhead = 12
	// HeaderSizeUpToMagic is how many bytes a scanner reads to learn a batch's
	// length and magic (Kafka's HEADER_SIZE_UP_TO_MAGIC).
	HeaderSizeUpToMagic = 17
	// MinBatchLength is the smallest valid batchLength for v2 (61 - 12).
	MinBatchLength = BatchHeaderLen - LogOverhead
	// MaxRecordOverhead is the largest per-record overhead excluding key,
	// value and headers (Kafka's DefaultRecord.MAX_RECORD_OVERHEAD).
	MaxRecordOverhead = 21

	// NoTimestamp, NoProducerID, NoProducerEpoch, NoSequence and
	// NoPartitionLeaderEpoch are Kafka's "absent" sentinels.
	NoTimestamp            int64 = -1
	NoProducerID           int64 = -1
	NoProducerEpoch        int16 = -1
	NoSequence             int32 = -1
	NoPartitionLeaderEpoch int32 = -1
)

// Byte offsets of the header fields inside a batch.
const (
	offBaseOffset           = 0
	offBatchLength          = 8
	offPartitionLeaderEpoch = 12
	offMagic                = 16
	offCRC                  = 17
	offAttributes           = 21
	offLastOffsetDelta      = 23
	offBaseTimestamp        = 27
	offMaxTimestamp         = 35
	offProducerID           = 43
	offProducerEpoch        = 51
	offBaseSequence         = 53
	offRecordsCount         = 57
)

// BatchHeader holds every field of a RecordBatch v2 header, named as Kafka
// names them.
type BatchHeader struct {
	// BaseOffset is the offset of the first record (offsetDelta 0). Producers
	// write 0; the log assigns it on append.
	BaseOffset int64
	// BatchLength is the number of bytes after this field: the batch's total
	// size minus [LogOverhead]. Computed by the encoder.
	BatchLength int32
	// PartitionLeaderEpoch is stamped by the leader on append; -1 from
	// producers. Not covered by the CRC.
	PartitionLeaderEpoch int32
	// Magic is always 2.
	Magic int8
	// CRC is the CRC-32C of the bytes from Attributes to the end of the batch.
	// Computed by the encoder.
	CRC uint32
	// Attributes holds the codec, timestamp type and flags.
	Attributes Attributes
	// LastOffsetDelta is lastOffset - BaseOffset. After compaction it can be
	// larger than RecordsCount-1.
	LastOffsetDelta int32
	// BaseTimestamp is the first record's timestamp (-1 for an empty batch),
	// or the delete horizon when Attributes.HasDeleteHorizon().
	BaseTimestamp int64
	// MaxTimestamp is the largest record timestamp (CreateTime) or the time
	// the log appended the batch (LogAppendTime).
	MaxTimestamp int64
	// ProducerID is -1 for a non-idempotent producer.
	ProducerID int64
	// ProducerEpoch is -1 for a non-idempotent producer.
	ProducerEpoch int16
	// BaseSequence is the first record's sequence number, or -1.
	BaseSequence int32
	// RecordsCount is the number of records in the batch (0 when empty).
	RecordsCount int32
}

// LastOffset returns BaseOffset + LastOffsetDelta.
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset returns the offset after the batch's last offset.
func (h *BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// Size returns the batch's total size in bytes (LogOverhead + BatchLength).
func (h *BatchHeader) Size() int { return LogOverhead + int(h.BatchLength) }

// LastSequence returns the last record's sequence number, wrapping past
// MaxInt32 as Kafka does, or -1 when BaseSequence is -1.
func (h *BatchHeader) LastSequence() int32 { return h.SequenceAt(h.LastOffsetDelta) }

// SequenceAt returns the sequence of the record at offsetDelta, wrapping
// past MaxInt32 to 0 as Kafka's DefaultRecordBatch.incrementSequence does,
// or -1 when BaseSequence is -1.
func (h *BatchHeader) SequenceAt(offsetDelta int32) int32 {
	if h.BaseSequence < 0 {
		return NoSequence
	}
	const maxInt32 = 1<<31 - 1
	if h.BaseSequence > maxInt32-offsetDelta {
		return offsetDelta - (maxInt32 - h.BaseSequence) - 1
	}
	return h.BaseSequence + offsetDelta
}

// ParseHeader decodes the 61-byte header at the start of b. It checks only
// what it must to read the fields: the input length, the magic byte and the
// minimum batchLength; it does not check the CRC (see [Validate]) or that b
// holds the whole batch.
func ParseHeader(b []byte) (BatchHeader, error) {
	var h BatchHeader
	if len(b) < HeaderSizeUpToMagic {
		return h, batchErr(-1, len(b), ErrTruncated, "%d bytes, need %d to read the batch length and magic", len(b), HeaderSizeUpToMagic)
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	h.BatchLength = int32(binary.BigEndian.Uint32(b[offBatchLength:]))
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[offPartitionLeaderEpoch:]))
	h.Magic = int8(b[offMagic])
	if err := checkLengthAndMagic(h.BaseOffset, h.BatchLength, h.Magic); err != nil {
		return h, err
	}
	if len(b) < BatchHeaderLen {
		return h, batchErr(h.BaseOffset, len(b), ErrTruncated, "%d bytes, need %d for the header", len(b), BatchHeaderLen)
	}
	h.CRC = binary.BigEndian.Uint32(b[offCRC:])
	h.Attributes = Attributes(binary.BigEndian.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[offBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	h.RecordsCount = int32(binary.BigEndian.Uint32(b[offRecordsCount:]))
	return h, nil
}

// BatchSize returns the total size of the batch that starts at b, reading
// only its first 17 bytes, as a log scanner does (Kafka's
// FileLogInputStream). It returns [ErrTruncated] if fewer than 17 bytes are
// given, [ErrUnsupportedMagic] for legacy formats and [ErrBadLength] for a
// batchLength below the v2 minimum. It does not check that b holds the
// whole batch.
func BatchSize(b []byte) (int, error) {
	if len(b) < HeaderSizeUpToMagic {
		return 0, batchErr(-1, len(b), ErrTruncated, "%d bytes, need %d to read the batch length and magic", len(b), HeaderSizeUpToMagic)
	}
	base := int64(binary.BigEndian.Uint64(b))
	n := int32(binary.BigEndian.Uint32(b[offBatchLength:]))
	if err := checkLengthAndMagic(base, n, int8(b[offMagic])); err != nil {
		return 0, err
	}
	return LogOverhead + int(n), nil
}

// legacyMinLength is the smallest batchLength of any magic (Kafka's
// LegacyRecord.RECORD_OVERHEAD_V0); a shorter one is corrupt whatever the
// magic byte says, which is how a zero-filled tail reads.
const legacyMinLength = 14

// checkLengthAndMagic applies Kafka's scanner checks in Kafka's order
// (FileLogInputStream.nextBatch): a length below the legacy minimum is
// corrupt, then the magic must be 2, then the length at least v2's minimum.
func checkLengthAndMagic(base int64, length int32, magic int8) error {
	if length < legacyMinLength {
		return batchErr(base, offBatchLength, ErrBadLength, "batchLength %d is below %d", length, legacyMinLength)
	}
	if magic != Magic {
		return batchErr(base, offMagic, ErrUnsupportedMagic, "magic %d", magic)
	}
	if length < MinBatchLength {
		return batchErr(base, offBatchLength, ErrBadLength, "batchLength %d is below %d", length, MinBatchLength)
	}
	return nil
}

// Validate checks that b is exactly one well-formed batch: the header
// parses, len(b) equals its size, the codec is known, recordsCount is not
// negative, and the CRC matches. It does not decompress or read records; a
// [Reader] does that. Kafka calls this check isValid plus ensureValid.
func Validate(b []byte) (BatchHeader, error) {
	h, err := parseWhole(b)
	if err != nil {
		return h, err
	}
	if sum := crc.Checksum(b[offAttributes:h.Size()]); sum != h.CRC {
		return h, batchErr(h.BaseOffset, offCRC, ErrCRC, "stored %#08x, computed %#08x", h.CRC, sum)
	}
	return h, nil
}

// ComputeCRC returns the CRC-32C that belongs in the batch b (over the bytes
// from the attributes to the end). b must be at least [BatchHeaderLen] long.
func ComputeCRC(b []byte) (uint32, error) {
	if len(b) < BatchHeaderLen {
		return 0, batchErr(-1, len(b), ErrTruncated, "%d bytes, need %d", len(b), BatchHeaderLen)
	}
	return crc.Checksum(b[offAttributes:]), nil
}

// The helpers below rewrite a batch in place, as a log does on append
// (Kafka's LogValidator). Each checks only that the header is present.

func checkHeaderLen(b []byte) error {
	if len(b) < BatchHeaderLen {
		return batchErr(-1, len(b), ErrTruncated, "%d bytes, need %d to rewrite the header", len(b), BatchHeaderLen)
	}
	return nil
}

// SetBaseOffset rewrites the base offset. The CRC does not cover it.
func SetBaseOffset(b []byte, baseOffset int64) error {
	if err := checkHeaderLen(b); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(baseOffset))
	return nil
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch. The CRC does
// not cover it.
func SetPartitionLeaderEpoch(b []byte, epoch int32) error {
	if err := checkHeaderLen(b); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b[offPartitionLeaderEpoch:], uint32(epoch))
	return nil
}

// SetLogAppendTime marks the batch as LogAppendTime, sets its max timestamp
// to appendTime and recomputes the CRC. baseTimestamp and the records'
// deltas stay as they are; readers report appendTime for every record.
func SetLogAppendTime(b []byte, appendTime int64) error {
	if err := checkHeaderLen(b); err != nil {
		return err
	}
	attrs := Attributes(binary.BigEndian.Uint16(b[offAttributes:])) | attrLogAppendTime
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(attrs))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(appendTime))
	binary.BigEndian.PutUint32(b[offCRC:], crc.Checksum(b[offAttributes:]))
	return nil
}

// SetMaxTimestamp rewrites the max timestamp and recomputes the CRC if it
// changed (a CreateTime batch whose stored max was wrong).
func SetMaxTimestamp(b []byte, maxTimestamp int64) error {
	if err := checkHeaderLen(b); err != nil {
		return err
	}
	if int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) == maxTimestamp {
		return nil
	}
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(maxTimestamp))
	binary.BigEndian.PutUint32(b[offCRC:], crc.Checksum(b[offAttributes:]))
	return nil
}

// putHeader writes h's fields into the first 61 bytes of b, leaving the CRC
// for the caller.
func putHeader(b []byte, h *BatchHeader) {
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(b[offBatchLength:], uint32(h.BatchLength))
	binary.BigEndian.PutUint32(b[offPartitionLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = byte(Magic)
	binary.BigEndian.PutUint16(b[offAttributes:], uint16(h.Attributes))
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	binary.BigEndian.PutUint64(b[offBaseTimestamp:], uint64(h.BaseTimestamp))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(b[offRecordsCount:], uint32(h.RecordsCount))
}

// AppendEmptyBatch appends a 61-byte batch with no records to dst, as Kafka's
// cleaner writes one to keep producer state or a transaction marker's place
// after every record was removed (DefaultRecordBatch.writeEmptyHeader):
// recordsCount 0, baseTimestamp -1, codec none and delete-horizon flag cleared; BaseOffset,
// LastOffsetDelta, MaxTimestamp, PartitionLeaderEpoch, the producer fields and
// the timestamp-type, transactional and control flags are taken from h. The
// CRC is computed; h's BatchLength, CRC, BaseTimestamp and RecordsCount are
// ignored.
func AppendEmptyBatch(dst []byte, h BatchHeader) []byte {
	h.BatchLength = MinBatchLength
	h.BaseTimestamp = NoTimestamp
	h.RecordsCount = 0
	h.Attributes &= attrLogAppendTime | attrTransactional | attrControl
	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderLen)...)
	b := dst[start:]
	putHeader(b, &h)
	binary.BigEndian.PutUint32(b[offCRC:], crc.Checksum(b[offAttributes:]))
	return dst
}

// String formats the header for logs and tools.
func (h BatchHeader) String() string {
	return fmt.Sprintf("baseOffset=%d lastOffset=%d count=%d size=%d codec=%s %s epoch=%d crc=%#08x producerId=%d producerEpoch=%d baseSequence=%d",
		h.BaseOffset, h.LastOffset(), h.RecordsCount, h.Size(), h.Attributes.Compression(), h.Attributes, h.PartitionLeaderEpoch,
		h.CRC, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
}

// TrimBatch rewrites the header of b, the first bytes of an uncompressed
// batch ending on a record boundary, so that b reads as a batch of its
// first count records: batchLength and recordsCount change, nothing else,
// so the CRC no longer matches and the result must be read with
// ReaderOptions.SkipCRC. A point read uses it to decode a record without
// reading the rest of its batch.
func TrimBatch(b []byte, count int32) error {
	if err := checkHeaderLen(b); err != nil {
		return err
	}
	if Attributes(binary.BigEndian.Uint16(b[offAttributes:])).Compression() != None {
		return batchErr(-1, offAttributes, ErrCompression, "only an uncompressed batch can be trimmed")
	}
	binary.BigEndian.PutUint32(b[offBatchLength:], uint32(len(b)-LogOverhead))
	binary.BigEndian.PutUint32(b[offRecordsCount:], uint32(count))
	return nil
}
