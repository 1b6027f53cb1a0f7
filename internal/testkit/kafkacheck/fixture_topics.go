package kafkacheck

import (
	"fmt"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// This file holds the steps of WriteFeatureDir, one per topic; each says
// what it writes and what Kafka must find.

// writeCodecs writes TopicCodecs: partition i with codec i, each by an
// idempotent producer and by one without idempotence.
func (f *fixture) writeCodecs() {
	f.createTopic(TopicCodecs, int32(len(featureCodecs)), map[string]string{"segment.bytes": "106496"})
	for i, codec := range featureCodecs {
		tp := TopicPartition{TopicCodecs, int32(i)}
		idem := f.newProducer(codec, false, "")
		plain := f.newProducer(codec, true, "")
		idem.batch(tp,
			fxRecord{key: nil, value: fxb("v0"), ts: 5},
			fxRecord{key: fxb(""), value: fxb(""), headers: fxHeaders("h1", "x"), ts: 3},
			fxRecord{key: fxb("k2"), value: nil, headers: fxHeaders("h1", "<null>", "h2", ""), ts: 9},
			fxRecord{key: fxb("key three"), value: fxb("value with spaces"), headers: fxHeaders("dup", "1", "dup", "2", "h-3", "three"), ts: 1},
			fxRecord{key: fxb("k4"), value: fxb("v4"), ts: 7})
		f.clock.advance(20)
		idem.batch(tp, fxRecord{key: fxb("big"), value: fxText(i, 100<<10), headers: fxHeaders("size", "100KiB")})
		f.clock.advance(20)
		plain.batch(tp,
			fxRecord{key: fxb("q-0"), value: fxText(100+i, 40)},
			fxRecord{key: nil, value: nil, ts: 1},
			fxRecord{key: fxb("q-2"), value: fxb(""), headers: fxHeaders("from", "acks=1"), ts: 2})
		f.clock.advance(20)
		many := make([]fxRecord, 200)
		for j := range many {
			many[j] = fxRecord{key: fmt.Appendf(nil, "k-%03d", j), value: fmt.Appendf(nil, "value-%03d-%s", j, fxText(j, 20)), ts: int64(j)}
		}
		idem.batch(tp, many...)
		f.clock.advance(250)
		for j := range 3 {
			idem.batch(tp, fxRecord{key: fmt.Appendf(nil, "tail-%d", j), value: fxText(200+j, 30), headers: fxHeaders("n", fmt.Sprint(j))},
				fxRecord{key: fmt.Appendf(nil, "tail-%d-b", j), value: fxText(300+j, 30), ts: 1})
			f.clock.advance(10)
		}
		plain.batch(tp, fxRecord{key: fxb("last"), value: fxb("from the plain producer")})
		f.clock.advance(10)
	}
	f.checkEnds()
}

// writeLogAppend writes TopicLogAppend: the records carry CreateTimes a
// day old, the log stamps the Dir's clock on each batch.
func (f *fixture) writeLogAppend() {
	f.createTopic(TopicLogAppend, 2, map[string]string{"message.timestamp.type": "LogAppendTime"})
	for i, codec := range []record.Compression{record.None, record.LZ4} {
		tp := TopicPartition{TopicLogAppend, int32(i)}
		s := f.newProducer(codec, false, "")
		old := -24 * time.Hour.Milliseconds()
		for j := range 4 {
			f.clock.advance(7)
			s.batch(tp, fxRecord{key: fmt.Appendf(nil, "la-%d", j), value: fxText(400+j, 50), ts: old},
				fxRecord{key: nil, value: fxb("second"), headers: fxHeaders("h", "v"), ts: old + 1},
				fxRecord{key: fxb("third"), value: nil, ts: old + 2})
		}
	}
	f.checkEnds()
}

// writeRecompress writes TopicRecompress: a gzip producer, a zstd topic.
func (f *fixture) writeRecompress() {
	f.createTopic(TopicRecompress, 1, map[string]string{"compression.type": "zstd"})
	tp := TopicPartition{TopicRecompress, 0}
	s := f.newProducer(record.Gzip, false, "")
	for j := range 3 {
		s.batch(tp, fxRecord{key: fmt.Appendf(nil, "rc-%d", j), value: fxText(500+j, 300), headers: fxHeaders("codec", "gzip")},
			fxRecord{key: fxb(""), value: fxText(600+j, 10), ts: 2},
			fxRecord{key: nil, value: fxb(""), ts: 1},
			fxRecord{key: fxb("x"), value: nil, ts: 3})
		f.clock.advance(10)
	}
	f.checkEnds()
}

// writeSegments writes TopicSegments: 90 batches of 1–4 records into
// segments of at most 1024 bytes whose indexes hold 5 offset entries and 3
// time entries, with an entry every 100 bytes: segments roll by size and by
// full indexes (every ninth batch is large). Every seventh batch's
// timestamps are older than the previous ones, so the time index skips it.
func (f *fixture) writeSegments() {
	f.createTopic(TopicSegments, 1, map[string]string{"segment.bytes": "1024", "index.interval.bytes": "100",
		"segment.index.bytes": "40"})
	tp := TopicPartition{TopicSegments, 0}
	s := f.newProducer(record.None, false, "")
	for j := range 90 {
		ts := int64(0)
		if j%7 == 6 {
			ts = -500
		}
		recs := make([]fxRecord, j%4+1)
		for k := range recs {
			size := 10 + (j*7+k*13)%50
			if j%9 == 8 {
				size = 200 // a large batch: the segment rolls by size
			}
			recs[k] = fxRecord{key: fmt.Appendf(nil, "s-%d-%d", j, k), value: fxText(j*10+k, size), ts: ts + int64(k)}
		}
		s.batch(tp, recs...)
		f.clock.advance(5)
	}
	f.checkEnds()
}

// writeCompacted writes TopicCompacted and cleans it twice; partition 0
// uncompressed, partition 1 with zstd. compactScenario says what each
// batch becomes.
func (f *fixture) writeCompacted() {
	f.createTopic(TopicCompacted, 2, map[string]string{"cleanup.policy": "compact",
		"delete.retention.ms": fmt.Sprint(DeleteRetentionMs), "min.cleanable.dirty.ratio": "0.01"})
	scenarios := make([]*compactScenario, 2)
	for i, codec := range []record.Compression{record.None, record.Zstd} {
		scenarios[i] = f.compactRound1(TopicPartition{TopicCompacted, int32(i)}, codec)
	}
	f.clock.advance(1000)
	clean1 := f.clock.nowMs()
	f.cleanNow(len(scenarios))
	f.clock.advance(DeleteRetentionMs + 1000)
	for _, sc := range scenarios {
		f.compactRound2(sc)
	}
	clean2 := f.clock.nowMs()
	f.cleanNow(len(scenarios))
	for _, sc := range scenarios {
		sc.expect(f, clean1+DeleteRetentionMs, clean2+DeleteRetentionMs)
	}
	f.checkEnds()
}

func (f *fixture) cleanNow(atLeast int) {
	f.t.Helper()
	res, err := f.d.CleanNow(f.ctx)
	require.NoError(f.t, err)
	require.GreaterOrEqual(f.t, res.Rounds, atLeast, "every compacted partition is cleaned")
}

// compactScenario is one partition of TopicCompacted: its batches by name.
type compactScenario struct {
	tp      TopicPartition
	batches map[string]Batch
	p1, p2  *fxProducer
	txn     *fxProducer
}

// compactRound1 writes, in three segments (k: key, =: value, ∅: tombstone):
//
//	segment 0:  b0 p1 k1=a1 k2=a2 k3=a3 k4=a4 · b1 p1 k1=b1 k2∅ · b2 p1 k3=c3 k4=c4
//	segment 8:  b3 p2 k3=d3 k4=d4 · b4 txn k5=e5 k1=e1 (aborted) · b5 ABORT · b6 txn k6=f6 · b7 COMMIT
//	segment 15: b8 p2 k7=g7 (active at the first cleaning)
func (f *fixture) compactRound1(tp TopicPartition, codec record.Compression) *compactScenario {
	sc := &compactScenario{tp: tp, batches: map[string]Batch{}, p1: f.newProducer(codec, false, ""),
		p2: f.newProducer(codec, false, ""), txn: f.newProducer(codec, false, fmt.Sprintf("compact-txn-%d", tp.Partition))}
	kv := func(k, v string) fxRecord {
		r := fxRecord{key: fxb(k)}
		if v != "∅" {
			r.value = fxb(v)
		}
		return r
	}
	step := func(name string, s *fxProducer, recs ...fxRecord) {
		for i := range recs {
			recs[i].ts = int64(i)
		}
		sc.batches[name] = s.batch(tp, recs...)
		f.clock.advance(10)
	}
	step("b0", sc.p1, kv("k1", "a1"), kv("k2", "a2"), kv("k3", "a3"), kv("k4", "a4"))
	step("b1", sc.p1, kv("k1", "b1"), kv("k2", "∅"))
	step("b2", sc.p1, kv("k3", "c3"), kv("k4", "c4"))
	f.roll(tp)
	step("b3", sc.p2, kv("k3", "d3"), kv("k4", "d4"))
	sc.txn.initTransactions()
	sc.txn.begin()
	step("b4", sc.txn, kv("k5", "e5"), kv("k1", "e1"))
	sc.txn.end(false)
	f.clock.advance(10)
	sc.txn.begin()
	step("b6", sc.txn, kv("k6", "f6"))
	sc.txn.end(true)
	f.clock.advance(10)
	f.roll(tp)
	step("b8", sc.p2, kv("k7", "g7"))
	return sc
}

// compactRound2 writes, after the first cleaning, into segment 16 (then
// rolled) and the active segment 19:
//
//	b9 p2 k7∅ k8=<1 KiB> · b10 p2 k9=<1 KiB> | b11 p2 k10=h10
func (f *fixture) compactRound2(sc *compactScenario) {
	step := func(name string, recs ...fxRecord) {
		sc.batches[name] = sc.p2.batch(sc.tp, recs...)
		f.clock.advance(10)
	}
	step("b9", fxRecord{key: fxb("k7")}, fxRecord{key: fxb("k8"), value: fxText(700, 1024), ts: 1})
	step("b10", fxRecord{key: fxb("k9"), value: fxText(701, 1024)})
	f.roll(sc.tp)
	step("b11", fxRecord{key: fxb("k10"), value: fxb("h10")})
}

// expect sets the partition's batches to what Kafka's cleaner leaves after
// the two rounds (LogCleaner's rules: the latest record of each key; a
// tombstone stays until its batch's delete horizon; a batch whose records
// all go disappears unless it is its producer's last, which stays empty;
// aborted data goes; a marker stays while its transaction has data, then
// gets a delete horizon; a batch that keeps every record and needs no
// horizon is copied as it is). horizon1 and horizon2 are the delete
// horizons the rounds give.
//
//	b0  all superseded                                            → gone
//	b1  round 1: the tombstone k2 gets horizon1; round 2: horizon1
//	    passed, k2 goes, k1=b1 stays, the batch keeps horizon1     → [k1=b1], horizon1
//	b2  superseded by b3, but p1's last batch                     → empty
//	b3  latest                                                    → as written
//	b4  aborted                                                   → gone
//	b5  round 1: b4 is still there; round 2: no data left        → horizon2
//	b6  latest; b7 its committed marker                           → as written
//	b8  k7 superseded by the tombstone in b9                      → gone
//	b9  the tombstone k7 gets horizon2                            → horizon2
//	b10 latest; b11 in the active segment                         → as written
//
// The .txnindex entry of b4's abort stays after round 1 (its data was
// seen) and goes in round 2.
func (sc *compactScenario) expect(f *fixture, horizon1, horizon2 int64) {
	p := f.partition(sc.tp)
	keep := func(name string, horizon int64, offsets ...int64) Batch {
		bt := sc.batches[name]
		bt.DeleteHorizonMs = horizon
		if offsets != nil {
			var recs []Record
			bt.MaxTimestamp = -1
			for _, r := range bt.Records {
				if slices.Contains(offsets, r.Offset) {
					recs = append(recs, r)
					bt.MaxTimestamp = max(bt.MaxTimestamp, r.Timestamp)
				}
			}
			bt.Records = recs
		}
		return bt
	}
	empty := sc.batches["b2"]
	empty.Records, empty.Codec = nil, record.None
	marker := func(offset int64) Batch {
		for _, bt := range p.Appended {
			if bt.BaseOffset == offset {
				return bt
			}
		}
		f.t.Fatalf("%s: no batch at %d", sc.tp, offset)
		return Batch{}
	}
	abort, commit := marker(sc.batches["b4"].LastOffset+1), marker(sc.batches["b6"].LastOffset+1)
	abort.DeleteHorizonMs = horizon2
	p.Batches = []Batch{
		keep("b1", horizon1, sc.batches["b1"].BaseOffset),
		empty,
		keep("b3", -1),
		abort,
		keep("b6", -1),
		commit,
		keep("b9", horizon2),
		keep("b10", -1),
		keep("b11", -1),
	}
	p.Aborted = nil
	p.Cleaned = true
}

// writeTransactions writes TopicTxn and GroupTxn's transactional offsets:
//
//  1. TxnA commits: 2 records to txn-0, 1 to txn-1, offsets of GroupTxn.
//  2. TxnA aborts: 1 record to txn-0, 2 to txn-1, offsets of GroupTxn.
//  3. TxnA opens a transaction on txn-0, TxnB opens one after it on
//     txn-0, an idempotent producer writes between them, txn-0 rolls
//     (its snapshot holds both open transactions), TxnB aborts (its
//     .txnindex entry's last stable offset is TxnA's first offset), TxnA
//     adds txn-1 and commits.
//  4. A second TxnA producer (epoch 1, sequences from 0) commits one
//     record to txn-1 and offsets of GroupTxn.
func (f *fixture) writeTransactions() {
	f.createTopic(TopicTxn, 2, map[string]string{})
	p0, p1 := TopicPartition{TopicTxn, 0}, TopicPartition{TopicTxn, 1}
	ccfg := consumer.DefaultConfig()
	ccfg.GroupID, ccfg.ClientID, ccfg.EnableAutoCommit = GroupTxn, "fixture-"+GroupTxn, false
	c, err := consumer.New(f.d, ccfg)
	require.NoError(f.t, err)
	defer func() { require.NoError(f.t, c.Close(f.ctx)) }()
	require.NoError(f.t, c.Assign([]consumer.TopicPartition{{Topic: TopicCodecs, Partition: 0}, {Topic: TopicCodecs, Partition: 1}}))
	codecs0, codecs1 := TopicPartition{TopicCodecs, 0}, TopicPartition{TopicCodecs, 1}

	ta := f.newProducer(record.Snappy, false, TxnA)
	tb := f.newProducer(record.None, false, TxnB)
	plain := f.newProducer(record.None, false, "")
	ta.initTransactions()
	f.clock.advance(5)
	tb.initTransactions()
	f.clock.advance(5)

	ta.begin()
	ta.batch(p0, fxRecord{key: fxb("a1"), value: fxb("committed")}, fxRecord{key: fxb("a2"), value: fxb("committed"), ts: 1})
	f.clock.advance(3)
	ta.batch(p1, fxRecord{key: fxb("a3"), value: fxb("committed")})
	f.clock.advance(3)
	ta.sendGroupTxnOffsets(c, map[TopicPartition]CommittedOffset{codecs0: {4, 0, "txn-1"}, codecs1: {2, -1, ""}})
	f.clock.advance(3)
	ta.end(true)
	f.clock.advance(10)

	ta.begin()
	ta.batch(p0, fxRecord{key: fxb("x1"), value: fxb("aborted")})
	f.clock.advance(3)
	ta.batch(p1, fxRecord{key: fxb("x2"), value: fxb("aborted")}, fxRecord{key: nil, value: fxb("aborted"), ts: 1})
	f.clock.advance(3)
	ta.sendGroupTxnOffsets(c, map[TopicPartition]CommittedOffset{codecs0: {9, 0, "aborted"}})
	f.clock.advance(3)
	ta.end(false)
	f.clock.advance(10)

	ta.begin()
	ta.batch(p0, fxRecord{key: fxb("a4"), value: fxb("open first")})
	f.clock.advance(3)
	tb.begin()
	tb.batch(p0, fxRecord{key: fxb("b1"), value: fxb("aborted later")}, fxRecord{key: fxb("b2"), value: fxb(""), ts: 1})
	f.clock.advance(3)
	plain.batch(p0, fxRecord{key: fxb("p1"), value: fxb("between transactions")})
	f.clock.advance(3)
	f.roll(p0)
	tb.end(false)
	f.clock.advance(3)
	ta.batch(p1, fxRecord{key: fxb("a5"), value: fxb("committed last")})
	f.clock.advance(3)
	ta.end(true)
	f.clock.advance(10)
	ta.close()

	ta2 := f.newProducer(record.Snappy, false, TxnA)
	ta2.initTransactions()
	f.clock.advance(5)
	ta2.begin()
	ta2.batch(p1, fxRecord{key: fxb("a6"), value: fxb("second instance")})
	f.clock.advance(3)
	ta2.sendGroupTxnOffsets(c, map[TopicPartition]CommittedOffset{codecs1: {3, 0, "epoch 1"}})
	f.clock.advance(3)
	ta2.end(true)
	f.clock.advance(10)
	f.checkEnds()
}

// writeGroup runs GroupSubscribed: a consumer subscribes to TopicCodecs
// and joins (generation 1, range: it gets every partition), commits twice
// and leaves (generation 2, no members).
func (f *fixture) writeGroup() {
	otp := TopicPartition{OffsetsTopic, 0}
	ccfg := consumer.DefaultConfig()
	ccfg.GroupID, ccfg.ClientID, ccfg.EnableAutoCommit = GroupSubscribed, "fixture-"+GroupSubscribed, false
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	c, err := consumer.New(f.d, ccfg)
	require.NoError(f.t, err)
	require.NoError(f.t, c.Subscribe([]string{TopicCodecs}, nil))
	for len(c.Assignment()) < len(featureCodecs) {
		_, err := c.Poll(f.ctx)
		require.NoError(f.t, err)
	}
	gm := c.GroupMetadata()
	require.Equal(f.t, int32(1), gm.GenerationID)
	all := make([]int32, len(featureCodecs))
	for i := range all {
		all[i] = int32(i)
	}
	f.coordinatorBatch(otp, -1, -1, []Record{{Group: &GroupMetadata{Group: GroupSubscribed, ProtocolType: "consumer",
		Generation: 1, Protocol: "range", Leader: gm.MemberID, CurrentStateTimestamp: f.clock.nowMs(),
		Members: []GroupMember{{MemberID: gm.MemberID, ClientID: ccfg.ClientID, ClientHost: "in-process",
			RebalanceTimeout: int32(ccfg.MaxPollInterval.Milliseconds()), SessionTimeout: int32(ccfg.SessionTimeout.Milliseconds()),
			Topics: []string{TopicCodecs}, Assignment: map[string][]int32{TopicCodecs: all}}}}}})
	f.checkEnds()
	f.clock.advance(5)

	f.exp.Groups[GroupSubscribed] = map[TopicPartition]CommittedOffset{}
	commit := func(offsets map[TopicPartition]CommittedOffset) {
		in := map[consumer.TopicPartition]consumer.OffsetAndMetadata{}
		for tp, o := range offsets {
			in[consumer.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = consumer.OffsetAndMetadata{
				Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
			f.exp.Groups[GroupSubscribed][tp] = o
		}
		require.NoError(f.t, c.CommitSync(f.ctx, in))
		f.coordinatorBatch(otp, -1, -1, offsetCommits(GroupSubscribed, offsets, f.clock.nowMs()))
		f.checkEnds()
		f.clock.advance(5)
	}
	commit(map[TopicPartition]CommittedOffset{{TopicCodecs, 0}: {3, 0, "m-0"}, {TopicCodecs, 1}: {5, -1, ""}})
	commit(map[TopicPartition]CommittedOffset{{TopicCodecs, 0}: {7, 0, "m-0 again"}, {TopicCodecs, 4}: {2, 0, "a metadata string"}})

	require.NoError(f.t, c.Close(f.ctx))
	f.coordinatorBatch(otp, -1, -1, []Record{{Group: &GroupMetadata{Group: GroupSubscribed, ProtocolType: "consumer",
		Generation: 2, CurrentStateTimestamp: f.clock.nowMs()}}})
	f.checkEnds()
}
