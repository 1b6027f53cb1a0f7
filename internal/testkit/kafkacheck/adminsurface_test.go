package kafkacheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKafkaAdminToolsAgainstServer runs Kafka 4.4's admin tools against
// the server: kafka-topics --describe (DescribeTopicPartitions in Kafka
// 4), kafka-log-dirs --describe, kafka-features describe and upgrade (the
// level run accepted, another refused), kafka-configs --entity-type
// brokers (describe --all, an alter of a dynamic property for the cluster
// default that reaches the topic, the refusal of a static one) and
// kafka-leader-election.
func TestKafkaAdminToolsAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	tool := func(class string, args ...string) (string, error) {
		return k.run("", class, append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	ok := func(class string, args ...string) string {
		t.Helper()
		out, err := tool(class, args...)
		require.NoError(t, err, out)
		return out
	}
	const (
		topics    = "org.apache.kafka.tools.TopicCommand"
		logDirs   = "org.apache.kafka.tools.LogDirsCommand"
		features  = "org.apache.kafka.tools.FeatureCommand"
		configs   = "org.apache.kafka.tools.ConfigCommand"
		elections = "org.apache.kafka.tools.LeaderElectionCommand"
	)
	ok(topics, "--create", "--topic", "a", "--partitions", "3")
	out := ok(topics, "--describe", "--topic", "a")
	require.Contains(t, out, "PartitionCount: 3\tReplicationFactor: 1")
	for _, p := range []string{"0", "1", "2"} {
		require.Contains(t, out, "Topic: a\tPartition: "+p+"\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: \tLastKnownElr: ")
	}

	// A manual assignment naming this broker, as kafka-topics sends it;
	// one naming another broker refused with Kafka's message.
	ok(topics, "--create", "--topic", "assigned", "--replica-assignment", "0,0")
	require.Contains(t, ok(topics, "--describe", "--topic", "assigned"), "PartitionCount: 2\tReplicationFactor: 1")
	ok(topics, "--alter", "--topic", "assigned", "--partitions", "3", "--replica-assignment", "0,0,0")
	require.Contains(t, ok(topics, "--describe", "--topic", "assigned"), "PartitionCount: 3\tReplicationFactor: 1")
	out, err := tool(topics, "--create", "--topic", "elsewhere", "--replica-assignment", "7")
	require.Error(t, err, out)
	require.Contains(t, out, "The manual partition assignment includes broker 7, but no such broker is registered.")

	out = ok(logDirs, "--describe", "--topic-list", "a")
	var dirs struct {
		Brokers []struct {
			Broker  int
			LogDirs []struct {
				LogDir     string
				Error      *string
				Partitions []struct {
					Partition string
					OffsetLag int64
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &dirs), out)
	require.Len(t, dirs.Brokers, 1)
	require.Len(t, dirs.Brokers[0].LogDirs, 1)
	require.Nil(t, dirs.Brokers[0].LogDirs[0].Error)
	require.Len(t, dirs.Brokers[0].LogDirs[0].Partitions, 3)

	out = ok(features, "describe")
	require.Regexp(t, `Feature: group.version\s+SupportedMinVersion: 0\s+SupportedMaxVersion: 1\s+FinalizedVersionLevel: 1\s+Epoch: 1`, out)
	require.Regexp(t, `Feature: share.version\s+SupportedMinVersion: 0\s+SupportedMaxVersion: 1\s+FinalizedVersionLevel: 1\s+Epoch: 1`, out)
	require.Regexp(t, `Feature: transaction.version\s+SupportedMinVersion: 0\s+SupportedMaxVersion: 2\s+FinalizedVersionLevel: 2\s+Epoch: 1`, out)
	require.Contains(t, ok(features, "upgrade", "--feature", "group.version=1"), "group.version was upgraded to 1.")
	out, err = tool(features, "upgrade", "--feature", "share.version=2")
	require.Error(t, err, out)
	require.Contains(t, err.Error(), "Could not upgrade share.version to 2.")

	out = ok(configs, "--entity-type", "brokers", "--entity-name", "0", "--describe", "--all")
	require.Contains(t, out, "All configs for broker 0 are:")
	require.Contains(t, out, "log.retention.ms=604800000 sensitive=false synonyms={DEFAULT_CONFIG:log.retention.ms=604800000}")
	require.Contains(t, out, "socket.request.max.bytes=104857600 sensitive=false synonyms={DEFAULT_CONFIG:socket.request.max.bytes=104857600}")
	require.Contains(t, out, "synonyms={STATIC_BROKER_CONFIG:group.share.min.record.lock.duration.ms=1000, DEFAULT_CONFIG:group.share.min.record.lock.duration.ms=15000}",
		"the server runs with -override group.share.min.record.lock.duration.ms=1000")
	require.Contains(t, ok(configs, "--entity-type", "brokers", "--entity-default", "--alter", "--add-config", "log.retention.ms=3600000"),
		"Completed updating default config for brokers in the cluster.")
	out = ok(configs, "--entity-type", "brokers", "--entity-default", "--describe")
	require.Contains(t, out, "log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000}")
	out = ok(configs, "--entity-type", "topics", "--entity-name", "a", "--describe", "--all")
	require.Contains(t, out, "retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000, DEFAULT_CONFIG:log.retention.ms=604800000}")
	out, err = tool(configs, "--entity-type", "brokers", "--entity-name", "0", "--alter", "--add-config", "num.partitions=3")
	require.Error(t, err, out)
	require.Contains(t, err.Error(), "InvalidRequestException")
	s.restart(t, nil)
	out = ok(configs, "--entity-type", "topics", "--entity-name", "a", "--describe", "--all")
	require.Contains(t, out, "retention.ms=3600000 sensitive=false", "the dynamic default survives a restart")

	require.Contains(t, ok(elections, "--election-type", "preferred", "--topic", "a", "--partition", "0"), "Valid replica already elected for partitions a-0")
	require.Empty(t, strings.TrimSpace(ok(elections, "--election-type", "preferred", "--all-topic-partitions")))

	// DescribeQuorum as a single voter, ListPartitionReassignments and
	// AlterPartitionAssignments as one broker.
	out = ok("org.apache.kafka.tools.MetadataQuorumCommand", "describe", "--status")
	require.Regexp(t, `LeaderId:\s+0\s`, out)
	require.Regexp(t, `CurrentVoters:\s+\[\{"id": 0`, out)
	out = ok("org.apache.kafka.tools.MetadataQuorumCommand", "describe", "--replication")
	require.Regexp(t, `(?m)^0\s+\S+\s+-?\d+\s+\d+\s+.*Leader`, out)
	const reassign = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
	plan := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"a","partition":1,"replicas":[0]}]}`), 0o644))
	require.Contains(t, ok(reassign, "--execute", "--reassignment-json-file", plan), "Successfully started partition reassignment")
	require.Contains(t, ok(reassign, "--verify", "--reassignment-json-file", plan), "Reassignment of partition a-1 is completed.")
	require.Contains(t, ok(reassign, "--list"), "No partition reassignments found.")
}
