package log

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kafkalite/kafkalite/index"
	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/remotecodec"
	"github.com/kafkalite/kafkalite/internal/snapshot"
	"github.com/kafkalite/kafkalite/log/remote"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// RemoteLogMetadataTopic is the internal topic that records tiered
// storage's segment copies and their states, in Kafka's record schemas
// (TopicBasedRemoteLogMetadataManager's topic).
const RemoteLogMetadataTopic = "__remote_log_metadata"

// tierKey names a partition in the metadata: its topic id and number.
type tierKey struct {
	topicID   remote.UUID
	partition int32
}

// tierManager copies tiered partitions' sealed segments to the Dir's
// remote store and keeps their metadata in __remote_log_metadata (Kafka's
// RemoteLogManager with TopicBasedRemoteLogMetadataManager, on one node).
//
// Every state of a copy is a record appended durably before the step it
// announces is taken: COPY_SEGMENT_STARTED before the upload,
// COPY_SEGMENT_FINISHED after it, DELETE_SEGMENT_STARTED before a deletion
// from the store, DELETE_SEGMENT_FINISHED after it. So a FINISHED copy is
// always whole in the store, and a copy left STARTED by a crash or a
// failure (an orphan, perhaps partly uploaded) is deleted by the next pass,
// which then copies the segment again under a new id.
type tierManager struct {
	d     *Dir
	store remote.StorageManager
	metas []*Log // the partitions of __remote_log_metadata

	passMu   sync.Mutex // one pass at a time
	expireMu sync.Mutex // one expiry (EnforceRetention) at a time

	mu     sync.Mutex // copies
	copies map[tierKey]map[remote.UUID]*remote.SegmentMetadata
	// skipped counts metadata records replay could not use (damaged, or
	// an update of an unknown copy or an impossible transition).
	skipped int
	// hits and misses count reads of copies served from the cache and
	// fetched, per partition.
	hits, misses map[tierKey]int64

	cache *remoteCache
}

// tiering returns the Dir's tiered storage, nil for none.
func (d *Dir) tiering() *tierManager { return d.tier }

// remoteLog is a partition's side of the Dir's tiered storage: its key in
// the remote log metadata, and the Dir's manager, which serves the
// partition when its topic has remote.storage.enable. Reads below the
// first local segment go through it (Kafka's UnifiedLog asks the
// RemoteLogManager for them).
type remoteLog struct {
	key     tierKey
	manager func() *tierManager // the Dir's tiered storage, nil (or returning nil) for none
}

// tiering returns the Dir's tiered storage when the partition, with the
// topic configuration c, uses it, else nil.
func (r *remoteLog) tiering(c TopicConfig) *tierManager {
	if r.manager == nil || !c.RemoteStorageEnable {
		return nil
	}
	return r.manager()
}

// appendAbortedTxns appends the aborted transactions whose data overlaps
// [fetchOffset, upperBound): first those of the copies below the first
// local segment, when fetchOffset lies there, then those of the local
// segments, until an entry says the search is complete (Kafka's
// RemoteLogManager.collectAbortedTransactions, which goes on into the
// local log). ctx bounds the fetches of the copies' transaction indexes.
// On error it returns dst as it was.
func (r *remoteLog) appendAbortedTxns(ctx context.Context, l *Log, dst []index.AbortedTxn, fetchOffset, upperBound int64) ([]index.AbortedTxn, error) {
	out := dst
	if t := r.tiering(l.Config()); t != nil {
		if local := l.local.startOffset(); fetchOffset < local {
			got, done, err := t.appendAbortedTxns(ctx, l, out, fetchOffset, upperBound, local)
			if err != nil {
				return dst, l.tp.wrap(err)
			}
			if done {
				return got, nil
			}
			out = got
		}
	}
	got, err := l.local.appendAbortedTxns(out, fetchOffset, upperBound, l.txnRepair.verify)
	if err != nil {
		return dst, err
	}
	return got, nil
}

// startTier opens the tiering machinery when the directory has it:
// creates __remote_log_metadata if needed and replays it.
func (d *Dir) startTier(ctx context.Context) error {
	if !d.cfg.RemoteLogStorageSystemEnable {
		return nil
	}
	if d.cfg.RemoteStorage == nil {
		return newConfigError("remote.log.storage.system.enable", "true", "needs Config.RemoteStorage, the remote store", nil)
	}
	parts, err := d.InternalTopic(access.Internal{}, ctx, RemoteLogMetadataTopic, int32(d.cfg.RemoteLogMetadataTopicNumPartitions), nil)
	if err != nil {
		return fmt.Errorf("opening %s: %w", RemoteLogMetadataTopic, err)
	}
	cache, err := newRemoteCache(d.fsys, filepath.Join(d.path, remoteIndexCacheDir, remoteCacheDir), d.cfg.RemoteLogIndexFileCacheTotalSize, d.logger)
	if err != nil {
		return fmt.Errorf("tiered storage: the cache of fetched segments: %w", err)
	}
	t := &tierManager{d: d, store: d.cfg.RemoteStorage, metas: parts, cache: cache,
		copies: map[tierKey]map[remote.UUID]*remote.SegmentMetadata{}, hits: map[tierKey]int64{}, misses: map[tierKey]int64{}}
	for _, l := range parts {
		if err := t.replay(l); err != nil {
			return err
		}
	}
	d.tier = t
	for _, l := range d.allLogs() {
		if l.Config().RemoteStorageEnable {
			t.settleStart(l)
		}
	}
	return nil
}

// settleStart checks a tiered partition's log start offset, taken from
// log-start-offset-checkpoint even below the first local segment, against
// its copies: the offsets between it and the first local segment must be
// in finished copies; where they are not (copies deleted since, or never
// made), the start moves up to the first offset that is.
func (t *tierManager) settleStart(l *Log) {
	segs := l.local.segs()
	local := segs[0].BaseOffset()
	start := l.LogStartOffset()
	if start >= local {
		return
	}
	want := local
	covered := start
	for _, m := range t.finished(l.remote.key) {
		if m.EndOffset < covered {
			continue
		}
		if m.StartOffset > covered {
			// A hole: what is before it cannot be read.
			covered = m.EndOffset + 1
			want = m.StartOffset
			continue
		}
		if want == local {
			want = max(start, m.StartOffset)
		}
		covered = m.EndOffset + 1
	}
	if covered < local {
		want = local // the copies end before the local segments begin
	}
	if want != start {
		t.d.logger.Warn("tiered storage: moving a log start offset to what the copies and local segments hold",
			"partition", l.tp, "from", start, "to", want)
		l.logStartOffset.Store(want)
	}
}

// finished returns the partition's finished copies in offset order.
func (t *tierManager) finished(key tierKey) []remote.SegmentMetadata {
	t.mu.Lock()
	var out []remote.SegmentMetadata
	for _, m := range t.copies[key] {
		if m.State == remote.CopySegmentFinished {
			out = append(out, *m)
		}
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b remote.SegmentMetadata) int { return cmp.Compare(a.StartOffset, b.StartOffset) })
	return out
}

// acquire returns the copy's cache entry of the kind, pinned (fetched if
// need be), counting the partition's cache hits and misses. The caller
// releases it ([remoteCache.release]).
func (t *tierManager) acquire(ctx context.Context, l *Log, m remote.SegmentMetadata, kind cacheKind) (*cacheEntry, error) {
	key := l.remote.key
	e, hit, err := t.cache.acquire(ctx, t.store, m, kind, l.local.segmentConfig())
	t.mu.Lock()
	if hit {
		t.hits[key]++
	} else if err == nil {
		t.misses[key]++
	}
	t.mu.Unlock()
	return e, err
}

// read serves a read of offset below the first local segment (localStart)
// from the copies: the batches of the first copy that holds offset or
// anything after it. It returns nil when no copy does. The slice keeps
// the copy's files until it is released, even if the cache evicts it.
func (t *tierManager) read(ctx context.Context, l *Log, offset int64, maxBytes int, minOneBatch bool, localStart int64) (*segment.Slice, error) {
	for _, m := range t.finished(l.remote.key) {
		if m.EndOffset < offset || m.StartOffset >= localStart {
			continue
		}
		e, err := t.acquire(ctx, l, m, wholeCopy)
		if err != nil {
			return nil, err
		}
		sl, err := e.seg.Read(offset, maxBytes, segHooks.ReadableSize(e.seg), minOneBatch)
		t.cache.release(e)
		if err != nil || sl != nil {
			return sl, err
		}
		// Nothing at or after offset in this copy: the next one.
	}
	return nil, nil
}

// appendAbortedTxns appends the aborted transactions of the copies below
// localStart that overlap [fetchOffset, upperBound), as
// localLog.appendAbortedTxns does for local segments (Kafka's
// RemoteLogManager.collectAbortedTransactions): from the copy holding
// fetchOffset on, until an entry says the search is complete (done). Only
// the copies' transaction indexes are read: a cached whole copy's, or the
// index fetched alone (a copy without aborts has none to fetch).
func (t *tierManager) appendAbortedTxns(ctx context.Context, l *Log, dst []index.AbortedTxn, fetchOffset, upperBound, localStart int64) ([]index.AbortedTxn, bool, error) {
	for _, m := range t.finished(l.remote.key) {
		if m.EndOffset < fetchOffset || m.StartOffset >= localStart || m.TxnIndexEmpty {
			continue
		}
		e, err := t.acquire(ctx, l, m, txnIndexOnly)
		if err != nil {
			return dst, false, err
		}
		out, done, err := e.appendAbortedTxns(dst, fetchOffset, upperBound)
		t.cache.release(e)
		if err != nil {
			return dst, false, err
		}
		dst = out
		if done {
			return dst, true, nil
		}
	}
	return dst, false, nil
}

// offsetForTimestamp looks for the first record at or after ts in the
// copies below localStart.
func (t *tierManager) offsetForTimestamp(ctx context.Context, l *Log, ts, start, localStart int64) (segment.TimestampOffset, bool, error) {
	for _, m := range t.finished(l.remote.key) {
		if m.StartOffset >= localStart || m.EndOffset < start || m.MaxTimestamp < ts {
			continue
		}
		e, err := t.acquire(ctx, l, m, wholeCopy)
		if err != nil {
			return segment.TimestampOffset{}, false, err
		}
		got, ok, err := e.seg.FindOffsetByTimestamp(ts, start)
		t.cache.release(e)
		if err != nil || ok {
			return got, ok, err
		}
	}
	return segment.TimestampOffset{}, false, nil
}

// replay reads a metadata partition from its start and applies each
// record in order.
func (t *tierManager) replay(l *Log) error {
	var rr RecordReader
	for off := l.LogStartOffset(); off < l.HighWatermark(); {
		next, err := rr.ReadRecords(l, off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			v, err := remotecodec.ParseValue(r.Value)
			if err != nil {
				t.skip("a damaged record", l, r.Offset, err)
				return nil
			}
			t.apply(v, l, r.Offset)
			return nil
		})
		if err != nil {
			return fmt.Errorf("replaying %s: %w", l.tp, err)
		}
		if next <= off {
			break
		}
		off = next
	}
	return nil
}

func (t *tierManager) skip(what string, l *Log, offset int64, err error) {
	t.skipped++
	t.d.logger.Warn("tiered storage: skipping "+what+" of the remote log metadata", "partition", l.tp, "offset", offset, "err", err)
}

// apply applies one metadata record (replay, or a record just written).
func (t *tierManager) apply(v remotecodec.Record, l *Log, offset int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch r := v.(type) {
	case remotecodec.RemoteLogSegmentMetadataRecord:
		m := fromRecord(r)
		key := tierKey{topicID: m.ID.TopicID, partition: m.ID.Partition}
		if t.copies[key] == nil {
			t.copies[key] = map[remote.UUID]*remote.SegmentMetadata{}
		}
		if _, dup := t.copies[key][m.ID.ID]; dup || m.State != remote.CopySegmentStarted {
			t.skip("a segment record repeated or not in COPY_SEGMENT_STARTED", l, offset, nil)
			return
		}
		t.copies[key][m.ID.ID] = &m
	case remotecodec.RemoteLogSegmentMetadataUpdateRecord:
		id := segmentID(r.RemoteLogSegmentID)
		m := t.copies[tierKey{topicID: id.TopicID, partition: id.Partition}][id.ID]
		to := remote.SegmentState(r.RemoteLogSegmentState)
		if m == nil || !validTransition(m.State, to) {
			t.skip("an update of an unknown segment or out of order", l, offset, nil)
			return
		}
		m.State, m.EventTimestamp, m.BrokerID = to, r.EventTimestampMs, r.BrokerID
		if r.CustomMetadata != nil {
			m.CustomMetadata = r.CustomMetadata
		}
		if to == remote.DeleteSegmentFinished {
			delete(t.copies[tierKey{topicID: id.TopicID, partition: id.Partition}], id.ID)
		}
	}
	// Partition deletion and snapshot records are not written by
	// kafkalite; they change nothing here.
}

// validTransition is Kafka's RemoteLogSegmentState.isValidTransition.
func validTransition(from, to remote.SegmentState) bool {
	switch from {
	case remote.CopySegmentStarted:
		return to == remote.CopySegmentFinished || to == remote.DeleteSegmentStarted
	case remote.CopySegmentFinished:
		return to == remote.DeleteSegmentStarted
	case remote.DeleteSegmentStarted:
		return to == remote.DeleteSegmentFinished
	}
	return false
}

func segmentID(id remotecodec.RemoteLogSegmentID) remote.SegmentID {
	return remote.SegmentID{Topic: id.TopicIdPartition.Name, TopicID: id.TopicIdPartition.ID,
		Partition: id.TopicIdPartition.Partition, ID: id.ID}
}

func codecID(id remote.SegmentID) remotecodec.RemoteLogSegmentID {
	return remotecodec.RemoteLogSegmentID{ID: id.ID,
		TopicIdPartition: remotecodec.TopicIdPartition{Name: id.Topic, ID: id.TopicID, Partition: id.Partition}}
}

func fromRecord(r remotecodec.RemoteLogSegmentMetadataRecord) remote.SegmentMetadata {
	m := remote.SegmentMetadata{ID: segmentID(r.RemoteLogSegmentID), StartOffset: r.StartOffset, EndOffset: r.EndOffset,
		MaxTimestamp: r.MaxTimestampMs, SizeInBytes: r.SegmentSizeInBytes, TxnIndexEmpty: r.TxnIndexEmpty,
		State: remote.SegmentState(r.RemoteLogSegmentState), EventTimestamp: r.EventTimestampMs, BrokerID: r.BrokerID,
		CustomMetadata: r.CustomMetadata}
	for _, e := range r.SegmentLeaderEpochs {
		m.LeaderEpochs = append(m.LeaderEpochs, remote.EpochStart{LeaderEpoch: e.LeaderEpoch, StartOffset: e.Offset})
	}
	return m
}

func toRecord(m *remote.SegmentMetadata) remotecodec.RemoteLogSegmentMetadataRecord {
	r := remotecodec.RemoteLogSegmentMetadataRecord{RemoteLogSegmentID: codecID(m.ID), StartOffset: m.StartOffset,
		EndOffset: m.EndOffset, BrokerID: m.BrokerID, MaxTimestampMs: m.MaxTimestamp, EventTimestampMs: m.EventTimestamp,
		SegmentSizeInBytes: m.SizeInBytes, CustomMetadata: m.CustomMetadata,
		RemoteLogSegmentState: remotecodec.RemoteLogSegmentState(m.State), TxnIndexEmpty: m.TxnIndexEmpty}
	for _, e := range m.LeaderEpochs {
		r.SegmentLeaderEpochs = append(r.SegmentLeaderEpochs, remotecodec.SegmentLeaderEpoch{LeaderEpoch: e.LeaderEpoch, Offset: e.StartOffset})
	}
	return r
}

// record appends one metadata record durably, then applies it.
func (t *tierManager) record(ctx context.Context, key tierKey, topic string, v remotecodec.Record) error {
	val, err := remotecodec.AppendValue(nil, v)
	if err != nil {
		return err
	}
	p := remotecodec.PartitionFor(remotecodec.TopicIdPartition{Name: topic, ID: key.topicID, Partition: key.partition}, int32(len(t.metas)))
	l := t.metas[p]
	now := t.d.now().UnixMilli()
	batch, err := record.AppendBatch(nil, record.BatchHeader{Magic: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		PartitionLeaderEpoch: -1}, record.DefaultLevel, []record.Record{{Timestamp: now, Value: val}})
	if err != nil {
		return err
	}
	res, err := l.AppendInternal(access.Internal{}, batch)
	if err != nil {
		return err
	}
	if err := l.Sync(ctx, res.LastOffset+1); err != nil {
		return err
	}
	t.apply(v, l, res.LastOffset)
	return nil
}

// update records a copy's new state.
func (t *tierManager) update(ctx context.Context, m *remote.SegmentMetadata, to remote.SegmentState, custom []byte) error {
	return t.record(ctx, tierKey{topicID: m.ID.TopicID, partition: m.ID.Partition}, m.ID.Topic,
		remotecodec.RemoteLogSegmentMetadataUpdateRecord{RemoteLogSegmentID: codecID(m.ID), BrokerID: t.d.NodeID(),
			EventTimestampMs: t.d.now().UnixMilli(), CustomMetadata: custom, RemoteLogSegmentState: remotecodec.RemoteLogSegmentState(to)})
}

// TierResult is what a tiering pass did.
type TierResult struct {
	// Copied are the segments copied to the remote store, CopiedBytes
	// their .log bytes.
	Copied      int
	CopiedBytes int64
	// Deleted are the copies deleted from the store: left unfinished by
	// an earlier pass, below their partition's log start offset, or of a
	// partition that no longer exists.
	Deleted int
}

// TierNow runs one tiering pass at once, as the background loop does every
// remote.log.manager.task.interval.ms: copies left unfinished are deleted
// from the store, copies below their partition's log start offset (or of
// deleted partitions) too, and every tiered partition's sealed segments
// below its last stable offset that have no finished copy are copied, in
// offset order. Without remote.log.storage.system.enable it does nothing.
// A failed copy stops its partition's pass (and is cleaned up by the next
// one); the error is returned, with the other partitions' passes done.
func (d *Dir) TierNow(ctx context.Context) (TierResult, error) {
	if d.tier == nil {
		return TierResult{}, nil
	}
	return d.tier.pass(ctx)
}

func (t *tierManager) pass(ctx context.Context) (TierResult, error) {
	t.passMu.Lock()
	defer t.passMu.Unlock()
	var res TierResult
	var errs []error
	live := map[tierKey]*Log{}
	for _, l := range t.d.allLogs() {
		live[l.remote.key] = l
	}
	// Copies to delete: unfinished, below the log start, or of a partition
	// gone.
	var doomed []*remote.SegmentMetadata
	t.mu.Lock()
	for key, copies := range t.copies {
		l := live[key]
		for _, m := range copies {
			if m.State != remote.CopySegmentFinished || l == nil || m.EndOffset < l.LogStartOffset() {
				doomed = append(doomed, m)
			}
		}
	}
	t.mu.Unlock()
	slices.SortFunc(doomed, func(a, b *remote.SegmentMetadata) int { return cmp.Compare(a.StartOffset, b.StartOffset) })
	for _, m := range doomed {
		if err := t.deleteCopy(ctx, m); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Deleted++
	}
	for _, l := range t.d.allLogs() {
		if !l.Config().RemoteStorageEnable || l.local.checkOpen() != nil {
			continue
		}
		n, bytes, err := t.copyPartition(ctx, l)
		res.Copied += n
		res.CopiedBytes += bytes
		if err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return res, errors.Join(errs...)
}

// deleteCopy deletes a copy from the store, its deletion recorded before
// (unless already started) and after.
func (t *tierManager) deleteCopy(ctx context.Context, m *remote.SegmentMetadata) error {
	if m.State != remote.DeleteSegmentStarted {
		if err := t.update(ctx, m, remote.DeleteSegmentStarted, nil); err != nil {
			return fmt.Errorf("tiered storage: recording the deletion of %s: %w", m.ID, err)
		}
	}
	if err := t.store.DeleteLogSegmentData(ctx, *m); err != nil {
		t.d.logger.Warn("tiered storage: deleting a remote segment failed; the next pass retries", "segment", m.ID,
			"startOffset", m.StartOffset, "err", err)
		return fmt.Errorf("tiered storage: deleting %s: %w", m.ID, err)
	}
	t.cache.forget(m.ID.ID)
	if err := t.update(ctx, m, remote.DeleteSegmentFinished, nil); err != nil {
		return fmt.Errorf("tiered storage: recording the deletion of %s: %w", m.ID, err)
	}
	t.d.logger.Info("tiered storage: deleted a remote segment", "segment", m.ID, "startOffset", m.StartOffset,
		"endOffset", m.EndOffset)
	return nil
}

// copiedEnd returns the end offset of the partition's latest finished
// copy, -1 if none.
func (t *tierManager) copiedEnd(key tierKey) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	end := int64(-1)
	for _, m := range t.copies[key] {
		if m.State == remote.CopySegmentFinished {
			end = max(end, m.EndOffset)
		}
	}
	return end
}

// copyPartition copies the partition's sealed segments that are below its
// last stable offset and after its latest finished copy.
func (t *tierManager) copyPartition(ctx context.Context, l *Log) (int, int64, error) {
	key := l.remote.key
	copied, bytes := 0, int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return copied, bytes, err
		}
		seg, next := t.nextToCopy(l, key)
		if seg == nil {
			return copied, bytes, nil
		}
		n, err := t.copySegment(ctx, l, key, seg, next)
		if err != nil {
			return copied, bytes, err
		}
		copied++
		bytes += n
	}
}

// nextToCopy returns the first sealed segment past the latest finished
// copy whose end is at or below the last stable offset, with the base
// offset of the segment after it.
func (t *tierManager) nextToCopy(l *Log, key tierKey) (*segment.Segment, int64) {
	end := t.copiedEnd(key)
	lso := l.LastStableOffset()
	segs := l.local.segs()
	for i := 0; i+1 < len(segs); i++ {
		s, next := segs[i], segs[i+1].BaseOffset()
		if next-1 <= end || s.Size() == 0 {
			continue
		}
		if next > lso || next > l.HighWatermark() {
			return nil, 0
		}
		return s, next
	}
	return nil, 0
}

// copySegment copies one sealed segment: made durable, recorded as
// started, uploaded with its indexes, producer snapshot and leader epochs,
// recorded as finished.
func (t *tierManager) copySegment(ctx context.Context, l *Log, key tierKey, s *segment.Segment, next int64) (int64, error) {
	began := time.Now()
	if err := l.Sync(ctx, next); err != nil {
		return 0, err
	}
	data, closeFiles, err := t.segmentData(l, s, next)
	if err != nil {
		return 0, fmt.Errorf("tiered storage: reading %s: %w", s, err)
	}
	defer closeFiles()
	maxTs, err := l.local.largestTimestamp(s)
	if err != nil {
		return 0, err
	}
	var id remote.UUID
	_, _ = rand.Read(id[:])
	m := &remote.SegmentMetadata{ID: remote.SegmentID{Topic: l.tp.Topic, TopicID: key.topicID, Partition: l.tp.Partition, ID: id},
		StartOffset: s.BaseOffset(), EndOffset: next - 1, MaxTimestamp: maxTs, LeaderEpochs: l.epochs.epochsIn(s.BaseOffset(), next),
		SizeInBytes: int32(data.Log.Size), TxnIndexEmpty: data.TransactionIndex.Size == 0, State: remote.CopySegmentStarted,
		EventTimestamp: t.d.now().UnixMilli(), BrokerID: t.d.NodeID()}
	if err := t.record(ctx, key, l.tp.Topic, toRecord(m)); err != nil {
		return 0, fmt.Errorf("tiered storage: recording the copy of %s: %w", s, err)
	}
	t.mu.Lock()
	m = t.copies[key][id]
	t.mu.Unlock()
	custom, err := t.store.CopyLogSegmentData(ctx, *m, data)
	if err != nil {
		t.d.logger.Warn("tiered storage: copying a segment failed; the next pass deletes what was copied and tries again",
			"partition", l.tp, "segment", m.ID, "startOffset", m.StartOffset, "err", err)
		return 0, fmt.Errorf("tiered storage: copying %s of %s: %w", s, l.tp, err)
	}
	if err := t.update(ctx, m, remote.CopySegmentFinished, custom); err != nil {
		return 0, fmt.Errorf("tiered storage: recording the copy of %s: %w", s, err)
	}
	t.d.logger.Info("tiered storage: copied a segment", "partition", l.tp, "segment", m.ID, "startOffset", m.StartOffset,
		"endOffset", m.EndOffset, "bytes", data.Log.Size, "duration", time.Since(began))
	return data.Log.Size, nil
}

// segmentData opens a sealed segment's files for a copy. An open file
// stays readable if retention removes the segment meanwhile.
func (t *tierManager) segmentData(l *Log, s *segment.Segment, next int64) (remote.SegmentData, func(), error) {
	var opened []io.Closer
	closeAll := func() {
		for _, c := range opened {
			c.Close()
		}
	}
	open := func(name string, optional bool) (remote.Source, error) {
		f, err := l.local.fsys.Open(filepath.Join(l.local.dir, name))
		if optional && errors.Is(err, fs.ErrNotExist) {
			return remote.Source{}, nil
		}
		if err != nil {
			return remote.Source{}, err
		}
		opened = append(opened, f)
		size, err := f.Size()
		return remote.Source{R: f, Size: size}, err
	}
	var d remote.SegmentData
	var err error
	base := s.BaseOffset()
	for _, f := range []struct {
		src      *remote.Source
		name     string
		optional bool
	}{
		{&d.Log, segment.FileName(base, ".log"), false},
		{&d.OffsetIndex, segment.FileName(base, ".index"), false},
		{&d.TimeIndex, segment.FileName(base, ".timeindex"), false},
		{&d.TransactionIndex, segment.FileName(base, ".txnindex"), true},
		{&d.ProducerSnapshot, snapshot.FileName(next), true},
	} {
		if *f.src, err = open(f.name, f.optional); err != nil {
			closeAll()
			return remote.SegmentData{}, nil, err
		}
	}
	if d.TransactionIndex.Size == 0 {
		d.TransactionIndex = remote.Source{}
	}
	if d.ProducerSnapshot.R == nil {
		// No snapshot at the segment's end (none was written there): an
		// empty one, as the store wants a file.
		d.ProducerSnapshot = remote.Source{R: strings.NewReader(""), Size: 0}
	}
	d.LeaderEpochIndex = epochCheckpointText(l.epochs.epochsIn(base, next))
	return d, closeAll, nil
}

// remoteStats fills a partition's tiered storage figures.
func (t *tierManager) remoteStats(l *Log, st *PartitionStats) {
	key := l.remote.key
	t.mu.Lock()
	end := int64(-1)
	for _, m := range t.copies[key] {
		if m.State == remote.CopySegmentFinished {
			st.RemoteSegments++
			st.RemoteBytes += int64(m.SizeInBytes)
			end = max(end, m.EndOffset)
		}
	}
	st.RemoteFetchCacheHits, st.RemoteFetchCacheMisses = t.hits[key], t.misses[key]
	t.mu.Unlock()
	segs := l.local.segs()
	st.LocalLogStartOffset = segs[0].BaseOffset()
	for i := 0; i+1 < len(segs); i++ {
		if segs[i+1].BaseOffset()-1 > end {
			st.RemoteCopyLagSegments++
			st.RemoteCopyLagBytes += segs[i].Size()
		}
	}
}

// RemoteSegments returns the partition's finished copies in the remote
// store, in offset order (nil without tiered storage).
func (d *Dir) RemoteSegments(topic string, partition int32) ([]remote.SegmentMetadata, error) {
	l, err := d.Partition(topic, partition)
	if err != nil || d.tier == nil {
		return nil, err
	}
	key := l.remote.key
	d.tier.mu.Lock()
	var out []remote.SegmentMetadata
	for _, m := range d.tier.copies[key] {
		if m.State == remote.CopySegmentFinished {
			out = append(out, *m)
		}
	}
	d.tier.mu.Unlock()
	slices.SortFunc(out, func(a, b remote.SegmentMetadata) int { return cmp.Compare(a.StartOffset, b.StartOffset) })
	return out, nil
}

// expireCopies applies a tiered partition's total retention to its
// copies, oldest first, as Kafka's RemoteLogManager does: retention.ms by
// their largest timestamps (expired at retention.ms old), retention.bytes
// over the copies and the local segments not copied yet (Kafka's
// onlyLocalLogSegmentsSize: those from the highest copied offset on; the
// copied ones still local are not counted twice). Each expired copy is
// recorded as DELETE_SEGMENT_STARTED (the next tiering pass deletes it
// from the store) and the offset after the last one returned, for the log
// start offset to move to; -1 when none expires.
func (t *tierManager) expireCopies(l *Log, c TopicConfig, now time.Time) (int64, error) {
	if c.Retention < 0 && c.RetentionBytes < 0 {
		return -1, nil
	}
	t.expireMu.Lock()
	defer t.expireMu.Unlock()
	key := l.remote.key
	copied := t.copiedEnd(key)
	start := l.LogStartOffset()
	var total int64
	for _, s := range l.local.segs() {
		if s.BaseOffset() >= copied {
			total += s.Size()
		}
	}
	var live []remote.SegmentMetadata
	for _, m := range t.finished(key) {
		if m.EndOffset >= start {
			live = append(live, m)
			total += int64(m.SizeInBytes)
		}
	}
	cleanupUntil := now.UnixMilli() - c.Retention.Milliseconds()
	newStart := int64(-1)
	for _, m := range live {
		old := c.Retention >= 0 && cleanupUntil >= 0 && m.MaxTimestamp <= cleanupUntil
		big := c.RetentionBytes >= 0 && total > c.RetentionBytes && total-int64(m.SizeInBytes) >= c.RetentionBytes
		if !old && !big {
			break
		}
		t.mu.Lock()
		p := t.copies[key][m.ID.ID]
		t.mu.Unlock()
		if p == nil || p.State != remote.CopySegmentFinished {
			break // a pass deleted it meanwhile: the next retention sees
		}
		if err := t.update(context.Background(), p, remote.DeleteSegmentStarted, nil); err != nil {
			return newStart, fmt.Errorf("tiered storage: recording the expiry of %s: %w", m.ID, err)
		}
		total -= int64(m.SizeInBytes)
		newStart = m.EndOffset + 1
	}
	return newStart, nil
}

// LocalLogStartOffset returns the base offset of the partition's first
// local segment (Kafka's localLogStartOffset): below it, down to the log
// start offset, a tiered partition's records are in remote storage. Without
// tiered storage it is the log start offset's segment's base.
func (l *Log) LocalLogStartOffset() int64 { return l.local.startOffset() }

// HighestTieredOffset returns the last offset of the partition's latest
// finished copy in remote storage (Kafka's highestOffsetInRemoteStorage,
// what ListOffsets answers for LATEST_TIERED_TIMESTAMP), -1 if there is
// none or the partition is not tiered.
func (l *Log) HighestTieredOffset() int64 {
	t := l.remote.tiering(l.Config())
	if t == nil {
		return -1
	}
	return t.copiedEnd(l.remote.key)
}
