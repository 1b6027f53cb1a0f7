package kafkacheck

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestKafkaConfigsUsersAgainstServer runs Kafka 4.4's kafka-configs
// (ConfigCommand) with --entity-type users against the server: it sets
// alice's SCRAM-SHA-256 credential with 8192 iterations (the tool salts
// and hashes the password; the server keeps the stored and server keys),
// describes it,
// is refused an iteration count above Kafka's maximum (by the server, in
// Kafka's words) or below its minimum (by the tool); the server restarted
// with SASL/SCRAM required, franz-go's SCRAM client logs in as alice with that password (not with another), and so does Kafka's
// tool itself, to add her SCRAM-SHA-512 credential.
func TestKafkaConfigsUsersAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	cmdConfig := filepath.Join(t.TempDir(), "scram.properties")
	require.NoError(t, os.WriteFile(cmdConfig, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`+"\n"), 0o644))
	configs := func(extra []string, args ...string) (string, error) {
		return k.run("", "org.apache.kafka.tools.ConfigCommand",
			append(append([]string{"--bootstrap-server", s.addr}, extra...), append([]string{"--entity-type", "users", "--entity-name", "alice"}, args...)...)...)
	}
	out, err := configs(nil, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]")
	require.NoError(t, err)
	require.Contains(t, out, "Completed updating config for user alice.")
	out, err = configs(nil, "--describe")
	require.NoError(t, err)
	require.Contains(t, out, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192")

	out, err = configs(nil, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=1000,password=x]")
	require.Error(t, err, "below 4096 iterations: %s", out)
	require.Contains(t, err.Error(), "less than the minimum 4096", "the tool checks the minimum itself")
	out, err = configs(nil, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=16385,password=x]")
	require.Error(t, err, "above 16384 iterations: %s", out)
	require.Contains(t, err.Error(), "UnacceptableCredentialException: Too many iterations", "the server's refusal")

	s.restart(t, func() { s.args = []string{"-sasl.enabled.mechanisms", "SCRAM-SHA-256"} })
	login := func(pass string) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr), kgo.SASL(scram.Auth{User: "alice", Pass: pass}.AsSha256Mechanism()),
			kgo.AllowAutoTopicCreation(), kgo.RequestRetries(1), kgo.RetryTimeout(5*time.Second), kgo.RecordDeliveryTimeout(10*time.Second))
		require.NoError(t, err)
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "scram", Value: []byte("v")}).FirstErr()
	}
	require.NoError(t, login("alice-secret"))
	require.Error(t, login("wrong"))
	out, err = configs([]string{"--command-config", cmdConfig}, "--alter", "--add-config", "SCRAM-SHA-512=[password=alice-512]")
	require.NoError(t, err, "the tool logs in as alice: %s", out)
}

// TestKafkaConfigsQuotasAgainstServer runs Kafka 4.4's kafka-configs with
// --entity-type users and clients against the server: it sets alice's
// producer_byte_rate, a client id's consumer_byte_rate and the default
// client id's request_percentage, describes them, is refused a quota of 0
// as Kafka refuses it, deletes one, and the others survive a restart.
func TestKafkaConfigsQuotasAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	configs := func(args ...string) (string, error) {
		return k.run("", "org.apache.kafka.tools.ConfigCommand", append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	out, err := configs("--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config", "producer_byte_rate=1048576")
	require.NoError(t, err)
	require.Contains(t, out, "Completed updating config for user alice.")
	_, err = configs("--entity-type", "clients", "--entity-name", "app", "--alter", "--add-config", "consumer_byte_rate=2097152")
	require.NoError(t, err)
	_, err = configs("--entity-type", "clients", "--entity-default", "--alter", "--add-config", "request_percentage=50")
	require.NoError(t, err)

	out, err = configs("--entity-type", "users", "--entity-name", "alice", "--describe")
	require.NoError(t, err)
	require.Contains(t, out, "Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0")
	out, err = configs("--entity-type", "clients", "--describe")
	require.NoError(t, err)
	require.Contains(t, out, "Quota configs for client-id 'app' are consumer_byte_rate=2097152.0")
	require.Contains(t, out, "Quota configs for the default client-id are request_percentage=50.0")

	out, err = configs("--entity-type", "users", "--entity-name", "alice", "--alter", "--add-config", "producer_byte_rate=0")
	require.Error(t, err, "a quota of 0: %s", out)
	require.Contains(t, err.Error(), "InvalidRequestException: Quota producer_byte_rate must be greater than 0")

	_, err = configs("--entity-type", "clients", "--entity-name", "app", "--alter", "--delete-config", "consumer_byte_rate")
	require.NoError(t, err)
	s.restart(t, nil)
	out, err = configs("--entity-type", "clients", "--describe")
	require.NoError(t, err)
	require.NotContains(t, out, "'app'")
	require.Contains(t, out, "request_percentage=50.0")
	out, err = configs("--entity-type", "users", "--describe")
	require.NoError(t, err)
	require.Contains(t, out, "producer_byte_rate=1048576.0")
}
