package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// The fixture is a log directory laid out as a Kafka 4 broker lays it out
// (the layouts of the segment, index, internal/snapshot and
// internal/checkpoint package docs), built byte by byte from those
// descriptions by buildFixture, not by kafkalite's log package:
//
//	kafka-logdir/
//	  meta.properties, .kafka_cleanshutdown, recovery-point-offset-checkpoint,
//	  log-start-offset-checkpoint, replication-offset-checkpoint
//	  orders-0/   two segments (0 and 23), .index/.timeindex with Kafka's
//	              spacing rule (index.interval.bytes=1000), a .txnindex,
//	              two producer snapshots, leader epochs 0 and 1
//	  clicks-0/   a LogAppendTime topic
//
// orders-0 holds, by offset:
//
//	 0– 6  gzip batch, two gzip members (stdlib gzip; record/testdata/interop)
//	 7–13  transactional batch of producer 8001 (franz-go kmsg): headers,
//	       null key, tombstone, empty key and value, binary key
//	14–20  transactional zstd batch (klauspost zstd, streaming, no content
//	       size) re-stamped as producer 9001, epoch 0, sequence 0
//	21     ABORT marker of producer 8001 (franz-go kmsg)
//	22     COMMIT marker of producer 9001
//	23–29  snappy batch, two concatenated xerial streams (golang/snappy)
//	30–32  uncompressed batch: null key, null value, headers, empty key/value
//	33–34  lz4 batch of idempotent producer 7001 (kafkalite's record.Builder)
//	35–36  transactional batch of producer 9100, still open (no marker):
//	       the last stable offset is 35
//
// so read_committed hides 7–13 (aborted) and 35–36 (past the LSO).
const fixtureDir = "testdata/kafka-logdir"

// fixtureIndexInterval is the fixture topics' index.interval.bytes, small
// enough for the small batches to get index entries.
const fixtureIndexInterval = 1000

// interopBatch reads one batch of the record package's interop fixtures.
func interopBatch(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "record", "testdata", "interop", name))
	require.NoError(t, err)
	var hexText strings.Builder
	for line := range strings.SplitSeq(string(raw), "\n") {
		if !strings.HasPrefix(line, "#") {
			hexText.WriteString(strings.ReplaceAll(line, " ", ""))
		}
	}
	b, err := hex.DecodeString(hexText.String())
	require.NoError(t, err)
	return b
}

// place gives a batch its offset and leader epoch, as a broker does on
// append (neither is covered by the CRC).
func place(t *testing.T, batch []byte, baseOffset int64, epoch int32) []byte {
	t.Helper()
	require.NoError(t, record.SetBaseOffset(batch, baseOffset))
	require.NoError(t, record.SetPartitionLeaderEpoch(batch, epoch))
	return batch
}

// setProducer rewrites a batch's producer id, epoch and base sequence and
// recomputes its CRC (these fields are covered by it).
func setProducer(t *testing.T, batch []byte, pid int64, epoch int16, seq int32) {
	t.Helper()
	binary.BigEndian.PutUint64(batch[43:], uint64(pid))
	binary.BigEndian.PutUint16(batch[51:], uint16(epoch))
	binary.BigEndian.PutUint32(batch[53:], uint32(seq))
	crc, err := record.ComputeCRC(batch)
	require.NoError(t, err)
	binary.BigEndian.PutUint32(batch[17:], crc)
}

// ownBatch encodes records with kafkalite's record package.
func ownBatch(t *testing.T, h record.BatchHeader, recs []record.Record) []byte {
	t.Helper()
	b, err := record.AppendBatch(nil, h, record.DefaultLevel, recs)
	require.NoError(t, err)
	return b
}

// noProducer is the header of a batch from a producer without idempotence.
var noProducer = record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}

// writeSegment writes a segment's .log, .index and .timeindex as Kafka's
// LogSegment leaves them after a roll or a clean shutdown (the index
// package doc's "Filling rules"): an offset entry (batch last offset, batch
// position) and a time entry (max timestamp so far, its batch's last
// offset) whenever more than index.interval.bytes were appended since the
// last entries, the final time entry added on roll, both files trimmed.
func writeSegment(t *testing.T, dir string, base int64, batches [][]byte) {
	t.Helper()
	var log, offsetIndex, timeIndex []byte
	sinceLast := 0
	maxTs, maxTsOffset := int64(-1), base
	lastTs := int64(-1) // the time index's last entry
	addTime := func(ts, off int64) {
		if ts > lastTs {
			timeIndex = binary.BigEndian.AppendUint64(timeIndex, uint64(ts))
			timeIndex = binary.BigEndian.AppendUint32(timeIndex, uint32(off-base))
			lastTs = ts
		}
	}
	for _, b := range batches {
		h, err := record.Validate(b)
		require.NoError(t, err)
		if h.MaxTimestamp > maxTs {
			maxTs, maxTsOffset = h.MaxTimestamp, h.LastOffset()
		}
		if sinceLast > fixtureIndexInterval {
			offsetIndex = binary.BigEndian.AppendUint32(offsetIndex, uint32(h.LastOffset()-base))
			offsetIndex = binary.BigEndian.AppendUint32(offsetIndex, uint32(len(log)))
			addTime(maxTs, maxTsOffset)
			sinceLast = 0
		}
		sinceLast += len(b)
		log = append(log, b...)
	}
	addTime(maxTs, maxTsOffset)
	writeFile(t, filepath.Join(dir, segment.FileName(base, segment.LogSuffix)), log)
	writeFile(t, filepath.Join(dir, segment.FileName(base, segment.IndexSuffix)), offsetIndex)
	writeFile(t, filepath.Join(dir, segment.FileName(base, segment.TimeIndexSuffix)), timeIndex)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// topicID makes a fixed topic id from a seed byte.
func topicID(seed byte) checkpoint.TopicID {
	var id checkpoint.TopicID
	for i := range id {
		id[i] = seed + byte(i*17)
	}
	return id
}

// buildFixture writes the fixture log directory into dir.
func buildFixture(t *testing.T, dir string) {
	t.Helper()
	orders := filepath.Join(dir, "orders-0")

	// Segment 0, leader epoch 0: two overlapping transactions.
	aborted := place(t, interopBatch(t, "kmsg-uncompressed.hex"), 7, 0)
	committed := interopBatch(t, "zstd-no-content-size.hex")
	setProducer(t, committed, 9001, 0, 0)
	commit, err := record.AppendEndTxnMarkerBatch(nil, 22, 0, 9001, 0, 1700000061000,
		record.EndTxnMarker{Type: record.ControlCommit, CoordinatorEpoch: 12})
	require.NoError(t, err)
	writeSegment(t, orders, 0, [][]byte{
		place(t, interopBatch(t, "gzip-two-members.hex"), 0, 0),
		aborted,
		place(t, committed, 14, 0),
		place(t, interopBatch(t, "kmsg-abort-marker.hex"), 21, 0),
		commit,
	})
	txnEntry := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 8001, FirstOffset: 7, LastOffset: 21, LastStableOffset: 14})
	writeFile(t, filepath.Join(orders, segment.FileName(0, segment.TxnIndexSuffix)), txnEntry)

	// Segment 23, leader epoch 1.
	plain := ownBatch(t, noProducer, []record.Record{
		{Timestamp: 1700000100000, Value: []byte("no key"), Headers: []record.Header{
			{Key: []byte("source"), Value: []byte("fixture")}, {Key: []byte("null-header"), Value: nil}}},
		{Timestamp: 1700000100001, OffsetDelta: 1, Key: []byte("deleted-key")},
		{Timestamp: 1700000100002, OffsetDelta: 2, Key: []byte{}, Value: []byte{}},
	})
	idempotent := ownBatch(t, record.BatchHeader{
		PartitionLeaderEpoch: -1, ProducerID: 7001, ProducerEpoch: 0, BaseSequence: 0,
		Attributes: record.Attributes(0).WithCompression(record.LZ4),
	}, []record.Record{
		{Timestamp: 1700000200000, Key: []byte("k1"), Value: []byte(`{"lz4":1}`)},
		{Timestamp: 1700000200500, OffsetDelta: 1, Key: []byte("k2"), Value: []byte(`{"lz4":2}`)},
	})
	open := ownBatch(t, record.BatchHeader{
		PartitionLeaderEpoch: -1, ProducerID: 9100, ProducerEpoch: 3, BaseSequence: 0,
		Attributes: record.Attributes(0).WithTransactional(true),
	}, []record.Record{
		{Timestamp: 1700000300000, Key: []byte("pending"), Value: []byte("not yet committed")},
		{Timestamp: 1700000300001, OffsetDelta: 1, Key: []byte("pending"), Value: []byte("neither")},
	})
	writeSegment(t, orders, 23, [][]byte{
		place(t, interopBatch(t, "snappy-xerial-concat.hex"), 23, 1),
		place(t, plain, 30, 1),
		place(t, idempotent, 33, 1),
		place(t, open, 35, 1),
	})
	p8001 := snapshot.Entry{ProducerID: 8001, ProducerEpoch: 2, LastSequence: 256, LastOffset: 13, OffsetDelta: 6,
		Timestamp: 1700000060000, CoordinatorEpoch: 12, CurrentTxnFirstOffset: -1}
	p9001 := snapshot.Entry{ProducerID: 9001, ProducerEpoch: 0, LastSequence: 6, LastOffset: 20, OffsetDelta: 6,
		Timestamp: 1700000061000, CoordinatorEpoch: 12, CurrentTxnFirstOffset: -1}
	writeFile(t, filepath.Join(orders, snapshot.FileName(23)), snapshot.Encode(nil, []snapshot.Entry{p8001, p9001}))
	writeFile(t, filepath.Join(orders, snapshot.FileName(37)), snapshot.Encode(nil, []snapshot.Entry{
		{ProducerID: 7001, ProducerEpoch: 0, LastSequence: 1, LastOffset: 34, OffsetDelta: 1,
			Timestamp: 1700000200500, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
		p8001, p9001,
		{ProducerID: 9100, ProducerEpoch: 3, LastSequence: 1, LastOffset: 36, OffsetDelta: 1,
			Timestamp: 1700000300001, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 35},
	}))
	writeFile(t, filepath.Join(orders, "leader-epoch-checkpoint"), []byte("0\n2\n0 0\n1 23\n"))
	writeFile(t, filepath.Join(orders, "partition.metadata"), []byte("version: 0\ntopic_id: "+topicID(3).String()))

	// clicks-0: message.timestamp.type=LogAppendTime.
	clicks := filepath.Join(dir, "clicks-0")
	stamped := ownBatch(t, noProducer, []record.Record{
		{Timestamp: 1700000250000, Key: []byte("page"), Value: []byte("/home")},
		{Timestamp: 1700000250100, OffsetDelta: 1, Key: []byte("page"), Value: []byte("/cart")},
	})
	require.NoError(t, record.SetLogAppendTime(stamped, 1700000260000))
	writeSegment(t, clicks, 0, [][]byte{
		place(t, interopBatch(t, "kmsg-log-append-time.hex"), 0, 0),
		place(t, stamped, 3, 0),
	})
	writeFile(t, filepath.Join(clicks, segment.FileName(5, snapshot.Suffix)), snapshot.Encode(nil, nil))
	writeFile(t, filepath.Join(clicks, "leader-epoch-checkpoint"), []byte("0\n1\n0 0\n"))
	writeFile(t, filepath.Join(clicks, "partition.metadata"), []byte("version: 0\ntopic_id: "+topicID(5).String()))

	// The log directory's own files.
	writeFile(t, filepath.Join(dir, "meta.properties"), []byte(fmt.Sprintf(
		"#\n#Tue Nov 14 22:13:20 UTC 2023\nnode.id=1\ndirectory.id=%s\nversion=1\ncluster.id=%s\n", topicID(11), topicID(7))))
	writeFile(t, filepath.Join(dir, ".kafka_cleanshutdown"), []byte(`{"version":0,"brokerEpoch":42}`))
	offsets := []byte("0\n2\norders 0 37\nclicks 0 5\n")
	writeFile(t, filepath.Join(dir, "recovery-point-offset-checkpoint"), offsets)
	writeFile(t, filepath.Join(dir, "replication-offset-checkpoint"), offsets)
	writeFile(t, filepath.Join(dir, "log-start-offset-checkpoint"), []byte("0\n0\n"))
}

// TestFixture checks that the fixture in testdata is what buildFixture
// writes, byte for byte; with -update it rewrites it.
func TestFixture(t *testing.T) {
	if *update {
		require.NoError(t, os.RemoveAll(fixtureDir))
		buildFixture(t, fixtureDir)
	}
	want := t.TempDir()
	buildFixture(t, want)
	require.Equal(t, treeFiles(t, want), treeFiles(t, fixtureDir), "testdata/kafka-logdir is stale: go test ./examples/dumplog -update")
}

// treeFiles returns every file under dir by relative path, with its bytes.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := make(map[string]string)
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}
