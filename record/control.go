package record

import (
	"encoding/binary"
	"fmt"
)

// ControlType is the type of a control record (Kafka's ControlRecordType),
// stored in the record's 4-byte key: version int16 (0), type int16.
type ControlType int16

// Control record types. Part of the wire format; must not be changed.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
	// ControlUnknown is what ParseControlKey reports for any other type, as
	// Kafka's ControlRecordType.parse does.
	ControlUnknown ControlType = -1
)

var controlNames = map[ControlType]string{
	ControlAbort: "ABORT", ControlCommit: "COMMIT", ControlLeaderChange: "LEADER_CHANGE",
	ControlSnapshotHeader: "SNAPSHOT_HEADER", ControlSnapshotFooter: "SNAPSHOT_FOOTER",
	ControlKRaftVersion: "KRAFT_VERSION", ControlKRaftVoters: "KRAFT_VOTERS", ControlUnknown: "UNKNOWN",
}

func (t ControlType) String() string {
	if s, ok := controlNames[t]; ok {
		return s
	}
	return fmt.Sprintf("ControlType(%d)", int16(t))
}

const (
	controlKeyLen      = 4
	endTxnMarkerLen    = 6
	controlKeyVersion  = 0
	endTxnValueVersion = 0
)

// AppendControlKey appends the 4-byte key of a control record of type t.
func AppendControlKey(dst []byte, t ControlType) []byte {
	dst = binary.BigEndian.AppendUint16(dst, controlKeyVersion)
	return binary.BigEndian.AppendUint16(dst, uint16(t))
}

// ParseControlKey returns the type in a control record's key. As Kafka does,
// a key shorter than 4 bytes or with a negative version is an error, a
// version above 0 is read as version 0, and a type it does not know is
// [ControlUnknown].
func ParseControlKey(key []byte) (ControlType, error) {
	if len(key) < controlKeyLen {
		return ControlUnknown, fmt.Errorf("%w: key of %d bytes", ErrBadControlRecord, len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v < 0 {
		return ControlUnknown, fmt.Errorf("%w: key version %d", ErrBadControlRecord, v)
	}
	t := ControlType(binary.BigEndian.Uint16(key[2:]))
	if t < ControlAbort || t > ControlKRaftVoters {
		return ControlUnknown, nil
	}
	return t, nil
}

// EndTxnMarker is the value of a COMMIT or ABORT control record: version
// int16 (0) and the coordinator epoch int32.
type EndTxnMarker struct {
	Type             ControlType // ControlCommit or ControlAbort
	CoordinatorEpoch int32
}

// ParseEndTxnMarker decodes a COMMIT/ABORT control record from its key and
// value.
func ParseEndTxnMarker(key, value []byte) (EndTxnMarker, error) {
	t, err := ParseControlKey(key)
	if err != nil {
		return EndTxnMarker{}, err
	}
	if t != ControlCommit && t != ControlAbort {
		return EndTxnMarker{}, fmt.Errorf("%w: %s is not an end-transaction marker", ErrBadControlRecord, t)
	}
	if len(value) < endTxnMarkerLen {
		return EndTxnMarker{}, fmt.Errorf("%w: marker value of %d bytes", ErrBadControlRecord, len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 {
		return EndTxnMarker{}, fmt.Errorf("%w: marker version %d", ErrBadControlRecord, v)
	}
	return EndTxnMarker{Type: t, CoordinatorEpoch: int32(binary.BigEndian.Uint32(value[2:]))}, nil
}

// AppendEndTxnMarkerBatch appends a transaction marker batch to dst exactly
// as Kafka writes one (MemoryRecords.writeEndTransactionalMarker):
// attributes control + transactional, codec none, CreateTime, baseSequence
// -1, the producer's id and epoch, one record with the marker's key and
// value, timestamp as both base and max timestamp. The batch is 78 bytes. baseOffset and partitionLeaderEpoch are
// as given (the log rewrites them on append).
func AppendEndTxnMarkerBatch(dst []byte, baseOffset int64, partitionLeaderEpoch int32, producerID int64, producerEpoch int16, timestamp int64, m EndTxnMarker) ([]byte, error) {
	if m.Type != ControlCommit && m.Type != ControlAbort {
		return dst, fmt.Errorf("%w: %s is not an end-transaction marker", ErrBadControlRecord, m.Type)
	}
	var kv [controlKeyLen + endTxnMarkerLen]byte
	key := AppendControlKey(kv[:0], m.Type)
	value := binary.BigEndian.AppendUint16(kv[controlKeyLen:controlKeyLen], endTxnValueVersion)
	value = binary.BigEndian.AppendUint32(value, uint32(m.CoordinatorEpoch))
	var b Builder
	b.Reset(BatchHeader{
		BaseOffset: baseOffset, PartitionLeaderEpoch: partitionLeaderEpoch,
		Attributes: Attributes(0).WithControl(true).WithTransactional(true),
		ProducerID: producerID, ProducerEpoch: producerEpoch, BaseSequence: NoSequence,
	}, DefaultLevel)
	if err := b.Append(timestamp, key, value, nil); err != nil {
		return dst, err
	}
	out, err := b.Build()
	if err != nil {
		return dst, err
	}
	return append(dst, out...), nil
}
