package kafkacheck

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/internal/remotecodec"
	"github.com/stretchr/testify/require"
)

var updateRemoteGolden = flag.Bool("update-remote-golden", false,
	"rewrite internal/remotecodec/testdata/golden from Kafka's RemoteLogMetadataSerde")

// remoteUUID decodes 32 hex digits.
func remoteUUID(t testing.TB, s string) [16]byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 16)
	return [16]byte(b)
}

// remoteRecord is one of the fixed records RemoteMetaDump.java builds and
// serializes, with what its golden file's comment says about it.
type remoteRecord struct {
	name, about string
	rec         remotecodec.Record // nil: Kafka's bytes are decoded only
	decoded     remotecodec.Record // what they decode to, when rec is nil
}

// remoteRecords returns the records of RemoteMetaDump.java, in its order:
// the two lists must stay alike.
func remoteRecords(t testing.TB) []remoteRecord {
	orders := remotecodec.TopicIdPartition{Name: "orders", ID: remoteUUID(t, "5a4f1e2d3c4b5a6978879605a4b3c2d1"), Partition: 3}
	tp := remotecodec.TopicIdPartition{Name: "t", ID: remoteUUID(t, "7fffffffffffffffffffffffffffffff"), Partition: 0}
	seg := remotecodec.RemoteLogSegmentID{TopicIdPartition: orders, ID: remoteUUID(t, "01020304050607088a9bacbdcedfe0f1")}
	seg2 := remotecodec.RemoteLogSegmentID{TopicIdPartition: tp, ID: remoteUUID(t, "fedcba98765432100011223344556677")}
	custom := []byte("bucket/orders-3/1200")
	epochs := []remotecodec.SegmentLeaderEpoch{{LeaderEpoch: 0, Offset: 1200}, {LeaderEpoch: 2, Offset: 3000}}
	copyStarted := remotecodec.RemoteLogSegmentMetadataRecord{
		RemoteLogSegmentID: seg, StartOffset: 1200, EndOffset: 4799, BrokerID: 1,
		MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000005000, SegmentLeaderEpochs: epochs,
		SegmentSizeInBytes: 1048576, RemoteLogSegmentState: remotecodec.CopySegmentStarted,
	}
	txnEmpty := copyStarted
	txnEmpty.CustomMetadata = custom
	txnEmpty.RemoteLogSegmentState = remotecodec.CopySegmentFinished
	txnEmpty.TxnIndexEmpty = true
	unknownTags := copyStarted
	unknownTags.TxnIndexEmpty = true
	return []remoteRecord{
		{name: "segment-copy-started", rec: copyStarted,
			about: "RemoteLogSegmentMetadataRecord v0 (apiKey 0), as addRemoteLogSegmentMetadata writes it:\n" +
				"state COPY_SEGMENT_STARTED, customMetadata null, txnIndexEmpty false (tag 0 absent);\n" +
				"orders-3 (topic id 5a4f1e2d...), segment 1200-4799, leader epochs 0@1200 and 2@3000."},
		{name: "segment-txn-index-empty", rec: txnEmpty,
			about: "RemoteLogSegmentMetadataRecord v0: segment-copy-started in state COPY_SEGMENT_FINISHED\n" +
				"with customMetadata \"bucket/orders-3/1200\" and txnIndexEmpty true (tagged field 0 = 01)."},
		{name: "segment-empty-custom", rec: remotecodec.RemoteLogSegmentMetadataRecord{
			RemoteLogSegmentID: seg2, MaxTimestampMs: -1,
			SegmentLeaderEpochs: []remotecodec.SegmentLeaderEpoch{{LeaderEpoch: 5, Offset: 0}},
			CustomMetadata:      []byte{}, RemoteLogSegmentState: remotecodec.CopySegmentStarted},
			about: "RemoteLogSegmentMetadataRecord v0: customMetadata present but empty (01, not null 00);\n" +
				"t-0 (topic id 7fff...ff), segment 0-0, one leader epoch 5@0, maxTimestampMs -1."},
		{name: "update-copy-finished", rec: remotecodec.RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: seg,
			BrokerID: 1, EventTimestampMs: 1700000009000, CustomMetadata: custom, RemoteLogSegmentState: remotecodec.CopySegmentFinished},
			about: "RemoteLogSegmentMetadataUpdateRecord v0 (apiKey 1): the segment's copy finished, with the\n" +
				"plugin's customMetadata."},
		{name: "update-delete-started", rec: remotecodec.RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: seg,
			BrokerID: 2, EventTimestampMs: 1700000100000, RemoteLogSegmentState: remotecodec.DeleteSegmentStarted},
			about: "RemoteLogSegmentMetadataUpdateRecord v0: DELETE_SEGMENT_STARTED, customMetadata null."},
		{name: "update-delete-finished", rec: remotecodec.RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: seg,
			BrokerID: 2, EventTimestampMs: 1700000101000, CustomMetadata: []byte{}, RemoteLogSegmentState: remotecodec.DeleteSegmentFinished},
			about: "RemoteLogSegmentMetadataUpdateRecord v0: DELETE_SEGMENT_FINISHED, customMetadata empty."},
		{name: "delete-partition-marked", rec: remotecodec.RemotePartitionDeleteMetadataRecord{TopicIdPartition: orders,
			BrokerID: 3000, EventTimestampMs: 1700000200000, RemotePartitionDeleteState: remotecodec.DeletePartitionMarked},
			about: "RemotePartitionDeleteMetadataRecord v0 (apiKey 2): DELETE_PARTITION_MARKED for orders-3."},
		{name: "delete-partition-started", rec: remotecodec.RemotePartitionDeleteMetadataRecord{TopicIdPartition: orders,
			BrokerID: 1, EventTimestampMs: 1700000201000, RemotePartitionDeleteState: remotecodec.DeletePartitionStarted},
			about: "RemotePartitionDeleteMetadataRecord v0: DELETE_PARTITION_STARTED for orders-3."},
		{name: "delete-partition-finished", rec: remotecodec.RemotePartitionDeleteMetadataRecord{TopicIdPartition: tp,
			BrokerID: 1, EventTimestampMs: 1700000202000, RemotePartitionDeleteState: remotecodec.DeletePartitionFinished},
			about: "RemotePartitionDeleteMetadataRecord v0: DELETE_PARTITION_FINISHED for t-0."},
		{name: "snapshot", rec: remotecodec.RemoteLogSegmentMetadataSnapshotRecord{SegmentID: seg.ID, StartOffset: 1200,
			EndOffset: 4799, BrokerID: 1, MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000009000,
			SegmentLeaderEpochs: epochs, SegmentSizeInBytes: 1048576, CustomMetadata: custom,
			RemoteLogSegmentState: remotecodec.CopySegmentFinished, TxnIndexEmpty: true},
			about: "RemoteLogSegmentMetadataSnapshotRecord v0 (apiKey 3): the segment of segment-copy-started\n" +
				"after its copy finished, with customMetadata and txnIndexEmpty true."},
		{name: "snapshot-no-custom", rec: remotecodec.RemoteLogSegmentMetadataSnapshotRecord{SegmentID: seg2.ID,
			EndOffset: 99, BrokerID: 2, MaxTimestampMs: 1700000000000, EventTimestampMs: 1700000300000,
			SegmentLeaderEpochs: []remotecodec.SegmentLeaderEpoch{{LeaderEpoch: 7, Offset: 0}}, SegmentSizeInBytes: 4096,
			RemoteLogSegmentState: remotecodec.DeleteSegmentStarted},
			about: "RemoteLogSegmentMetadataSnapshotRecord v0: DELETE_SEGMENT_STARTED, customMetadata null,\n" +
				"txnIndexEmpty false."},
		{name: "segment-unknown-tags", decoded: unknownTags,
			about: "segment-copy-started with txnIndexEmpty true plus unknown tagged fields Kafka's generated\n" +
				"RemoteLogSegmentMetadataRecord wrote from its unknownTaggedFields: tag 3 (01) in\n" +
				"topicIdPartition, tag 2 (empty) in the second leader epoch, tag 9 (ca fe) after tag 0.\n" +
				"Decoded only: remotecodec skips unknown tags and does not write them."},
	}
}

// remoteFields prints a record as RemoteMetaDump.java prints what Kafka's
// serde deserialized.
func remoteFields(rec remotecodec.Record) string {
	tip := func(tp remotecodec.TopicIdPartition) string {
		return fmt.Sprintf("topic=%s topicId=%x partition=%d", tp.Name, tp.ID, tp.Partition)
	}
	custom := func(b []byte) string {
		if b == nil {
			return "-"
		}
		return hex.EncodeToString(b)
	}
	epochs := func(es []remotecodec.SegmentLeaderEpoch) string {
		var s []string
		for _, e := range es {
			s = append(s, fmt.Sprintf("%d:%d", e.LeaderEpoch, e.Offset))
		}
		return strings.Join(s, ",")
	}
	switch r := rec.(type) {
	case remotecodec.RemoteLogSegmentMetadataRecord:
		return fmt.Sprintf("segment %s segmentId=%x startOffset=%d endOffset=%d brokerId=%d maxTimestampMs=%d "+
			"eventTimestampMs=%d segmentSizeInBytes=%d customMetadata=%s state=%d txnIndexEmpty=%t epochs=%s",
			tip(r.RemoteLogSegmentID.TopicIdPartition), r.RemoteLogSegmentID.ID, r.StartOffset, r.EndOffset, r.BrokerID,
			r.MaxTimestampMs, r.EventTimestampMs, r.SegmentSizeInBytes, custom(r.CustomMetadata), r.RemoteLogSegmentState,
			r.TxnIndexEmpty, epochs(r.SegmentLeaderEpochs))
	case remotecodec.RemoteLogSegmentMetadataUpdateRecord:
		return fmt.Sprintf("update %s segmentId=%x brokerId=%d eventTimestampMs=%d customMetadata=%s state=%d",
			tip(r.RemoteLogSegmentID.TopicIdPartition), r.RemoteLogSegmentID.ID, r.BrokerID, r.EventTimestampMs,
			custom(r.CustomMetadata), r.RemoteLogSegmentState)
	case remotecodec.RemotePartitionDeleteMetadataRecord:
		return fmt.Sprintf("delete %s brokerId=%d eventTimestampMs=%d state=%d",
			tip(r.TopicIdPartition), r.BrokerID, r.EventTimestampMs, r.RemotePartitionDeleteState)
	case remotecodec.RemoteLogSegmentMetadataSnapshotRecord:
		return fmt.Sprintf("snapshot segmentId=%x startOffset=%d endOffset=%d brokerId=%d maxTimestampMs=%d "+
			"eventTimestampMs=%d segmentSizeInBytes=%d customMetadata=%s state=%d txnIndexEmpty=%t epochs=%s",
			r.SegmentID, r.StartOffset, r.EndOffset, r.BrokerID, r.MaxTimestampMs, r.EventTimestampMs,
			r.SegmentSizeInBytes, custom(r.CustomMetadata), r.RemoteLogSegmentState, r.TxnIndexEmpty,
			epochs(r.SegmentLeaderEpochs))
	}
	return fmt.Sprintf("unknown %T", rec)
}

// remoteCase is an input fed to both decoders: Kafka's serde and
// remotecodec.ParseValue must agree on whether it decodes (and, when it
// does, on the fields), except where kafkaOK and goOK say otherwise.
type remoteCase struct {
	name           string
	b              []byte
	kafkaOK, goOK  bool
	kafkaErrSubstr string
}

// patched returns a copy of b with b[at:at+len(old)] == old replaced by
// repl.
func patched(t testing.TB, b []byte, at int, old, repl string) []byte {
	t.Helper()
	o, err := hex.DecodeString(strings.ReplaceAll(old, " ", ""))
	require.NoError(t, err)
	r, err := hex.DecodeString(strings.ReplaceAll(repl, " ", ""))
	require.NoError(t, err)
	require.Equal(t, o, b[at:at+len(o)], "bytes at %d", at)
	out := append([]byte{}, b[:at]...)
	out = append(out, r...)
	return append(out, b[at+len(o):]...)
}

// remoteCases returns edge inputs built from remotecodec's encodings of the
// fixed records (enc, by name).
func remoteCases(t testing.TB, enc map[string][]byte) []remoteCase {
	seg, ok := remoteRecords(t)[0].rec.(remotecodec.RemoteLogSegmentMetadataRecord)
	require.True(t, ok)
	seg.BrokerLeaderEpoch = 7
	v1, err := remotecodec.AppendValueVersion(nil, seg, 1)
	require.NoError(t, err)
	seg.BrokerLeaderEpoch = 0
	v1zero, err := remotecodec.AppendValueVersion(nil, seg, 1)
	require.NoError(t, err)

	empty := enc["segment-empty-custom"] // t-0: the epochs array starts at byte 79
	update := enc["update-delete-started"]
	del := enc["delete-partition-marked"]
	copyStarted := enc["segment-copy-started"]
	last := func(b []byte) int { return len(b) - 1 }
	return []remoteCase{
		// Version 1 of apiKey 0 is in Kafka's development branch only:
		// 4.4.0's generated nested structures refuse it.
		{name: "v1-broker-leader-epoch", b: v1, goOK: true, kafkaErrSubstr: "version 1"},
		{name: "v1-default-broker-leader-epoch", b: v1zero, goOK: true, kafkaErrSubstr: "version 1"},
		{name: "unknown-segment-state", b: patched(t, update, last(update)-1, "02 00", "09 00"), kafkaErrSubstr: "state"},
		{name: "unknown-partition-delete-state", b: patched(t, del, last(del)-1, "00 00", "03 00")},
		{name: "empty-leader-epochs", b: patched(t, empty, 79, "02 00000005 0000000000000000 00", "01"),
			kafkaErrSubstr: "segmentLeaderEpochs"},
		{name: "negative-start-offset", b: patched(t, empty, 43, "0000000000000000", "ffffffffffffffff"),
			kafkaErrSubstr: "start offset"},
		{name: "end-before-start", b: patched(t, empty, 43, "0000000000000000", "0000000000000001"),
			kafkaErrSubstr: "end offset"},
		{name: "trailing-byte", b: append(append([]byte{}, update...), 0), kafkaErrSubstr: "garbage"},
		{name: "frame-version-0", b: patched(t, update, 0, "01", "00"), kafkaErrSubstr: "frame version 0"},
		{name: "frame-version-2", b: patched(t, update, 0, "01", "02"), kafkaErrSubstr: "frame version"},
		{name: "unknown-api-key", b: patched(t, update, 1, "01", "04")},
		{name: "null-topic-name", b: patched(t, del, 3, "07", "00"), kafkaErrSubstr: "null"},
		{name: "lying-epoch-count", b: patched(t, empty, 79, "02", "ffffffff07")},
		{name: "truncated", b: update[:len(update)-3]},
		{name: "unknown-tag-skipped", b: patched(t, update, last(update), "00", "01 09 02 cafe"), kafkaOK: true, goOK: true},
		{name: "txn-index-empty-byte-2", b: patched(t, copyStarted, last(copyStarted), "00", "01 00 01 02"),
			kafkaOK: true, goOK: true},
	}
}

// TestRemoteCodec makes Kafka 4.4.0's RemoteLogMetadataSerde the judge of
// remotecodec, in one JVM (testdata/java/RemoteMetaDump.java): Kafka's
// bytes for the fixed records equal remotecodec's encodings of the same
// records (and the golden files of internal/remotecodec/testdata; rewrite
// them with -update-remote-golden); remotecodec decodes Kafka's bytes with
// unknown tags to the record; Kafka deserializes remotecodec's bytes to the
// same fields; both decoders accept and refuse the same edge inputs (but
// version 1, which only remotecodec reads); and PartitionFor picks Kafka's
// partition for every id, partition and partition count tried.
func TestRemoteCodec(t *testing.T) {
	k := Get(t)
	recs := remoteRecords(t)
	enc := map[string][]byte{}
	var args []string
	for _, r := range recs {
		if r.rec == nil {
			continue
		}
		b, err := remotecodec.AppendValue(nil, r.rec)
		require.NoError(t, err, r.name)
		enc[r.name] = b
		args = append(args, r.name+"="+hex.EncodeToString(b))
	}
	cases := remoteCases(t, enc)
	for _, c := range cases {
		args = append(args, c.name+"="+hex.EncodeToString(c.b))
	}

	lines := k.runJavaSource(t, "RemoteMetaDump", args...)

	kafkaBytes := map[string][]byte{}
	for _, f := range Lines(lines, "enc") {
		require.Len(t, f, 2)
		b, err := hex.DecodeString(f[1])
		require.NoError(t, err)
		kafkaBytes[f[0]] = b
	}
	t.Run("kafka bytes", func(t *testing.T) {
		require.Len(t, kafkaBytes, len(recs), "one record per name on both sides")
		for _, r := range recs {
			kb, ok := kafkaBytes[r.name]
			require.True(t, ok, r.name)
			if r.rec != nil {
				require.Equal(t, hex.EncodeToString(kb), hex.EncodeToString(enc[r.name]), "%s: Kafka's bytes vs remotecodec's", r.name)
			}
			got, err := remotecodec.ParseValue(kb)
			require.NoError(t, err, r.name)
			want := r.rec
			if want == nil {
				want = r.decoded
			}
			require.Equal(t, want, got, r.name)
		}
	})
	t.Run("golden files", func(t *testing.T) {
		dir := filepath.Join(moduleDir(), "..", "..", "remotecodec", "testdata", "golden")
		for _, r := range recs {
			path := filepath.Join(dir, r.name+".hex")
			text := remoteGolden(r, kafkaBytes[r.name])
			if *updateRemoteGolden {
				require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
				continue
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update-remote-golden to write it")
			require.Equal(t, text, string(raw), "%s is not what Kafka writes; run with -update-remote-golden", path)
		}
	})

	decoded := map[string][]string{}
	for _, f := range Lines(lines, "dec") {
		require.Len(t, f, 3)
		decoded[f[0]] = f[1:]
	}
	t.Run("kafka decodes remotecodec", func(t *testing.T) {
		for _, r := range recs {
			if r.rec == nil {
				continue
			}
			require.Equal(t, []string{"ok", remoteFields(r.rec)}, decoded[r.name], r.name)
		}
	})
	t.Run("edge inputs", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				kafka := decoded[c.name]
				require.Len(t, kafka, 2)
				got, err := remotecodec.ParseValue(c.b)
				if c.goOK {
					require.NoError(t, err)
				} else {
					var de *remotecodec.DecodeError
					require.ErrorAs(t, err, &de)
					require.ErrorIs(t, err, remotecodec.ErrCorrupt)
				}
				if !c.kafkaOK {
					require.Equal(t, "err", kafka[0], "Kafka decoded it: %s", kafka[1])
					require.Contains(t, kafka[1], c.kafkaErrSubstr)
					t.Logf("Kafka: %s\nremotecodec: %v", kafka[1], err)
					return
				}
				require.Equal(t, "ok", kafka[0], kafka[1])
				require.Equal(t, remoteFields(got), kafka[1])
			})
		}
	})
	t.Run("partition", func(t *testing.T) {
		parts := Lines(lines, "part")
		require.NotEmpty(t, parts)
		for _, f := range parts {
			require.Len(t, f, 4)
			p, err := strconv.ParseInt(f[1], 10, 32)
			require.NoError(t, err)
			n, err := strconv.ParseInt(f[2], 10, 32)
			require.NoError(t, err)
			want, err := strconv.ParseInt(f[3], 10, 32)
			require.NoError(t, err)
			tp := remotecodec.TopicIdPartition{Name: "x", ID: remoteUUID(t, f[0]), Partition: int32(p)}
			require.Equal(t, int32(want), remotecodec.PartitionFor(tp, int32(n)), "%v", f)
		}
	})
}

// remoteGolden formats Kafka's bytes of r as a golden file: comments, then
// 16 bytes a line.
func remoteGolden(r remoteRecord, b []byte) string {
	var sb strings.Builder
	for l := range strings.SplitSeq(r.about, "\n") {
		sb.WriteString("# " + l + "\n")
	}
	sb.WriteString("# Written by Apache Kafka " + Version + "'s own classes (internal/testkit/kafkacheck's\n")
	sb.WriteString("# RemoteMetaDump.java; TestRemoteCodec -update-remote-golden rewrites it). Do not edit.\n")
	for len(b) > 0 {
		n := min(16, len(b))
		sb.WriteString(strings.TrimSpace(fmt.Sprintf("% x", b[:n])) + "\n")
		b = b[n:]
	}
	return sb.String()
}
