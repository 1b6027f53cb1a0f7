package log

import (
	"context"
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// AppendResult describes an appended batch.
type AppendResult struct {
	// BaseOffset and LastOffset are the offsets the batch's records got.
	BaseOffset, LastOffset int64
	// LogAppendTime is the time stamped on the batch for LogAppendTime
	// topics, else -1.
	LogAppendTime int64
	// LogStartOffset is the log start offset after the append.
	LogStartOffset int64
	// Records is the number of records in the batch.
	Records int
	// Duplicate is set when the batch repeated one of the five latest
	// batches of its idempotent producer (same producer id, epoch and
	// sequence range): nothing was written, and BaseOffset and LastOffset
	// are the original batch's, as Kafka answers a duplicate
	// (ProducerStateEntry.findDuplicateBatch).
	Duplicate bool
}

// Append appends one producer batch as the partition leader, as Kafka's
// broker does with a ProduceRequest (Kafka's UnifiedLog.append and
// LogValidator): it validates the batch (CRC, sizes, offsets, timestamps,
// keys on compacted topics), recompresses it if the topic's compression.type
// asks for another codec, assigns offsets by rewriting the base offset,
// stamps the leader epoch and, on LogAppendTime topics, the append time,
// then writes it to the active segment, rolling first if the segment is due.
//
// Append rewrites batch in place (its base offset, leader epoch and CRC,
// and on LogAppendTime topics its timestamps), as a broker rewrites the
// request's buffer: once Append returns, the caller may reuse or drop the
// slice, but it is no longer the batch the client built, and appending it
// again is refused with [ErrInvalidRecord] (its base offset is no longer
// 0). To resend a batch, for instance after an error, keep a copy made
// before the first Append; an idempotent producer's resend of a batch the
// log already has returns the first append's result. When Append returns nil the batch is in the page cache: readable,
// surviving a crash of this process but not of the machine, unless the
// topic's flush.messages made this append flush. Use [Log.AppendDurable] or
// [Log.Sync] for durability.
func (l *Log) Append(batch []byte) (AppendResult, error) {
	if l.internal {
		return AppendResult{}, l.tp.wrap(fmt.Errorf("%w: users may not append to %s", ErrInternalTopic, l.tp.Topic))
	}
	return l.appendAsLeader(batch, originClient)
}

// AppendInternal appends to an internal topic (__consumer_offsets,
// __transaction_state) for kafkalite's coordinators; it is Append without
// the refusal, and a coordinator's append as Kafka makes it
// (AppendOrigin.COORDINATOR): a batch with a producer id has its epoch
// checked but not its sequence, and is never taken for a duplicate, since
// Kafka's coordinators write every batch with base sequence 0. Code
// outside this module cannot call it.
func (l *Log) AppendInternal(_ access.Internal, batch []byte) (AppendResult, error) {
	return l.appendAsLeader(batch, originCoordinator)
}

// appendOrigin says who appends as the leader (Kafka's AppendOrigin).
type appendOrigin int8

const (
	originClient      appendOrigin = iota // a producer's batch (Log.Append)
	originCoordinator                     // a coordinator's batch (Log.AppendInternal)
)

// leaderAppend is one batch appended as the leader: its origin, and what
// its validation found.
type leaderAppend struct {
	origin appendOrigin
	h      record.BatchHeader
	out    []byte // the batch to write: the caller's, or a rebuilt one; nil while its max timestamp needs the fix
	res    AppendResult
	dup    bool  // a duplicate of one of its producer's latest batches: nothing is written
	err    error // why the log refuses it
}

// validateLocked validates the batch against the topic configuration c
// and applies the idempotent producer's checks, recording the outcome in a (the errors are not yet
// wrapped in a PartitionError).
func (a *leaderAppend) validateLocked(l *Log, batch []byte, c TopicConfig) {
	a.h, a.out, a.err = l.validator.validate(batch, c)
	if a.err != nil {
		return
	}
	a.res = AppendResult{LogAppendTime: record.NoTimestamp, Records: int(a.h.RecordsCount)}
	if a.h.ProducerID < 0 {
		return
	}
	orig, dup, err := l.producers.checkLeader(&a.h, a.origin)
	switch {
	case err != nil:
		a.err = err
	case dup:
		a.dup = true
		a.res.BaseOffset, a.res.LastOffset, a.res.LogStartOffset, a.res.Duplicate = orig.firstOffset, orig.lastOffset, l.LogStartOffset(), true
	}
}

// errNotWritten is what the check of an overlapped append returns when it
// does not take the batch as it came (refused, rewritten by the
// validation, or a duplicate): segment.Segment.AppendOverlapped then
// writes nothing, and the append goes on as a serial one.
var errNotWritten = errors.New("not appended as it came")

func (l *Log) appendAsLeader(batch []byte, origin appendOrigin) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	c := l.Config()
	if h0, ok := l.validator.overlaps(batch, c); ok {
		return l.appendOverlappedLocked(batch, h0, c, origin)
	}
	// The serial append's state stays on the stack: the overlapped one's
	// escapes into the segment's write goroutine.
	a := leaderAppend{origin: origin}
	a.validateLocked(l, batch, c)
	return a.finishLocked(l, batch, false)
}

// appendOverlappedLocked is the one difference in order: the active
// segment writes the batch, but for its base offset and length, while it
// is validated (segment.Segment.AppendOverlapped). The leader epoch lies in
// the bytes written ahead (outside the CRC); the base offset does not. A
// batch the validation refuses, rewrites, or finds a duplicate comes back
// unwritten and goes on as a serial append: it is validated once.
func (l *Log) appendOverlappedLocked(batch []byte, h0 record.BatchHeader, c TopicConfig, origin appendOrigin) (AppendResult, error) {
	o := l.overlap
	if o == nil {
		o = &overlapAppend{l: l}
		o.write, o.check = o.writeAhead, o.validateAhead
		l.overlap = o
	}
	o.leaderAppend, o.batch, o.c = leaderAppend{origin: origin}, batch, c
	defer o.reset()
	epoch := l.LeaderEpoch()
	if err := record.SetPartitionLeaderEpoch(batch, epoch); err != nil {
		return AppendResult{}, l.tp.wrap(err)
	}
	o.h = h0
	o.h.BaseOffset, o.h.PartitionLeaderEpoch = l.LogEndOffset(), epoch
	err := l.appendLocked(batch, &o.h, o.write)
	written := err == nil
	if !written && !errors.Is(err, errNotWritten) {
		return AppendResult{}, err
	}
	if written {
		l.validator.overlapped.Add(1)
	}
	return o.finishLocked(l, batch, written)
}

// overlapAppend is an overlapped append's state, which the segment's write
// goroutine and the validation it overlaps share. The Log keeps one and
// reuses it under its lock, with its two functions bound once, so that
// the overlapped path allocates nothing of its own.
type overlapAppend struct {
	leaderAppend
	l     *Log
	batch []byte
	c     TopicConfig
	write func(*segment.Segment) error       // writeAhead
	check func() (record.BatchHeader, error) // validateAhead
}

// writeAhead writes the batch into seg while validateAhead validates it.
func (o *overlapAppend) writeAhead(seg *segment.Segment) error {
	return segHooks.AppendOverlapped(seg, o.batch, o.check)
}

// validateAhead validates the batch being written; errNotWritten when the
// write must not stand as it came.
func (o *overlapAppend) validateAhead() (record.BatchHeader, error) {
	o.validateLocked(o.l, o.batch, o.c)
	if o.err != nil || o.dup || o.out == nil || &o.out[0] != &o.batch[0] {
		return o.h, errNotWritten
	}
	o.h.BaseOffset = o.l.LogEndOffset()
	return o.h, record.SetBaseOffset(o.batch, o.h.BaseOffset)
}

// reset drops the references to the caller's batch once the append is done.
func (o *overlapAppend) reset() { o.leaderAppend, o.batch = leaderAppend{}, nil }

// finishLocked ends a validated append: the validation's refusal, a
// duplicate's first result, or the batch written (now, unless written says
// the overlapped write took it already) and its result.
func (a *leaderAppend) finishLocked(l *Log, batch []byte, written bool) (AppendResult, error) {
	switch {
	case a.err != nil:
		return AppendResult{}, l.tp.wrap(a.err)
	case a.dup:
		return a.res, nil
	case !written:
		if err := a.writeLocked(l, batch); err != nil {
			return AppendResult{}, err
		}
	}
	a.res.BaseOffset, a.res.LastOffset, a.res.LogStartOffset = a.h.BaseOffset, a.h.LastOffset(), l.LogStartOffset()
	return a.res, nil
}

// writeLocked assigns the validated batch its offsets (from the log end
// offset on), the leader epoch and, on LogAppendTime topics, the append
// time, rewriting its max timestamp first if the validation asked for it,
// and appends it.
func (a *leaderAppend) writeLocked(l *Log, batch []byte) error {
	out := a.out
	if out == nil {
		var err error
		if out, err = fixMaxTimestamp(batch, &a.h); err != nil {
			return l.tp.wrap(err)
		}
	}
	base, epoch := l.LogEndOffset(), l.LeaderEpoch()
	if err := errors.Join(record.SetBaseOffset(out, base), record.SetPartitionLeaderEpoch(out, epoch)); err != nil {
		return l.tp.wrap(err)
	}
	a.h.BaseOffset, a.h.PartitionLeaderEpoch = base, epoch
	if l.Config().MessageTimestampType == record.LogAppendTime {
		a.res.LogAppendTime = l.now().UnixMilli()
		if err := record.SetLogAppendTime(out, a.res.LogAppendTime); err != nil {
			return l.tp.wrap(err)
		}
		a.h.Attributes = a.h.Attributes.WithTimestampType(record.LogAppendTime)
		a.h.MaxTimestamp = a.res.LogAppendTime
	}
	return l.appendLocked(out, &a.h, nil)
}

// AppendDurable appends like [Log.Append] and returns once the batch is
// fsynced. Concurrent durable appends share fsyncs (group commit): one
// caller syncs everything appended so far while the others wait for it.
//
// If ctx ends while waiting for the fsync, AppendDurable returns ctx's error
// with the result: the batch was appended (it is readable, and it will be
// durable after the next flush), but the caller was not told it is durable.
// A ctx already done returns its error and appends nothing.
func (l *Log) AppendDurable(ctx context.Context, batch []byte) (AppendResult, error) {
	if err := ctx.Err(); err != nil {
		return AppendResult{}, err
	}
	res, err := l.Append(batch)
	if err != nil {
		return res, err
	}
	return res, l.Sync(ctx, res.LastOffset+1)
}

// AppendAsReplica appends a batch that already has its offsets, as a
// follower replica does with what it fetched from the leader: the batch must
// be valid and start at or after the log end offset; its offsets, leader
// epoch and timestamps are kept. Control batches are accepted.
func (l *Log) AppendAsReplica(batch []byte) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	h, err := record.Validate(batch)
	if err != nil {
		return AppendResult{}, l.tp.wrap(err)
	}
	if h.BaseOffset < l.LogEndOffset() {
		return AppendResult{}, l.tp.wrap(fmt.Errorf("%w: replica batch starts at %d, below the log end offset %d", ErrInvalidRecord, h.BaseOffset, l.LogEndOffset()))
	}
	if err := checkSize(l.Config(), len(batch)); err != nil {
		return AppendResult{}, l.tp.wrap(err)
	}
	if err := l.appendLocked(batch, &h, nil); err != nil {
		return AppendResult{}, err
	}
	res := AppendResult{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), LogAppendTime: record.NoTimestamp,
		LogStartOffset: l.LogStartOffset(), Records: int(h.RecordsCount)}
	if h.Attributes.TimestampType() == record.LogAppendTime {
		res.LogAppendTime = h.MaxTimestamp
	}
	return res, nil
}

// appendLocked appends a batch with assigned offsets (h its header) to the
// active segment, rolling first if it is due: with write, or
// segment.Segment.Append when write is nil. Then it does what follows an
// append, in this order: the producer state (and an abort's .txnindex
// entry), the log end offset and the batch's publication to readers, the
// leader epoch, flush.messages, and waking readers. A write that fails
// fails the partition, but errNotWritten, which is returned as it is.
func (l *Log) appendLocked(batch []byte, h *record.BatchHeader, write func(*segment.Segment) error) error {
	if due, err := l.local.shouldRollLocked(h, len(batch)); err != nil {
		return err
	} else if due {
		if err := l.rollLocked(h.BaseOffset); err != nil {
			return err
		}
	}
	seg := l.local.active()
	var err error
	if write == nil {
		err = seg.Append(batch, h)
	} else {
		err = write(seg)
	}
	switch {
	case errors.Is(err, errNotWritten):
		return err
	case err != nil:
		return l.local.failLocked("append failed", "", err)
	}
	created, err := l.producers.update(seg, batch, h, false)
	l.local.dirDirty = l.local.dirDirty || created
	if err != nil {
		return l.local.failLocked("updating the producer state failed", "", err)
	}
	if m := l.validator.appendedMarks(batch, h); m != nil {
		segHooks.RememberMarks(seg, seg.Size()-int64(len(batch)), m)
	}
	flush := l.local.publishLocked(seg, h)
	l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset)
	if flush {
		if err := l.flushLocked(l.LogEndOffset()); err != nil {
			l.notify.wake()
			return err
		}
	}
	l.notify.wake()
	return nil
}

// rollLocked rolls the local log at base (localLog.rollLocked), then
// snapshots the producer state, named by the new segment's base offset, as
// Kafka does at every roll; a failure of the snapshot costs only a longer
// replay at the next load, so it is logged.
func (l *Log) rollLocked(base int64) error {
	if err := l.local.rollLocked(base); err != nil {
		return err
	}
	written, err := l.producers.snapshot(l.LogEndOffset(), false)
	l.local.dirDirty = l.local.dirDirty || written
	if err != nil {
		l.logger.Warn("writing the producer snapshot failed", "partition", l.tp, "err", err)
	}
	return nil
}

// Roll seals the active segment (writing its indexes and fsyncing it) and
// starts a new one at the log end offset, unless the active segment is
// empty. A done ctx returns its error at once, rolling nothing.
func (l *Log) Roll(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.local.writableLocked(); err != nil {
		return err
	}
	if l.local.active().Size() == 0 {
		return nil
	}
	return l.rollLocked(l.LogEndOffset())
}
