package migrate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// readChunkBytes is how much one read of a partition asks for.
const readChunkBytes = 1 << 20

// rec is a record held for copying or comparing: its bytes are its own
// (they live in a slab of the reader that made it, never reused).
type rec struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []record.Header
	// Of the source batch: its base offset, codec and timestamp type.
	Batch         int64
	Codec         record.Compression
	LogAppendTime bool
}

// size is what the progress counts as the record's bytes.
func (r *rec) size() int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// difference says how b differs from a, "" if it does not: key, value
// (null and empty told apart), headers and timestamp; the timestamp type
// too if withType.
func difference(a, b *rec, withType bool) string {
	switch {
	case !sameBytes(a.Key, b.Key):
		return fmt.Sprintf("key %s, want %s", show(b.Key), show(a.Key))
	case !sameBytes(a.Value, b.Value):
		return fmt.Sprintf("value %s, want %s", show(b.Value), show(a.Value))
	case a.Timestamp != b.Timestamp:
		return fmt.Sprintf("timestamp %d, want %d", b.Timestamp, a.Timestamp)
	case withType && a.LogAppendTime != b.LogAppendTime:
		return fmt.Sprintf("LogAppendTime %v, want %v", b.LogAppendTime, a.LogAppendTime)
	case len(a.Headers) != len(b.Headers):
		return fmt.Sprintf("%d headers, want %d", len(b.Headers), len(a.Headers))
	}
	for i := range a.Headers {
		if !bytes.Equal(a.Headers[i].Key, b.Headers[i].Key) || !sameBytes(a.Headers[i].Value, b.Headers[i].Value) {
			return fmt.Sprintf("header %d %q=%s, want %q=%s", i, b.Headers[i].Key, show(b.Headers[i].Value),
				a.Headers[i].Key, show(a.Headers[i].Value))
		}
	}
	return ""
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func show(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > 32 {
		return fmt.Sprintf("%q... (%d bytes)", b[:32], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// slab holds the bytes of the records a reader made. Appending may move
// it to a larger array; records made earlier keep the old one.
type slab []byte

func (s *slab) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(*s)
	*s = append(*s, b...)
	return (*s)[start:len(*s):len(*s)]
}

func (s *slab) keepRecord(r *record.Record, h *record.BatchHeader) rec {
	out := rec{Offset: r.Offset, Timestamp: r.Timestamp, Key: s.keep(r.Key), Value: s.keep(r.Value),
		Batch: h.BaseOffset, Codec: h.Attributes.Compression(),
		LogAppendTime: h.Attributes.TimestampType() == record.LogAppendTime}
	if len(r.Headers) > 0 {
		out.Headers = make([]record.Header, len(r.Headers))
		for i, hd := range r.Headers {
			out.Headers[i] = record.Header{Key: s.keep(hd.Key), Value: s.keep(hd.Value)}
		}
	}
	return out
}

// recordReader yields a partition's records in offset order; nil at the
// end.
type recordReader interface {
	next(ctx context.Context) (*rec, error)
}

// dirReader reads a kafkalite partition's committed records (no aborted
// ones, no markers) from an offset up to end.
type dirReader struct {
	l         *log.Log
	rr        log.RecordReader
	pos, end  int64
	buf       []rec
	i         int
	chunkSize int
}

func newDirReader(l *log.Log, from, end int64) *dirReader {
	return &dirReader{l: l, pos: from, end: end, chunkSize: readChunkBytes}
}

func (d *dirReader) next(ctx context.Context) (*rec, error) {
	for d.i == len(d.buf) {
		if d.pos >= d.end {
			return nil, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d.buf, d.i = d.buf[:0], 0
		var s slab
		end := d.end
		next, err := d.rr.ReadCommittedRecords(d.l, d.pos, d.chunkSize, func(r *record.Record, h *record.BatchHeader) error {
			if r.Offset < end {
				d.buf = append(d.buf, s.keepRecord(r, h))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("migrate: reading %s-%d at offset %d: %w", d.l.Topic(), d.l.Partition(), d.pos, err)
		}
		if next <= d.pos {
			// The last stable offset: nothing more to read.
			d.end = d.pos
			continue
		}
		d.pos = next
	}
	r := &d.buf[d.i]
	d.i++
	return r, nil
}

// partitionLeaders maps a cluster's topic partitions to their leaders, and
// its topics to their ids.
type clusterTopic struct {
	ID      kadm.TopicID
	Leaders map[int32]int32
}

func clusterTopics(ctx context.Context, adm *kadm.Client, topics ...string) (map[string]clusterTopic, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("migrate: metadata: %w", err)
	}
	out := map[string]clusterTopic{}
	for name, td := range md.Topics {
		if td.Err != nil {
			continue
		}
		ct := clusterTopic{ID: td.ID, Leaders: map[int32]int32{}}
		for p, pd := range td.Partitions {
			ct.Leaders[p] = pd.Leader
		}
		out[name] = ct
	}
	return out, nil
}

// clusterReader reads a cluster partition's records from an offset, with
// Fetch requests to its leader, until its offset reaches end (or the
// partition's end, if that comes first). Committed reads skip aborted
// transactions as Kafka's consumer does; control batches are always
// skipped.
type clusterReader struct {
	cl        *kgo.Client
	adm       *kadm.Client
	topic     string
	partition int32
	committed bool
	pos, end  int64
	// Gaps counts the times the partition's log start passed pos
	// (retention removed records before they were read).
	Gaps int64

	topicID kadm.TopicID
	leader  int32
	rd      *record.Reader
	buf     []rec
	i       int
}

func newClusterReader(cl *kgo.Client, topic string, partition int32, from, end int64, committed bool) *clusterReader {
	return &clusterReader{cl: cl, adm: kadm.NewClient(cl), topic: topic, partition: partition, pos: from, end: end,
		committed: committed, leader: -1, rd: record.NewReader(record.ReaderOptions{})}
}

func (c *clusterReader) next(ctx context.Context) (*rec, error) {
	for c.i == len(c.buf) {
		if c.pos >= c.end {
			return nil, nil
		}
		if err := c.fetch(ctx); err != nil {
			return nil, err
		}
	}
	r := &c.buf[c.i]
	c.i++
	return r, nil
}

// fetch reads the next chunk into c.buf, moving c.pos past it.
func (c *clusterReader) fetch(ctx context.Context) error {
	c.buf, c.i = c.buf[:0], 0
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, 2*time.Second)):
			}
		}
		if attempt >= 30 {
			return fmt.Errorf("migrate: fetching %s-%d: no leader answered", c.topic, c.partition)
		}
		if c.leader < 0 {
			cts, err := clusterTopics(ctx, c.adm, c.topic)
			if err != nil {
				continue
			}
			ct, ok := cts[c.topic]
			if !ok {
				return fmt.Errorf("migrate: fetching %s-%d: %w", c.topic, c.partition, kerr.UnknownTopicOrPartition)
			}
			leader, ok := ct.Leaders[c.partition]
			if !ok || leader < 0 {
				continue
			}
			c.topicID, c.leader = ct.ID, leader
		}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 500
		req.MinBytes = 1
		req.MaxBytes = 4 * readChunkBytes
		req.SessionEpoch = -1
		if c.committed {
			req.IsolationLevel = 1
		}
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = c.topic, c.topicID
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition, p.FetchOffset, p.PartitionMaxBytes = c.partition, c.pos, 4*readChunkBytes
		p.CurrentLeaderEpoch, p.LastFetchedEpoch, p.LogStartOffset = -1, -1, -1
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, c.cl.Broker(int(c.leader)))
		if err != nil {
			c.leader = -1
			continue
		}
		if resp.ErrorCode != 0 {
			c.leader = -1
			continue
		}
		var rp *kmsg.FetchResponseTopicPartition
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if resp.Topics[i].Partitions[j].Partition == c.partition {
					rp = &resp.Topics[i].Partitions[j]
				}
			}
		}
		if rp == nil {
			c.leader = -1
			continue
		}
		switch err := kerr.ErrorForCode(rp.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.OffsetOutOfRange):
			starts, lerr := c.adm.ListStartOffsets(ctx, c.topic)
			if lerr != nil {
				continue
			}
			o, ok := starts.Lookup(c.topic, c.partition)
			if !ok || o.Err != nil {
				continue
			}
			if c.pos < o.Offset {
				c.pos = o.Offset
				c.Gaps++
				continue
			}
			return fmt.Errorf("migrate: fetching %s-%d at %d: %w", c.topic, c.partition, c.pos, err)
		case kerr.IsRetriable(err) || errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.UnknownTopicID):
			c.leader = -1
			continue
		default:
			return fmt.Errorf("migrate: fetching %s-%d at %d: %w", c.topic, c.partition, c.pos, err)
		}
		before := c.pos
		if err := c.decode(rp); err != nil {
			return err
		}
		if c.pos == before && len(c.buf) == 0 {
			limit := rp.HighWatermark
			if c.committed && rp.LastStableOffset >= 0 {
				limit = rp.LastStableOffset
			}
			if limit <= c.pos {
				// Nothing more to read: the partition ends before end.
				c.end = c.pos
				return nil
			}
		}
		if len(c.buf) > 0 || c.pos >= c.end {
			return nil
		}
		// An answer without records to keep (only markers or aborted
		// data, or none yet within the wait): fetch again at once.
		attempt = -1
	}
}

// decode turns a fetched partition's batches into records, skipping
// control batches and (committed reads) aborted transactions as Kafka's
// consumer does: the aborted transactions of the response start, in
// firstOffset order, to mark their producer aborted, and the producer's
// ABORT marker ends that.
func (c *clusterReader) decode(rp *kmsg.FetchResponseTopicPartition) error {
	aborted := slices.Clone(rp.AbortedTransactions)
	slices.SortFunc(aborted, func(a, b kmsg.FetchResponseTopicPartitionAbortedTransaction) int {
		return cmp.Compare(a.FirstOffset, b.FirstOffset)
	})
	active := map[int64]bool{}
	var s slab
	b := rp.RecordBatches
	for len(b) > 0 {
		n, err := record.BatchSize(b)
		if err != nil || n > len(b) {
			break // a batch cut by the response's size limit
		}
		batch := b[:n]
		b = b[n:]
		if err := c.rd.Reset(batch); err != nil {
			return fmt.Errorf("migrate: fetching %s-%d at %d: %w", c.topic, c.partition, c.pos, err)
		}
		h := c.rd.Header()
		last := h.BaseOffset + int64(h.LastOffsetDelta)
		for len(aborted) > 0 && aborted[0].FirstOffset <= last {
			active[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		switch {
		case h.Attributes.IsControl():
			if c.committed && h.Attributes.IsTransactional() && c.rd.Next() {
				if t, err := record.ParseControlKey(c.rd.Record().Key); err == nil && t == record.ControlAbort {
					delete(active, h.ProducerID)
				}
			}
		case last < c.pos:
		case c.committed && h.Attributes.IsTransactional() && active[h.ProducerID]:
		default:
			for c.rd.Next() {
				r := c.rd.Record()
				if r.Offset >= c.pos {
					c.buf = append(c.buf, s.keepRecord(r, &h))
				}
			}
			if err := c.rd.Err(); err != nil {
				return fmt.Errorf("migrate: fetching %s-%d at %d: %w", c.topic, c.partition, h.BaseOffset, err)
			}
		}
		c.pos = max(c.pos, last+1)
	}
	return nil
}
