package kafkacheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKafkaACLsAgainstServer runs Kafka 4.4's kafka-acls (AclCommand)
// against the server with Kafka's StandardAuthorizer on (the tool
// connects without SASL, as User:ANONYMOUS, a super user here): it adds
// literal and prefixed ACLs, lists them all and by resource, removes one
// and a whole pattern, and the rest survive a restart of the server.
func TestKafkaACLsAgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k, "-authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"-super.users", "User:ANONYMOUS")
	acls := func(args ...string) string {
		t.Helper()
		out, err := k.run("", "org.apache.kafka.tools.AclCommand", append([]string{"--bootstrap-server", s.addr}, args...)...)
		require.NoError(t, err)
		return out
	}
	const (
		ordersPattern = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"
		logsPattern   = "ResourcePattern(resourceType=TOPIC, name=logs-, patternType=PREFIXED)"
		groupPattern  = "ResourcePattern(resourceType=GROUP, name=app, patternType=PREFIXED)" // the pattern type applies to the group too
		aliceRead     = "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
		aliceWrite    = "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"
		bobDeny       = "(principal=User:bob, host=10.0.0.1, operation=WRITE, permissionType=DENY)"
		bobRead       = "(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)"
	)
	out := acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", "orders")
	require.Contains(t, out, "Adding ACLs for resource `"+ordersPattern+"`")
	require.Contains(t, out, aliceRead)
	require.Contains(t, out, aliceWrite)
	acls("--add", "--deny-principal", "User:bob", "--deny-host", "10.0.0.1", "--operation", "Write", "--topic", "orders")
	acls("--add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "logs-", "--resource-pattern-type", "prefixed")
	// --consumer adds READ and DESCRIBE on the topic and READ on the group.
	acls("--add", "--allow-principal", "User:bob", "--consumer", "--topic", "logs-", "--resource-pattern-type", "prefixed", "--group", "app")

	all := acls("--list")
	for _, want := range []string{ordersPattern, logsPattern, groupPattern, aliceRead, aliceWrite, bobDeny, bobRead,
		"(principal=User:bob, host=*, operation=DESCRIBE, permissionType=ALLOW)"} {
		require.Contains(t, all, want)
	}
	one := acls("--list", "--topic", "orders")
	require.Contains(t, one, aliceRead)
	require.NotContains(t, one, logsPattern)
	// MATCH: the ACLs that apply to the topic logs-eu.
	match := acls("--list", "--topic", "logs-eu", "--resource-pattern-type", "match")
	require.Contains(t, match, logsPattern)
	require.NotContains(t, match, ordersPattern)

	acls("--remove", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "orders", "--force")
	acls("--remove", "--topic", "logs-", "--resource-pattern-type", "prefixed", "--force")
	check := func() {
		t.Helper()
		all := acls("--list")
		require.Contains(t, all, aliceRead)
		require.Contains(t, all, bobDeny)
		require.Contains(t, all, groupPattern)
		require.NotContains(t, all, aliceWrite)
		require.NotContains(t, all, logsPattern)
	}
	check()
	s.restart(t, nil)
	check()
	require.Equal(t, 3, strings.Count(acls("--list"), "permissionType="), "alice's READ, bob's DENY, bob's group READ")
}
