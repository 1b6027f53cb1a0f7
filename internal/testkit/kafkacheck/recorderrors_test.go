package kafkacheck

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/record"
)

// produceAnswer is what a Produce of one batch to partition 0 of topic
// was answered: the code, the message and the records' errors, with the
// timestamp window's bounds (the node's clock) masked.
type produceAnswer struct {
	Code    int16
	Message string
	Records []string
}

var windowBounds = regexp.MustCompile(`within \[-?\d+, -?\d+\]`)

func produceBatch(t *testing.T, cl *kgo.Client, topic string, batch []byte) produceAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	mreq.Topics = []kmsg.MetadataRequestTopic{mt}
	mresp, err := mreq.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, mresp.Topics[0].ErrorCode)
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, mresp.Topics[0].TopicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	var p kmsg.ProduceResponseTopicPartition
	for {
		// A topic just created may not have its leader yet on Kafka's
		// broker: NOT_LEADER_OR_FOLLOWER until it has.
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		p = resp.Topics[0].Partitions[0]
		if p.ErrorCode != 6 || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	a := produceAnswer{Code: p.ErrorCode}
	if p.ErrorMessage != nil {
		a.Message = windowBounds.ReplaceAllString(*p.ErrorMessage, "within [lo, hi]")
	}
	for _, e := range p.ErrorRecords {
		m := ""
		if e.ErrorMessage != nil {
			m = windowBounds.ReplaceAllString(*e.ErrorMessage, "within [lo, hi]")
		}
		a.Records = append(a.Records, string(rune('0'+e.RelativeOffset))+": "+m)
	}
	return a
}

// TestProduceRecordErrorsAsKafka sends the same refused batches to Kafka
// 4.4's broker and to the server (records without a key on a compacted
// topic, timestamps outside a topic's window, both, with every codec) and
// requires the same answers: code, message and each record's error
// (KIP-467), the window's bounds aside.
func TestProduceRecordErrorsAsKafka(t *testing.T) {
	k := Get(t)
	b := k.NewBroker(t, nil)
	b.Start()
	s := startKafkaServer(t, k)
	topics := map[string]map[string]string{
		"compacted": {"cleanup.policy": "compact"},
		"strict":    {"message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"},
		"both":      {"cleanup.policy": "compact", "message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"},
	}
	now := time.Now().UnixMilli()
	past, future := now-2*3600000, now+2*3600000
	key := []byte("k")
	type rec struct {
		key []byte
		ts  int64
	}
	cases := []struct {
		topic string
		recs  []rec
	}{
		{"compacted", []rec{{key, now}, {nil, now}, {key, now}}},
		{"compacted", []rec{{nil, now}, {nil, now}, {key, now}, {nil, now}, {nil, now}}},
		{"strict", []rec{{key, now}, {key, past}, {key, now}, {key, future}}},
		{"both", []rec{{nil, past}, {key, future}}},
		{"both", []rec{{key, now}}},
	}
	answers := map[string][]produceAnswer{}
	for target, addr := range map[string]string{"kafka": b.Bootstrap(), "kafkalite": s.addr} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		creq := kmsg.NewPtrCreateTopicsRequest()
		for name, cfg := range topics {
			ct := kmsg.NewCreateTopicsRequestTopic()
			ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 1, 1
			for k, v := range cfg {
				c := kmsg.NewCreateTopicsRequestTopicConfig()
				c.Name, c.Value = k, &v
				ct.Configs = append(ct.Configs, c)
			}
			creq.Topics = append(creq.Topics, ct)
		}
		cresp, err := creq.RequestWith(ctx, cl)
		cancel()
		require.NoError(t, err)
		for _, ct := range cresp.Topics {
			require.Zero(t, ct.ErrorCode, "%s: %s", target, ct.Topic)
		}
		for _, c := range []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd} {
			for _, tc := range cases {
				rs := make([]record.Record, len(tc.recs))
				for i, r := range tc.recs {
					rs[i] = record.Record{Key: r.key, Value: []byte("v"), Timestamp: r.ts, OffsetDelta: int32(i)}
				}
				batch, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
					PartitionLeaderEpoch: -1, Attributes: record.Attributes(0).WithCompression(c)}, 0, rs)
				require.NoError(t, err)
				answers[target] = append(answers[target], produceBatch(t, cl, tc.topic, batch))
			}
		}
		cl.Close()
	}
	require.Equal(t, answers["kafka"], answers["kafkalite"])
	require.NotEmpty(t, answers["kafka"][0].Records, "Kafka reported record errors")
}
