package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/segment"
)

// ShareFetch and ShareAcknowledge (KIP-932): a share group member's
// acknowledgements go to the directory's share-partition manager
// (package log/share) first, then a ShareFetch acquires records of its
// session's partitions, long-polling up to its MaxWaitMillis for MinBytes.
// The records go out as the batches the manager read (they may hold
// records other members acquired: the client delivers those of
// AcquiredRecords only), as they lie in the .log, as Fetch sends them
// (file slices, never through memory), at most the request's MaxBytes and
// Config.FetchMaxBytes.

// lockMillis is a share group's share.record.lock.duration.ms (the
// Dir's group configuration, as the share-partitions take it), what
// AcquisitionLockTimeoutMillis says.
func (s *Server) lockMillis(group string) int32 {
	return int32(min(s.dir.GroupConfig(group).ShareRecordLockDuration.Milliseconds(), math.MaxInt32))
}

// shareCode maps an error of a share-partition to Kafka's code.
func shareCode(err error) int16 {
	switch {
	case errors.Is(err, share.ErrInvalidRecordState):
		return codeInvalidRecordState
	case errors.Is(err, share.ErrInvalidRequest), errors.Is(err, errShareRequestMalformed):
		return errInvalidRequest
	case errors.Is(err, share.ErrStateLoading):
		return errLeaderNotAvailable
	}
	return codeOf(err)
}

// shareRequest checks a share request's group and member and returns the
// share-partition manager: or the code and error to answer with, when the
// member is not in its share group.
func (s *Server) shareRequest(ctx context.Context, group, member *string) (shareSessionKey, *share.PartitionManager, int16, error) {
	key := shareSessionKey{broker: s.brokerOf(ctx), group: deref(group), member: deref(member)}
	if key.group == "" || key.member == "" {
		return key, nil, errInvalidRequest, fmt.Errorf("%w: a share request needs its group id and member id", errShareRequestMalformed)
	}
	coord, err := s.coordinator(ctx)
	if err == nil {
		err = coord.CheckShareMember(key.group, key.member)
	}
	if err != nil {
		return key, nil, groupCode(err), err
	}
	mgr, err := share.Partitions(ctx, s.dir)
	if err != nil {
		return key, nil, codeOf(err), err
	}
	return key, mgr, errNone, nil
}

// sessionCode is the code of a share session error.
func sessionCode(err error) int16 {
	switch {
	case errors.Is(err, errShareSessionNotFound):
		return codeShareSessionNotFound
	case errors.Is(err, errInvalidShareEpoch):
		return codeInvalidShareEpoch
	case errors.Is(err, errShareSessionLimit):
		return codeShareSessionLimit
	}
	return errInvalidRequest
}

// shareNames resolves topic ids once per request.
type shareNames struct {
	s     *Server
	names map[[16]byte]string
	miss  map[[16]byte]bool
}

func (n *shareNames) name(id [16]byte) (string, bool) {
	if name, ok := n.names[id]; ok {
		return name, true
	}
	if n.miss[id] {
		return "", false
	}
	name, ok := n.s.topicByID(id)
	if n.names == nil {
		n.names, n.miss = map[[16]byte]string{}, map[[16]byte]bool{}
	}
	if ok {
		n.names[id] = name
	} else {
		n.miss[id] = true
	}
	return name, ok
}

// partError is a partition's error code when it cannot be read (unknown
// topic id, partition), errNone when it can.
func (n *shareNames) partError(p sharePart) (string, int16, error) {
	name, ok := n.name(p.topicID)
	if !ok {
		return "", errUnknownTopicID, fmt.Errorf("no topic has id %x", p.topicID)
	}
	if _, err := n.s.dir.Partition(name, p.partition); err != nil {
		return "", codeOf(err), err
	}
	return name, errNone, nil
}

// leader reports whether broker leads the partition, and its leader and
// epoch, on a cluster of virtual brokers; on one broker, it leads all.
func (n *shareNames) leader(broker int32, name string, p int32) (partitionState, bool) {
	if n.s.cluster == nil {
		return partitionState{}, true
	}
	return n.s.cluster.leaderHere(broker, name, p)
}

// ackBatch is a wire acknowledgement batch.
type ackBatch struct {
	first, last int64
	types       []int8
}

// acknowledge applies one partition's acknowledgements: the code and
// error to answer with. Renewals (type 4) need v2's IsRenewAck, as
// Kafka's KIP-1222 has it.
func (s *Server) acknowledge(ctx context.Context, mgr *share.PartitionManager, names *shareNames, key shareSessionKey, p sharePart, in []ackBatch, renewAck bool) (int16, error) {
	name, code, err := names.partError(p)
	if err != nil {
		return code, err
	}
	if _, here := names.leader(key.broker, name, p.partition); !here {
		// Kafka's broker holds no share-partition it does not lead:
		// UNKNOWN_TOPIC_OR_PARTITION, as its SharePartitionManager answers.
		return errUnknownTopicOrPartition, fmt.Errorf("%w: broker %d does not lead %s-%d", log.ErrUnknownTopicOrPartition, key.broker, name, p.partition)
	}
	acks := make([]share.AckBatch, 0, len(in))
	for _, b := range in {
		types := make([]share.AckType, len(b.types))
		for i, t := range b.types {
			if t == int8(share.AckRenew) && !renewAck {
				return errInvalidRequest, fmt.Errorf("%w: a renew acknowledgement in a request without IsRenewAck", errShareRequestMalformed)
			}
			types[i] = share.AckType(t)
		}
		acks = append(acks, share.AckBatch{FirstOffset: b.first, LastOffset: b.last, Types: types})
	}
	if err := mgr.Acknowledge(ctx, key.group, key.member, name, p.partition, acks); err != nil {
		return shareCode(err), err
	}
	return errNone, nil
}

// shareFetchResponse gathers a ShareFetch response's partitions, each
// topic once, in the order they come.
type shareFetchResponse struct {
	resp  *kmsg.ShareFetchResponse
	index map[sharePart][2]int
	// slices hold each partition's records, sent as they lie in the .log.
	slices map[sharePart][]*segment.Slice
	// leaders are the brokers named as leaders of partitions answered
	// NOT_LEADER_OR_FOLLOWER, whose endpoints the response lists.
	leaders []int32
}

// aligned returns the slices aligned with the response's topics and
// partitions, for encodeShareFetch.
func (r *shareFetchResponse) aligned() [][][]*segment.Slice {
	if len(r.slices) == 0 {
		return nil
	}
	out := make([][][]*segment.Slice, len(r.resp.Topics))
	for i := range r.resp.Topics {
		out[i] = make([][]*segment.Slice, len(r.resp.Topics[i].Partitions))
	}
	for p, sls := range r.slices {
		at := r.index[p]
		out[at[0]][at[1]] = sls
	}
	return out
}

// release releases the slices, for a response that does not carry them.
func (r *shareFetchResponse) release() {
	for p, sls := range r.slices {
		for _, sl := range sls {
			sl.Release()
		}
		delete(r.slices, p)
	}
}

func (r *shareFetchResponse) part(p sharePart) *kmsg.ShareFetchResponseTopicPartition {
	if at, ok := r.index[p]; ok {
		return &r.resp.Topics[at[0]].Partitions[at[1]]
	}
	ti := -1
	for i := range r.resp.Topics {
		if r.resp.Topics[i].TopicID == p.topicID {
			ti = i
			break
		}
	}
	if ti < 0 {
		t := kmsg.NewShareFetchResponseTopic()
		t.TopicID = p.topicID
		r.resp.Topics = append(r.resp.Topics, t)
		ti = len(r.resp.Topics) - 1
	}
	rp := kmsg.NewShareFetchResponseTopicPartition()
	rp.Partition, rp.Records = p.partition, []byte{}
	r.resp.Topics[ti].Partitions = append(r.resp.Topics[ti].Partitions, rp)
	if r.index == nil {
		r.index = map[sharePart][2]int{}
	}
	r.index[p] = [2]int{ti, len(r.resp.Topics[ti].Partitions) - 1}
	return &r.resp.Topics[ti].Partitions[len(r.resp.Topics[ti].Partitions)-1]
}

// shareFetch answers a ShareFetch: the response and, aligned with its
// topics and partitions, the file slices of the records acquired, which
// the caller releases (handle sends them with encodeShareFetch).
func (s *Server) shareFetch(ctx context.Context, req *kmsg.ShareFetchRequest) (*kmsg.ShareFetchResponse, [][][]*segment.Slice, error) {
	resp := kmsg.NewPtrShareFetchResponse()
	fail := func(code int16, err error) (*kmsg.ShareFetchResponse, [][][]*segment.Slice, error) {
		resp.ErrorCode, resp.ErrorMessage = code, messageOf(err)
		return resp, nil, nil
	}
	key, mgr, code, err := s.shareRequest(ctx, req.GroupID, req.MemberID)
	if err != nil {
		return fail(code, err)
	}
	resp.AcquisitionLockTimeoutMillis = s.lockMillis(key.group)
	names := &shareNames{s: s}
	out := &shareFetchResponse{resp: resp}
	// The partitions the request names: those the directory has join the
	// session; the others are answered with their error, once.
	var known []sharePart
	hasAcks := false
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			sp := sharePart{topicID: t.TopicID, partition: p.Partition}
			hasAcks = hasAcks || len(p.AcknowledgementBatches) > 0
			if _, code, err := names.partError(sp); err != nil {
				rp := out.part(sp)
				rp.ErrorCode, rp.ErrorMessage = code, messageOf(err)
				continue
			}
			known = append(known, sp)
		}
	}
	var forget []sharePart
	for _, t := range req.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forget = append(forget, sharePart{topicID: t.TopicID, partition: p})
		}
	}
	var parts []sharePart
	switch req.ShareSessionEpoch {
	case shareInitialEpoch:
		if hasAcks {
			// Kafka refuses acknowledgements in a request that opens a
			// session: the records belong to the session before.
			return fail(errInvalidRequest, fmt.Errorf("%w: acknowledgements in a ShareFetch that opens a session", errShareRequestMalformed))
		}
		if err := s.shareSessions.open(key, stateOf(ctx), known); err != nil {
			// As Kafka, the refusal comes after the request's
			// MaxWaitMillis, so that a client retrying at once does not
			// spin.
			if serr := s.sleep(ctx, time.Duration(max(req.MaxWaitMillis, 0))*time.Millisecond); serr != nil {
				return nil, nil, serr
			}
			return fail(sessionCode(err), err)
		}
		parts = known
	case shareFinalEpoch:
		if !s.shareSessions.has(key) {
			return fail(codeShareSessionNotFound, fmt.Errorf("%w: group %q member %q", errShareSessionNotFound, key.group, key.member))
		}
	default:
		if parts, err = s.shareSessions.advance(key, req.ShareSessionEpoch, known, forget); err != nil {
			return fail(sessionCode(err), err)
		}
	}
	renewAck := req.Version >= 2 && req.IsRenewAck
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if len(p.AcknowledgementBatches) == 0 {
				continue
			}
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				batches[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			sp := sharePart{topicID: t.TopicID, partition: p.Partition}
			code, err := s.acknowledge(ctx, mgr, names, key, sp, batches, renewAck)
			rp := out.part(sp)
			rp.AcknowledgeErrorCode, rp.AcknowledgeErrorMessage = code, messageOf(err)
		}
	}
	if req.ShareSessionEpoch == shareFinalEpoch {
		s.closeShareSession(ctx, mgr, key, nil)
		return resp, nil, nil
	}
	if renewAck {
		return resp, nil, nil // a renewal acquires nothing (KIP-1222)
	}
	if err := s.acquire(ctx, mgr, req, key, names, parts, out); err != nil {
		out.release()
		return nil, nil, err
	}
	if !s.shareSessions.has(key) {
		// The session closed while the fetch acquired or waited (the
		// member left, or closed it from another connection, whose
		// release may have come first): what it acquired goes back too.
		out.release()
		s.closeShareSession(ctx, mgr, key, parts)
		resp.Topics = nil
		return fail(codeShareSessionNotFound, fmt.Errorf("%w: group %q member %q: closed during the fetch", errShareSessionNotFound, key.group, key.member))
	}
	if len(out.leaders) > 0 {
		for _, b := range s.cluster.endpoints(out.leaders) {
			ep := kmsg.NewShareFetchResponseNodeEndpoint()
			ep.NodeID, ep.Host, ep.Port = b.NodeID, b.Host, b.Port
			resp.NodeEndpoints = append(resp.NodeEndpoints, ep)
		}
	}
	return resp, out.aligned(), nil
}

// acquire acquires records of the session's partitions for a ShareFetch,
// waiting up to its MaxWaitMillis until MinBytes are acquired. It returns
// an error only when ctx ends (the connection or the server closes).
func (s *Server) acquire(ctx context.Context, mgr *share.PartitionManager, req *kmsg.ShareFetchRequest, key shareSessionKey, names *shareNames, parts []sharePart, out *shareFetchResponse) error {
	limit := int(s.cfg.FetchMaxBytes)
	if req.MaxBytes > 0 {
		limit = min(limit, int(req.MaxBytes))
	}
	maxRecords := int(req.MaxRecords)
	if maxRecords <= 0 {
		maxRecords = 500 // Kafka's max.poll.records
	}
	deadline := time.Now().Add(time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond)
	readable := make([]log.TopicPartition, 0, len(parts))
	tpNames := make([]string, len(parts))
	for i, p := range parts {
		name, code, err := names.partError(p)
		if err != nil {
			rp := out.part(p)
			rp.ErrorCode, rp.ErrorMessage = code, messageOf(err)
			continue
		}
		if ps, here := names.leader(key.broker, name, p.partition); !here {
			// As Kafka's broker answers a share fetch of a partition it
			// does not lead, with the leader (KIP-951).
			rp := out.part(p)
			rp.ErrorCode = errNotLeaderOrFollower
			rp.ErrorMessage = messageOf(fmt.Errorf("broker %d does not lead %s-%d: broker %d does", key.broker, name, p.partition, ps.leader))
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = ps.leader, ps.epoch
			out.leaders = append(out.leaders, ps.leader)
			continue
		}
		tpNames[i] = name
		readable = append(readable, log.TopicPartition{Topic: name, Partition: p.partition})
	}
	// Each fetch starts at another partition, so that a full response
	// does not starve the partitions after it.
	start := 0
	if len(parts) > 0 {
		start = int(uint32(req.ShareSessionEpoch) % uint32(len(parts)))
	}
	bytes, records := 0, 0
	for {
		failed := false
		for k := range parts {
			i := (start + k) % len(parts)
			if tpNames[i] == "" || bytes >= limit || records >= maxRecords {
				continue
			}
			p := parts[i]
			f, err := mgr.Acquire(ctx, share.FetchRequest{GroupID: key.group, MemberID: key.member, Topic: tpNames[i],
				Partition: p.partition, MaxRecords: maxRecords - records, MaxBytes: limit - bytes})
			if err != nil {
				rp := out.part(p)
				rp.ErrorCode, rp.ErrorMessage, failed = shareCode(err), messageOf(err), true
				continue
			}
			if f.LockDuration > 0 {
				out.resp.AcquisitionLockTimeoutMillis = int32(min(f.LockDuration.Milliseconds(), math.MaxInt32))
			}
			if len(f.Acquired) == 0 {
				continue
			}
			rp := out.part(p)
			if out.slices == nil {
				out.slices = map[sharePart][]*segment.Slice{}
			}
			out.slices[p] = append(out.slices[p], f.Records.Slice)
			bytes += int(f.Records.Slice.Size)
			for _, a := range f.Acquired {
				ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
				ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.FirstOffset, a.LastOffset, a.DeliveryCount
				rp.AcquiredRecords = append(rp.AcquiredRecords, ar)
				records += int(a.LastOffset - a.FirstOffset + 1)
			}
		}
		wait := time.Until(deadline)
		if failed || records > 0 && bytes >= int(req.MinBytes) || records >= maxRecords || bytes >= limit || wait <= 0 {
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		unpark := parked(ctx)
		err := mgr.Wait(wctx, key.group, readable)
		unpark()
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			deadline = time.Now() // one more round answers what is there
		}
	}
}

// closeShareSession closes the member's session with its broker and gives
// back the records it holds in the session's partitions (and in also's,
// the partitions of a session closed already), as Kafka releases them when
// a session ends.
func (s *Server) closeShareSession(ctx context.Context, mgr *share.PartitionManager, key shareSessionKey, also []sharePart) {
	parts, _ := s.shareSessions.close(key)
	s.releaseShareParts(ctx, mgr, key, append(parts, also...))
}

// releaseShareParts gives back the records the member of key holds in
// parts.
func (s *Server) releaseShareParts(ctx context.Context, mgr *share.PartitionManager, key shareSessionKey, parts []sharePart) {
	names := &shareNames{s: s}
	tps := make([]log.TopicPartition, 0, len(parts))
	for _, p := range parts {
		if name, ok := names.name(p.topicID); ok {
			tps = append(tps, log.TopicPartition{Topic: name, Partition: p.partition})
		}
	}
	if len(tps) == 0 {
		return
	}
	if err := mgr.ReleaseMemberPartitions(context.WithoutCancel(ctx), key.group, key.member, tps); err != nil {
		s.lg.Warn("kafkaserver: releasing a share member's records failed; their locks run out", "group", key.group, "member", key.member, "err", err)
	}
}

// dropShareSessions closes the sessions a connection opened, when it
// ends: their members' records go back to their groups.
func (s *Server) dropShareSessions(ctx context.Context, st *connState) {
	dropped := s.shareSessions.dropConn(st)
	if len(dropped) == 0 {
		return
	}
	mgr, err := share.Partitions(context.WithoutCancel(ctx), s.dir)
	if err != nil {
		s.lg.Warn("kafkaserver: releasing the records of a closed connection's share sessions failed; their locks run out", "err", err)
		return
	}
	for key, parts := range dropped {
		s.releaseShareParts(ctx, mgr, key, parts)
	}
}

func (s *Server) handleShareAcknowledge(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	resp := kmsg.NewPtrShareAcknowledgeResponse()
	fail := func(code int16, err error) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = code, messageOf(err)
		return resp, nil
	}
	key, mgr, code, err := s.shareRequest(ctx, req.GroupID, req.MemberID)
	if err != nil {
		return fail(code, err)
	}
	resp.AcquisitionLockTimeoutMillis = s.lockMillis(key.group)
	switch req.ShareSessionEpoch {
	case shareInitialEpoch:
		// Acknowledgements belong to a session: none is open at epoch 0.
		return fail(codeInvalidShareEpoch, fmt.Errorf("%w: ShareAcknowledge at epoch 0", errInvalidShareEpoch))
	case shareFinalEpoch:
		if !s.shareSessions.has(key) {
			return fail(codeShareSessionNotFound, fmt.Errorf("%w: group %q member %q", errShareSessionNotFound, key.group, key.member))
		}
	default:
		if _, err := s.shareSessions.advance(key, req.ShareSessionEpoch, nil, nil); err != nil {
			return fail(sessionCode(err), err)
		}
	}
	names := &shareNames{s: s}
	renewAck := req.Version >= 2 && req.IsRenewAck
	for _, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				batches[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			code, err := s.acknowledge(ctx, mgr, names, key, sharePart{topicID: t.TopicID, partition: p.Partition}, batches, renewAck)
			rp.ErrorCode, rp.ErrorMessage = code, messageOf(err)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if req.ShareSessionEpoch == shareFinalEpoch {
		s.closeShareSession(ctx, mgr, key, nil)
	}
	return resp, nil
}
