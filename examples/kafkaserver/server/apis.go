package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// api is one served API: its advertised version range and its handler
// (nil for Fetch and ShareFetch, whose responses handle writes in chunks).
type api struct {
	min, max int16
	fn       func(s *Server, ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// apis are the APIs served, each at Kafka 4.4's broker's range
// (TestAPIVersionsAsKafka compares them). Produce's 0–13 suits librdkafka
// before 2.11.1, which turns its features on only if versions 0, 3 and 7
// lie inside the range (v0–2 are refused per partition, as Kafka 4 does:
// only magic-2 batches are stored); Fetch starts at 4, the first version
// of magic-2 batches.
var apis map[int16]api

func init() {
	apis = map[int16]api{
		kmsg.ApiVersions.Int16():                  {0, 5, (*Server).handleAPIVersions},
		kmsg.Metadata.Int16():                     {0, 13, (*Server).handleMetadata},
		kmsg.Produce.Int16():                      {0, 13, (*Server).handleProduce},
		kmsg.Fetch.Int16():                        {4, 18, nil}, // handle answers it with fetch and encodeFetch
		kmsg.ListOffsets.Int16():                  {1, 11, (*Server).handleListOffsets},
		kmsg.InitProducerID.Int16():               {0, 5, (*Server).handleInitProducerID},
		kmsg.OffsetForLeaderEpoch.Int16():         {2, 4, (*Server).handleOffsetForLeaderEpoch},
		kmsg.CreateTopics.Int16():                 {2, 7, (*Server).handleCreateTopics},
		kmsg.DeleteTopics.Int16():                 {1, 6, (*Server).handleDeleteTopics},
		kmsg.CreatePartitions.Int16():             {0, 3, (*Server).handleCreatePartitions},
		kmsg.DeleteRecords.Int16():                {0, 2, (*Server).handleDeleteRecords},
		kmsg.DescribeConfigs.Int16():              {1, 4, (*Server).handleDescribeConfigs},
		kmsg.DescribeCluster.Int16():              {0, 2, (*Server).handleDescribeCluster},
		kmsg.DescribeLogDirs.Int16():              {1, 5, (*Server).handleDescribeLogDirs},
		kmsg.AlterReplicaLogDirs.Int16():          {1, 2, (*Server).handleAlterReplicaLogDirs},
		kmsg.ElectLeaders.Int16():                 {0, 2, (*Server).handleElectLeaders},
		kmsg.UpdateFeatures.Int16():               {0, 2, (*Server).handleUpdateFeatures},
		kmsg.DescribeTopicPartitions.Int16():      {0, 0, (*Server).handleDescribeTopicPartitions},
		kmsg.SASLHandshake.Int16():                {0, 1, (*Server).handleSASLHandshake},
		kmsg.SASLAuthenticate.Int16():             {0, 2, (*Server).handleSASLAuthenticate},
		kmsg.FindCoordinator.Int16():              {0, 6, (*Server).handleFindCoordinator},
		kmsg.JoinGroup.Int16():                    {0, 9, (*Server).handleJoinGroup},
		kmsg.SyncGroup.Int16():                    {0, 5, (*Server).handleSyncGroup},
		kmsg.Heartbeat.Int16():                    {0, 4, (*Server).handleHeartbeat},
		kmsg.LeaveGroup.Int16():                   {0, 5, (*Server).handleLeaveGroup},
		kmsg.OffsetCommit.Int16():                 {2, 10, (*Server).handleOffsetCommit},
		kmsg.OffsetFetch.Int16():                  {1, 10, (*Server).handleOffsetFetch},
		kmsg.ListGroups.Int16():                   {0, 5, (*Server).handleListGroups},
		kmsg.DescribeGroups.Int16():               {0, 6, (*Server).handleDescribeGroups},
		kmsg.DeleteGroups.Int16():                 {0, 3, (*Server).handleDeleteGroups},
		kmsg.OffsetDelete.Int16():                 {0, 0, (*Server).handleOffsetDelete},
		kmsg.AddPartitionsToTxn.Int16():           {0, 5, (*Server).handleAddPartitionsToTxn},
		kmsg.AddOffsetsToTxn.Int16():              {0, 4, (*Server).handleAddOffsetsToTxn},
		kmsg.EndTxn.Int16():                       {0, 5, (*Server).handleEndTxn},
		kmsg.TxnOffsetCommit.Int16():              {0, 6, (*Server).handleTxnOffsetCommit},
		kmsg.ListTransactions.Int16():             {0, 2, (*Server).handleListTransactions},
		kmsg.DescribeTransactions.Int16():         {0, 0, (*Server).handleDescribeTransactions},
		kmsg.DescribeProducers.Int16():            {0, 0, (*Server).handleDescribeProducers},
		kmsg.AlterConfigs.Int16():                 {0, 2, (*Server).handleAlterConfigs},
		kmsg.IncrementalAlterConfigs.Int16():      {0, 1, (*Server).handleIncrementalAlterConfigs},
		kmsg.ConsumerGroupHeartbeat.Int16():       {0, 1, (*Server).handleConsumerGroupHeartbeat},
		kmsg.ConsumerGroupDescribe.Int16():        {0, 1, (*Server).handleConsumerGroupDescribe},
		kmsg.DescribeACLs.Int16():                 {1, 3, (*Server).handleDescribeACLs},
		kmsg.CreateACLs.Int16():                   {1, 3, (*Server).handleCreateACLs},
		kmsg.DeleteACLs.Int16():                   {1, 3, (*Server).handleDeleteACLs},
		kmsg.DescribeUserSCRAMCredentials.Int16(): {0, 0, (*Server).handleDescribeUserSCRAMCredentials},
		kmsg.AlterUserSCRAMCredentials.Int16():    {0, 0, (*Server).handleAlterUserSCRAMCredentials},
		kmsg.DescribeClientQuotas.Int16():         {0, 1, (*Server).handleDescribeClientQuotas},
		kmsg.AlterClientQuotas.Int16():            {0, 1, (*Server).handleAlterClientQuotas},
		kmsg.AlterPartitionAssignments.Int16():    {0, 1, (*Server).handleAlterPartitionAssignments},
		kmsg.ListPartitionReassignments.Int16():   {0, 0, (*Server).handleListPartitionReassignments},
		kmsg.DescribeQuorum.Int16():               {0, 2, (*Server).handleDescribeQuorum},
		kmsg.ListConfigResources.Int16():          {0, 1, (*Server).handleListConfigResources},
		// KIP-932's share groups, at the versions Kafka 4.4 serves.
		kmsg.ShareGroupHeartbeat.Int16():       {1, 1, (*Server).handleShareGroupHeartbeat},
		kmsg.ShareGroupDescribe.Int16():        {1, 1, (*Server).handleShareGroupDescribe},
		kmsg.ShareFetch.Int16():                {1, 2, nil}, // handle answers it with shareFetch and encodeShareFetch
		kmsg.ShareAcknowledge.Int16():          {1, 2, (*Server).handleShareAcknowledge},
		kmsg.DescribeShareGroupOffsets.Int16(): {0, 1, (*Server).handleDescribeShareGroupOffsets},
		kmsg.AlterShareGroupOffsets.Int16():    {0, 0, (*Server).handleAlterShareGroupOffsets},
		kmsg.DeleteShareGroupOffsets.Int16():   {0, 0, (*Server).handleDeleteShareGroupOffsets},
	}
}

// SupportedAPIs lists the APIs served with their version ranges, as
// ApiVersions advertises them, ordered by key.
func SupportedAPIs() []kmsg.ApiVersionsResponseApiKey {
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for key, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = key, a.min, a.max
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b kmsg.ApiVersionsResponseApiKey) int { return int(a.ApiKey) - int(b.ApiKey) })
	return out
}

// apiVersions is the ApiVersions response at version v: the APIs and,
// from v3, the features (Features).
func (s *Server) apiVersions(code, v int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ErrorCode = code
	resp.ApiKeys = slices.DeleteFunc(SupportedAPIs(), func(k kmsg.ApiVersionsResponseApiKey) bool { return !s.served(k.ApiKey) })
	setFeatures(resp, v) // features.go: the levels kafkalite implements
	return resp
}

// handleAPIVersions answers with the APIs and features served. v5
// (KIP-1242) names the cluster and node the client believes it reached:
// both or neither (INVALID_REQUEST otherwise), and if they are not this
// server's, REBOOTSTRAP_REQUIRED with nothing else, as Kafka 4.4 answers.
func (s *Server) handleAPIVersions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ApiVersionsRequest)
	if req.Version >= 5 {
		switch {
		case (req.ClusterID != nil) != (req.NodeID != -1):
			resp := kmsg.NewPtrApiVersionsResponse()
			resp.ErrorCode = errInvalidRequest
			return resp, nil
		case req.ClusterID != nil && (*req.ClusterID != s.dir.ClusterID() || req.NodeID != s.brokerOf(ctx)):
			resp := kmsg.NewPtrApiVersionsResponse()
			resp.ErrorCode = errRebootstrapRequired
			return resp, nil
		}
	}
	return s.apiVersions(errNone, req.Version), nil
}

func (s *Server) handleMetadata(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.MetadataRequest)
	resp := kmsg.NewPtrMetadataResponse()
	node, host, port := s.broker(ctx)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = node, host, port
	resp.Brokers = []kmsg.MetadataResponseBroker{b}
	cluster := s.dir.ClusterID()
	resp.ClusterID, resp.ControllerID = &cluster, node

	var names []string
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		names = s.dir.Topics()
	}
	for _, t := range req.Topics {
		switch {
		case t.Topic != nil:
			names = append(names, *t.Topic)
		case t.TopicID != [16]byte{}:
			if name, ok := s.topicByID(t.TopicID); ok {
				names = append(names, name)
			} else {
				mt := kmsg.NewMetadataResponseTopic()
				mt.ErrorCode, mt.TopicID = errUnknownTopicID, t.TopicID
				resp.Topics = append(resp.Topics, mt)
			}
		}
	}
	autoCreate := s.cfg.AutoCreateTopics && (req.Version < 4 || req.AllowAutoTopicCreation)
	for _, name := range names {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &name
		td, err := s.dir.DescribeTopic(name)
		if errors.Is(err, log.ErrUnknownTopicOrPartition) && autoCreate && !all && !log.IsInternalTopic(name) {
			td, err = s.autoCreate(ctx, name)
		}
		if err != nil {
			mt.ErrorCode = codeOf(err)
			if errors.Is(err, ErrTooManyPartitions) {
				// Kafka 4 answers a topic whose auto-creation the
				// controller refused as unknown.
				mt.ErrorCode = errUnknownTopicOrPartition
			}
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		mt.TopicID, mt.IsInternal = topicID(td.ID), td.Internal
		for p := range td.Partitions {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.LeaderEpoch = p, node, s.leaderEpoch(name, p)
			mp.Replicas, mp.ISR = []int32{node}, []int32{node}
			mt.Partitions = append(mt.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return resp, nil
}

// autoCreate creates a topic a Metadata request names, with
// Config.NumPartitions partitions, unless that would pass
// Config.MaxPartitions.
func (s *Server) autoCreate(ctx context.Context, name string) (log.TopicDescription, error) {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if err := log.ValidateTopicName(name); err != nil {
		return log.TopicDescription{}, err
	}
	if err := s.partitionRoomLocked(s.cfg.NumPartitions); err != nil {
		s.lg.Warn("kafkaserver: refused to auto-create a topic", "topic", name, "err", err)
		return log.TopicDescription{}, err
	}
	td, err := s.dir.CreateTopic(ctx, name, s.cfg.NumPartitions, nil)
	if errors.Is(err, log.ErrTopicExists) {
		return s.dir.DescribeTopic(name)
	}
	if err == nil {
		s.lg.Info("kafkaserver: auto-created a topic", "topic", name, "partitions", td.Partitions)
	}
	return td, err
}

// ErrTooManyPartitions is why a request that would pass
// Config.MaxPartitions is refused (POLICY_VIOLATION on the wire).
var ErrTooManyPartitions = errors.New("server: the server's partition limit would be passed")

// partitionRoomLocked returns an error matching ErrTooManyPartitions
// unless n more partitions fit under Config.MaxPartitions. REQUIRES
// s.createMu held.
func (s *Server) partitionRoomLocked(n int32) error {
	total := 0
	for _, name := range s.dir.Topics() {
		if td, err := s.dir.DescribeTopic(name); err == nil {
			total += int(td.Partitions)
		}
	}
	if total+int(n) > s.cfg.MaxPartitions {
		return fmt.Errorf("%w: the server holds %d partitions, and %d more would pass its limit of %d", ErrTooManyPartitions, total, n, s.cfg.MaxPartitions)
	}
	return nil
}

// produceRecords appends the batches of one partition's records in
// order, returning the first batch's base offset and the last offset.
func (s *Server) produceRecords(l *log.Log, records []byte) (res log.AppendResult, last int64, err error) {
	first := true
	for len(records) > 0 {
		h, err := record.ParseHeader(records)
		if err != nil {
			return res, 0, err
		}
		size := h.Size()
		if size > len(records) {
			return res, 0, fmt.Errorf("%w: a batch of %d bytes in %d", record.ErrCorrupt, size, len(records))
		}
		r, err := l.Append(records[:size])
		if err != nil {
			return res, 0, err
		}
		if first {
			res, first = r, false
		}
		last = r.LastOffset
		records = records[size:]
	}
	if first {
		return res, 0, fmt.Errorf("%w: no record batch", log.ErrInvalidRecord)
	}
	return res, last, nil
}

func (s *Server) handleProduce(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	resp := kmsg.NewPtrProduceResponse()
	resp.Topics = make([]kmsg.ProduceResponseTopic, 0, len(req.Topics))
	// acks=all: each appended partition's records are synced once every
	// partition is appended, so that one fsync wait covers them all.
	type synced struct {
		l      *log.Log
		next   int64
		ti, pi int
	}
	var syncs []synced
	names := make([]string, len(req.Topics))
	known := make([]bool, len(req.Topics))
	for ti, t := range req.Topics {
		names[ti], known[ti] = t.Topic, true
		if req.Version >= 13 {
			// v13 names the topic by its id (KIP-516).
			names[ti], known[ti] = s.topicByID(t.TopicID)
		}
	}
	refused := s.addToTransaction(ctx, req, names, known)
	for ti, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(t.Partitions))
		name, known := names[ti], known[ti]
		for pi, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = p.Partition, -1, -1, -1
			switch {
			case req.Version < 3:
				rp.ErrorCode = errUnsupportedVersion // only magic-2 batches are stored
			case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
				rp.ErrorCode = errInvalidRequiredAcks
			case !known:
				rp.ErrorCode = errUnknownTopicID
			case refused[log.TopicPartition{Topic: name, Partition: p.Partition}] != errNone:
				rp.ErrorCode = refused[log.TopicPartition{Topic: name, Partition: p.Partition}]
			default:
				l, err := s.dir.Partition(name, p.Partition)
				if err != nil {
					rp.ErrorCode = codeOf(err)
					break
				}
				res, last, err := s.produceRecords(l, p.Records)
				if err != nil {
					rp.ErrorCode, rp.ErrorMessage = codeOf(err), messageOf(err)
					recordErrors(&rp, err)
					if errors.Is(err, log.ErrInvalidTxnState) && transactional(p.Records) {
						// The partition is not in the transaction (KIP-890
						// part 1's verification).
						rp.ErrorCode = notInTxnCode(req.Version, 11)
					}
					break
				}
				rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = res.BaseOffset, res.LogAppendTime, l.LogStartOffset()
				if req.Acks == -1 {
					syncs = append(syncs, synced{l: l, next: last + 1, ti: ti, pi: pi})
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(syncs) > 0 {
		timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
		sctx, cancel := context.WithTimeout(ctx, max(timeout, time.Millisecond))
		defer cancel()
		// The partitions' fsyncs run at once: each waits on its own
		// file, so the request waits for the slowest, not their sum.
		errs := make([]error, len(syncs))
		var wg sync.WaitGroup
		for i, sy := range syncs[1:] {
			wg.Go(func() { errs[i+1] = sy.l.Sync(sctx, sy.next) })
		}
		errs[0] = syncs[0].l.Sync(sctx, syncs[0].next)
		wg.Wait()
		for i, sy := range syncs {
			if err := errs[i]; err != nil {
				rp := &resp.Topics[sy.ti].Partitions[sy.pi]
				rp.ErrorCode, rp.ErrorMessage = codeOf(err), messageOf(err)
			}
		}
	}
	if req.Acks == 0 {
		return nil, nil
	}
	return resp, nil
}

// fetchPartition reads one partition for a fetch ([log.Log.Fetch] at the
// request's isolation level): its response, the record bytes it holds (up
// to maxBytes, at least one batch when minOne), and the file slice holding
// them, which the caller releases: the records go out as they lie in the
// .log, never through memory. A read_committed fetch's slice ends below
// the last stable offset, as Kafka's read stops there, and comes with its
// aborted transactions. ctx bounds a read from remote storage.
func (s *Server) fetchPartition(ctx context.Context, name string, p kmsg.FetchRequestTopicPartition, iso log.IsolationLevel, maxBytes int, minOne bool) (kmsg.FetchResponseTopicPartition, int, *segment.Slice) {
	rp := newFetchPartition(p.Partition)
	l, err := s.dir.Partition(name, p.Partition)
	if err != nil {
		rp.ErrorCode = codeOf(err)
		return rp, 0, nil
	}
	res, err := l.Fetch(ctx, log.FetchParams{Offset: p.FetchOffset, MaxBytes: maxBytes, MinOneBatch: minOne, Isolation: iso})
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
	if err != nil {
		rp.ErrorCode = codeOf(err)
		return rp, 0, nil
	}
	sl := res.Slice
	if sl == nil {
		return rp, 0, nil
	}
	if iso == log.ReadCommitted {
		rp.AbortedTransactions = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, 0, len(res.AbortedTransactions))
		for _, t := range res.AbortedTransactions {
			at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			at.ProducerID, at.FirstOffset = t.ProducerID, t.FirstOffset
			rp.AbortedTransactions = append(rp.AbortedTransactions, at)
		}
	}
	return rp, int(sl.Size), sl
}

// newFetchPartition is a partition's fetch response with no records yet:
// empty record bytes, never null (Kafka sends an empty set; librdkafka
// before 2.1 refuses a null one).
func newFetchPartition(p int32) kmsg.FetchResponseTopicPartition {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition, rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = p, -1, -1, -1
	rp.RecordBatches = []byte{}
	return rp
}

// fetch answers a Fetch: the response and, aligned with its topics and
// partitions, the file slices of the records sent as they lie (nil where
// the records are in the response), which the caller releases.
func (s *Server) fetch(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, [][]*segment.Slice, error) {
	iso := log.IsolationLevel(req.IsolationLevel) // Kafka's values
	limit := int(s.cfg.FetchMaxBytes)
	if req.MaxBytes > 0 {
		limit = min(limit, int(req.MaxBytes))
	}
	deadline := time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	// Topic ids (v13+) name their topics once per request, not at every
	// round of the long poll.
	names := make([]string, len(req.Topics))
	known := make([]bool, len(req.Topics))
	for i, t := range req.Topics {
		names[i], known[i] = t.Topic, true
		if req.Version >= 13 {
			names[i], known[i] = s.topicByID(t.TopicID)
		}
	}
	for {
		changed := s.dir.Changed()
		resp := kmsg.NewPtrFetchResponse()
		resp.Topics = make([]kmsg.FetchResponseTopic, 0, len(req.Topics))
		slices := make([][]*segment.Slice, len(req.Topics))
		total, failed := 0, false
		for i, t := range req.Topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			rt.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(t.Partitions))
			slices[i] = make([]*segment.Slice, len(t.Partitions))
			for j, p := range t.Partitions {
				if !known[i] {
					rp := newFetchPartition(p.Partition)
					rp.ErrorCode, failed = errUnknownTopicID, true
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				partMax := limit - total
				if p.PartitionMaxBytes >= 0 {
					partMax = min(partMax, int(p.PartitionMaxBytes))
				}
				rp, n, sl := s.fetchPartition(ctx, names[i], p, iso, partMax, total == 0)
				total += n
				failed = failed || rp.ErrorCode != errNone
				slices[i][j] = sl
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		wait := time.Until(deadline)
		// A partition's error answers at once, as Kafka's delayed fetch
		// completes on one.
		if failed || total >= int(req.MinBytes) || total > 0 && req.MinBytes <= 0 || wait <= 0 {
			return resp, slices, nil
		}
		releaseSlices(slices)
		timer := time.NewTimer(wait)
		unpark := parked(ctx)
		select {
		case <-changed:
			timer.Stop()
		case <-timer.C:
			// One more read: what arrived at the deadline is sent.
		case <-ctx.Done():
			timer.Stop()
			return nil, nil, ctx.Err()
		}
		unpark()
		if time.Until(deadline) <= 0 {
			deadline = time.Now() // the next round answers whatever it finds
		}
	}
}

func releaseSlices(slices [][]*segment.Slice) {
	for _, ps := range slices {
		for _, sl := range ps {
			if sl != nil {
				sl.Release()
			}
		}
	}
}

// ListOffsets' special timestamps of tiered storage: the earliest local
// offset (v8+, KIP-405) and the latest tiered one (v9+, KIP-1005).
const (
	earliestLocalTimestamp int64 = -4
	latestTieredTimestamp  int64 = -5
	// earliestPendingUploadTimestamp (KIP-1023, ListOffsets v11) asks
	// for the first offset not yet copied to remote storage.
	earliestPendingUploadTimestamp int64 = -6
)

// earliestPendingUpload answers ListOffsets' -6 as Kafka's UnifiedLog
// does: for a partition without remote storage, offset and epoch -1;
// with remote storage but nothing copied yet, the earliest offset if no
// segment was removed locally (else -1); otherwise the offset after the
// last one copied (at least the log start offset) with its epoch.
func earliestPendingUpload(l *log.Log) (offset, timestamp int64, epoch int32) {
	if !l.Config().RemoteStorageEnable {
		return -1, -1, -1
	}
	tiered := l.HighestTieredOffset()
	if tiered < 0 {
		if l.LocalLogStartOffset() != l.LogStartOffset() {
			return -1, -1, -1
		}
		ot, ok, err := l.OffsetForTimestamp(log.EarliestTimestamp)
		if err != nil || !ok {
			return -1, -1, -1
		}
		epoch = -1
		if e, ok := l.EpochForOffset(ot.Offset); ok {
			epoch = e
		}
		return ot.Offset, ot.Timestamp, epoch
	}
	offset, epoch = max(tiered+1, l.LogStartOffset()), -1
	if e, ok := l.EpochForOffset(offset); ok {
		epoch = e
	}
	return offset, -1, epoch
}

func (s *Server) handleListOffsets(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ListOffsetsRequest)
	resp := kmsg.NewPtrListOffsetsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Timestamp, rp.Offset, rp.LeaderEpoch = p.Partition, -1, -1, -1
			l, err := s.dir.Partition(t.Topic, p.Partition)
			if err != nil {
				rp.ErrorCode = codeOf(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			switch {
			case p.Timestamp == log.LatestTimestamp && req.IsolationLevel == 1:
				rp.Offset, rp.LeaderEpoch = l.LastStableOffset(), l.LeaderEpoch()
			case p.Timestamp == log.LatestTimestamp:
				rp.Offset, rp.LeaderEpoch = l.HighWatermark(), l.LeaderEpoch()
			case p.Timestamp == earliestLocalTimestamp && req.Version >= 8:
				// KIP-405: the first local offset, below which a tiered
				// partition's records are in remote storage.
				rp.Offset = l.LocalLogStartOffset()
				if e, ok := l.EpochForOffset(rp.Offset); ok {
					rp.LeaderEpoch = e
				}
			case p.Timestamp == latestTieredTimestamp && req.Version >= 9:
				// KIP-1005: the last offset copied to remote storage, -1
				// for none (as Kafka answers for a partition not tiered).
				rp.Offset = l.HighestTieredOffset()
				if e, ok := l.EpochForOffset(rp.Offset); ok && rp.Offset >= 0 {
					rp.LeaderEpoch = e
				}
			case p.Timestamp == earliestPendingUploadTimestamp && req.Version >= 11:
				rp.Offset, rp.Timestamp, rp.LeaderEpoch = earliestPendingUpload(l)
			case p.Timestamp < log.MaxTimestamp:
				rp.ErrorCode = errUnsupportedVersion // a special timestamp the version does not have
			default:
				ot, ok, err := l.OffsetForTimestamp(p.Timestamp)
				switch {
				case err != nil:
					rp.ErrorCode = codeOf(err)
				case ok:
					rp.Offset, rp.Timestamp = ot.Offset, ot.Timestamp
					// The epoch of the batch found, as Kafka answers (of
					// the earliest epoch for EarliestTimestamp).
					if e, ok := l.EpochForOffset(ot.Offset); ok {
						rp.LeaderEpoch = e
					}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleInitProducerID(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		s.initTransactional(ctx, req, resp)
		return resp, nil
	}
	id, err := s.dir.AllocateProducerID(ctx)
	if err != nil {
		resp.ErrorCode = codeOf(err)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp, nil
}

func (s *Server) handleCreateTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := kmsg.NewPtrCreateTopicsResponse()
	s.createMu.Lock()
	defer s.createMu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Topic, -1, -1
		parts := t.NumPartitions
		if parts == -1 {
			parts = s.cfg.NumPartitions
		}
		props := map[string]string{}
		for _, c := range t.Configs {
			if c.Value != nil {
				props[c.Name] = *c.Value
			}
		}
		var err error
		var td log.TopicDescription
		var aerr *assignmentError
		if len(t.ReplicaAssignment) > 0 {
			// A name refused or taken is refused as such first, as
			// Kafka's controller does.
			parts = 1
			if _, derr := s.dir.DescribeTopic(t.Topic); log.ValidateTopicName(t.Topic) == nil && derr != nil {
				parts, aerr = s.topicAssignment(t)
			}
		}
		switch {
		case aerr != nil:
			rt.ErrorCode, err = aerr.code, aerr
		case parts <= 0:
			rt.ErrorCode, err = errInvalidPartitions, fmt.Errorf("%d partitions", parts)
		case len(t.ReplicaAssignment) == 0 && t.ReplicationFactor != -1 && t.ReplicationFactor != 1: // a cluster's route checks it first
			rt.ErrorCode, err = errInvalidReplicationFactor, fmt.Errorf("replication factor %d on a server of one broker", t.ReplicationFactor)
		case req.ValidateOnly:
			if err = log.ValidateTopicName(t.Topic); err == nil {
				if _, derr := s.dir.DescribeTopic(t.Topic); derr == nil {
					err = log.ErrTopicExists
				} else if log.IsInternalTopic(t.Topic) {
					err = fmt.Errorf("%w: %s is created by its coordinator, not by clients", log.ErrInternalTopic, t.Topic)
				} else if _, _, perr := s.dir.Config().DefaultTopic.WithProperties(props); perr != nil {
					err = perr
				} else {
					err = s.partitionRoomLocked(parts)
				}
			}
			rt.ErrorCode = codeOf(err)
		default:
			// A name refused or taken is refused as such by CreateTopic,
			// before the partition limit.
			_, derr := s.dir.DescribeTopic(t.Topic)
			if log.ValidateTopicName(t.Topic) == nil && derr != nil {
				err = s.partitionRoomLocked(parts)
			}
			if err == nil {
				td, err = s.dir.CreateTopic(ctx, t.Topic, parts, props)
			}
			rt.ErrorCode = codeOf(err)
		}
		if err != nil {
			rt.ErrorMessage = messageOf(err)
		} else {
			rt.NumPartitions, rt.ReplicationFactor = parts, 1
			if !req.ValidateOnly {
				rt.TopicID = topicID(td.ID)
				for k, v := range td.Config.Properties() {
					c := kmsg.NewCreateTopicsResponseTopicConfig()
					c.Name, c.Value = k, &v
					_, overridden := td.Overrides[k]
					c.Source = 5 // DEFAULT_CONFIG
					if overridden {
						c.Source = 1 // DYNAMIC_TOPIC_CONFIG
					}
					rt.Configs = append(rt.Configs, c)
				}
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleDeleteTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := kmsg.NewPtrDeleteTopicsResponse()
	type target struct {
		name string
		id   [16]byte
	}
	var targets []target
	for _, n := range req.TopicNames {
		targets = append(targets, target{name: n})
	}
	for _, t := range req.Topics {
		if t.Topic != nil {
			targets = append(targets, target{name: *t.Topic})
		} else {
			targets = append(targets, target{id: t.TopicID})
		}
	}
	for _, tg := range targets {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		name, id := tg.name, tg.id
		var err error
		if name == "" {
			var ok bool
			if name, ok = s.topicByID(id); !ok {
				rt.TopicID, rt.ErrorCode = id, errUnknownTopicID
				resp.Topics = append(resp.Topics, rt)
				continue
			}
		}
		if td, derr := s.dir.DescribeTopic(name); derr == nil {
			id = topicID(td.ID)
		}
		err = s.dir.DeleteTopic(ctx, name)
		rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = &name, id, codeOf(err), messageOf(err)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleCreatePartitions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := kmsg.NewPtrCreatePartitionsResponse()
	s.createMu.Lock()
	defer s.createMu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		td, err := s.dir.DescribeTopic(t.Topic)
		switch {
		case err != nil:
		case td.Internal:
			err = fmt.Errorf("%w: %s keeps its partition count", log.ErrInternalTopic, t.Topic)
		case t.Count <= td.Partitions:
			rt.ErrorCode = errInvalidPartitions
			err = fmt.Errorf("topic %s has %d partitions; the count must be larger", t.Topic, td.Partitions)
		default:
			if len(t.Assignment) > 0 {
				if aerr := s.partitionsAssignment(t, td.Partitions); aerr != nil {
					rt.ErrorCode, err = aerr.code, aerr
					break
				}
			}
			if err = s.partitionRoomLocked(t.Count - td.Partitions); err == nil && !req.ValidateOnly {
				err = s.dir.AddPartitions(ctx, t.Topic, t.Count)
			}
		}
		if rt.ErrorCode == errNone {
			rt.ErrorCode = codeOf(err)
		}
		rt.ErrorMessage = messageOf(err)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *Server) handleDeleteRecords(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteRecordsRequest)
	resp := kmsg.NewPtrDeleteRecordsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition = p.Partition
			l, err := s.dir.Partition(t.Topic, p.Partition)
			if err == nil {
				off := p.Offset
				if off == -1 { // -1 deletes up to the high watermark
					off = l.HighWatermark()
				}
				// The log refuses an internal topic (before the range:
				// Kafka's order), an offset below 0 or past the high
				// watermark.
				rp.LowWatermark, err = l.DeleteRecordsBefore(off)
			}
			rp.ErrorCode = codeOf(err)
			if err != nil {
				rp.LowWatermark = -1
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// handleDescribeCluster answers with this one broker; v2's
// IncludeFencedBrokers changes nothing, as it is never fenced (IsFenced
// false).
func (s *Server) handleDescribeCluster(ctx context.Context, _ kmsg.Request) (kmsg.Response, error) {
	resp := kmsg.NewPtrDescribeClusterResponse()
	node, host, port := s.broker(ctx)
	resp.ClusterID, resp.ControllerID = s.dir.ClusterID(), node
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = node, host, port
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{b}
	return resp, nil
}

// recordErrors gives a partition refused for some of its records the
// records' errors (KIP-467, Produce v8+) and Kafka's message, as Kafka's
// broker answers a RecordValidationException.
func recordErrors(rp *kmsg.ProduceResponseTopicPartition, err error) {
	var rve *log.RecordValidationError
	if !errors.As(err, &rve) {
		return
	}
	msg := rve.Message()
	rp.ErrorMessage = &msg
	for _, r := range rve.Records {
		e := kmsg.NewProduceResponseTopicPartitionErrorRecord()
		m := r.Message
		e.RelativeOffset, e.ErrorMessage = r.Index, &m
		rp.ErrorRecords = append(rp.ErrorRecords, e)
	}
}
