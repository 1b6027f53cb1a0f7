package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestCompactedTopicRollsByMaxCompactionLag produces four values of one
// key, a second apart by their timestamps, to a compacted topic with
// max.compaction.lag.ms=100 and the default segment.ms (7 days), with
// every codec, then cleans: each value after the first rolled the active
// segment (Kafka's LogConfig.maxSegmentMs is the shorter of the two for a
// compacted topic), so the first three are in sealed segments and only the
// third of them survives, with the fourth in the active segment. Without
// the roll all four stay in the active segment, which is never cleaned:
// librdkafka's 0077_compaction relies on this roll.
func TestCompactedTopicRollsByMaxCompactionLag(t *testing.T) {
	s := servertest.Start(t, nil)
	adm := kadm.NewClient(client(t, s.Addr))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			topic := "compacted-" + c.name
			created, err := adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact"),
				"max.compaction.lag.ms": kadm.StringPtr("100"), "min.cleanable.dirty.ratio": kadm.StringPtr("0.01")}, topic)
			require.NoError(t, err)
			require.NoError(t, created.Err)

			producer := client(t, s.Addr, kgo.ProducerBatchCompression(c.codec))
			for i := range 4 {
				r := &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte(fmt.Sprint("v", i)), Timestamp: base.Add(time.Duration(i) * time.Second)}
				require.NoError(t, producer.ProduceSync(context.Background(), r).FirstErr())
			}
			_, err = s.Dir.CleanNow(context.Background())
			require.NoError(t, err)
			got := consume(t, s.Addr, topic, 2)
			require.Equal(t, []int64{2, 3}, []int64{got[0].Offset, got[1].Offset}, "offsets 0 and 1 cleaned away")
			require.Equal(t, []string{"v2", "v3"}, []string{string(got[0].Value), string(got[1].Value)})
		})
	}
}
