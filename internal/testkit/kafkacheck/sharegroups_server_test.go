package kafkacheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJavaShareGroupsAgainstServer: Kafka 4.4's own share consumer and
// tools against examples/kafkaserver. kafka-configs sets the group's
// share.auto.offset.reset to earliest; kafka-console-share-consumer reads
// every record produced (ShareGroupHeartbeat, ShareFetch with its session,
// acknowledgements); kafka-share-groups lists the group, describes its
// start offset and lag, its state, resets it to the earliest offset,
// deletes its offsets, then the group.
func TestJavaShareGroupsAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	const n = 50
	k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", s.addr, "--create", "--topic", "queue", "--partitions", "2")
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "record %d\n", i)
	}
	k.Run(t, in.String(), "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", s.addr, "--topic", "queue")
	k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", s.addr, "--alter", "--entity-type", "groups",
		"--entity-name", "sg", "--add-config", "share.auto.offset.reset=earliest")

	out := k.Run(t, "", "org.apache.kafka.tools.consumer.ConsoleShareConsumer", "--bootstrap-server", s.addr, "--topic", "queue",
		"--group", "sg", "--max-messages", fmt.Sprint(n), "--timeout-ms", "60000")
	got := strings.Split(strings.TrimSpace(out), "\n")
	require.ElementsMatch(t, strings.Split(strings.TrimSpace(in.String()), "\n"), got)

	shareGroups := func(args ...string) string {
		return k.Run(t, "", "org.apache.kafka.tools.consumer.group.ShareGroupCommand", append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	require.Contains(t, shareGroups("--list"), "sg")
	// GROUP TOPIC PARTITION START-OFFSET LAG: every record done.
	starts := map[string]string{}
	for _, line := range strings.Split(shareGroups("--describe", "--group", "sg"), "\n") {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "sg" {
			require.Equal(t, "0", f[4], "lag: %q", line)
			starts[f[2]] = f[3]
		}
	}
	require.Len(t, starts, 2)
	require.Contains(t, shareGroups("--describe", "--group", "sg", "--state"), "Empty")
	shareGroups("--reset-offsets", "--group", "sg", "--topic", "queue", "--to-earliest", "--execute")
	total := 0
	for _, line := range strings.Split(shareGroups("--describe", "--group", "sg"), "\n") {
		if f := strings.Fields(line); len(f) == 5 && f[0] == "sg" {
			require.Equal(t, "0", f[3], "start offset after --to-earliest: %q", line)
			var lag int
			_, err := fmt.Sscan(f[4], &lag)
			require.NoError(t, err)
			total += lag
		}
	}
	require.Equal(t, n, total, "the lag after --to-earliest")
	require.Contains(t, shareGroups("--delete-offsets", "--group", "sg", "--topic", "queue"), "Successful")
	require.Contains(t, shareGroups("--delete", "--group", "sg"), "successful")
	require.NotContains(t, shareGroups("--list"), "sg")
}
