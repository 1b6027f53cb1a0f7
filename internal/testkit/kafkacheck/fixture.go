package kafkacheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// The topics WriteFeatureDir creates.
const (
	TopicCodecs     = "codecs"     // partition i written with codec i: none, gzip, snappy, lz4, zstd
	TopicLogAppend  = "logappend"  // message.timestamp.type=LogAppendTime
	TopicRecompress = "recompress" // compression.type=zstd, written by a gzip producer
	TopicSegments   = "segments"   // tiny segments and indexes: many rolls
	TopicCompacted  = "compacted"  // cleanup.policy=compact, cleaned twice
	TopicTxn        = "txn"        // transactions
	OffsetsTopic    = "__consumer_offsets"
	TxnStateTopic   = "__transaction_state"
	ShareStateTopic = "__share_group_state"
)

// The consumer groups and transactional ids WriteFeatureDir uses.
const (
	GroupSubscribed = "g1"    // joins by Subscribe, commits twice, leaves
	GroupTxn        = "g-txn" // offsets sent to transactions (one committed, one aborted, one committed)
	TxnA            = "txn-a" // three transactions on "txn", then a second instance (epoch 1) with one more
	TxnB            = "txn-b" // one transaction, aborted while txn-a's is open
)

// DeleteRetentionMs is delete.retention.ms of TopicCompacted.
const DeleteRetentionMs = 60_000

// featureCodecs are the codecs in partition order of TopicCodecs.
var featureCodecs = []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd}

// WriteFeatureDir writes a log directory at path (which must not exist or
// be empty) through kafkalite's public API, closes it cleanly, and returns
// what it holds. Every feature of the format is in it:
//
//   - codecs: 5 partitions, partition i written with codec i (none, gzip,
//     snappy, lz4, zstd) by an idempotent producer and by one without
//     idempotence (acks=1): null and empty keys and values, headers (none,
//     several, null and empty values, a repeated key), keys and values with
//     spaces, timestamps out of order inside a batch, a batch of 200
//     records, a 100 KiB value (more than every codec's block);
//     segment.bytes=106496, so it rolls after the 100 KiB batch.
//   - logappend: 2 partitions (none, lz4), message.timestamp.type=
//     LogAppendTime; the records' own timestamps are a day old.
//   - recompress: compression.type=zstd written by a gzip producer.
//   - segments: segment.bytes=1024, index.interval.bytes=100,
//     segment.index.bytes=40: many segments, rolled by size and by full
//     indexes, with several index entries each.
//   - compacted: 2 partitions (none, zstd), cleanup.policy=compact,
//     delete.retention.ms=DeleteRetentionMs, cleaned twice (Dir.CleanNow),
//     the second time after the first round's delete horizon passed:
//     removed records and batches, a tombstone removed after its horizon
//     from a batch that keeps its horizon, a new tombstone with its
//     horizon, an emptied batch kept for its producer, an aborted
//     transaction's data removed and its marker given a horizon.
//   - txn: 2 partitions; transactions of TxnA committed and aborted, TxnB
//     aborted while TxnA's is open (its .txnindex entry's last stable
//     offset is TxnA's first offset), an idempotent producer between them,
//     a segment rolled inside both transactions, and a second TxnA producer
//     (epoch 1); TxnA sends GroupTxn's offsets to its transactions.
//   - __consumer_offsets (1 partition): GroupSubscribed's metadata (join,
//     then empty after it left), its two commits, GroupTxn's transactional
//     commits and their markers.
//   - __transaction_state (1 partition): every state of every transactional
//     id.
//
// For a broker (serving the same partitions): meta.properties has
// kafkalite's node.id 0; __consumer_offsets and __transaction_state have
// one partition each, as the harness's broker configures them; the topics'
// properties are in Expected.Topics.
//
// Producer snapshots are written at every roll and at close. Every topic
// has retention.ms=-1, and timestamps are near the time of the call, so a
// broker given the partitions deletes nothing. The Dir's clock is a fake
// that moves only when the builder moves it, so every timestamp the Dir
// stamps (LogAppendTime, markers, coordinator records, delete horizons) is
// known.
func WriteFeatureDir(t testing.TB, path string) *Expected {
	t.Helper()
	f := newFixture(t, path)
	f.writeCodecs()
	f.writeLogAppend()
	f.writeRecompress()
	f.writeSegments()
	f.writeCompacted()
	f.writeTransactions()
	f.writeGroup()
	f.close()
	return f.exp
}

// fixtureClock is the Dir's clock: it stands still until the builder moves
// it.
type fixtureClock struct{ ms atomic.Int64 }

func (c *fixtureClock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

func (c *fixtureClock) nowMs() int64 { return c.ms.Load() }

// advance moves the clock by ms milliseconds and returns the new time.
func (c *fixtureClock) advance(ms int64) int64 { return c.ms.Add(ms) }

type fixture struct {
	t     testing.TB
	ctx   context.Context
	d     *log.Dir
	clock *fixtureClock
	exp   *Expected
	// open holds each partition's open transactions: producer id → first
	// offset, for the last stable offset of .txnindex entries.
	open map[TopicPartition]map[int64]int64
	// txnState is each transactional id's latest state record.
	txnState map[string]*TxnState
	// groupTxnPending holds GroupTxn's offsets sent to the open
	// transaction of each transactional id.
	groupTxnPending map[string]map[TopicPartition]CommittedOffset
	producers       []*fxProducer
}

func newFixture(t testing.TB, path string) *fixture {
	clock := &fixtureClock{}
	clock.ms.Store(time.Now().Truncate(time.Second).UnixMilli())
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	cfg.CleanerEnable = false // cleaning happens when the builder says (CleanNow)
	cfg.Now = clock.Now
	ctx := context.Background()
	d, err := log.Open(ctx, path, cfg)
	require.NoError(t, err)
	f := &fixture{t: t, ctx: ctx, d: d, clock: clock, open: map[TopicPartition]map[int64]int64{},
		txnState: map[string]*TxnState{}, groupTxnPending: map[string]map[TopicPartition]CommittedOffset{},
		exp: &Expected{Topics: map[string]TopicSpec{}, Partitions: map[TopicPartition]*PartitionContent{},
			Groups: map[string]map[TopicPartition]CommittedOffset{}, Transactions: map[string]TxnState{}}}
	t.Cleanup(func() { _ = d.Close() })
	return f
}

func (f *fixture) createTopic(name string, partitions int32, props map[string]string) {
	f.t.Helper()
	props["retention.ms"] = "-1"
	_, err := f.d.CreateTopic(f.ctx, name, partitions, props)
	require.NoError(f.t, err)
	f.exp.Topics[name] = TopicSpec{Partitions: partitions, Config: props}
	for p := range partitions {
		f.exp.Partitions[TopicPartition{name, p}] = &PartitionContent{}
	}
}

func (f *fixture) partition(tp TopicPartition) *PartitionContent {
	p := f.exp.Partitions[tp]
	if p == nil {
		p = &PartitionContent{}
		f.exp.Partitions[tp] = p
	}
	return p
}

func (f *fixture) log(tp TopicPartition) *log.Log {
	f.t.Helper()
	l, err := f.d.Partition(tp.Topic, tp.Partition)
	require.NoError(f.t, err)
	return l
}

// appendBatch records an appended batch in the expected content.
func (f *fixture) appendBatch(tp TopicPartition, b Batch) {
	p := f.partition(tp)
	require.Equal(f.t, p.LogEndOffset, b.BaseOffset, "%s: the batch follows the previous one", tp)
	p.Batches = append(p.Batches, b)
	p.Appended = append(p.Appended, b)
	p.LogEndOffset = b.LastOffset + 1
}

// checkEnds checks, after a step, that every partition ends where the
// builder's expectation does: no batch was written that the builder did not
// expect, none is missing.
func (f *fixture) checkEnds() {
	f.t.Helper()
	for tp, p := range f.exp.Partitions {
		l, err := f.d.Partition(tp.Topic, tp.Partition)
		if err != nil && p.LogEndOffset == 0 {
			continue // an internal topic not used yet
		}
		require.NoError(f.t, err)
		require.Equal(f.t, p.LogEndOffset, l.LogEndOffset(), "%s: the builder's log end offset is the log's", tp)
	}
}

// roll seals tp's active segment.
func (f *fixture) roll(tp TopicPartition) {
	f.t.Helper()
	require.NoError(f.t, f.log(tp).Roll(context.Background()))
}

// fxProducer is a producer of the fixture and what the log must hold of it.
type fxProducer struct {
	f             *fixture
	p             *producer.Producer
	codec         record.Compression
	idempotent    bool
	transactional string
	id            int64 // learned from its first batch
	epoch         int16
	seq           map[TopicPartition]int32
	// the open transaction: its partitions with the first offset of its
	// data there, and whether it carries offsets
	txnFirst   map[TopicPartition]int64
	txnOffsets bool
}

// newProducer starts a producer: idempotent unless acks1, transactional with
// a non-empty transactionalID.
func (f *fixture) newProducer(codec record.Compression, acks1 bool, transactionalID string) *fxProducer {
	f.t.Helper()
	cfg := producer.DefaultConfig()
	cfg.CompressionType = codec
	// Batches close only when the builder flushes: each flush is one batch
	// per partition.
	cfg.Linger = time.Hour
	cfg.DeliveryTimeout = 2 * time.Hour
	cfg.BatchSize = 1 << 20
	cfg.MaxRequestSize = 2 << 20
	if acks1 {
		cfg.Acks, cfg.EnableIdempotence = producer.AcksLeader, false
	}
	cfg.TransactionalID = transactionalID
	p, err := producer.New(f.d, cfg)
	require.NoError(f.t, err)
	s := &fxProducer{f: f, p: p, codec: codec, idempotent: !acks1, transactional: transactionalID, id: -1, epoch: -1,
		seq: map[TopicPartition]int32{}}
	if s.idempotent && transactionalID == "" {
		s.epoch = 0
	}
	f.producers = append(f.producers, s)
	return s
}

func (s *fxProducer) close() {
	s.f.t.Helper()
	require.NoError(s.f.t, s.p.Close(s.f.ctx))
	s.f.producers = slices.DeleteFunc(s.f.producers, func(o *fxProducer) bool { return o == s })
}

// fxRecord is a record to send; ts is its CreateTime relative to the clock.
type fxRecord struct {
	key, value []byte
	headers    []record.Header
	ts         int64
}

// batch sends recs to tp and flushes them: one batch. It returns the
// expected batch, as appended.
func (s *fxProducer) batch(tp TopicPartition, recs ...fxRecord) Batch {
	f := s.f
	f.t.Helper()
	topic := f.exp.Topics[tp.Topic]
	logAppendTime := topic.Config["message.timestamp.type"] == "LogAppendTime"
	now := f.clock.nowMs()
	futures := make([]producer.Future, len(recs))
	for i, r := range recs {
		fut, err := s.p.Send(f.ctx, &producer.Record{Topic: tp.Topic, Partition: &tp.Partition, Key: r.key, Value: r.value,
			Headers: r.headers, Timestamp: time.UnixMilli(now + r.ts)}, nil)
		require.NoError(f.t, err)
		futures[i] = fut
	}
	_, inTxn := s.txnFirst[tp]
	first := s.transactional != "" && !inTxn
	require.NoError(f.t, s.p.Flush(f.ctx))
	b := Batch{BaseSequence: -1, ProducerID: s.id, ProducerEpoch: s.epoch, Transactional: s.transactional != "",
		DeleteHorizonMs: -1, Codec: s.codec, MaxTimestamp: -1}
	if c := topic.Config["compression.type"]; c != "" && c != "producer" {
		codec, err := record.ParseCompression(c)
		require.NoError(f.t, err)
		b.Codec = codec
	}
	if logAppendTime {
		b.TimestampType = record.LogAppendTime
	}
	for i, fut := range futures {
		md, err := fut.Wait(f.ctx)
		require.NoError(f.t, err)
		r := Record{Offset: md.Offset, Timestamp: now + recs[i].ts, Key: recs[i].key, Value: recs[i].value, Headers: recs[i].headers}
		if logAppendTime {
			require.Equal(f.t, now, md.Timestamp.UnixMilli(), "LogAppendTime is the Dir's clock")
			r.Timestamp = now
		}
		if i == 0 {
			b.BaseOffset = md.Offset
		} else {
			require.Equal(f.t, b.BaseOffset+int64(i), md.Offset, "%s: the records of one flush are one batch", tp)
		}
		b.MaxTimestamp = max(b.MaxTimestamp, r.Timestamp)
		b.Records = append(b.Records, r)
	}
	b.LastOffset = b.BaseOffset + int64(len(recs)) - 1
	if s.idempotent {
		if s.id < 0 {
			s.id = f.producerIDAt(tp, b.BaseOffset)
		}
		b.ProducerID = s.id
		b.BaseSequence = s.seq[tp]
		s.seq[tp] += int32(len(recs))
	}
	if s.transactional != "" {
		if first {
			s.txnFirst[tp] = b.BaseOffset
			f.openTxn(tp, s.id, b.BaseOffset)
			f.txnRecord(s.transactional, "Ongoing", func(st *TxnState) { st.addPartition(tp) })
		}
	}
	f.appendBatch(tp, b)
	return b
}

// producerIDAt returns the producer id of the batch at offset, as the log
// hands it out: the one value the builder does not choose.
func (f *fixture) producerIDAt(tp TopicPartition, offset int64) int64 {
	f.t.Helper()
	id := int64(-2)
	_, err := f.log(tp).ReadRecords(offset, 1, func(_ *record.Record, h *record.BatchHeader) error {
		if id == -2 {
			id = h.ProducerID
		}
		return nil
	})
	require.NoError(f.t, err)
	require.GreaterOrEqual(f.t, id, int64(0), "%s: an idempotent producer's batch at %d has a producer id", tp, offset)
	for _, o := range f.producers {
		require.False(f.t, o.id == id && o.transactional == "", "producer id %d is handed out once", id)
	}
	return id
}

// initTransactions runs InitTransactions: the id gets a producer id (the
// same as before for a known id) and the next epoch, in an Empty record.
func (s *fxProducer) initTransactions() {
	f := s.f
	f.t.Helper()
	require.NoError(f.t, s.p.InitTransactions(f.ctx))
	prev := f.txnState[s.transactional]
	s.id, s.epoch = f.txnProducerID(s.transactional), 0
	if prev != nil {
		require.Equal(f.t, prev.ProducerID, s.id, "%s keeps its producer id", s.transactional)
		s.epoch = prev.ProducerEpoch + 1
	}
	s.seq = map[TopicPartition]int32{} // a new epoch starts the sequences again
	f.txnRecord(s.transactional, "Empty", func(st *TxnState) {
		st.ProducerID, st.ProducerEpoch, st.Partitions, st.StartTimeMs = s.id, s.epoch, nil, -1
	})
	f.checkEnds()
}

// txnProducerID returns the producer id the coordinator gave id, from the
// last record of __transaction_state: its key names id (TransactionLogKey:
// version int16, then the id as an int16-length string) and its value
// starts with the producer id (TransactionLogValue: version int16, then
// ProducerId int64). The producer id is the one value the builder does not
// choose.
func (f *fixture) txnProducerID(id string) int64 {
	f.t.Helper()
	l := f.log(TopicPartition{TxnStateTopic, 0})
	pid := int64(-1)
	_, err := l.ReadRecords(l.LogEndOffset()-1, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
		require.Equal(f.t, append([]byte{0, 0, 0, byte(len(id))}, id...), r.Key, "the last state record is %s's", id)
		require.GreaterOrEqual(f.t, len(r.Value), 10)
		pid = int64(binary.BigEndian.Uint64(r.Value[2:10]))
		return nil
	})
	require.NoError(f.t, err)
	require.GreaterOrEqual(f.t, pid, int64(0))
	return pid
}

func (s *fxProducer) begin() {
	s.f.t.Helper()
	require.NoError(s.f.t, s.p.BeginTransaction())
	s.txnFirst, s.txnOffsets = map[TopicPartition]int64{}, false
}

// sendGroupTxnOffsets sends GroupTxn's offsets to the open transaction:
// __consumer_offsets-0 joins the transaction (an Ongoing record) and the
// offsets are written there, in one transactional batch.
func (s *fxProducer) sendGroupTxnOffsets(c *consumer.Consumer, offsets map[TopicPartition]CommittedOffset) {
	f := s.f
	f.t.Helper()
	in := map[consumer.TopicPartition]consumer.OffsetAndMetadata{}
	for tp, o := range offsets {
		in[consumer.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = consumer.OffsetAndMetadata{
			Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
	}
	require.NoError(f.t, s.p.SendOffsetsToTransaction(f.ctx, in, c.GroupMetadata()))
	otp := TopicPartition{OffsetsTopic, 0}
	if !s.txnOffsets {
		s.txnOffsets = true
		f.txnRecord(s.transactional, "Ongoing", func(st *TxnState) { st.addPartition(otp) })
	}
	p := f.partition(otp)
	f.openTxn(otp, s.id, p.LogEndOffset)
	if _, ok := s.txnFirst[otp]; !ok {
		s.txnFirst[otp] = p.LogEndOffset
	}
	f.coordinatorBatch(otp, s.id, s.epoch, offsetCommits(GroupTxn, offsets, f.clock.nowMs()))
	if f.groupTxnPending[s.transactional] == nil {
		f.groupTxnPending[s.transactional] = map[TopicPartition]CommittedOffset{}
	}
	for tp, o := range offsets {
		f.groupTxnPending[s.transactional][tp] = o
	}
}

// end commits or aborts the open transaction: Prepare, a marker in each of
// its partitions, Complete.
func (s *fxProducer) end(commit bool) {
	f := s.f
	f.t.Helper()
	status, typ, endTxn := "Abort", record.ControlAbort, s.p.AbortTransaction
	if commit {
		status, typ, endTxn = "Commit", record.ControlCommit, s.p.CommitTransaction
	}
	require.NoError(f.t, endTxn(f.ctx))
	// The producer is a transactions version 2 client: the end bumps the
	// epoch, which the prepared state, the markers and the next
	// transaction's batches (their sequences from 0) carry.
	s.epoch++
	s.seq = map[TopicPartition]int32{}
	f.txnRecord(s.transactional, "Prepare"+status, func(st *TxnState) { st.ProducerEpoch = s.epoch })
	parts := make([]TopicPartition, 0, len(s.txnFirst))
	for tp := range s.txnFirst {
		parts = append(parts, tp)
	}
	slices.SortFunc(parts, func(a, b TopicPartition) int { return strings.Compare(a.String(), b.String()) })
	for _, tp := range parts {
		f.marker(tp, s.id, s.epoch, typ, s.txnFirst[tp])
	}
	f.txnRecord(s.transactional, "Complete"+status, func(st *TxnState) { st.Partitions = map[string][]int32{} })
	if commit {
		if f.exp.Groups[GroupTxn] == nil && len(f.groupTxnPending[s.transactional]) > 0 {
			f.exp.Groups[GroupTxn] = map[TopicPartition]CommittedOffset{}
		}
		for tp, o := range f.groupTxnPending[s.transactional] {
			f.exp.Groups[GroupTxn][tp] = o
		}
	}
	delete(f.groupTxnPending, s.transactional)
	s.txnFirst, s.txnOffsets = nil, false
	f.checkEnds()
}

// marker records the COMMIT or ABORT marker the coordinator wrote to tp
// for the transaction of producer id whose data there starts at first.
func (f *fixture) marker(tp TopicPartition, id int64, epoch int16, typ record.ControlType, first int64) {
	p := f.partition(tp)
	now := f.clock.nowMs()
	off := p.LogEndOffset
	delete(f.open[tp], id)
	f.appendBatch(tp, Batch{BaseOffset: off, LastOffset: off, BaseSequence: -1, ProducerID: id, ProducerEpoch: epoch,
		Transactional: true, Control: true, DeleteHorizonMs: -1, MaxTimestamp: now,
		Records: []Record{{Offset: off, Timestamp: now, Marker: &Marker{Type: typ}}}})
	if typ == record.ControlAbort {
		// Kafka's ProducerStateManager.lastStableOffset: the first offset
		// of the earliest transaction still open here, else the offset
		// after the marker.
		lso := off + 1
		for _, o := range f.open[tp] {
			lso = min(lso, o)
		}
		p.Aborted = append(p.Aborted, AbortedTxn{ProducerID: id, FirstOffset: first, LastOffset: off, LastStableOffset: lso})
	}
}

func (f *fixture) openTxn(tp TopicPartition, id, first int64) {
	if f.open[tp] == nil {
		f.open[tp] = map[int64]int64{}
	}
	if _, ok := f.open[tp][id]; !ok {
		f.open[tp][id] = first
	}
}

// txnRecord records the __transaction_state record of a transactional
// id's next state: the previous state changed by change, stamped with the
// clock. Kafka's TransactionMetadata: the start time is set when the first
// partition joins an Empty or completed transaction, the Complete states
// keep it and hold no partitions, Empty holds null.
func (f *fixture) txnRecord(id, status string, change func(*TxnState)) {
	f.t.Helper()
	now := f.clock.nowMs()
	st := TxnState{TransactionalID: id, TimeoutMs: 60000, ProducerID: -1, StartTimeMs: -1}
	if prev := f.txnState[id]; prev != nil {
		st = *prev
		st.Partitions = clonePartitions(prev.Partitions)
	}
	if status == "Ongoing" && st.Status != "Ongoing" {
		st.StartTimeMs, st.Partitions = now, map[string][]int32{}
	}
	if status == "Ongoing" {
		st.ClientTransactionVersion = 2 // the in-process producer's adds are version 2's
	}
	st.Status, st.LastUpdateTimeMs = status, now
	if change != nil {
		change(&st)
	}
	f.txnState[id] = &st
	tp := TopicPartition{TxnStateTopic, 0}
	p := f.partition(tp)
	off := p.LogEndOffset
	stCopy := st
	f.appendBatch(tp, Batch{BaseOffset: off, LastOffset: off, BaseSequence: -1, ProducerID: -1, ProducerEpoch: -1,
		DeleteHorizonMs: -1, MaxTimestamp: now, Records: []Record{{Offset: off, Timestamp: now, Txn: &stCopy}}})
	f.exp.Transactions[id] = st
}

func (st *TxnState) addPartition(tp TopicPartition) {
	if st.Partitions == nil {
		st.Partitions = map[string][]int32{}
	}
	if !slices.Contains(st.Partitions[tp.Topic], tp.Partition) {
		st.Partitions[tp.Topic] = append(st.Partitions[tp.Topic], tp.Partition)
		slices.Sort(st.Partitions[tp.Topic])
	}
}

func clonePartitions(m map[string][]int32) map[string][]int32 {
	if m == nil {
		return nil
	}
	out := make(map[string][]int32, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

// coordinatorBatch records a batch the group coordinator wrote to tp: one
// batch per request, base sequence 0 (Kafka's CoordinatorRuntime builds
// every batch with baseSequence 0), transactional with a producer id.
func (f *fixture) coordinatorBatch(tp TopicPartition, id int64, epoch int16, recs []Record) {
	f.t.Helper()
	p := f.partition(tp)
	now := f.clock.nowMs()
	b := Batch{BaseOffset: p.LogEndOffset, LastOffset: p.LogEndOffset + int64(len(recs)) - 1, BaseSequence: 0,
		ProducerID: id, ProducerEpoch: epoch, Transactional: id >= 0, DeleteHorizonMs: -1, MaxTimestamp: now}
	for i, r := range recs {
		r.Offset, r.Timestamp = b.BaseOffset+int64(i), now
		b.Records = append(b.Records, r)
	}
	f.appendBatch(tp, b)
}

// offsetCommits returns the offset commit records of a commit, sorted by
// topic and partition.
func offsetCommits(group string, offsets map[TopicPartition]CommittedOffset, now int64) []Record {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	out := make([]Record, len(tps))
	for i, tp := range tps {
		out[i] = Record{OffsetCommit: &OffsetCommit{Group: group, Topic: tp.Topic, Partition: tp.Partition,
			CommittedOffset: offsets[tp], CommitTimestamp: now}}
	}
	return out
}

func (f *fixture) close() {
	f.t.Helper()
	for _, s := range slices.Clone(f.producers) {
		s.close()
	}
	for tp, open := range f.open {
		require.Empty(f.t, open, "%s: every transaction is decided", tp)
	}
	require.NoError(f.t, f.d.Close())
}

// fxText returns n bytes of printable ASCII text (words and spaces, no
// newline), different for each seed and compressible like text.
func fxText(seed, n int) []byte {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
		"kilo", "lima", "mike", "november", "oscar", "papa"}
	out := make([]byte, 0, n+10)
	x := uint32(seed*2654435761 + 1)
	for len(out) < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out = append(out, words[x%uint32(len(words))]...)
		out = fmt.Appendf(out, "-%d ", x%1000)
	}
	return out[:n]
}

// fxb is s's bytes: an empty s is an empty, not a null, key or value.
func fxb(s string) []byte { return []byte(s) }

// fxHeaders returns headers from key, value pairs; the value "<null>" is a
// null value.
func fxHeaders(kv ...string) []record.Header {
	var out []record.Header
	for i := 0; i < len(kv); i += 2 {
		h := record.Header{Key: fxb(kv[i])}
		if kv[i+1] != "<null>" {
			h.Value = fxb(kv[i+1])
		}
		out = append(out, h)
	}
	return out
}
