package log

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
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
		return AppendResult{}, l.perr(fmt.Errorf("%w: users may not append to %s", ErrInternalTopic, l.topic))
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

func (l *Log) appendAsLeader(batch []byte, origin appendOrigin) (AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	if h0, ok := l.overlapsLocked(batch); ok {
		return l.appendOverlappedLocked(batch, h0, origin)
	}
	in := batch
	h, batch, err := l.validateLocked(in)
	if err == nil && batch == nil {
		batch, err = fixMaxTimestamp(in, &h)
	}
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	res, dup, err := l.checkProducerLocked(&h, origin)
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	if dup {
		return res, nil
	}
	base, epoch := l.LogEndOffset(), l.leaderEpoch.Load()
	if err := errors.Join(record.SetBaseOffset(batch, base), record.SetPartitionLeaderEpoch(batch, epoch)); err != nil {
		return AppendResult{}, l.perr(err)
	}
	h.BaseOffset, h.PartitionLeaderEpoch = base, epoch
	if l.Config().MessageTimestampType == record.LogAppendTime {
		res.LogAppendTime = l.now().UnixMilli()
		if err := record.SetLogAppendTime(batch, res.LogAppendTime); err != nil {
			return AppendResult{}, l.perr(err)
		}
		h.Attributes = h.Attributes.WithTimestampType(record.LogAppendTime)
		h.MaxTimestamp = res.LogAppendTime
	}
	if err := l.appendLocked(batch, &h); err != nil {
		return AppendResult{}, err
	}
	res.BaseOffset, res.LastOffset, res.LogStartOffset = h.BaseOffset, h.LastOffset(), l.LogStartOffset()
	return res, nil
}

// checkProducerLocked applies the idempotent producer's checks to a
// validated batch (its errors are not yet wrapped in a PartitionError): dup
// reports a duplicate of one of the producer's latest batches, with the
// original's offsets in res.
func (l *Log) checkProducerLocked(h *record.BatchHeader, origin appendOrigin) (res AppendResult, dup bool, err error) {
	res = AppendResult{LogAppendTime: record.NoTimestamp, Records: int(h.RecordsCount)}
	if h.ProducerID < 0 {
		return res, false, nil
	}
	orig, isDup, err := l.pstate.checkLeader(h, origin)
	if err != nil {
		return AppendResult{}, false, err
	}
	if isDup {
		res.BaseOffset, res.LastOffset, res.LogStartOffset, res.Duplicate = orig.firstOffset, orig.lastOffset, l.LogStartOffset(), true
	}
	return res, isDup, nil
}

// overlapsLocked says whether the append of batch overlaps its write
// with its validation (Config.OverlapAppendBytes): a batch large enough,
// on two Ps or more, that validation will not rewrite as far as its
// header tells (it comes with base offset 0 and is not recompressed or
// stamped with the log append time) and that fits, with its header. It
// changes nothing.
func (l *Log) overlapsLocked(batch []byte) (record.BatchHeader, bool) {
	if l.overlapBytes <= 0 || len(batch) < l.overlapBytes || runtime.GOMAXPROCS(0) < 2 {
		return record.BatchHeader{}, false
	}
	c := l.Config()
	h, err := record.ParseHeader(batch)
	if err != nil || h.Size() != len(batch) || h.BaseOffset != 0 || c.MessageTimestampType != record.CreateTime ||
		l.checkSizeLocked(len(batch)) != nil {
		return h, false // refused or rewritten either way
	}
	codec, keep := c.CompressionType.Codec()
	return h, keep || codec == h.Attributes.Compression()
}

// errRewrite is what the overlapped append's check returns when the
// validation rewrote the batch or found a duplicate: nothing is appended
// by segment.LogHooks.AppendOverlapped, and the append goes on without it.
var errRewrite = errors.New("not appended as it came")

// appendOverlappedLocked is appendAsLeader for a batch overlapsLocked
// accepted: the active segment writes it while it is validated
// (segment.LogHooks.AppendOverlapped). The batch is validated once; one
// the validation rewrites (its max timestamp, its inner offsets) is then
// appended the usual way, as is nothing of a duplicate.
func (l *Log) appendOverlappedLocked(batch []byte, h0 record.BatchHeader, origin appendOrigin) (AppendResult, error) {
	// The leader epoch lies in the bytes written ahead (outside the CRC);
	// the base offset does not.
	epoch := l.leaderEpoch.Load()
	if err := record.SetPartitionLeaderEpoch(batch, epoch); err != nil {
		return AppendResult{}, l.perr(err)
	}
	h0.BaseOffset, h0.PartitionLeaderEpoch = l.LogEndOffset(), epoch
	if err := l.maybeRollLocked(&h0, len(batch)); err != nil {
		return AppendResult{}, err
	}
	seg := l.activeSegment()
	var (
		res  AppendResult
		h    record.BatchHeader
		out  []byte
		dup  bool
		verr error
	)
	err := segHooks.AppendOverlapped(seg, batch, func() (record.BatchHeader, error) {
		h, out, verr = l.validateLocked(batch)
		if verr == nil {
			res, dup, verr = l.checkProducerLocked(&h, origin)
		}
		switch {
		case verr != nil:
			return h, verr
		case dup || out == nil || &out[0] != &batch[0]:
			return h, errRewrite
		}
		h.BaseOffset = l.LogEndOffset()
		if verr = record.SetBaseOffset(batch, h.BaseOffset); verr != nil {
			return h, verr
		}
		return h, nil
	})
	switch {
	case err == nil:
		l.overlapped.Add(1)
		if err := l.appendedLocked(seg, batch, &h); err != nil {
			return AppendResult{}, err
		}
	case verr != nil && err == verr: //nolint:errorlint // check's own error, returned as it is
		return AppendResult{}, l.perr(verr)
	case err != errRewrite: //nolint:errorlint // likewise
		return AppendResult{}, l.storageFailedLocked(err)
	case dup:
		return res, nil
	default: // rewritten: appended the usual way
		if out == nil {
			if out, err = fixMaxTimestamp(batch, &h); err != nil {
				return AppendResult{}, l.perr(err)
			}
		}
		h.BaseOffset = l.LogEndOffset()
		if err := record.SetBaseOffset(out, h.BaseOffset); err != nil {
			return AppendResult{}, l.perr(err)
		}
		if err := l.appendLocked(out, &h); err != nil {
			return AppendResult{}, err
		}
	}
	res.BaseOffset, res.LastOffset, res.LogStartOffset = h.BaseOffset, h.LastOffset(), l.LogStartOffset()
	return res, nil
}

// storageFailedLocked makes the partition refuse appends after a failed
// write, as appendLocked does.
func (l *Log) storageFailedLocked(err error) error {
	return l.failLocked("append failed", "", err)
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
	if err := l.writableLocked(); err != nil {
		return AppendResult{}, err
	}
	h, err := record.Validate(batch)
	if err != nil {
		return AppendResult{}, l.perr(err)
	}
	if h.BaseOffset < l.LogEndOffset() {
		return AppendResult{}, l.perr(fmt.Errorf("%w: replica batch starts at %d, below the log end offset %d", ErrInvalidRecord, h.BaseOffset, l.LogEndOffset()))
	}
	if err := l.checkSizeLocked(len(batch)); err != nil {
		return AppendResult{}, l.perr(err)
	}
	if err := l.appendLocked(batch, &h); err != nil {
		return AppendResult{}, err
	}
	res := AppendResult{BaseOffset: h.BaseOffset, LastOffset: h.LastOffset(), LogAppendTime: record.NoTimestamp,
		LogStartOffset: l.LogStartOffset(), Records: int(h.RecordsCount)}
	if h.Attributes.TimestampType() == record.LogAppendTime {
		res.LogAppendTime = h.MaxTimestamp
	}
	return res, nil
}

func (l *Log) perr(err error) error {
	return &PartitionError{Topic: l.topic, Partition: l.partition, Err: err}
}

func (l *Log) writableLocked() error {
	if err := l.checkOpen(); err != nil {
		return err
	}
	if l.failed != nil {
		return l.perr(fmt.Errorf("%w: %w", ErrStorage, l.failed))
	}
	return nil
}

func (l *Log) checkSizeLocked(n int) error {
	c := l.Config()
	if n > c.MaxMessageBytes {
		return fmt.Errorf("%w: %d bytes, max.message.bytes is %d", ErrRecordTooLarge, n, c.MaxMessageBytes)
	}
	if int64(n) > c.SegmentBytes {
		return fmt.Errorf("%w: %d bytes, segment.bytes is %d", ErrRecordTooLarge, n, c.SegmentBytes)
	}
	return nil
}

// validateLocked applies the checks of Kafka's
// UnifiedLog.analyzeAndValidateRecords and LogValidator to a client batch.
// It returns the header and the batch to write: the same bytes, or a rebuilt
// batch (owned by l.rebuild) when the topic's codec differs or a compressed
// batch's offset deltas are not 0..n-1.
func (l *Log) validateLocked(batch []byte) (record.BatchHeader, []byte, error) {
	c := l.Config()
	h, err := record.Validate(batch)
	if err != nil {
		return h, nil, err
	}
	switch {
	case h.BaseOffset != 0:
		// Kafka's words. The likeliest cause in process is a batch appended
		// before: Append wrote its offset into it.
		return h, nil, fmt.Errorf("%w: the baseOffset of the record batch in the append to %s should be 0, but it is %d"+
			" (a batch Append took already carries the offset it assigned: resend a copy made before)", ErrInvalidRecord, l.tp(), h.BaseOffset)
	case h.RecordsCount <= 0 || int64(h.LastOffsetDelta)+1 != int64(h.RecordsCount):
		return h, nil, fmt.Errorf("%w: %d records with lastOffsetDelta %d", ErrInvalidRecord, h.RecordsCount, h.LastOffsetDelta)
	case h.Attributes.IsControl():
		return h, nil, fmt.Errorf("%w: clients may not produce control batches", ErrInvalidRecord)
	case h.ProducerID >= 0 && h.BaseSequence < 0:
		return h, nil, fmt.Errorf("%w: producer id %d without a base sequence", ErrInvalidRecord, h.ProducerID)
	case h.Attributes.TimestampType() == record.LogAppendTime:
		return h, nil, fmt.Errorf("%w: producers must not set LogAppendTime", ErrInvalidTimestamp)
	}
	if err := l.checkSizeLocked(len(batch)); err != nil {
		return h, nil, err
	}
	codec, keep := c.CompressionType.Codec()
	if keep {
		codec = h.Attributes.Compression()
	}
	rebuild := codec != h.Attributes.Compression()

	r := l.appendReader
	if err := r.Reset(batch); err != nil {
		return h, nil, err
	}
	now := l.now().UnixMilli()
	maxTS := record.NoTimestamp
	compacted := c.CleanupPolicy.Compact
	// The accepted timestamp window, computed once: [now-before, now+after].
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.MessageTimestampType == record.CreateTime {
		if c.MessageTimestampBeforeMax >= 0 {
			lo = now - c.MessageTimestampBeforeMax.Milliseconds()
		}
		if c.MessageTimestampAfterMax >= 0 {
			hi = now + c.MessageTimestampAfterMax.Milliseconds()
		}
	}
	// Every record is checked (layout, offset delta, key, timestamp) with
	// SkimWhile, which validates as a full decode does without producing
	// the records' fields, and stops at each record that fails a check.
	check := record.SkimCheck{MinTimestamp: lo, MaxTimestamp: hi, KeyRequired: compacted}
	for {
		ts, rec, stopped := r.SkimWhile(check)
		maxTS = max(maxTS, ts)
		if !stopped {
			break
		}
		if rec.OffsetDelta != rec.Index {
			if h.Attributes.Compression() == record.None {
				return h, nil, fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, rec.Index, rec.OffsetDelta)
			}
			rebuild = true // Kafka rebuilds compressed batches with bad inner offsets
		}
		if compacted && rec.NullKey {
			return h, nil, fmt.Errorf("%w: compacted topic %s requires a key on every record", ErrInvalidRecord, l.topic)
		}
		if (rec.Timestamp < lo || rec.Timestamp > hi) && rec.Timestamp != record.NoTimestamp {
			return h, nil, timestampError(rec.Timestamp, now, c)
		}
		maxTS = max(maxTS, rec.Timestamp)
	}
	if err := r.Err(); err != nil {
		return h, nil, err
	}
	if rebuild {
		return l.rebuildLocked(batch, h, codec, c)
	}
	if c.MessageTimestampType == record.CreateTime && h.MaxTimestamp != maxTS {
		// The header's max timestamp is wrong: the caller rewrites it
		// (and the CRC) with fixMaxTimestamp, once no write ahead reads the
		// batch.
		h.MaxTimestamp = maxTS
		return h, nil, nil
	}
	return h, batch, nil
}

// fixMaxTimestamp is the rewrite validateLocked asks for by returning no
// batch: the batch's max timestamp (and so its CRC) becomes h's.
func fixMaxTimestamp(batch []byte, h *record.BatchHeader) ([]byte, error) {
	if err := record.SetMaxTimestamp(batch, h.MaxTimestamp); err != nil {
		return nil, err
	}
	return batch, nil
}

// timestampError says which bound a timestamp broke.
func timestampError(ts, now int64, c TopicConfig) error {
	if now-ts > 0 {
		return fmt.Errorf("%w: timestamp %d is more than message.timestamp.before.max.ms=%d before the broker time %d",
			ErrInvalidTimestamp, ts, c.MessageTimestampBeforeMax.Milliseconds(), now)
	}
	return fmt.Errorf("%w: timestamp %d is more than message.timestamp.after.max.ms=%d after the broker time %d",
		ErrInvalidTimestamp, ts, c.MessageTimestampAfterMax.Milliseconds(), now)
}

// rebuildLocked re-encodes batch with codec, keeping its producer fields
// and transactional flag, with fresh offset deltas 0..n-1 and the records'
// own timestamps (Kafka's LogValidator rebuild).
func (l *Log) rebuildLocked(batch []byte, h record.BatchHeader, codec record.Compression, c TopicConfig) (record.BatchHeader, []byte, error) {
	r := l.appendReader
	if err := r.Reset(batch); err != nil {
		return h, nil, err
	}
	attrs := record.Attributes(0).WithCompression(codec).WithTransactional(h.Attributes.IsTransactional())
	l.rebuild.Reset(record.BatchHeader{PartitionLeaderEpoch: h.PartitionLeaderEpoch, Attributes: attrs,
		ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}, c.compressionLevel(codec))
	for r.Next() {
		rec := r.Record()
		if err := l.rebuild.Append(rec.Timestamp, rec.Key, rec.Value, rec.Headers); err != nil {
			return h, nil, fmt.Errorf("%w: %w", ErrInvalidRecord, err)
		}
	}
	if err := r.Err(); err != nil {
		return h, nil, err
	}
	out, err := l.rebuild.Build()
	if err != nil {
		return h, nil, err
	}
	if len(out) > c.MaxMessageBytes {
		return h, nil, fmt.Errorf("%w: %d bytes after recompression with %s, max.message.bytes is %d", ErrRecordTooLarge, len(out), codec, c.MaxMessageBytes)
	}
	return l.rebuild.Header(), out, nil
}

// appendLocked writes a batch with assigned offsets: rolls if due, appends to
// the active segment, records the leader epoch, applies flush.messages and
// wakes readers.
func (l *Log) appendLocked(batch []byte, h *record.BatchHeader) error {
	if err := l.maybeRollLocked(h, len(batch)); err != nil {
		return err
	}
	return l.writeLocked(l.activeSegment(), batch, h)
}

// writeLocked appends a batch to the active segment seg and does what
// follows an append.
func (l *Log) writeLocked(seg *segment.Segment, batch []byte, h *record.BatchHeader) error {
	if err := seg.Append(batch, h); err != nil {
		return l.storageFailedLocked(err)
	}
	return l.appendedLocked(seg, batch, h)
}

// appendedLocked does what follows the append of a batch to seg, the
// active segment: the producer state, the log end offset, publication,
// the leader epoch, flush.messages, and waking readers.
func (l *Log) appendedLocked(seg *segment.Segment, batch []byte, h *record.BatchHeader) error {
	// Readers see the segment up to its published size (segment
	// LogHooks.ReadableSize), and the batch is published only after the
	// log end offset: a reader never holds a batch beyond the log end
	// offset it can see next (which would make its next position out of
	// range).
	if err := l.updateProducerStateLocked(seg, batch, h, false); err != nil {
		return l.failLocked("updating the producer state failed", "", err)
	}
	l.rememberAppendedMarksLocked(seg, batch, h)
	l.logEndOffset.Store(h.NextOffset())
	segHooks.Publish(seg)
	if h.PartitionLeaderEpoch >= 0 {
		// A new epoch is written at once, as Kafka's LeaderEpochFileCache
		// does (see the internal/checkpoint package doc); a failure to
		// write it loses nothing the log cannot rebuild, so it is logged.
		changed, err := l.epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset)
		if err == nil && changed {
			err = l.epochs.Write(l.fsys, filepath.Join(l.dir, checkpoint.LeaderEpochFile))
		}
		if err != nil {
			l.logger.Warn("updating leader-epoch-checkpoint failed", "partition", l.tp(), "err", err)
		}
		if h.PartitionLeaderEpoch > l.leaderEpoch.Load() {
			// A replica's batch of a later epoch (AppendAsReplica): the
			// log's epoch is the latest it holds, as after a reopen.
			l.leaderEpoch.Store(h.PartitionLeaderEpoch)
		}
	}
	l.unflushedMessages += int64(h.LastOffsetDelta) + 1
	c := l.Config()
	if c.FlushMessages > 0 && l.unflushedMessages >= c.FlushMessages {
		if err := l.flushLocked(l.LogEndOffset()); err != nil {
			l.wake()
			return err
		}
	}
	l.wake()
	return nil
}

// maybeRollLocked rolls a new segment, named by the incoming batch's base
// offset, when the active one is due ([segment.Segment.ShouldRoll]).
func (l *Log) maybeRollLocked(h *record.BatchHeader, size int) error {
	c := l.Config()
	active := l.activeSegment()
	roll, err := active.ShouldRoll(segment.RollParams{BatchBytes: size, MaxTimestamp: h.MaxTimestamp, LastOffset: h.LastOffset(),
		SegmentBytes: c.SegmentBytes, SegmentTime: c.SegmentRollTime, Now: l.now()})
	if err != nil {
		return l.perr(err)
	}
	if !roll || active.Size() == 0 {
		return nil
	}
	return l.rollLocked(h.BaseOffset)
}

// rollLocked creates the next segment at base, then seals the active one.
// Creating comes first (Kafka's LocalLog.roll seals first) so that a
// failure to create — no file descriptor left (EMFILE), no space — changes
// nothing: the active segment stays active, the append that rolled fails
// with ErrStorage, and the next append that finds the segment due rolls
// again, so that the partition heals once descriptors come back.
func (l *Log) rollLocked(base int64) error {
	segs := l.segs()
	s, err := segment.Create(l.fsys, l.dir, base, l.segmentConfig(), l.rollJitter())
	if err != nil {
		l.logger.Warn("creating a segment failed; the next append rolls again", "partition", l.tp(), "baseOffset", base, "err", err)
		return l.perr(fmt.Errorf("%w: rolling a segment at offset %d: %w", ErrStorage, base, err))
	}
	if err := segs[len(segs)-1].Seal(); err != nil {
		// Sealing writes the indexes: like a failed append, a failure
		// leaves the partition refusing appends (the state of the files
		// is no longer known). The new segment goes.
		return l.failLocked("sealing the active segment failed", "", errors.Join(err, s.Remove()))
	}
	l.dirDirty = true
	// Kafka snapshots the producer state at every roll, named by the new
	// segment's base offset; a failure costs only a longer replay at the
	// next load, so it is logged.
	if err := l.snapshotLocked(false); err != nil {
		l.logger.Warn("writing the producer snapshot failed", "partition", l.tp(), "err", err)
	}
	segHooks.SetNextBaseOffset(segs[len(segs)-1], base)
	next := make([]*segment.Segment, len(segs), len(segs)+1)
	copy(next, segs)
	l.setSegments(append(next, s))
	l.logger.Debug("rolled a new segment", "partition", l.tp(), "baseOffset", base)
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
	if err := l.writableLocked(); err != nil {
		return err
	}
	if l.activeSegment().Size() == 0 {
		return nil
	}
	return l.rollLocked(l.LogEndOffset())
}
