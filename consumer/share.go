package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/record"
)

// ShareRecord is a record a [ShareConsumer] acquired: Kafka's
// ConsumerRecord of a share consumer, with its delivery count. Its byte
// slices are its own (copied out of the log), valid after the next Poll.
type ShareRecord struct {
	Record
	// DeliveryCount is how many times the record has been delivered to a
	// member of the group, this delivery included: 1 the first time, more
	// after a release or an expired acquisition lock.
	DeliveryCount int16
}

// AcknowledgeType is how a record is acknowledged: Kafka's
// AcknowledgeType ([share.AckType]).
type AcknowledgeType = share.AckType

// The acknowledgement types an application gives [ShareConsumer.Acknowledge].
const (
	// AcknowledgeAccept: processed; never delivered again.
	AcknowledgeAccept = share.AckAccept
	// AcknowledgeRelease: not processed; delivered again (to any member)
	// unless it reached the group's share.delivery.count.limit.
	AcknowledgeRelease = share.AckRelease
	// AcknowledgeReject: unprocessable; never delivered again.
	AcknowledgeReject = share.AckReject
)

// ErrInvalidRecordState is a partition's acknowledgement the share group
// refused because a record is no longer the member's (its acquisition
// lock expired, or the member left the group meanwhile): Kafka's
// INVALID_RECORD_STATE. The records go back to the group.
var ErrInvalidRecordState = share.ErrInvalidRecordState

// ErrInvalidAcknowledgement is an Acknowledge of a record the last Poll
// did not return, or acknowledged already: Kafka's IllegalStateException
// "The record cannot be acknowledged".
var ErrInvalidAcknowledgement = errors.New("consumer: the record cannot be acknowledged")

// AcknowledgementCommitCallback hears the outcome of acknowledgements
// sent for one partition: the offsets acknowledged, and nil or why the
// group refused them (all of them: a partition's acknowledgements are
// applied all or none). Kafka's AcknowledgementCommitCallback.
type AcknowledgementCommitCallback func(offsets map[TopicPartition][]int64, err error)

// ShareConsumer is Kafka's share consumer (KafkaShareConsumer, KIP-932),
// in process: a member of a share group, whose members read the same
// partitions together, each record delivered to one of them at a time
// under an acquisition lock and acknowledged one by one. See the package
// doc's "Share groups".
//
// A ShareConsumer is for one goroutine at a time, as Kafka's: a call made
// while another runs fails with [ErrConcurrentUse]. Its first Poll joins
// the group and starts one heartbeat goroutine, which Close stops;
// CommitAsync runs each commit on a goroutine of its own, which Close
// waits for. The acknowledgement commit callback runs on the caller's
// goroutine, inside Poll, CommitSync, CommitAsync and Close, as Kafka runs
// it on the application thread.
type ShareConsumer struct {
	dir    *log.Dir
	cfg    ShareConfig
	logger *slog.Logger
	coord  *coordinator.GroupCoordinator
	parts  *share.PartitionManager

	inUse  atomic.Int32
	closed bool
	member *shareMember // nil until Subscribe

	// buffered are records acquired and not yet returned, in acquisition
	// order (Acquire takes whole batches, Poll returns max.poll.records).
	buffered []ShareRecord
	// inflight are the records of the last Poll by partition and offset:
	// true once acknowledged.
	inflight map[TopicPartition]map[int64]bool
	// pending are acknowledgements not yet sent, by partition and offset.
	pending map[TopicPartition]map[int64]AcknowledgeType
	// err is a failure met after records were collected; the next Poll
	// returns it.
	err      error
	next     int // the partition the next acquisition starts at
	reader   *record.Reader
	buf      []byte
	callback AcknowledgementCommitCallback

	asyncMu   sync.Mutex    // protects the fields below
	completed []ackResult   // CommitAsync's outcomes, for the callback
	lastAsync chan struct{} // closed when the latest CommitAsync is done
	asyncWG   sync.WaitGroup

	stats shareStats
}

// ackResult is one partition's acknowledgements and their outcome.
type ackResult struct {
	tp      TopicPartition
	offsets []int64
	err     error
}

// NewShareConsumer returns a consumer of the share group cfg.GroupID of
// dir, using the Dir's group coordinator (membership) and share-partition
// manager (acquisition and acknowledgement), created on first use. It
// starts no goroutine: the first Poll after Subscribe joins the group.
func NewShareConsumer(dir *log.Dir, cfg ShareConfig) (*ShareConsumer, error) {
	if dir == nil {
		return nil, errors.New("consumer: nil log.Dir")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	coord, err := coordinator.Groups(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	parts, err := share.Partitions(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	c := &ShareConsumer{dir: dir, cfg: cfg, logger: logging.OrDefault(cfg.Logger), coord: coord, parts: parts,
		pending: map[TopicPartition]map[int64]AcknowledgeType{}, reader: record.NewReader(record.ReaderOptions{SkipCRC: !cfg.CheckCRCs})}
	if c.cfg.ClientID == "" {
		c.cfg.ClientID = fmt.Sprintf("consumer-%s-%d", cfg.GroupID, clientIDs.Add(1))
	}
	return c, nil
}

func (c *ShareConsumer) enter() error {
	if !c.inUse.CompareAndSwap(0, 1) {
		return ErrConcurrentUse
	}
	if c.closed {
		c.inUse.Store(0)
		return ErrClosed
	}
	return nil
}

func (c *ShareConsumer) exit() { c.inUse.Store(0) }

// Subscribe sets the topics whose records the consumer reads; an empty
// list unsubscribes, as in Kafka. The next Poll joins the group, or the
// next heartbeat tells the group of the change.
func (c *ShareConsumer) Subscribe(topics []string) error {
	if len(topics) == 0 {
		return c.Unsubscribe(context.Background())
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	for _, t := range topics {
		if t == "" {
			return fmt.Errorf("%w: an empty topic name in the subscription", ErrIllegalState)
		}
	}
	if c.member == nil {
		c.member = newShareMember(c)
	}
	c.member.setTopics(topics)
	return nil
}

// Subscription returns the subscribed topics, sorted.
func (c *ShareConsumer) Subscription() []string {
	if c.member == nil {
		return nil
	}
	return c.member.subscription()
}

// Unsubscribe sends the acknowledgements made, leaves the group (the group
// gets back every record the consumer holds) and drops the subscription.
func (c *ShareConsumer) Unsubscribe(ctx context.Context) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if c.member == nil {
		return nil
	}
	c.waitAsync()
	c.runCallbacks(c.takeCompleted())
	c.runCallbacks(c.send(ctx, c.memberID(), c.takePending()))
	err := c.member.leave(ctx)
	c.member, c.buffered, c.inflight = nil, nil, nil
	return dirClosed(err)
}

// SetAcknowledgementCommitCallback sets the callback that hears the
// outcome of every partition's acknowledgements (nil: none).
func (c *ShareConsumer) SetAcknowledgementCommitCallback(cb AcknowledgementCommitCallback) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	c.callback = cb
	return nil
}

// Poll returns records acquired for this member from the partitions the
// group assigns it, at most max.poll.records, each under an acquisition
// lock of the group's share.record.lock.duration.ms. When there are none
// it waits until records can be acquired or ctx ends (then it returns no
// records and ctx's error).
//
// First it settles the last Poll's records: with
// share.acknowledgement.mode=implicit it accepts them all; with explicit,
// each must have been acknowledged (ErrIllegalState otherwise, as Kafka's
// "All records must be acknowledged in explicit acknowledgement mode").
// It then sends the acknowledgements not yet sent (after those of
// CommitAsync still in flight); their outcome goes to the acknowledgement
// commit callback, not to Poll's error, as in Kafka. The first Poll joins
// the group.
//
// Offsets of an acquisition without a record (removed by compaction) are
// acknowledged as gaps, as Kafka's consumer does. A batch that fails to
// decode is released (it is delivered again, until
// share.delivery.count.limit archives it) and Poll returns a
// [*CorruptRecordError] after the records collected before it.
func (c *ShareConsumer) Poll(ctx context.Context) ([]ShareRecord, error) {
	recs, err := c.poll(ctx)
	return recs, dirClosed(err)
}

func (c *ShareConsumer) poll(ctx context.Context) ([]ShareRecord, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.waitAsync()
	c.runCallbacks(c.takeCompleted())
	if c.member == nil {
		return nil, fmt.Errorf("%w: the consumer is not subscribed to any topics", ErrIllegalState)
	}
	if err := c.settle(); err != nil {
		return nil, err
	}
	c.runCallbacks(c.send(ctx, c.memberID(), c.takePending()))
	if err := c.err; err != nil {
		c.err = nil
		return nil, err
	}
	if err := c.member.ensureJoined(ctx); err != nil {
		return nil, err
	}
	for {
		if len(c.buffered) > 0 {
			return c.handOut(), nil
		}
		changed := c.member.changed() // before looking, so no change is missed
		tps := c.member.assignment()
		if err := c.acquire(ctx, tps); err != nil {
			if len(c.buffered) == 0 {
				return nil, err
			}
			c.err = err
		}
		if len(c.buffered) > 0 {
			return c.handOut(), nil
		}
		if err := c.wait(ctx, tps, changed); err != nil {
			return nil, err
		}
	}
}

// settle accepts the last Poll's records (implicit mode) or checks they
// were all acknowledged (explicit mode), and forgets them.
func (c *ShareConsumer) settle() error {
	for tp, offsets := range c.inflight {
		for o, acked := range offsets {
			if acked {
				continue
			}
			if c.cfg.AcknowledgementMode == AcknowledgeExplicit {
				return fmt.Errorf("%w: all records must be acknowledged in explicit acknowledgement mode (%s offset %d is not)", ErrIllegalState, tp, o)
			}
			c.addPending(tp, o, AcknowledgeAccept)
		}
	}
	c.inflight = nil
	return nil
}

func (c *ShareConsumer) addPending(tp TopicPartition, offset int64, t AcknowledgeType) {
	m := c.pending[tp]
	if m == nil {
		m = map[int64]AcknowledgeType{}
		c.pending[tp] = m
	}
	m[offset] = t
}

// handOut returns up to max.poll.records buffered records and makes them
// the last Poll's.
func (c *ShareConsumer) handOut() []ShareRecord {
	n := min(len(c.buffered), c.cfg.MaxPollRecords)
	out := slices.Clone(c.buffered[:n])
	c.buffered = slices.Delete(c.buffered, 0, n)
	c.inflight = map[TopicPartition]map[int64]bool{}
	for _, r := range out {
		tp := TopicPartition{Topic: r.Topic, Partition: r.Partition}
		m := c.inflight[tp]
		if m == nil {
			m = map[int64]bool{}
			c.inflight[tp] = m
		}
		m[r.Offset] = false
	}
	c.stats.records.Add(int64(n))
	return out
}

// wait waits until one of tps may have records to acquire, the assignment
// changes, or ctx ends (its error).
func (c *ShareConsumer) wait(ctx context.Context, tps []TopicPartition, changed <-chan struct{}) error {
	waitCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-changed:
			cancel()
		case <-waitCtx.Done():
		}
	}()
	c.stats.waits.Add(1)
	_ = c.parts.Wait(waitCtx, c.cfg.GroupID, tps)
	cancel()
	<-done
	return ctx.Err()
}

// acquire acquires records of the assigned partitions, round robin, into
// c.buffered, until max.poll.records or fetch.max.bytes.
func (c *ShareConsumer) acquire(ctx context.Context, tps []TopicPartition) error {
	memberID := c.member.id()
	budget := c.cfg.FetchMaxBytes
	n := len(tps)
	for i := 0; i < n && len(c.buffered) < c.cfg.MaxPollRecords; i++ {
		tp := tps[(c.next+i)%n]
		f, err := c.parts.Acquire(ctx, share.FetchRequest{GroupID: c.cfg.GroupID, MemberID: memberID, Topic: tp.Topic,
			Partition: tp.Partition, MaxRecords: c.cfg.MaxPollRecords - len(c.buffered),
			MaxBytes: min(c.cfg.MaxPartitionFetchBytes, max(budget, 1))})
		if errors.Is(err, log.ErrUnknownTopicOrPartition) {
			continue // deleted meanwhile; the next heartbeat drops it
		}
		if err != nil {
			return fmt.Errorf("consumer: acquiring records of %s: %w", tp, err)
		}
		if len(f.Acquired) == 0 {
			continue
		}
		used, err := c.take(tp, f)
		f.Records.Release()
		budget -= used
		if err != nil {
			return err
		}
	}
	if n > 0 {
		c.next = (c.next + 1) % n
	}
	return nil
}

// take decodes the batches of an acquisition into c.buffered, keeping only
// the acquired offsets. Acquired offsets without a record are pending
// gaps; those of a batch that does not decode are pending releases (the
// error is returned after the others are taken). It returns the bytes
// read.
func (c *ShareConsumer) take(tp TopicPartition, f share.Fetched) (int, error) {
	acq := f.Acquired
	count := func(o int64) (int16, bool) {
		i, found := slices.BinarySearchFunc(acq, o, func(a share.AcquiredRecords, o int64) int {
			switch {
			case a.LastOffset < o:
				return -1
			case a.FirstOffset > o:
				return 1
			}
			return 0
		})
		if !found {
			return 0, false
		}
		return acq[i].DeliveryCount, true
	}
	handled := map[int64]bool{}
	var corrupt error
	buf, err := f.Records.Slice.Batches(c.buf, func(h *record.BatchHeader, batch []byte) error {
		if h.LastOffset() < acq[0].FirstOffset || h.BaseOffset > acq[len(acq)-1].LastOffset {
			return nil
		}
		err := c.reader.Reset(batch)
		for err == nil && c.reader.Next() {
			r := c.reader.Record()
			dc, ok := count(r.Offset)
			if !ok || handled[r.Offset] {
				continue
			}
			handled[r.Offset] = true
			cl := r.Clone()
			c.buffered = append(c.buffered, ShareRecord{DeliveryCount: dc, Record: Record{Topic: tp.Topic, Partition: tp.Partition,
				Offset: r.Offset, Timestamp: time.UnixMilli(r.Timestamp), TimestampType: h.Attributes.TimestampType(),
				Key: cl.Key, Value: cl.Value, Headers: cl.Headers, LeaderEpoch: h.PartitionLeaderEpoch}})
		}
		if err == nil {
			err = c.reader.Err()
		}
		if err != nil {
			// Release what the batch holds that was not taken: it is
			// delivered again, and archived at the delivery count limit.
			for o := max(h.BaseOffset, acq[0].FirstOffset); o <= h.LastOffset(); o++ {
				if _, ok := count(o); ok && !handled[o] {
					handled[o] = true
					c.addPending(tp, o, AcknowledgeRelease)
				}
			}
			if corrupt == nil {
				corrupt = &CorruptRecordError{Partition: tp, Offset: h.BaseOffset, ResumeAt: -1, Err: err}
			}
		}
		return nil
	})
	c.buf = buf
	c.stats.bytes.Add(int64(len(buf)))
	if err != nil {
		// The batches could not be read: give every acquired offset not
		// taken back.
		for _, a := range acq {
			for o := a.FirstOffset; o <= a.LastOffset; o++ {
				if !handled[o] {
					handled[o] = true
					c.addPending(tp, o, AcknowledgeRelease)
				}
			}
		}
		return len(buf), fmt.Errorf("consumer: reading acquired records of %s: %w", tp, err)
	}
	for _, a := range acq {
		for o := a.FirstOffset; o <= a.LastOffset; o++ {
			if !handled[o] {
				c.addPending(tp, o, share.AckGap)
			}
		}
	}
	return len(buf), corrupt
}

// Acknowledge acknowledges a record the last Poll returned, with
// share.acknowledgement.mode=explicit (in implicit mode it is refused with
// ErrIllegalState, as Kafka refuses it). The acknowledgement is sent by
// the next Poll, CommitSync, CommitAsync or Close. A record the last Poll
// did not return, or acknowledged already, is [ErrInvalidAcknowledgement].
// t is [AcknowledgeAccept], [AcknowledgeRelease] or [AcknowledgeReject].
func (c *ShareConsumer) Acknowledge(rec ShareRecord, t AcknowledgeType) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if c.cfg.AcknowledgementMode != AcknowledgeExplicit {
		return fmt.Errorf("%w: implicit acknowledgement of delivery is being used (share.acknowledgement.mode=implicit)", ErrIllegalState)
	}
	switch t {
	case AcknowledgeAccept, AcknowledgeRelease, AcknowledgeReject:
	default:
		return fmt.Errorf("%w: acknowledge type %s", ErrInvalidAcknowledgement, t)
	}
	tp := TopicPartition{Topic: rec.Topic, Partition: rec.Partition}
	acked, ok := c.inflight[tp][rec.Offset]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s offset %d was not returned by the last Poll", ErrInvalidAcknowledgement, tp, rec.Offset)
	case acked:
		return fmt.Errorf("%w: %s offset %d is acknowledged already", ErrInvalidAcknowledgement, tp, rec.Offset)
	}
	c.inflight[tp][rec.Offset] = true
	c.addPending(tp, rec.Offset, t)
	return nil
}

// CommitSync sends the acknowledgements not yet sent (in implicit mode,
// first accepting every record of the last Poll) and returns, per
// partition acknowledged, nil or why the group refused them
// ([ErrInvalidRecordState]: a lock expired, the records went back). The
// acknowledgements are durable when it returns. The callback hears them
// too. The error is the consumer's (closed, used concurrently, ctx done
// before anything was sent).
func (c *ShareConsumer) CommitSync(ctx context.Context) (map[TopicPartition]error, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.waitAsync()
	c.runCallbacks(c.takeCompleted())
	if c.cfg.AcknowledgementMode == AcknowledgeImplicit {
		_ = c.settle()
	}
	results := c.send(ctx, c.memberID(), c.takePending())
	c.runCallbacks(results)
	out := make(map[TopicPartition]error, len(results))
	for _, r := range results {
		out[r.tp] = dirClosed(r.err)
	}
	return out, nil
}

// CommitAsync sends the acknowledgements not yet sent (in implicit mode,
// first accepting every record of the last Poll) on a goroutine of its
// own; commits are applied in the order made. Their outcome goes to the
// acknowledgement commit callback, from the next Poll, CommitSync,
// CommitAsync or Close.
func (c *ShareConsumer) CommitAsync() error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	c.runCallbacks(c.takeCompleted())
	if c.cfg.AcknowledgementMode == AcknowledgeImplicit {
		_ = c.settle()
	}
	acks := c.takePending()
	if len(acks) == 0 {
		return nil
	}
	memberID := c.memberID()
	c.asyncMu.Lock()
	prev := c.lastAsync
	done := make(chan struct{})
	c.lastAsync = done
	c.asyncMu.Unlock()
	c.asyncWG.Add(1)
	go func() {
		defer c.asyncWG.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		results := c.send(context.Background(), memberID, acks)
		c.asyncMu.Lock()
		c.completed = append(c.completed, results...)
		c.asyncMu.Unlock()
	}()
	return nil
}

// memberID is the member id acknowledgements are sent under ("" before
// the consumer ever subscribed: the group refuses them).
func (c *ShareConsumer) memberID() string {
	if c.member == nil {
		return ""
	}
	return c.member.id()
}

// waitAsync waits for the asynchronous commits, so that what is sent next
// follows them.
func (c *ShareConsumer) waitAsync() { c.asyncWG.Wait() }

func (c *ShareConsumer) takeCompleted() []ackResult {
	c.asyncMu.Lock()
	defer c.asyncMu.Unlock()
	out := c.completed
	c.completed = nil
	return out
}

// partAcks are one partition's acknowledgements, ready to send.
type partAcks struct {
	tp      TopicPartition
	offsets []int64
	batches []share.AckBatch
}

// takePending turns the pending acknowledgements into batches (runs of
// consecutive offsets, one type per offset or one for the run) and clears
// them.
func (c *ShareConsumer) takePending() []partAcks {
	var out []partAcks
	for tp, m := range c.pending {
		if len(m) == 0 {
			continue
		}
		offsets := make([]int64, 0, len(m))
		for o := range m {
			offsets = append(offsets, o)
		}
		slices.Sort(offsets)
		pa := partAcks{tp: tp}
		for _, o := range offsets {
			t := m[o]
			if t != share.AckGap {
				pa.offsets = append(pa.offsets, o)
			}
			if n := len(pa.batches); n > 0 && pa.batches[n-1].LastOffset == o-1 {
				b := &pa.batches[n-1]
				b.LastOffset = o
				b.Types = append(b.Types, t)
				continue
			}
			pa.batches = append(pa.batches, share.AckBatch{FirstOffset: o, LastOffset: o, Types: []AcknowledgeType{t}})
		}
		for i := range pa.batches {
			if b := &pa.batches[i]; !slices.ContainsFunc(b.Types, func(t AcknowledgeType) bool { return t != b.Types[0] }) {
				b.Types = b.Types[:1]
			}
		}
		out = append(out, pa)
	}
	clear(c.pending)
	slices.SortFunc(out, func(a, b partAcks) int { return compareTPs(a.tp, b.tp) })
	return out
}

// send applies acknowledgements of memberID, partition by partition,
// durably. The goroutine of an asynchronous commit runs it too: it touches
// only the manager and the stats.
func (c *ShareConsumer) send(ctx context.Context, memberID string, acks []partAcks) []ackResult {
	if len(acks) == 0 {
		return nil
	}
	out := make([]ackResult, 0, len(acks))
	for _, pa := range acks {
		err := c.parts.Acknowledge(ctx, c.cfg.GroupID, memberID, pa.tp.Topic, pa.tp.Partition, pa.batches)
		if err != nil {
			c.stats.ackFailures.Add(1)
			c.logger.Debug("share acknowledgement refused", "group", c.cfg.GroupID, "partition", pa.tp, "err", err)
		} else {
			c.stats.acks.Add(int64(len(pa.offsets)))
		}
		out = append(out, ackResult{tp: pa.tp, offsets: pa.offsets, err: err})
	}
	return out
}

// runCallbacks gives outcomes to the acknowledgement commit callback.
func (c *ShareConsumer) runCallbacks(results []ackResult) {
	if c.callback == nil {
		return
	}
	for _, r := range results {
		if len(r.offsets) == 0 && r.err == nil {
			continue // gaps only
		}
		c.callback(map[TopicPartition][]int64{r.tp: r.offsets}, dirClosed(r.err))
	}
}

// Close sends the acknowledgements made, leaves the group and gives back
// every record the consumer still holds (they go to the group's other
// members), stops the heartbeat goroutine and waits for asynchronous
// commits; the callback hears the last outcomes. As in Kafka 4.4, in
// implicit mode the last Poll's records are not accepted by Close: they
// are released, and delivered again (commit first to accept them). A
// second Close returns nil.
func (c *ShareConsumer) Close(ctx context.Context) error {
	if !c.inUse.CompareAndSwap(0, 1) {
		return ErrConcurrentUse
	}
	defer c.exit()
	if c.closed {
		return nil
	}
	c.closed = true
	c.waitAsync()
	c.runCallbacks(c.takeCompleted())
	c.inflight = nil
	c.runCallbacks(c.send(ctx, c.memberID(), c.takePending()))
	var err error
	if c.member != nil {
		err = c.member.leave(ctx)
	}
	c.buffered = nil
	if errors.Is(err, log.ErrClosed) {
		err = nil // the Dir closed first: nothing is held any more
	}
	return err
}

func compareTPs(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

type shareStats struct {
	records, bytes, acks, ackFailures atomic.Int64
	// waits counts the times Poll blocked (tests check it does not spin).
	waits atomic.Int64
}

// ShareStats are a share consumer's main metrics since NewShareConsumer.
type ShareStats struct {
	// Records returned by Poll and Bytes read (records-consumed-total,
	// bytes-consumed-total).
	Records, Bytes int64
	// Acknowledgements are the records whose acknowledgements the group
	// took (gaps not counted); AcknowledgementFailures the partitions'
	// acknowledgements it refused.
	Acknowledgements, AcknowledgementFailures int64
}

// Stats returns the consumer's metrics. It is safe to call from any
// goroutine.
func (c *ShareConsumer) Stats() ShareStats {
	return ShareStats{Records: c.stats.records.Load(), Bytes: c.stats.bytes.Load(), Acknowledgements: c.stats.acks.Load(),
		AcknowledgementFailures: c.stats.ackFailures.Load()}
}
