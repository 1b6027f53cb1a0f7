package kafkacheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOAuthBearerJavaAgainstServer runs Kafka 4.4's Java clients with
// SASL/OAUTHBEARER and the default unsecured login handler against the
// server, which requires the scope "kafka", authorizes (admin a super
// user, alice granted by kafka-acls) and ends sessions after 2 s: a
// producer sending 600 records over about 12 s and a consumer reading them
// re-authenticate as alice several times and lose nothing; a token
// without the scope is refused with Kafka's insufficient_scope JSON.
func TestOAuthBearerJavaAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k) // its readiness probe speaks plaintext
	s.restart(t, func() {
		s.args = []string{"-sasl.enabled.mechanisms", "OAUTHBEARER", "-connections.max.reauth.ms", "2000",
			"-unsecuredValidatorRequiredScope", "kafka", "-authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"-super.users", "User:admin"}
	})
	dir := t.TempDir()
	props := func(name, claims string) string {
		p := filepath.Join(dir, name+".properties")
		require.NoError(t, os.WriteFile(p, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"+
			"sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "+claims+";\n"), 0o644))
		return p
	}
	admin := props("admin", `unsecuredLoginStringClaim_sub="admin" unsecuredLoginStringClaim_scope="kafka"`)
	alice := props("alice", `unsecuredLoginStringClaim_sub="alice" unsecuredLoginStringClaim_scope="kafka"`)
	noScope := props("noscope", `unsecuredLoginStringClaim_sub="alice"`)

	for _, args := range [][]string{
		{"--operation", "Create", "--operation", "Write", "--operation", "Read", "--operation", "Describe", "--topic", "oauth"},
		{"--operation", "Read", "--group", "oauth-group"},
	} {
		k.Run(t, "", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", s.addr, "--command-config", admin,
			"--add", "--allow-principal", "User:alice"}, args...)...)
	}
	k.Run(t, "", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", s.addr, "--command-config", admin,
		"--create", "--topic", "oauth", "--partitions", "1")
	perf := k.Run(t, "", "org.apache.kafka.tools.ProducerPerformance", "--topic", "oauth", "--num-records", "600",
		"--record-size", "100", "--throughput", "50", "--producer.config", alice, "--producer-props", "bootstrap.servers="+s.addr, "acks=all")
	require.Contains(t, perf, "600 records sent")
	lines := k.Run(t, "", "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", s.addr, "--topic", "oauth",
		"--group", "oauth-group", "--from-beginning", "--max-messages", "600", "--consumer.config", alice,
		"--consumer-property", "max.poll.records=5", "--consumer-property", "fetch.max.wait.ms=100")
	records := 0
	for _, l := range strings.Split(lines, "\n") {
		if len(l) == 100 {
			records++
		}
	}
	require.Equal(t, 600, records, "every record:\n%s", lines[max(0, len(lines)-500):])
	log, err := os.ReadFile(s.log)
	require.NoError(t, err)
	reauths := 0
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "re-authenticated") && strings.Contains(line, "principal=User:alice") {
			reauths++
		}
	}
	t.Logf("%d re-authentications as alice", reauths)
	require.GreaterOrEqual(t, reauths, 3, "the clients re-authenticated several times:\n%s", s.logTail())

	out, err := k.run("", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", s.addr, "--command-config", noScope, "--list")
	require.Error(t, err, "a token without the scope: %s", out)
	require.Contains(t, fmt.Sprint(err), `{"status":"insufficient_scope", "scope":"[kafka]"}`)
}
