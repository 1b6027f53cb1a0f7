package kafkacheck

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// This file runs Kafka's DumpLogSegments and parses what it prints into
// structs. The formats are DumpLogSegments' (tools/.../DumpLogSegments.java
// in Kafka 4.x):
//
//	Dumping <file>                                   before each file, as given in --files
//	Log starting offset: <n>                         .log
//	baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 0 producerEpoch: 0
//	  partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty
//	  position: 0 CreateTime: 17… size: 134 magic: 2 compresscodec: lz4 crc: 19… isvalid: true     (one line)
//	| offset: 0 CreateTime: 17… keySize: -1 valueSize: 4 sequence: 0 headerKeys: [h1,h2] payload: v0
//	| offset: 19 CreateTime: 17… keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 0
//	offset: 5 position: 134                          .index
//	timestamp: 17… offset: 2                         .timeindex
//	<file> is empty. / <file> passed sanity check.   .index (empty), --index-sanity-check
//	version: 0 producerId: 1 firstOffset: 18 lastOffset: 19 lastStableOffset: 20      .txnindex
//	producerId: 0 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty
//	  lastTimestamp: 17… firstSequence: 15 lastSequence: 17 lastOffset: 17 offsetDelta: 2 timestamp: 17…  .snapshot
//
// A record's key is printed only when it is not null, its value ("payload")
// likewise, each as the decoder renders it (StringDecoder: the bytes as
// UTF-8; the offsets and transaction log decoders: JSON, "<DELETE>" for a
// null value); control records print their marker instead. Problems go to
// stderr after all files: "Mismatches in :<file>" (an offset index entry
// whose position holds another batch), "Found timestamp mismatch in
// :<file>", "Found out of order timestamp in :<file>", "The following
// indexed offsets are not found in the log.", and "Non-consecutive offsets
// in <file>" with "  <a> is followed by <b>" (a record offset that is not
// the previous one's plus one, the first compared with -1), and on stdout
// "Found <n> invalid bytes at the end of <file>".

// DumpOutput is one DumpLogSegments run, parsed.
type DumpOutput struct {
	// Files are the files dumped, in order, by the path given.
	Files []*DumpedFile
	// NonConsecutive holds, per .log (by absolute path), the pairs of
	// successive record offsets the tool reports as not consecutive.
	NonConsecutive map[string][][2]int64
	// Problems are every other report: index and time index mismatches,
	// invalid bytes, anything unknown on stderr.
	Problems []string
}

// File returns the dump of path, or nil.
func (o *DumpOutput) File(path string) *DumpedFile {
	for _, f := range o.Files {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// DumpedFile is what the tool printed for one file.
type DumpedFile struct {
	Path string
	// StartOffset is a .log's "Log starting offset" (its name's offset).
	StartOffset int64
	Batches     []DumpedBatch
	// IndexEntries and TimeEntries are an .index's and a .timeindex's
	// entries.
	IndexEntries []IndexEntry
	TimeEntries  []TimeIndexEntry
	// Empty: "<file> is empty." (an .index without entries).
	Empty bool
	// SanityPassed: "<file> passed sanity check." (--index-sanity-check).
	SanityPassed bool
	Aborted      []AbortedTxn
	Producers    []SnapshotEntry
}

// DumpedBatch is a batch line and, with --deep-iteration, its records.
type DumpedBatch struct {
	BaseOffset, LastOffset     int64
	Count                      int32
	BaseSequence, LastSequence int32
	ProducerID                 int64
	ProducerEpoch              int16
	PartitionLeaderEpoch       int32
	IsTransactional, IsControl bool
	DeleteHorizonMs            int64 // -1 for OptionalLong.empty
	Position                   int64
	TimestampType              string // CreateTime or LogAppendTime
	MaxTimestamp               int64
	Size                       int64
	Magic                      int8
	CompressCodec              string
	CRC                        uint32
	IsValid                    bool
	Records                    []DumpedRecord
}

// DumpedRecord is a record line.
type DumpedRecord struct {
	Offset             int64
	TimestampType      string
	Timestamp          int64
	KeySize, ValueSize int32
	Sequence           int32
	HeaderKeys         []string
	// Key and Payload are as printed, nil when not printed (null, or a
	// control record).
	Key, Payload *string
	// EndTxnMarker (COMMIT, ABORT) and CoordinatorEpoch for a marker;
	// Control for any other control record's text.
	EndTxnMarker     string
	CoordinatorEpoch int32
	Control          string
}

// IndexEntry is an .index entry as printed.
type IndexEntry struct{ Offset, Position int64 }

// TimeIndexEntry is a .timeindex entry as printed.
type TimeIndexEntry struct{ Timestamp, Offset int64 }

// Dump runs DumpLogSegments over files with flags and parses its output.
// Any line it cannot parse fails t: a format change is a failure, never a
// silent pass.
func (k *Kafka) Dump(t testing.TB, files []string, flags ...string) *DumpOutput {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("kafkacheck: Dump needs files")
	}
	args := append(slices.Clone(flags), "--files", strings.Join(files, ","))
	stdout, stderr := k.runBoth(t, "org.apache.kafka.tools.DumpLogSegments", args...)
	decoded := slices.Contains(flags, "--offsets-decoder") || slices.Contains(flags, "--transaction-log-decoder") ||
		slices.Contains(flags, "--share-group-state-decoder")
	out, err := ParseDump(stdout, stderr, decoded)
	if err != nil {
		t.Fatalf("kafkacheck: parsing DumpLogSegments %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, tail(stdout), tail(stderr))
	}
	return out
}

// runBoth runs a Kafka class and returns both streams; a non-zero exit
// fails t.
func (k *Kafka) runBoth(t testing.TB, class string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := k.javaCommand(ctx, class, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kafkacheck: %s %s: %v\nstdout:\n%s\nstderr:\n%s", class, strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	return stdout.String(), stderr.String()
}

// ParseDump parses DumpLogSegments' standard output and error. decoded
// says the run used --offsets-decoder, --transaction-log-decoder or
// --share-group-state-decoder, whose
// keys are JSON rather than the key's bytes.
func ParseDump(stdout, stderr string, decoded bool) (*DumpOutput, error) {
	out := &DumpOutput{NonConsecutive: map[string][][2]int64{}}
	var cur *DumpedFile
	for i, line := range scanLines(stdout) {
		if err := out.parseLine(&cur, line, decoded); err != nil {
			return nil, fmt.Errorf("stdout line %d %q: %w", i+1, clipLine(line), err)
		}
	}
	if err := out.parseStderr(stderr); err != nil {
		return nil, err
	}
	return out, nil
}

func clipLine(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func (o *DumpOutput) parseLine(cur **DumpedFile, line string, decoded bool) error {
	if path, ok := strings.CutPrefix(line, "Dumping "); ok {
		*cur = &DumpedFile{Path: path, StartOffset: -1}
		o.Files = append(o.Files, *cur)
		return nil
	}
	f := *cur
	if f == nil {
		return fmt.Errorf("output before the first file")
	}
	ext := filepath.Ext(f.Path)
	switch {
	case line == f.Path+" is empty.":
		f.Empty = true
		return nil
	case line == f.Path+" passed sanity check.":
		f.SanityPassed = true
		return nil
	case strings.HasPrefix(line, "Found ") && strings.Contains(line, " invalid bytes at the end of "):
		o.Problems = append(o.Problems, line)
		return nil
	}
	switch ext {
	case ".log":
		if s, ok := strings.CutPrefix(line, "Log starting offset: "); ok {
			v, err := strconv.ParseInt(s, 10, 64)
			f.StartOffset = v
			return err
		}
		if strings.HasPrefix(line, "| ") {
			if len(f.Batches) == 0 {
				return fmt.Errorf("a record before any batch")
			}
			bt := &f.Batches[len(f.Batches)-1]
			r, err := parseRecordLine(line, decoded)
			if err != nil {
				return err
			}
			bt.Records = append(bt.Records, r)
			return nil
		}
		bt, err := parseBatchLine(line)
		if err != nil {
			return err
		}
		f.Batches = append(f.Batches, bt)
		return nil
	case ".index":
		v, err := dumpFields(line, "offset", "position")
		if err != nil {
			return err
		}
		e := IndexEntry{}
		if e.Offset, err = strconv.ParseInt(v[0], 10, 64); err == nil {
			e.Position, err = strconv.ParseInt(v[1], 10, 64)
		}
		f.IndexEntries = append(f.IndexEntries, e)
		return err
	case ".timeindex":
		v, err := dumpFields(line, "timestamp", "offset")
		if err != nil {
			return err
		}
		e := TimeIndexEntry{}
		if e.Timestamp, err = strconv.ParseInt(v[0], 10, 64); err == nil {
			e.Offset, err = strconv.ParseInt(v[1], 10, 64)
		}
		f.TimeEntries = append(f.TimeEntries, e)
		return err
	case ".txnindex":
		v, err := dumpFields(line, "version", "producerId", "firstOffset", "lastOffset", "lastStableOffset")
		if err != nil {
			return err
		}
		if v[0] != "0" {
			return fmt.Errorf("version %s", v[0])
		}
		n, err := parseInts(v[1:])
		if err != nil {
			return err
		}
		f.Aborted = append(f.Aborted, AbortedTxn{ProducerID: n[0], FirstOffset: n[1], LastOffset: n[2], LastStableOffset: n[3]})
		return nil
	case ".snapshot":
		e, err := parseSnapshotLine(line)
		if err != nil {
			return err
		}
		f.Producers = append(f.Producers, e)
		return nil
	}
	return fmt.Errorf("unexpected line for a %s file", ext)
}

// fieldValues splits "n1: v1 n2: v2 ..." whose names must be exactly
// names, in order, each value one token.
func dumpFields(line string, names ...string) ([]string, error) {
	tok := strings.Split(line, " ")
	if len(tok) != 2*len(names) {
		return nil, fmt.Errorf("want fields %v", names)
	}
	out := make([]string, len(names))
	for i, n := range names {
		if tok[2*i] != n+":" {
			return nil, fmt.Errorf("field %d is %q, want %q", i, tok[2*i], n+":")
		}
		out[i] = tok[2*i+1]
	}
	return out, nil
}

func parseInts(s []string) ([]int64, error) {
	out := make([]int64, len(s))
	for i, v := range s {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// optionalLong parses Java's OptionalLong.toString: -1 for empty.
func javaOptionalLong(s string) (int64, error) {
	if s == "OptionalLong.empty" {
		return -1, nil
	}
	if v, ok := strings.CutPrefix(s, "OptionalLong["); ok && strings.HasSuffix(v, "]") {
		return strconv.ParseInt(strings.TrimSuffix(v, "]"), 10, 64)
	}
	return 0, fmt.Errorf("not an OptionalLong: %q", s)
}

var dumpBatchFields = []string{"baseOffset", "lastOffset", "count", "baseSequence", "lastSequence", "producerId",
	"producerEpoch", "partitionLeaderEpoch", "isTransactional", "isControl", "deleteHorizonMs", "position",
	"<timestampType>", "size", "magic", "compresscodec", "crc", "isvalid"}

func parseBatchLine(line string) (DumpedBatch, error) {
	tok := strings.Split(line, " ")
	if len(tok) != 2*len(dumpBatchFields) {
		return DumpedBatch{}, fmt.Errorf("not a batch line")
	}
	var bt DumpedBatch
	var err error
	num := func(s string, bits int) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(s, 10, bits)
		return v
	}
	boolean := func(s string) bool {
		if s != "true" && s != "false" && err == nil {
			err = fmt.Errorf("not a boolean: %q", s)
		}
		return s == "true"
	}
	for i, name := range dumpBatchFields {
		key, v := tok[2*i], tok[2*i+1]
		if name == "<timestampType>" {
			if key != "CreateTime:" && key != "LogAppendTime:" {
				return bt, fmt.Errorf("field %d is %q, want a timestamp type", i, key)
			}
			bt.TimestampType = strings.TrimSuffix(key, ":")
			bt.MaxTimestamp = num(v, 64)
			continue
		}
		if key != name+":" {
			return bt, fmt.Errorf("field %d is %q, want %q", i, key, name+":")
		}
		switch name {
		case "baseOffset":
			bt.BaseOffset = num(v, 64)
		case "lastOffset":
			bt.LastOffset = num(v, 64)
		case "count":
			bt.Count = int32(num(v, 32))
		case "baseSequence":
			bt.BaseSequence = int32(num(v, 32))
		case "lastSequence":
			bt.LastSequence = int32(num(v, 32))
		case "producerId":
			bt.ProducerID = num(v, 64)
		case "producerEpoch":
			bt.ProducerEpoch = int16(num(v, 16))
		case "partitionLeaderEpoch":
			bt.PartitionLeaderEpoch = int32(num(v, 32))
		case "isTransactional":
			bt.IsTransactional = boolean(v)
		case "isControl":
			bt.IsControl = boolean(v)
		case "deleteHorizonMs":
			if err == nil {
				bt.DeleteHorizonMs, err = javaOptionalLong(v)
			}
		case "position":
			bt.Position = num(v, 64)
		case "size":
			bt.Size = num(v, 64)
		case "magic":
			bt.Magic = int8(num(v, 8))
		case "compresscodec":
			bt.CompressCodec = v
		case "crc":
			if err == nil {
				var c uint64
				c, err = strconv.ParseUint(v, 10, 32)
				bt.CRC = uint32(c)
			}
		case "isvalid":
			bt.IsValid = boolean(v)
		}
	}
	return bt, err
}

// parseRecordLine parses "| offset: … headerKeys: [...]" and what follows:
// a marker, or the key and payload. With the StringDecoder (decoded false)
// a key of keySize bytes and a payload of valueSize bytes are cut by their
// sizes (every byte WriteFeatureDir writes is printable ASCII), so spaces
// inside them are fine; decoded keys are JSON, cut at " payload: ".
func parseRecordLine(line string, decoded bool) (DumpedRecord, error) {
	var r DumpedRecord
	head, rest, ok := strings.Cut(strings.TrimPrefix(line, "| "), " headerKeys: [")
	if !ok {
		return r, fmt.Errorf("no headerKeys")
	}
	tok := strings.Split(head, " ")
	if len(tok) != 10 || tok[0] != "offset:" || (tok[2] != "CreateTime:" && tok[2] != "LogAppendTime:") ||
		tok[4] != "keySize:" || tok[6] != "valueSize:" || tok[8] != "sequence:" {
		return r, fmt.Errorf("record fields")
	}
	n, err := parseInts([]string{tok[1], tok[3], tok[5], tok[7], tok[9]})
	if err != nil {
		return r, err
	}
	r.Offset, r.TimestampType, r.Timestamp = n[0], strings.TrimSuffix(tok[2], ":"), n[1]
	r.KeySize, r.ValueSize, r.Sequence = int32(n[2]), int32(n[3]), int32(n[4])
	keys, rest, ok := strings.Cut(rest, "]")
	if !ok {
		return r, fmt.Errorf("headerKeys not closed")
	}
	if keys != "" {
		r.HeaderKeys = strings.Split(keys, ",")
	}
	if m, ok := strings.CutPrefix(rest, " endTxnMarker: "); ok {
		v := strings.Split(m, " ")
		if len(v) != 3 || v[1] != "coordinatorEpoch:" {
			return r, fmt.Errorf("marker")
		}
		e, err := strconv.ParseInt(v[2], 10, 32)
		r.EndTxnMarker, r.CoordinatorEpoch = v[0], int32(e)
		return r, err
	}
	for _, c := range []string{" LeaderChange: ", " SnapshotHeader ", " SnapshotFooter ", " KRaftVersion ", " KRaftVoters ", " controlType: "} {
		if strings.HasPrefix(rest, c) {
			r.Control = rest
			return r, nil
		}
	}
	if rest == "" {
		return r, nil // a control record of an unknown kind prints nothing more, as does -skip-record-metadata
	}
	if k, ok := strings.CutPrefix(rest, " key: "); ok {
		var key string
		switch {
		case decoded:
			var p string
			var found bool
			key, p, found = strings.Cut(k, " payload: ")
			rest = ""
			if found {
				rest = " payload: " + p
			}
		case int(r.KeySize) <= len(k):
			key, rest = k[:r.KeySize], k[r.KeySize:]
		default:
			return r, fmt.Errorf("key shorter than keySize %d", r.KeySize)
		}
		r.Key = &key
	}
	if rest == "" {
		return r, nil
	}
	p, ok := strings.CutPrefix(rest, " payload: ")
	if !ok {
		return r, fmt.Errorf("after the key: %q", clipLine(rest))
	}
	if !decoded && len(p) != int(r.ValueSize) {
		return r, fmt.Errorf("payload of %d bytes, valueSize %d", len(p), r.ValueSize)
	}
	r.Payload = &p
	return r, nil
}

var dumpSnapshotFields = []string{"producerId", "producerEpoch", "coordinatorEpoch", "currentTxnFirstOffset", "lastTimestamp"}

var dumpSnapshotBatchFields = []string{"firstSequence", "lastSequence", "lastOffset", "offsetDelta", "timestamp"}

func parseSnapshotLine(line string) (SnapshotEntry, error) {
	var e SnapshotEntry
	tok := strings.Split(line, " ")
	names := dumpSnapshotFields
	if len(tok) == 2*(len(dumpSnapshotFields)+len(dumpSnapshotBatchFields)) {
		names = append(slices.Clone(dumpSnapshotFields), dumpSnapshotBatchFields...)
	}
	v, err := dumpFields(line, names...)
	if err != nil {
		return e, err
	}
	txn, err := javaOptionalLong(v[3])
	if err != nil {
		return e, err
	}
	v[3] = "0"
	n, err := parseInts(v)
	if err != nil {
		return e, err
	}
	e = SnapshotEntry{ProducerID: n[0], ProducerEpoch: int16(n[1]), CoordinatorEpoch: int32(n[2]), CurrentTxnFirstOffset: txn,
		LastTimestamp: n[4], FirstSequence: -1, LastSequence: -1, LastOffset: -1}
	if len(n) > 5 {
		if n[9] != n[4] {
			return e, fmt.Errorf("batch timestamp %d is not lastTimestamp %d", n[9], n[4])
		}
		e.FirstSequence, e.LastSequence, e.LastOffset, e.OffsetDelta = int32(n[5]), int32(n[6]), n[7], int32(n[8])
	}
	return e, nil
}

// parseStderr collects the reports on stderr; SLF4J's notice that it has
// no binding is the only line that is not one.
func (o *DumpOutput) parseStderr(stderr string) error {
	var nonConsecutive string
	for _, line := range scanLines(stderr) {
		switch {
		case strings.HasPrefix(line, "SLF4J: "):
			continue
		case strings.HasPrefix(line, "Non-consecutive offsets in "):
			nonConsecutive = strings.TrimPrefix(line, "Non-consecutive offsets in ")
			continue
		case nonConsecutive != "" && strings.HasPrefix(line, "  ") && strings.Contains(line, " is followed by "):
			a, b, _ := strings.Cut(strings.TrimSpace(line), " is followed by ")
			n, err := parseInts([]string{a, b})
			if err != nil {
				return fmt.Errorf("stderr %q: %w", line, err)
			}
			o.NonConsecutive[nonConsecutive] = append(o.NonConsecutive[nonConsecutive], [2]int64{n[0], n[1]})
			continue
		}
		nonConsecutive = ""
		o.Problems = append(o.Problems, line)
	}
	return nil
}
