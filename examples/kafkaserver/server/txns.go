package server

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/record"
)

// Transactions are served by the directory's own transaction coordinator
// (the one kafkalite's in-process transactional producers use), with
// markers written by the coordinator at EndTxn, at the finalized
// transaction.version 2 (features.go): a client that sees it uses
// transactions version 2 (KIP-890 part 2: EndTxn v5 bumps the epoch,
// Produce v12+ and TxnOffsetCommit v5+ add their partitions to the
// transaction without AddPartitionsToTxn or AddOffsetsToTxn); older
// request versions keep version 1's protocol, each transaction following
// its requests' versions as Kafka's coordinator does.

// Kafka's transaction error codes.
const (
	errInvalidProducerIDMapping  int16 = 49
	errInvalidTransactionTimeout int16 = 50
	errConcurrentTransactions    int16 = 51
	errProducerFenced            int16 = 90
	errTransactionalIDNotFound   int16 = 105
	errTransactionAbortable      int16 = 120
)

func txnCode(err error) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, coordinator.ErrProducerFenced):
		return errProducerFenced
	case errors.Is(err, coordinator.ErrInvalidTxnState):
		return errInvalidTxnState
	case errors.Is(err, coordinator.ErrInvalidTransactionTimeout):
		return errInvalidTransactionTimeout
	case errors.Is(err, coordinator.ErrConcurrentTransactions):
		return errConcurrentTransactions
	case errors.Is(err, coordinator.ErrTransactionalIDNotFound):
		return errTransactionalIDNotFound
	case errors.Is(err, coordinator.ErrUnknownTopicOrPartition):
		return errUnknownTopicOrPartition
	}
	return groupCode(err)
}

// fencedCode is how an older request version says "fenced": Kafka
// answers PRODUCER_FENCED only to versions that know it, and
// INVALID_PRODUCER_EPOCH before.
func fencedCode(code int16, version, knows int16) int16 {
	if code == errProducerFenced && version < knows {
		return errInvalidProducerEpoch
	}
	return code
}

func (s *Server) txns(ctx context.Context) (*coordinator.TxnCoordinator, error) {
	return coordinator.Transactions(ctx, s.dir)
}

// initTransactional answers an InitProducerId with a transactional id.
func (s *Server) initTransactional(ctx context.Context, req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) {
	tc, err := s.txns(ctx)
	if err == nil {
		var pe coordinator.ProducerIDAndEpoch
		pe, err = tc.InitProducerID(ctx, *req.TransactionalID, time.Duration(req.TransactionTimeoutMillis)*time.Millisecond)
		if err == nil {
			resp.ProducerID, resp.ProducerEpoch = pe.ProducerID, pe.Epoch
		}
	}
	resp.ErrorCode = fencedCode(txnCode(err), req.Version, 4)
}

func (s *Server) handleAddPartitionsToTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	if req.Version < 4 {
		resp.Topics = s.addPartitionsToTxn(ctx, req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Topics, false)
		return resp, nil
	}
	// v4+ is the batched form Kafka's brokers send their transaction
	// coordinator (KIP-890): each transaction is added, or with
	// VerifyOnly checked, as Kafka's coordinator answers it.
	for _, t := range req.Transactions {
		topics := make([]kmsg.AddPartitionsToTxnRequestTopic, len(t.Topics))
		for i, tt := range t.Topics {
			topics[i] = kmsg.AddPartitionsToTxnRequestTopic{Topic: tt.Topic, Partitions: tt.Partitions}
		}
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = t.TransactionalID
		for _, r := range s.addPartitionsToTxn(ctx, req.Version, t.TransactionalID, t.ProducerID, t.ProducerEpoch, topics, t.VerifyOnly) {
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = r.Topic
			for _, p := range r.Partitions {
				tp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				tp.Partition, tp.ErrorCode = p.Partition, p.ErrorCode
				tt.Partitions = append(tt.Partitions, tp)
			}
			rt.Topics = append(rt.Topics, tt)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp, nil
}

// addPartitionsToTxn adds one transaction's partitions, or with verify
// checks that they are in it, and answers each partition.
func (s *Server) addPartitionsToTxn(ctx context.Context, version int16, txnID string, pid int64, epoch int16, topics []kmsg.AddPartitionsToTxnRequestTopic, verify bool) []kmsg.AddPartitionsToTxnResponseTopic {
	var tps []log.TopicPartition
	for _, t := range topics {
		for _, p := range t.Partitions {
			tps = append(tps, log.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	answer := func(code func(tp log.TopicPartition) int16) []kmsg.AddPartitionsToTxnResponseTopic {
		var out []kmsg.AddPartitionsToTxnResponseTopic
		for _, t := range topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, code(log.TopicPartition{Topic: t.Topic, Partition: p})
				rt.Partitions = append(rt.Partitions, rp)
			}
			out = append(out, rt)
		}
		return out
	}
	if verify {
		return answer(s.verifyInTxn(ctx, txnID, pid, epoch))
	}
	// Partitions that do not exist, or of internal topics (which a
	// client may not write, as Kafka's KafkaApis refuses them to a
	// client's request), fail the request; the others answer
	// OPERATION_NOT_ATTEMPTED, as Kafka answers them.
	refused := map[log.TopicPartition]int16{}
	for _, tp := range tps {
		if log.IsInternalTopic(tp.Topic) {
			refused[tp] = errTopicAuthorization
		} else if _, err := s.dir.Partition(tp.Topic, tp.Partition); err != nil {
			refused[tp] = errUnknownTopicOrPartition
		}
	}
	if len(refused) > 0 {
		return answer(func(tp log.TopicPartition) int16 {
			if c, ok := refused[tp]; ok {
				return c
			}
			return errOperationNotAttempted
		})
	}
	tc, err := s.txns(ctx)
	if err == nil {
		err = tc.AddPartitions(ctx, txnID, coordinator.ProducerIDAndEpoch{ProducerID: pid, Epoch: epoch}, tps)
	}
	code := fencedCode(txnCode(err), version, 2)
	return answer(func(log.TopicPartition) int16 { return code })
}

// verifyInTxn answers AddPartitionsToTxn's VerifyOnly as Kafka's
// coordinator does: INVALID_PRODUCER_ID_MAPPING for an id it does not
// know or another producer's, PRODUCER_FENCED for another epoch,
// CONCURRENT_TRANSACTIONS while the transaction completes, and per
// partition NONE if it is in the transaction, INVALID_TXN_STATE if not.
func (s *Server) verifyInTxn(ctx context.Context, txnID string, pid int64, epoch int16) func(log.TopicPartition) int16 {
	whole := func(c int16) func(log.TopicPartition) int16 { return func(log.TopicPartition) int16 { return c } }
	if txnID == "" {
		return whole(errInvalidRequest)
	}
	tc, err := s.txns(ctx)
	if err != nil {
		return whole(txnCode(err))
	}
	d, err := tc.DescribeTransaction(txnID)
	switch {
	case errors.Is(err, coordinator.ErrTransactionalIDNotFound), err == nil && d.ProducerID != pid:
		return whole(errInvalidProducerIDMapping)
	case err != nil:
		return whole(txnCode(err))
	case d.ProducerEpoch != epoch:
		return whole(errProducerFenced)
	case d.State == coordinator.TxnPrepareCommit || d.State == coordinator.TxnPrepareAbort:
		return whole(errConcurrentTransactions)
	}
	return func(tp log.TopicPartition) int16 {
		if slices.Contains(d.Partitions, tp) {
			return errNone
		}
		return errInvalidTxnState
	}
}

func (s *Server) handleAddOffsetsToTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	tc, err := s.txns(ctx)
	if err == nil {
		err = tc.AddOffsets(ctx, req.TransactionalID, coordinator.ProducerIDAndEpoch{ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}, req.Group)
	}
	resp.ErrorCode = fencedCode(txnCode(err), req.Version, 2)
	return resp, nil
}

func (s *Server) handleEndTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := kmsg.NewPtrEndTxnResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	pe := coordinator.ProducerIDAndEpoch{ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	tc, err := s.txns(ctx)
	switch {
	case err != nil:
	case req.Version >= 5:
		// Transactions version 2: the epoch is bumped, and the producer
		// continues with the id and epoch returned.
		var next coordinator.ProducerIDAndEpoch
		if next, err = tc.EndTxnV2(ctx, req.TransactionalID, pe, req.Commit); err == nil {
			resp.ProducerID, resp.ProducerEpoch = next.ProducerID, next.Epoch
		}
	default:
		err = tc.EndTxn(ctx, req.TransactionalID, pe, req.Commit)
	}
	resp.ErrorCode = fencedCode(txnCode(err), req.Version, 2)
	return resp, nil
}

// notInTxnCode is how a request version says that a transactional write
// came for a partition not in the transaction (KIP-890 part 1's
// verification): TRANSACTION_ABORTABLE from the version that knows it
// (Produce v11, TxnOffsetCommit v4), INVALID_TXN_STATE before, as Kafka's
// AddPartitionsToTxnManager answers.
func notInTxnCode(version, knows int16) int16 {
	if version >= knows {
		return errTransactionAbortable
	}
	return errInvalidTxnState
}

func (s *Server) handleTxnOffsetCommit(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	// v6 names topics by id: an id no topic has is answered
	// UNKNOWN_TOPIC_ID. A partition that does not exist is answered
	// UNKNOWN_TOPIC_OR_PARTITION and left out, at every version, as
	// Kafka's KafkaApis answers it; with none left the coordinator is
	// not asked (nor, from v5, the group's partition added).
	names := make([]string, len(req.Topics))
	offsets := map[log.TopicPartition]coordinator.OffsetAndMetadata{}
	known := s.partitionChecker()
	for i, t := range req.Topics {
		names[i] = t.Topic
		if req.Version >= 6 {
			names[i], _ = s.topicByID(t.TopicID)
		}
		for _, p := range t.Partitions {
			if names[i] != "" && known(names[i], p.Partition) {
				offsets[log.TopicPartition{Topic: names[i], Partition: p.Partition}] = committedOffset(p.Offset, p.LeaderEpoch, req.Version >= 2, p.Metadata)
			}
		}
	}
	m := coordinator.GroupMetadata{GroupID: req.Group, GenerationID: -1}
	if req.Version >= 3 {
		m.MemberID, m.GenerationID, m.GroupInstanceID = req.MemberID, req.Generation, deref(req.InstanceID)
	}
	pe := coordinator.ProducerIDAndEpoch{ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	var err error
	if len(offsets) > 0 {
		var coord *coordinator.GroupCoordinator
		coord, err = s.coordinator(ctx)
		if err == nil && req.Version >= 5 {
			// Transactions version 2: the group's partition joins the
			// transaction here, as Kafka's broker adds it for v5+.
			var tc *coordinator.TxnCoordinator
			if tc, err = s.txns(ctx); err == nil {
				err = tc.AddOffsetsV2(ctx, req.TransactionalID, pe, req.Group)
			}
		}
		if err == nil {
			err = coord.TxnCommitOffsets(ctx, req.TransactionalID, pe, m, offsets)
		}
	}
	code := fencedCode(txnCode(err), req.Version, 3)
	if errors.Is(err, coordinator.ErrInvalidTxnState) {
		code = notInTxnCode(req.Version, 4)
	}
	for i, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			switch {
			case names[i] == "" && req.Version >= 6:
				rp.ErrorCode = errUnknownTopicID
			case !known(names[i], p.Partition):
				rp.ErrorCode = errUnknownTopicOrPartition
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleListTransactions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListTransactionsRequest)
	resp := kmsg.NewPtrListTransactionsResponse()
	// v2 (KIP-1152) filters by a regular expression over the whole
	// transactional id; one that does not compile is
	// INVALID_REGULAR_EXPRESSION. An empty pattern filters nothing.
	var pattern *regexp.Regexp
	if req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		var err error
		if pattern, err = regexp.Compile("^(?:" + *req.TransactionalIDPattern + ")$"); err != nil {
			resp.ErrorCode = errInvalidRegularExpression
			return resp, nil
		}
	}
	tc, err := s.txns(ctx)
	if err != nil {
		resp.ErrorCode = txnCode(err)
		return resp, nil
	}
	now := time.Now()
	for _, id := range tc.ListTransactions() {
		d, err := tc.DescribeTransaction(id)
		if err != nil {
			continue
		}
		if pattern != nil && !pattern.MatchString(id) {
			continue
		}
		// v1: only transactions running longer than the duration (Kafka
		// compares with the transaction's start, -1 for no filter).
		if req.DurationFilterMillis >= 0 && req.Version >= 1 &&
			(d.StartTime.IsZero() || now.Sub(d.StartTime).Milliseconds() < req.DurationFilterMillis) {
			continue
		}
		if len(req.StateFilters) > 0 && !slices.Contains(req.StateFilters, string(d.State)) {
			continue
		}
		if len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, d.ProducerID) {
			continue
		}
		st := kmsg.NewListTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.TransactionState = id, d.ProducerID, string(d.State)
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}

func (s *Server) handleDescribeTransactions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	tc, err := s.txns(ctx)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch, st.StartTimestamp = id, -1, -1, -1
		if err != nil {
			st.ErrorCode = txnCode(err)
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		d, derr := tc.DescribeTransaction(id)
		if derr != nil {
			st.ErrorCode = txnCode(derr)
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		st.State, st.ProducerID, st.ProducerEpoch = string(d.State), d.ProducerID, d.ProducerEpoch
		st.TimeoutMillis = int32(d.Timeout.Milliseconds())
		if !d.StartTime.IsZero() {
			st.StartTimestamp = d.StartTime.UnixMilli()
		}
		for _, tp := range d.Partitions {
			if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
				t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				t.Topic = tp.Topic
				st.Topics = append(st.Topics, t)
			}
			st.Topics[len(st.Topics)-1].Partitions = append(st.Topics[len(st.Topics)-1].Partitions, tp.Partition)
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}

// transactional reports whether records start with a transactional batch.
func transactional(records []byte) bool {
	h, err := record.ParseHeader(records)
	return err == nil && h.Attributes.IsTransactional()
}

// addToTransaction adds to their producer's transaction the partitions
// that a Produce v12+ with a transactional id writes transactional
// batches to (transactions version 2 sends no AddPartitionsToTxn: Kafka's
// broker adds them before appending). It returns the error code of each
// partition the coordinator refused, which is then not written: a fenced
// producer gets INVALID_PRODUCER_EPOCH, as Kafka's AddPartitionsToTxnManager
// answers a Produce. Partitions that do not exist, or of internal topics,
// are left to the append, which refuses them.
func (s *Server) addToTransaction(ctx context.Context, req *kmsg.ProduceRequest, names []string, known []bool) map[log.TopicPartition]int16 {
	if req.Version < 12 || req.TransactionID == nil {
		return nil
	}
	byProducer := map[coordinator.ProducerIDAndEpoch][]log.TopicPartition{}
	for ti, t := range req.Topics {
		if !known[ti] || log.IsInternalTopic(names[ti]) {
			continue
		}
		for _, p := range t.Partitions {
			h, err := record.ParseHeader(p.Records)
			if err != nil || !h.Attributes.IsTransactional() {
				continue
			}
			if _, err := s.dir.Partition(names[ti], p.Partition); err != nil {
				continue
			}
			pe := coordinator.ProducerIDAndEpoch{ProducerID: h.ProducerID, Epoch: h.ProducerEpoch}
			byProducer[pe] = append(byProducer[pe], log.TopicPartition{Topic: names[ti], Partition: p.Partition})
		}
	}
	if len(byProducer) == 0 {
		return nil
	}
	refused := map[log.TopicPartition]int16{}
	tc, terr := s.txns(ctx)
	for pe, tps := range byProducer {
		err := terr
		if err == nil {
			err = tc.AddPartitionsV2(ctx, *req.TransactionID, pe, tps)
		}
		if err != nil {
			code := txnCode(err)
			if code == errProducerFenced {
				code = errInvalidProducerEpoch
			}
			for _, tp := range tps {
				refused[tp] = code
			}
		}
	}
	return refused
}
