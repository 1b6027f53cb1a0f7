package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/logging"
	"github.com/kafkalite/kafkalite/internal/txncodec"
	"github.com/kafkalite/kafkalite/log"
)

// TransactionStateTopic is Kafka's internal topic of transaction state
// (its records are described in the txncodec package doc).
const TransactionStateTopic = "__transaction_state"

// txnServiceName is the transaction coordinator's name among the Dir's
// services.
const txnServiceName = "transaction-coordinator"

// coordinatorEpoch is the coordinator epoch written in every COMMIT and
// ABORT marker. Kafka uses the leader epoch of the transactional id's
// __transaction_state partition, which fences the markers of a former
// coordinator after a leader change. kafkalite has one coordinator per
// directory and its partitions never change leader, so the epoch is the
// constant 0 (a single-node Kafka's leader epoch), and a partition's
// coordinator epoch never goes back.
const coordinatorEpoch int32 = 0

// Errors of the transaction coordinator, as Kafka's error codes. Log errors
// (a closed or failed partition) are returned wrapped.
var (
	// ErrProducerFenced (Kafka's PRODUCER_FENCED, and
	// INVALID_PRODUCER_ID_MAPPING for another producer id): the producer's
	// id or epoch is not the transactional id's current one — another
	// producer with the same transactional.id called InitProducerID, or the
	// coordinator aborted a timed-out transaction. The producer must close.
	ErrProducerFenced = errors.New("coordinator: producer fenced")
	// ErrInvalidTxnState (INVALID_TXN_STATE): the request does not fit the
	// transaction's state: committing an aborted transaction, a
	// TxnCommitOffsets for a group whose offsets were not added with AddOffsets.
	ErrInvalidTxnState = errors.New("coordinator: invalid transaction state")
	// ErrInvalidTransactionTimeout (INVALID_TRANSACTION_TIMEOUT):
	// transaction.timeout.ms is not positive or above
	// transaction.max.timeout.ms.
	ErrInvalidTransactionTimeout = errors.New("coordinator: invalid transaction timeout")
	// ErrConcurrentTransactions (CONCURRENT_TRANSACTIONS): the transaction
	// is being completed (PrepareCommit or PrepareAbort); in process that
	// state outlives a call only when writing its markers failed.
	ErrConcurrentTransactions = errors.New("coordinator: concurrent transactions")
	// ErrTransactionalIDNotFound (TRANSACTIONAL_ID_NOT_FOUND): no producer
	// called InitProducerID with this transactional id, or it expired.
	ErrTransactionalIDNotFound = errors.New("coordinator: transactional id not found")
	// ErrUnknownTopicOrPartition (UNKNOWN_TOPIC_OR_PARTITION): a partition
	// added to a transaction does not exist. It wraps the log's error,
	// which matches log.ErrUnknownTopicOrPartition.
	ErrUnknownTopicOrPartition = errors.New("coordinator: unknown topic or partition")
)

// ProducerIDAndEpoch is a producer's identity: the producer id and the
// epoch that fences its older incarnations.
type ProducerIDAndEpoch struct {
	ProducerID int64
	Epoch      int16
}

// TxnVersion is the transaction protocol a request uses, as Kafka's
// coordinator tells them apart (clientTransactionVersion, stored with the
// transaction in __transaction_state).
type TxnVersion int16

// Transaction protocol versions. A Kafka broker tags EndTxn below v5,
// AddPartitionsToTxn below v4 (a client's) and AddOffsetsToTxn with
// [TxnVersion0], EndTxn v5 and the adds a broker makes for Produce v12+ and
// TxnOffsetCommit v5+ with [TxnVersion2] (TransactionVersion's
// transactionVersionForEndTxn and transactionVersionForAddPartitionsToTxn).
const (
	// TxnVersion0 is the protocol before KIP-890 part 2: the epoch is
	// bumped by InitProducerID and by fencing only, EndTxn returns no
	// producer id, partitions are added explicitly.
	TxnVersion0 TxnVersion = 0
	// TxnVersion2 is KIP-890 part 2's: every EndTxn bumps the epoch (a new
	// producer id with epoch 0 once the epoch is exhausted), the markers
	// carry the bumped epoch, and the producer continues with what EndTxn
	// returns.
	TxnVersion2 TxnVersion = 2
)

// TxnState is a transaction's state, as Kafka names them
// (TransactionState).
type TxnState string

// Transaction states. Dead is never reported: an expired transactional id
// is gone.
const (
	TxnEmpty          TxnState = "Empty"
	TxnOngoing        TxnState = "Ongoing"
	TxnPrepareCommit  TxnState = "PrepareCommit"
	TxnPrepareAbort   TxnState = "PrepareAbort"
	TxnCompleteCommit TxnState = "CompleteCommit"
	TxnCompleteAbort  TxnState = "CompleteAbort"
	TxnDead           TxnState = "Dead"
)

// txnStates maps txncodec status codes to states.
var txnStates = map[int8]TxnState{
	txncodec.StatusEmpty: TxnEmpty, txncodec.StatusOngoing: TxnOngoing,
	txncodec.StatusPrepareCommit: TxnPrepareCommit, txncodec.StatusPrepareAbort: TxnPrepareAbort,
	txncodec.StatusCompleteCommit: TxnCompleteCommit, txncodec.StatusCompleteAbort: TxnCompleteAbort,
	txncodec.StatusDead: TxnDead, txncodec.StatusPrepareEpochFence: TxnPrepareAbort,
}

// TxnDescription describes a transactional id (Kafka's
// DescribeTransactions).
type TxnDescription struct {
	TransactionalID string
	State           TxnState
	ProducerID      int64
	ProducerEpoch   int16
	// Timeout is the producer's transaction.timeout.ms.
	Timeout time.Duration
	// Partitions are the partitions of the open (or preparing)
	// transaction, sorted; none in Empty and Complete* states.
	Partitions []TopicPartition
	// StartTime is when the current or last transaction started; zero if
	// none started since InitProducerID.
	StartTime time.Time
	// LastUpdate is when the state last changed.
	LastUpdate time.Time
}

// TxnCoordinator is the transaction coordinator of one log.Dir: Kafka's
// TransactionCoordinator at the finalized transaction.version 2 (KIP-890):
// each transaction follows the protocol of its requests, [TxnVersion0]
// (EndTxn, AddPartitions, AddOffsets: the epoch is bumped by
// InitProducerID and by fencing only) or [TxnVersion2] (EndTxnV2,
// AddPartitionsV2, AddOffsetsV2: every transaction's end bumps the epoch).
// It keeps each transactional id's producer id, epoch
// and transaction in __transaction_state in Kafka's schemas and writes the
// COMMIT and ABORT markers to the partitions of a transaction.
//
// It is safe for concurrent use; calls for one transactional id are
// serialized. It owns one goroutine, started by [Transactions] and stopped
// by Close (the Dir's Close), that aborts transactions open longer than
// their timeout (every transaction.abort.timed.out.transaction.cleanup.interval.ms)
// and removes transactional ids unused for transactional.id.expiration.ms
// (every transaction.remove.expired.transaction.cleanup.interval.ms).
type TxnCoordinator struct {
	dir            *log.Dir
	groups         *GroupCoordinator
	logger         *slog.Logger
	now            func() time.Time
	maxTimeout     time.Duration
	expiration     time.Duration
	abortInterval  time.Duration
	removeInterval time.Duration
	partitions     []*log.Log // of __transaction_state

	// ctx is cancelled by Close: it ends the goroutine and the waits of
	// calls in flight.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// afterPrepare, when set, runs after a Prepare* state is persisted and
	// before the markers; an error stops the transaction's end there (a
	// test hook simulating a crash).
	afterPrepare atomic.Pointer[func() error]
	// afterMarker, when set, runs after each marker writeMarkers appends,
	// with the marker's partition; an error stops the markers there,
	// before the fsyncs (a test hook simulating a crash between markers).
	afterMarker atomic.Pointer[func(TopicPartition) error]

	mu     sync.Mutex // protects the following fields and every txnMeta.st
	txns   map[string]*txnMeta
	closed bool
}

// txnMeta is one transactional id. Its lock (sem, a one-slot semaphore so
// that a wait can end with a context) serializes the calls for the id,
// which persist state and write markers while holding it; st and the flags
// are written only by the holder, under TxnCoordinator.mu.
type txnMeta struct {
	id  string
	sem chan struct{}

	st txnState
	// loaded is false for the placeholder of a first InitProducerID until
	// its state is persisted.
	loaded bool
	// removed is set when the id expired (or its placeholder was dropped):
	// a caller that waited for sem looks the id up again.
	removed bool
}

// txnState is what __transaction_state stores for a transactional id.
type txnState struct {
	producerID int64
	// prevProducerID is the producer id before the last transition
	// (Kafka's previousProducerId); nextProducerID the one an ending
	// version 2 transaction whose epoch is exhausted continues with, or
	// -1 (nextProducerId).
	prevProducerID, nextProducerID int64
	epoch                          int16
	// version is the protocol of the transaction's latest add or end
	// (clientTransactionVersion).
	version    TxnVersion
	timeoutMs  int32
	status     int8
	partitions []TopicPartition // sorted, unique
	startMs    int64            // -1 when no transaction started
	updateMs   int64
}

func (s txnState) clone() txnState {
	s.partitions = slices.Clone(s.partitions)
	return s
}

// Transactions returns the Dir's transaction coordinator, creating it on
// first use: it creates __transaction_state (transaction.state.log.num.partitions
// partitions, compacted, uncompressed), loads the latest state of every
// transactional id, completes the transactions a crash left in
// PrepareCommit or PrepareAbort (their markers are written again), clears
// the partitions of transactions still Ongoing again to take their
// producer's batches (a partition's clearance does not outlive the Dir),
// and starts the coordinator's goroutine. It also attaches the group
// coordinator ([Groups]), which receives the markers written to
// __consumer_offsets. Do not call it while holding a lock another service's
// creation takes.
func Transactions(ctx context.Context, d *log.Dir) (*TxnCoordinator, error) {
	groups, err := Groups(ctx, d)
	if err != nil {
		return nil, err
	}
	svc, err := d.Service(txnServiceName, func(d *log.Dir) (log.Service, error) { return openTxn(ctx, d, groups) })
	if err != nil {
		return nil, err
	}
	return svc.(*TxnCoordinator), nil
}

func openTxn(ctx context.Context, d *log.Dir, groups *GroupCoordinator) (*TxnCoordinator, error) {
	cfg := d.Config()
	n := cfg.TransactionStateNumPartitions
	if n <= 0 {
		n = txncodec.DefaultTransactionStateTopicPartitions
	}
	parts, err := d.InternalTopic(access.Internal{}, ctx, TransactionStateTopic, int32(n), nil) // compacted, as Kafka configures it
	if err != nil {
		return nil, err
	}
	tc := &TxnCoordinator{dir: d, groups: groups, logger: cfg.Logger, now: cfg.Now, maxTimeout: cfg.TransactionMaxTimeout,
		expiration: cfg.TransactionalIDExpiration, abortInterval: cfg.TransactionAbortTimedOutInterval,
		removeInterval: cfg.TransactionRemoveExpiredInterval, partitions: parts, txns: map[string]*txnMeta{},
		done: make(chan struct{})}
	tc.logger = logging.OrDefault(tc.logger)
	if tc.now == nil {
		tc.now = time.Now
	}
	if tc.abortInterval <= 0 {
		tc.abortInterval = 10 * time.Second
	}
	if tc.removeInterval <= 0 {
		tc.removeInterval = time.Hour
	}
	if err := tc.load(); err != nil {
		return nil, err
	}
	tc.clearOngoing()
	tc.ctx, tc.cancel = context.WithCancel(context.Background())
	tc.completePrepared(ctx)
	go tc.run()
	return tc, nil
}

// Close stops the coordinator's goroutine and waits for it; calls in
// flight end with ErrClosed or the log's error. Transactions stay as they
// are: the next open completes prepared ones and times out open ones. The
// Dir closes it.
func (tc *TxnCoordinator) Close() error {
	tc.mu.Lock()
	if tc.closed {
		tc.mu.Unlock()
		return nil
	}
	tc.closed = true
	tc.mu.Unlock()
	tc.cancel()
	<-tc.done
	return nil
}

// InitProducerID is Kafka's InitProducerId. For an empty transactionalID
// (an idempotent producer) it returns a fresh producer id with epoch 0 and
// persists nothing. Otherwise it loads or creates the transactional id's
// state; an Ongoing transaction of a former producer is aborted (its
// epoch bumped first, which fences that producer, then bumped again by the
// abort, a [TxnVersion2] end as Kafka's coordinator makes it), and one left in
// PrepareCommit or PrepareAbort is completed; then the epoch is bumped
// (a new producer id with epoch 0 once the epoch would pass 32766) and the
// state Empty with timeout is persisted durably before the call returns.
//
// timeout is the producer's transaction.timeout.ms; a timeout that is not
// positive or above transaction.max.timeout.ms fails with
// [ErrInvalidTransactionTimeout].
func (tc *TxnCoordinator) InitProducerID(ctx context.Context, transactionalID string, timeout time.Duration) (ProducerIDAndEpoch, error) {
	if transactionalID == "" {
		pid, err := tc.dir.AllocateProducerID(ctx)
		if err != nil {
			return ProducerIDAndEpoch{}, err
		}
		return ProducerIDAndEpoch{ProducerID: pid, Epoch: 0}, nil
	}
	if timeout <= 0 || timeout > tc.maxTimeout || timeout.Milliseconds() > math.MaxInt32 {
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: %v (transaction.max.timeout.ms is %v)", ErrInvalidTransactionTimeout, timeout, tc.maxTimeout)
	}
	m, err := tc.acquire(ctx, transactionalID, true)
	if err != nil {
		return ProducerIDAndEpoch{}, err
	}
	defer tc.release(m)
	var st txnState
	if !m.loaded {
		pid, err := tc.dir.AllocateProducerID(ctx)
		if err != nil {
			return ProducerIDAndEpoch{}, err
		}
		st = txnState{producerID: pid, prevProducerID: pid, nextProducerID: -1, epoch: -1}
	} else {
		switch m.st.status {
		case txncodec.StatusOngoing:
			if _, err := tc.endLocked(ctx, m, false, true, TxnVersion2); err != nil {
				return ProducerIDAndEpoch{}, err
			}
		case txncodec.StatusPrepareCommit, txncodec.StatusPrepareAbort:
			if _, err := tc.completeLocked(ctx, m); err != nil {
				return ProducerIDAndEpoch{}, err
			}
		}
		st = m.st.clone()
	}
	if st.epoch >= math.MaxInt16-1 {
		pid, err := tc.dir.AllocateProducerID(ctx)
		if err != nil {
			return ProducerIDAndEpoch{}, err
		}
		st.producerID, st.epoch = pid, 0
	} else {
		st.epoch++
	}
	st.timeoutMs, st.status, st.partitions, st.startMs, st.updateMs = int32(timeout.Milliseconds()), txncodec.StatusEmpty, nil, -1, tc.nowMs()
	if err := tc.transition(ctx, m, st); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	return ProducerIDAndEpoch{ProducerID: st.producerID, Epoch: st.epoch}, nil
}

// AddPartitions is Kafka's AddPartitionsToTxn: it adds partitions to the
// producer's transaction, starting one if none is open, persists the new
// state durably, and then clears each partition's log to take the
// producer's transactional batches ([log.Log.VerifyTransaction]): a
// producer must add a partition before its first transactional batch
// there. A producer id or epoch other than the current one fails with
// [ErrProducerFenced]; a transaction being completed with
// [ErrConcurrentTransactions]; a partition that does not exist with
// [ErrUnknownTopicOrPartition], one of an internal topic (which no
// producer may write: the coordinators add their own with AddOffsets)
// with log.ErrInternalTopic, before anything changes. The transaction
// follows [TxnVersion0] (a client's AddPartitionsToTxn below v4).
func (tc *TxnCoordinator) AddPartitions(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, tps []TopicPartition) error {
	return tc.addClientPartitions(ctx, transactionalID, pe, tps, TxnVersion0)
}

// AddPartitionsV2 is AddPartitions for a [TxnVersion2] producer, which
// never sends AddPartitionsToTxn: the broker adds a partition to the
// transaction when the producer's first transactional batch for it
// arrives (Produce v12+), as Kafka's broker does with an
// AddPartitionsToTxn v4+ on the producer's behalf. Its errors are
// AddPartitions'.
func (tc *TxnCoordinator) AddPartitionsV2(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, tps []TopicPartition) error {
	return tc.addClientPartitions(ctx, transactionalID, pe, tps, TxnVersion2)
}

func (tc *TxnCoordinator) addClientPartitions(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, tps []TopicPartition, v TxnVersion) error {
	for _, tp := range tps {
		if log.IsInternalTopic(tp.Topic) {
			return fmt.Errorf("coordinator: %s cannot join a transaction: %w", tp, log.ErrInternalTopic)
		}
	}
	return tc.addPartitions(ctx, transactionalID, pe, tps, v)
}

func (tc *TxnCoordinator) addPartitions(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, tps []TopicPartition, v TxnVersion) error {
	logs := make([]*log.Log, len(tps))
	for i, tp := range tps {
		l, err := tc.dir.Partition(tp.Topic, tp.Partition)
		if err != nil {
			if errors.Is(err, log.ErrUnknownTopicOrPartition) {
				return fmt.Errorf("%w: %w", ErrUnknownTopicOrPartition, err)
			}
			return err
		}
		logs[i] = l
	}
	m, err := tc.acquireProducer(ctx, transactionalID, pe)
	if err != nil {
		return err
	}
	defer tc.release(m)
	st := m.st.clone()
	switch st.status {
	case txncodec.StatusPrepareCommit, txncodec.StatusPrepareAbort:
		return fmt.Errorf("%w: transactional id %s is in state %s", ErrConcurrentTransactions, m.id, txnStates[st.status])
	case txncodec.StatusOngoing:
	default: // Empty, CompleteCommit, CompleteAbort: a new transaction
		st.partitions, st.startMs = nil, tc.nowMs()
	}
	added := false
	for _, tp := range tps {
		if i, ok := slices.BinarySearchFunc(st.partitions, tp, compareTP); !ok {
			st.partitions = slices.Insert(st.partitions, i, tp)
			added = true
		}
	}
	// Kafka answers an add of partitions all in the open transaction at
	// once, keeping its version; any other add persists the request's.
	if added || st.status != txncodec.StatusOngoing {
		st.status, st.updateMs, st.version = txncodec.StatusOngoing, tc.nowMs(), v
		if err := tc.transition(ctx, m, st); err != nil {
			return err
		}
	}
	// Every requested partition is cleared, not only the new ones: a
	// retried request after a failed verification, or a restart, which
	// forgets verifications, must work too. Clearing a partition of the
	// transaction again is harmless.
	for i, l := range logs {
		if err := l.VerifyTransaction(access.Internal{}, pe.ProducerID, pe.Epoch); err != nil {
			return fmt.Errorf("coordinator: adding %s to transaction %s: %w", tps[i], m.id, err)
		}
	}
	return nil
}

// AddOffsets is Kafka's AddOffsetsToTxn: it adds groupID's partition of
// __consumer_offsets to the producer's transaction, as AddPartitions does,
// so that [GroupCoordinator.TxnCommitOffsets] may commit the group's offsets inside
// it. The transaction follows [TxnVersion0], as Kafka tags every
// AddOffsetsToTxn.
func (tc *TxnCoordinator) AddOffsets(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, groupID string) error {
	return tc.addPartitions(ctx, transactionalID, pe, []TopicPartition{tc.groups.offsetsPartitionOf(groupID)}, TxnVersion0)
}

// AddOffsetsV2 is AddOffsets for a [TxnVersion2] producer, which sends no
// AddOffsetsToTxn: the broker adds the group's partition when a
// TxnOffsetCommit v5+ arrives, before committing its offsets.
func (tc *TxnCoordinator) AddOffsetsV2(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, groupID string) error {
	return tc.addPartitions(ctx, transactionalID, pe, []TopicPartition{tc.groups.offsetsPartitionOf(groupID)}, TxnVersion2)
}

// EndTxn is Kafka's EndTxn below v5 ([TxnVersion0]), synchronous: it
// persists PrepareCommit or PrepareAbort durably, writes a COMMIT or ABORT
// marker to every partition of the transaction and waits for their fsyncs
// (partitions of deleted topics are skipped), applies or discards the
// offsets committed in the transaction, persists CompleteCommit or
// CompleteAbort durably, and returns. The producer keeps its id and epoch.
//
// Ending a transaction that has no partitions (state Empty) succeeds and
// does nothing: Kafka's client completes such a transaction without asking
// the coordinator. Repeating the last result (an abort after an abort, a
// commit after a commit) succeeds, as Kafka answers a retried EndTxn; the
// other one fails with [ErrInvalidTxnState]. A transaction whose markers
// could not all be written stays prepared: repeating the same EndTxn (or
// the next InitProducerID, or the coordinator's goroutine) completes it.
// A producer whose epoch a [TxnVersion2] end bumped is fenced with its old
// epoch ([ErrProducerFenced]), as Kafka's strict check for these versions
// fences it.
func (tc *TxnCoordinator) EndTxn(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, commit bool) error {
	m, err := tc.acquireProducer(ctx, transactionalID, pe)
	if err != nil {
		return err
	}
	defer tc.release(m)
	status := m.st.status
	switch status {
	case txncodec.StatusOngoing:
		_, err := tc.endLocked(ctx, m, commit, false, TxnVersion0)
		return err
	case txncodec.StatusEmpty:
		return nil
	case txncodec.StatusCompleteCommit, txncodec.StatusCompleteAbort:
		if commit == (status == txncodec.StatusCompleteCommit) {
			return nil
		}
	case txncodec.StatusPrepareCommit, txncodec.StatusPrepareAbort:
		if commit == (status == txncodec.StatusPrepareCommit) {
			_, err := tc.completeLocked(ctx, m)
			return err
		}
	}
	return wrongEnd(m.id, commit, status)
}

// EndTxnV2 is Kafka's EndTxn v5 ([TxnVersion2]), synchronous as EndTxn:
// PrepareCommit or PrepareAbort is persisted with the epoch bumped, the
// markers carry the bumped epoch, and the call returns the producer id and
// epoch the producer continues with: the bumped epoch, or, when the epoch
// was exhausted (32766 before the bump), a new producer id with epoch 0,
// the markers then written with epoch 32767 of the old one.
//
// As Kafka's coordinator answers it: a retry of an EndTxn that completed
// (the producer's epoch one below the current, or the last one of the
// former producer id after a new one was given) succeeds with the current
// id and epoch, or fails with [ErrInvalidTxnState] if it asked the other
// result; an abort with the current epoch after a completed transaction
// or in state Empty ends an empty transaction, bumping the epoch; a commit
// there fails with [ErrInvalidTxnState]. Any other epoch is fenced
// ([ErrProducerFenced]). A transaction left prepared by a failure is
// completed by the retry, as in EndTxn.
func (tc *TxnCoordinator) EndTxnV2(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, commit bool) (ProducerIDAndEpoch, error) {
	m, err := tc.acquire(ctx, transactionalID, false)
	if err != nil {
		return ProducerIDAndEpoch{}, err
	}
	defer tc.release(m)
	st := m.st
	current := ProducerIDAndEpoch{ProducerID: st.producerID, Epoch: st.epoch}
	retryOnOverflow := st.prevProducerID == pe.ProducerID && pe.Epoch == math.MaxInt16-1 && st.epoch == 0
	retryOnBump := pe.ProducerID == st.producerID && int(st.epoch) == int(pe.Epoch)+1
	retry := retryOnBump || retryOnOverflow
	if pe.ProducerID != st.producerID && !retryOnOverflow {
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: producer id %d is not transactional id %s's (%d)", ErrProducerFenced, pe.ProducerID, m.id, st.producerID)
	}
	valid := pe.Epoch == st.epoch
	switch st.status {
	case txncodec.StatusPrepareCommit, txncodec.StatusPrepareAbort:
		valid = retryOnBump
	case txncodec.StatusCompleteCommit, txncodec.StatusCompleteAbort:
		valid = valid || retry
	}
	if !valid {
		return ProducerIDAndEpoch{}, fmt.Errorf("%w: producer %d epoch %d, transactional id %s is at producer %d epoch %d in state %s",
			ErrProducerFenced, pe.ProducerID, pe.Epoch, m.id, st.producerID, st.epoch, txnStates[st.status])
	}
	switch st.status {
	case txncodec.StatusOngoing:
		return tc.endLocked(ctx, m, commit, false, TxnVersion2)
	case txncodec.StatusCompleteCommit, txncodec.StatusCompleteAbort:
		completed := commit == (st.status == txncodec.StatusCompleteCommit)
		switch {
		case retry && completed:
			return current, nil
		case !retry && !commit:
			return tc.endLocked(ctx, m, false, false, TxnVersion2)
		}
	case txncodec.StatusEmpty:
		if !commit {
			return tc.endLocked(ctx, m, false, false, TxnVersion2)
		}
	case txncodec.StatusPrepareCommit, txncodec.StatusPrepareAbort:
		if commit == (st.status == txncodec.StatusPrepareCommit) {
			return tc.completeLocked(ctx, m)
		}
	}
	return ProducerIDAndEpoch{}, wrongEnd(m.id, commit, st.status)
}

// wrongEnd is the error of an EndTxn whose result does not fit the state.
func wrongEnd(id string, commit bool, status int8) error {
	what := "abort"
	if commit {
		what = "commit"
	}
	return fmt.Errorf("%w: %s of transactional id %s in state %s", ErrInvalidTxnState, what, id, txnStates[status])
}

// DescribeTransaction is Kafka's DescribeTransactions for one
// transactional id; an unknown one fails with
// [ErrTransactionalIDNotFound].
func (tc *TxnCoordinator) DescribeTransaction(transactionalID string) (TxnDescription, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	m, ok := tc.txns[transactionalID]
	if !ok || !m.loaded {
		return TxnDescription{}, fmt.Errorf("%w: %s", ErrTransactionalIDNotFound, transactionalID)
	}
	st := m.st
	d := TxnDescription{TransactionalID: m.id, State: txnStates[st.status], ProducerID: st.producerID, ProducerEpoch: st.epoch,
		Timeout: time.Duration(st.timeoutMs) * time.Millisecond, Partitions: slices.Clone(st.partitions),
		LastUpdate: time.UnixMilli(st.updateMs)}
	if st.startMs >= 0 {
		d.StartTime = time.UnixMilli(st.startMs)
	}
	return d, nil
}

// ListTransactions is Kafka's ListTransactions: the known transactional
// ids, sorted ([TxnCoordinator.DescribeTransaction] gives each one's
// state and producer id, which its filters look at).
func (tc *TxnCoordinator) ListTransactions() []string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var ids []string
	for id, m := range tc.txns {
		if m.loaded {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// inTransaction runs fn while holding transactionalID's lock, if pe is its
// current producer and tp is a partition of its Ongoing transaction
// (GroupCoordinator.TxnCommitOffsets' check that AddOffsets came first).
func (tc *TxnCoordinator) inTransaction(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch, tp TopicPartition, fn func() error) error {
	m, err := tc.acquireProducer(ctx, transactionalID, pe)
	if err != nil {
		return err
	}
	defer tc.release(m)
	if m.st.status != txncodec.StatusOngoing {
		return fmt.Errorf("%w: transactional id %s is in state %s", ErrInvalidTxnState, m.id, txnStates[m.st.status])
	}
	if _, ok := slices.BinarySearchFunc(m.st.partitions, tp, compareTP); !ok {
		return fmt.Errorf("%w: %s is not in transaction %s (AddOffsets first)", ErrInvalidTxnState, tp, m.id)
	}
	return fn()
}

// acquireProducer acquires transactionalID's lock, as acquire does, for
// its current producer pe: a producer whose id or epoch is not the current
// one is fenced. The caller releases m.
func (tc *TxnCoordinator) acquireProducer(ctx context.Context, transactionalID string, pe ProducerIDAndEpoch) (*txnMeta, error) {
	m, err := tc.acquire(ctx, transactionalID, false)
	if err != nil {
		return nil, err
	}
	if err := checkProducer(m, pe); err != nil {
		tc.release(m)
		return nil, err
	}
	return m, nil
}

// checkProducer fences a producer whose id or epoch is not the current
// one. The caller holds m's lock.
func checkProducer(m *txnMeta, pe ProducerIDAndEpoch) error {
	if pe.ProducerID != m.st.producerID {
		return fmt.Errorf("%w: producer id %d is not transactional id %s's (%d)", ErrProducerFenced, pe.ProducerID, m.id, m.st.producerID)
	}
	if pe.Epoch != m.st.epoch {
		return fmt.Errorf("%w: producer %d epoch %d, transactional id %s is at epoch %d", ErrProducerFenced, pe.ProducerID, pe.Epoch, m.id, m.st.epoch)
	}
	return nil
}

// acquire returns transactionalID's metadata with its lock held; with
// create, an unknown id gets a placeholder (loaded false) that release
// drops unless a state was persisted. Release it with release.
func (tc *TxnCoordinator) acquire(ctx context.Context, id string, create bool) (*txnMeta, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: empty transactional id", ErrTransactionalIDNotFound)
	}
	for {
		tc.mu.Lock()
		if tc.closed {
			tc.mu.Unlock()
			return nil, ErrClosed
		}
		m := tc.txns[id]
		if m == nil {
			if !create {
				tc.mu.Unlock()
				return nil, fmt.Errorf("%w: %s", ErrTransactionalIDNotFound, id)
			}
			m = &txnMeta{id: id, sem: make(chan struct{}, 1)}
			tc.txns[id] = m
		}
		tc.mu.Unlock()
		select {
		case m.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tc.ctx.Done():
			return nil, ErrClosed
		}
		tc.mu.Lock()
		removed, loaded := m.removed, m.loaded
		tc.mu.Unlock()
		if removed {
			<-m.sem
			continue
		}
		if !loaded && !create {
			tc.release(m)
			return nil, fmt.Errorf("%w: %s", ErrTransactionalIDNotFound, id)
		}
		return m, nil
	}
}

// release releases m's lock, dropping a placeholder nothing was persisted
// for.
func (tc *TxnCoordinator) release(m *txnMeta) {
	tc.mu.Lock()
	if !m.loaded && !m.removed {
		m.removed = true
		delete(tc.txns, m.id)
	}
	tc.mu.Unlock()
	<-m.sem
}

// transition persists st durably and makes it m's state. The caller holds
// m's lock. If the record was appended but waiting for its fsync failed
// (ctx ended), st still becomes the state, since a reload would read it,
// and the error is returned: the caller does not know the outcome.
func (tc *TxnCoordinator) transition(ctx context.Context, m *txnMeta, st txnState) error {
	if m.loaded {
		st.prevProducerID = m.st.producerID // Kafka's previousProducerId: the id before the transition
	}
	appended, err := tc.persist(ctx, m.id, &st)
	if appended {
		tc.mu.Lock()
		m.st, m.loaded = st, true
		tc.mu.Unlock()
	}
	return err
}

// endLocked ends m's transaction (Ongoing, or, at [TxnVersion2], an empty
// one): it persists PrepareCommit or PrepareAbort, then completes it. With
// fence the epoch is bumped first, as Kafka fences a producer whose
// transaction it aborts; such an abort follows [TxnVersion2], the
// coordinator's own version, as Kafka's does. At [TxnVersion2] the epoch
// is bumped (never past 32767), and a new producer id is drawn for the
// completion when the epoch was exhausted and no fence bumped it. It
// returns the producer id and epoch after the completion. The caller holds
// m's lock.
func (tc *TxnCoordinator) endLocked(ctx context.Context, m *txnMeta, commit, fence bool, v TxnVersion) (ProducerIDAndEpoch, error) {
	st := m.st.clone()
	if fence && st.epoch < math.MaxInt16 {
		st.epoch++
	}
	st.nextProducerID, st.version = -1, v
	if v == TxnVersion2 {
		if !fence && st.epoch >= math.MaxInt16-1 {
			pid, err := tc.dir.AllocateProducerID(ctx)
			if err != nil {
				return ProducerIDAndEpoch{}, err
			}
			st.nextProducerID = pid
		}
		if st.epoch < math.MaxInt16 {
			st.epoch++
		}
	}
	if st.status != txncodec.StatusOngoing {
		st.partitions, st.startMs = nil, tc.nowMs()
	}
	st.status, st.updateMs = txncodec.StatusPrepareAbort, tc.nowMs()
	if commit {
		st.status = txncodec.StatusPrepareCommit
	}
	if err := tc.transition(ctx, m, st); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	if hook := tc.afterPrepare.Load(); hook != nil {
		if err := (*hook)(); err != nil {
			return ProducerIDAndEpoch{}, err
		}
	}
	return tc.completeLocked(ctx, m)
}

// completeLocked completes m's prepared transaction: markers to every
// partition, with the prepared producer id and epoch, then CompleteCommit
// or CompleteAbort, with no partitions, as Kafka writes it (a
// [TxnVersion2] transaction given a new producer id continues with it, at
// epoch 0). It returns the producer id and epoch after the completion. The
// caller holds m's lock.
func (tc *TxnCoordinator) completeLocked(ctx context.Context, m *txnMeta) (ProducerIDAndEpoch, error) {
	st := m.st.clone()
	commit := st.status == txncodec.StatusPrepareCommit
	if err := tc.writeMarkers(ctx, st.producerID, st.epoch, st.partitions, commit); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	if st.version == TxnVersion2 && st.nextProducerID >= 0 {
		st.producerID, st.epoch = st.nextProducerID, 0
	}
	st.nextProducerID = -1
	st.status, st.partitions, st.updateMs = txncodec.StatusCompleteAbort, []TopicPartition{}, tc.nowMs()
	if commit {
		st.status = txncodec.StatusCompleteCommit
	}
	if err := tc.transition(ctx, m, st); err != nil {
		return ProducerIDAndEpoch{}, err
	}
	return ProducerIDAndEpoch{ProducerID: st.producerID, Epoch: st.epoch}, nil
}

func (tc *TxnCoordinator) nowMs() int64 { return tc.now().UnixMilli() }

// compareTP orders partitions by topic, then partition.
func compareTP(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}
