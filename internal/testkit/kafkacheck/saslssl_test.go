package kafkacheck

import (
	"context"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKafkaSASLSSLFromProperties runs Kafka 4.4's console producer and
// consumer over SASL_SSL (SCRAM-SHA-256, the credential stored by the
// command's --add-scram as kafka-storage format stores it) against the
// command started from a server.properties written as Kafka's own
// config/server.properties is, with a PLAINTEXT listener beside the
// SASL_SSL one and the KRaft controller's settings (not served); a wrong
// password is refused with Kafka's SaslAuthenticationException.
func TestKafkaSASLSSLFromProperties(t *testing.T) {
	k := Get(t)
	ca := newPEMCA(t)
	saslPort, plainPort := freePort(t), freePort(t)
	props := fmt.Sprintf(`############################# Server Basics #############################
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093

############################# Socket Server Settings #############################
listeners=SASL_SSL://127.0.0.1:%[1]d,PLAINTEXT://127.0.0.1:%[2]d,CONTROLLER://:9093
inter.broker.listener.name=PLAINTEXT
advertised.listeners=SASL_SSL://127.0.0.1:%[1]d,PLAINTEXT://127.0.0.1:%[2]d,CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600

sasl.enabled.mechanisms=SCRAM-SHA-256
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="admin" password="admin-secret";
ssl.keystore.type=PEM
ssl.keystore.location=%[3]s

############################# Log Basics #############################
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
num.recovery.threads.per.data.dir=1

############################# Internal Topic Settings  #############################
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1

############################# Log Retention Policy #############################
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`, saslPort, plainPort, ca.keystore(t, "server", pkix.Name{CommonName: "kafkaserver"}))
	file := filepath.Join(t.TempDir(), "server.properties")
	require.NoError(t, os.WriteFile(file, []byte(props), 0o644))
	s := startKafkaServer(t, k, file, "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]")
	require.Equal(t, fmt.Sprintf("127.0.0.1:%d", saslPort), s.addr)

	clientConfig := func(name, password string) string {
		cfg := "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="` + password + "\";\n" +
			"ssl.truststore.type=PEM\nssl.truststore.location=" + ca.truststore() + "\n"
		path := filepath.Join(ca.dir, name+".properties")
		require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
		return path
	}
	tool := func(stdin, class string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := k.javaCommand(ctx, class, args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	alice := clientConfig("alice", "alice-secret")
	out, err := tool("over SASL_SSL\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", s.addr, "--topic", "orders",
		"--command-config", alice, "--command-property", "max.block.ms=20000", "--command-property", "delivery.timeout.ms=20000")
	require.NoError(t, err, out)
	require.NotContains(t, out, "Exception", out)
	out, err = tool("", "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", s.addr, "--topic", "orders",
		"--group", "g", "--from-beginning", "--max-messages", "1", "--timeout-ms", "30000", "--command-config", alice)
	require.NoError(t, err, out)
	require.Contains(t, out, "over SASL_SSL")
	require.Contains(t, out, "Processed a total of 1 messages")

	out, _ = tool("x\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", s.addr, "--topic", "orders",
		"--command-config", clientConfig("wrong", "wrong-secret"), "--command-property", "max.block.ms=10000")
	require.Contains(t, out, "SaslAuthenticationException")
}
