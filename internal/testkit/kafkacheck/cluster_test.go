package kafkacheck

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCluster: three nodes form one KRaft quorum and serve a topic of
// three partitions replicated to all of them: Kafka's kafka-topics tool
// creates it and describes each partition with three replicas, all in
// sync; a record sent to each partition with acks=all is acknowledged and
// read back by Kafka's consumer, and is in every node's copy of its
// partition; and the nodes stop cleanly, each writing its clean-shutdown
// marker (but a node whose controlled shutdown outlived the quorum, which
// Stop kills: a KRaft limit of stopping every node at once).
func TestCluster(t *testing.T) {
	k := Get(t)
	c := k.NewCluster(t, nil)
	start := time.Now()
	c.Start()
	t.Logf("cluster started in %v", time.Since(start).Round(time.Millisecond))

	topics := func(args ...string) string {
		t.Helper()
		return k.Run(t, "", "org.apache.kafka.tools.TopicCommand", append([]string{"--bootstrap-server", c.Bootstrap()}, args...)...)
	}
	topics("--create", "--topic", "r", "--partitions", "3", "--replication-factor", "3")

	var sends strings.Builder
	for p := range 3 {
		sends.WriteString("send\tr\t" + strconv.Itoa(p) + "\t" + b64("k") + "\t" + b64("v"+strconv.Itoa(p)) + "\n")
	}
	acks := Lines(k.Client(t, sends.String(), "produce", c.Bootstrap(), "acks=all"), "ack")
	require.Equal(t, [][]string{{"0", "0"}, {"1", "0"}, {"2", "0"}}, acks)
	recs := Lines(k.Client(t, "", "consume", c.Bootstrap(), "r", "read_committed"), "rec")
	require.Len(t, recs, 3)
	for _, r := range recs {
		require.Equal(t, "0", r[1], "offset")
		require.Equal(t, b64("v"+r[0]), r[5], "value of partition %s", r[0])
	}

	// "Topic: r	Partition: 0	Leader: 2	Replicas: 2,3,1	Isr: 2,3,1	Elr: 	LastKnownElr: "
	described := map[string]map[string]string{}
	for _, l := range strings.Split(topics("--describe", "--topic", "r"), "\n") {
		fields := map[string]string{}
		for _, f := range strings.Split(l, "\t") {
			if name, value, ok := strings.Cut(strings.TrimSpace(f), ": "); ok {
				fields[name] = value
			}
		}
		if p, ok := fields["Partition"]; ok {
			described[p] = fields
		}
	}
	require.Len(t, described, 3)
	for p, fields := range described {
		require.ElementsMatch(t, []string{"1", "2", "3"}, strings.Split(fields["Replicas"], ","), "replicas of partition %s", p)
		require.ElementsMatch(t, []string{"1", "2", "3"}, strings.Split(fields["Isr"], ","), "ISR of partition %s", p)
	}

	u := c.Usage()
	t.Logf("peak resident memory of the nodes, summed: %d MB; CPU: %v", u.PeakRSS/1e6, u.CPU.Round(time.Millisecond))
	stop := time.Now()
	killed := c.Stop()
	t.Logf("cluster stopped in %v", time.Since(stop).Round(time.Millisecond))
	require.Less(t, len(killed), len(c.Nodes), "at least one node stops cleanly")
	for i, n := range c.Nodes {
		if !slices.Contains(killed, i) {
			require.FileExists(t, filepath.Join(n.Dir, ".kafka_cleanshutdown"), "node %d", i+1)
		}
		for p := range 3 {
			st, err := os.Stat(filepath.Join(n.Dir, "r-"+strconv.Itoa(p), "00000000000000000000.log"))
			require.NoError(t, err, "node %d", i+1)
			require.Positive(t, st.Size(), "node %d's copy of partition %d", i+1, p)
		}
	}
}
