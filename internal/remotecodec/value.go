package remotecodec

import "fmt"

// Versions and tags of the four schemas (storage's
// RemoteLogSegmentMetadataRecord.json and its siblings). They are part of
// the wire format.
const (
	// DefaultVersion is the version [AppendValue] writes of every record:
	// 0, what Kafka 4.4.0 writes (each transform writes the record's
	// highestSupportedVersion, and 0 is the only version of every record in
	// 4.4.0).
	DefaultVersion = 0

	// RemoteLogSegmentMetadataRecordMaxVersion is the highest version of
	// apiKey 0 this package reads and writes: 1, which adds the tagged
	// BrokerLeaderEpoch in Kafka's development branch. Kafka 4.4.0 has
	// version 0 only and refuses version 1.
	RemoteLogSegmentMetadataRecordMaxVersion = 1

	tagTxnIndexEmpty     = 0 // bool, default false; apiKeys 0 and 3, every version
	tagBrokerLeaderEpoch = 1 // int32, default 0; apiKey 0, version 1+

	// segmentLeaderEpochMinLen is the size of a SegmentLeaderEpochEntry:
	// leaderEpoch(4) offset(8) and an empty tagged-field section (1).
	segmentLeaderEpochMinLen = 13
)

// maxVersion returns the highest version of apiKey this package handles.
func maxVersion(apiKey int16) int16 {
	if apiKey == APIKeyRemoteLogSegmentMetadataRecord {
		return RemoteLogSegmentMetadataRecordMaxVersion
	}
	return 0
}

// AppendValue appends rec as a __remote_log_metadata record value at
// [DefaultVersion] (0), what Kafka 4.4.0's RemoteLogMetadataSerde writes:
//
//	01 | uvarint apiKey | 00 | the record's fields
//
// The package documentation gives each record's fields. The record key is
// null: Kafka 4.4.0 produces every value with a null key. AppendValue fails
// as [AppendValueVersion] does.
func AppendValue(dst []byte, rec Record) ([]byte, error) {
	return AppendValueVersion(dst, rec, DefaultVersion)
}

// AppendValueVersion appends rec at version: 0 for every record, or 1 for
// a [RemoteLogSegmentMetadataRecord] (Kafka's development branch; Kafka
// 4.4.0 refuses it). Another version fails with [ErrUnsupportedVersion].
//
// It fails with [ErrInvalid], appending nothing, for a nil record, a
// state id outside the ones Kafka knows, a segment record with a negative
// StartOffset, an EndOffset below StartOffset or no SegmentLeaderEpochs (a
// snapshot record with none), a BrokerLeaderEpoch other than 0 at version
// 0, a string over 32767 bytes or bytes or an array over 2^31-2.
func AppendValueVersion(dst []byte, rec Record, version int16) ([]byte, error) {
	rec, err := deref(rec)
	if err != nil {
		return dst, err
	}
	apiKey := rec.APIKey()
	if version < 0 || version > maxVersion(apiKey) {
		return dst, fmt.Errorf("%w: %s version %d (valid: 0-%d)", ErrUnsupportedVersion, recordName(apiKey), version, maxVersion(apiKey))
	}
	w := newWriter(dst, recordName(apiKey))
	w.Uvarint(FrameVersion)
	w.Uvarint(uint32(apiKey))
	w.Uvarint(uint32(version))
	switch r := rec.(type) {
	case RemoteLogSegmentMetadataRecord:
		writeSegment(&w, &r, version)
	case RemoteLogSegmentMetadataUpdateRecord:
		writeUpdate(&w, &r)
	case RemotePartitionDeleteMetadataRecord:
		writeDelete(&w, &r)
	case RemoteLogSegmentMetadataSnapshotRecord:
		writeSnapshot(&w, &r)
	}
	return w.Finish(dst)
}

// deref returns the record a pointer points to, failing for nil.
func deref(rec Record) (Record, error) {
	switch r := rec.(type) {
	case nil:
		return nil, errNilRecord()
	case *RemoteLogSegmentMetadataRecord:
		return derefPtr(r)
	case *RemoteLogSegmentMetadataUpdateRecord:
		return derefPtr(r)
	case *RemotePartitionDeleteMetadataRecord:
		return derefPtr(r)
	case *RemoteLogSegmentMetadataSnapshotRecord:
		return derefPtr(r)
	}
	return rec, nil
}

// derefPtr returns *r, failing for a nil r.
func derefPtr[R Record](r *R) (Record, error) {
	if r == nil {
		return nil, errNilRecord()
	}
	return *r, nil
}

func errNilRecord() error { return fmt.Errorf("%w: nil record", ErrInvalid) }

func writeTopicIdPartition(w *writer, field string, tp TopicIdPartition) {
	w.String(field+".name", tp.Name, true)
	w.uuid(tp.ID)
	w.Int32(tp.Partition)
	w.NoTaggedFields()
}

func writeSegmentID(w *writer, id RemoteLogSegmentID) {
	writeTopicIdPartition(w, "remoteLogSegmentId.topicIdPartition", id.TopicIdPartition)
	w.uuid(id.ID)
	w.NoTaggedFields()
}

func writeEpochs(w *writer, epochs []SegmentLeaderEpoch) {
	if len(epochs) == 0 {
		w.Fail("segmentLeaderEpochs", "empty; Kafka needs at least one leader epoch per segment")
		return
	}
	w.ArrayLen("segmentLeaderEpochs", len(epochs), true)
	for _, e := range epochs {
		w.Int32(e.LeaderEpoch)
		w.Int64(e.Offset)
		w.NoTaggedFields()
	}
}

func checkSegmentState(w *writer, s RemoteLogSegmentState) {
	if !s.Valid() {
		w.Fail("remoteLogSegmentState", "state %d is not one Kafka knows (0-3)", s)
	}
}

func writeSegment(w *writer, r *RemoteLogSegmentMetadataRecord, version int16) {
	checkSegmentState(w, r.RemoteLogSegmentState)
	switch {
	case r.StartOffset < 0:
		w.Fail("startOffset", "%d is negative", r.StartOffset)
	case r.EndOffset < r.StartOffset:
		w.Fail("endOffset", "%d is below startOffset %d", r.EndOffset, r.StartOffset)
	case version < 1 && r.BrokerLeaderEpoch != 0:
		w.Fail("brokerLeaderEpoch", "%d cannot be written at version 0 (tagged field of version 1)", r.BrokerLeaderEpoch)
	}
	writeSegmentID(w, r.RemoteLogSegmentID)
	w.Int64(r.StartOffset)
	w.Int64(r.EndOffset)
	w.Int32(r.BrokerID)
	w.Int64(r.MaxTimestampMs)
	w.Int64(r.EventTimestampMs)
	writeEpochs(w, r.SegmentLeaderEpochs)
	w.Int32(r.SegmentSizeInBytes)
	w.Bytes("customMetadata", r.CustomMetadata, true, true)
	w.Int8(int8(r.RemoteLogSegmentState))
	n := uint32(0)
	if r.TxnIndexEmpty {
		n++
	}
	if r.BrokerLeaderEpoch != 0 {
		n++
	}
	w.Uvarint(n)
	if r.TxnIndexEmpty {
		w.Uvarint(tagTxnIndexEmpty)
		w.Uvarint(1)
		w.bool(true)
	}
	if r.BrokerLeaderEpoch != 0 {
		w.Uvarint(tagBrokerLeaderEpoch)
		w.Uvarint(4)
		w.Int32(r.BrokerLeaderEpoch)
	}
}

func writeUpdate(w *writer, r *RemoteLogSegmentMetadataUpdateRecord) {
	checkSegmentState(w, r.RemoteLogSegmentState)
	writeSegmentID(w, r.RemoteLogSegmentID)
	w.Int32(r.BrokerID)
	w.Int64(r.EventTimestampMs)
	w.Bytes("customMetadata", r.CustomMetadata, true, true)
	w.Int8(int8(r.RemoteLogSegmentState))
	w.NoTaggedFields()
}

func writeDelete(w *writer, r *RemotePartitionDeleteMetadataRecord) {
	if !r.RemotePartitionDeleteState.Valid() {
		w.Fail("remotePartitionDeleteState", "state %d is not one Kafka knows (0-2)", r.RemotePartitionDeleteState)
	}
	writeTopicIdPartition(w, "topicIdPartition", r.TopicIdPartition)
	w.Int32(r.BrokerID)
	w.Int64(r.EventTimestampMs)
	w.Int8(int8(r.RemotePartitionDeleteState))
	w.NoTaggedFields()
}

func writeSnapshot(w *writer, r *RemoteLogSegmentMetadataSnapshotRecord) {
	checkSegmentState(w, r.RemoteLogSegmentState)
	w.uuid(r.SegmentID)
	w.Int64(r.StartOffset)
	w.Int64(r.EndOffset)
	w.Int32(r.BrokerID)
	w.Int64(r.MaxTimestampMs)
	w.Int64(r.EventTimestampMs)
	writeEpochs(w, r.SegmentLeaderEpochs)
	w.Int32(r.SegmentSizeInBytes)
	w.Bytes("customMetadata", r.CustomMetadata, true, true)
	w.Int8(int8(r.RemoteLogSegmentState))
	if r.TxnIndexEmpty {
		w.Uvarint(1)
		w.Uvarint(tagTxnIndexEmpty)
		w.Uvarint(1)
		w.bool(true)
		return
	}
	w.NoTaggedFields()
}

// ParseValue decodes a __remote_log_metadata record value: the frame
// (frame version 1, apiKey, version) and the record it names, returned as
// a value of one of the four record types. It reads what Kafka 4.4.0's
// RemoteLogMetadataSerde reads and fails where it fails:
//
//   - a frame version other than 1, or a version the record's schema does
//     not have (0, and 1 for apiKey 0): [ErrUnsupportedVersion];
//   - an apiKey other than 0–3: [ErrUnknownAPIKey];
//   - bytes left after the record;
//   - a state id Kafka does not know; a segment record with a negative
//     start offset, an end offset below it or no leader epochs; a snapshot
//     record with no leader epochs (Kafka's transforms refuse to build
//     such records, and its metadata consumer stops on them).
//
// Unknown tagged fields, at the top level and in every nested structure,
// are skipped by their size; a known tag of the wrong size fails. Every
// error is a [*DecodeError] matching [ErrCorrupt]. A nil or empty value
// fails too: Kafka 4.4.0 never writes a null value to the topic.
func ParseValue(b []byte) (Record, error) {
	rec, _, err := parseValue(b)
	return rec, err
}

// parseValue also returns the record's version.
func parseValue(b []byte) (Record, int16, error) {
	r := newReader(b, "RemoteLogMetadata")
	frame := r.Uvarint("frameVersion")
	if r.OK() && frame != FrameVersion {
		r.FailAt(0, "frameVersion", "frame version %d is not one Kafka reads (only %d)", frame, FrameVersion)
		r.Err.UnsupportedVersion = true
	}
	keyAt := r.Pos
	key := r.Uvarint("apiKey")
	if r.OK() && key > uint32(APIKeyRemoteLogSegmentMetadataSnapshotRecord) {
		r.FailAt(keyAt, "apiKey", "apiKey %d is not a record type Kafka knows (0-3)", key)
		r.unknownKey = true
	}
	if !r.OK() {
		return nil, -1, r.error()
	}
	apiKey := int16(key)
	r.Name = recordName(apiKey)
	versionAt := r.Pos
	v := r.Uvarint("version")
	if r.OK() && v > uint32(maxVersion(apiKey)) {
		r.FailAt(versionAt, "version", "version %d is not one Kafka reads (0-%d)", v, maxVersion(apiKey))
		r.Err.UnsupportedVersion = true
	}
	if !r.OK() {
		return nil, -1, r.error()
	}
	version := int16(v)
	r.Ver = int(version)
	var rec Record
	switch apiKey {
	case APIKeyRemoteLogSegmentMetadataRecord:
		rec = readSegment(&r, version)
	case APIKeyRemoteLogSegmentMetadataUpdateRecord:
		rec = readUpdate(&r)
	case APIKeyRemotePartitionDeleteMetadataRecord:
		rec = readDelete(&r)
	case APIKeyRemoteLogSegmentMetadataSnapshotRecord:
		rec = readSnapshot(&r)
	}
	if r.OK() && r.Remaining() > 0 {
		r.FailAt(r.Pos, "", "%d bytes after the record", r.Remaining())
	}
	if !r.OK() {
		return nil, version, r.error()
	}
	return rec, version, nil
}

func readTopicIdPartition(r *reader, field string) TopicIdPartition {
	var tp TopicIdPartition
	tp.Name = r.String(field+".name", true)
	tp.ID = r.uuid(field + ".id")
	tp.Partition = r.Int32(field + ".partition")
	r.TaggedFields(nil)
	return tp
}

func readSegmentID(r *reader) RemoteLogSegmentID {
	var id RemoteLogSegmentID
	id.TopicIdPartition = readTopicIdPartition(r, "remoteLogSegmentId.topicIdPartition")
	id.ID = r.uuid("remoteLogSegmentId.id")
	r.TaggedFields(nil)
	return id
}

// readEpochs reads a non-empty SegmentLeaderEpochs array.
func readEpochs(r *reader) []SegmentLeaderEpoch {
	at := r.Pos
	n := r.ArrayLen("segmentLeaderEpochs", true, false, segmentLeaderEpochMinLen)
	if !r.OK() {
		return nil
	}
	if n == 0 {
		r.FailAt(at, "segmentLeaderEpochs", "empty; Kafka needs at least one leader epoch per segment")
		return nil
	}
	epochs := make([]SegmentLeaderEpoch, n)
	r.Arr = "segmentLeaderEpochs"
	for i := range epochs {
		r.Idx = i
		epochs[i].LeaderEpoch = r.Int32("leaderEpoch")
		epochs[i].Offset = r.Int64("offset")
		r.TaggedFields(nil)
		if !r.OK() {
			break
		}
	}
	r.Arr = ""
	return epochs
}

func readSegmentState(r *reader) RemoteLogSegmentState {
	at := r.Pos
	s := RemoteLogSegmentState(r.Int8("remoteLogSegmentState"))
	if r.OK() && !s.Valid() {
		r.FailAt(at, "remoteLogSegmentState", "state %d is not one Kafka knows (0-3)", s)
	}
	return s
}

// readTags returns a tagged-field reader that sets *txnIndexEmpty from tag
// 0 and, when brokerLeaderEpoch is not nil, *brokerLeaderEpoch from tag 1;
// other tags are skipped.
func readTags(r *reader, txnIndexEmpty *bool, brokerLeaderEpoch *int32) func(tag uint32, at int, data []byte) {
	return func(tag uint32, at int, data []byte) {
		switch {
		case tag == tagTxnIndexEmpty && txnIndexEmpty != nil:
			if len(data) != 1 {
				r.FailAt(at, "txnIndexEmpty", "tagged field %d has %d bytes, not 1", tag, len(data))
				return
			}
			*txnIndexEmpty = data[0] != 0
		case tag == tagBrokerLeaderEpoch && brokerLeaderEpoch != nil:
			if len(data) != 4 {
				r.FailAt(at, "brokerLeaderEpoch", "tagged field %d has %d bytes, not 4", tag, len(data))
				return
			}
			sub := newReader(data, "")
			*brokerLeaderEpoch = sub.Int32("brokerLeaderEpoch")
		}
	}
}

func readSegment(r *reader, version int16) RemoteLogSegmentMetadataRecord {
	var s RemoteLogSegmentMetadataRecord
	s.RemoteLogSegmentID = readSegmentID(r)
	startAt := r.Pos
	s.StartOffset = r.Int64("startOffset")
	if r.OK() && s.StartOffset < 0 {
		r.FailAt(startAt, "startOffset", "%d is negative", s.StartOffset)
	}
	endAt := r.Pos
	s.EndOffset = r.Int64("endOffset")
	if r.OK() && s.EndOffset < s.StartOffset {
		r.FailAt(endAt, "endOffset", "%d is below startOffset %d", s.EndOffset, s.StartOffset)
	}
	s.BrokerID = r.Int32("brokerId")
	s.MaxTimestampMs = r.Int64("maxTimestampMs")
	s.EventTimestampMs = r.Int64("eventTimestampMs")
	s.SegmentLeaderEpochs = readEpochs(r)
	s.SegmentSizeInBytes = r.Int32("segmentSizeInBytes")
	s.CustomMetadata = r.Bytes("customMetadata", true, true)
	s.RemoteLogSegmentState = readSegmentState(r)
	var ble *int32
	if version >= 1 {
		ble = &s.BrokerLeaderEpoch
	}
	r.TaggedFields(readTags(r, &s.TxnIndexEmpty, ble))
	return s
}

func readUpdate(r *reader) RemoteLogSegmentMetadataUpdateRecord {
	var u RemoteLogSegmentMetadataUpdateRecord
	u.RemoteLogSegmentID = readSegmentID(r)
	u.BrokerID = r.Int32("brokerId")
	u.EventTimestampMs = r.Int64("eventTimestampMs")
	u.CustomMetadata = r.Bytes("customMetadata", true, true)
	u.RemoteLogSegmentState = readSegmentState(r)
	r.TaggedFields(nil)
	return u
}

func readDelete(r *reader) RemotePartitionDeleteMetadataRecord {
	var d RemotePartitionDeleteMetadataRecord
	d.TopicIdPartition = readTopicIdPartition(r, "topicIdPartition")
	d.BrokerID = r.Int32("brokerId")
	d.EventTimestampMs = r.Int64("eventTimestampMs")
	at := r.Pos
	d.RemotePartitionDeleteState = RemotePartitionDeleteState(r.Int8("remotePartitionDeleteState"))
	if r.OK() && !d.RemotePartitionDeleteState.Valid() {
		r.FailAt(at, "remotePartitionDeleteState", "state %d is not one Kafka knows (0-2)", d.RemotePartitionDeleteState)
	}
	r.TaggedFields(nil)
	return d
}

func readSnapshot(r *reader) RemoteLogSegmentMetadataSnapshotRecord {
	var s RemoteLogSegmentMetadataSnapshotRecord
	s.SegmentID = r.uuid("segmentId")
	s.StartOffset = r.Int64("startOffset")
	s.EndOffset = r.Int64("endOffset")
	s.BrokerID = r.Int32("brokerId")
	s.MaxTimestampMs = r.Int64("maxTimestampMs")
	s.EventTimestampMs = r.Int64("eventTimestampMs")
	s.SegmentLeaderEpochs = readEpochs(r)
	s.SegmentSizeInBytes = r.Int32("segmentSizeInBytes")
	s.CustomMetadata = r.Bytes("customMetadata", true, true)
	s.RemoteLogSegmentState = readSegmentState(r)
	r.TaggedFields(readTags(r, &s.TxnIndexEmpty, nil))
	return s
}
