package kafkacheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKafkaConfigsGroupsAgainstServer runs Kafka 4.4's kafka-configs
// (ConfigCommand) with --entity-type groups against the server: it sets a
// group's share.auto.offset.reset and share.record.lock.duration.ms,
// describes them as dynamic group configs, refuses a value Kafka refuses,
// deletes one back to its default, and the other survives a restart of
// the server.
func TestKafkaConfigsGroupsAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	configs := func(args ...string) (string, error) {
		return k.run("", "org.apache.kafka.tools.ConfigCommand",
			append([]string{"--bootstrap-server", s.addr, "--entity-type", "groups", "--entity-name", "g"}, args...)...)
	}
	out, err := configs("--alter", "--add-config", "share.auto.offset.reset=earliest,share.record.lock.duration.ms=20000")
	require.NoError(t, err)
	require.Contains(t, out, "Completed updating config for group g.")

	described := func() string {
		out, err := configs("--describe")
		require.NoError(t, err)
		return out
	}
	out = described()
	require.Contains(t, out, "Dynamic configs for group g are:")
	require.Contains(t, out, "share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest}")
	require.Contains(t, out, "share.record.lock.duration.ms=20000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.record.lock.duration.ms=20000")
	require.NotContains(t, out, "consumer.session.timeout.ms", "defaults are not dynamic configs")

	all, err := configs("--describe", "--all")
	require.NoError(t, err)
	require.Contains(t, all, "consumer.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}")

	out, err = configs("--alter", "--add-config", "share.record.lock.duration.ms=1")
	require.Error(t, err, "below group.share.min.record.lock.duration.ms: %s", out)
	require.Contains(t, err.Error(), "InvalidConfigurationException")

	_, err = configs("--alter", "--delete-config", "share.record.lock.duration.ms")
	require.NoError(t, err)
	s.restart(t, nil)
	out = described()
	require.Contains(t, out, "share.auto.offset.reset=earliest")
	require.False(t, strings.Contains(out, "share.record.lock.duration.ms"), "deleted: %s", out)
}
