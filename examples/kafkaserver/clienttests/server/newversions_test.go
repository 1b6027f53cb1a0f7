package server_test

import (
	"context"
	"encoding/base64"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// newVersionsConn starts a server with topic "t" (2 partitions) and
// returns a raw connection and the topic's id.
func newVersionsConn(t *testing.T) (net.Conn, *kgo.Client, [16]byte) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "t", 2)
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	md := kmsg.NewPtrMetadataRequest()
	topic := "t"
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	md.Topics = []kmsg.MetadataRequestTopic{mt}
	resp := versionedRequest(t, c, md, 12).(*kmsg.MetadataResponse)
	return c, cl, resp.Topics[0].TopicID
}

// TestOffsetCommitFetchByTopicID: OffsetCommit and OffsetFetch v10
// (KIP-848) name topics by id; an unknown id is UNKNOWN_TOPIC_ID per
// partition (offset -1 in OffsetFetch), the known one is committed and
// fetched back under its id.
func TestOffsetCommitFetchByTopicID(t *testing.T) {
	c, _, id := newVersionsConn(t)
	unknown := [16]byte{1, 2, 3}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "g", -1
	for _, tid := range [][16]byte{id, unknown} {
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.TopicID = tid
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Partition, op.Offset = 1, 42
		ot.Partitions = []kmsg.OffsetCommitRequestTopicPartition{op}
		oc.Topics = append(oc.Topics, ot)
	}
	cr := versionedRequest(t, c, oc, 10).(*kmsg.OffsetCommitResponse)
	require.Len(t, cr.Topics, 2)
	require.Equal(t, id, cr.Topics[0].TopicID)
	require.Zero(t, cr.Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, unknown, cr.Topics[1].TopicID)
	require.Equal(t, kerr.UnknownTopicID.Code, cr.Topics[1].Partitions[0].ErrorCode)

	of := kmsg.NewPtrOffsetFetchRequest()
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = "g"
	for _, tid := range [][16]byte{id, unknown} {
		gt := kmsg.NewOffsetFetchRequestGroupTopic()
		gt.TopicID, gt.Partitions = tid, []int32{1}
		g.Topics = append(g.Topics, gt)
	}
	of.Groups = []kmsg.OffsetFetchRequestGroup{g}
	fr := versionedRequest(t, c, of, 10).(*kmsg.OffsetFetchResponse)
	require.Len(t, fr.Groups[0].Topics, 2)
	byID := map[[16]byte]kmsg.OffsetFetchResponseGroupTopicPartition{}
	for _, ft := range fr.Groups[0].Topics {
		require.Empty(t, ft.Topic)
		byID[ft.TopicID] = ft.Partitions[0]
	}
	require.Equal(t, int64(42), byID[id].Offset)
	require.Zero(t, byID[id].ErrorCode)
	require.Equal(t, kerr.UnknownTopicID.Code, byID[unknown].ErrorCode)
	require.Equal(t, int64(-1), byID[unknown].Offset)

	// v9 still names topics and fetches the same offset.
	of9 := kmsg.NewPtrOffsetFetchRequest()
	g9 := kmsg.NewOffsetFetchRequestGroup()
	g9.Group = "g"
	of9.Groups = []kmsg.OffsetFetchRequestGroup{g9}
	r9 := versionedRequest(t, c, of9, 9).(*kmsg.OffsetFetchResponse)
	require.Equal(t, "t", r9.Groups[0].Topics[0].Topic)
	require.Equal(t, int64(42), r9.Groups[0].Topics[0].Partitions[0].Offset)
}

// TestDescribeGroupsV6: an unknown group is Dead in every version, and
// from v6 (KIP-1043) GROUP_ID_NOT_FOUND with a message.
func TestDescribeGroupsV6(t *testing.T) {
	c, _, _ := newVersionsConn(t)
	for _, v := range []int16{5, 6} {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{"nope"}
		g := versionedRequest(t, c, req, v).(*kmsg.DescribeGroupsResponse).Groups[0]
		require.Equal(t, "Dead", g.State)
		if v < 6 {
			require.Zero(t, g.ErrorCode)
			continue
		}
		require.Equal(t, kerr.GroupIDNotFound.Code, g.ErrorCode)
		require.Equal(t, "Group nope not found.", *g.ErrorMessage)
	}
}

// TestFindCoordinatorShareKey: the share coordinator key type (2) is
// served from v6 for keys "group:topicId:partition"; before v6, or with a
// key not of that form, it is INVALID_REQUEST.
func TestFindCoordinatorShareKey(t *testing.T) {
	c, _, id := newVersionsConn(t)
	good := "g:" + base64.RawURLEncoding.EncodeToString(id[:]) + ":0"
	find := func(v int16, key string) kmsg.FindCoordinatorResponseCoordinator {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKeys = 2, []string{key}
		return versionedRequest(t, c, req, v).(*kmsg.FindCoordinatorResponse).Coordinators[0]
	}
	require.Equal(t, kerr.CoordinatorNotAvailable.Code, find(6, good).ErrorCode, "the first lookup makes __share_group_state")
	require.Zero(t, find(6, good).ErrorCode)
	require.NotEqual(t, int32(-1), find(6, good).NodeID)
	require.Zero(t, find(6, "a:b:"+base64.RawURLEncoding.EncodeToString(id[:])+":3").ErrorCode, "a group id may hold colons")
	require.Equal(t, kerr.InvalidRequest.Code, find(5, good).ErrorCode)
	for _, bad := range []string{"g", "g:x:0", " :" + base64.RawURLEncoding.EncodeToString(id[:]) + ":0", "g:" + base64.RawURLEncoding.EncodeToString(id[:]) + ":p"} {
		require.Equal(t, kerr.InvalidRequest.Code, find(6, bad).ErrorCode, bad)
	}
}

// TestAddPartitionsToTxnBatched: v4+ is the batched form brokers send;
// VerifyOnly answers NONE for a partition in the transaction and
// INVALID_TXN_STATE for one not in it, INVALID_PRODUCER_ID_MAPPING for an
// unknown transactional id, PRODUCER_FENCED for another epoch; without
// VerifyOnly the partitions are added.
func TestAddPartitionsToTxnBatched(t *testing.T) {
	c, _, _ := newVersionsConn(t)
	ip := kmsg.NewPtrInitProducerIDRequest()
	txn := "tx"
	ip.TransactionalID, ip.TransactionTimeoutMillis = &txn, 60000
	pr := versionedRequest(t, c, ip, 5).(*kmsg.InitProducerIDResponse)
	require.Zero(t, pr.ErrorCode)
	send := func(v int16, id string, epoch int16, verify bool, parts ...int32) []kmsg.AddPartitionsToTxnResponseTransactionTopicPartition {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = id, pr.ProducerID, epoch, verify
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = "t", parts
		tr.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{tt}
		req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{tr}
		resp := versionedRequest(t, c, req, v).(*kmsg.AddPartitionsToTxnResponse)
		require.Zero(t, resp.ErrorCode)
		require.Len(t, resp.Transactions, 1)
		require.Equal(t, id, resp.Transactions[0].TransactionalID)
		return resp.Transactions[0].Topics[0].Partitions
	}
	for _, v := range []int16{4, 5} {
		got := send(v, txn, pr.ProducerEpoch, false, 0)
		require.Zero(t, got[0].ErrorCode)
		got = send(v, txn, pr.ProducerEpoch, true, 0, 1)
		require.Zero(t, got[0].ErrorCode)
		require.Equal(t, kerr.InvalidTxnState.Code, got[1].ErrorCode)
		require.Equal(t, kerr.InvalidProducerIDMapping.Code, send(v, "other", pr.ProducerEpoch, true, 0)[0].ErrorCode)
		require.Equal(t, kerr.ProducerFenced.Code, send(v, txn, pr.ProducerEpoch+1, true, 0)[0].ErrorCode)
	}
}

// TestListTransactionsPattern: v2 (KIP-1152) keeps the transactional ids
// the whole pattern matches; a pattern that does not compile is
// INVALID_REGULAR_EXPRESSION.
func TestListTransactionsPattern(t *testing.T) {
	c, _, _ := newVersionsConn(t)
	for _, id := range []string{"app-1", "app-2", "other"} {
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.TransactionalID, ip.TransactionTimeoutMillis = &id, 60000
		require.Zero(t, versionedRequest(t, c, ip, 5).(*kmsg.InitProducerIDResponse).ErrorCode)
	}
	list := func(v int16, pattern *string) (int16, []string) {
		req := kmsg.NewPtrListTransactionsRequest()
		req.TransactionalIDPattern = pattern
		resp := versionedRequest(t, c, req, v).(*kmsg.ListTransactionsResponse)
		var ids []string
		for _, s := range resp.TransactionStates {
			ids = append(ids, s.TransactionalID)
		}
		return resp.ErrorCode, ids
	}
	p, part, bad, empty := "app-.*", "app", "app-(", ""
	code, ids := list(2, &p)
	require.Zero(t, code)
	require.ElementsMatch(t, []string{"app-1", "app-2"}, ids)
	_, ids = list(2, &part)
	require.Empty(t, ids, "the pattern matches the whole id")
	_, ids = list(2, &empty)
	require.Len(t, ids, 3)
	code, _ = list(2, &bad)
	require.Equal(t, kerr.InvalidRegularExpression.Code, code)
	_, ids = list(1, nil)
	require.Len(t, ids, 3)
}

// TestListOffsetsEarliestPendingUpload: v11's -6 on a partition without
// remote storage answers offset and epoch -1, as Kafka does; an older
// version asking -6 is UNSUPPORTED_VERSION for the partition.
func TestListOffsetsEarliestPendingUpload(t *testing.T) {
	c, cl, _ := newVersionsConn(t)
	require.NoError(t, cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Partition: 0, Value: []byte("v")}).FirstErr())
	for _, v := range []int16{10, 11} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.TimeoutMillis = 1000
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = "t"
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = 0, -6
		lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{lp}
		req.Topics = []kmsg.ListOffsetsRequestTopic{lt}
		p := versionedRequest(t, c, req, v).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		if v < 11 {
			require.Equal(t, kerr.UnsupportedVersion.Code, p.ErrorCode)
			continue
		}
		require.Zero(t, p.ErrorCode)
		require.Equal(t, int64(-1), p.Offset)
		require.Equal(t, int32(-1), p.LeaderEpoch)
	}
}

// topicIDFor is a topic's id from a Metadata request, the zero id for a
// topic that does not exist (OffsetCommit v10 names topics by id).
func topicIDFor(t *testing.T, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	req.Topics = []kmsg.MetadataRequestTopic{mt}
	resp, err := req.RequestWith(context.Background(), cl)
	require.NoError(t, err)
	return resp.Topics[0].TopicID
}
