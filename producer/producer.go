package producer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/partitioner"
)

// Producer sends records to the topics of an open log.Dir, as Kafka's
// KafkaProducer sends them to a cluster: Send partitions each record and
// appends it to its partition's batch in the RecordAccumulator, with memory
// from the BufferPool; one sender goroutine appends ready batches to the
// partitions' logs and completes their records.
//
// A Producer is safe for concurrent use by many goroutines.
type Producer struct {
	dir    *log.Dir
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	pool   *bufferPool
	acc    *accumulator
	part   *partitioner.Default // Kafka's built-in partitioning, when cfg.Partitioner is nil

	topics sync.Map // topic name -> *topicInfo

	closed     atomic.Bool
	closeOnce  sync.Once
	stop       chan struct{}
	senderDone chan struct{}
	started    time.Time
	stats      counters
	loadStats  []int        // the sender's scratch for partition load stats
	idem       *idempotence // nil unless enable.idempotence
	// lastTopic is the topic of the last Send, in front of topics: most
	// producers send to one topic, and a sync.Map lookup per record cost
	// 30 ns of a Send's 500.
	lastTopic atomic.Pointer[topicInfo]
}

// topicInfo caches a topic's partitions.
type topicInfo struct {
	name       string
	partitions []*log.Log
}

var clientIDs atomic.Int64

// New returns a producer for the topics of dir. It starts exactly one
// goroutine, the sender, which Close stops. cfg is validated; its zero
// fields are not defaults: start from DefaultConfig.
func New(dir *log.Dir, cfg Config) (*Producer, error) {
	if dir == nil {
		return nil, errors.New("producer: nil log.Dir")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ClientID == "" {
		cfg.ClientID = fmt.Sprintf("producer-%d", clientIDs.Add(1))
	}
	cfg.Interceptors = append([]Interceptor(nil), cfg.Interceptors...)
	p := &Producer{dir: dir, cfg: cfg, logger: cfg.Logger, now: cfg.Now, stop: make(chan struct{}), senderDone: make(chan struct{})}
	p.logger = logging.OrDefault(p.logger)
	p.logger = p.logger.With("client.id", cfg.ClientID)
	if p.now == nil {
		p.now = time.Now
	}
	if cfg.EnableIdempotence {
		idem, err := newIdempotence(context.Background(), dir, &p.cfg)
		if err != nil {
			return nil, err
		}
		p.idem = idem
	}
	p.pool = newBufferPool(cfg.BufferMemory, cfg.BatchSize)
	p.acc = newAccumulator(p.pool, &p.cfg, p.now)
	pc := partitioner.DefaultConfig()
	pc.BatchSize = max(cfg.BatchSize, 1)
	pc.AdaptivePartitioning = cfg.PartitionerAdaptive
	pc.IgnoreKeys = cfg.PartitionerIgnoreKeys
	part, err := partitioner.NewDefault(pc)
	if err != nil {
		return nil, err
	}
	p.part = part
	p.started = p.now()
	go p.run()
	return p, nil
}

// Send buffers a record for its partition and returns at once, unless the
// buffer pool is exhausted: then it blocks until memory is released,
// max.block.ms passes or ctx ends. The record's outcome arrives through the
// returned Future and cb (which may be nil).
//
// An error from Send itself means the record was not buffered and cb will
// not be called: the producer is closed (ErrClosed), ctx is already done
// (its error), the record is invalid
// (ErrInvalidRecord), too large (ErrRecordTooLarge), its topic or partition
// is unknown (log.ErrUnknownTopicOrPartition), no memory came in time, a
// transactional producer is outside a transaction (ErrTransactionState),
// or the producer has a fatal error (ErrProducerFenced, ErrProducerBroken).
// Errors after buffering (the log refused the batch, a storage error, the
// delivery timeout, a fenced transactional producer: ErrProducerFenced)
// arrive through cb and the Future.
//
// The record's key, value and headers are copied into the batch: the
// caller may reuse them once Send returns.
func (p *Producer) Send(ctx context.Context, r *Record, cb Callback) (Future, error) {
	if p.closed.Load() {
		return Future{err: ErrClosed}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Future{err: err}, err
	}
	for _, ic := range p.cfg.Interceptors {
		p.safely("interceptor", func() {
			if out := ic.OnSend(r); out != nil {
				r = out
			}
		})
	}
	fail := func(err error) (Future, error) {
		err = dirClosed(err)
		p.stats.errors.Add(1)
		return Future{err: err}, err
	}
	if p.idem != nil {
		if err := p.idem.checkSend(); err != nil {
			return fail(err)
		}
	}
	if r == nil || r.Topic == "" {
		return fail(fmt.Errorf("%w: a record needs a topic", ErrInvalidRecord))
	}
	ts := r.Timestamp.UnixMilli()
	if r.Timestamp.IsZero() {
		ts = p.now().UnixMilli()
	} else if ts < 0 {
		return fail(fmt.Errorf("%w: negative timestamp %d", ErrInvalidRecord, ts))
	}
	for _, h := range r.Headers {
		if h.Key == nil {
			return fail(fmt.Errorf("%w: a header key must not be nil", ErrInvalidRecord))
		}
	}
	estimate := estimateRecord(r)
	if size := batchOverhead + estimate; size > p.cfg.MaxRequestSize || int64(size) > p.cfg.BufferMemory {
		return fail(fmt.Errorf("%w: %d bytes with its batch, max.request.size is %d, buffer.memory %d",
			ErrRecordTooLarge, size, p.cfg.MaxRequestSize, p.cfg.BufferMemory))
	}
	info, err := p.topic(ctx, r.Topic)
	if err != nil {
		return fail(err)
	}
	n := int32(len(info.partitions))
	partition, sticky, err := p.partition(r, n)
	if err != nil {
		return fail(err)
	}
	res, err := p.acc.append(ctx, tpKey{r.Topic, partition}, info.partitions[partition], ts, r.Key, r.Value, r.Headers, cb, estimate)
	if err != nil {
		return fail(err)
	}
	if sticky {
		// Kafka's updatePartitionInfo: count the bytes, move on once the
		// sticky partition got batch.size of them in complete batches.
		p.part.Sticky().UpdateAfterAppend(r.Topic, partition, res.appendSize, res.batchFull, n)
	}
	return Future{b: res.batch, i: res.index}, nil
}

// partition picks the record's partition: an explicit one, the custom
// partitioner, or Kafka's built-in rule (keys hashed with murmur2, keyless
// records sticky to one partition at a time). sticky says the built-in
// sticky partitioner chose it and must hear about the append.
func (p *Producer) partition(r *Record, n int32) (part int32, sticky bool, err error) {
	switch {
	case r.Partition != nil:
		part = *r.Partition
	case p.cfg.Partitioner != nil:
		part = p.cfg.Partitioner.Partition(r.Topic, r.Key, r.Value, n)
		// Kafka's onNewBatch protocol: if the record would open a new batch
		// there, tell the partitioner and ask again (KafkaProducer.doSend).
		if obs, ok := p.cfg.Partitioner.(partitioner.BatchObserver); ok && part >= 0 && part < n &&
			p.acc.needsNewBatch(tpKey{r.Topic, part}, estimateRecord(r)) {
			obs.OnNewBatch(r.Topic, part, n)
			part = p.cfg.Partitioner.Partition(r.Topic, r.Key, r.Value, n)
		}
	default:
		if part = p.part.KeyPartition(r.Key, n); part == partitioner.UnknownPartition {
			sticky = true
			s := p.part.Sticky()
			part = s.Partition(r.Topic, n)
			// Kafka's partitionChanged: if that partition's batches are all
			// full, finish a switch an earlier append could not make.
			if p.acc.allBatchesFull(tpKey{r.Topic, part}) && s.UpdateAfterAppend(r.Topic, part, 0, true, n) {
				part = s.Partition(r.Topic, n)
			}
		}
	}
	if part < 0 || part >= n {
		return 0, false, fmt.Errorf("%w: partition %d of %s, which has %d", log.ErrUnknownTopicOrPartition, part, r.Topic, n)
	}
	return part, sticky, nil
}

// topic returns the cached partitions of a topic, loading them (or, with
// AutoCreateTopics, creating the topic) on first use.
func (p *Producer) topic(ctx context.Context, name string) (*topicInfo, error) {
	if t := p.lastTopic.Load(); t != nil && t.name == name {
		return t, nil
	}
	if v, ok := p.topics.Load(name); ok {
		t := v.(*topicInfo)
		p.lastTopic.Store(t)
		return t, nil
	}
	desc, err := p.dir.DescribeTopic(name)
	if errors.Is(err, log.ErrUnknownTopicOrPartition) && p.cfg.AutoCreateTopics {
		if _, cerr := p.dir.CreateTopic(ctx, name, int32(max(p.dir.Config().NumPartitions, 1)), nil); cerr != nil && !errors.Is(cerr, log.ErrTopicExists) {
			return nil, cerr
		}
		desc, err = p.dir.DescribeTopic(name)
	}
	if err != nil {
		return nil, err
	}
	info := &topicInfo{name: name}
	for i := range desc.Partitions {
		l, err := p.dir.Partition(name, i)
		if err != nil {
			return nil, err
		}
		info.partitions = append(info.partitions, l)
	}
	p.topics.Store(name, info)
	p.lastTopic.Store(info)
	return info, nil
}

// forgetTopic drops a topic from the cache (it was deleted or changed).
func (p *Producer) forgetTopic(name string) {
	p.topics.Delete(name)
	if t := p.lastTopic.Load(); t != nil && t.name == name {
		p.lastTopic.CompareAndSwap(t, nil)
	}
}

// Flush sends every buffered record and waits until all are complete (their
// callbacks have run), or until ctx ends. A ctx already done returns its
// error at once. As Kafka's flush, it reports no record's failure: a
// record's outcome is its callback's and its [Future]'s.
func (p *Producer) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	idle := p.acc.beginFlush()
	defer p.acc.endFlush()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting records, sends everything buffered, stops the
// sender and returns. If ctx ends first, the records still buffered fail
// with ErrClosed (their callbacks run) and Close returns ctx's error. Close
// is idempotent: later calls return nil at once.
func (p *Producer) Close(ctx context.Context) error {
	var err error
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		if ctx.Err() != nil {
			p.acc.abort() // no time at all: nothing more is sent
		}
		idle := p.acc.close()
		select {
		case <-idle:
		case <-ctx.Done():
			err = ctx.Err()
			p.acc.abort()
		}
		close(p.stop)
		<-p.senderDone
		if left := p.acc.abandon(); len(left) > 0 {
			for _, b := range left {
				b.err = ErrClosed
				p.complete(b)
				p.release(b)
			}
			p.acc.completed(len(left))
		}
		p.pool.Close()
		if c, ok := p.cfg.Partitioner.(io.Closer); ok {
			err = errors.Join(err, c.Close())
		}
	})
	return err
}
