package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
)

// propsFile writes lines as a properties file and returns its path.
func propsFile(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

// TestBrokerProperties: what a properties file sets and what it may not
// (the listeners, served from clients' side by clienttests'
// TestCommandListeners): Kafka's listeners default, the command's 3 s
// group.initial.rebalance.delay.ms, flags over --override over the
// file, and clear refusals of what cannot be served.
func TestBrokerProperties(t *testing.T) {
	file := propsFile(t, "log.dirs=/tmp/kl", "num.partitions=4", "log.segment.bytes=1048576")
	o, err := parseFlags([]string{file}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "/tmp/kl", o.dir)
	require.Equal(t, []server.Listener{{Name: "PLAINTEXT", SecurityProtocol: server.Plaintext, Addr: ":9092", AdvertisedAddr: ":9092"}}, o.cfg.Listeners,
		"Kafka's listeners default")
	require.Equal(t, 3*time.Second, o.dirCfg.GroupInitialRebalanceDelay)
	require.Equal(t, int32(4), o.cfg.NumPartitions)
	require.Equal(t, int64(1048576), o.dirCfg.DefaultTopic.SegmentBytes)

	o, err = parseFlags([]string{file, "--override", "num.partitions=5", "--override", "group.initial.rebalance.delay.ms=0"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int32(5), o.cfg.NumPartitions, "--override wins over the file")
	require.Zero(t, o.dirCfg.GroupInitialRebalanceDelay)
	o, err = parseFlags([]string{file, "--override", "num.partitions=5", "-num.partitions", "6", "-dir", "/tmp/other"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int32(6), o.cfg.NumPartitions, "a flag wins over --override")
	require.Equal(t, "/tmp/other", o.dir)

	jks := filepath.Join(t.TempDir(), "server.jks")
	require.NoError(t, os.WriteFile(jks, []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2}, 0o600))
	for name, lines := range map[string][]string{
		"two directories":     {"log.dirs=/a,/b"},
		"no directory":        {"num.partitions=1"},
		"replication factor":  {"log.dirs=/a", "default.replication.factor=3"},
		"unmapped listener":   {"log.dirs=/a", "listeners=EXTERNAL://:9092"},
		"GSSAPI by default":   {"log.dirs=/a", "listeners=SASL_PLAINTEXT://:9092"},
		"PLAIN without users": {"log.dirs=/a", "listeners=SASL_PLAINTEXT://:9092", "sasl.enabled.mechanisms=PLAIN"},
		"wrong login module": {"log.dirs=/a", "listeners=SASL_PLAINTEXT://:9092", "sasl.enabled.mechanisms=PLAIN",
			"plain.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required user_a=\"b\";"},
		"SSL without keystore": {"log.dirs=/a", "listeners=SSL://:9093"},
		"JKS":                  {"log.dirs=/a", "listeners=SSL://:9093", "ssl.keystore.location=" + jks},
		"advertised unknown":   {"log.dirs=/a", "listeners=PLAINTEXT://:9092", "advertised.listeners=OTHER://h:1"},
		"only the controller":  {"log.dirs=/a", "listeners=CONTROLLER://:9093", "controller.listener.names=CONTROLLER", "listener.security.protocol.map=CONTROLLER:PLAINTEXT"},
		"bad value":            {"log.dirs=/a", "log.segment.bytes=x"},
	} {
		_, err := parseFlags([]string{propsFile(t, lines...)}, io.Discard)
		require.Error(t, err, name)
	}
	_, err = parseFlags([]string{"-dir", "d", "--add-scram", "SCRAM-SHA-1=[name=a,password=b]"}, io.Discard)
	require.Error(t, err)
	_, err = parseFlags([]string{"-dir", "d", "--add-scram", "SCRAM-SHA-256=[name=a]"}, io.Discard)
	require.Error(t, err)
	_, err = parseFlags([]string{"-dir", "d", "--add-scram", "SCRAM-SHA-256=[name=a,password=b,iterations=10]"}, io.Discard)
	require.Error(t, err, "below Kafka's 4096 iterations")
}
