package kafkacheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// aclTableRow is one request of the who-may-do-what table: a KafkaCheck
// acl-table line and the answer Kafka's Java client gets from Kafka 4.4.
type aclTableRow struct {
	user, op string
	args     []string
	want     string // "ok", "ok " + what was listed, or the exception's class
}

// aclTable is the table of who may do what over Kafka's Java clients, in
// the order its rows run (rows that write come before the rows that read
// what they wrote; the topic deletion comes last). The principals and
// ACLs are setUpACLTable's.
var aclTable = []aclTableRow{
	{"alice", "produce", []string{"alice-orders"}, "ok"},                          // prefixed allow
	{"alice", "produce", []string{"alice-secret"}, "TopicAuthorizationException"}, // a deny over the prefixed allow
	{"alice", "produce", []string{"shared"}, "ok"},                                // literal allow
	{"alice", "produce", []string{"other"}, "TopicAuthorizationException"},        // no ACL
	{"bob", "produce", []string{"shared"}, "TopicAuthorizationException"},         // READ only
	{"bob", "produce", []string{"alice-orders"}, "TopicAuthorizationException"},
	{"admin", "produce", []string{"alice-secret"}, "ok"},                 // super user
	{"alice", "read", []string{"alice-secret"}, "ok"},                    // the deny is of WRITE
	{"alice", "read", []string{"shared"}, "TopicAuthorizationException"}, // WRITE is not READ
	{"bob", "read", []string{"shared"}, "ok"},
	{"bob", "read", []string{"alice-orders"}, "TopicAuthorizationException"},
	{"alice", "consume", []string{"alice-orders", "alice-group"}, "ok"},
	{"bob", "consume", []string{"shared", "alice-group"}, "GroupAuthorizationException"},
	{"bob", "consume", []string{"shared", "bob-group"}, "ok"}, // prefixed group allow
	{"alice", "consume", []string{"other", "alice-group"}, "TopicAuthorizationException"},
	{"alice", "group-offsets", []string{"alice-group"}, "ok"},
	{"bob", "group-offsets", []string{"alice-group"}, "GroupAuthorizationException"},
	{"alice", "txn", []string{"alice-txn", "alice-orders", "alice-group"}, "ok"},
	{"bob", "init-txn", []string{"alice-txn"}, "TransactionalIdAuthorizationException"},
	{"admin", "init-txn", []string{"bob-txn"}, "ok"},
	{"alice", "txn", []string{"alice-txn", "other", "alice-group"}, "TopicAuthorizationException"},
	{"alice", "txn", []string{"alice-txn", "alice-orders", "bob-group"}, "GroupAuthorizationException"},
	{"alice", "list-topics", nil, "ok alice-orders,alice-secret,shared"}, // the topics she may not describe are hidden
	{"bob", "list-topics", nil, "ok shared"},
	{"admin", "list-topics", nil, "ok alice-orders,alice-secret,other,shared"},
	{"bob", "describe-topic", []string{"alice-orders"}, "TopicAuthorizationException"},
	{"alice", "create-topic", []string{"alice-new"}, "ok"}, // CREATE on the prefix
	{"bob", "create-topic", []string{"bob-new"}, "TopicAuthorizationException"},
	{"alice", "delete-topic", []string{"alice-secret"}, "TopicAuthorizationException"},
	{"alice", "describe-configs", []string{"topic", "shared"}, "ok"},
	{"alice", "describe-configs", []string{"topic", "alice-orders"}, "TopicAuthorizationException"},
	{"alice", "describe-configs", []string{"broker", "-"}, "ClusterAuthorizationException"},
	{"admin", "describe-configs", []string{"broker", "-"}, "ok"},
	{"alice", "describe-acls", nil, "ClusterAuthorizationException"},
	{"admin", "describe-acls", nil, "ok 10"},
	{"alice", "create-acl", []string{"other"}, "ClusterAuthorizationException"},
	{"admin", "delete-topic", []string{"other"}, "ok"},
}

// setUpACLTable makes the table's users, topics and ACLs through
// bootstrap, a listener where the harness is a super user: SCRAM-SHA-256
// credentials for alice, bob and admin (password NAME-secret) with
// kafka-configs, four topics, and ten ACLs with kafka-acls: literal and
// prefixed, on topics, groups and a transactional id, a deny over an
// allow.
func setUpACLTable(t *testing.T, k *Kafka, bootstrap string) {
	t.Helper()
	for _, user := range []string{"alice", "bob", "admin"} {
		k.Run(t, "", "org.apache.kafka.tools.ConfigCommand", "--bootstrap-server", bootstrap, "--entity-type", "users",
			"--entity-name", user, "--alter", "--add-config", fmt.Sprintf("SCRAM-SHA-256=[password=%s-secret]", user))
	}
	k.Client(t, "alice-orders\t1\nalice-secret\t1\nshared\t1\nother\t1\n", "create-topics", bootstrap)
	for _, acl := range [][]string{
		{"--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--operation", "Create",
			"--topic", "alice-", "--resource-pattern-type", "prefixed"},
		{"--deny-principal", "User:alice", "--operation", "Write", "--topic", "alice-secret"},
		{"--allow-principal", "User:alice", "--operation", "Write", "--operation", "DescribeConfigs", "--topic", "shared"},
		{"--allow-principal", "User:bob", "--operation", "Read", "--topic", "shared"},
		{"--allow-principal", "User:alice", "--operation", "Read", "--group", "alice-group"},
		{"--allow-principal", "User:bob", "--operation", "Read", "--group", "bob-", "--resource-pattern-type", "prefixed"},
		{"--allow-principal", "User:alice", "--operation", "Write", "--transactional-id", "alice-txn"},
	} {
		k.Run(t, "", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", bootstrap, "--add"}, acl...)...)
	}
}

// runACLTable runs the table through bootstrap, a SASL/SCRAM listener, and
// returns each row's answer.
func runACLTable(t *testing.T, k *Kafka, bootstrap string) []string {
	t.Helper()
	var in strings.Builder
	for i, r := range aclTable {
		fmt.Fprintf(&in, "%d\t%s\t%s\t%s\n", i, r.user, r.op, strings.Join(r.args, "\t"))
	}
	rows := Lines(k.Client(t, in.String(), "acl-table", bootstrap), "row")
	require.Len(t, rows, len(aclTable))
	got := make([]string, len(rows))
	for i, f := range rows {
		require.Equal(t, fmt.Sprint(i), f[0])
		got[i] = f[1]
	}
	return got
}

// requireACLTable requires every row's answer to be Kafka's.
func requireACLTable(t *testing.T, who string, got []string) {
	t.Helper()
	bad := 0
	for i, r := range aclTable {
		if got[i] != r.want {
			bad++
			t.Errorf("%s: row %d, %s %s %v: got %q, Kafka answers %q", who, i, r.user, r.op, r.args, got[i], r.want)
		}
	}
	require.Zero(t, bad, "%s: rows answered unlike Kafka", who)
}

// TestJavaACLTableAgainstServer checks the table of who may do what
// request by request with Kafka 4.4's Java clients (producer, consumer in
// a group, transactional producer, Admin) against the kafkaserver command
// with StandardAuthorizer and SASL/SCRAM-SHA-256, and the same table
// against a Kafka 4.4 broker set up alike (StandardAuthorizer, a
// SASL_PLAINTEXT listener with SCRAM-SHA-256, the same users, topics and
// ACLs made with the same tools): each row's answer is the exception
// class Kafka's client throws, or success, and both agree on every row.
func TestJavaACLTableAgainstServer(t *testing.T) {
	k := Get(t)

	// The server: set up as User:ANONYMOUS (a super user) without SASL,
	// then restarted to require SASL/SCRAM with the credentials it keeps.
	s := startKafkaServer(t, k, "-authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"-super.users", "User:admin;User:ANONYMOUS")
	setUpACLTable(t, k, s.addr)
	s.restart(t, func() { s.args = append(s.args, "-sasl.enabled.mechanisms", "SCRAM-SHA-256") })
	server := runACLTable(t, k, s.addr)
	s.stop(t)

	// Kafka: a PLAINTEXT listener for the set-up (User:ANONYMOUS, a super
	// user, as the controller's listener needs) and a SASL_PLAINTEXT one
	// for the table.
	b := k.NewBroker(t, map[string]string{
		"authorizer.class.name":   "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":             "User:admin;User:ANONYMOUS",
		"sasl.enabled.mechanisms": "SCRAM-SHA-256",
		"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"listener.security.protocol.map":                              "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
	})
	saslAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b.extra["listeners"] = fmt.Sprintf("PLAINTEXT://%s,SASL_PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", b.Bootstrap(), saslAddr, b.ctrlPort)
	b.extra["advertised.listeners"] = fmt.Sprintf("PLAINTEXT://%s,SASL_PLAINTEXT://%s", b.Bootstrap(), saslAddr)
	b.writeConfig(t)
	b.Start()
	setUpACLTable(t, k, b.Bootstrap())
	kafka := runACLTable(t, k, saslAddr)
	b.Stop()

	for i, r := range aclTable {
		t.Logf("%-2d %-5s %-16s %-40s server: %-40s kafka: %s", i, r.user, r.op, strings.Join(r.args, " "), server[i], kafka[i])
	}
	requireACLTable(t, "Kafka 4.4", kafka)
	requireACLTable(t, "the server", server)
	require.Equal(t, kafka, server, "the server answers every row as Kafka does")
}
