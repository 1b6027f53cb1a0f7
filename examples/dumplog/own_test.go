package main

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// ownDir is a directory kafkalite wrote for a matrix case
// (writeOwnDir), open, and what it holds.
type ownDir struct {
	path string
	d    *log.Dir
	// all is every data record of ownTopic, committed, aborted and
	// non-transactional, as -json prints them, in dumplog's order
	// (partition, offset); committed is what read_committed shows.
	all, committed []jsonLine
	// stamped is the LogAppendTime given to stampedTopic's one record.
	stamped int64
}

// close closes the Dir.
func (o *ownDir) close(t *testing.T) {
	t.Helper()
	require.NoError(t, o.d.Close())
	o.d = nil
}

// want returns the records of ownTopic the isolation level of ic shows.
func (o *ownDir) want(ic matrix.Case) []jsonLine {
	if ic.ReadCommitted {
		return o.committed
	}
	return o.all
}

const (
	ownTopic     = "events"  // 2 partitions: transactions (one in three aborted) and plain records, keyed
	stampedTopic = "stamped" // 1 partition, LogAppendTime: one batch appended with Log.Append
	ownTxns      = 3
)

// ownRecord is record i of writeOwnDir: keys, values and header values of
// every kind, null and empty among them, and timestamps 1 ms apart.
func ownRecord(i int) *producer.Record {
	r := &producer.Record{
		Timestamp: time.UnixMilli(1700000000000 + int64(i)),
		Key:       fmt.Appendf(nil, "k%d", i%50),
		Value:     fmt.Appendf(nil, "value %d %s", i, strings.Repeat("abc", i%9)),
		Headers:   []record.Header{{Key: []byte("n"), Value: []byte(strconv.Itoa(i))}},
	}
	switch {
	case i%17 == 0:
		r.Key = nil
	case i%23 == 0:
		r.Key = []byte{}
	}
	switch {
	case i%19 == 0:
		r.Value = nil
	case i%29 == 0:
		r.Value = []byte{}
	}
	switch {
	case i%13 == 0:
		r.Headers = append(r.Headers, record.Header{Key: []byte("null"), Value: nil})
	case i%31 == 0:
		r.Headers = nil
	}
	return r
}

// asJSONLine is what -json prints for r, appended at md.
func asJSONLine(r *producer.Record, md producer.RecordMetadata) jsonLine {
	l := jsonLine{Topic: md.Topic, Partition: md.Partition, Offset: md.Offset, Timestamp: r.Timestamp.UnixMilli(), Key: r.Key, Value: r.Value}
	l.Headers = make([]struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	}, len(r.Headers))
	for i, h := range r.Headers {
		l.Headers[i].Key, l.Headers[i].Value = string(h.Key), h.Value
	}
	return l
}

// writeOwnDir writes a directory with kafkalite, in a t.TempDir(), as the
// case says (its codec and kind of poll; both isolation levels read the
// same directory): ownTopic gets ownTxns transactions (the second of every
// three aborted) of perTxn records per partition from a transactional
// producer and, after each, perTxn/5 per partition from a plain idempotent
// producer, all compressed with the case's codec; stampedTopic one batch
// of that codec. For multi-batch cases the producers make batches of about
// 1 KiB, many to a segment of 16 KiB; for single-batch ones every segment
// holds one batch (the records of a flush for a partition, or a
// transaction marker): the producers linger until a flush, and the test
// rolls the segments after each. The Dir is closed when the test ends.
func writeOwnDir(t *testing.T, mc matrix.Case, perTxn int) *ownDir {
	t.Helper()
	ctx := context.Background()
	o := &ownDir{path: t.TempDir()}
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	cfg.DefaultTopic.SegmentIndexBytes = 64 << 10 // not 10 MiB: -verify reads the active segments' preallocated indexes whole
	d, err := log.Open(ctx, o.path, cfg)
	require.NoError(t, err)
	o.d = d
	t.Cleanup(func() {
		if o.d != nil {
			require.NoError(t, o.d.Close())
		}
	})
	single := mc.Poll == matrix.SingleBatch
	require.Less(t, perTxn*200, 1<<20, "a flush's records for a partition fit a single-batch case's batch")
	segmentBytes := "16384"
	if single {
		segmentBytes = "1048576" // the test rolls the segments
	}
	_, err = d.CreateTopic(ctx, ownTopic, 2, map[string]string{"segment.bytes": segmentBytes, "index.interval.bytes": "100"})
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, stampedTopic, 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	require.NoError(t, err)

	configure := func(pcfg *producer.Config) {
		pcfg.CompressionType = mc.Codec
		pcfg.BatchSize = mc.BatchSize()
		if single {
			pcfg.Linger = time.Minute // a batch closes at a flush
		}
	}
	tcfg := producer.DefaultConfig()
	tcfg.TransactionalID = "dumplog-test"
	configure(&tcfg)
	txp, err := producer.New(d, tcfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, txp.Close(ctx)) }()
	require.NoError(t, txp.InitTransactions(ctx))
	pcfg := producer.DefaultConfig()
	configure(&pcfg)
	plain, err := producer.New(d, pcfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, plain.Close(ctx)) }()

	roll := func() {
		if !single {
			return
		}
		for p := range int32(2) {
			l, err := d.Partition(ownTopic, p)
			require.NoError(t, err)
			require.NoError(t, l.Roll(context.Background()))
		}
	}
	var mu sync.Mutex // the callbacks run on the producers' sender goroutines
	type sent struct {
		line      jsonLine
		committed bool
	}
	var all []sent
	i := 0
	send := func(p *producer.Producer, n int, committed bool) {
		for range n {
			for part := range int32(2) {
				r := ownRecord(i)
				i++
				r.Topic, r.Partition = ownTopic, &part
				_, err := p.Send(ctx, r, func(md producer.RecordMetadata, err error) {
					assert.NoError(t, err)
					mu.Lock()
					defer mu.Unlock()
					all = append(all, sent{asJSONLine(r, md), committed})
				})
				require.NoError(t, err)
			}
		}
		require.NoError(t, p.Flush(ctx))
		roll()
	}
	for txn := range ownTxns {
		abort := txn%3 == 1
		require.NoError(t, txp.BeginTransaction())
		send(txp, perTxn, !abort)
		if abort {
			require.NoError(t, txp.AbortTransaction(ctx))
		} else {
			require.NoError(t, txp.CommitTransaction(ctx))
		}
		roll()
		send(plain, perTxn/5, true)
	}

	stamped, err := d.Partition(stampedTopic, 0)
	require.NoError(t, err)
	batch, err := record.AppendBatch(nil, record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		Attributes: record.Attributes(0).WithCompression(mc.Codec)}, record.DefaultLevel, []record.Record{{Timestamp: 1, Value: []byte("x")}})
	require.NoError(t, err)
	res, err := stamped.Append(batch)
	require.NoError(t, err)
	o.stamped = res.LogAppendTime

	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(all, func(a, b sent) int {
		return cmp.Or(cmp.Compare(a.line.Partition, b.line.Partition), cmp.Compare(a.line.Offset, b.line.Offset))
	})
	for _, s := range all {
		o.all = append(o.all, s.line)
		if s.committed {
			o.committed = append(o.committed, s.line)
		}
	}
	require.Len(t, o.all, ownTxns*(perTxn+perTxn/5)*2)
	return o
}

// batchLine is a batch line of the text dump: its codec and whether it is
// a control batch.
var batchLine = regexp.MustCompile(`^baseOffset: \d+ .* isControl: (true|false) .* compresscodec: (\w+) crc: \d+ isvalid: true$`)

// segmentBatches parses a text dump of ownTopic: for each .log, the
// number of batches in it, and the codecs of the data and control batches.
func segmentBatches(t *testing.T, dump string) (perSegment map[string]int, data, control map[string]int) {
	t.Helper()
	perSegment, data, control = map[string]int{}, map[string]int{}, map[string]int{}
	file := ""
	for line := range strings.Lines(dump) {
		line = strings.TrimSuffix(line, "\n")
		if f, ok := strings.CutPrefix(line, "Dumping "); ok {
			file = ""
			if strings.HasSuffix(f, ".log") {
				file = f
				perSegment[file] = 0
			}
			continue
		}
		if !strings.HasPrefix(line, "baseOffset: ") {
			continue
		}
		m := batchLine.FindStringSubmatch(line)
		require.NotNil(t, m, "a batch line: %s", line)
		require.NotEmpty(t, file, "a batch line outside a .log: %s", line)
		perSegment[file]++
		if m[1] == "true" {
			control[m[2]]++
		} else {
			data[m[2]]++
		}
	}
	return perSegment, data, control
}

// TestKafkaliteDirectory dumps a directory kafkalite writes (writeOwnDir:
// committed and aborted transactions and plain records, several segments,
// a LogAppendTime topic) for every codec and both segment layouts, while
// its Dir is open (dumplog takes no lock and changes nothing; the active
// segments' indexes are still preallocated) and after Close: -verify finds
// no problem; at each -isolation, -json prints exactly the records that
// level shows, for the directory and for a partition directory, and the
// text dump shows every data batch with the codec, the markers
// uncompressed, and the segments holding one batch each or many.
func TestKafkaliteDirectory(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.Polls, func(t *testing.T, mc matrix.Case) {
		o := writeOwnDir(t, mc, 160) // multi-batch: about ten batches per partition and flush
		check := func(t *testing.T) {
			code, stdout, stderr := runDumplog("-verify", o.path)
			require.Equal(t, 0, code, "stderr:\n%s", stderr)
			require.Contains(t, stdout, "no problems")

			code, stdout, stderr = runDumplog("-json", filepath.Join(o.path, stampedTopic+"-0"))
			require.Equal(t, 0, code, stderr)
			lines := parseJSONLines(t, stdout)
			require.Len(t, lines, 1)
			require.Equal(t, o.stamped, lines[0].Timestamp, "LogAppendTime applied")
			require.InDelta(t, time.Now().UnixMilli(), lines[0].Timestamp, float64(time.Hour.Milliseconds()))

			matrix.Run(t, matrix.Isolations, func(t *testing.T, ic matrix.Case) {
				code, stdout, stderr := runDumplog("-json", "-isolation", ic.Isolation(), "-topic", ownTopic, o.path)
				require.Equal(t, 0, code, stderr)
				require.Empty(t, stderr)
				require.Equal(t, o.want(ic), parseJSONLines(t, stdout))

				code, stdout, stderr = runDumplog("-json", "-isolation", ic.Isolation(), filepath.Join(o.path, ownTopic+"-1"))
				require.Equal(t, 0, code, stderr)
				inPartition := 0
				for _, l := range o.want(ic) {
					if l.Partition == 1 {
						inPartition++
					}
				}
				require.Equal(t, inPartition, strings.Count(stdout, `{"topic":"`+ownTopic+`","partition":1,`), "a partition directory: its records")
				require.Equal(t, inPartition, strings.Count(stdout, "\n"), "a partition directory: nothing else")

				code, stdout, stderr = runDumplog("-isolation", ic.Isolation(), "-topic", ownTopic, o.path)
				require.Equal(t, 0, code, stderr)
				perSegment, data, control := segmentBatches(t, stdout)
				require.Equal(t, map[string]int{"none": 2 * ownTxns}, control, "the transaction markers, uncompressed")
				require.Len(t, data, 1, "data batches: %v", data)
				require.Positive(t, data[mc.Codec.String()], "data batches compressed with %v: %v", mc.Codec, data)
				most := 0
				for _, n := range perSegment {
					most = max(most, n)
				}
				if mc.Poll == matrix.SingleBatch {
					require.Equal(t, 1, most, "one batch per segment: %v", perSegment)
					require.Equal(t, 2*2*ownTxns, data[mc.Codec.String()], "a data batch per partition per flush, two flushes per transaction")
				} else {
					require.GreaterOrEqual(t, most, 5, "many batches per segment: %v", perSegment)
					require.Greater(t, len(perSegment), 2, "several segments: %v", perSegment)
				}
			})
		}
		t.Run("open", check)
		o.close(t)
		t.Run("closed", check)
	})
}

// TestReadCommittedAgreesWithLog adopts a copy of the fixture with
// log.Open and checks that its read_committed and read_uncommitted reads
// return the records dumplog prints, offset for offset.
func TestReadCommittedAgreesWithLog(t *testing.T) {
	ctx := context.Background()
	dir := copyFixture(t)
	cfg := log.DefaultConfig()
	cfg.NodeID = 1 // meta.properties says so
	cfg.AdoptBrokerDirectory = true
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	defer d.Close()
	l, err := d.Partition("orders", 0)
	require.NoError(t, err)

	read := func(committed bool) []int64 {
		var offsets []int64
		fn := func(rec *record.Record, _ *record.BatchHeader) error {
			offsets = append(offsets, rec.Offset)
			return nil
		}
		for next := int64(0); ; {
			var n int64
			if committed {
				n, err = l.ReadCommittedRecords(next, 1<<20, fn)
			} else {
				n, err = l.ReadRecords(next, 1<<20, fn)
			}
			require.NoError(t, err)
			if n == next {
				return offsets
			}
			next = n
		}
	}
	for _, tc := range []struct {
		isolation string
		committed bool
	}{{"read_uncommitted", false}, {"read_committed", true}} {
		code, stdout, stderr := runDumplog("-json", "-isolation", tc.isolation, filepath.Join(fixtureDir, "orders-0"))
		require.Equal(t, 0, code, stderr)
		var dumped []int64
		for _, line := range parseJSONLines(t, stdout) {
			dumped = append(dumped, line.Offset)
		}
		require.Equal(t, read(tc.committed), dumped, tc.isolation)
	}
}
