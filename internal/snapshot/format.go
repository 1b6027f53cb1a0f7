package snapshot

import (
	"encoding/binary"

	"github.com/kafkalite/kafkalite/internal/crc"
)

// Layout of a snapshot file (see the package doc). These constants are part
// of Kafka's on-disk format and must not change.
const (
	// Version is the only snapshot version Kafka writes and reads.
	Version = 1

	crcOffset   = 2  // after the int16 version
	countOffset = 6  // after the uint32 crc; the CRC covers [countOffset, EOF)
	headerLen   = 10 // version, crc, entryCount
	entryLen    = 46 // one producer's entry
)

// Entry is one producer's state as a snapshot stores it: the metadata of
// its last data batch only (Kafka keeps up to five in memory,
// ProducerStateEntry.NUM_BATCHES_TO_RETAIN; on load the batch is restored
// only if LastOffset ≥ 0). Field names are Kafka's (ProducerSnapshot.json).
type Entry struct {
	// ProducerID is the producer id (producerId).
	ProducerID int64
	// ProducerEpoch is the producer's current epoch (epoch).
	ProducerEpoch int16
	// LastSequence is the last sequence of the producer's last data batch,
	// -1 if none (lastSequence).
	LastSequence int32
	// LastOffset is the last offset of the producer's last data batch, -1
	// if none (lastOffset).
	LastOffset int64
	// OffsetDelta is LastOffset minus the first offset of that batch, 0 if
	// none (offsetDelta).
	OffsetDelta int32
	// Timestamp is the max timestamp of the producer's last batch or
	// transaction marker, in milliseconds since the epoch; producer expiry
	// (producer.id.expiration.ms) is measured from it (timestamp).
	Timestamp int64
	// CoordinatorEpoch is the coordinator epoch of the producer's last
	// transaction marker, -1 initially (coordinatorEpoch).
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction, -1 if none (currentTxnFirstOffset).
	CurrentTxnFirstOffset int64
}

// Encode appends the snapshot file holding entries, in the order given, to
// dst and returns the extended slice: version 1, the CRC-32C of bytes
// [6, EOF), the count, then each entry. Zero entries make a 10-byte file.
// Sort entries by producer id first for deterministic bytes.
//
// REQUIRES: len(entries) ≤ 2^31-1 (the count is an int32; 46 × 2^31 bytes
// of entries would not fit in memory anyway).
func Encode(dst []byte, entries []Entry) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, Version)
	dst = binary.BigEndian.AppendUint32(dst, 0) // crc, filled in below
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.ProducerEpoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.LastSequence))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.OffsetDelta))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.CoordinatorEpoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.CurrentTxnFirstOffset))
	}
	file := dst[start:]
	binary.BigEndian.PutUint32(file[crcOffset:], crc.Checksum(file[countOffset:]))
	return dst
}

// Decode parses a whole snapshot file and returns its entries in file
// order (a non-nil, possibly empty slice). It checks, in order: at least
// the 10-byte header, version 1, the CRC, a count that is not negative and
// matches the bytes after the header exactly. A file that fails is a
// [*CorruptError] matching [ErrCorrupt]. Decode does not retain b.
func Decode(b []byte) ([]Entry, error) {
	if len(b) < headerLen {
		return nil, corruptf("%d bytes, shorter than the %d-byte header", len(b), headerLen)
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != Version {
		return nil, corruptf("unknown version %d, want %d", v, Version)
	}
	stored, computed := binary.BigEndian.Uint32(b[crcOffset:]), crc.Checksum(b[countOffset:])
	if stored != computed {
		return nil, corruptf("CRC mismatch: stored 0x%08x, computed 0x%08x", stored, computed)
	}
	count := int32(binary.BigEndian.Uint32(b[countOffset:]))
	if count < 0 {
		return nil, corruptf("negative entry count %d", count)
	}
	body := b[headerLen:]
	if present := len(body) / entryLen; int64(count) > int64(present) {
		return nil, corruptf("entry count %d, but only %d bytes of entries (%d entries) follow the header",
			count, len(body), present)
	}
	if extra := len(body) - int(count)*entryLen; extra != 0 {
		return nil, corruptf("%d trailing bytes after %d entries", extra, count)
	}
	entries := make([]Entry, count)
	for i := range entries {
		p := body[i*entryLen : (i+1)*entryLen]
		entries[i] = Entry{
			ProducerID:            int64(binary.BigEndian.Uint64(p[0:])),
			ProducerEpoch:         int16(binary.BigEndian.Uint16(p[8:])),
			LastSequence:          int32(binary.BigEndian.Uint32(p[10:])),
			LastOffset:            int64(binary.BigEndian.Uint64(p[14:])),
			OffsetDelta:           int32(binary.BigEndian.Uint32(p[22:])),
			Timestamp:             int64(binary.BigEndian.Uint64(p[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(p[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(p[38:])),
		}
	}
	return entries, nil
}
