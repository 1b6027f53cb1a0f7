package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logdir"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// partitionState is what a walk over a partition's segments carries from one
// batch to the next.
type partitionState struct {
	p      partitionDir
	filter *txnFilter // nil: read_uncommitted
	reader *record.Reader
	// whole is set when the walk starts at the partition's first segment,
	// so that transactions opened before it are all known.
	whole bool

	prevLast int64 // last offset of the previous batch, −1 at the start
	// For -verify: open transactions (producer id → first offset) and the
	// ABORT markers found, by offset, for the .txnindex check; leader
	// epochs of batches (base offset, epoch) for the leader-epoch check.
	open    map[int64]int64
	aborts  map[int64]expectedAbort
	epochs  []logdir.EpochEntry
	scanned []*logScan
}

// expectedAbort is the .txnindex entry an ABORT marker calls for.
type expectedAbort struct {
	txn      index.AbortedTxn
	withData bool // the transaction's first offset is known: an entry must exist
	lsoKnown bool // LastStableOffset is known
}

// dumpPartition dumps one partition directory, or the one file of it that
// p.only names.
func (d *dumper) dumpPartition(p partitionDir) error {
	pf, err := listPartition(p.dir)
	if err != nil {
		return err
	}
	st := &partitionState{
		p:        p,
		reader:   record.NewReader(record.ReaderOptions{}),
		prevLast: -1,
		open:     make(map[int64]int64),
		aborts:   make(map[int64]expectedAbort),
	}
	if d.opts.committed && !d.opts.verify {
		if st.filter, err = newTxnFilter(p.dir, pf); err != nil {
			return err
		}
	}
	if p.only != "" {
		return d.dumpOne(st, pf)
	}

	d.partitions++
	st.whole = true
	for i, base := range pf.segments {
		d.dumpSegment(st, pf, base, i == len(pf.segments)-1, allParts)
	}
	for i := 1; i < len(st.scanned); i++ {
		if prev, next := st.scanned[i-1], st.scanned[i]; prev.lastOffset() >= next.base {
			d.problemf("%s: its batches reach offset %d, past the base offset %d of the next segment", prev.path, prev.lastOffset(), next.base)
		}
	}
	for _, off := range pf.snapshots {
		d.dumpSnapshot(filepath.Join(p.dir, segment.FileName(off, logdir.ProducerSnapshotSuffix)))
	}
	epochs := d.dumpLeaderEpochs(p.dir)
	d.dumpPartitionMetadata(p.dir)
	if d.opts.verify {
		d.checkLeaderEpochs(filepath.Join(p.dir, leaderEpochFile), epochs, st.epochs)
	}
	for _, name := range pf.unknown {
		d.ignore(filepath.Join(p.dir, name), " (not a segment, snapshot or checkpoint file)")
	}
	return nil
}

// dumpOne dumps the single file st.p.only of a partition directory.
func (d *dumper) dumpOne(st *partitionState, pf partitionFiles) error {
	name := st.p.only
	path := filepath.Join(st.p.dir, name)
	switch name {
	case leaderEpochFile:
		d.dumpLeaderEpochs(st.p.dir)
		return nil
	case partitionMetadataFile:
		d.dumpPartitionMetadata(st.p.dir)
		return nil
	}
	base, suffix, err := segment.ParseFileName(name)
	if err != nil {
		return fmt.Errorf("%s: not a file dumplog reads (a segment file, a snapshot, leader-epoch-checkpoint or partition.metadata)", path)
	}
	var part segmentPart
	switch suffix {
	case segment.LogSuffix:
		part = logPart
	case segment.IndexSuffix:
		part = indexPart
	case segment.TimeIndexSuffix:
		part = timeIndexPart
	case segment.TxnIndexSuffix:
		part = txnIndexPart
	case logdir.ProducerSnapshotSuffix:
		d.dumpSnapshot(path)
		return nil
	default:
		return fmt.Errorf("%s: not a file dumplog reads (%s)", path, suffix)
	}
	if !pf.has[segment.FileName(base, segment.LogSuffix)] && part != logPart {
		return fmt.Errorf("%s: its segment's .log is missing", path)
	}
	d.partitions++
	last := len(pf.segments) > 0 && pf.segments[len(pf.segments)-1] == base
	d.dumpSegment(st, pf, base, last, part)
	return nil
}

// segmentPart selects the files of a segment to dump.
type segmentPart int

const (
	logPart segmentPart = 1 << iota
	indexPart
	timeIndexPart
	txnIndexPart
	allParts = logPart | indexPart | timeIndexPart | txnIndexPart
)

// dumpSegment dumps (or verifies) the selected files of the segment at base.
// last says whether it is the partition's last (active) segment.
func (d *dumper) dumpSegment(st *partitionState, pf partitionFiles, base int64, last bool, parts segmentPart) {
	d.segments++
	logPath := filepath.Join(st.p.dir, segment.FileName(base, segment.LogSuffix))
	var visit func(pos int64, batch []byte, h *record.BatchHeader) error
	if parts&logPart != 0 {
		d.printf("Dumping %s\nLog starting offset: %d\n", logPath, base)
		visit = func(pos int64, batch []byte, h *record.BatchHeader) error {
			d.batch(st, base, logPath, pos, batch, h)
			return nil
		}
	} else if d.opts.verify && parts&txnIndexPart != 0 {
		// The .txnindex check needs the markers, so the records.
		visit = func(pos int64, batch []byte, h *record.BatchHeader) error {
			d.trackTxn(st, batch, h)
			return nil
		}
	}
	scan, err := scanLog(logPath, base, visit)
	if err != nil {
		d.fileProblem(logPath, err)
		return
	}
	st.scanned = append(st.scanned, scan)
	if parts&logPart != 0 {
		if t := scan.trailing(); t != "" {
			d.printf("Found %s\n", t)
			d.problemf("%s", t)
		}
	}
	if parts&indexPart != 0 {
		d.offsetIndex(scan, pf, last)
	}
	if parts&timeIndexPart != 0 {
		d.timeIndex(scan, pf, last)
	}
	if parts&txnIndexPart != 0 {
		d.txnIndex(st, scan, pf)
	}
}

// batch prints one batch, its records, or checks it.
func (d *dumper) batch(st *partitionState, base int64, path string, pos int64, batch []byte, h *record.BatchHeader) {
	d.batches++
	_, verr := record.Validate(batch)
	if d.opts.verify {
		d.checkBatch(st, base, path, pos, batch, h, verr)
		d.trackTxn(st, batch, h)
		return
	}
	if d.text() {
		horizon := "OptionalLong.empty"
		if h.Attributes.HasDeleteHorizon() {
			horizon = fmt.Sprintf("OptionalLong[%d]", h.BaseTimestamp)
		}
		d.printf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d "+
			"partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s position: %d %s: %d size: %d "+
			"magic: %d compresscodec: %s crc: %d isvalid: %t\n",
			h.BaseOffset, h.LastOffset(), h.RecordsCount, h.BaseSequence, h.LastSequence(), h.ProducerID, h.ProducerEpoch,
			h.PartitionLeaderEpoch, h.Attributes.IsTransactional(), h.Attributes.IsControl(), horizon, pos,
			h.Attributes.TimestampType(), h.MaxTimestamp, h.Size(), h.Magic, h.Attributes.Compression(), h.CRC, verr == nil)
	}
	if !d.opts.records && !d.opts.json {
		return
	}
	if verr != nil && d.opts.json {
		// The text dump says isvalid: false on the batch line; JSON
		// lines have no place for it.
		d.warnf("%s: batch at position %d (base offset %d) is invalid: %v; its records are printed as they are, as kafka-dump-log prints them",
			path, pos, h.BaseOffset, verr)
	}
	visible := st.filter.batch(h)
	r := st.reader
	if err := r.Reset(batch); err != nil {
		// Print what can be printed: a CRC mismatch does not stop the dump.
		r = record.NewReader(record.ReaderOptions{SkipCRC: true})
		if err := r.Reset(batch); err != nil {
			d.recordsError(path, pos, h, err)
			return
		}
	}
	for r.Next() {
		rec := r.Record()
		if h.Attributes.IsControl() {
			d.controlRecord(st, h, rec)
			continue
		}
		if !visible || !st.filter.below(rec.Offset) {
			continue
		}
		if d.opts.json {
			d.jsonRecord(st.p, rec)
		} else {
			d.textRecord(h, rec)
		}
	}
	if err := r.Err(); err != nil {
		d.recordsError(path, pos, h, err)
	}
}

// recordsError reports that a batch's records cannot all be decoded: a
// line of the text dump, or with -json a warning on stderr.
func (d *dumper) recordsError(path string, pos int64, h *record.BatchHeader, err error) {
	if d.opts.json {
		d.warnf("%s: batch at position %d (base offset %d): records not printed from here on: %v", path, pos, h.BaseOffset, err)
		return
	}
	d.printf("| error: %v\n", err)
}

// textRecord prints a data record as kafka-dump-log --print-data-log does.
func (d *dumper) textRecord(h *record.BatchHeader, rec *record.Record) {
	d.recordPrefix(h, rec)
	if rec.Key != nil {
		d.printf(" key: %s", escape(rec.Key))
	}
	if rec.Value != nil {
		d.printf(" payload: %s", escape(rec.Value))
	}
	d.printf("\n")
}

// recordPrefix prints a record's metadata.
func (d *dumper) recordPrefix(h *record.BatchHeader, rec *record.Record) {
	keys := make([]string, len(rec.Headers))
	for i, hd := range rec.Headers {
		keys[i] = escape(hd.Key)
	}
	d.printf("| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
		rec.Offset, h.Attributes.TimestampType(), rec.Timestamp, size(rec.Key), size(rec.Value),
		h.SequenceAt(rec.OffsetDelta), strings.Join(keys, ","))
}

// size is a key's or value's size as Kafka reports it: −1 for null.
func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// controlRecord handles a control record: in the text dump a line saying
// what it is (never its bytes as data).
func (d *dumper) controlRecord(st *partitionState, h *record.BatchHeader, rec *record.Record) {
	typ, err := record.ParseControlKey(rec.Key)
	if d.opts.json || !st.filter.below(rec.Offset) {
		return
	}
	d.recordPrefix(h, rec)
	switch {
	case err != nil:
		d.printf(" control record error: %v\n", err)
	case typ == record.ControlAbort || typ == record.ControlCommit:
		m, err := record.ParseEndTxnMarker(rec.Key, rec.Value)
		if err != nil {
			d.printf(" endTxnMarker error: %v\n", err)
			return
		}
		d.printf(" endTxnMarker: %s coordinatorEpoch: %d\n", m.Type, m.CoordinatorEpoch)
	default:
		d.printf(" controlType: %s(%d)\n", typ, int16(typ))
	}
}

// jsonHeader and jsonRecord are the -json output: []byte encodes as base64,
// nil as null.
type jsonHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

type jsonRecord struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	Key       []byte       `json:"key"`
	Value     []byte       `json:"value"`
	Headers   []jsonHeader `json:"headers"`
}

// jsonRecord prints one record as a line of JSON. The first record whose
// partition has no topic or number (its directory is not named
// <topic>-<partition>, and -topic or -partition was not given) brings a
// warning on stderr.
func (d *dumper) jsonRecord(p partitionDir, rec *record.Record) {
	if (p.topic == "" || p.partition < 0) && !d.warnedUnnamed {
		d.warnedUnnamed = true
		d.warnf("%s is not named <topic>-<partition>: its records print with \"topic\":%q and \"partition\":%d; name them with -topic and -partition",
			p.dir, p.topic, p.partition)
	}
	jr := jsonRecord{
		Topic:     p.topic,
		Partition: p.partition,
		Offset:    rec.Offset,
		Timestamp: rec.Timestamp,
		Key:       rec.Key,
		Value:     rec.Value,
		Headers:   make([]jsonHeader, len(rec.Headers)),
	}
	for i, h := range rec.Headers {
		jr.Headers[i] = jsonHeader{Key: string(h.Key), Value: h.Value}
	}
	_ = d.enc.Encode(jr) // errors surface when the buffered output is flushed
}

// txnFilter decides which records a read_committed consumer sees, as Kafka's
// fetcher does with a fetch response's aborted transactions: a producer's
// transactional batches are skipped from the first offset of one of its
// aborted transactions (from the .txnindex files) until its ABORT marker;
// nothing at or past the last stable offset is returned. A nil *txnFilter
// (read_uncommitted) lets everything through.
type txnFilter struct {
	lso     int64
	aborted log.AbortFilter // the filter a read_committed consumer uses
}

// newTxnFilter reads the partition's aborted transactions from its .txnindex
// files and finds its last stable offset: the first offset of the earliest
// transaction with no marker yet.
func newTxnFilter(dir string, pf partitionFiles) (*txnFilter, error) {
	f := &txnFilter{lso: math.MaxInt64}
	var aborted []index.AbortedTxn
	open := make(map[int64]int64)
	for _, base := range pf.segments {
		if name := segment.FileName(base, segment.TxnIndexSuffix); pf.has[name] {
			ix, err := index.OpenTxnIndex(vfs.Default, filepath.Join(dir, name), base, index.ReadOnly)
			if err != nil {
				return nil, err
			}
			txns, err := ix.AllAbortedTxns()
			_ = ix.Close() // read-only: nothing to lose
			if err != nil {
				return nil, err
			}
			aborted = append(aborted, txns...)
		}
		scan, err := scanLog(filepath.Join(dir, segment.FileName(base, segment.LogSuffix)), base, nil)
		if err != nil {
			return nil, err
		}
		for _, b := range scan.batches {
			if !b.h.Attributes.IsTransactional() {
				continue
			}
			if b.h.Attributes.IsControl() {
				delete(open, b.h.ProducerID)
			} else if _, ok := open[b.h.ProducerID]; !ok {
				open[b.h.ProducerID] = b.h.BaseOffset
			}
		}
	}
	for _, first := range open {
		f.lso = min(f.lso, first)
	}
	f.aborted.ResetTxns(aborted)
	return f, nil
}

// batch is called for every batch in offset order, control batches
// included, and reports whether its data records are visible.
func (f *txnFilter) batch(h *record.BatchHeader) bool {
	return f == nil || !f.aborted.Aborted(h)
}

// below reports whether offset is below the last stable offset.
func (f *txnFilter) below(offset int64) bool {
	return f == nil || offset < f.lso
}
