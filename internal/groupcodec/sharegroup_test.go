package groupcodec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shareGroupRecords are the share-group records of testdata/kafka (built
// by ShareRecords.java in internal/testkit/kafkacheck: the lists must stay
// alike); a nil value is a tombstone.
func shareGroupRecords() map[string]struct {
	key   ShareGroupKey
	value any
} {
	const group = "orders-app"
	type rec = struct {
		key   ShareGroupKey
		value any
	}
	one := [16]byte{15: 1} // Kafka's Uuid.ONE_UUID
	return map[string]rec{
		"share-group-member": {ShareGroupKey{Type: TypeShareGroupMemberMetadata, Group: group, Member: "m1"},
			ShareGroupMemberMetadataValue{RackID: strPtr("rack-a"), ClientID: "c1", ClientHost: "/10.0.0.1",
				SubscribedTopicNames: []string{"orders", "payments"}}},
		"share-group-member-no-rack": {ShareGroupKey{Type: TypeShareGroupMemberMetadata, Group: group, Member: "m2"},
			ShareGroupMemberMetadataValue{ClientID: "c2", ClientHost: "/10.0.0.2"}},
		"share-group-metadata": {ShareGroupKey{Type: TypeShareGroupMetadata, Group: group},
			ShareGroupMetadataValue{Epoch: 12, MetadataHash: 0x0123456789abcdef}},
		"share-group-metadata-tombstone": {ShareGroupKey{Type: TypeShareGroupMetadata, Group: group}, nil},
		"share-group-target-assignment-metadata": {ShareGroupKey{Type: TypeShareGroupTargetAssignmentMetadata, Group: group},
			ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 12, AssignmentTimestamp: 1700000000000}},
		"share-group-target-assignment-member": {ShareGroupKey{Type: TypeShareGroupTargetAssignmentMember, Group: group, Member: "m1"},
			ShareGroupTargetAssignmentMemberValue{TopicPartitions: []ConsumerGroupTopicPartitions{
				{TopicID: cgOrders, Partitions: []int32{0, 2}}, {TopicID: cgPayments, Partitions: []int32{1}}}}},
		"share-group-current-assignment": {ShareGroupKey{Type: TypeShareGroupCurrentMemberAssignment, Group: group, Member: "m1"},
			ShareGroupCurrentMemberAssignmentValue{MemberEpoch: 12, PreviousMemberEpoch: 11, State: 0,
				AssignedPartitions: []ConsumerGroupTopicPartitions{{TopicID: cgOrders, Partitions: []int32{0, 2}}}}},
		"share-group-state-partition-metadata": {ShareGroupKey{Type: TypeShareGroupStatePartitionMetadata, Group: group},
			ShareGroupStatePartitionMetadataValue{
				InitializingTopics: []ShareGroupTopicPartitionsInfo{{TopicID: cgPayments, TopicName: "payments", Partitions: []int32{0, 1}}},
				InitializedTopics:  []ShareGroupTopicPartitionsInfo{{TopicID: cgOrders, TopicName: "orders", Partitions: []int32{0, 1, 2, 3}}},
				DeletingTopics:     []ShareGroupTopicInfo{{TopicID: one, TopicName: "old"}}}},
		"share-group-state-partition-metadata-empty": {ShareGroupKey{Type: TypeShareGroupStatePartitionMetadata, Group: group},
			ShareGroupStatePartitionMetadataValue{}},
	}
}

// TestShareGroupRecordsAsKafkaWritesThem: the encoders write the bytes
// Kafka 4.4.0 writes for each share-group record of testdata/kafka, and
// the decoders (the typed ones and ParseKey/ParseValue) read those bytes
// back to the record.
func TestShareGroupRecordsAsKafkaWritesThem(t *testing.T) {
	recs := shareGroupRecords()
	names, err := filepath.Glob(filepath.Join("testdata", "kafka", "share-group-*.hex"))
	require.NoError(t, err)
	require.Len(t, names, len(recs), "one file per record")
	for name, rec := range recs {
		t.Run(name, func(t *testing.T) {
			kafka := readKafkaRecord(t, name)
			key, err := AppendShareGroupKey(nil, rec.key)
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(kafka.key), hex.EncodeToString(key))
			k, err := ParseShareGroupKey(kafka.key)
			require.NoError(t, err)
			require.Equal(t, rec.key, k)
			gk, err := ParseKey(kafka.key)
			require.NoError(t, err)
			require.Equal(t, Key{Type: rec.key.Type, ShareGroup: rec.key}, gk)
			require.True(t, gk.Type.Decoded())

			gv, err := ParseValue(gk.Type, kafka.value)
			require.NoError(t, err)
			if rec.value == nil {
				require.Nil(t, kafka.value)
				require.Equal(t, Value{Type: rec.key.Type, Tombstone: true, Version: -1}, gv)
				return
			}
			value, err := AppendShareGroupValue(nil, rec.value)
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(kafka.value), hex.EncodeToString(value))
			v, err := ParseShareGroupValue(rec.key.Type, kafka.value)
			require.NoError(t, err)
			require.Equal(t, rec.value, v)
			require.Equal(t, Value{Type: rec.key.Type, Version: 0, ShareGroup: rec.value}, gv)
		})
	}
}

func TestShareGroupTypeNames(t *testing.T) {
	for typ, name := range map[RecordType]string{
		10: "ShareGroupMemberMetadata", 11: "ShareGroupMetadata", 12: "ShareGroupTargetAssignmentMetadata",
		13: "ShareGroupTargetAssignmentMember", 14: "ShareGroupCurrentMemberAssignment", 15: "ShareGroupStatePartitionMetadata",
	} {
		require.Equal(t, name, typ.String())
		require.True(t, typ.Decoded())
	}
}

// TestShareGroupEncoderRefuses: what Kafka's schemas cannot hold fails
// with ErrInvalid and appends nothing.
func TestShareGroupEncoderRefuses(t *testing.T) {
	long := strings.Repeat("x", 32768)
	prefix := []byte("keep")
	for name, enc := range map[string]func(dst []byte) ([]byte, error){
		"consumer group type": func(d []byte) ([]byte, error) {
			return AppendShareGroupKey(d, ShareGroupKey{Type: TypeConsumerGroupMetadata, Group: "g"})
		},
		"type 9": func(d []byte) ([]byte, error) { return AppendShareGroupKey(d, ShareGroupKey{Type: 9, Group: "g"}) },
		"member id on the group's epoch": func(d []byte) ([]byte, error) {
			return AppendShareGroupKey(d, ShareGroupKey{Type: TypeShareGroupMetadata, Group: "g", Member: "m"})
		},
		"member id on the state partitions": func(d []byte) ([]byte, error) {
			return AppendShareGroupKey(d, ShareGroupKey{Type: TypeShareGroupStatePartitionMetadata, Group: "g", Member: "m"})
		},
		"long member id": func(d []byte) ([]byte, error) {
			return AppendShareGroupKey(d, ShareGroupKey{Type: TypeShareGroupMemberMetadata, Group: "g", Member: long})
		},
		"pointer value": func(d []byte) ([]byte, error) { return AppendShareGroupValue(d, &ShareGroupMetadataValue{}) },
		"consumer group value": func(d []byte) ([]byte, error) {
			return AppendShareGroupValue(d, ConsumerGroupMetadataValue{})
		},
		"epochs in a target assignment": func(d []byte) ([]byte, error) {
			return AppendShareGroupValue(d, ShareGroupTargetAssignmentMemberValue{TopicPartitions: []ConsumerGroupTopicPartitions{
				{Partitions: []int32{0}, AssignmentEpochs: []int32{1}}}})
		},
		"epochs in a current assignment": func(d []byte) ([]byte, error) {
			return AppendShareGroupValue(d, ShareGroupCurrentMemberAssignmentValue{AssignedPartitions: []ConsumerGroupTopicPartitions{
				{Partitions: []int32{0}, AssignmentEpochs: []int32{1}}}})
		},
		"long rack": func(d []byte) ([]byte, error) {
			return AppendShareGroupValue(d, ShareGroupMemberMetadataValue{RackID: &long})
		},
		"long deleting topic": func(d []byte) ([]byte, error) {
			return AppendShareGroupValue(d, ShareGroupStatePartitionMetadataValue{DeletingTopics: []ShareGroupTopicInfo{{TopicName: long}}})
		},
		"long initialized topic": func(d []byte) ([]byte, error) {
			return AppendShareGroupValue(d, ShareGroupStatePartitionMetadataValue{InitializedTopics: []ShareGroupTopicPartitionsInfo{{TopicName: long}}})
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

// TestShareGroupDecoderRefuses: malformed keys and values fail with a
// *DecodeError matching ErrCorrupt (and ErrUnsupportedVersion for a
// version Kafka does not read), never a panic or a made-up value.
func TestShareGroupDecoderRefuses(t *testing.T) {
	member := readKafkaRecord(t, "share-group-member")
	meta := readKafkaRecord(t, "share-group-metadata")
	states := readKafkaRecord(t, "share-group-state-partition-metadata")
	target := readKafkaRecord(t, "share-group-target-assignment-metadata")
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
		"key of a consumer group type": {b: []byte{0, 3, 0, 1, 'g'}, key: true},
		"key of type 9":                {b: []byte{0, 9, 0, 1, 'g'}, key: true},
		"key cut in its member":        {b: member.key[:len(member.key)-1], key: true},
		"key without a member":         {b: member.key[:len(member.key)-4], key: true},
		"key without a group":          {b: []byte{0, 11}, key: true},
		"value version 1":              {typ: TypeShareGroupMetadata, b: withVersion(meta.value, 1), unsupported: true},
		"value version -1":             {typ: TypeShareGroupMetadata, b: append([]byte{0xff, 0xff}, meta.value[2:]...), unsupported: true},
		"value of a consumer type":     {typ: TypeConsumerGroupMetadata, b: meta.value},
		"metadata hash cut":            {typ: TypeShareGroupMetadata, b: meta.value[:10]},
		"empty value":                  {typ: TypeShareGroupMetadata, b: []byte{}},
		"assignment timestamp of 4 bytes": {typ: TypeShareGroupTargetAssignmentMetadata,
			b: []byte{0, 0, 0, 0, 0, 1, 1, 0, 4, 0, 0, 0, 1}},
		"assignment timestamp past the end": {typ: TypeShareGroupTargetAssignmentMetadata, b: target.value[:len(target.value)-2]},
		"null client id": {typ: TypeShareGroupMemberMetadata,
			// rackId "rack-a", then clientId null.
			b: append(bytes.Clone(member.value[:9]), 0)},
		"states cut":                  {typ: TypeShareGroupStatePartitionMetadata, b: states.value[:len(states.value)-5]},
		"deleting count past the end": {typ: TypeShareGroupStatePartitionMetadata, b: []byte{0, 0, 1, 1, 0x7f, 0}},
		"topic count past the end":    {typ: TypeShareGroupCurrentMemberAssignment, b: []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x7f, 0}},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if c.key {
				_, err = ParseShareGroupKey(c.b)
			} else {
				var v any
				v, err = ParseShareGroupValue(c.typ, c.b)
				require.Nil(t, v)
			}
			requireDecodeError(t, err)
			require.Equal(t, c.unsupported, errors.Is(err, ErrUnsupportedVersion), "%v", err)
		})
	}
}

// TestShareGroupUnknownTagsSkipped: tagged fields the schema does not know
// are skipped by size, in the value and in each topic, as Kafka skips them.
func TestShareGroupUnknownTagsSkipped(t *testing.T) {
	v, err := ParseShareGroupValue(TypeShareGroupMetadata,
		[]byte{0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 9, 2, 5, 1, 0xaa, 0, 0})
	require.NoError(t, err)
	require.Equal(t, ShareGroupMetadataValue{Epoch: 7, MetadataHash: 9}, v)
	// A current assignment whose topic carries tag 0 (the consumer
	// groups' assignmentEpochs, unknown here).
	b := []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2}
	b = append(b, cgOrders[:]...)
	b = append(b, 2, 0, 0, 0, 3, 1, 0, 2, 2, 0, 0)
	v, err = ParseShareGroupValue(TypeShareGroupCurrentMemberAssignment, b)
	require.NoError(t, err)
	require.Equal(t, ShareGroupCurrentMemberAssignmentValue{MemberEpoch: 1,
		AssignedPartitions: []ConsumerGroupTopicPartitions{{TopicID: cgOrders, Partitions: []int32{3}}}}, v)
}

// FuzzShareGroupValue: for every share group type, what decodes re-encodes
// to a value that decodes the same, canonically; what fails is a
// *DecodeError.
func FuzzShareGroupValue(f *testing.F) {
	for name := range shareGroupRecords() {
		r := readKafkaRecord(f, name)
		if r.value != nil {
			f.Add(r.key[1], r.value)
		}
	}
	f.Fuzz(func(t *testing.T, typ byte, b []byte) {
		v, err := ParseShareGroupValue(RecordType(typ), b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		again, err := AppendShareGroupValue(nil, v)
		require.NoError(t, err)
		v2, err := ParseShareGroupValue(RecordType(typ), again)
		require.NoError(t, err)
		require.Equal(t, v, v2)
		again2, err := AppendShareGroupValue(nil, v2)
		require.NoError(t, err)
		require.Equal(t, again, again2, "the encoding is canonical")
	})
}

// FuzzShareGroupKey: what decodes re-encodes to the bytes read; what
// fails is a *DecodeError.
func FuzzShareGroupKey(f *testing.F) {
	for name := range shareGroupRecords() {
		f.Add(readKafkaRecord(f, name).key)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseShareGroupKey(b)
		if err != nil {
			requireDecodeError(t, err)
			return
		}
		again, err := AppendShareGroupKey(nil, k)
		require.NoError(t, err)
		require.Equal(t, b[:len(again)], again)
	})
}
