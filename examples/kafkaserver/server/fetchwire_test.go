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

// TestFetchEncoderSendsSlices: a partition whose records are a file slice
// makes the same frame as the same records inline.
func TestFetchEncoderSendsSlices(t *testing.T) {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	d, err := log.Open(ctx, "/d", cfg)
	require.NoError(t, err)
	defer d.Close()
	_, err = d.CreateTopic(ctx, "alpha", 1, nil)
	require.NoError(t, err)
	l, err := d.Partition("alpha", 0)
	require.NoError(t, err)
	var b record.Builder
	b.Reset(record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, b.Append(1, []byte("k"), []byte("v"), nil))
	batch, err := b.Build()
	require.NoError(t, err)
	_, err = l.Append(batch)
	require.NoError(t, err)
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
