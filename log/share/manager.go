package share

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// serviceName is the manager's name among the Dir's services.
const serviceName = "share-partition-manager"

// PartitionManager keeps the share-partitions of one log.Dir: Kafka's
// SharePartitionManager with its persister, the share coordinator. Get it
// with [Partitions]. It is safe for concurrent use. It owns one goroutine
// (acquisition lock expiry), which the Dir's Close stops.
//
// A share-partition is a share group's view of one topic partition: which
// records its members acquired, acknowledged or released. Its state is
// kept in memory for the records in flight and stored in
// __share_group_state (Kafka's ShareSnapshot records), durably before a
// call that changes it returns: an acknowledged record is never delivered
// again, across restarts and crashes.
type PartitionManager struct {
	dir    *log.Dir
	logger *slog.Logger
	now    func() time.Time
	store  *stateStore
	// settings returns a group's share settings (its configuration with
	// the Dir's defaults).
	settings func(group string) (limits, resetPolicy)

	mu     sync.Mutex // protects the fields below
	parts  map[partKey]*sharePartition
	locks  lockHeap // acquisition lock deadlines, earliest first
	closed bool

	wakeCh chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// partKey names a share-partition in memory.
type partKey struct {
	group     string
	topic     string
	partition int32
}

// Partitions returns the Dir's share-partition manager, creating it (and
// __share_group_state, compacted, with share.coordinator.state.topic.num.partitions
// partitions) on first use and loading the stored states. Every caller
// gets the same one. The Dir's Close closes it.
func Partitions(ctx context.Context, d *log.Dir) (*PartitionManager, error) {
	svc, err := d.Service(serviceName, func(d *log.Dir) (log.Service, error) { return open(ctx, d) })
	if err != nil {
		return nil, err
	}
	return svc.(*PartitionManager), nil
}

func open(ctx context.Context, d *log.Dir) (*PartitionManager, error) {
	cfg := d.Config()
	store, err := openStore(ctx, d)
	if err != nil {
		return nil, err
	}
	m := &PartitionManager{dir: d, logger: logging.OrDefault(cfg.Logger), now: cfg.Now, store: store,
		parts: map[partKey]*sharePartition{}, wakeCh: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if m.now == nil {
		m.now = time.Now
	}
	m.settings = func(group string) (limits, resetPolicy) { return groupSettings(d, group) }
	go m.run()
	return m, nil
}

// Close stops the manager's goroutine. Acquired records stay acquired in
// the stored state only as Available records with their delivery counts:
// a manager opened on the directory again delivers them again.
func (m *PartitionManager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	<-m.done
	return nil
}

// partition returns the share-partition of group for topic and partition,
// loading it from the store or initializing it (share.auto.offset.reset)
// when the group has no state for it.
func (m *PartitionManager) partition(ctx context.Context, group, topic string, partition int32) (*sharePartition, *log.Log, error) {
	if group == "" {
		return nil, nil, fmt.Errorf("%w: empty group id", ErrInvalidRequest)
	}
	l, err := m.dir.Partition(topic, partition)
	if err != nil {
		return nil, nil, err
	}
	desc, err := m.dir.DescribeTopic(topic)
	if err != nil {
		return nil, nil, err
	}
	k := partKey{group, topic, partition}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, nil, log.ErrClosed
	}
	p, ok := m.parts[k]
	if ok && p.key.topicID == desc.ID {
		m.mu.Unlock()
		return p, l, nil
	}
	m.mu.Unlock()

	key := stateKey{group: group, topic: topic, topicID: desc.ID, partition: partition}
	p, err = m.load(ctx, key, l)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if q, ok := m.parts[k]; ok && q.key.topicID == desc.ID {
		return q, l, nil // loaded by another call meanwhile
	}
	m.parts[k] = p
	return p, l, nil
}

// load builds a share-partition from its stored state, or initializes the
// state from the group's share.auto.offset.reset and stores it.
func (m *PartitionManager) load(ctx context.Context, key stateKey, l *log.Log) (*sharePartition, error) {
	if st, ok := m.store.get(key); ok {
		return fromState(key, st), nil
	}
	_, reset := m.settings(key.group)
	start, err := reset.startOffset(l, m.now())
	if err != nil {
		return nil, err
	}
	p := newSharePartition(key, start)
	if err := m.store.write(ctx, key, p.state(l.LeaderEpoch(), m.now())); err != nil {
		return nil, err
	}
	return p, nil
}

// forget drops a share-partition whose stored state may be behind the
// one in memory (a failed write): its next use loads it again.
func (m *PartitionManager) forget(p *sharePartition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := partKey{p.key.group, p.key.topic, p.key.partition}
	if m.parts[k] == p {
		delete(m.parts, k)
	}
}

// persist writes p's state, serialized with p's other writes. change runs
// under p's lock before the state is taken; it says whether there is
// anything to write. A failed write drops p from memory (see forget).
func (m *PartitionManager) persist(ctx context.Context, p *sharePartition, l *log.Log, change func() (bool, error)) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.mu.Lock()
	if p.broken {
		p.mu.Unlock()
		return fmt.Errorf("share: %s: %w", p.key, ErrStateLoading)
	}
	write, err := change()
	if err != nil || !write {
		p.mu.Unlock()
		return err
	}
	st := p.state(l.LeaderEpoch(), m.now())
	p.mu.Unlock()
	if err := m.store.write(ctx, p.key, st); err != nil {
		p.mu.Lock()
		p.broken = true
		p.mu.Unlock()
		m.forget(p)
		return err
	}
	return nil
}

// FetchRequest says what [PartitionManager.Acquire] acquires.
type FetchRequest struct {
	// GroupID and MemberID are the share group and its member acquiring.
	GroupID, MemberID string
	// Topic and Partition name the partition.
	Topic     string
	Partition int32
	// MaxRecords bounds the records acquired (the consumer's
	// max.poll.records), softly as Kafka bounds it: batches are acquired
	// whole, so more may be.
	MaxRecords int
	// MaxBytes bounds the bytes read from the log (at least one batch is).
	MaxBytes int
}

// AcquiredRecords are offsets a member acquired, each delivered
// DeliveryCount times counting this delivery: Kafka's AcquiredRecords.
type AcquiredRecords struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
}

// Fetched is what an acquisition returns: the batches read, and which of
// their offsets the member acquired. A reader hands out only the records
// of Acquired; the batches may hold others (acquired by other members,
// or done). Release Records when done.
type Fetched struct {
	Records  log.FetchResult
	Acquired []AcquiredRecords
	// LockDuration is the acquisition lock's duration
	// (share.record.lock.duration.ms): the member should acknowledge
	// before it runs out.
	LockDuration time.Duration
}

// Acquire reads records of a share-partition for a member and acquires
// those available: records released or whose lock expired first, then
// records never delivered, in whole batches, until about MaxRecords. The
// share-partition holds at most share.partition.max.record.locks records
// in flight (between its start offset and the last record acquired); at
// the limit only released records are acquired. Transaction markers, and
// under share.isolation.level=read_committed the records of aborted
// transactions, are archived as they are met, never delivered; a
// read_committed share-partition reads up to the last stable offset.
// Acquiring does not write the state: after a crash, records acquired but
// not acknowledged are delivered again. Fetched with nothing acquired and
// a nil error means nothing is available now ([PartitionManager.Wait]).
func (m *PartitionManager) Acquire(ctx context.Context, req FetchRequest) (Fetched, error) {
	if req.MemberID == "" {
		return Fetched{}, fmt.Errorf("%w: empty member id", ErrInvalidRequest)
	}
	p, l, err := m.partition(ctx, req.GroupID, req.Topic, req.Partition)
	if err != nil {
		return Fetched{}, err
	}
	lim, _ := m.settings(req.GroupID)
	maxRecords := req.MaxRecords
	if maxRecords <= 0 {
		maxRecords = 500 // Kafka's max.poll.records
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return Fetched{}, fmt.Errorf("share: %s: %w", p.key, ErrStateLoading)
	}
	p.skipTo(l.LogStartOffset())
	from := p.firstAvailable()
	if from == p.end && p.end-p.start >= int64(lim.maxLocks) {
		return Fetched{LockDuration: lim.lock}, nil // at the in-flight limit
	}
	res, err := l.Fetch(ctx, log.FetchParams{Offset: from, MaxBytes: req.MaxBytes, MinOneBatch: true, Isolation: log.IsolationLevel(lim.isolation)})
	if err != nil {
		return Fetched{}, err
	}
	if res.Slice == nil {
		return Fetched{LockDuration: lim.lock}, nil
	}
	var filter log.AbortFilter
	if log.IsolationLevel(lim.isolation) == log.ReadCommitted {
		filter.ResetTxns(res.AbortedTransactions)
	}
	deadline := m.now().Add(lim.lock).UnixNano()
	acq := acquisition{p: p, member: req.MemberID, deadline: deadline}
	err = batchHeaders(res.Slice, func(h *record.BatchHeader) error {
		if acq.n >= maxRecords {
			return errStop
		}
		skip := h.Attributes.IsControl() || (log.IsolationLevel(lim.isolation) == log.ReadCommitted && filter.Aborted(h))
		if !acq.batch(h.BaseOffset, h.BaseOffset+int64(h.LastOffsetDelta), skip, lim.maxLocks) {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		res.Release()
		return Fetched{}, err
	}
	p.advance()
	if len(acq.ranges) == 0 {
		res.Release()
		return Fetched{LockDuration: lim.lock}, nil
	}
	// The records returned end with the last batch acquired from: those
	// after it, up to MaxBytes, would be read by the consumer for nothing.
	// A header CutAt cannot read leaves the slice whole, which is still
	// right: the consumer meets the error reading it and releases them.
	_ = res.Slice.CutAt(acq.ranges[len(acq.ranges)-1].LastOffset + 1)
	m.scheduleLock(p, deadline)
	return Fetched{Records: res, Acquired: acq.ranges, LockDuration: lim.lock}, nil
}

// batchHeaders calls fn with the header of each batch of sl in order,
// reading the headers alone (BatchHeaderLen bytes each), not the records,
// which acquisition does not need: reading the whole slice cost a buffer
// of up to MaxBytes per acquisition. It stops at fn's first error.
func batchHeaders(sl *segment.Slice, fn func(h *record.BatchHeader) error) error {
	var b [record.BatchHeaderLen]byte
	for pos := int64(0); pos < sl.Size; {
		n, err := sl.ReadAt(b[:], pos)
		if n < len(b) {
			return &segment.Error{File: sl.LogFile(), Position: sl.Position + pos, Err: errors.Join(err, record.ErrTruncated)}
		}
		h, err := record.ParseHeader(b[:])
		if err != nil {
			return &segment.Error{File: sl.LogFile(), Position: sl.Position + pos, Err: err}
		}
		if err := fn(&h); err != nil {
			return err
		}
		pos += int64(h.Size())
	}
	return nil
}

// errStop ends a walk over batches early.
var errStop = errors.New("stop")

// acquisition acquires records of a share-partition batch by batch.
// REQUIRES p.mu held.
type acquisition struct {
	p        *sharePartition
	member   string
	deadline int64
	n        int // records acquired
	ranges   []AcquiredRecords
}

// batch acquires the records of one batch, first..last: those of the
// window that are Available, and those after the window's end when the
// batch starts a new stretch and the in-flight limit allows. A batch a
// consumer must not get (skip) is archived where it is new. It returns
// false when the limit stops the acquisition.
func (a *acquisition) batch(first, last int64, skip bool, maxLocks int) bool {
	p := a.p
	if last < p.start {
		return true
	}
	for o := max(first, p.start); o <= last && o < p.end; o++ {
		if r := p.at(o); r.state == stateAvailable && !skip {
			a.take(o, r)
		} else if r.state == stateAvailable && skip {
			r.state = stateArchived
		}
	}
	if last < p.end {
		return true
	}
	if p.end < first {
		// Offsets the log no longer holds (removed by compaction before
		// they were ever fetched): done.
		p.grow(first, recState{state: stateArchived})
	}
	if skip {
		p.grow(last+1, recState{state: stateArchived})
		return true
	}
	if p.end-p.start >= int64(maxLocks) {
		return false
	}
	for o := p.end; o <= last; o++ {
		p.grow(o+1, recState{state: stateAvailable})
		a.take(o, p.at(o))
	}
	return true
}

// take acquires the record at offset o.
func (a *acquisition) take(o int64, r *recState) {
	r.state, r.member, r.deadline = stateAcquired, a.member, a.deadline
	r.count++
	a.p.acquired++
	a.n++
	if n := len(a.ranges); n > 0 && a.ranges[n-1].LastOffset == o-1 && a.ranges[n-1].DeliveryCount == r.count {
		a.ranges[n-1].LastOffset = o
		return
	}
	a.ranges = append(a.ranges, AcquiredRecords{FirstOffset: o, LastOffset: o, DeliveryCount: r.count})
}

// Acknowledge applies a member's acknowledgements of records of one
// share-partition (ShareAcknowledge, or those a ShareFetch carries) and
// writes the state durably before it returns. They are applied all or
// none: a record not acquired by the member (or whose lock expired) fails
// them with [ErrInvalidRecordState]; offsets before the share-partition's
// start offset are done and skipped. Renewals only restart the locks.
func (m *PartitionManager) Acknowledge(ctx context.Context, group, member, topic string, partition int32, acks []AckBatch) error {
	lim, _ := m.settings(group)
	if err := checkAcks(acks, lim.renew); err != nil {
		return err
	}
	if len(acks) == 0 {
		return nil
	}
	p, l, err := m.partition(ctx, group, topic, partition)
	if err != nil {
		return err
	}
	renewed := false
	err = m.persist(ctx, p, l, func() (bool, error) {
		before := p.acquired
		write, err := p.acknowledge(member, acks, lim, m.now().UnixNano())
		renewed = err == nil && p.acquired == before
		return write, err
	})
	if renewed {
		m.scheduleLock(p, m.now().Add(lim.lock).UnixNano())
	}
	return err
}

// ReleaseMember releases every record member holds in group's
// share-partitions, as Kafka does when a member leaves or its share
// session closes, and writes the states that changed.
func (m *PartitionManager) ReleaseMember(ctx context.Context, group, member string) error {
	return m.releaseMember(ctx, group, member, m.groupPartitions(group))
}

// ReleaseMemberPartitions releases the records member holds in group's
// share-partitions of tps only, as Kafka does when a broker's share
// session of the member closes (it releases the session's partitions),
// and writes the states that changed.
func (m *PartitionManager) ReleaseMemberPartitions(ctx context.Context, group, member string, tps []log.TopicPartition) error {
	ps := m.groupPartitions(group)
	ps = slices.DeleteFunc(ps, func(p *sharePartition) bool {
		return !slices.Contains(tps, log.TopicPartition{Topic: p.key.topic, Partition: p.key.partition})
	})
	return m.releaseMember(ctx, group, member, ps)
}

func (m *PartitionManager) releaseMember(ctx context.Context, group, member string, ps []*sharePartition) error {
	lim, _ := m.settings(group)
	var errs []error
	for _, p := range ps {
		l, err := m.dir.Partition(p.key.topic, p.key.partition)
		if err != nil {
			continue // the topic is gone; so is the state's use
		}
		errs = append(errs, m.persist(ctx, p, l, func() (bool, error) { return p.releaseMember(member, lim.delivery), nil }))
	}
	return errors.Join(errs...)
}

// groupPartitions returns group's share-partitions in memory.
func (m *PartitionManager) groupPartitions(group string) []*sharePartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []*sharePartition
	for k, p := range m.parts {
		if k.group == group {
			ps = append(ps, p)
		}
	}
	return ps
}

// Wait returns when one of group's share-partitions of tps may have
// records to acquire (the log grew past what it handed out, or records
// were released or their locks expired), or when ctx ends (its error).
// A partition that cannot be read (its topic was deleted) is not waited
// on; with none left, Wait waits for ctx.
func (m *PartitionManager) Wait(ctx context.Context, group string, tps []log.TopicPartition) error {
	ctx, cancel := context.WithCancel(ctx)
	woke := make(chan struct{}, len(tps))
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	lim, _ := m.settings(group)
	for _, tp := range tps {
		p, l, err := m.partition(ctx, group, tp.Topic, tp.Partition)
		if err != nil {
			continue
		}
		p.mu.Lock()
		end, avail, ready := p.end, p.avail, p.firstAvailable() < p.end
		full := p.end-p.start >= int64(lim.maxLocks)
		p.mu.Unlock()
		if ready {
			return nil
		}
		if log.IsolationLevel(lim.isolation) == log.ReadCommitted && l.LastStableOffset() <= end {
			// An open transaction holds the records back: wait for the
			// next append (its marker among them).
			end = max(end, l.LogEndOffset())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			waitCtx, stop := context.WithCancel(ctx)
			defer stop()
			go func() {
				select {
				case <-avail:
					stop()
				case <-waitCtx.Done():
				}
			}()
			var err error
			if full {
				// At the in-flight limit only released records help.
				<-waitCtx.Done()
			} else {
				err = l.WaitForData(waitCtx, end)
			}
			if err == nil || ctx.Err() == nil {
				woke <- struct{}{}
			}
		}()
	}
	select {
	case <-woke:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scheduleLock makes the goroutine expire p's locks at deadline.
func (m *PartitionManager) scheduleLock(p *sharePartition, deadline int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.queued != 0 && p.queued <= deadline {
		return
	}
	p.queued = deadline
	heap.Push(&m.locks, lockEntry{deadline, p})
	if m.locks[0].p == p {
		select {
		case m.wakeCh <- struct{}{}:
		default:
		}
	}
}

// run expires acquisition locks as they fall due.
func (m *PartitionManager) run() {
	defer close(m.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		m.expireDue(m.now())
		m.mu.Lock()
		wait := time.Hour
		if len(m.locks) > 0 {
			wait = time.Duration(m.locks[0].deadline - m.now().UnixNano())
		}
		m.mu.Unlock()
		t.Reset(max(wait, time.Millisecond))
		select {
		case <-m.stop:
			return
		case <-t.C:
		case <-m.wakeCh:
		}
	}
}

// expireDue releases the records whose locks expired by now, and writes
// the states that changed.
func (m *PartitionManager) expireDue(now time.Time) {
	var due []*sharePartition
	m.mu.Lock()
	for len(m.locks) > 0 && m.locks[0].deadline <= now.UnixNano() {
		e := heap.Pop(&m.locks).(lockEntry)
		if e.p.queued == e.deadline {
			e.p.queued = 0
			due = append(due, e.p)
		}
	}
	m.mu.Unlock()
	ctx := context.Background()
	for _, p := range due {
		lim, _ := m.settings(p.key.group)
		l, err := m.dir.Partition(p.key.topic, p.key.partition)
		if err != nil {
			continue
		}
		var next int64
		err = m.persist(ctx, p, l, func() (bool, error) {
			changed := p.expire(now.UnixNano(), lim.delivery)
			next = p.nextDeadline()
			return changed, nil
		})
		if err != nil && !errors.Is(err, ErrStateLoading) {
			m.logger.Warn("share: writing the state after acquisition locks expired failed; it is loaded again at its next use",
				slog.String("share_partition", p.key.String()), slog.Any("error", err))
		}
		if next != 0 {
			m.scheduleLock(p, next)
		}
	}
}

// lockEntry is a share-partition's earliest lock deadline in the heap.
type lockEntry struct {
	deadline int64
	p        *sharePartition
}

// lockHeap is a min-heap of lock deadlines.
type lockHeap []lockEntry

func (h lockHeap) Len() int           { return len(h) }
func (h lockHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h lockHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lockHeap) Push(x any)        { *h = append(*h, x.(lockEntry)) }
func (h *lockHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
