package kafkacheck

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/groupcodec"
	"github.com/kafkalite/kafkalite/internal/sharecodec"
)

var updateShareGolden = flag.Bool("update-share-golden", false,
	"rewrite the share-group files of internal/groupcodec/testdata/kafka and internal/sharecodec/testdata/kafka from Kafka's record serdes")

// shareGolden is the text of a testdata/kafka file for a record Kafka
// serialized with its group ("group") or share ("share") coordinator's
// serde.
func shareGolden(serde, name, key, value string) string {
	topic, class := "__consumer_offsets", "GroupCoordinatorRecordSerde"
	if serde == "share" {
		topic, class = "__share_group_state", "ShareCoordinatorRecordSerde"
	}
	return fmt.Sprintf("# %s: a %s record as Apache Kafka 4.4.0 serializes it\n"+
		"# (%s; internal/testkit/kafkacheck TestShareRecords,\n"+
		"# whose -update-share-golden rewrites it). Do not edit.\nkey %s\nvalue %s\n", name, topic, class, key, value)
}

// TestShareRecords makes Kafka 4.4.0's record serdes the judge of the
// share-group records (KIP-932): groupcodec's of __consumer_offsets
// (GroupCoordinatorRecordSerde) and sharecodec's of __share_group_state
// (ShareCoordinatorRecordSerde), in one JVM
// (testdata/java/ShareRecords.java). Kafka's bytes for its fixed records
// are the share-group files of internal/groupcodec/testdata/kafka and
// internal/sharecodec/testdata/kafka (whose records the codecs' own tests
// encode to the same bytes and decode), the codecs decode Kafka's bytes,
// and Kafka deserializes what the codecs encode and serializes it back to
// the same bytes, so that it read every field as the codecs wrote it.
func TestShareRecords(t *testing.T) {
	k := Get(t)
	dirs := map[string]string{
		"group": filepath.Join(moduleDir(), "..", "..", "groupcodec", "testdata", "kafka"),
		"share": filepath.Join(moduleDir(), "..", "..", "sharecodec", "testdata", "kafka"),
	}

	// The codecs' encodings of records beside the fixed ones: every type,
	// empty, null and extreme fields, many state batches.
	type record struct {
		serde      string
		kv         [2][]byte
		key, value any // the structs encoded; value nil for a tombstone
	}
	ours := map[string]record{}
	put := func(serde, name string, kb, vb []byte, key, value any) {
		ours[name] = record{serde, [2][]byte{kb, vb}, key, value}
	}
	addGroup := func(name string, key groupcodec.ShareGroupKey, value any) {
		kb, err := groupcodec.AppendShareGroupKey(nil, key)
		require.NoError(t, err, name)
		var vb []byte
		if value != nil {
			vb, err = groupcodec.AppendShareGroupValue(nil, value)
			require.NoError(t, err, name)
		}
		put("group", name, kb, vb, key, value)
	}
	addShare := func(name string, key sharecodec.Key, value any) {
		kb, err := sharecodec.AppendKey(nil, key)
		require.NoError(t, err, name)
		var vb []byte
		switch v := value.(type) {
		case sharecodec.Snapshot:
			vb, err = sharecodec.AppendSnapshot(nil, v)
		case sharecodec.Update:
			vb, err = sharecodec.AppendUpdate(nil, v)
		}
		require.NoError(t, err, name)
		put("share", name, kb, vb, key, value)
	}
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ones := [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	rack := ""
	addGroup("share-member-empty", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupMemberMetadata, Group: "", Member: ""},
		groupcodec.ShareGroupMemberMetadataValue{RackID: &rack})
	addGroup("share-member-tombstone", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupMemberMetadata, Group: "g", Member: "m"}, nil)
	addGroup("share-metadata-min", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupMetadata, Group: "g"},
		groupcodec.ShareGroupMetadataValue{Epoch: -1, MetadataHash: -1 << 63})
	addGroup("share-target-metadata-no-time", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupTargetAssignmentMetadata, Group: "g"},
		groupcodec.ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 3})
	addGroup("share-target-none", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupTargetAssignmentMember, Group: "g", Member: "m"},
		groupcodec.ShareGroupTargetAssignmentMemberValue{})
	addGroup("share-current-many", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupCurrentMemberAssignment, Group: "g", Member: "m"},
		groupcodec.ShareGroupCurrentMemberAssignmentValue{MemberEpoch: 7, PreviousMemberEpoch: 5, State: 3,
			AssignedPartitions: []groupcodec.ConsumerGroupTopicPartitions{
				{TopicID: id, Partitions: []int32{0, 1, 2}}, {TopicID: ones, Partitions: []int32{}}}})
	addGroup("share-state-partitions-deleting", groupcodec.ShareGroupKey{Type: groupcodec.TypeShareGroupStatePartitionMetadata, Group: "g"},
		groupcodec.ShareGroupStatePartitionMetadataValue{
			InitializedTopics: []groupcodec.ShareGroupTopicPartitionsInfo{{TopicID: id, TopicName: "t", Partitions: []int32{5}}, {TopicID: ones}},
			DeletingTopics:    []groupcodec.ShareGroupTopicInfo{{TopicID: id, TopicName: "t"}, {TopicID: ones, TopicName: "ü"}}})

	batches := make([]sharecodec.StateBatch, 300)
	for i := range batches {
		batches[i] = sharecodec.StateBatch{FirstOffset: int64(10 * i), LastOffset: int64(10*i + 9),
			DeliveryState: int8(i % 5), DeliveryCount: int16(i)}
	}
	addShare("snapshot-many", sharecodec.Key{Type: sharecodec.TypeShareSnapshot, GroupID: "g", TopicID: id, Partition: 2147483647},
		sharecodec.Snapshot{SnapshotEpoch: 9, StateEpoch: 8, LeaderEpoch: 7, StartOffset: 0, DeliveryCompleteCount: 123456,
			CreateTimestamp: 1, WriteTimestamp: 2, StateBatches: batches})
	addShare("snapshot-extremes", sharecodec.Key{Type: sharecodec.TypeShareSnapshot, GroupID: "", TopicID: ones, Partition: -1},
		sharecodec.Snapshot{SnapshotEpoch: -2147483648, StateEpoch: 2147483647, LeaderEpoch: -1, StartOffset: 1<<63 - 1,
			DeliveryCompleteCount: sharecodec.NoDeliveryCompleteCount, CreateTimestamp: -1, WriteTimestamp: 1<<63 - 1,
			StateBatches: []sharecodec.StateBatch{{FirstOffset: -1 << 63, LastOffset: 1<<63 - 1, DeliveryState: -128, DeliveryCount: -32768}}})
	addShare("snapshot-tombstone", sharecodec.Key{Type: sharecodec.TypeShareSnapshot, GroupID: "g", TopicID: id}, nil)
	addShare("update-many", sharecodec.Key{Type: sharecodec.TypeShareUpdate, GroupID: "g", TopicID: id, Partition: 1},
		sharecodec.Update{SnapshotEpoch: 9, LeaderEpoch: 7, StartOffset: -1, DeliveryCompleteCount: 0, StateBatches: batches[:17]})
	addShare("update-empty", sharecodec.Key{Type: sharecodec.TypeShareUpdate, GroupID: strings.Repeat("g", 300), TopicID: id},
		sharecodec.Update{DeliveryCompleteCount: sharecodec.NoDeliveryCompleteCount})

	hexOr := func(b []byte) string {
		if b == nil {
			return "-"
		}
		return hex.EncodeToString(b)
	}
	var args []string
	for name, o := range ours {
		args = append(args, o.serde+"/"+name+"="+hex.EncodeToString(o.kv[0])+":"+hexOr(o.kv[1]))
	}
	src := filepath.Join(moduleDir(), "testdata", "java", "ShareRecords.java")
	stdout, stderr := k.runBoth(t, src, args...)
	for _, l := range scanLines(stderr) {
		require.True(t, strings.HasPrefix(l, "SLF4J: "), "ShareRecords wrote to stderr: %s", l)
	}
	lines := scanLines(stdout)
	require.NotEmpty(t, lines)
	require.Equal(t, "ok", lines[len(lines)-1], "ShareRecords finished:\n%s", tail(stdout))

	t.Run("kafka bytes", func(t *testing.T) {
		enc := Lines(lines, "enc")
		count := map[string]int{}
		for _, f := range enc {
			require.Len(t, f, 4)
			serde, name, key, value := f[0], f[1], f[2], f[3]
			count[serde]++
			text := shareGolden(serde, name, key, value)
			path := filepath.Join(dirs[serde], name+".hex")
			if *updateShareGolden {
				require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
				continue
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update-share-golden to write it")
			require.Equal(t, text, string(raw), "%s is not what Kafka writes", path)

			// The codecs read Kafka's bytes.
			kb, err := hex.DecodeString(key)
			require.NoError(t, err)
			var vb []byte
			if value != "-" {
				vb, err = hex.DecodeString(value)
				require.NoError(t, err)
			}
			if serde == "group" {
				gk, err := groupcodec.ParseKey(kb)
				require.NoError(t, err, name)
				require.True(t, gk.Type.Decoded(), name)
				gv, err := groupcodec.ParseValue(gk.Type, vb)
				require.NoError(t, err, name)
				require.Equal(t, vb == nil, gv.Tombstone, name)
				require.Equal(t, vb == nil, gv.ShareGroup == nil, name)
				continue
			}
			sk, err := sharecodec.DecodeKey(kb)
			require.NoError(t, err, name)
			if vb == nil {
				continue
			}
			if sk.Type == sharecodec.TypeShareSnapshot {
				_, err = sharecodec.DecodeSnapshot(vb)
			} else {
				_, err = sharecodec.DecodeUpdate(vb)
			}
			require.NoError(t, err, name)
		}
		if !*updateShareGolden {
			for serde, prefix := range map[string]string{"group": "share-group-", "share": "share-"} {
				files, err := filepath.Glob(filepath.Join(dirs[serde], prefix+"*.hex"))
				require.NoError(t, err)
				require.Len(t, files, count[serde], "one file per record Kafka serialized in %s", dirs[serde])
			}
		}
	})
	t.Run("kafka reads the codecs", func(t *testing.T) {
		dec := Lines(lines, "dec")
		require.Len(t, dec, len(ours))
		for _, f := range dec {
			require.GreaterOrEqual(t, len(f), 2)
			o, ok := ours[f[0]]
			require.True(t, ok, f[0])
			require.Equal(t, "ok", f[1], "Kafka refused %s: %v", f[0], f)
			require.Len(t, f, 6)
			require.Equal(t, hex.EncodeToString(o.kv[0]), f[2], "%s: the key Kafka read and wrote again", f[0])
			require.Equal(t, hexOr(o.kv[1]), f[3], "%s: the value Kafka read and wrote again", f[0])
			// Kafka read every field as the codec meant it.
			requireKafkaFields(t, f[0]+" key", f[4], o.key)
			if o.value == nil {
				require.Equal(t, "-", f[5], f[0])
			} else {
				requireKafkaFields(t, f[0]+" value", f[5], o.value)
			}
		}
	})
}

// requireKafkaFields checks that Kafka's JSON of a message it read
// (its generated JsonConverters' output) holds the fields of ours, a
// codec's struct: every field Kafka wrote matches the struct's field of
// the same name (GroupID or Group is groupId, Member memberId, ID Id), and
// every field of the struct that Kafka left out holds the schema's default
// (0, empty, or -1 for deliveryCompleteCount), as Kafka leaves out tagged
// fields at their default and key fields the type does not have. The key's
// Type is the record type, not a field.
func requireKafkaFields(t *testing.T, what, kafkaJSON string, ours any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(kafkaJSON))
	dec.UseNumber()
	var kafka any
	require.NoError(t, dec.Decode(&kafka), "%s: %s", what, kafkaJSON)
	compareKafkaField(t, what, kafka, reflect.ValueOf(ours))
}

// kafkaFieldName is Kafka's JSON name of a codec struct's field.
func kafkaFieldName(goName string) string {
	switch goName {
	case "Group", "GroupID":
		return "groupId"
	case "Member":
		return "memberId"
	}
	n := strings.ToLower(goName[:1]) + goName[1:]
	return strings.ReplaceAll(n, "ID", "Id")
}

func compareKafkaField(t *testing.T, path string, kafka any, v reflect.Value) {
	t.Helper()
	switch {
	case v.Kind() == reflect.Struct:
		obj, ok := kafka.(map[string]any)
		require.True(t, ok, "%s: Kafka wrote %v, not an object", path, kafka)
		seen := map[string]bool{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Name == "Type" {
				continue
			}
			name := kafkaFieldName(f.Name)
			seen[name] = true
			k, ok := obj[name]
			if !ok {
				fv := v.Field(i)
				dflt := fv.IsZero() || (name == "deliveryCompleteCount" && fv.Int() == sharecodec.NoDeliveryCompleteCount)
				require.True(t, dflt, "%s.%s: Kafka has no such field, and ours is %v", path, name, fv.Interface())
				continue
			}
			compareKafkaField(t, path+"."+name, k, v.Field(i))
		}
		for name := range obj {
			require.True(t, seen[name], "%s: Kafka has a field %s that ours has not", path, name)
		}
	case v.Kind() == reflect.Array: // a uuid
		id := make([]byte, v.Len())
		reflect.Copy(reflect.ValueOf(id), v)
		require.Equal(t, base64.RawURLEncoding.EncodeToString(id), kafka, path)
	case v.Kind() == reflect.Slice:
		a, ok := kafka.([]any)
		require.True(t, ok, "%s: Kafka wrote %v, not an array", path, kafka)
		require.Len(t, a, v.Len(), path)
		for i := range a {
			compareKafkaField(t, fmt.Sprintf("%s[%d]", path, i), a[i], v.Index(i))
		}
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			require.Nil(t, kafka, path)
			return
		}
		compareKafkaField(t, path, kafka, v.Elem())
	case v.Kind() == reflect.String:
		require.Equal(t, v.String(), kafka, path)
	case v.CanInt():
		require.Equal(t, json.Number(strconv.FormatInt(v.Int(), 10)), kafka, path)
	default:
		t.Fatalf("%s: no rule for %s", path, v.Type())
	}
}
