package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	kllog "github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Share groups (KIP-932) over the wire, request by request with kmsg:
// membership (ShareGroupHeartbeat, ShareGroupDescribe), share sessions
// (ShareFetch's epochs, their limit, their end), acknowledgements of every
// type and the offsets APIs, and clients that misbehave.

// shareEnv is a server, a client for its requests and a topic.
type shareEnv struct {
	t     *testing.T
	addr  string
	cl    *kgo.Client
	topic string
	id    [16]byte
	parts int32
}

func newShareEnv(t *testing.T, parts int32, configure func(*server.Config)) *shareEnv {
	t.Helper()
	return newShareEnvAt(t, servertest.StartInMemory(t, configure).Addr, parts)
}

// newShareEnvAt is newShareEnv for the server at addr.
func newShareEnvAt(t *testing.T, addr string, parts int32) *shareEnv {
	t.Helper()
	cl := client(t, addr, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	e := &shareEnv{t: t, addr: addr, cl: cl, topic: "queue", parts: parts}
	createTopic(t, cl, e.topic, parts)
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(e.topic)
	md.Topics = []kmsg.MetadataRequestTopic{mt}
	resp, err := md.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	e.id = resp.Topics[0].TopicID
	coordinatorReady(t, cl, "share-env", 0)
	return e
}

// produce produces n records to partition p, one batch each.
func (e *shareEnv) produce(p int32, n int) {
	e.t.Helper()
	for i := range n {
		r := &kgo.Record{Topic: e.topic, Partition: p, Value: fmt.Appendf(nil, "v%d", i)}
		require.NoError(e.t, e.cl.ProduceSync(context.Background(), r).FirstErr())
	}
}

// earliest sets the group's start offset to 0 in every partition (the
// group must have no members): share groups start at the log's end
// otherwise (share.auto.offset.reset's default, latest).
func (e *shareEnv) earliest(group string) {
	e.t.Helper()
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = group
	rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	rt.Topic = e.topic
	for p := range e.parts {
		rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
		rp.Partition, rp.StartOffset = p, 0
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), e.cl)
	require.NoError(e.t, err)
	require.Zero(e.t, resp.ErrorCode, "%v", resp.ErrorMessage)
	for _, p := range resp.Topics[0].Partitions {
		require.Zero(e.t, p.ErrorCode, "%v", p.ErrorMessage)
	}
	require.Equal(e.t, e.id, resp.Topics[0].TopicID)
}

// heartbeat sends a ShareGroupHeartbeat.
func (e *shareEnv) heartbeat(cl *kgo.Client, group, member string, epoch int32, topics []string) *kmsg.ShareGroupHeartbeatResponse {
	e.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = group, member, epoch, topics
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(e.t, err)
	return resp
}

// join makes member join group, subscribed to the topic.
func (e *shareEnv) join(group, member string) *kmsg.ShareGroupHeartbeatResponse {
	e.t.Helper()
	resp := e.heartbeat(e.cl, group, member, 0, []string{e.topic})
	require.Zero(e.t, resp.ErrorCode, "%v", resp.ErrorMessage)
	return resp
}

// ack is one acknowledgement batch.
type ack struct {
	first, last int64
	types       []int8
}

// shareFetch is a ShareFetch of partitions (nil: none) with
// acknowledgements per partition.
type shareFetch struct {
	epoch    int32
	parts    []int32
	forget   []int32
	acks     map[int32][]ack
	maxWait  int32
	minBytes int32
	records  int32
	renew    bool
}

func (e *shareEnv) fetch(cl *kgo.Client, group, member string, f shareFetch) *kmsg.ShareFetchResponse {
	e.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = kmsg.StringPtr(group), kmsg.StringPtr(member)
	req.ShareSessionEpoch, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = f.epoch, f.maxWait, f.minBytes, 1<<20
	req.MaxRecords, req.BatchSize, req.IsRenewAck = f.records, f.records, f.renew
	if req.MaxRecords == 0 {
		req.MaxRecords, req.BatchSize = 500, 500
	}
	parts := slices.Clone(f.parts)
	for p := range f.acks {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = e.id
		for _, p := range parts {
			rp := kmsg.NewShareFetchRequestTopicPartition()
			rp.Partition = p
			for _, a := range f.acks[p] {
				b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
				b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.first, a.last, a.types
				rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	if len(f.forget) > 0 {
		ft := kmsg.NewShareFetchRequestForgottenTopicsData()
		ft.TopicID, ft.Partitions = e.id, f.forget
		req.ForgottenTopicsData = append(req.ForgottenTopicsData, ft)
	}
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(e.t, err)
	return resp
}

func (e *shareEnv) acknowledge(cl *kgo.Client, group, member string, epoch int32, renew bool, acks map[int32][]ack) *kmsg.ShareAcknowledgeResponse {
	e.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch, req.IsRenewAck = kmsg.StringPtr(group), kmsg.StringPtr(member), epoch, renew
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = e.id
	for p, as := range acks {
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.Partition = p
		for _, a := range as {
			b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
			b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = a.first, a.last, a.types
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(e.t, err)
	return resp
}

// acquired lists the offsets a response acquired in partition p, with
// their delivery counts.
func acquired(resp *kmsg.ShareFetchResponse, p int32) map[int64]int16 {
	out := map[int64]int16{}
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			if rp.Partition != p {
				continue
			}
			for _, a := range rp.AcquiredRecords {
				for o := a.FirstOffset; o <= a.LastOffset; o++ {
					out[o] = a.DeliveryCount
				}
			}
		}
	}
	return out
}

// partitionOf is a response's partition p, nil when absent.
func partitionOf(resp *kmsg.ShareFetchResponse, p int32) *kmsg.ShareFetchResponseTopicPartition {
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if resp.Topics[i].Partitions[j].Partition == p {
				return &resp.Topics[i].Partitions[j]
			}
		}
	}
	return nil
}

// startOffsets are the group's start offsets by partition
// (DescribeShareGroupOffsets of every partition it has a state for).
func (e *shareEnv) startOffsets(group string) (map[int32]int64, int16) {
	e.t.Helper()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = group
	req.Groups = append(req.Groups, rg)
	resp, err := req.RequestWith(context.Background(), e.cl)
	require.NoError(e.t, err)
	require.Len(e.t, resp.Groups, 1)
	out := map[int32]int64{}
	for _, t := range resp.Groups[0].Topics {
		require.Equal(e.t, e.topic, t.Topic)
		require.Equal(e.t, e.id, t.TopicID)
		for _, p := range t.Partitions {
			require.Zero(e.t, p.ErrorCode)
			out[p.Partition] = p.StartOffset
		}
	}
	return out, resp.Groups[0].ErrorCode
}

const (
	ackGap     int8 = 0
	ackAccept  int8 = 1
	ackRelease int8 = 2
	ackReject  int8 = 3
	ackRenew   int8 = 4
)

// TestShareGroupMembership: ShareGroupHeartbeat joins two members, who
// share the topic's two partitions (the simple assignor gives each member
// the partitions it can read), with their epochs and the heartbeat
// interval; ShareGroupDescribe and ListGroups show the group; a stale
// epoch is fenced; a leave empties the group, which DeleteGroups deletes.
func TestShareGroupMembership(t *testing.T) {
	e := newShareEnv(t, 2, nil)
	a := e.join("g", "member-a")
	require.Equal(t, "member-a", *a.MemberID)
	require.Positive(t, a.MemberEpoch)
	require.Positive(t, a.HeartbeatIntervalMillis)
	require.NotNil(t, a.Assignment)
	require.Len(t, a.Assignment.TopicPartitions, 1)
	require.Equal(t, e.id, a.Assignment.TopicPartitions[0].TopicID)
	require.ElementsMatch(t, []int32{0, 1}, a.Assignment.TopicPartitions[0].Partitions)
	b := e.join("g", "member-b")
	require.Greater(t, b.MemberEpoch, a.MemberEpoch)

	fenced := e.heartbeat(e.cl, "g", "member-a", a.MemberEpoch+100, nil)
	require.Equal(t, kerr.FencedMemberEpoch.Code, fenced.ErrorCode)

	desc := kmsg.NewPtrShareGroupDescribeRequest()
	desc.GroupIDs = []string{"g", "nope"}
	dr, err := desc.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Len(t, dr.Groups, 2)
	g := dr.Groups[0]
	require.Zero(t, g.ErrorCode)
	require.Equal(t, "simple", g.Assignor)
	require.Len(t, g.Members, 2)
	for _, m := range g.Members {
		require.Equal(t, []string{e.topic}, m.SubscribedTopicNames)
		require.NotEmpty(t, m.ClientHost)
		for _, tp := range m.Assignment.TopicPartitions {
			require.Equal(t, e.topic, tp.Topic)
			require.Equal(t, e.id, tp.TopicID)
		}
	}
	require.Equal(t, kerr.GroupIDNotFound.Code, dr.Groups[1].ErrorCode)

	list := kmsg.NewPtrListGroupsRequest()
	list.TypesFilter = []string{"share"}
	lr, err := list.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Len(t, lr.Groups, 1)
	require.Equal(t, "share", lr.Groups[0].GroupType)

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g"}
	delr, err := del.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Equal(t, kerr.NonEmptyGroup.Code, delr.Groups[0].ErrorCode)
	for _, m := range []string{"member-a", "member-b"} {
		resp := e.heartbeat(e.cl, "g", m, -1, nil)
		require.Zero(t, resp.ErrorCode, "%v", resp.ErrorMessage)
	}
	delr, err = del.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Zero(t, delr.Groups[0].ErrorCode, "%v", delr.Groups[0].ErrorMessage)
	lr, err = list.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Empty(t, lr.Groups)
}

// TestShareFetchAcknowledgements: records acquired by ShareFetch, with
// their batches and AcquiredRecords, acknowledged with every type, in
// ShareFetch and in ShareAcknowledge: accepted and rejected records are
// never delivered again, released ones come again with delivery count 2,
// gaps are done, renewals need IsRenewAck; the start offset moves as
// records are done (DescribeShareGroupOffsets), and the offsets APIs
// refuse a group with members.
func TestShareFetchAcknowledgements(t *testing.T) {
	e := newShareEnv(t, 1, nil)
	e.produce(0, 10)
	e.earliest("g")
	e.join("g", "m")

	f := e.fetch(e.cl, "g", "m", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 5000, minBytes: 1})
	require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
	require.Equal(t, int32(30000), f.AcquisitionLockTimeoutMillis)
	got := acquired(f, 0)
	require.Len(t, got, 10)
	for o, n := range got {
		require.Equal(t, int16(1), n, "offset %d", o)
	}
	rp := partitionOf(f, 0)
	require.NotEmpty(t, rp.Records)
	// The records parse as the batches produced.
	var batches int
	for rest := rp.Records; len(rest) > 0; batches++ {
		var b kmsg.RecordBatch
		require.NoError(t, b.ReadFrom(rest))
		rest = rest[12+b.Length:]
	}
	require.Equal(t, 10, batches)

	// Accept 0-2, release 3, reject 4, gap 5, renew without IsRenewAck
	// refused as a whole for its partition.
	f = e.fetch(e.cl, "g", "m", shareFetch{epoch: 1, acks: map[int32][]ack{0: {{0, 2, []int8{ackAccept}}, {3, 5, []int8{ackRelease, ackReject, ackGap}}}}})
	require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
	require.Zero(t, partitionOf(f, 0).AcknowledgeErrorCode, "%v", partitionOf(f, 0).AcknowledgeErrorMessage)
	require.Equal(t, map[int64]int16{3: 2}, acquired(f, 0), "the released record comes again, and only it")

	offs, code := e.startOffsets("g")
	require.Zero(t, code)
	require.Equal(t, map[int32]int64{0: 3}, offs)

	ar := e.acknowledge(e.cl, "g", "m", 2, false, map[int32][]ack{0: {{6, 6, []int8{ackRenew}}}})
	require.Zero(t, ar.ErrorCode)
	require.Equal(t, kerr.InvalidRequest.Code, ar.Topics[0].Partitions[0].ErrorCode)
	ar = e.acknowledge(e.cl, "g", "m", 3, true, map[int32][]ack{0: {{6, 6, []int8{ackRenew}}}})
	require.Zero(t, ar.Topics[0].Partitions[0].ErrorCode, "%v", ar.Topics[0].Partitions[0].ErrorMessage)
	require.Equal(t, int32(30000), ar.AcquisitionLockTimeoutMillis)
	// A renewal in a ShareFetch acquires nothing.
	f = e.fetch(e.cl, "g", "m", shareFetch{epoch: 4, renew: true, acks: map[int32][]ack{0: {{7, 7, []int8{ackRenew}}}}})
	require.Zero(t, partitionOf(f, 0).AcknowledgeErrorCode)
	require.Empty(t, acquired(f, 0))

	// Accepted and rejected records are not acquired again: acknowledge
	// an accepted one again and it is refused.
	ar = e.acknowledge(e.cl, "g", "m", 5, false, map[int32][]ack{0: {{0, 0, []int8{ackAccept}}, {4, 4, []int8{ackAccept}}}})
	require.Equal(t, int16(121), ar.Topics[0].Partitions[0].ErrorCode) // INVALID_RECORD_STATE

	ar = e.acknowledge(e.cl, "g", "m", 6, false, map[int32][]ack{0: {{3, 3, []int8{ackAccept}}, {6, 9, []int8{ackAccept}}}})
	require.Zero(t, ar.Topics[0].Partitions[0].ErrorCode, "%v", ar.Topics[0].Partitions[0].ErrorMessage)
	offs, _ = e.startOffsets("g")
	require.Equal(t, map[int32]int64{0: 10}, offs)

	// The offsets APIs need the group empty.
	alter := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	alter.GroupID = "g"
	at := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	at.Topic = e.topic
	ap := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
	at.Partitions = append(at.Partitions, ap)
	alter.Topics = append(alter.Topics, at)
	altr, err := alter.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Equal(t, kerr.NonEmptyGroup.Code, altr.ErrorCode)
	dreq := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	dreq.GroupID = "g"
	dt := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
	dt.Topic = e.topic
	dreq.Topics = append(dreq.Topics, dt)
	dresp, err := dreq.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Equal(t, kerr.NonEmptyGroup.Code, dresp.ErrorCode)

	// Once it left: back to 5, then the state deleted.
	require.Zero(t, e.heartbeat(e.cl, "g", "m", -1, nil).ErrorCode)
	ap.StartOffset = 5
	at.Partitions[0] = ap
	altr, err = alter.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Zero(t, altr.ErrorCode)
	require.Zero(t, altr.Topics[0].Partitions[0].ErrorCode)
	offs, _ = e.startOffsets("g")
	require.Equal(t, map[int32]int64{0: 5}, offs)
	dresp, err = dreq.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Zero(t, dresp.ErrorCode)
	require.Zero(t, dresp.Topics[0].ErrorCode, "%v", dresp.Topics[0].ErrorMessage)
	offs, _ = e.startOffsets("g")
	require.Empty(t, offs)
	_, code = e.startOffsets("never")
	require.Equal(t, kerr.GroupIDNotFound.Code, code)
}

// TestShareSessions: KIP-932's share session rules. Epoch 0 opens a
// session (acknowledgements refused there); the next request carries the
// next epoch, any other is INVALID_SHARE_SESSION_EPOCH; a member without
// a session gets SHARE_SESSION_NOT_FOUND; ShareAcknowledge at epoch 0 is
// refused; -1 closes the session and gives back the member's records, to
// another member, delivered a second time; so does a dropped connection;
// a member not in the group is UNKNOWN_MEMBER_ID; forgotten partitions
// leave the session.
func TestShareSessions(t *testing.T) {
	e := newShareEnv(t, 2, nil)
	e.produce(0, 4)
	e.produce(1, 4)
	e.earliest("g")
	e.join("g", "a")
	e.join("g", "b")

	f := e.fetch(e.cl, "g", "stranger", shareFetch{epoch: 0, parts: []int32{0}})
	require.Equal(t, kerr.UnknownMemberID.Code, f.ErrorCode)
	f = e.fetch(e.cl, "nogroup", "a", shareFetch{epoch: 0, parts: []int32{0}})
	require.Equal(t, kerr.GroupIDNotFound.Code, f.ErrorCode)
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 1, parts: []int32{0}})
	require.Equal(t, kerr.ShareSessionNotFound.Code, f.ErrorCode)
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 0, parts: []int32{0}, acks: map[int32][]ack{0: {{0, 0, []int8{ackAccept}}}}})
	require.Equal(t, kerr.InvalidRequest.Code, f.ErrorCode)
	ar := e.acknowledge(e.cl, "g", "a", 0, false, map[int32][]ack{0: {{0, 0, []int8{ackAccept}}}})
	require.Equal(t, kerr.InvalidShareSessionEpoch.Code, ar.ErrorCode)

	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 5000, minBytes: 1})
	require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
	require.Len(t, acquired(f, 0), 4)
	for _, bad := range []int32{0 + 2, 7, -2} {
		f = e.fetch(e.cl, "g", "a", shareFetch{epoch: bad})
		require.Equal(t, kerr.InvalidShareSessionEpoch.Code, f.ErrorCode, "epoch %d", bad)
	}
	ar = e.acknowledge(e.cl, "g", "a", 3, false, nil)
	require.Equal(t, kerr.InvalidShareSessionEpoch.Code, ar.ErrorCode)
	// Epoch 1, adding partition 1: its records come.
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 1, parts: []int32{1}, maxWait: 5000, minBytes: 1})
	require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
	require.Len(t, acquired(f, 1), 4)
	// Epoch 2 forgets partition 1; b reads nothing of a's meanwhile.
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 2, forget: []int32{1}})
	require.Zero(t, f.ErrorCode)
	fb := e.fetch(e.cl, "g", "b", shareFetch{epoch: 0, parts: []int32{0, 1}})
	require.Zero(t, fb.ErrorCode)
	require.Empty(t, acquired(fb, 0))
	require.Empty(t, acquired(fb, 1))
	e.produce(1, 1)
	// a's session no longer holds partition 1: the new record is b's.
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 3})
	require.Empty(t, acquired(f, 1))
	fb = e.fetch(e.cl, "g", "b", shareFetch{epoch: 1, maxWait: 5000, minBytes: 1})
	require.Equal(t, map[int64]int16{4: 1}, acquired(fb, 1))

	// Closing a's session (acknowledging one record as it closes) gives
	// back the others: b gets them, delivered a second time.
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: -1, acks: map[int32][]ack{0: {{0, 0, []int8{ackAccept}}}}})
	require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
	require.Zero(t, partitionOf(f, 0).AcknowledgeErrorCode)
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 4})
	require.Equal(t, kerr.ShareSessionNotFound.Code, f.ErrorCode)
	fb = e.fetch(e.cl, "g", "b", shareFetch{epoch: 2, maxWait: 5000, minBytes: 1})
	require.Equal(t, map[int64]int16{1: 2, 2: 2, 3: 2}, acquired(fb, 0))
	require.Equal(t, map[int64]int16{0: 2, 1: 2, 2: 2, 3: 2}, acquired(fb, 1))

	// b's connection drops: what it held goes back, to a.
	cb := client(t, e.addr)
	e.produce(0, 1) // offset 4
	fb = e.fetch(e.cl, "g", "b", shareFetch{epoch: 3, maxWait: 5000, minBytes: 1})
	require.Equal(t, map[int64]int16{4: 1}, acquired(fb, 0))
	// b opens a new session on its own connection, then that closes.
	fb = e.fetch(cb, "g", "b", shareFetch{epoch: 0, parts: []int32{0}})
	require.Zero(t, fb.ErrorCode)
	// The new session replaced b's first (its records went back), and may
	// have acquired them again at once: one more delivery each.
	again := acquired(fb, 0)
	cb.Close()
	// The drop closes b's session (which b's next epoch finds gone)...
	epoch := int32(1)
	eventually(t, func() bool {
		fb = e.fetch(e.cl, "g", "b", shareFetch{epoch: epoch})
		epoch++
		return fb.ErrorCode == kerr.ShareSessionNotFound.Code
	}, "b's session outlived its connection")
	// ... and gives back b's records.
	all := map[int32]map[int64]int16{0: {}, 1: {}}
	eventually(t, func() bool {
		// Epoch 0 each time: a session of its own, opened again.
		f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 0, parts: []int32{0, 1}})
		require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
		for _, rt := range f.Topics {
			for _, rp := range rt.Partitions {
				require.Zero(t, rp.ErrorCode, "partition %d: %v", rp.Partition, rp.ErrorMessage)
			}
		}
		for p := range all {
			for o, n := range acquired(f, p) {
				all[p][o] = n
			}
		}
		t.Logf("a acquired %v of partition 0, %v of partition 1", acquired(f, 0), acquired(f, 1))
		return len(all[0]) == 4 && len(all[1]) == 5
	}, "a got %v of what b's dropped connection held", all)
	want0 := map[int64]int16{1: 3, 2: 3, 3: 3, 4: 2}
	for o, n := range again {
		require.Equal(t, want0[o], n, "offset %d acquired again by b's second session", o)
		want0[o]++
	}
	require.Equal(t, want0, all[0])
	require.Equal(t, map[int64]int16{0: 3, 1: 3, 2: 3, 3: 3, 4: 2}, all[1])

	// A member that leaves loses its session.
	require.Zero(t, e.heartbeat(e.cl, "g", "a", -1, nil).ErrorCode)
	e.join("g", "a")
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 1})
	require.Equal(t, kerr.ShareSessionNotFound.Code, f.ErrorCode)
}

// TestShareSessionLimit: at MaxShareSessions (group.share.max.share.sessions)
// sessions a new one is refused with SHARE_SESSION_LIMIT_REACHED (after
// the request's MaxWaitMillis); a member
// opening its session again does not count twice; once one closes, the
// refused member opens its own.
func TestShareSessionLimit(t *testing.T) {
	e := newShareEnv(t, 1, func(c *server.Config) { c.MaxShareSessions = 2 })
	for _, m := range []string{"a", "b", "c"} {
		e.join("g", m)
	}
	for _, m := range []string{"a", "b", "a", "b"} {
		f := e.fetch(e.cl, "g", m, shareFetch{epoch: 0, parts: []int32{0}})
		require.Zero(t, f.ErrorCode, "member %s: %v", m, f.ErrorMessage)
	}
	// Refused after its MaxWaitMillis, as Kafka refuses it.
	f := e.fetch(e.cl, "g", "c", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 100})
	require.Equal(t, kerr.ShareSessionLimitReached.Code, f.ErrorCode)
	ar := e.acknowledge(e.cl, "g", "a", -1, false, nil)
	require.Zero(t, ar.ErrorCode, "%v", ar.ErrorMessage)
	f = e.fetch(e.cl, "g", "c", shareFetch{epoch: 0, parts: []int32{0}})
	require.Zero(t, f.ErrorCode, "%v", f.ErrorMessage)
}

// TestShareFetchMisbehaving: a client that names 50,000 partitions that do
// not exist (a topic id no topic has, partitions past the topic's count)
// gets an error for each, and its session keeps none of them; acks of
// offsets never delivered, of someone else's records, out of order or of
// unknown types are refused with INVALID_RECORD_STATE or INVALID_REQUEST
// and change nothing; a ShareFetch waiting for records ends at its
// MaxWaitMillis with nothing, and at once when records come.
func TestShareFetchMisbehaving(t *testing.T) {
	e := newShareEnv(t, 1, nil)
	e.produce(0, 3)
	e.earliest("g")
	e.join("g", "a")
	e.join("g", "b")

	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.MaxBytes, req.MaxRecords = kmsg.StringPtr("g"), kmsg.StringPtr("a"), 1<<20, 500
	bogus := kmsg.NewShareFetchRequestTopic()
	bogus.TopicID = [16]byte{1, 2, 3}
	real := kmsg.NewShareFetchRequestTopic()
	real.TopicID = e.id
	for p := range int32(25000) {
		rp := kmsg.NewShareFetchRequestTopicPartition()
		rp.Partition = p
		bogus.Partitions = append(bogus.Partitions, rp)
		rp.Partition = p + 1 // the topic has partition 0 only
		real.Partitions = append(real.Partitions, rp)
	}
	req.Topics = []kmsg.ShareFetchRequestTopic{bogus, real}
	resp, err := req.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Zero(t, resp.ErrorCode, "%v", resp.ErrorMessage)
	codes := map[int16]int{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes[p.ErrorCode]++
		}
	}
	require.Equal(t, map[int16]int{kerr.UnknownTopicID.Code: 25000, kerr.UnknownTopicOrPartition.Code: 25000}, codes)
	// The session holds nothing: its next fetch names no partition.
	f := e.fetch(e.cl, "g", "a", shareFetch{epoch: 1})
	require.Zero(t, f.ErrorCode)
	require.Empty(t, f.Topics)

	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 2, parts: []int32{0}, maxWait: 5000, minBytes: 1})
	require.Len(t, acquired(f, 0), 3)
	fb := e.fetch(e.cl, "g", "b", shareFetch{epoch: 0, parts: []int32{0}})
	require.Zero(t, fb.ErrorCode)
	for i, acks := range []map[int32][]ack{
		{0: {{5, 9, []int8{ackAccept}}}},                                 // never delivered
		{0: {{0, 2, []int8{ackAccept}}}},                                 // a's records
		{0: {{2, 2, []int8{ackAccept}}, {0, 1, []int8{ackAccept}}}},      // out of order
		{0: {{0, 0, []int8{9}}}},                                         // unknown type
		{0: {{0, 2, []int8{ackAccept, ackAccept}}}},                      // types do not match the range
		{0: {{-5, -1, []int8{ackAccept}}}},                               // negative offsets
		{0: {{1, 0, []int8{ackAccept}}}},                                 // backwards
		{7: {{0, 0, []int8{ackAccept}}}, 0: {{0, 0, []int8{ackAccept}}}}, // a partition the topic lacks; a's record
	} {
		ar := e.acknowledge(e.cl, "g", "b", int32(1+i), false, acks)
		require.Zero(t, ar.ErrorCode, "case %d: %v", i, ar.ErrorMessage)
		for _, p := range ar.Topics[0].Partitions {
			want := kerr.InvalidRequest.Code
			switch {
			case p.Partition == 7:
				want = kerr.UnknownTopicOrPartition.Code
			case i <= 1 || i == 7:
				want = kerr.InvalidRecordState.Code
			}
			require.Equal(t, want, p.ErrorCode, "case %d partition %d: %v", i, p.Partition, p.ErrorMessage)
		}
	}
	// Nothing changed: a accepts its three.
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 3, acks: map[int32][]ack{0: {{0, 2, []int8{ackAccept}}}}})
	require.Zero(t, partitionOf(f, 0).AcknowledgeErrorCode, "%v", partitionOf(f, 0).AcknowledgeErrorMessage)

	// A long poll that nothing answers ends empty at its wait.
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 4, maxWait: 300, minBytes: 1})
	require.Zero(t, f.ErrorCode)
	require.Empty(t, acquired(f, 0))
	// One that records answer returns them.
	done := make(chan *kmsg.ShareFetchResponse, 1)
	go func() {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr("a"), 5
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords = 60000, 1, 1<<20, 500
		resp, _ := req.RequestWith(context.Background(), e.cl)
		done <- resp
	}()
	time.Sleep(100 * time.Millisecond) // not an assertion: lets the fetch start waiting first, most runs
	e.produce(0, 1)
	got := <-done
	require.NotNil(t, got)
	require.Equal(t, map[int64]int16{3: 1}, acquired(got, 0))
}

// TestShareLockTimeout: records whose acquisition lock runs out
// (group.share.record.lock.duration.ms, here 300 ms) go to another member,
// delivered a second time; the first member's acknowledgement of them is
// refused with INVALID_RECORD_STATE; ShareFetch and ShareAcknowledge say
// the lock's duration; a record delivered share.delivery.count.limit times
// (here 2) and released again is archived, never delivered again.
func TestShareLockTimeout(t *testing.T) {
	cfg := kllog.DefaultConfig()
	cfg.FS = vfs.NewMem()
	cfg.ShareRecordLockDuration = 300 * time.Millisecond
	cfg.ShareDeliveryCountLimit = 2
	d, err := kllog.Open(context.Background(), "/kafkalite", cfg)
	require.NoError(t, err)
	e := newShareEnvAt(t, serveDir(t, d), 1)
	e.produce(0, 3)
	e.earliest("g")
	e.join("g", "a")
	e.join("g", "b")

	f := e.fetch(e.cl, "g", "a", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 5000, minBytes: 1})
	require.Equal(t, int32(300), f.AcquisitionLockTimeoutMillis)
	require.Equal(t, map[int64]int16{0: 1, 1: 1, 2: 1}, acquired(f, 0))
	// b waits for the records: a's locks run out, and they are b's.
	fb := e.fetch(e.cl, "g", "b", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 30000, minBytes: 1})
	require.Zero(t, fb.ErrorCode, "%v", fb.ErrorMessage)
	require.Equal(t, map[int64]int16{0: 2, 1: 2, 2: 2}, acquired(fb, 0))
	ar := e.acknowledge(e.cl, "g", "a", 1, false, map[int32][]ack{0: {{0, 2, []int8{ackAccept}}}})
	require.Equal(t, kerr.InvalidRecordState.Code, ar.Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, int32(300), ar.AcquisitionLockTimeoutMillis)
	// b accepts 0, releases 1 and 2 after their second delivery: they
	// are archived, and the start offset passes them.
	ar = e.acknowledge(e.cl, "g", "b", 1, false, map[int32][]ack{0: {{0, 2, []int8{ackAccept, ackRelease, ackRelease}}}})
	require.Zero(t, ar.Topics[0].Partitions[0].ErrorCode, "%v", ar.Topics[0].Partitions[0].ErrorMessage)
	offs, _ := e.startOffsets("g")
	require.Equal(t, map[int32]int64{0: 3}, offs)
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 2, maxWait: 200, minBytes: 1})
	require.Empty(t, acquired(f, 0))
}

// TestShareSessionClosedDuringFetch: a ShareFetch waiting for records
// whose session closes meanwhile (its member closes it from another
// connection) acquires what comes, then finds its session gone: it answers
// SHARE_SESSION_NOT_FOUND and gives the records back at once, so that
// another member reads them without waiting for the locks to run out.
func TestShareSessionClosedDuringFetch(t *testing.T) {
	e := newShareEnv(t, 1, nil)
	e.produce(0, 2)
	e.earliest("g")
	e.join("g", "a")
	e.join("g", "b")
	f := e.fetch(e.cl, "g", "a", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 5000, minBytes: 1})
	require.Len(t, acquired(f, 0), 2)
	ca := client(t, e.addr)
	done := make(chan *kmsg.ShareFetchResponse, 1)
	go func() {
		req := kmsg.NewPtrShareFetchRequest()
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr("a"), 1
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords = 60000, 1, 1<<20, 500
		resp, _ := req.RequestWith(context.Background(), ca)
		done <- resp
	}()
	time.Sleep(100 * time.Millisecond) // not an assertion: lets the fetch start waiting first, most runs
	ar := e.acknowledge(e.cl, "g", "a", -1, false, map[int32][]ack{0: {{0, 1, []int8{ackAccept}}}})
	require.Zero(t, ar.ErrorCode, "%v", ar.ErrorMessage)
	e.produce(0, 1) // offset 2: the waiting fetch acquires it, then finds its session closed
	got := <-done
	require.NotNil(t, got)
	require.Equal(t, kerr.ShareSessionNotFound.Code, got.ErrorCode)
	require.Empty(t, got.Topics)
	fb := e.fetch(e.cl, "g", "b", shareFetch{epoch: 0, parts: []int32{0}, maxWait: 5000, minBytes: 1})
	require.Len(t, acquired(fb, 0), 1)
	require.Contains(t, acquired(fb, 0), int64(2))
}

// TestShareFetchBounds: a ShareFetch acquires at most MaxRecords records
// (whole batches: here one record each) and MaxBytes bytes (at least one
// batch), across the session's partitions; one that asks for more
// MinBytes than come answers at its MaxWaitMillis with what it acquired.
func TestShareFetchBounds(t *testing.T) {
	e := newShareEnv(t, 2, nil)
	e.produce(0, 10)
	e.produce(1, 10)
	e.earliest("g")
	e.join("g", "a")
	count := func(f *kmsg.ShareFetchResponse) int { return len(acquired(f, 0)) + len(acquired(f, 1)) }

	f := e.fetch(e.cl, "g", "a", shareFetch{epoch: 0, parts: []int32{0, 1}, records: 3})
	require.Equal(t, 3, count(f))
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr("a"), 1
	req.MaxBytes, req.MaxRecords = 1, 500
	resp, err := req.RequestWith(context.Background(), e.cl)
	require.NoError(t, err)
	require.Equal(t, 1, count(resp), "MaxBytes 1: one batch")
	f = e.fetch(e.cl, "g", "a", shareFetch{epoch: 2, maxWait: 300, minBytes: 1 << 30})
	require.Equal(t, 16, count(f), "the rest, at the wait's end")
}
