package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// Topics and the group of the service.
const (
	// EventsTopic holds the order events, keyed by customer: the source of
	// truth (the "outbox" is the log itself).
	EventsTopic = "order-events"
	// TotalsTopic is the projection's changelog, compacted, keyed by
	// customer, co-partitioned with EventsTopic: the latest Total of each
	// customer, from which a restarted service restores its view.
	TotalsTopic = "order-totals"
	// Group is the consumer group of the projection.
	Group = "order-totals-projection"
	// Partitions is the partition count of both topics.
	Partitions = 3
)

// Event types.
const (
	OrderPlaced    = "OrderPlaced"
	OrderCancelled = "OrderCancelled"
)

// Event is an order event, JSON in EventsTopic.
type Event struct {
	Type     string `json:"type"`
	Order    string `json:"order"`
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

// Total is a customer's entry in the view: what its events add up to, and
// the position of the last event applied, which makes applying idempotent.
type Total struct {
	Orders int   `json:"orders"` // placed minus cancelled
	Cents  int64 `json:"cents"`  // placed minus cancelled
	// Events counts the events applied: one per event of the customer,
	// if none was applied twice.
	Events int `json:"events"`
	// Partition and Offset locate the last event applied. A customer's
	// events are all in one partition (they are keyed by customer), so an
	// event at or below Offset was applied already.
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// Config configures a Service.
type Config struct {
	// CompressionType mirrors compression.type (Kafka's default none) of
	// the service's two producers: the codec of the events it appends to
	// EventsTopic and of the totals it writes to TotalsTopic. Changing it
	// between runs is fine: consumers read batches of every codec alike.
	CompressionType record.Compression
}

// DefaultConfig returns Kafka's defaults: no compression.
func DefaultConfig() Config {
	return Config{CompressionType: producer.DefaultConfig().CompressionType}
}

// Stats count what the projection did since Start.
type Stats struct {
	Applied int // events applied to the view
	Skipped int // events delivered again and skipped (already in the view)
	Commits int // offset commits
}

// Service is the order service: PlaceOrder and CancelOrder append events
// (the write path), and a background projection, a member of the consumer
// group Group, folds them into a view of totals per customer.
//
// Delivery to the projection is at least once: the projection writes the
// changed totals to TotalsTopic (acks=all), then commits the consumed
// offsets; a crash between the two delivers the events again after a
// restart. Applying is idempotent, so the view counts each event once: a
// Total remembers the offset of the last event it applied and skips the
// events at or below it. Transactions are not needed for that, because the
// state that must move with the offsets (the last offset applied) travels
// inside the state itself. The price: a customer's events must stay in one
// partition (adding partitions to EventsTopic would move keys), and with
// several instances, a partition must not be processed by two at once (the
// group's generations fence commits, not changelog writes).
//
// A Service is safe for concurrent use. Start starts one goroutine, the
// projection, which Close stops.
type Service struct {
	dir    *log.Dir
	writer *producer.Producer

	cancel context.CancelFunc // stops the projection's Poll
	done   chan struct{}      // closed when the projection exits
	err    error              // the projection's error, set before done closes

	mu       sync.Mutex // protects the following fields
	view     map[string]Total
	stats    Stats
	progress chan struct{} // closed and replaced after each commit
}

// Start opens the service on an open log directory with the configuration
// cfg: it creates the topics if needed, restores the view from TotalsTopic,
// and starts the projection, which resumes from the group's committed
// offsets.
func Start(ctx context.Context, d *log.Dir, cfg Config) (*Service, error) {
	for _, t := range []struct {
		name  string
		props map[string]string
	}{
		{EventsTopic, nil},
		{TotalsTopic, map[string]string{"cleanup.policy": "compact"}},
	} {
		if _, err := d.CreateTopic(ctx, t.name, Partitions, t.props); err != nil && !errors.Is(err, log.ErrTopicExists) {
			return nil, err
		}
	}
	view, err := restore(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("restoring the view: %w", err)
	}

	wcfg := producer.DefaultConfig() // acks=all, idempotent
	wcfg.Linger = 0                  // a request waits for its event: do not hold it back
	wcfg.CompressionType = cfg.CompressionType
	writer, err := producer.New(d, wcfg)
	if err != nil {
		return nil, err
	}
	pcfg := producer.DefaultConfig()
	pcfg.CompressionType = cfg.CompressionType
	projector, err := producer.New(d, pcfg)
	if err != nil {
		return nil, errors.Join(err, writer.Close(ctx))
	}
	ccfg := consumer.DefaultConfig()
	ccfg.GroupID = Group
	ccfg.EnableAutoCommit = false // committed after the changelog is durable
	ccfg.AutoOffsetReset = consumer.OffsetResetEarliest
	c, err := consumer.New(d, ccfg)
	if err == nil {
		err = c.Subscribe([]string{EventsTopic}, nil)
	}
	if err != nil {
		return nil, errors.Join(err, writer.Close(ctx), projector.Close(ctx))
	}

	pctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		dir: d, writer: writer, cancel: cancel, done: make(chan struct{}),
		view: view, progress: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		s.err = s.project(pctx, c, projector)
		s.err = errors.Join(s.err, c.Close(context.Background()), projector.Close(context.Background()))
	}()
	return s, nil
}

// PlaceOrder appends an OrderPlaced event and returns once it is durable.
func (s *Service) PlaceOrder(ctx context.Context, order, customer string, cents int64) error {
	return s.publish(ctx, Event{Type: OrderPlaced, Order: order, Customer: customer, Cents: cents})
}

// CancelOrder appends an OrderCancelled event for an order of cents and
// returns once it is durable.
func (s *Service) CancelOrder(ctx context.Context, order, customer string, cents int64) error {
	return s.publish(ctx, Event{Type: OrderCancelled, Order: order, Customer: customer, Cents: cents})
}

func (s *Service) publish(ctx context.Context, ev Event) error {
	value, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	fut, err := s.writer.Send(ctx, &producer.Record{Topic: EventsTopic, Key: []byte(ev.Customer), Value: value}, nil)
	if err != nil {
		return err
	}
	_, err = fut.Wait(ctx)
	return err
}

// Totals returns a copy of the view.
func (s *Service) Totals() map[string]Total {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Total, len(s.view))
	for k, v := range s.view {
		out[k] = v
	}
	return out
}

// Stats returns what the projection did since Start.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// CaughtUp waits until the group's committed offsets cover every event
// appended before the call — the projection (of this instance or another
// member of the group) has applied them and written its changelog — or until
// ctx ends or this instance's projection stops.
func (s *Service) CaughtUp(ctx context.Context) error {
	ends := map[consumer.TopicPartition]int64{}
	for p := range int32(Partitions) {
		l, err := s.dir.Partition(EventsTopic, p)
		if err != nil {
			return err
		}
		ends[consumer.TopicPartition{Topic: EventsTopic, Partition: p}] = l.HighWatermark()
	}
	for {
		s.mu.Lock()
		progress := s.progress
		s.mu.Unlock()
		group, err := consumer.DescribeGroup(ctx, s.dir, Group)
		if err != nil && !errors.Is(err, consumer.ErrUnknownGroup) {
			return err
		}
		behind := false
		for tp, end := range ends {
			if end > 0 && group.Offsets[tp].Offset < end {
				behind = true
			}
		}
		if !behind {
			return nil
		}
		select {
		case <-progress:
		case <-s.done:
			return fmt.Errorf("projection stopped: %w", s.err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the projection (a batch in progress is finished and
// committed first) and the write path's producer.
func (s *Service) Close(ctx context.Context) error {
	s.cancel()
	<-s.done
	return errors.Join(s.err, s.writer.Close(ctx))
}

// project is the projection's loop: poll, apply, write the changed totals
// durably, commit. It returns nil when ctx ends.
func (s *Service) project(ctx context.Context, c *consumer.Consumer, p *producer.Producer) error {
	// A batch runs to its end under work, even when ctx ends: only Poll
	// is interrupted.
	work := context.Background()
	for {
		recs, err := c.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		changed := s.apply(recs)
		var futs []producer.Future
		for customer, t := range changed {
			value, err := json.Marshal(t)
			if err != nil {
				return err
			}
			fut, err := p.Send(work, &producer.Record{Topic: TotalsTopic, Partition: &t.Partition, Key: []byte(customer), Value: value}, nil)
			if err != nil {
				return err
			}
			futs = append(futs, fut)
		}
		if err := p.Flush(work); err != nil {
			return err
		}
		for _, f := range futs {
			if _, err := f.Wait(work); err != nil {
				return err
			}
		}
		if err := c.CommitSync(work, nil); err != nil {
			if errors.Is(err, consumer.ErrRebalanceInProgress) || errors.Is(err, consumer.ErrIllegalGeneration) || errors.Is(err, consumer.ErrUnknownMember) {
				continue // the next Poll rejoins; the events come again and are skipped
			}
			return err
		}
		s.committed()
	}
}

// apply folds records into the view and returns the totals that changed.
func (s *Service) apply(recs []consumer.Record) map[string]Total {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := map[string]Total{}
	for _, r := range recs {
		var ev Event
		if err := json.Unmarshal(r.Value, &ev); err != nil {
			continue // not an event of ours: skip it, as a poison pill
		}
		t, ok := s.view[ev.Customer]
		if ok && t.Partition == r.Partition && r.Offset <= t.Offset {
			s.stats.Skipped++
			continue
		}
		switch ev.Type {
		case OrderPlaced:
			t.Orders++
			t.Cents += ev.Cents
		case OrderCancelled:
			t.Orders--
			t.Cents -= ev.Cents
		}
		t.Events++
		t.Partition, t.Offset = r.Partition, r.Offset
		s.view[ev.Customer] = t
		changed[ev.Customer] = t
		s.stats.Applied++
	}
	return changed
}

// committed counts a commit and wakes CaughtUp.
func (s *Service) committed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Commits++
	close(s.progress)
	s.progress = make(chan struct{})
}

// restore reads TotalsTopic from the beginning to its end and keeps the
// latest Total per customer: the view as of the last changelog write. It
// relies on nothing but "the latest value per key wins", so it reads a
// compacted and an uncompacted changelog alike.
func restore(ctx context.Context, d *log.Dir) (_ map[string]Total, err error) {
	view := map[string]Total{}
	c, err := consumer.New(d, consumer.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, c.Close(ctx)) }()
	tps := make([]consumer.TopicPartition, Partitions)
	for p := range tps {
		tps[p] = consumer.TopicPartition{Topic: TotalsTopic, Partition: int32(p)}
	}
	if err := c.Assign(tps); err != nil {
		return nil, err
	}
	if err := c.SeekToBeginning(); err != nil {
		return nil, err
	}
	ends, err := c.EndOffsets(tps)
	if err != nil {
		return nil, err
	}
	for {
		done := true
		for _, tp := range tps {
			pos, err := c.Position(tp)
			if err != nil {
				return nil, err
			}
			done = done && pos >= ends[tp]
		}
		if done {
			return view, nil
		}
		recs, err := c.Poll(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r.Value == nil {
				delete(view, string(r.Key)) // a tombstone
				continue
			}
			var t Total
			if err := json.Unmarshal(r.Value, &t); err != nil {
				return nil, fmt.Errorf("%s-%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
			}
			view[string(r.Key)] = t
		}
	}
}
