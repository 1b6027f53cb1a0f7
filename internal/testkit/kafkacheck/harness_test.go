package kafkacheck

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestHarness: the broker starts, serves a topic through Kafka's own
// producer and consumer, stops cleanly (writing its clean-shutdown marker)
// and starts again over the same directory.
func TestHarness(t *testing.T) {
	k := Get(t)
	b := k.NewBroker(t, nil)
	b.Start()
	k.Client(t, "", "create-topic", b.Bootstrap(), "h", "2")
	acks := Lines(k.Client(t, "send\th\t0\t"+b64("k")+"\t"+b64("v")+"\n", "produce", b.Bootstrap()), "ack")
	require.Equal(t, [][]string{{"0", "0"}}, acks)
	b.Stop()
	require.FileExists(t, b.Dir+"/.kafka_cleanshutdown")
	b.Start()
	recs := Lines(k.Client(t, "", "consume", b.Bootstrap(), "h", "read_committed"), "rec")
	require.Len(t, recs, 1)
	require.Equal(t, []string{"0", "0"}, recs[0][:2])
	require.Equal(t, b64("v"), recs[0][5])
}
