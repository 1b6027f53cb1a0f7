package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestSarama produces with sarama's sync producer (its default protocol
// version, and every codec it offers) and reads every partition back
// with its partition consumers from the oldest offset, to the end offsets
// kafkalite's own API gives.
func TestSarama(t *testing.T) {
	srv := servertest.Start(t, nil)
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP,
		sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		t.Run(codec.String(), func(t *testing.T) {
			cfg := sarama.NewConfig()
			cfg.Producer.Return.Successes = true
			cfg.Producer.RequiredAcks = sarama.WaitForAll
			cfg.Producer.Compression = codec
			cfg.Metadata.AllowAutoTopicCreation = true
			topic := "sarama-" + codec.String()
			prod, err := sarama.NewSyncProducer([]string{srv.Addr}, cfg)
			require.NoError(t, err)
			defer prod.Close()
			const n = 100
			var want []string
			for i := range n {
				v := fmt.Sprintf("value %d", i)
				_, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprint(i % 5)),
					Value: sarama.StringEncoder(v), Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte("x")}}})
				require.NoError(t, err)
				want = append(want, v)
			}

			cons, err := sarama.NewConsumer([]string{srv.Addr}, cfg)
			require.NoError(t, err)
			defer cons.Close()
			parts, err := cons.Partitions(topic)
			require.NoError(t, err)
			var got []string
			for _, p := range parts {
				pc, err := cons.ConsumePartition(topic, p, sarama.OffsetOldest)
				require.NoError(t, err)
				l, err := srv.Dir.Partition(topic, p)
				require.NoError(t, err)
				for next := int64(0); next < l.LogEndOffset(); {
					select {
					case m := <-pc.Messages():
						require.Equal(t, next, m.Offset)
						require.Equal(t, []*sarama.RecordHeader{{Key: []byte("h"), Value: []byte("x")}}, m.Headers)
						got = append(got, string(m.Value))
						next = m.Offset + 1
					case err := <-pc.Errors():
						require.NoError(t, err)
					case <-time.After(20 * time.Second):
						t.Fatalf("partition %d: no message for 20 s, %d read", p, len(got))
					}
				}
				require.NoError(t, pc.Close())
			}
			slices.Sort(got)
			slices.Sort(want)
			require.Equal(t, want, got)
		})
	}
}
