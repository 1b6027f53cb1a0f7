package kafkacheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The parser's tests run on lines DumpLogSegments 4.4.0 printed for
// kafkalite's directories; they need no Java.

func ptr(s string) *string { return &s }

func TestParseDumpLog(t *testing.T) {
	stdout := `Dumping /d/t-0/00000000000000000018.log
Log starting offset: 18
baseOffset: 18 lastOffset: 20 count: 3 baseSequence: 0 lastSequence: 2 producerId: 1 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1796161391880 size: 134 magic: 2 compresscodec: lz4 crc: 1958890878 isvalid: true
| offset: 18 CreateTime: 1796161391849 keySize: -1 valueSize: 4 sequence: 0 headerKeys: [h1,h2] payload: v0 0
| offset: 19 CreateTime: 1796161391849 keySize: 0 valueSize: 0 sequence: 1 headerKeys: [] key:  payload: 
| offset: 20 CreateTime: 1796161391880 keySize: 9 valueSize: -1 sequence: 2 headerKeys: [dup,dup] key: key three
baseOffset: 21 lastOffset: 21 count: 1 baseSequence: -1 lastSequence: -1 producerId: 1 producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong[1796162319466] position: 134 LogAppendTime: 1796161391883 size: 78 magic: 2 compresscodec: none crc: 3696983397 isvalid: true
| offset: 21 LogAppendTime: 1796161391883 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 0
Dumping /d/t-0/00000000000000000018.index
offset: 19 position: 71
Dumping /d/t-0/00000000000000000000.index
/d/t-0/00000000000000000000.index is empty.
Dumping /d/t-0/00000000000000000018.timeindex
timestamp: 1796161391883 offset: 19
/d/t-0/00000000000000000018.timeindex passed sanity check.
Dumping /d/t-0/00000000000000000018.txnindex
version: 0 producerId: 1 firstOffset: 18 lastOffset: 19 lastStableOffset: 20
Dumping /d/t-0/00000000000000000022.snapshot
producerId: 0 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 1796161391867 firstSequence: 15 lastSequence: 17 lastOffset: 17 offsetDelta: 2 timestamp: 1796161391867
producerId: 1 producerEpoch: 2 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong[20] lastTimestamp: 1796161391889
`
	stderr := `SLF4J: Failed to load class "org.slf4j.impl.StaticLoggerBinder".
Non-consecutive offsets in /d/t-0/00000000000000000018.log
  -1 is followed by 18
Mismatches in :/d/t-0/00000000000000000018.index
  Index offset: 19, log offset: 20
`
	out, err := ParseDump(stdout, stderr, false)
	require.NoError(t, err)
	require.Len(t, out.Files, 6)

	log := out.File("/d/t-0/00000000000000000018.log")
	require.Equal(t, int64(18), log.StartOffset)
	require.Len(t, log.Batches, 2)
	b0 := log.Batches[0]
	require.Equal(t, DumpedBatch{BaseOffset: 18, LastOffset: 20, Count: 3, BaseSequence: 0, LastSequence: 2, ProducerID: 1,
		IsTransactional: true, DeleteHorizonMs: -1, TimestampType: "CreateTime", MaxTimestamp: 1796161391880, Size: 134, Magic: 2,
		CompressCodec: "lz4", CRC: 1958890878, IsValid: true, Records: b0.Records}, b0)
	require.Equal(t, []DumpedRecord{
		{Offset: 18, TimestampType: "CreateTime", Timestamp: 1796161391849, KeySize: -1, ValueSize: 4, Sequence: 0,
			HeaderKeys: []string{"h1", "h2"}, Payload: ptr("v0 0")},
		{Offset: 19, TimestampType: "CreateTime", Timestamp: 1796161391849, KeySize: 0, ValueSize: 0, Sequence: 1,
			Key: ptr(""), Payload: ptr("")},
		{Offset: 20, TimestampType: "CreateTime", Timestamp: 1796161391880, KeySize: 9, ValueSize: -1, Sequence: 2,
			HeaderKeys: []string{"dup", "dup"}, Key: ptr("key three")},
	}, b0.Records)
	b1 := log.Batches[1]
	require.Equal(t, int64(1796162319466), b1.DeleteHorizonMs)
	require.Equal(t, "LogAppendTime", b1.TimestampType)
	require.True(t, b1.IsControl)
	require.Equal(t, []DumpedRecord{{Offset: 21, TimestampType: "LogAppendTime", Timestamp: 1796161391883, KeySize: 4, ValueSize: 6,
		Sequence: -1, EndTxnMarker: "ABORT"}}, b1.Records)

	require.Equal(t, []IndexEntry{{19, 71}}, out.File("/d/t-0/00000000000000000018.index").IndexEntries)
	require.True(t, out.File("/d/t-0/00000000000000000000.index").Empty)
	ti := out.File("/d/t-0/00000000000000000018.timeindex")
	require.Equal(t, []TimeIndexEntry{{1796161391883, 19}}, ti.TimeEntries)
	require.True(t, ti.SanityPassed)
	require.Equal(t, []AbortedTxn{{ProducerID: 1, FirstOffset: 18, LastOffset: 19, LastStableOffset: 20}},
		out.File("/d/t-0/00000000000000000018.txnindex").Aborted)
	require.Equal(t, []SnapshotEntry{
		{ProducerID: 0, ProducerEpoch: 0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1, LastTimestamp: 1796161391867,
			FirstSequence: 15, LastSequence: 17, LastOffset: 17, OffsetDelta: 2},
		{ProducerID: 1, ProducerEpoch: 2, CoordinatorEpoch: 0, CurrentTxnFirstOffset: 20, LastTimestamp: 1796161391889,
			FirstSequence: -1, LastSequence: -1, LastOffset: -1},
	}, out.File("/d/t-0/00000000000000000022.snapshot").Producers)

	require.Equal(t, map[string][][2]int64{"/d/t-0/00000000000000000018.log": {{-1, 18}}}, out.NonConsecutive)
	require.Equal(t, []string{"Mismatches in :/d/t-0/00000000000000000018.index", "  Index offset: 19, log offset: 20"}, out.Problems,
		"every report but the non-consecutive offsets is a problem, SLF4J's notice is not")
}

func TestParseDumpDecoded(t *testing.T) {
	stdout := `Dumping /d/__consumer_offsets-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1796161391880 size: 107 magic: 2 compresscodec: none crc: 4156632378 isvalid: true
| offset: 0 CreateTime: 1796161391880 keySize: 13 valueSize: 26 sequence: 0 headerKeys: [] key: {"type":"1","data":{"group":"g1","topic":"t","partition":0}} payload: {"version":"4","data":{"offset":5,"leaderEpoch":0,"metadata":"a payload: in it","commitTimestamp":1796161391880}}
| offset: 1 CreateTime: 1796161391880 keySize: 13 valueSize: -1 sequence: 1 headerKeys: [] key: {"type":"1","data":{"group":"g1","topic":"t","partition":1}} payload: <DELETE>
`
	out, err := ParseDump(stdout, "", true)
	require.NoError(t, err)
	recs := out.Files[0].Batches[0].Records
	require.Equal(t, ptr(`{"type":"1","data":{"group":"g1","topic":"t","partition":0}}`), recs[0].Key)
	require.Equal(t, ptr(`{"version":"4","data":{"offset":5,"leaderEpoch":0,"metadata":"a payload: in it","commitTimestamp":1796161391880}}`), recs[0].Payload,
		"a decoded key ends at the first \" payload: \"")
	require.Equal(t, ptr("<DELETE>"), recs[1].Payload)
	require.Empty(t, out.Problems)
}

func TestParseDumpRefusesWhatItDoesNotKnow(t *testing.T) {
	for name, stdout := range map[string]string{
		"a line before any file": "baseOffset: 0\n",
		"a batch field renamed": "Dumping /d/t-0/00000000000000000000.log\n" +
			"baseOffset: 0 lastOffset: 0 records: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 70 magic: 2 compresscodec: none crc: 1 isvalid: true\n",
		"a payload shorter than valueSize": "Dumping /d/t-0/00000000000000000000.log\n" +
			"baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1 size: 70 magic: 2 compresscodec: none crc: 1 isvalid: true\n" +
			"| offset: 0 CreateTime: 1 keySize: -1 valueSize: 5 sequence: 0 headerKeys: [] payload: abc\n",
		"an index line in a snapshot": "Dumping /d/t-0/00000000000000000005.snapshot\noffset: 5 position: 0\n",
		"a txnindex of another version": "Dumping /d/t-0/00000000000000000000.txnindex\n" +
			"version: 1 producerId: 1 firstOffset: 18 lastOffset: 19 lastStableOffset: 20\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseDump(stdout, "", false)
			require.Error(t, err)
		})
	}
}

func TestParseDumpInvalidBytesAreAProblem(t *testing.T) {
	out, err := ParseDump("Dumping /d/t-0/00000000000000000000.log\nLog starting offset: 0\nFound 3 invalid bytes at the end of 00000000000000000000.log\n", "", false)
	require.NoError(t, err)
	require.Equal(t, []string{"Found 3 invalid bytes at the end of 00000000000000000000.log"}, out.Problems)
}

func TestKafkaIndexEntries(t *testing.T) {
	// Kafka's spacing: an entry for the first batch after more than
	// interval bytes, the time entry only when the largest timestamp grew,
	// and the largest timestamp once more at the end.
	batches := []DumpedBatch{
		{LastOffset: 1, Position: 0, Size: 60, MaxTimestamp: 100},
		{LastOffset: 3, Position: 60, Size: 60, MaxTimestamp: 90},
		{LastOffset: 4, Position: 120, Size: 60, MaxTimestamp: 80},
		{LastOffset: 6, Position: 180, Size: 60, MaxTimestamp: 150},
		{LastOffset: 9, Position: 240, Size: 60, MaxTimestamp: 200},
	}
	idx, times := KafkaIndexEntries(batches, 0, 100)
	require.Equal(t, []IndexEntry{{4, 120}, {9, 240}}, idx)
	require.Equal(t, []TimeIndexEntry{{100, 1}, {200, 9}}, times)
	idx, times = KafkaIndexEntries(batches[:1], 0, 100)
	require.Empty(t, idx)
	require.Equal(t, []TimeIndexEntry{{100, 1}}, times, "a closed segment holds its largest timestamp")
}
