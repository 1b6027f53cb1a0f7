package crashtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
)

// tp names a partition.
type tp struct {
	topic     string
	partition int32
}

func (t tp) String() string { return fmt.Sprintf("%s-%d", t.topic, t.partition) }

// loc is where a record is.
type loc struct {
	partition int32
	offset    int64
}

// Checker accumulates what the children acknowledged ([Checker.Observe])
// and checks a directory against it after each kill ([Checker.Check]). It
// is not safe for concurrent use.
type Checker struct {
	acked       map[tp]map[int64]string // acknowledged records at or above the last log start seen
	logStart    map[tp]int64            // the log start offsets of the last check
	committed   map[string]int64        // "<group> <tp>" -> the highest offset committed or seen
	commitStart map[string]bool         // transactions whose commit was requested
	commitDone  map[string]bool         // transactions whose CommitTransaction returned nil
	aborted     map[string]bool         // transactions whose abort was requested
	tsend       map[string]map[int]loc  // transaction -> index -> where its record was appended
	topics      map[string]topicState   // churn topic -> what must be true of it
	cacked      map[int64]compactRec    // acknowledged records of the compacted topic, by offset
	clatest     map[string]int64        // key -> offset of its latest acknowledged record there
	codecs      map[int]Codecs          // generation -> its producers' codecs
	share       shareSeen               // what the share group's members acknowledged

	// Totals for the report.
	Acks, Commits, OffsetCommits, Checks, RecordsRead int
	// CompactAcks counts acknowledged records of the compacted topic;
	// CompactRemoved the most records the cleaner had removed from it at a
	// check.
	CompactAcks, CompactRemoved int
	// CodecRecords counts the workload's records read back in checks, by
	// the codec of their batch.
	CodecRecords map[record.Compression]int
	// RemoteRecords counts the records of TopicAll read back from copies
	// in remote storage (below its first local segment), RemoteSegments
	// the most copies it had at a check.
	RemoteRecords, RemoteSegments int
	// ShareDone counts the records of TopicShare the children reported
	// accepted or rejected, ShareReleased those reported released;
	// ShareDrained the records the checks' share consumers were delivered
	// (acquired by a killed child and not acknowledged durably), of which
	// ShareRedelivered had been delivered before; ShareStates the share
	// state records decoded.
	ShareDone, ShareReleased, ShareDrained, ShareRedelivered, ShareStates int
}

// compactRec is an acknowledged record of the compacted topic.
type compactRec struct {
	key, value string // value is tombstoneShown for a tombstone
}

// NewChecker returns a Checker that has seen nothing.
func NewChecker() *Checker {
	return &Checker{
		acked: map[tp]map[int64]string{}, logStart: map[tp]int64{}, committed: map[string]int64{},
		commitStart: map[string]bool{}, commitDone: map[string]bool{}, aborted: map[string]bool{},
		tsend: map[string]map[int]loc{}, topics: map[string]topicState{},
		cacked: map[int64]compactRec{}, clatest: map[string]int64{},
		codecs: map[int]Codecs{}, CodecRecords: map[record.Compression]int{},
		share: newShareSeen(),
	}
}

// Generation records that generation gen's producers compress with codecs,
// before the generation starts: Check then expects every record of the
// generation in a batch of its producer's codec.
func (c *Checker) Generation(gen int, codecs Codecs) { c.codecs[gen] = codecs }

// Observe records one line of a child's output. A line that is not in the
// package's format (an "error" line, say) is an error.
func (c *Checker) Observe(line string) error {
	f := strings.Fields(line)
	bad := func() error { return fmt.Errorf("crashtest: unexpected child output %q", line) }
	if len(f) == 0 {
		return bad()
	}
	atoi := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return math.MinInt64
		}
		return n
	}
	switch {
	case f[0] == "ack" && len(f) == 6:
		t := tp{f[1], int32(atoi(f[2]))}
		off := atoi(f[3])
		if off < 0 {
			return bad()
		}
		if off < c.logStart[t] {
			return nil // already gone by retention at the last check: cannot be
		}
		if c.acked[t] == nil {
			c.acked[t] = map[int64]string{}
		}
		if prev, ok := c.acked[t][off]; ok && prev != f[4] {
			return fmt.Errorf("crashtest: %s offset %d acknowledged twice, for %s and %s", t, off, prev, f[4])
		}
		c.acked[t][off] = f[4]
		c.Acks++
	case f[0] == "cack" && len(f) == 4:
		off := atoi(f[1])
		if off < 0 {
			return bad()
		}
		if prev, ok := c.cacked[off]; ok && prev != (compactRec{f[2], f[3]}) {
			return fmt.Errorf("crashtest: %s offset %d acknowledged twice, for %v and %v", TopicCompact, off, prev, compactRec{f[2], f[3]})
		}
		c.cacked[off] = compactRec{f[2], f[3]}
		if latest, ok := c.clatest[f[2]]; !ok || off > latest {
			c.clatest[f[2]] = off
		}
		c.CompactAcks++
	case f[0] == "tsend" && len(f) == 5:
		if c.tsend[f[1]] == nil {
			c.tsend[f[1]] = map[int]loc{}
		}
		c.tsend[f[1]][int(atoi(f[2]))] = loc{int32(atoi(f[3])), atoi(f[4])}
	case f[0] == "commit-start" && len(f) == 2:
		c.commitStart[f[1]] = true
	case f[0] == "commit" && len(f) == 2:
		c.commitDone[f[1]] = true
		c.Commits++
	case f[0] == "abort-start" && len(f) == 2:
		c.aborted[f[1]] = true
	case f[0] == "offset" && len(f) == 5:
		k := f[1] + " " + tp{f[2], int32(atoi(f[3]))}.String()
		c.committed[k] = max(c.committed[k], atoi(f[4]))
		c.OffsetCommits++
	case f[0] == "sack-start" && len(f) == 3:
		off := atoi(f[1])
		if off < 0 {
			return bad()
		}
		c.share.intent[off] = true
	case f[0] == "sack" && len(f) == 4:
		off, dc := atoi(f[1]), atoi(f[3])
		if off < 0 || dc < 1 || dc > math.MaxInt16 {
			return bad()
		}
		return c.observeShareAck(off, f[2], int16(dc))
	case f[0] == "create-start" && len(f) == 2:
		c.topics[f[1]] = topicMaybe
	case f[0] == "created" && len(f) == 2:
		c.topics[f[1]] = topicPresent
	case f[0] == "delete-start" && len(f) == 2:
		c.topics[f[1]] = topicMaybe
	case f[0] == "deleted" && len(f) == 2:
		c.topics[f[1]] = topicAbsent
	default:
		return bad()
	}
	return nil
}

// topicState is what a check expects of a churn topic.
type topicState int

const (
	topicMaybe   topicState = iota // a creation or deletion was interrupted: either, with its configuration
	topicPresent                   // CreateTopic returned, DeleteTopic was not called
	topicAbsent                    // DeleteTopic returned
)

// checkConfig is the parent's configuration: the child's, with retention
// and checkpoints slowed down so that the directory holds still while it
// is checked.
func checkConfig(dir string) log.Config {
	cfg := DirConfig(dir)
	cfg.RemoteLogManagerTaskInterval = time.Hour
	cfg.RetentionCheckInterval = time.Hour
	cfg.FlushOffsetCheckpointInterval = time.Hour
	cfg.FlushStartOffsetCheckpointInterval = time.Hour
	cfg.ProducerIDExpirationCheckInterval = time.Hour
	return cfg
}

// scanned is one decoded data record.
type scanned struct {
	offset int64
	key    string
	value  string
	null   bool               // a null value (a tombstone)
	codec  record.Compression // of its batch
}

// Check opens dir (recovery must succeed), checks it against everything
// observed so far, as the package documentation lists, and closes it. The
// returned error joins every violation found.
func (c *Checker) Check(ctx context.Context, dir string) (err error) {
	c.Checks++
	d, err := log.Open(ctx, dir, checkConfig(dir))
	if err != nil {
		return fmt.Errorf("recovery failed: %w", err)
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	// Topics created and not deleted are there; deleted ones stay deleted;
	// either way, a topic there has the configuration it was created with.
	present := map[string]bool{}
	for _, name := range d.Topics() {
		present[name] = true
		if strings.HasPrefix(name, churnPrefix) {
			if _, ok := c.topics[name]; !ok {
				fail("topic %s is there but was never created", name)
			}
			if desc, err := d.DescribeTopic(name); err != nil {
				fail("describe %s: %v", name, err)
			} else if !maps.Equal(desc.Overrides, topicProps) {
				fail("topic %s has the overrides %v, created with %v", name, desc.Overrides, topicProps)
			}
		}
	}
	for name, want := range c.topics {
		switch {
		case want == topicPresent && !present[name]:
			fail("topic %s: created, not deleted, but absent", name)
		case want == topicAbsent && present[name]:
			fail("topic %s: deleted, but present", name)
		}
		if want == topicAbsent || want == topicMaybe && !present[name] {
			delete(c.topics, name) // gone for good: a churn name is never reused
		}
	}

	// Every partition of every topic, internal ones included, decodes from
	// its log start offset to its log end with CRCs checked and no gaps.
	data := map[tp][]scanned{}
	for _, name := range d.Topics() {
		desc, err := d.DescribeTopic(name)
		if err != nil {
			fail("describe %s: %v", name, err)
			continue
		}
		for p := range desc.Partitions {
			t := tp{name, p}
			l, err := d.Partition(name, p)
			if err != nil {
				fail("%s: %v", t, err)
				continue
			}
			recs, err := scan(l, l.Config().CleanupPolicy.Compact)
			if err != nil {
				fail("%s: %v", t, err)
			}
			c.RecordsRead += len(recs)
			data[t] = recs
			if name == TopicAll {
				local := l.LocalLogStartOffset()
				for _, r := range recs {
					if r.offset < local {
						c.RemoteRecords++
					}
				}
				c.RemoteSegments = max(c.RemoteSegments, l.Stats().RemoteSegments)
			}
			start := l.LogStartOffset()
			if prev, ok := c.logStart[t]; ok && start < prev {
				fail("%s: log start offset went back from %d to %d", t, prev, start)
			}
			c.logStart[t] = start
		}
	}

	for _, topic := range []string{TopicAll, TopicOne, TopicTxn, TopicShare} {
		c.checkValues(topic, data, fail)
	}
	c.checkCodecs(data, fail)
	for topic := range checkedPartitions {
		if !present[topic] {
			// Killed before creating it: then nothing was acknowledged.
			for p := range checkedPartitions[topic] {
				if n := len(c.acked[tp{topic, p}]); n > 0 {
					fail("topic %s is missing, with %d acknowledged records", topic, n)
				}
			}
			continue
		}
		for p := range checkedPartitions[topic] {
			t := tp{topic, p}
			l, err := d.Partition(topic, p)
			if err != nil {
				fail("%s: %v", t, err)
				continue
			}
			c.checkAcked(t, l, data[t], fail)
		}
	}

	// Completing transactions prepared before the kill is part of
	// recovery: attaching the transaction coordinator does it.
	if _, err := coordinator.Transactions(ctx, d); err != nil {
		fail("transaction coordinator: %v", err)
	} else if present[TopicTxn] {
		c.checkReadCommitted(d, fail)
	} else if len(c.commitStart) > 0 {
		fail("topic %s is missing, with transactions committed", TopicTxn)
	}
	c.checkGroupOffsets(ctx, d, fail)
	c.checkShare(ctx, d, present[TopicShare], data, fail)

	// Compaction phase.
	if present[TopicCompact] {
		if l, err := d.Partition(TopicCompact, 0); err == nil {
			// Every offset of the topic held a data record: the ones
			// without one now are the cleaner's doing.
			c.CompactRemoved = max(c.CompactRemoved, int(l.LogEndOffset()-l.LogStartOffset())-len(data[tp{TopicCompact, 0}]))
		}
		c.checkCompacted(data[tp{TopicCompact, 0}], fail)
	} else if len(c.cacked) > 0 {
		fail("topic %s is missing, with %d acknowledged records", TopicCompact, len(c.cacked))
	}
	return errors.Join(errs...)
}

// checkCompacted checks the compacted topic against what was acknowledged:
// the cleaner removes a record only when a newer record with the same key
// is in the log, so for every key the log holds a record at or after its
// latest acknowledged one (tombstones stay: delete.retention.ms is a day);
// a record present at an acknowledged offset is the one acknowledged; no
// value is there twice.
func (c *Checker) checkCompacted(recs []scanned, fail func(string, ...any)) {
	t := tp{TopicCompact, 0}
	newest := map[string]int64{}
	seen := map[string]int64{}
	var last int64 = -1
	for _, r := range recs {
		newest[r.key] = r.offset
		if want, ok := c.cacked[r.offset]; ok {
			got := compactRec{r.key, r.value}
			if r.null {
				got.value = tombstoneShown
			}
			if got != want {
				fail("%s: offset %d holds %v, acknowledged as %v", t, r.offset, got, want)
			}
		}
		if !r.null {
			if prev, ok := seen[r.value]; ok {
				fail("%s: value %q at offsets %d and %d", t, r.value, prev, r.offset)
			}
			seen[r.value] = r.offset
		}
		if r.offset <= last {
			fail("%s: offset %d after %d", t, r.offset, last)
		}
		last = r.offset
	}
	for key, off := range c.clatest {
		if got, ok := newest[key]; !ok || got < off {
			fail("%s: key %s: the latest acknowledged record, at offset %d (%v), is gone and nothing newer is there (newest %d, present %v)",
				t, key, off, c.cacked[off], got, ok)
		}
	}
}

// scan reads a partition from its log start offset to its end as raw
// batches and decodes every one with its CRC checked. Offsets must be
// gapless unless gaps are allowed (a compacted topic: the cleaner removes
// records and whole batches). It returns the data records.
func scan(l *log.Log, gaps bool) ([]scanned, error) {
	start, end := l.LogStartOffset(), l.LogEndOffset()
	var out []scanned
	r := record.NewReader(record.ReaderOptions{})
	next := start
	first := true
	for next < end {
		res, err := l.Read(next, 1<<20, true)
		if err != nil {
			return out, fmt.Errorf("read at %d: %w", next, err)
		}
		if res.Slice == nil {
			return out, fmt.Errorf("nothing at %d below the log end %d", next, end)
		}
		buf, err := res.Slice.Bytes(nil)
		res.Release()
		if err != nil {
			return out, fmt.Errorf("read at %d: %w", next, err)
		}
		for pos := 0; pos < len(buf); {
			n, err := record.BatchSize(buf[pos:])
			if err != nil || pos+n > len(buf) {
				return out, fmt.Errorf("batch at %d: size %d of %d: %v", next, n, len(buf)-pos, err)
			}
			if err := r.Reset(buf[pos : pos+n]); err != nil {
				return out, fmt.Errorf("batch at %d: %w", next, err)
			}
			h := r.Header()
			if h.BaseOffset != next && !(first && h.BaseOffset < next) && !(gaps && h.BaseOffset > next) {
				return out, fmt.Errorf("batch at base offset %d, want %d", h.BaseOffset, next)
			}
			first = false
			want := h.BaseOffset
			for r.Next() {
				rec := r.Record()
				if rec.Offset != want && !(gaps && rec.Offset > want) {
					return out, fmt.Errorf("record offset %d in batch %d, want %d", rec.Offset, h.BaseOffset, want)
				}
				want = rec.Offset + 1
				if !h.Attributes.IsControl() && rec.Offset >= start {
					out = append(out, scanned{offset: rec.Offset, key: string(rec.Key), value: string(rec.Value), null: rec.Value == nil,
						codec: h.Attributes.Compression()})
				}
			}
			if err := r.Err(); err != nil {
				return out, fmt.Errorf("batch %d: %w", h.BaseOffset, err)
			}
			next = h.NextOffset()
			pos += n
		}
	}
	if next != end {
		return out, fmt.Errorf("batches end at %d, log end offset %d", next, end)
	}
	return out, nil
}

// checkValues checks that no value of topic appears twice and that the
// records of one generation's stream are in order per partition.
func (c *Checker) checkValues(topic string, data map[tp][]scanned, fail func(string, ...any)) {
	where := map[string]tp{}
	for p := range checkedPartitions[topic] {
		t := tp{topic, p}
		last := map[string]int64{} // generation -> last sequence
		for _, r := range data[t] {
			if prev, ok := where[r.value]; ok {
				fail("%s: value %q at offset %d is a duplicate (also in %s)", t, r.value, r.offset, prev)
			}
			where[r.value] = t
			if topic == TopicTxn {
				continue
			}
			gen, seq, ok := parsePlain(r.value, topic)
			if !ok {
				fail("%s: offset %d: value %q is not the workload's", t, r.offset, r.value)
				continue
			}
			if prev, ok := last[gen]; ok && seq <= prev {
				fail("%s: offset %d: %q after sequence %d: out of order", t, r.offset, r.value, prev)
			}
			last[gen] = seq
		}
	}
}

// checkCodecs checks that every record of the workload's topics is in a
// batch of the codec its generation's producer was given (the log keeps a
// producer's codec, and the cleaner a batch's), and counts them by codec.
// Tombstones, whose values do not name a generation, are counted only.
func (c *Checker) checkCodecs(data map[tp][]scanned, fail func(string, ...any)) {
	for t, recs := range data {
		if _, ok := (Codecs{}).For(t.topic); !ok {
			continue // an internal or churn topic
		}
		for _, r := range recs {
			c.CodecRecords[r.codec]++
			if r.null {
				continue
			}
			gen, ok := generationOf(r.value)
			if !ok {
				fail("%s: offset %d: value %q names no generation", t, r.offset, r.value)
				continue
			}
			codecs, ok := c.codecs[gen]
			if !ok {
				fail("%s: offset %d: value %q of generation %d, whose codecs were never given", t, r.offset, r.value, gen)
				continue
			}
			if want, _ := codecs.For(t.topic); r.codec != want {
				fail("%s: offset %d: value %q in a %v batch, its producer's codec is %v (generation %d: %v)", t, r.offset, r.value, r.codec, want, gen, codecs)
			}
		}
	}
}

// generationOf returns the generation a workload value names: the number
// after its leading "g" ("g12:all:7", "g12t3:0:2").
func generationOf(v string) (int, bool) {
	rest, ok := strings.CutPrefix(v, "g")
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	gen, err := strconv.Atoi(rest[:n])
	return gen, err == nil
}

// parsePlain splits "g<gen>:<topic>:<seq>".
func parsePlain(v, topic string) (gen string, seq int64, ok bool) {
	f := strings.Split(v, ":")
	if len(f) != 3 || f[1] != topic || !strings.HasPrefix(f[0], "g") {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(f[2], 10, 64)
	return f[0], seq, err == nil
}

// checkAcked checks that every acknowledged record of t at or above the
// log start offset is at its offset with its value, and forgets those
// below it (retention deleted them; the log start never goes back).
func (c *Checker) checkAcked(t tp, l *log.Log, recs []scanned, fail func(string, ...any)) {
	at := make(map[int64]string, len(recs))
	for _, r := range recs {
		at[r.offset] = r.value
	}
	start := l.LogStartOffset()
	for off, v := range c.acked[t] {
		if off < start {
			delete(c.acked[t], off)
			continue
		}
		if got, ok := at[off]; !ok {
			fail("%s: acknowledged %q at offset %d is missing (log [%d, %d))", t, v, off, start, l.LogEndOffset())
		} else if got != v {
			fail("%s: offset %d holds %q, acknowledged as %q", t, off, got, v)
		}
	}
}

// txnRecord is a record of the transactional topic seen by read_committed.
type txnRecord struct {
	partition int32
	offset    int64
	index     int
	count     int
}

// checkReadCommitted reads TopicTxn with read_committed and checks that it
// shows only transactions whose commit was requested and never one whose
// abort was, whole (but for records below the log start offset), and that
// every transaction whose commit returned is visible.
func (c *Checker) checkReadCommitted(d *log.Dir, fail func(string, ...any)) {
	visible := map[string][]txnRecord{}
	starts := map[int32]int64{}
	for p := range topicPartitions[TopicTxn] {
		l, err := d.Partition(TopicTxn, p)
		if err != nil {
			fail("%s-%d: %v", TopicTxn, p, err)
			return
		}
		starts[p] = l.LogStartOffset()
		lso := l.LastStableOffset()
		var rr log.RecordReader
		for off := l.LogStartOffset(); off < lso; {
			next, err := rr.ReadCommittedRecords(l, off, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
				f := strings.Split(string(rec.Value), ":")
				if len(f) != 3 {
					return fmt.Errorf("offset %d: value %q is not the workload's", rec.Offset, rec.Value)
				}
				i, _ := strconv.Atoi(f[1])
				n, _ := strconv.Atoi(f[2])
				visible[f[0]] = append(visible[f[0]], txnRecord{p, rec.Offset, i, n})
				return nil
			})
			if err != nil {
				fail("%s-%d: read_committed at %d: %v", TopicTxn, p, off, err)
				break
			}
			if next <= off {
				fail("%s-%d: read_committed made no progress at %d", TopicTxn, p, off)
				break
			}
			off = next
		}
	}
	for txn, recs := range visible {
		if c.aborted[txn] {
			fail("read_committed shows aborted transaction %s", txn)
		}
		if !c.commitStart[txn] {
			fail("read_committed shows transaction %s, whose commit was never requested", txn)
		}
		count := recs[0].count
		seen := map[int]txnRecord{}
		for _, r := range recs {
			seen[r.index] = r
		}
		for i := range count {
			if _, ok := seen[i]; ok {
				continue
			}
			p := int32(i) % topicPartitions[TopicTxn]
			if l, ok := c.tsend[txn][i]; ok {
				if l.offset >= starts[p] {
					fail("transaction %s: record %d at %s-%d@%d is not visible, others are", txn, i, TopicTxn, p, l.offset)
				}
				continue
			}
			// Without the send's line: only retention can explain it, and
			// then no earlier record of the transaction in p is visible.
			if starts[p] == 0 {
				fail("transaction %s: record %d of %d is not visible, others are", txn, i, count)
			}
			for j := range i {
				if _, ok := seen[j]; ok && int32(j)%topicPartitions[TopicTxn] == p {
					fail("transaction %s: record %d is visible but the later record %d is not", txn, j, i)
				}
			}
		}
	}
	for txn := range c.commitDone {
		for i, l := range c.tsend[txn] {
			if l.offset < starts[l.partition] {
				continue
			}
			if !slices.ContainsFunc(visible[txn], func(r txnRecord) bool { return r.index == i && r.offset == l.offset }) {
				fail("committed transaction %s: record %d at %s-%d@%d is not visible to read_committed", txn, i, TopicTxn, l.partition, l.offset)
			}
		}
	}
	// Forget transactions that can no longer be seen, to keep the maps
	// small over long runs.
	for txn := range c.commitDone {
		if _, ok := visible[txn]; !ok && len(c.tsend[txn]) > 0 && allBelow(c.tsend[txn], starts) {
			delete(c.commitDone, txn)
			delete(c.commitStart, txn)
			delete(c.tsend, txn)
		}
	}
}

func allBelow(locs map[int]loc, starts map[int32]int64) bool {
	for _, l := range locs {
		if l.offset >= starts[l.partition] {
			return false
		}
	}
	return true
}

// checkGroupOffsets checks that each group's committed offsets are at least
// every offset a child's CommitSync returned for, at least what the last
// check found (they never go backwards), and within the log.
func (c *Checker) checkGroupOffsets(ctx context.Context, d *log.Dir, fail func(string, ...any)) {
	groups, err := coordinator.Groups(ctx, d)
	if err != nil {
		fail("group coordinator: %v", err)
		return
	}
	for _, group := range []string{GroupPlain, GroupCommitted} {
		got := groups.FetchOffsets(group, nil)
		seen := map[string]bool{}
		for ctp, om := range got {
			k := group + " " + tp{ctp.Topic, ctp.Partition}.String()
			seen[k] = true
			if om.Offset < c.committed[k] {
				fail("group %s: committed offset of %s-%d went back to %d from %d", group, ctp.Topic, ctp.Partition, om.Offset, c.committed[k])
			}
			c.committed[k] = max(c.committed[k], om.Offset)
			if l, err := d.Partition(ctp.Topic, ctp.Partition); err == nil && om.Offset > l.LogEndOffset() {
				fail("group %s: committed offset %d of %s-%d is past the log end %d", group, om.Offset, ctp.Topic, ctp.Partition, l.LogEndOffset())
			}
		}
		for _, k := range slices.Sorted(maps.Keys(c.committed)) {
			if strings.HasPrefix(k, group+" ") && !seen[k] {
				fail("group %s: the commit of %s is lost", group, k)
			}
		}
	}
}
