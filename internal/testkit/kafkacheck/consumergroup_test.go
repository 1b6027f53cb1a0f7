package kafkacheck

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/groupcodec"
)

var updateConsumerGroupGolden = flag.Bool("update-consumer-group-golden", false,
	"rewrite internal/groupcodec/testdata/kafka from Kafka's GroupCoordinatorRecordSerde")

// consumerGroupGolden is the text of internal/groupcodec/testdata/kafka's
// file for a record Kafka serialized.
func consumerGroupGolden(name, key, value string) string {
	return fmt.Sprintf("# %s: a __consumer_offsets record as Apache Kafka 4.4.0 serializes it\n"+
		"# (GroupCoordinatorRecordSerde; internal/testkit/kafkacheck TestConsumerGroupRecords,\n"+
		"# whose -update-consumer-group-golden rewrites it). Do not edit.\nkey %s\nvalue %s\n", name, key, value)
}

// TestConsumerGroupRecords makes Kafka 4.4.0's group coordinator record
// serde the judge of groupcodec's records of KIP-848 consumer groups, in
// one JVM (testdata/java/ConsumerGroupRecords.java): Kafka's bytes for its
// fixed records are internal/groupcodec/testdata/kafka's files (whose
// records groupcodec's own tests encode to the same bytes and decode),
// groupcodec decodes Kafka's bytes, and Kafka deserializes what groupcodec
// encodes and serializes it back to the same bytes, so that it read every
// field as groupcodec wrote it.
func TestConsumerGroupRecords(t *testing.T) {
	k := Get(t)
	dir := filepath.Join(moduleDir(), "..", "..", "groupcodec", "testdata", "kafka")

	// groupcodec's encodings of records beside the fixed ones: every type,
	// empty and null fields, several topics.
	rack := "r"
	ours := map[string][2][]byte{}
	add := func(name string, key groupcodec.ConsumerGroupKey, value any) {
		kb, err := groupcodec.AppendConsumerGroupKey(nil, key)
		require.NoError(t, err, name)
		var vb []byte
		if value != nil {
			vb, err = groupcodec.AppendConsumerGroupValue(nil, value)
			require.NoError(t, err, name)
		}
		ours[name] = [2][]byte{kb, vb}
	}
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	add("epoch-min", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupMetadata, Group: ""},
		groupcodec.ConsumerGroupMetadataValue{Epoch: -1, MetadataHash: -1})
	add("member-empty", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupMemberMetadata, Group: "g", Member: ""},
		groupcodec.ConsumerGroupMemberMetadataValue{RackID: &rack, RebalanceTimeoutMs: -1,
			Classic: &groupcodec.ClassicMemberMetadata{SessionTimeoutMs: 10}})
	add("member-tombstone", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupMemberMetadata, Group: "g", Member: "m"}, nil)
	add("target-none", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupTargetAssignmentMember, Group: "g", Member: "m"},
		groupcodec.ConsumerGroupTargetAssignmentMemberValue{})
	add("target-metadata-no-time", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupTargetAssignmentMetadata, Group: "g"},
		groupcodec.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 3})
	add("current-many", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupCurrentMemberAssignment, Group: "g", Member: "m"},
		groupcodec.ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: 7, PreviousMemberEpoch: 5, State: 2,
			AssignedPartitions: []groupcodec.ConsumerGroupTopicPartitions{
				{TopicID: id, Partitions: []int32{0, 1, 2}, AssignmentEpochs: []int32{5, 6, 7}},
				{TopicID: [16]byte{}, Partitions: []int32{9}}},
			PartitionsPendingRevocation: []groupcodec.ConsumerGroupTopicPartitions{{TopicID: id, Partitions: []int32{}}}})
	add("partition-metadata-empty", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupPartitionMetadata, Group: "g"},
		groupcodec.ConsumerGroupPartitionMetadataValue{})
	add("regex-none", groupcodec.ConsumerGroupKey{Type: groupcodec.TypeConsumerGroupRegularExpression, Group: "g", RegularExpression: "^x$"},
		groupcodec.ConsumerGroupRegularExpressionValue{Version: -1})

	hexOr := func(b []byte) string {
		if b == nil {
			return "-"
		}
		return hex.EncodeToString(b)
	}
	var args []string
	for name, kv := range ours {
		args = append(args, name+"="+hex.EncodeToString(kv[0])+":"+hexOr(kv[1]))
	}
	src := filepath.Join(moduleDir(), "testdata", "java", "ConsumerGroupRecords.java")
	stdout, stderr := k.runBoth(t, src, args...)
	for _, l := range scanLines(stderr) {
		require.True(t, strings.HasPrefix(l, "SLF4J: "), "ConsumerGroupRecords wrote to stderr: %s", l)
	}
	lines := scanLines(stdout)
	require.NotEmpty(t, lines)
	require.Equal(t, "ok", lines[len(lines)-1], "ConsumerGroupRecords finished:\n%s", tail(stdout))

	t.Run("kafka bytes", func(t *testing.T) {
		enc := Lines(lines, "enc")
		files, err := filepath.Glob(filepath.Join(dir, "consumer-group-*.hex"))
		require.NoError(t, err)
		if !*updateConsumerGroupGolden {
			require.Len(t, files, len(enc), "one file per record Kafka serialized")
		}
		for _, f := range enc {
			require.Len(t, f, 3)
			name, key, value := f[0], f[1], f[2]
			text := consumerGroupGolden(name, key, value)
			path := filepath.Join(dir, name+".hex")
			if *updateConsumerGroupGolden {
				require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
				continue
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update-consumer-group-golden to write it")
			require.Equal(t, text, string(raw), "%s is not what Kafka writes", path)

			// groupcodec reads Kafka's bytes.
			kb, err := hex.DecodeString(key)
			require.NoError(t, err)
			gk, err := groupcodec.ParseKey(kb)
			require.NoError(t, err, name)
			require.True(t, gk.Type.Decoded(), name)
			var vb []byte
			if value != "-" {
				vb, err = hex.DecodeString(value)
				require.NoError(t, err)
			}
			gv, err := groupcodec.ParseValue(gk.Type, vb)
			require.NoError(t, err, name)
			require.Equal(t, vb == nil, gv.Tombstone, name)
		}
	})
	t.Run("kafka reads groupcodec", func(t *testing.T) {
		dec := Lines(lines, "dec")
		require.Len(t, dec, len(ours))
		for _, f := range dec {
			require.GreaterOrEqual(t, len(f), 2)
			kv, ok := ours[f[0]]
			require.True(t, ok, f[0])
			require.Equal(t, "ok", f[1], "Kafka refused %s: %v", f[0], f)
			require.Len(t, f, 4)
			require.Equal(t, hex.EncodeToString(kv[0]), f[2], "%s: the key Kafka read and wrote again", f[0])
			require.Equal(t, hexOr(kv[1]), f[3], "%s: the value Kafka read and wrote again", f[0])
		}
	})
}
