package groupcodec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/internal/testkit/golden"
	"github.com/stretchr/testify/require"
)

// kafkaRecord is a record of testdata/kafka: the bytes Kafka 4.4.0's
// group coordinator serializes for one of the records below.
type kafkaRecord struct {
	key, value []byte // value nil for a tombstone
}

// readKafkaRecord reads testdata/kafka/<name>.hex.
func readKafkaRecord(t testing.TB, name string) kafkaRecord {
	t.Helper()
	key, value := golden.ReadRecord(t, name)
	return kafkaRecord{key, value}
}

var (
	cgOrders   = [16]byte{0xb1, 0xc4, 0x0e, 0x5a, 0x7c, 0x2f, 0x4d, 0x3e, 0x9a, 0x1b, 0x6c, 0x8d, 0x2e, 0x4f, 0x70, 0x81}
	cgPayments = [16]byte{0x5a, 0x4f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0x05, 0xa4, 0xb3, 0xc2, 0xd1}
)

func strPtr(s string) *string { return &s }

// consumerGroupRecords are the records of testdata/kafka (built by
// ConsumerGroupRecords.java in internal/testkit/kafkacheck: the lists must
// stay alike); a nil value is a tombstone.
func consumerGroupRecords() map[string]struct {
	key   ConsumerGroupKey
	value any
} {
	const group = "orders-app"
	type rec = struct {
		key   ConsumerGroupKey
		value any
	}
	return map[string]rec{
		"consumer-group-metadata": {ConsumerGroupKey{Type: TypeConsumerGroupMetadata, Group: group},
			ConsumerGroupMetadataValue{Epoch: 12, MetadataHash: 0x0123456789abcdef}},
		"consumer-group-metadata-no-hash": {ConsumerGroupKey{Type: TypeConsumerGroupMetadata, Group: group},
			ConsumerGroupMetadataValue{}},
		"consumer-group-metadata-tombstone": {ConsumerGroupKey{Type: TypeConsumerGroupMetadata, Group: group}, nil},
		"consumer-group-partition-metadata": {ConsumerGroupKey{Type: TypeConsumerGroupPartitionMetadata, Group: group},
			ConsumerGroupPartitionMetadataValue{Topics: []ConsumerGroupTopicMetadata{{
				TopicID: cgOrders, TopicName: "orders", NumPartitions: 4,
				PartitionMetadata: []ConsumerGroupPartitionRacks{{Partition: 0, Racks: []string{"rack-a", "rack-b"}}, {Partition: 1}},
			}}}},
		"consumer-group-member": {ConsumerGroupKey{Type: TypeConsumerGroupMemberMetadata, Group: group, Member: "m1"},
			ConsumerGroupMemberMetadataValue{InstanceID: strPtr("i1"), RackID: strPtr("rack-a"), ClientID: "c1", ClientHost: "/10.0.0.1",
				SubscribedTopicNames: []string{"orders", "payments"}, RebalanceTimeoutMs: 300000, ServerAssignor: strPtr("uniform")}},
		"consumer-group-member-classic": {ConsumerGroupKey{Type: TypeConsumerGroupMemberMetadata, Group: group, Member: "m2"},
			ConsumerGroupMemberMetadataValue{ClientID: "c2", ClientHost: "/10.0.0.2", SubscribedTopicRegex: strPtr("orders.*"),
				RebalanceTimeoutMs: 45000, Classic: &ClassicMemberMetadata{SessionTimeoutMs: 45000, SupportedProtocols: []ClassicProtocol{
					{Name: "range", Metadata: []byte{0, 3, 1, 2}}, {Name: "cooperative-sticky", Metadata: []byte{}}}}}},
		"consumer-group-target-assignment-metadata": {ConsumerGroupKey{Type: TypeConsumerGroupTargetAssignmentMetadata, Group: group},
			ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 12, AssignmentTimestamp: 1700000000000}},
		"consumer-group-target-assignment-member": {ConsumerGroupKey{Type: TypeConsumerGroupTargetAssignmentMember, Group: group, Member: "m1"},
			ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []ConsumerGroupTopicPartitions{
				{TopicID: cgOrders, Partitions: []int32{0, 2}}, {TopicID: cgPayments, Partitions: []int32{1}}}}},
		"consumer-group-current-assignment": {ConsumerGroupKey{Type: TypeConsumerGroupCurrentMemberAssignment, Group: group, Member: "m1"},
			ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: 12, PreviousMemberEpoch: 11, State: 1,
				AssignedPartitions:          []ConsumerGroupTopicPartitions{{TopicID: cgOrders, Partitions: []int32{0, 2}, AssignmentEpochs: []int32{11, 12}}},
				PartitionsPendingRevocation: []ConsumerGroupTopicPartitions{{TopicID: cgPayments, Partitions: []int32{1}}}}},
		"consumer-group-regular-expression": {ConsumerGroupKey{Type: TypeConsumerGroupRegularExpression, Group: group, RegularExpression: "orders.*"},
			ConsumerGroupRegularExpressionValue{Topics: []string{"orders", "orders-eu"}, Version: 42, Timestamp: 1700000000000}},
	}
}

// TestConsumerGroupRecordsAsKafkaWritesThem: the encoders write the bytes
// Kafka 4.4.0 writes for each record of testdata/kafka, and the decoders
// (the typed ones and ParseKey/ParseValue) read those bytes back to the
// record.
func TestConsumerGroupRecordsAsKafkaWritesThem(t *testing.T) {
	recs := consumerGroupRecords()
	names, err := filepath.Glob(filepath.Join("testdata", "kafka", "consumer-group-*.hex"))
	require.NoError(t, err)
	require.Len(t, names, len(recs), "one file per record")
	for name, rec := range recs {
		t.Run(name, func(t *testing.T) {
			kafka := readKafkaRecord(t, name)
			key, err := AppendConsumerGroupKey(nil, rec.key)
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(kafka.key), hex.EncodeToString(key))
			k, err := ParseConsumerGroupKey(kafka.key)
			require.NoError(t, err)
			require.Equal(t, rec.key, k)
			gk, err := ParseKey(kafka.key)
			require.NoError(t, err)
			require.Equal(t, Key{Type: rec.key.Type, ConsumerGroup: rec.key}, gk)
			require.True(t, gk.Type.Decoded())

			gv, err := ParseValue(gk.Type, kafka.value)
			require.NoError(t, err)
			if rec.value == nil {
				require.Nil(t, kafka.value)
				require.Equal(t, Value{Type: rec.key.Type, Tombstone: true, Version: -1}, gv)
				return
			}
			value, err := AppendConsumerGroupValue(nil, rec.value)
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(kafka.value), hex.EncodeToString(value))
			v, err := ParseConsumerGroupValue(rec.key.Type, kafka.value)
			require.NoError(t, err)
			require.Equal(t, rec.value, v)
			require.Equal(t, Value{Type: rec.key.Type, Version: 0, ConsumerGroup: rec.value}, gv)
		})
	}
}

func TestConsumerGroupTypeNames(t *testing.T) {
	for typ, name := range map[RecordType]string{
		3: "ConsumerGroupMetadata", 4: "ConsumerGroupPartitionMetadata", 5: "ConsumerGroupMemberMetadata",
		6: "ConsumerGroupTargetAssignmentMetadata", 7: "ConsumerGroupTargetAssignmentMember",
		8: "ConsumerGroupCurrentMemberAssignment", 16: "ConsumerGroupRegularExpression",
	} {
		require.Equal(t, name, typ.String())
		require.True(t, typ.Decoded())
	}
	for _, typ := range []RecordType{9, 17, 23} {
		require.False(t, typ.Decoded())
	}
}

// TestConsumerGroupEncoderRefuses: what Kafka's schemas cannot hold fails
// with ErrInvalid and appends nothing.
func TestConsumerGroupEncoderRefuses(t *testing.T) {
	long := strings.Repeat("x", 32768)
	prefix := []byte("keep")
	for name, enc := range map[string]func(dst []byte) ([]byte, error){
		"share group type": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupKey(d, ConsumerGroupKey{Type: 11, Group: "g"})
		},
		"member id on the group's epoch": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupKey(d, ConsumerGroupKey{Type: TypeConsumerGroupMetadata, Group: "g", Member: "m"})
		},
		"expression on a member's key": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupKey(d, ConsumerGroupKey{Type: TypeConsumerGroupMemberMetadata, Group: "g", Member: "m", RegularExpression: "x"})
		},
		"long group id": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupKey(d, ConsumerGroupKey{Type: TypeConsumerGroupMetadata, Group: long})
		},
		"pointer value": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, &ConsumerGroupMetadataValue{})
		},
		"another package's value": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, GroupMetadataValue{})
		},
		"epochs in a target assignment": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []ConsumerGroupTopicPartitions{
				{Partitions: []int32{0}, AssignmentEpochs: []int32{1}}}})
		},
		"an epoch short": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, ConsumerGroupCurrentMemberAssignmentValue{AssignedPartitions: []ConsumerGroupTopicPartitions{
				{Partitions: []int32{0, 1}, AssignmentEpochs: []int32{1}}}})
		},
		"long client id": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, ConsumerGroupMemberMetadataValue{ClientID: long})
		},
		"long protocol name": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, ConsumerGroupMemberMetadataValue{Classic: &ClassicMemberMetadata{
				SupportedProtocols: []ClassicProtocol{{Name: long}}}})
		},
		"long topic": func(d []byte) ([]byte, error) {
			return AppendConsumerGroupValue(d, ConsumerGroupRegularExpressionValue{Topics: []string{"a", long}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := enc(prefix)
			require.ErrorIs(t, err, ErrInvalid)
			require.False(t, errors.Is(err, ErrCorrupt))
			require.Equal(t, []byte("keep"), got)
		})
	}
}

// TestConsumerGroupDecoderRefuses: malformed keys and values fail with a
// *DecodeError matching ErrCorrupt (and ErrUnsupportedVersion for a
// version Kafka does not read), never a panic or a made-up value.
func TestConsumerGroupDecoderRefuses(t *testing.T) {
	member := readKafkaRecord(t, "consumer-group-member-classic")
	current := readKafkaRecord(t, "consumer-group-current-assignment")
	meta := readKafkaRecord(t, "consumer-group-metadata")
	withVersion := func(b []byte, v byte) []byte {
		c := bytes.Clone(b)
		c[1] = v
		return c
	}
	for name, c := range map[string]struct {
		typ         RecordType
		b           []byte
		key         bool
		unsupported bool
	}{
		"key of another type":   {b: []byte{0, 2, 0, 1, 'g'}, key: true},
		"key cut in its member": {b: readKafkaRecord(t, "consumer-group-member").key[:15], key: true},
		"key without a group":   {b: []byte{0, 3}, key: true},
		"value version 1":       {typ: TypeConsumerGroupMetadata, b: withVersion(meta.value, 1), unsupported: true},
		"value version -1":      {typ: TypeConsumerGroupMetadata, b: append([]byte{0xff, 0xff}, meta.value[2:]...), unsupported: true},
		"value of a share type": {typ: 11, b: meta.value},
		"metadata hash of 4 bytes": {typ: TypeConsumerGroupMetadata,
			b: []byte{0, 0, 0, 0, 0, 1, 1, 0, 4, 0, 0, 0, 1}},
		"value cut": {typ: TypeConsumerGroupMemberMetadata, b: member.value[:len(member.value)-3]},
		"classic member cut short": {typ: TypeConsumerGroupMemberMetadata,
			// The tagged field's size says one byte less than its data.
			b: bytes.Replace(member.value, []byte{0x01, 0x00, 0x28}, []byte{0x01, 0x00, 0x27}, 1)},
		"assignment epochs cut": {typ: TypeConsumerGroupCurrentMemberAssignment,
			b: bytes.Replace(current.value, []byte{0x01, 0x00, 0x09, 0x03}, []byte{0x01, 0x00, 0x09, 0x04}, 1)},
		"topic count past the end": {typ: TypeConsumerGroupTargetAssignmentMember, b: []byte{0, 0, 0x7f, 0}},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if c.key {
				_, err = ParseConsumerGroupKey(c.b)
			} else {
				var v any
				v, err = ParseConsumerGroupValue(c.typ, c.b)
				require.Nil(t, v)
			}
			requireDecodeError(t, err)
			require.Equal(t, c.unsupported, errors.Is(err, ErrUnsupportedVersion), "%v", err)
		})
	}
}

// FuzzConsumerGroupValue: for every consumer group type, what decodes
// re-encodes to a value that decodes the same; what fails is a
// *DecodeError.
func FuzzConsumerGroupValue(f *testing.F) {
	for name := range consumerGroupRecords() {
		r := readKafkaRecord(f, name)
		if r.value != nil {
			f.Add(r.key[1], r.value)
		}
	}
	f.Add(byte(8), []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0})
	f.Fuzz(func(t *testing.T, typ byte, b []byte) {
		v, err := ParseConsumerGroupValue(RecordType(typ), b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		again, err := AppendConsumerGroupValue(nil, v)
		require.NoError(t, err)
		v2, err := ParseConsumerGroupValue(RecordType(typ), again)
		require.NoError(t, err)
		require.Equal(t, v, v2)
		again2, err := AppendConsumerGroupValue(nil, v2)
		require.NoError(t, err)
		require.Equal(t, again, again2, "the encoding is canonical")
	})
}
