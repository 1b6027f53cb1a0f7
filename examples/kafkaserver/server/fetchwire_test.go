package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
)

// sampleFetch is a Fetch response with two topics, errors, aborted
// transactions (null, empty and listed) and records.
func sampleFetch() *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.ThrottleMillis, resp.ErrorCode, resp.SessionID = 7, 0, 0
	for ti, name := range []string{"alpha", "b"} {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = name
		t.TopicID[0], t.TopicID[15] = byte(ti+1), 0xee
		for p := range int32(3) {
			rp := newFetchPartition(p)
			rp.ErrorCode = int16(p % 2)
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = 100+int64(p), 90, int64(p)
			switch p {
			case 1:
				rp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			case 2:
				at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
				at.ProducerID, at.FirstOffset = 42, 17
				rp.AbortedTransactions = append(rp.AbortedTransactions, at, at)
			}
			rp.RecordBatches = fmt.Appendf(nil, "records of %s-%d", name, p)
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// TestFetchEncoderMatchesKmsg: the field-by-field encoder writes, at every
// served Fetch version, exactly the frame kmsg encodes.
func TestFetchEncoderMatchesKmsg(t *testing.T) {
	s := &Server{}
	for v := apis[kmsg.Fetch.Int16()].min; v <= apis[kmsg.Fetch.Int16()].max; v++ {
		resp := sampleFetch()
		resp.SetVersion(v)
		want := s.frame(header{key: kmsg.Fetch.Int16(), version: v, correlation: 99}, resp)
		got, err := flatten(encodeFetch(v, 99, resp, nil))
		require.NoError(t, err)
		require.Equal(t, want, got, "Fetch v%d", v)
	}
}

// batchLog is a partition in memory holding n batches of one record each.
func batchLog(t *testing.T, n int) *log.Log {
	t.Helper()
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	d, err := log.Open(ctx, "/d", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	_, err = d.CreateTopic(ctx, "alpha", 1, nil)
	require.NoError(t, err)
	l, err := d.Partition("alpha", 0)
	require.NoError(t, err)
	for i := range n {
		var b record.Builder
		b.Reset(record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
		require.NoError(t, b.Append(1, []byte("k"), fmt.Appendf(nil, "v%d", i), nil))
		batch, err := b.Build()
		require.NoError(t, err)
		_, err = l.Append(batch)
		require.NoError(t, err)
	}
	return l
}

// TestFetchEncoderSendsSlices: a partition whose records are a file slice
// makes the same frame as the same records inline.
func TestFetchEncoderSendsSlices(t *testing.T) {
	l := batchLog(t, 1)
	for _, v := range []int16{4, 11, 12, 16} {
		fr, err := l.Read(0, 1<<20, true)
		require.NoError(t, err)
		inline, err := fr.Slice.Bytes(nil)
		require.NoError(t, err)
		resp := sampleFetch()
		resp.Topics[0].Partitions[0].RecordBatches = inline
		resp.SetVersion(v)
		want, err := flatten(encodeFetch(v, 5, resp, nil))
		require.NoError(t, err)
		resp.Topics[0].Partitions[0].RecordBatches = []byte{}
		got, err := flatten(encodeFetch(v, 5, resp, [][]*segment.Slice{{fr.Slice}}))
		require.NoError(t, err)
		require.Equal(t, want, got, "Fetch v%d", v)
	}
}

// sampleShareFetch is a ShareFetch response with two topics, errors,
// acknowledgement errors, records (empty, null and set), acquired records
// and node endpoints.
func sampleShareFetch() *kmsg.ShareFetchResponse {
	resp := kmsg.NewPtrShareFetchResponse()
	resp.ThrottleMillis, resp.ErrorCode, resp.AcquisitionLockTimeoutMillis = 3, 0, 30000
	msg := "a message"
	resp.ErrorMessage = &msg
	for ti := range 2 {
		t := kmsg.NewShareFetchResponseTopic()
		t.TopicID[0], t.TopicID[15] = byte(ti+1), 0xee
		for p := range int32(3) {
			rp := kmsg.NewShareFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.AcknowledgeErrorCode = p, int16(p%2), int16(121*(p%2))
			if p == 1 {
				rp.ErrorMessage, rp.AcknowledgeErrorMessage = &msg, &msg
			}
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = p, 4
			switch p {
			case 0:
				rp.Records = []byte{}
			case 2:
				rp.Records = fmt.Appendf(nil, "records of %d-%d", ti, p)
				ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
				ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = 10, 12, 2
				rp.AcquiredRecords = append(rp.AcquiredRecords, ar, ar)
			}
			t.Partitions = append(t.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	n := kmsg.NewShareFetchResponseNodeEndpoint()
	n.NodeID, n.Host, n.Port, n.Rack = 1, "host", 9092, &msg
	resp.NodeEndpoints = append(resp.NodeEndpoints, n)
	return resp
}

// TestShareFetchEncoderMatchesKmsg: the field-by-field ShareFetch encoder
// writes, at every served version, exactly the frame kmsg encodes; records
// in file slices (two for one partition) make the same frame as the same
// records inline.
func TestShareFetchEncoderMatchesKmsg(t *testing.T) {
	s := &Server{}
	for v := apis[kmsg.ShareFetch.Int16()].min; v <= apis[kmsg.ShareFetch.Int16()].max; v++ {
		resp := sampleShareFetch()
		resp.SetVersion(v)
		want := s.frame(header{key: kmsg.ShareFetch.Int16(), version: v, correlation: 99}, resp)
		got, err := flatten(encodeShareFetch(99, resp, nil))
		require.NoError(t, err)
		require.Equal(t, want, got, "ShareFetch v%d", v)
	}

	l := batchLog(t, 2)
	first, err := l.Read(0, 1, true) // one batch
	require.NoError(t, err)
	second, err := l.Read(1, 1, true)
	require.NoError(t, err)
	var inline []byte
	for _, fr := range []log.FetchResult{first, second} {
		inline, err = fr.Slice.Bytes(inline)
		require.NoError(t, err)
	}
	resp := sampleShareFetch()
	resp.Topics[1].Partitions[0].Records = inline
	want, err := flatten(encodeShareFetch(5, resp, nil))
	require.NoError(t, err)
	resp.Topics[1].Partitions[0].Records = []byte{}
	got, err := flatten(encodeShareFetch(5, resp, [][][]*segment.Slice{nil, {{first.Slice, second.Slice}}}))
	require.NoError(t, err)
	require.Equal(t, want, got)
}
