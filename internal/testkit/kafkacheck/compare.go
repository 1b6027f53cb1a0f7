package kafkacheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// This file compares what DumpLogSegments printed with what WriteFeatureDir
// expects, field by field.

// RequirePartitionDump checks the dump of tp's .log files (files, in
// offset order, all in out) against the expected content: every batch and
// record field, each batch inside the segment its file names, batches back
// to back from position 0 to the file's end, and exactly the
// non-consecutive offsets the expected records have.
func RequirePartitionDump(t testing.TB, out *DumpOutput, p *PartitionContent, tp TopicPartition, files []SegmentFile) {
	t.Helper()
	require.NotEmpty(t, files, "%s has segments", tp)
	var got []DumpedBatch
	for i, f := range files {
		d := out.File(f.Path)
		require.NotNil(t, d, "%s was dumped", f.Path)
		require.Equal(t, f.Offset, d.StartOffset, "%s: Log starting offset", f.Path)
		end := int64(1<<63 - 1)
		if i+1 < len(files) {
			end = files[i+1].Offset
		}
		pos := int64(0)
		for _, bt := range d.Batches {
			require.GreaterOrEqual(t, bt.BaseOffset, f.Offset, "%s: batch at %d lies in the segment", f.Path, bt.BaseOffset)
			require.Less(t, bt.LastOffset, end, "%s: batch at %d lies in the segment", f.Path, bt.BaseOffset)
			require.Equal(t, pos, bt.Position, "%s: batch at %d starts where the previous ended", f.Path, bt.BaseOffset)
			pos += bt.Size
		}
		require.Equal(t, f.Size, pos, "%s: the batches fill the file", f.Path)
		require.Equal(t, expectedGaps(p.Batches, f.Offset, end), out.NonConsecutive[f.Path],
			"%s: the non-consecutive offsets DumpLogSegments reports are the expected gaps (from -1 to the first offset, and the compaction's)", f.Path)
		got = append(got, d.Batches...)
	}
	require.Len(t, got, len(p.Batches), "%s: batches", tp)
	for i := range got {
		RequireBatch(t, fmt.Sprintf("%s: batch %d", tp, i), p.Batches[i], got[i])
	}
}

// expectedGaps returns the pairs DumpLogSegments reports as
// non-consecutive for a file holding the batches in [from, to): the
// previous record offset (-1 before the first) and a record offset that is
// not its successor.
func expectedGaps(batches []Batch, from, to int64) [][2]int64 {
	var out [][2]int64
	prev := int64(-1)
	for _, bt := range batches {
		if bt.BaseOffset < from || bt.BaseOffset >= to {
			continue
		}
		for _, r := range bt.Records {
			if r.Offset != prev+1 {
				out = append(out, [2]int64{prev, r.Offset})
			}
			prev = r.Offset
		}
	}
	return out
}

// RequireBatch checks one dumped batch and its records against want.
func RequireBatch(t testing.TB, msg string, want Batch, got DumpedBatch) {
	t.Helper()
	msg = fmt.Sprintf("%s (expected base offset %d)", msg, want.BaseOffset)
	lastSeq := int32(-1)
	if want.BaseSequence >= 0 {
		lastSeq = want.BaseSequence + int32(want.LastOffset-want.BaseOffset)
	}
	require.Equal(t, wantBatch(want, lastSeq), gotBatch(got), "%s: batch fields", msg)
	require.Len(t, got.Records, len(want.Records), "%s: records", msg)
	recs := got.Records
	if len(want.Records) > 0 && want.Records[0].OffsetCommit != nil {
		recs = byCommitKey(t, msg, want, recs)
	}
	for i, w := range want.Records {
		RequireRecord(t, fmt.Sprintf("%s, record %d", msg, i), want, w, recs[i])
	}
}

// byCommitKey returns the records of an offset commit batch in the order
// of want's, matched by their keys (topic, partition): a commit's records
// come in no defined order, in Kafka (the request's) as in kafkalite. Their
// offsets must still run from the batch's base offset, one by one; each
// returned record gets the offset (and sequence) of the position of the
// expected one it matches.
func byCommitKey(t testing.TB, msg string, want Batch, got []DumpedRecord) []DumpedRecord {
	t.Helper()
	byKey := map[string]DumpedRecord{}
	for i, r := range got {
		require.Equal(t, want.BaseOffset+int64(i), r.Offset, "%s: record %d's offset", msg, i)
		_, key, _ := keyAndValue(t, msg, r, "3", "4")
		byKey[fmt.Sprint(key["topic"], "-", key["partition"])] = r
	}
	out := make([]DumpedRecord, len(got))
	for i, w := range want.Records {
		r, ok := byKey[fmt.Sprint(w.OffsetCommit.Topic, "-", w.OffsetCommit.Partition)]
		require.True(t, ok, "%s: a commit of %s-%d", msg, w.OffsetCommit.Topic, w.OffsetCommit.Partition)
		if r.Sequence >= 0 {
			r.Sequence -= int32(r.Offset - w.Offset) // the sequence goes with the position
		}
		r.Offset = w.Offset
		out[i] = r
	}
	return out
}

// wantBatch is the DumpedBatch DumpLogSegments prints for w, in the
// fields compared (Position, Size, CRC and Records are left zero).
func wantBatch(w Batch, lastSeq int32) DumpedBatch {
	return DumpedBatch{BaseOffset: w.BaseOffset, LastOffset: w.LastOffset, Count: int32(len(w.Records)),
		BaseSequence: w.BaseSequence, LastSequence: lastSeq, ProducerID: w.ProducerID, ProducerEpoch: w.ProducerEpoch,
		PartitionLeaderEpoch: w.PartitionLeaderEpoch, IsTransactional: w.Transactional, IsControl: w.Control,
		DeleteHorizonMs: w.DeleteHorizonMs, TimestampType: w.TimestampType.String(), MaxTimestamp: w.MaxTimestamp,
		Magic: 2, CompressCodec: w.Codec.String(), IsValid: true}
}

// gotBatch is g in the fields compared, so that a failure shows the two
// side by side: the position, size and CRC depend on the encoding and the
// records are compared one by one.
func gotBatch(g DumpedBatch) DumpedBatch {
	g.Position, g.Size, g.CRC, g.Records = 0, 0, 0, nil
	return g
}

// comparedRecord holds the record fields compared.
type comparedRecord struct {
	Offset             int64
	TimestampType      string
	Timestamp          int64
	KeySize, ValueSize int32
	Sequence           int32
	HeaderKeys         []string
	EndTxnMarker       string
	CoordinatorEpoch   int32
}

// RequireRecord checks one dumped record against w, a record of batch bt.
func RequireRecord(t testing.TB, msg string, bt Batch, w Record, got DumpedRecord) {
	t.Helper()
	seq := int32(-1)
	if bt.BaseSequence >= 0 {
		seq = bt.BaseSequence + int32(w.Offset-bt.BaseOffset)
	}
	want := comparedRecord{Offset: w.Offset, TimestampType: bt.TimestampType.String(), Timestamp: w.Timestamp, Sequence: seq}
	switch {
	case w.Marker != nil:
		// The control record's key is version int16 + type int16, its
		// value version int16 + coordinator epoch int32.
		want.KeySize, want.ValueSize = 4, 6
		want.EndTxnMarker, want.CoordinatorEpoch = markerNames[w.Marker.Type], w.Marker.CoordinatorEpoch
	case w.OffsetCommit != nil || w.Group != nil || w.Txn != nil:
		want.KeySize, want.ValueSize = got.KeySize, got.ValueSize // sizes of kafkalite's encoding; the decoded contents are compared
	default:
		want.KeySize, want.ValueSize = bytesSize(w.Key), bytesSize(w.Value)
		for _, h := range w.Headers {
			want.HeaderKeys = append(want.HeaderKeys, string(h.Key))
		}
	}
	require.Equal(t, want, comparedRecord{got.Offset, got.TimestampType, got.Timestamp, got.KeySize, got.ValueSize,
		got.Sequence, got.HeaderKeys, got.EndTxnMarker, got.CoordinatorEpoch}, "%s: record fields", msg)
	switch {
	case w.Marker != nil:
		require.Nil(t, got.Key, "%s: a marker prints no key", msg)
		require.Nil(t, got.Payload, "%s: a marker prints no payload", msg)
	case w.OffsetCommit != nil:
		requireOffsetCommit(t, msg, *w.OffsetCommit, got)
	case w.Group != nil:
		requireGroupMetadata(t, msg, *w.Group, got)
	case w.Txn != nil:
		requireTxnState(t, msg, *w.Txn, got)
	default:
		require.Equal(t, printed(w.Key), got.Key, "%s: key", msg)
		require.Equal(t, printed(w.Value), got.Payload, "%s: payload", msg)
	}
}

func bytesSize(b []byte) int32 {
	if b == nil {
		return -1
	}
	return int32(len(b))
}

// printed is what the StringDecoder prints for b: nothing for null.
func printed(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// decoded parses a decoder's JSON text, numbers kept exact.
func decoded(t testing.TB, msg, what string, s *string) map[string]any {
	t.Helper()
	require.NotNil(t, s, "%s: the %s is printed", msg, what)
	d := json.NewDecoder(strings.NewReader(*s))
	d.UseNumber()
	var m map[string]any
	require.NoError(t, d.Decode(&m), "%s: the %s is JSON: %s", msg, what, *s)
	return m
}

// keyAndValue returns the decoded key's type and data and the value's
// data, requiring the value's version to be one of versions.
func keyAndValue(t testing.TB, msg string, got DumpedRecord, versions ...string) (string, map[string]any, map[string]any) {
	t.Helper()
	k := decoded(t, msg, "key", got.Key)
	v := decoded(t, msg, "payload", got.Payload)
	require.Contains(t, versions, v["version"], "%s: value version (%s)", msg, *got.Payload)
	kd, _ := k["data"].(map[string]any)
	vd, _ := v["data"].(map[string]any)
	require.NotNil(t, kd, "%s: key data (%s)", msg, *got.Key)
	require.NotNil(t, vd, "%s: value data (%s)", msg, *got.Payload)
	typ, _ := k["type"].(string)
	return typ, kd, vd
}

func num(v int64) json.Number { return json.Number(fmt.Sprint(v)) }

func requireOffsetCommit(t testing.TB, msg string, w OffsetCommit, got DumpedRecord) {
	t.Helper()
	typ, key, val := keyAndValue(t, msg, got, "3", "4")
	require.Equal(t, "1", typ, "%s: an OffsetCommitKey", msg)
	require.Equal(t, map[string]any{"group": w.Group, "topic": w.Topic, "partition": num(int64(w.Partition))}, key, "%s: key", msg)
	want := map[string]any{"offset": num(w.Offset), "leaderEpoch": num(int64(w.LeaderEpoch)), "metadata": w.Metadata,
		"commitTimestamp": num(w.CommitTimestamp)}
	delete(val, "topicId") // version 4's tagged field, absent unless set
	require.Equal(t, want, val, "%s: value", msg)
}

func requireGroupMetadata(t testing.TB, msg string, w GroupMetadata, got DumpedRecord) {
	t.Helper()
	typ, key, val := keyAndValue(t, msg, got, "3")
	require.Equal(t, "2", typ, "%s: a GroupMetadataKey", msg)
	require.Equal(t, map[string]any{"group": w.Group}, key, "%s: key", msg)
	nullable := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	members := []any{}
	for _, m := range w.Members {
		assigned := byTopicJSON(m.Assignment, "partitions")
		var subTopics []any
		for _, topic := range m.Topics {
			subTopics = append(subTopics, topic)
		}
		members = append(members, map[string]any{"memberId": m.MemberID, "groupInstanceId": nil, "clientId": m.ClientID,
			"clientHost": m.ClientHost, "rebalanceTimeout": num(int64(m.RebalanceTimeout)), "sessionTimeout": num(int64(m.SessionTimeout)),
			// The subscription and assignment are decoded by Kafka's
			// ConsumerProtocol schemas: a field that stays base64 did
			// not decode.
			"subscription": map[string]any{"topics": subTopics, "userData": nil, "ownedPartitions": []any{}, "generationId": num(-1), "rackId": nil},
			"assignment":   map[string]any{"assignedPartitions": assigned, "userData": nil}})
	}
	want := map[string]any{"protocolType": w.ProtocolType, "generation": num(int64(w.Generation)), "protocol": nullable(w.Protocol),
		"leader": nullable(w.Leader), "currentStateTimestamp": num(w.CurrentStateTimestamp), "members": members}
	require.Equal(t, want, val, "%s: value", msg)
}

// byTopicJSON is partitions per topic as Kafka's JSON decoders print them:
// a list, by topic name, of {"topic": name, field: [partitions...]}.
func byTopicJSON(partitions map[string][]int32, field string) []any {
	var out []any
	for _, topic := range slices.Sorted(maps.Keys(partitions)) {
		var ps []any
		for _, p := range partitions[topic] {
			ps = append(ps, num(int64(p)))
		}
		out = append(out, map[string]any{"topic": topic, field: ps})
	}
	return out
}

func requireTxnState(t testing.TB, msg string, w TxnState, got DumpedRecord) {
	t.Helper()
	// Version 1, as Kafka 4.4 writes at transaction.version 2.
	typ, key, val := keyAndValue(t, msg, got, "1")
	require.Equal(t, "0", typ, "%s: a TransactionLogKey", msg)
	require.Equal(t, map[string]any{"transactionalId": w.TransactionalID}, key, "%s: key", msg)
	var parts any
	if w.Partitions != nil {
		parts = append([]any{}, byTopicJSON(w.Partitions, "partitionIds")...)
	}
	if gp, ok := val["transactionPartitions"].([]any); ok {
		// Kafka groups the partitions by topic in no defined order.
		slices.SortFunc(gp, func(a, b any) int {
			at, _ := a.(map[string]any)["topic"].(string)
			bt, _ := b.(map[string]any)["topic"].(string)
			return strings.Compare(at, bt)
		})
	}
	want := map[string]any{"producerId": num(w.ProducerID), "producerEpoch": num(int64(w.ProducerEpoch)),
		"transactionTimeoutMs": num(int64(w.TimeoutMs)), "transactionStatus": w.Status, "transactionPartitions": parts,
		"transactionLastUpdateTimestampMs": num(w.LastUpdateTimeMs), "transactionStartTimestampMs": num(w.StartTimeMs),
		// The producer id before the transition: the same one while no
		// new producer id is given. Tagged fields at their defaults
		// (nextProducerId -1, clientTransactionVersion 0) are not printed.
		"previousProducerId": num(w.ProducerID)}
	if w.ClientTransactionVersion != 0 {
		want["clientTransactionVersion"] = num(int64(w.ClientTransactionVersion))
	}
	require.Equal(t, want, val, "%s: value", msg)
}

// markerNames are Kafka's ControlRecordType names, which DumpLogSegments
// prints.
var markerNames = map[record.ControlType]string{record.ControlCommit: "COMMIT", record.ControlAbort: "ABORT"}

// KafkaIndexEntries returns the offset and time index entries Kafka's
// LogSegment holds for a segment with base offset base whose batches are
// batches (their positions, sizes, last offsets and max timestamps), with
// index.interval.bytes interval, once the segment was sealed or closed.
// LogSegment.append, batch by batch: the largest timestamp so far and the
// last offset of its batch are remembered; when more than interval bytes
// were appended since the last entry, an offset entry (the batch's last
// offset, its position) and a time entry (the largest timestamp so far
// and its batch's last offset, unless that timestamp is already the
// index's last) are added. Sealing (onBecomeInactiveSegment) and closing
// add the largest timestamp so far once more, if it is not the last
// entry's.
func KafkaIndexEntries(batches []DumpedBatch, base, interval int64) ([]IndexEntry, []TimeIndexEntry) {
	var offsets []IndexEntry
	var times []TimeIndexEntry
	last := TimeIndexEntry{Timestamp: -1, Offset: base}
	maybeAppend := func(ts, off int64) {
		if ts > last.Timestamp {
			last = TimeIndexEntry{Timestamp: ts, Offset: off}
			times = append(times, last)
		}
	}
	maxTs, maxOff := int64(-1), base
	since := int64(0)
	for _, bt := range batches {
		if bt.MaxTimestamp > maxTs {
			maxTs, maxOff = bt.MaxTimestamp, bt.LastOffset
		}
		if since > interval {
			offsets = append(offsets, IndexEntry{Offset: bt.LastOffset, Position: bt.Position})
			maybeAppend(maxTs, maxOff)
			since = 0
		}
		since += bt.Size
	}
	maybeAppend(maxTs, maxOff)
	return offsets, times
}
