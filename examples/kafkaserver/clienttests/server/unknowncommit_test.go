package server_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestOffsetCommitUnknownPartitions: at every version, OffsetCommit
// answers a partition of a topic that does not exist, or beyond the
// topic's partitions, UNKNOWN_TOPIC_OR_PARTITION and commits it not,
// while the request's other partitions are committed (v10, by topic id,
// answers an unknown id UNKNOWN_TOPIC_ID), as Kafka 4.4's broker answers;
// franz-go's admin client sees the same.
func TestOffsetCommitUnknownPartitions(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "t", 1)
	ctx := context.Background()
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	var tid [16]byte
	for _, mt := range md.Topics {
		if *mt.Topic == "t" {
			tid = mt.TopicID
		}
	}
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()

	for v := int16(2); v <= 10; v++ {
		group := "g" + string(rune('a'+v))
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		for _, tp := range []struct {
			topic string
			id    [16]byte
			parts []int32
		}{{"t", tid, []int32{0, 3}}, {"absent", [16]byte{1}, []int32{0}}} {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = tp.topic, tp.id
			for _, p := range tp.parts {
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset = p, 7
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp := versionedRequest(t, c, req, v).(*kmsg.OffsetCommitResponse)
		absent := kerr.UnknownTopicOrPartition.Code
		if v >= 10 {
			absent = kerr.UnknownTopicID.Code
		}
		require.Equal(t, []int16{0, kerr.UnknownTopicOrPartition.Code}, []int16{resp.Topics[0].Partitions[0].ErrorCode, resp.Topics[0].Partitions[1].ErrorCode}, "v%d", v)
		require.Equal(t, absent, resp.Topics[1].Partitions[0].ErrorCode, "v%d", v)

		fetched, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
		require.NoError(t, err)
		got := map[string]map[int32]int64{}
		fetched.Each(func(o kadm.OffsetResponse) {
			if got[o.Topic] == nil {
				got[o.Topic] = map[int32]int64{}
			}
			got[o.Topic][o.Partition] = o.At
		})
		require.Equal(t, map[string]map[int32]int64{"t": {0: 7}}, got, "v%d: only the partition that exists is committed", v)
	}

	// Only unknown partitions: nothing reaches the coordinator, so even
	// a group whose generation is wrong gets only
	// UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers.
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = "ghost", 5, "nobody"
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "absent"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := versionedRequest(t, c, req, 9).(*kmsg.OffsetCommitResponse)
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, resp.Topics[0].Partitions[0].ErrorCode)

	// franz-go's admin commit.
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 9, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "absent", Partition: 0, At: 9, LeaderEpoch: -1})
	committed, err := kadm.NewClient(cl).CommitOffsets(ctx, "kadm", os)
	require.NoError(t, err)
	require.NoError(t, committed["t"][0].Err)
	require.ErrorIs(t, committed["absent"][0].Err, kerr.UnknownTopicOrPartition)
}

// TestTxnOffsetCommitUnknownPartitions: TxnOffsetCommit, at every
// version (v6 by topic id: an unknown id UNKNOWN_TOPIC_ID), answers a partition that does not exist
// UNKNOWN_TOPIC_OR_PARTITION before the transaction is looked at (a
// request of unknown partitions only never reaches the coordinator, so
// no transaction is needed), and commits the others in the transaction.
func TestTxnOffsetCommitUnknownPartitions(t *testing.T) {
	srv := servertest.StartInMemory(t, nil)
	cl := client(t, srv.Addr)
	createTopic(t, cl, "t", 1)
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(context.Background(), cl)
	require.NoError(t, err)
	ids := map[string][16]byte{"absent": {1}}
	for _, mt := range md.Topics {
		ids[*mt.Topic] = mt.TopicID
	}
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	commit := func(v int16, pid int64, epoch int16, parts map[string][]int32) map[string]map[int32]int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "tx", "g", pid, epoch, -1
		for _, topic := range []string{"t", "absent"} {
			if parts[topic] == nil {
				continue
			}
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = topic, ids[topic] // v6 names it by id
			for _, p := range parts[topic] {
				rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset = p, 3
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp := versionedRequest(t, c, req, v).(*kmsg.TxnOffsetCommitResponse)
		out := map[string]map[int32]int16{}
		for i, rt := range resp.Topics {
			name := req.Topics[i].Topic
			if v < 6 {
				require.Equal(t, name, rt.Topic)
			}
			out[name] = map[int32]int16{}
			for _, rp := range rt.Partitions {
				out[name][rp.Partition] = rp.ErrorCode
			}
		}
		return out
	}
	unknown := kerr.UnknownTopicOrPartition.Code
	for v := int16(0); v <= 6; v++ {
		absent := unknown
		if v >= 6 {
			absent = kerr.UnknownTopicID.Code
		}
		got := commit(v, 1234, 0, map[string][]int32{"t": {5}, "absent": {0}})
		require.Equal(t, map[string]map[int32]int16{"t": {5: unknown}, "absent": {0: absent}}, got, "v%d", v)
	}

	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = kmsg.StringPtr("tx"), 60000
	ir := versionedRequest(t, c, init, 5).(*kmsg.InitProducerIDResponse)
	require.Zero(t, ir.ErrorCode)
	got := commit(5, ir.ProducerID, ir.ProducerEpoch, map[string][]int32{"t": {0, 5}, "absent": {0}})
	require.Equal(t, map[string]map[int32]int16{"t": {0: 0, 5: unknown}, "absent": {0: unknown}}, got, "v5 adds the group itself")
	got = commit(6, ir.ProducerID, ir.ProducerEpoch, map[string][]int32{"t": {0, 5}, "absent": {0}})
	require.Equal(t, map[string]map[int32]int16{"t": {0: 0, 5: unknown}, "absent": {0: kerr.UnknownTopicID.Code}}, got, "v6 by topic id")

	// The transaction's commit makes t-0's offset the group's, under
	// the topic's name.
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "tx", ir.ProducerID, ir.ProducerEpoch, true
	er := versionedRequest(t, c, end, 5).(*kmsg.EndTxnResponse)
	require.Zero(t, er.ErrorCode)
	fetched, err := kadm.NewClient(cl).FetchOffsets(context.Background(), "g")
	require.NoError(t, err)
	o, ok := fetched.Lookup("t", 0)
	require.True(t, ok)
	require.Equal(t, int64(3), o.At)
	require.Len(t, fetched, 1, "only t: %v", fetched)
}
