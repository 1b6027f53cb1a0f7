package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/txncodec"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
)

// txnValueVersion is the TransactionLogValue version written: 1, what Kafka
// writes at the finalized transaction.version 2 of this coordinator
// (TransactionVersion.transactionLogValueVersion), with the transaction's
// clientTransactionVersion and the previous and next producer ids as
// tagged fields. Every Kafka 3.x and 4.x broker reads it (see the txncodec
// package doc).
const txnValueVersion = txncodec.DefaultValueVersion

// stateLog returns the __transaction_state partition of a transactional
// id.
func (tc *TxnCoordinator) stateLog(id string) *log.Log {
	return tc.partitions[txncodec.PartitionFor(id, int32(len(tc.partitions)))]
}

// persist writes a transactional id's state (a tombstone for nil) to its
// partition as one batch of one record, as Kafka's coordinator does, and
// waits for the fsync (acks=all). appended reports whether the record is in
// the log, even if waiting for its fsync failed: it will be read back.
func (tc *TxnCoordinator) persist(ctx context.Context, id string, st *txnState) (appended bool, err error) {
	k, err := txncodec.AppendKey(nil, txncodec.Key{TransactionalID: id})
	if err != nil {
		return false, err
	}
	var v []byte
	if st != nil {
		if v, err = txncodec.AppendValueVersion(nil, st.value(), txnValueVersion); err != nil {
			return false, err
		}
	}
	return tc.appendState(ctx, tc.stateLog(id), [][]byte{k}, [][]byte{v})
}

// appendState appends state records (nil value = tombstone) in one batch
// and waits for their fsync; appended as for persist.
func (tc *TxnCoordinator) appendState(ctx context.Context, l *log.Log, keys, values [][]byte) (appended bool, err error) {
	var b record.Builder
	b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	now := tc.nowMs()
	for i := range keys {
		if err := b.Append(now, keys[i], values[i], nil); err != nil {
			return false, err
		}
	}
	batch, err := b.Build()
	if err != nil {
		return false, err
	}
	res, err := l.AppendInternal(access.Internal{}, batch)
	if err != nil {
		return false, err
	}
	return true, l.Sync(ctx, res.LastOffset+1)
}

// value is st in __transaction_state's schema: partitions null in state
// Empty, grouped by topic otherwise.
func (st *txnState) value() txncodec.Value {
	v := txncodec.NewValue(st.producerID, st.epoch, st.timeoutMs, st.updateMs)
	v.PreviousProducerID, v.NextProducerID, v.ClientTransactionVersion = st.prevProducerID, st.nextProducerID, int16(st.version)
	v.TransactionStatus = st.status
	v.TransactionStartTimestampMs = st.startMs
	if st.status != txncodec.StatusEmpty {
		v.TransactionPartitions = []txncodec.TopicPartitions{}
		for _, tp := range st.partitions {
			if n := len(v.TransactionPartitions); n > 0 && v.TransactionPartitions[n-1].Topic == tp.Topic {
				v.TransactionPartitions[n-1].Partitions = append(v.TransactionPartitions[n-1].Partitions, tp.Partition)
				continue
			}
			v.TransactionPartitions = append(v.TransactionPartitions, txncodec.TopicPartitions{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
	}
	return v
}

// stateOf converts a stored value.
func stateOf(v txncodec.Value) txnState {
	st := txnState{producerID: v.ProducerID, prevProducerID: v.PreviousProducerID, nextProducerID: v.NextProducerID,
		epoch: v.ProducerEpoch, version: TxnVersion(v.ClientTransactionVersion), timeoutMs: v.TransactionTimeoutMs,
		status: v.TransactionStatus, startMs: v.TransactionStartTimestampMs, updateMs: v.TransactionLastUpdateTimestampMs}
	if st.status == txncodec.StatusPrepareEpochFence {
		st.status = txncodec.StatusPrepareAbort // Kafka persists a fence as PrepareAbort; read the other the same way
	}
	for _, tps := range v.TransactionPartitions {
		for _, p := range tps.Partitions {
			st.partitions = append(st.partitions, TopicPartition{Topic: tps.Topic, Partition: p})
		}
	}
	slices.SortFunc(st.partitions, compareTP)
	st.partitions = slices.Compact(st.partitions)
	return st
}

// load replays __transaction_state: the latest value per transactional id
// wins, a tombstone removes it. Records that do not decode are skipped
// with a warning (Kafka skips unknown key versions).
func (tc *TxnCoordinator) load() error {
	var rr log.RecordReader
	for _, l := range tc.partitions {
		for off := l.LogStartOffset(); off < l.LogEndOffset(); {
			next, err := rr.ReadRecords(l, off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
				tc.loadRecord(l, r)
				return nil
			})
			if err != nil {
				return fmt.Errorf("coordinator: loading %s-%d: %w", l.Topic(), l.Partition(), err)
			}
			if next <= off {
				break
			}
			off = next
		}
	}
	return nil
}

func (tc *TxnCoordinator) loadRecord(l *log.Log, r *record.Record) {
	k, err := txncodec.ParseKey(r.Key)
	if err != nil {
		tc.logger.Warn("skipping an unreadable __transaction_state key", "partition", l.Partition(), "offset", r.Offset, "err", err)
		return
	}
	if r.Value == nil {
		delete(tc.txns, k.TransactionalID)
		return
	}
	v, err := txncodec.ParseValue(r.Value)
	if err != nil {
		tc.logger.Warn("skipping an unreadable __transaction_state value", "partition", l.Partition(), "offset", r.Offset, "err", err)
		return
	}
	if v.TransactionStatus == txncodec.StatusDead {
		delete(tc.txns, k.TransactionalID)
		return
	}
	tc.txns[k.TransactionalID] = &txnMeta{id: k.TransactionalID, sem: make(chan struct{}, 1), st: stateOf(v), loaded: true}
}

// clearOngoing clears again, after a load, every partition of the
// transactions found Ongoing to take their producer's transactional
// batches (log.Log.VerifyTransaction): a partition keeps that clearance
// in memory only, as Kafka's does, and a partition added before the
// restart that had no batch of the transaction yet would otherwise refuse
// its first one, where Kafka's partition asks the coordinator, which has
// the partition in the transaction it loaded. Partitions of deleted topics
// are skipped; a partition that refuses (a newer epoch) is logged: the
// producer's batch is then refused as it would be.
func (tc *TxnCoordinator) clearOngoing() {
	for _, m := range tc.txns {
		if m.st.status != txncodec.StatusOngoing {
			continue
		}
		for _, tp := range m.st.partitions {
			l, err := tc.dir.Partition(tp.Topic, tp.Partition)
			if err == nil {
				err = l.VerifyTransaction(access.Internal{}, m.st.producerID, m.st.epoch)
			}
			if err != nil && !errors.Is(err, log.ErrUnknownTopicOrPartition) {
				tc.logger.Warn("clearing a partition of an open transaction failed", "transactional.id", m.id, "partition", tp.String(), "err", err)
			}
		}
	}
}

// completePrepared completes the transactions found in PrepareCommit or
// PrepareAbort: a crash came between the prepare and the markers (or
// Complete*). Markers already written are written again, which ends
// nothing in a partition where the transaction is no longer open. A
// failure is logged; the goroutine retries.
func (tc *TxnCoordinator) completePrepared(ctx context.Context) {
	for _, id := range tc.matching(func(st *txnState, _ time.Time) bool {
		return st.status == txncodec.StatusPrepareCommit || st.status == txncodec.StatusPrepareAbort
	}) {
		m, err := tc.acquire(ctx, id, false)
		if err != nil {
			continue // expired or closed meanwhile
		}
		if s := m.st.status; s == txncodec.StatusPrepareCommit || s == txncodec.StatusPrepareAbort {
			if _, err := tc.completeLocked(ctx, m); err != nil && !errors.Is(err, log.ErrClosed) {
				tc.logger.Warn("completing a prepared transaction failed", "transactional.id", id, "err", err)
			}
		}
		tc.release(m)
	}
}

// matching returns the ids of the loaded transactional ids whose state
// matches, sorted.
func (tc *TxnCoordinator) matching(match func(st *txnState, now time.Time) bool) []string {
	now := tc.now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var ids []string
	for id, m := range tc.txns {
		if m.loaded && match(&m.st, now) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// writeMarkers writes a COMMIT or ABORT marker for producer pid at epoch
// to every partition, waits for their fsyncs, and then tells the group
// coordinator about the markers in __consumer_offsets. Partitions of
// deleted topics are skipped, as Kafka skips them.
func (tc *TxnCoordinator) writeMarkers(ctx context.Context, pid int64, epoch int16, tps []TopicPartition, commit bool) error {
	m := record.EndTxnMarker{Type: record.ControlAbort, CoordinatorEpoch: coordinatorEpoch}
	if commit {
		m.Type = record.ControlCommit
	}
	type written struct {
		l   *log.Log
		end int64
	}
	var done []written
	var offsetsParts []int32
	for _, tp := range tps {
		l, err := tc.dir.Partition(tp.Topic, tp.Partition)
		if errors.Is(err, log.ErrUnknownTopicOrPartition) {
			tc.logger.Warn("skipping the transaction marker of a deleted partition", "partition", tp.String(), "producer", pid)
			continue
		}
		if err != nil {
			return err
		}
		res, err := l.AppendTxnMarker(access.Internal{}, pid, epoch, m)
		if errors.Is(err, log.ErrTopicDeleted) {
			continue
		}
		if err != nil {
			return fmt.Errorf("coordinator: writing the %s marker of producer %d epoch %d: %w", m.Type, pid, epoch, err)
		}
		done = append(done, written{l, res.LastOffset + 1})
		if hook := tc.afterMarker.Load(); hook != nil {
			if err := (*hook)(tp); err != nil {
				return err
			}
		}
		if tp.Topic == OffsetsTopic {
			offsetsParts = append(offsetsParts, tp.Partition)
		}
	}
	for _, w := range done {
		if err := w.l.Sync(ctx, w.end); err != nil && !errors.Is(err, log.ErrTopicDeleted) {
			return err
		}
	}
	for _, p := range offsetsParts {
		tc.groups.completeTxn(p, pid, commit)
	}
	return nil
}

// run is the coordinator's goroutine.
func (tc *TxnCoordinator) run() {
	defer close(tc.done)
	abort := time.NewTicker(tc.abortInterval)
	defer abort.Stop()
	remove := time.NewTicker(tc.removeInterval)
	defer remove.Stop()
	for {
		select {
		case <-tc.ctx.Done():
			return
		case <-abort.C:
			tc.abortTimedOut(tc.ctx)
		case <-remove.C:
			tc.expireTransactionalIDs(tc.ctx)
		}
	}
}

// abortTimedOut aborts the transactions open longer than their timeout, as
// Kafka's abortTimedOutTransactions does at transaction.version 2: the
// epoch is bumped (fencing the producer) and bumped again by the abort, a
// [TxnVersion2] end, PrepareAbort persisted with it, ABORT markers written
// with it, then CompleteAbort. It also retries completing transactions whose
// markers could not be written. It returns how many it ended.
func (tc *TxnCoordinator) abortTimedOut(ctx context.Context) int {
	timedOut := func(st *txnState, now time.Time) bool {
		return st.status == txncodec.StatusOngoing && now.UnixMilli() > st.startMs+int64(st.timeoutMs)
	}
	n := 0
	for _, id := range tc.matching(func(st *txnState, now time.Time) bool {
		return timedOut(st, now) || st.status == txncodec.StatusPrepareCommit || st.status == txncodec.StatusPrepareAbort
	}) {
		m, err := tc.acquire(ctx, id, false)
		if err != nil {
			continue
		}
		switch {
		case timedOut(&m.st, tc.now()):
			tc.logger.Info("aborting a timed-out transaction", "transactional.id", id, "producer", m.st.producerID, "epoch", m.st.epoch)
			_, err = tc.endLocked(ctx, m, false, true, TxnVersion2)
		case m.st.status == txncodec.StatusPrepareCommit || m.st.status == txncodec.StatusPrepareAbort:
			_, err = tc.completeLocked(ctx, m)
		default:
			tc.release(m)
			continue
		}
		tc.release(m)
		if err != nil {
			if !errors.Is(err, log.ErrClosed) && !errors.Is(err, context.Canceled) {
				tc.logger.Warn("ending a transaction failed", "transactional.id", id, "err", err)
			}
			continue
		}
		n++
	}
	return n
}

// expireTransactionalIDs removes the transactional ids without a
// transaction in progress (Empty, CompleteCommit, CompleteAbort) whose
// state last changed transactional.id.expiration.ms ago or more: their key
// gets a tombstone, one batch per __transaction_state partition. Ids busy
// with a call are left for the next round. It returns how many went.
func (tc *TxnCoordinator) expireTransactionalIDs(ctx context.Context) int {
	expired := func(st *txnState, now time.Time) bool {
		switch st.status {
		case txncodec.StatusEmpty, txncodec.StatusCompleteCommit, txncodec.StatusCompleteAbort:
			return now.UnixMilli()-st.updateMs >= tc.expiration.Milliseconds()
		}
		return false
	}
	byLog := map[*log.Log][]*txnMeta{}
	for _, id := range tc.matching(expired) {
		tc.mu.Lock()
		m := tc.txns[id]
		tc.mu.Unlock()
		if m == nil {
			continue
		}
		select {
		case m.sem <- struct{}{}:
		default:
			continue // busy: not expired, or next time
		}
		tc.mu.Lock()
		ok := !m.removed && m.loaded && expired(&m.st, tc.now())
		tc.mu.Unlock()
		if !ok {
			<-m.sem
			continue
		}
		l := tc.stateLog(id)
		byLog[l] = append(byLog[l], m)
	}
	n := 0
	for l, ms := range byLog {
		var keys, values [][]byte
		for _, m := range ms {
			k, err := txncodec.AppendKey(nil, txncodec.Key{TransactionalID: m.id})
			if err == nil {
				keys, values = append(keys, k), append(values, nil)
			}
		}
		appended, err := tc.appendState(ctx, l, keys, values)
		if err != nil && !errors.Is(err, log.ErrClosed) && !errors.Is(err, context.Canceled) {
			tc.logger.Warn("writing expired transactional ids' tombstones failed", "partition", l.Partition(), "err", err)
		}
		for _, m := range ms {
			if appended {
				tc.mu.Lock()
				m.removed = true
				delete(tc.txns, m.id)
				tc.mu.Unlock()
				n++
			}
			<-m.sem
		}
	}
	return n
}
