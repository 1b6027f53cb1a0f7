package consumer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
)

// Consumer reads partitions of an open log.Dir from tracked positions, as
// Kafka's KafkaConsumer reads them from a cluster: either partitions it is
// given (Assign) or partitions its group gives it (Subscribe), with
// committed offsets stored in __consumer_offsets.
//
// A Consumer is for one goroutine at a time, like Kafka's: a call made while
// another is running fails with ErrConcurrentUse. With a group, New starts
// one heartbeat goroutine, which Close stops.
type Consumer struct {
	dir    *log.Dir
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	coord  *coordinator.GroupCoordinator // nil without a group id

	inUse atomic.Int32

	// Assigned partitions, in assignment order (Poll serves them round
	// robin from next).
	parts   []*partState
	byTP    map[TopicPartition]*partState
	next    int
	mode    int // modeNone, modeAssign, modeSubscribe
	closed  bool
	out     []Record        // Poll's result, reused
	headers []record.Header // Poll's headers arena, reused
	// arena holds the keys, values and headers of records from compressed
	// batches, copied out of the decompression buffer that the partition's
	// reader reuses for its next batch; reused from Poll to Poll. It is
	// never nil, so that an empty key or value copied into it stays empty,
	// not null.
	arena []byte
	// lastPoll (unix ms) and waiting are max.poll.interval.ms's clock: the
	// time of the last Poll, and whether one is waiting for records now.
	// A consumer waiting inside Poll is polling, as the Java consumer
	// resets its poll timer on every pass of its poll loop; only the time
	// between calls counts.
	lastPoll atomic.Int64
	waiting  atomic.Bool
	// lastAutoCommit is when Assign-mode auto-commit last ran.
	lastAutoCommit time.Time

	group groupMember // nil unless subscribed

	asyncMu   sync.Mutex    // protects lastAsync
	lastAsync chan struct{} // closed when the latest CommitAsync is done
	asyncWG   sync.WaitGroup

	stats stats
}

const (
	modeNone = iota
	modeAssign
	modeSubscribe
)

// partState is an assigned partition's position and fetch buffers.
type partState struct {
	tp       TopicPartition
	log      *log.Log
	position int64 // next offset to return; -1 until known
	paused   bool
	// The fetched batches: bufs[cur] holds them from byte bpos on; the
	// reader has batch rb (if inBatch) partly consumed. Two buffers
	// alternate, so that a new fetch never overwrites records still
	// returned by the same Poll.
	bufs    [2][]byte
	cur     int
	bpos    int
	inBatch bool
	// readSize is the most bytes the partition's next read asks for: a
	// read after a seek asks for seekReadBytes, and each read doubles it
	// up to max.partition.fetch.bytes, so that a point read (Seek, then
	// Poll) reads little more than its batch while a sequential read
	// soon reads at the full size.
	readSize int
	hdr      record.BatchHeader
	reader   *record.Reader
	// txns drops aborted transactions' batches from the buffered fetch
	// (read_committed only); aborted holds the last fetch's aborted
	// transactions, its slice reused by the next fetch.
	txns    log.AbortFilter
	aborted []index.AbortedTxn
	// err is a failure met after some records were already collected for
	// the Poll: it is returned by the next Poll, before any new read, so
	// that no collected record is dropped and no error is lost.
	err error
}

// New returns a consumer reading from dir. With a group id it uses the
// Dir's group coordinator (created on first use) for committed offsets and,
// after Subscribe, for group membership.
func New(dir *log.Dir, cfg Config) (*Consumer, error) {
	if dir == nil {
		return nil, errors.New("consumer: nil log.Dir")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Consumer{dir: dir, cfg: cfg, logger: cfg.Logger, now: cfg.Now, byTP: map[TopicPartition]*partState{},
		arena: make([]byte, 0, 4096)}
	c.logger = logging.OrDefault(c.logger)
	if c.now == nil {
		c.now = time.Now
	}
	if c.cfg.ClientID == "" {
		// Kafka's naming: consumer-<group or "null">-<instance id or N>.
		group, n := cfg.GroupID, fmt.Sprint(clientIDs.Add(1))
		if group == "" {
			group = "null"
		}
		if cfg.GroupInstanceID != "" {
			n = cfg.GroupInstanceID
		}
		c.cfg.ClientID = fmt.Sprintf("consumer-%s-%s", group, n)
	}
	if cfg.GroupID != "" {
		coord, err := coordinator.Groups(context.Background(), dir)
		if err != nil {
			return nil, err
		}
		c.coord = coord
	}
	c.lastPoll.Store(c.now().UnixMilli())
	c.lastAutoCommit = c.now()
	return c, nil
}

var clientIDs atomic.Int64

// enter marks the consumer in use by the calling goroutine.
func (c *Consumer) enter() error {
	if !c.inUse.CompareAndSwap(0, 1) {
		return ErrConcurrentUse
	}
	if c.closed {
		c.inUse.Store(0)
		return ErrClosed
	}
	return nil
}

func (c *Consumer) exit() { c.inUse.Store(0) }

// Assign gives the consumer these partitions, replacing any earlier
// assignment (Kafka's assign). Positions start from the committed offsets
// (with a group id) or auto.offset.reset. It cannot be mixed with
// Subscribe.
func (c *Consumer) Assign(tps []TopicPartition) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if c.mode == modeSubscribe {
		return fmt.Errorf("%w: Assign after Subscribe", ErrIllegalState)
	}
	c.mode = modeAssign
	if len(tps) == 0 {
		c.mode = modeNone
	}
	return c.setAssignment(tps)
}

// setAssignment replaces the assigned partitions, keeping the state of the
// ones that stay.
func (c *Consumer) setAssignment(tps []TopicPartition) error {
	keep := map[TopicPartition]*partState{}
	var parts []*partState
	for _, tp := range tps {
		if ps, ok := c.byTP[tp]; ok {
			keep[tp] = ps
			parts = append(parts, ps)
			continue
		}
		l, err := c.dir.Partition(tp.Topic, tp.Partition)
		if err != nil {
			return err
		}
		ps := &partState{tp: tp, log: l, position: -1, readSize: seekReadBytes,
			reader: record.NewReader(record.ReaderOptions{SkipCRC: !c.cfg.CheckCRCs})}
		keep[tp] = ps
		parts = append(parts, ps)
	}
	c.parts, c.byTP, c.next = parts, keep, 0
	return nil
}

// Assignment returns the assigned partitions, sorted.
func (c *Consumer) Assignment() []TopicPartition {
	out := make([]TopicPartition, 0, len(c.parts))
	for _, ps := range c.parts {
		out = append(out, ps.tp)
	}
	sortTPs(out)
	return out
}

func sortTPs(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// Poll returns the next records of the assigned partitions, at most
// max.poll.records, reading at most max.partition.fetch.bytes per partition
// and fetch.max.bytes in all (but always at least one batch, so a large
// batch never blocks progress), serving partitions round robin. When no
// partition has records it waits for an append, without polling, until ctx
// ends: then it returns no records and ctx's error.
//
// Control batches (transaction markers) are never returned. With
// isolation.level=read_committed, Poll returns only records of committed
// transactions and of non-transactional producers, and nothing at or after
// a partition's last stable offset: a partition at an open transaction
// waits until its COMMIT or ABORT marker is appended. Positions move past
// the control batches and aborted records that Poll skips, so a position
// can jump ahead of the last record returned.
//
// The records reference the consumer's buffers: they are valid until the
// next Poll, whatever the batches' compression (Record.Clone keeps one).
// Poll also drives the group: it joins or rejoins when a rebalance is due
// (running the rebalance listener) and commits offsets when auto-commit is
// due. Time spent waiting inside Poll does not count against
// max.poll.interval.ms; only the time between calls does.
//
// A ctx that is already done returns its error at once, with no records.
// A batch that fails to decode (a bad CRC with check.crcs, a record that
// does not parse) is an error matching record.ErrCorrupt that names the
// partition and offset; the position stays at the first record not
// returned, so every Poll fails there again until a Seek moves past it,
// as Kafka's consumer does. Records collected before such an error are
// returned first, and the error by the next Poll.
func (c *Consumer) Poll(ctx context.Context) ([]Record, error) {
	recs, err := c.poll(ctx, true)
	return recs, dirClosed(err)
}

// poll is Poll; without wait it returns no records and no error where Poll
// would wait (the package's tests drain what is there with it).
func (c *Consumer) poll(ctx context.Context, wait bool) ([]Record, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	c.lastPoll.Store(c.now().UnixMilli())
	defer func() { c.lastPoll.Store(c.now().UnixMilli()) }()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.group != nil {
			if err := c.group.poll(ctx, c); err != nil {
				return nil, err
			}
		} else if c.coord != nil && c.cfg.EnableAutoCommit && c.now().Sub(c.lastAutoCommit) >= c.cfg.AutoCommitInterval {
			// Assigned partitions with a group id auto-commit too, as in Kafka.
			c.lastAutoCommit = c.now()
			if err := c.commit(ctx, nil); err != nil {
				c.logger.Warn("auto-commit failed", "err", err)
			}
		}
		if err := c.resetPositions(); err != nil {
			return nil, err
		}
		changed := c.dir.Changed() // taken before looking, so no append is missed
		recs, moved, err := c.fetch(ctx)
		if err != nil || len(recs) > 0 {
			return recs, err
		}
		if moved {
			// Only control batches or aborted records were read: more may
			// follow without an append, so look again (every round moves
			// a position forward, so this ends).
			continue
		}
		if !wait {
			return nil, nil
		}
		var rebalance <-chan struct{}
		if c.group != nil {
			rebalance = c.group.rejoinNeeded()
		}
		c.stats.waits.Add(1)
		c.waiting.Store(true)
		select {
		case <-changed:
		case <-rebalance:
		case <-ctx.Done():
		}
		// The clock first, then the flag: a heartbeat that sees the flag
		// down sees the fresh time.
		c.lastPoll.Store(c.now().UnixMilli())
		c.waiting.Store(false)
	}
}

// pollTimedOut reports whether the consumer has been outside Poll for more
// than max.poll.interval.ms.
func (c *Consumer) pollTimedOut() bool {
	if c.waiting.Load() {
		return false
	}
	return c.now().Sub(time.UnixMilli(c.lastPoll.Load())) > c.cfg.MaxPollInterval
}

// fetch collects records from the assigned partitions. moved reports that
// a position moved forward, even if no record came.
func (c *Consumer) fetch(ctx context.Context) (recs []Record, moved bool, err error) {
	c.out = c.out[:0]
	c.headers = c.headers[:0]
	c.arena = c.arena[:0]
	budget := c.cfg.FetchMaxBytes
	n := len(c.parts)
	for i := 0; i < n && len(c.out) < c.cfg.MaxPollRecords; i++ {
		ps := c.parts[(c.next+i)%n]
		if ps.paused || ps.position < 0 {
			continue
		}
		if ps.err != nil {
			if len(c.out) > 0 {
				continue // after the records collected for this Poll
			}
			err := ps.err
			ps.err = nil
			return nil, false, err
		}
		before := ps.position
		used, err := c.fetchPartition(ctx, ps, min(c.cfg.MaxPartitionFetchBytes, max(budget, 1)), len(c.out) == 0)
		moved = moved || ps.position > before
		budget -= used
		if err != nil {
			if len(c.out) == 0 {
				return nil, false, err
			}
			// Records were collected (their positions moved past them):
			// return them now, the error at the next Poll.
			ps.err = err
		}
	}
	if n > 0 {
		c.next = (c.next + 1) % n
	}
	c.stats.records.Add(int64(len(c.out)))
	return c.out, moved, nil
}

// testHookAfterRead, set only by tests, runs after a fetch's Log.Fetch and
// before its bytes are copied out of the file slice: a test truncates the
// log there to cut the slice under the read.
var testHookAfterRead func(*log.Log)

// fetchPartition appends the partition's next records to c.out: first what
// is left of its buffered batches, then (once, if those ran out) a new read
// of up to maxBytes at the consumer's isolation level ([log.Log.Fetch]:
// for read_committed, the batches below the last stable offset as of the
// read, with the aborted transactions they overlap). It returns the bytes
// read. ctx bounds a read from a partition's copies in remote storage.
func (c *Consumer) fetchPartition(ctx context.Context, ps *partState, maxBytes int, first bool) (int, error) {
	read, cuts := 0, 0
	fetched := false
	committed := c.cfg.IsolationLevel == ReadCommitted
	for len(c.out) < c.cfg.MaxPollRecords {
		if ps.inBatch {
			if err := c.drainBatch(ps); err != nil {
				return read, err
			}
			continue
		}
		buf := ps.bufs[ps.cur]
		if ps.bpos < len(buf) {
			size, err := record.BatchSize(buf[ps.bpos:])
			if err != nil || ps.bpos+size > len(buf) {
				at := ps.bpos
				ps.bpos = len(buf) // read again from the position
				return read, &CorruptRecordError{Partition: ps.tp, Offset: ps.position, ResumeAt: -1,
					Err: fmt.Errorf("batch at byte %d of a fetch: %w", at, errors.Join(err, record.ErrTruncated))}
			}
			batch := buf[ps.bpos : ps.bpos+size]
			ps.bpos += size
			if err := ps.reader.Reset(batch); err != nil {
				ps.bpos = len(buf) // read again from the position
				resume := int64(-1)
				if h, herr := record.ParseHeader(batch); herr == nil {
					resume = h.NextOffset()
				}
				return read, &CorruptRecordError{Partition: ps.tp, Offset: ps.position, ResumeAt: resume, Err: err}
			}
			ps.hdr = ps.reader.Header()
			skip := ps.hdr.Attributes.IsControl() || ps.hdr.LastOffset() < ps.position
			if committed && ps.txns.Aborted(&ps.hdr) {
				skip = true
			}
			if skip {
				ps.position = max(ps.position, ps.hdr.NextOffset())
				continue
			}
			ps.inBatch = true
			continue
		}
		if fetched {
			break
		}
		fetched = true
		size := min(maxBytes, ps.readSize)
		ps.readSize = min(2*ps.readSize, c.cfg.MaxPartitionFetchBytes)
		res, err := ps.log.Fetch(ctx, log.FetchParams{Offset: ps.position, MaxBytes: size, MinOneBatch: first,
			Isolation: c.cfg.IsolationLevel, AbortedTxns: ps.aborted})
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			if err := c.resetOutOfRange(ps, err); err != nil {
				return read, err
			}
			fetched = false // read again from the reset position
			continue
		}
		if errors.Is(err, record.ErrCorrupt) {
			// The log found damaged bytes where the next batch should be.
			resume := int64(-1)
			if next, ok := log.ResumeOffset(err); ok && next > ps.position {
				resume = next
			}
			return read, &CorruptRecordError{Partition: ps.tp, Offset: ps.position, ResumeAt: resume, Err: err}
		}
		if err != nil {
			return read, err
		}
		if res.Slice == nil {
			break
		}
		if hook := testHookAfterRead; hook != nil {
			hook(ps.log)
		}
		ps.cur ^= 1
		ps.bufs[ps.cur], err = res.Slice.Bytes(ps.bufs[ps.cur][:0])
		res.Release()
		if errors.Is(err, log.ErrCutUnderRead) && cuts < 3 {
			// The log was truncated under the read (a replica's
			// TruncateTo): read again what is there now, into the same
			// buffer (the other one holds records returned by this Poll).
			cuts++
			ps.cur ^= 1
			fetched = false
			continue
		}
		if err != nil {
			return read, err
		}
		if committed {
			ps.aborted = res.AbortedTransactions
			ps.txns.ResetTxns(res.AbortedTransactions)
		}
		ps.bpos = 0
		read += len(ps.bufs[ps.cur])
		c.stats.bytes.Add(int64(len(ps.bufs[ps.cur])))
	}
	return read, nil
}

// seekReadBytes is the size of a partition's first read after a seek.
const seekReadBytes = 64 << 10

// dropBuffered forgets the partition's fetched batches, its position
// having moved: the next read starts small again.
func (ps *partState) dropBuffered() {
	ps.inBatch, ps.bpos, ps.bufs[ps.cur] = false, 0, ps.bufs[ps.cur][:0]
	ps.readSize = seekReadBytes
}

// drainBatch moves records of the partition's current batch into c.out. A
// record that does not decode ends the batch with an error, and the
// position stays at it.
func (c *Consumer) drainBatch(ps *partState) error {
	for len(c.out) < c.cfg.MaxPollRecords {
		if !ps.reader.Next() {
			ps.inBatch = false
			if err := ps.reader.Err(); err != nil {
				ps.bpos = len(ps.bufs[ps.cur]) // read again from the position
				return &CorruptRecordError{Partition: ps.tp, Offset: ps.position, ResumeAt: ps.hdr.NextOffset(), Err: err}
			}
			ps.position = max(ps.position, ps.hdr.NextOffset())
			return nil
		}
		r := ps.reader.Record()
		if r.Offset < ps.position {
			continue
		}
		// An uncompressed batch's records point into the fetch buffer,
		// which the partition keeps until the next Poll. A compressed
		// batch's point into the reader's decompression buffer, which the
		// partition's next batch overwrites, possibly within this Poll:
		// those are copied into the Poll's arena.
		copied := ps.hdr.Attributes.Compression() != record.None
		start := len(c.headers)
		c.headers = append(c.headers, r.Headers...)
		var hdrs []record.Header
		if len(r.Headers) > 0 {
			hdrs = c.headers[start:len(c.headers):len(c.headers)]
			if copied {
				for i := range hdrs {
					hdrs[i].Key, hdrs[i].Value = c.keep(hdrs[i].Key), c.keep(hdrs[i].Value)
				}
			}
		}
		key, value := r.Key, r.Value
		if copied {
			key, value = c.keep(key), c.keep(value)
		}
		c.out = append(c.out, Record{Topic: ps.tp.Topic, Partition: ps.tp.Partition, Offset: r.Offset,
			Timestamp: time.UnixMilli(r.Timestamp), TimestampType: ps.hdr.Attributes.TimestampType(),
			Key: key, Value: value, Headers: hdrs, LeaderEpoch: ps.hdr.PartitionLeaderEpoch})
		ps.position = r.Offset + 1
	}
	return nil
}

// keep copies b into the Poll's arena; nil stays nil. A copy is valid
// until the next Poll: growing the arena moves later copies to a new array
// and leaves the earlier ones where they are.
func (c *Consumer) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(c.arena)
	c.arena = append(c.arena, b...)
	return c.arena[start:len(c.arena):len(c.arena)]
}

// resetPositions gives partitions without a position one: the committed
// offset, or auto.offset.reset.
func (c *Consumer) resetPositions() error {
	var missing []*partState
	for _, ps := range c.parts {
		if ps.position < 0 {
			missing = append(missing, ps)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if c.coord != nil {
		tps := make([]TopicPartition, len(missing))
		for i, ps := range missing {
			tps[i] = ps.tp
		}
		committed := c.coord.FetchOffsets(c.cfg.GroupID, tps)
		for _, ps := range missing {
			if om, ok := committed[ps.tp]; ok {
				ps.position = om.Offset
				ps.dropBuffered()
			}
		}
	}
	var none []TopicPartition
	for _, ps := range missing {
		if ps.position >= 0 {
			continue
		}
		if c.cfg.AutoOffsetReset == OffsetResetNone {
			none = append(none, ps.tp)
			continue
		}
		c.reset(ps)
	}
	if len(none) > 0 {
		return &NoOffsetError{Partitions: none}
	}
	return nil
}

// reset moves a partition to the start or end by auto.offset.reset.
func (c *Consumer) reset(ps *partState) {
	ps.position = positionFor(ps.log, c.cfg.AutoOffsetReset, c.cfg.AutoOffsetResetDuration, c.now(), c.endOffset(ps.log))
	ps.dropBuffered()
}

// positionFor is where auto.offset.reset's r (earliest, latest or
// by_duration with d) puts a reader of l now, end being l's end at the
// reader's isolation level: the log start offset, end, or the first offset
// whose timestamp is at or after now minus d (end where there is none
// before it). The consumer's resets and ResetOffsets share it.
func positionFor(l *log.Log, r OffsetReset, d time.Duration, now time.Time, end int64) int64 {
	switch r {
	case OffsetResetEarliest:
		return l.LogStartOffset()
	case OffsetResetByDuration:
		if ot, ok, err := l.OffsetForTimestamp(now.Add(-d).UnixMilli()); err == nil && ok && ot.Offset < end {
			return ot.Offset
		}
	}
	return end
}

// resetOutOfRange handles a position outside the log (retention deleted it,
// or a Seek went past the end): reset by auto.offset.reset, or fail with
// none.
func (c *Consumer) resetOutOfRange(ps *partState, err error) error {
	if c.cfg.AutoOffsetReset == OffsetResetNone {
		return err
	}
	c.logger.Info("position out of range; resetting", "partition", ps.tp, "position", ps.position, "reset", c.cfg.AutoOffsetReset)
	c.reset(ps)
	return nil
}

// Seek sets a partition's position: the next Poll returns records from
// offset on.
func (c *Consumer) Seek(tp TopicPartition, offset int64) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	ps, ok := c.byTP[tp]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotAssigned, tp)
	}
	if offset < 0 {
		return fmt.Errorf("consumer: seek to negative offset %d", offset)
	}
	ps.position = offset
	ps.dropBuffered()
	return nil
}

// SeekToBeginning moves partitions (all assigned ones for none) to their
// log start offsets.
func (c *Consumer) SeekToBeginning(tps ...TopicPartition) error {
	return c.seekEach(tps, func(ps *partState) int64 { return ps.log.LogStartOffset() })
}

// SeekToEnd moves partitions (all assigned ones for none) to their ends at
// the consumer's isolation level: the high watermark (the log end offset),
// or for read_committed the last stable offset.
func (c *Consumer) SeekToEnd(tps ...TopicPartition) error {
	return c.seekEach(tps, func(ps *partState) int64 { return c.endOffset(ps.log) })
}

func (c *Consumer) seekEach(tps []TopicPartition, to func(*partState) int64) error {
	return c.eachState(tps, func(ps *partState) {
		ps.position = to(ps)
		ps.dropBuffered()
	})
}

// eachState calls fn, with the consumer in use (enter), with the state of
// each partition of tps (all assigned ones for none), once all are known
// to be assigned.
func (c *Consumer) eachState(tps []TopicPartition, fn func(*partState)) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	states, err := c.states(tps)
	if err != nil {
		return err
	}
	for _, ps := range states {
		fn(ps)
	}
	return nil
}

func (c *Consumer) states(tps []TopicPartition) ([]*partState, error) {
	if len(tps) == 0 {
		return slices.Clone(c.parts), nil
	}
	out := make([]*partState, 0, len(tps))
	for _, tp := range tps {
		ps, ok := c.byTP[tp]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNotAssigned, tp)
		}
		out = append(out, ps)
	}
	return out, nil
}

// Position returns the offset of the next record Poll will return for a
// partition, resolving it from the committed offset or auto.offset.reset
// if needed.
func (c *Consumer) Position(tp TopicPartition) (int64, error) {
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.exit()
	ps, ok := c.byTP[tp]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrNotAssigned, tp)
	}
	if err := c.resetPositions(); err != nil {
		return 0, err
	}
	return ps.position, nil
}

// Pause stops Poll from returning records of the partitions until Resume.
func (c *Consumer) Pause(tps ...TopicPartition) error { return c.setPaused(tps, true) }

// Resume undoes Pause.
func (c *Consumer) Resume(tps ...TopicPartition) error { return c.setPaused(tps, false) }

func (c *Consumer) setPaused(tps []TopicPartition, paused bool) error {
	return c.eachState(tps, func(ps *partState) { ps.paused = paused })
}

// Paused returns the paused partitions, sorted.
func (c *Consumer) Paused() []TopicPartition {
	var out []TopicPartition
	for _, ps := range c.parts {
		if ps.paused {
			out = append(out, ps.tp)
		}
	}
	sortTPs(out)
	return out
}

// Lag returns how many offsets a partition's position is behind its end at
// the consumer's isolation level: the high watermark, or for read_committed
// the last stable offset, as Kafka's records-lag metric (-1 if the position
// is not known yet). Control batches and aborted records between the two
// count, as in Kafka.
func (c *Consumer) Lag(tp TopicPartition) (int64, error) {
	ps, ok := c.byTP[tp]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrNotAssigned, tp)
	}
	if ps.position < 0 {
		return -1, nil
	}
	return max(c.endOffset(ps.log)-ps.position, 0), nil
}

// BeginningOffsets returns the log start offsets of partitions.
func (c *Consumer) BeginningOffsets(tps []TopicPartition) (map[TopicPartition]int64, error) {
	return c.offsetsOf(tps, func(l *log.Log) int64 { return l.LogStartOffset() })
}

// EndOffsets returns the ends of partitions at the consumer's isolation
// level, as Kafka's endOffsets (ListOffsets "latest"): the high watermarks
// (the log end offsets), or for read_committed the last stable offsets.
func (c *Consumer) EndOffsets(tps []TopicPartition) (map[TopicPartition]int64, error) {
	return c.offsetsOf(tps, c.endOffset)
}

func (c *Consumer) offsetsOf(tps []TopicPartition, f func(*log.Log) int64) (map[TopicPartition]int64, error) {
	out := make(map[TopicPartition]int64, len(tps))
	for _, tp := range tps {
		l, err := c.dir.Partition(tp.Topic, tp.Partition)
		if err != nil {
			return nil, err
		}
		out[tp] = f(l)
	}
	return out, nil
}

// OffsetsForTimes returns, per partition, the earliest offset whose record
// timestamp is at least the given one (through the time indexes); a
// partition with no such record is absent, and so is one whose offset is
// at or after the partition's end at the consumer's isolation level (for
// read_committed, the last stable offset), as Kafka's ListOffsets answers.
func (c *Consumer) OffsetsForTimes(times map[TopicPartition]int64) (map[TopicPartition]log.OffsetAndTimestamp, error) {
	out := map[TopicPartition]log.OffsetAndTimestamp{}
	for tp, ts := range times {
		l, err := c.dir.Partition(tp.Topic, tp.Partition)
		if err != nil {
			return nil, err
		}
		ot, ok, err := l.OffsetForTimestamp(ts)
		if err != nil {
			return nil, err
		}
		if ok && ot.Offset < c.endOffset(l) {
			out[tp] = ot
		}
	}
	return out, nil
}

// Committed returns the group's committed offsets for the partitions;
// partitions without a commit are absent.
func (c *Consumer) Committed(tps []TopicPartition) (map[TopicPartition]OffsetAndMetadata, error) {
	if c.coord == nil {
		return nil, ErrNoGroup
	}
	out := map[TopicPartition]OffsetAndMetadata{}
	for tp, om := range c.coord.FetchOffsets(c.cfg.GroupID, tps) {
		out[tp] = OffsetAndMetadata{Offset: om.Offset, LeaderEpoch: om.LeaderEpoch, Metadata: om.Metadata}
	}
	return out, nil
}

// CommitSync commits offsets for the group, durably (fsynced in
// __consumer_offsets when it returns). nil commits the current positions of
// all assigned partitions. A member of an older generation is refused
// (ErrIllegalGeneration: the partitions may be someone else's). A
// partition that does not exist is not committed and fails the commit
// with log.ErrUnknownTopicOrPartition (the others are committed), as
// Kafka's broker answers its consumer. A ctx already done returns its
// error and commits nothing.
func (c *Consumer) CommitSync(ctx context.Context, offsets map[TopicPartition]OffsetAndMetadata) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if err := ctx.Err(); err != nil {
		return err
	}
	return dirClosed(c.commit(ctx, offsets))
}

// CommitAsync commits like CommitSync on a goroutine of its own and calls
// cb (if not nil) with the outcome. Commits are applied in the order made.
func (c *Consumer) CommitAsync(offsets map[TopicPartition]OffsetAndMetadata, cb func(map[TopicPartition]OffsetAndMetadata, error)) {
	if err := c.enter(); err != nil {
		if cb != nil {
			cb(offsets, err)
		}
		return
	}
	if offsets == nil {
		offsets = c.positions()
	}
	member, generation := c.memberAndGeneration()
	c.exit()
	// Each asynchronous commit waits for the one before it, so commits are
	// applied in the order they were made.
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
		err := c.commitAs(context.Background(), member, generation, offsets)
		if cb != nil {
			cb(offsets, err)
		}
	}()
}

func (c *Consumer) commit(ctx context.Context, offsets map[TopicPartition]OffsetAndMetadata) error {
	if offsets == nil {
		offsets = c.positions()
	}
	member, generation := c.memberAndGeneration()
	return c.commitAs(ctx, member, generation, offsets)
}

func (c *Consumer) commitAs(ctx context.Context, member string, generation int32, offsets map[TopicPartition]OffsetAndMetadata) error {
	if c.coord == nil {
		return ErrNoGroup
	}
	if len(offsets) == 0 {
		return nil
	}
	// A partition that does not exist is not committed and fails the
	// commit with log.ErrUnknownTopicOrPartition, the others committed,
	// as Kafka's broker answers its consumer (UNKNOWN_TOPIC_OR_PARTITION
	// per partition).
	conv := make(map[TopicPartition]coordinator.OffsetAndMetadata, len(offsets))
	var unknown []TopicPartition
	for tp, om := range offsets {
		// Another failure (a closed Dir) is the coordinator's to report.
		td, err := c.dir.DescribeTopic(tp.Topic)
		if errors.Is(err, log.ErrUnknownTopicOrPartition) || (err == nil && (tp.Partition < 0 || tp.Partition >= td.Partitions)) {
			unknown = append(unknown, tp)
			continue
		}
		conv[tp] = coordinator.OffsetAndMetadata{Offset: om.Offset, LeaderEpoch: om.LeaderEpoch, Metadata: om.Metadata}
	}
	var err error
	if len(conv) > 0 {
		start := c.now()
		err = c.coord.CommitOffsets(ctx, coordinator.GroupMetadata{GroupID: c.cfg.GroupID, MemberID: member, GenerationID: generation}, conv)
		c.stats.commitNanos.Add(int64(c.now().Sub(start)))
		c.stats.commits.Add(1)
	}
	if len(unknown) > 0 && err == nil {
		slices.SortFunc(unknown, func(a, b TopicPartition) int {
			return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		err = fmt.Errorf("%w: not committed: %v", log.ErrUnknownTopicOrPartition, unknown)
	}
	return err
}

// positions returns the current positions of the assigned partitions.
func (c *Consumer) positions() map[TopicPartition]OffsetAndMetadata {
	out := make(map[TopicPartition]OffsetAndMetadata, len(c.parts))
	for _, ps := range c.parts {
		if ps.position >= 0 {
			out[ps.tp] = OffsetAndMetadata{Offset: ps.position, LeaderEpoch: -1}
		}
	}
	return out
}

func (c *Consumer) memberAndGeneration() (string, int32) {
	if c.group == nil {
		return "", -1
	}
	return c.group.identity()
}

// Close leaves the group (committing first with auto-commit, and running
// the listener's revocation), stops the heartbeat goroutine and waits for
// asynchronous commits. A second Close returns nil.
func (c *Consumer) Close(ctx context.Context) error {
	if !c.inUse.CompareAndSwap(0, 1) {
		return ErrConcurrentUse
	}
	defer c.exit()
	if c.closed {
		return nil
	}
	var err error
	if c.group != nil {
		err = c.group.leave(ctx, c)
	}
	c.asyncWG.Wait()
	c.closed = true
	return err
}

// Subscribe joins the consumer's group for these topics; the group's
// assignor splits their partitions among the members. The listener (may be
// nil) hears about partitions revoked, assigned and lost. The first Poll
// joins.
func (c *Consumer) Subscribe(topics []string, listener RebalanceListener) error {
	return c.subscribe(topics, nil, listener)
}

// SubscribePattern subscribes to every topic whose name matches re (internal
// topics excluded unless exclude.internal.topics is false), checked again at
// every Poll so that new topics join.
func (c *Consumer) SubscribePattern(re *regexp.Regexp, listener RebalanceListener) error {
	return c.subscribe(nil, re, listener)
}

func (c *Consumer) subscribe(topics []string, re *regexp.Regexp, listener RebalanceListener) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if c.coord == nil {
		return fmt.Errorf("%w: Subscribe needs group.id", ErrNoGroup)
	}
	if c.mode == modeAssign {
		return fmt.Errorf("%w: Subscribe after Assign", ErrIllegalState)
	}
	consumerProtocol := strings.EqualFold(c.cfg.GroupProtocol, groupProtocolConsumer)
	if len(c.cfg.PartitionAssignmentStrategy) == 0 && !consumerProtocol {
		return fmt.Errorf("%w: Subscribe needs partition.assignment.strategy", ErrIllegalState)
	}
	c.mode = modeSubscribe
	switch {
	case c.group != nil:
	case consumerProtocol:
		c.group = newProtocolMember(c)
	default:
		c.group = newMembership(c)
	}
	c.group.setSubscription(topics, re, listener)
	return nil
}

// Unsubscribe leaves the group and drops the assignment.
func (c *Consumer) Unsubscribe(ctx context.Context) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if c.group != nil {
		if err := c.group.leave(ctx, c); err != nil {
			return err
		}
		c.group = nil
	}
	c.mode = modeNone
	return c.setAssignment(nil)
}
