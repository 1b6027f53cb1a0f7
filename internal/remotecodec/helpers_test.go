package remotecodec

import (
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
)

// readGolden returns the bytes of testdata/golden/name.
func readGolden(t testing.TB, name string) []byte { return golden.Read(t, name) }

// h decodes inline hex with spaces.
func h(s string) []byte { return golden.Hex(s) }

// uuid decodes 32 hex digits.
func uuid(s string) [16]byte {
	var u [16]byte
	copy(u[:], h(s))
	return u
}

// requireDecodeError checks that err is a *DecodeError matching ErrCorrupt
// and returns it.
func requireDecodeError(t testing.TB, err error) *DecodeError {
	t.Helper()
	return golden.RequireError[*DecodeError](t, err, ErrCorrupt)
}

// The records of the golden files, as internal/testkit/kafkacheck's
// RemoteMetaDump.java builds them for Kafka to serialize.
var (
	ordersTopic = TopicIdPartition{Name: "orders", ID: uuid("5a4f1e2d3c4b5a6978879605a4b3c2d1"), Partition: 3}
	tTopic      = TopicIdPartition{Name: "t", ID: uuid("7fffffffffffffffffffffffffffffff"), Partition: 0}
	segment     = RemoteLogSegmentID{TopicIdPartition: ordersTopic, ID: uuid("01020304050607088a9bacbdcedfe0f1")}
	segment2    = RemoteLogSegmentID{TopicIdPartition: tTopic, ID: uuid("fedcba98765432100011223344556677")}
	custom      = []byte("bucket/orders-3/1200")
)

// goldenRecords returns the records Kafka serialized into the golden file
// of each name.
func goldenRecords() map[string]Record {
	return map[string]Record{
		"segment-copy-started":    segmentCopyStarted(),
		"segment-txn-index-empty": segmentTxnIndexEmpty(),
		"segment-empty-custom": RemoteLogSegmentMetadataRecord{
			RemoteLogSegmentID: segment2, MaxTimestampMs: -1,
			SegmentLeaderEpochs: []SegmentLeaderEpoch{{LeaderEpoch: 5, Offset: 0}},
			CustomMetadata:      []byte{}, RemoteLogSegmentState: CopySegmentStarted,
		},
		"update-copy-finished": RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: segment, BrokerID: 1,
			EventTimestampMs: 1700000009000, CustomMetadata: custom, RemoteLogSegmentState: CopySegmentFinished},
		"update-delete-started": RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: segment, BrokerID: 2,
			EventTimestampMs: 1700000100000, RemoteLogSegmentState: DeleteSegmentStarted},
		"update-delete-finished": RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: segment, BrokerID: 2,
			EventTimestampMs: 1700000101000, CustomMetadata: []byte{}, RemoteLogSegmentState: DeleteSegmentFinished},
		"delete-partition-marked": RemotePartitionDeleteMetadataRecord{TopicIdPartition: ordersTopic, BrokerID: 3000,
			EventTimestampMs: 1700000200000, RemotePartitionDeleteState: DeletePartitionMarked},
		"delete-partition-started": RemotePartitionDeleteMetadataRecord{TopicIdPartition: ordersTopic, BrokerID: 1,
			EventTimestampMs: 1700000201000, RemotePartitionDeleteState: DeletePartitionStarted},
		"delete-partition-finished": RemotePartitionDeleteMetadataRecord{TopicIdPartition: tTopic, BrokerID: 1,
			EventTimestampMs: 1700000202000, RemotePartitionDeleteState: DeletePartitionFinished},
		"snapshot": RemoteLogSegmentMetadataSnapshotRecord{SegmentID: segment.ID, StartOffset: 1200, EndOffset: 4799,
			BrokerID: 1, MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000009000,
			SegmentLeaderEpochs: []SegmentLeaderEpoch{{0, 1200}, {2, 3000}}, SegmentSizeInBytes: 1048576,
			CustomMetadata: custom, RemoteLogSegmentState: CopySegmentFinished, TxnIndexEmpty: true},
		"snapshot-no-custom": RemoteLogSegmentMetadataSnapshotRecord{SegmentID: segment2.ID, EndOffset: 99,
			BrokerID: 2, MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000300000,
			SegmentLeaderEpochs: []SegmentLeaderEpoch{{7, 0}}, SegmentSizeInBytes: 4096,
			RemoteLogSegmentState: DeleteSegmentStarted},
		// Decoded only: Kafka wrote unknown tags this package skips.
		"segment-unknown-tags": func() Record {
			s := segmentCopyStarted()
			s.TxnIndexEmpty = true
			return s
		}(),
		// Hand-written from the development branch's schema: version 1.
		"segment-v1": func() Record {
			s := segmentCopyStarted()
			s.BrokerLeaderEpoch = 7
			return s
		}(),
	}
}

func segmentCopyStarted() RemoteLogSegmentMetadataRecord {
	return RemoteLogSegmentMetadataRecord{
		RemoteLogSegmentID: segment, StartOffset: 1200, EndOffset: 4799, BrokerID: 1,
		MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000005000,
		SegmentLeaderEpochs: []SegmentLeaderEpoch{{LeaderEpoch: 0, Offset: 1200}, {LeaderEpoch: 2, Offset: 3000}},
		SegmentSizeInBytes:  1048576, RemoteLogSegmentState: CopySegmentStarted,
	}
}

func segmentTxnIndexEmpty() RemoteLogSegmentMetadataRecord {
	s := segmentCopyStarted()
	s.CustomMetadata = custom
	s.RemoteLogSegmentState = CopySegmentFinished
	s.TxnIndexEmpty = true
	return s
}
