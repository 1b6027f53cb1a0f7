package producer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
)

// txnState is the producer's transaction state, as Kafka's
// TransactionManager names them.
type txnState int8

const (
	txnUninitialized  txnState = iota // transactional, InitTransactions not called yet
	txnReady                          // between transactions
	txnInTransaction                  // BeginTransaction called
	txnAbortableError                 // a send of the transaction failed: only AbortTransaction helps
	txnFatalError                     // fenced or broken: only Close helps
)

func (s txnState) String() string {
	switch s {
	case txnUninitialized:
		return "UNINITIALIZED"
	case txnReady:
		return "READY"
	case txnInTransaction:
		return "IN_TRANSACTION"
	case txnAbortableError:
		return "ABORTABLE_ERROR"
	case txnFatalError:
		return "FATAL_ERROR"
	}
	return fmt.Sprintf("txnState(%d)", int8(s))
}

// idempotence is the producer's identity towards the logs and its
// transaction: Kafka's TransactionManager. The sender reads the producer
// id, epoch and sequences when it seals a batch; the transactional methods
// change them between transactions.
type idempotence struct {
	txnID string
	coord *coordinator.TxnCoordinator // nil unless transactional

	mu         sync.Mutex // protects the fields below; never held across a call into the coordinator
	pe         coordinator.ProducerIDAndEpoch
	seqs       map[*log.Log]int32 // next base sequence per partition
	state      txnState
	partitions map[*log.Log]bool // added to the open transaction
	// started: a partition or a group's offsets were added to the open
	// transaction, so the coordinator knows it. A transaction that never
	// started ends without the coordinator, as Kafka's TransactionManager
	// sends no EndTxn when nothing was added.
	started bool
	txnErr  error // the first failure of the open transaction (abortable)
	fatal   error // sticky: fenced, or the coordinator failed
}

// newIdempotence sets up an idempotent producer: a fresh producer id from
// the directory (Kafka's InitProducerId without a transactional.id), or,
// for a transactional one, nothing until InitTransactions.
func newIdempotence(ctx context.Context, dir *log.Dir, cfg *Config) (*idempotence, error) {
	id := &idempotence{txnID: cfg.TransactionalID, seqs: map[*log.Log]int32{}, partitions: map[*log.Log]bool{}}
	if id.txnID != "" {
		coord, err := coordinator.Transactions(ctx, dir)
		if err != nil {
			return nil, err
		}
		id.coord = coord
		id.state = txnUninitialized
		id.pe = coordinator.ProducerIDAndEpoch{ProducerID: -1, Epoch: -1}
		return id, nil
	}
	pid, err := dir.AllocateProducerID(ctx)
	if err != nil {
		return nil, err
	}
	id.pe = coordinator.ProducerIDAndEpoch{ProducerID: pid, Epoch: 0}
	id.state = txnReady
	return id, nil
}

// checkSend says whether Send may buffer a record now.
func (id *idempotence) checkSend() error {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.fatal != nil {
		return id.fatal
	}
	if id.coord == nil {
		return nil
	}
	switch id.state {
	case txnInTransaction:
		return nil
	case txnAbortableError:
		return fmt.Errorf("%w: the transaction failed and must be aborted: %w", ErrTransactionState, id.txnErr)
	}
	return fmt.Errorf("%w: send in state %s: call BeginTransaction first", ErrTransactionState, id.state)
}

// stamp gives a batch about to be appended its producer id, epoch and
// base sequence. A producer with a fatal error appends nothing more, as
// Kafka's sender aborts the batches of a producer in a fatal state: stamp
// returns that error for the batch instead.
func (id *idempotence) stamp(b *record.Builder, l *log.Log) error {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.fatal != nil {
		return id.fatal
	}
	b.SetProducer(id.pe.ProducerID, id.pe.Epoch, id.seqs[l], id.coord != nil)
	return nil
}

// appended records the outcome of the append of a stamped batch of n
// records to l and returns the error the batch's records fail with. On
// success (or a duplicate of an earlier success) the partition's sequence
// moves past the batch. A
// stale epoch means the producer was fenced: the records fail with
// [ErrProducerFenced] wrapping the log's error, as Kafka's producer turns
// INVALID_PRODUCER_EPOCH into ProducerFencedException, and the producer
// keeps that error (or an earlier fatal one).
func (id *idempotence) appended(l *log.Log, n int, err error) error {
	id.mu.Lock()
	defer id.mu.Unlock()
	switch {
	case err == nil:
		last := incrementSequence(id.seqs[l], int32(n)-1)
		id.seqs[l] = incrementSequence(last, 1)
	case errors.Is(err, log.ErrInvalidProducerEpoch):
		err = fmt.Errorf("%w: %w", ErrProducerFenced, err)
		id.setFatalLocked(err)
	case errors.Is(err, log.ErrOutOfOrderSequence), errors.Is(err, log.ErrInvalidTxnState):
		// The producer and the log disagree about what was written: a
		// transactional producer cannot go on (Kafka treats it as fatal
		// before transactions v2); an idempotent one would need a new
		// producer id, which kafkalite does not take silently either.
		err = fmt.Errorf("%w: %w", ErrProducerBroken, err)
		id.setFatalLocked(err)
	}
	return err
}

// setFatalLocked makes err the producer's sticky error, unless it already
// has one: the first fatal error is the one every later call reports.
// The caller must hold id.mu.
func (id *idempotence) setFatalLocked(err error) {
	if id.fatal == nil {
		id.fatal = err
	}
	id.state = txnFatalError
}

// batchFailed fails the open transaction when one of its batches failed.
func (id *idempotence) batchFailed(err error) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.coord != nil && id.state == txnInTransaction {
		id.txnErr, id.state = err, txnAbortableError
	}
}

// incrementSequence adds delta to a sequence, wrapping past math.MaxInt32
// to 0 as the log does.
func incrementSequence(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// addPartitions registers the partitions of a round's batches that the
// open transaction does not have yet with the coordinator, before any of
// them is appended. It returns the error for the batches of those
// partitions.
func (id *idempotence) addPartitions(ctx context.Context, batches []*producerBatch) error {
	if id.coord == nil {
		return nil
	}
	id.mu.Lock()
	var add []coordinator.TopicPartition
	var logs []*log.Log
	for _, b := range batches {
		if b.err == nil && !id.partitions[b.log] && !containsLog(logs, b.log) {
			add = append(add, coordinator.TopicPartition{Topic: b.topic, Partition: b.partition})
			logs = append(logs, b.log)
		}
	}
	pe, fatal := id.pe, id.fatal
	id.mu.Unlock()
	if fatal != nil {
		return fatal
	}
	if len(add) == 0 {
		return nil
	}
	err := id.coord.AddPartitionsV2(ctx, id.txnID, pe, add)
	id.mu.Lock()
	defer id.mu.Unlock()
	if err != nil {
		return id.failLocked(err)
	}
	for _, l := range logs {
		id.partitions[l] = true
	}
	id.started = true
	return nil
}

// failLocked records a coordinator error and returns the error to report:
// fencing is fatal ([ErrProducerFenced]); anything else fails the open
// transaction and is returned as it is, so that it matches the package's
// re-exports of the coordinator's errors ([ErrInvalidTxnState],
// [ErrConcurrentTransactions], ...). The caller must hold id.mu.
func (id *idempotence) failLocked(err error) error {
	if errors.Is(err, coordinator.ErrProducerFenced) {
		id.setFatalLocked(fmt.Errorf("%w: %w", ErrProducerFenced, err))
		return id.fatal
	}
	if id.state == txnInTransaction {
		id.txnErr, id.state = err, txnAbortableError
	}
	return err
}

// requireTransactional fails for a producer without a transactional.id.
func (p *Producer) requireTransactional() error {
	if p.idem == nil || p.idem.coord == nil {
		return fmt.Errorf("%w: the producer has no transactional.id", ErrTransactionState)
	}
	return nil
}

// InitTransactions registers the producer's transactional.id with the
// transaction coordinator (Kafka's initTransactions): it completes or
// aborts any transaction an earlier producer with the same id left open,
// and bumps the id's epoch, which fences that earlier producer — its later
// sends, commits and aborts fail with [ErrProducerFenced]. Call it once,
// before the first BeginTransaction.
func (p *Producer) InitTransactions(ctx context.Context) error {
	if err := p.requireTransactional(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	id := p.idem
	id.mu.Lock()
	if id.fatal != nil || id.state != txnUninitialized {
		defer id.mu.Unlock()
		if id.fatal != nil {
			return id.fatal
		}
		return fmt.Errorf("%w: InitTransactions in state %s", ErrTransactionState, id.state)
	}
	id.mu.Unlock()
	pe, err := id.coord.InitProducerID(ctx, id.txnID, p.cfg.TransactionTimeout)
	id.mu.Lock()
	defer id.mu.Unlock()
	if err != nil {
		return id.failLocked(err)
	}
	id.pe, id.state = pe, txnReady
	clear(id.seqs)
	return nil
}

// BeginTransaction starts a transaction: the records sent until
// CommitTransaction or AbortTransaction belong to it.
func (p *Producer) BeginTransaction() error {
	if err := p.requireTransactional(); err != nil {
		return err
	}
	id := p.idem
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.fatal != nil {
		return id.fatal
	}
	if id.state != txnReady {
		return fmt.Errorf("%w: BeginTransaction in state %s", ErrTransactionState, id.state)
	}
	id.state, id.txnErr, id.started = txnInTransaction, nil, false
	clear(id.partitions)
	return nil
}

// SendOffsetsToTransaction commits a consumer group's offsets as part of
// the open transaction (Kafka's sendOffsetsToTransaction): they become
// visible to the group only if the transaction commits. group is what the
// consumer's GroupMetadata method returns (consumer.TopicPartition,
// consumer.OffsetAndMetadata and consumer.GroupMetadata are these types);
// a member that a rebalance fenced cannot commit (zombie fencing).
// Offsets of a partition that does not exist are refused whole with
// log.ErrUnknownTopicOrPartition, the transaction left open.
func (p *Producer) SendOffsetsToTransaction(ctx context.Context, offsets map[log.TopicPartition]log.OffsetAndMetadata, group log.GroupMetadata) error {
	if err := p.requireTransactional(); err != nil {
		return err
	}
	if group.GroupID == "" {
		return fmt.Errorf("%w: SendOffsetsToTransaction needs a group id", ErrTransactionState)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	id := p.idem
	id.mu.Lock()
	if id.fatal != nil || id.state != txnInTransaction {
		defer id.mu.Unlock()
		if id.fatal != nil {
			return id.fatal
		}
		return fmt.Errorf("%w: SendOffsetsToTransaction in state %s", ErrTransactionState, id.state)
	}
	pe := id.pe
	id.mu.Unlock()
	if err := p.checkPartitionsExist(offsets); err != nil {
		return err
	}
	groups, err := coordinator.Groups(ctx, p.dir)
	if err == nil {
		err = id.coord.AddOffsetsV2(ctx, id.txnID, pe, group.GroupID)
	}
	if err == nil {
		id.mu.Lock()
		id.started = true
		id.mu.Unlock()
		conv := make(map[coordinator.TopicPartition]coordinator.OffsetAndMetadata, len(offsets))
		for tp, om := range offsets {
			conv[tp] = coordinator.OffsetAndMetadata{Offset: om.Offset, LeaderEpoch: om.LeaderEpoch, Metadata: om.Metadata}
		}
		err = groups.TxnCommitOffsets(ctx, id.txnID, pe, group, conv)
	}
	if err != nil {
		id.mu.Lock()
		defer id.mu.Unlock()
		return id.failLocked(err)
	}
	return nil
}

// checkPartitionsExist refuses offsets of a partition that does not exist,
// as Kafka's broker refuses them (UNKNOWN_TOPIC_OR_PARTITION, which Kafka's
// producer retries until max.block.ms): nothing is committed and the
// transaction stays open.
func (p *Producer) checkPartitionsExist(offsets map[log.TopicPartition]log.OffsetAndMetadata) error {
	var unknown []log.TopicPartition
	for tp := range offsets {
		td, err := p.dir.DescribeTopic(tp.Topic)
		if errors.Is(err, log.ErrUnknownTopicOrPartition) || (err == nil && (tp.Partition < 0 || tp.Partition >= td.Partitions)) {
			unknown = append(unknown, tp)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.SortFunc(unknown, func(a, b log.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return fmt.Errorf("%w: SendOffsetsToTransaction: %v", log.ErrUnknownTopicOrPartition, unknown)
}

// CommitTransaction sends every buffered record, then commits the
// transaction: COMMIT markers go to every partition it wrote to (and to the
// group offsets it carries), and read_committed consumers see its records.
// If a send of the transaction failed, nothing is committed: the error is
// returned and the transaction must be aborted. A transaction that sent
// nothing and no offsets commits at once, without the coordinator, as in
// Kafka.
func (p *Producer) CommitTransaction(ctx context.Context) error {
	return p.endTransaction(ctx, true)
}

// AbortTransaction sends every buffered record, then aborts the
// transaction: ABORT markers go to every partition it wrote to, and
// read_committed consumers never see its records. Records already
// acknowledged stay in the log, hidden. An empty transaction aborts at
// once, as it commits.
func (p *Producer) AbortTransaction(ctx context.Context) error {
	return p.endTransaction(ctx, false)
}

func (p *Producer) endTransaction(ctx context.Context, commit bool) error {
	if err := p.requireTransactional(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	id := p.idem
	check := func() error {
		id.mu.Lock()
		defer id.mu.Unlock()
		switch {
		case id.fatal != nil:
			return id.fatal
		case id.state == txnInTransaction, id.state == txnAbortableError && !commit:
			return nil
		case id.state == txnAbortableError:
			return fmt.Errorf("%w: the transaction failed and must be aborted: %w", ErrTransactionState, id.txnErr)
		}
		return fmt.Errorf("%w: end of transaction in state %s", ErrTransactionState, id.state)
	}
	if err := check(); err != nil {
		return err
	}
	if err := p.Flush(ctx); err != nil {
		return err
	}
	if err := check(); err != nil { // a send of the transaction failed meanwhile
		return err
	}
	id.mu.Lock()
	pe, started := id.pe, id.started
	id.mu.Unlock()
	var err error
	next := pe
	if started {
		// Transactions version 2: the end bumps the epoch (or gives a
		// new producer id), which the next transaction's batches carry,
		// their sequences from 0.
		next, err = id.coord.EndTxnV2(ctx, id.txnID, pe, commit)
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if err != nil {
		return id.failLocked(err)
	}
	if next != pe {
		id.pe = next
		clear(id.seqs)
	}
	id.state, id.txnErr, id.started = txnReady, nil, false
	clear(id.partitions)
	return nil
}
