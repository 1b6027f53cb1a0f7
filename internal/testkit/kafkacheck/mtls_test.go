package kafkacheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pemCA is a test CA that writes PEM keystores as Kafka's
// ssl.keystore.type=PEM reads them.
type pemCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

func newPEMCA(t *testing.T) *pemCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkacheck CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	ca := &pemCA{cert: cert, key: key, dir: t.TempDir()}
	require.NoError(t, os.WriteFile(ca.truststore(), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	return ca
}

func (ca *pemCA) truststore() string { return filepath.Join(ca.dir, "ca.pem") }

// keystore writes name.pem: a PKCS#8 key and its certificate for
// subject, signed by the CA, valid for 127.0.0.1.
func (ca *pemCA) keystore(t *testing.T, name string, subject pkix.Name) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subject, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	path := filepath.Join(ca.dir, name+".pem")
	require.NoError(t, os.WriteFile(path, append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...), 0o600))
	return path
}

// clientConfig writes a Java client's properties for SSL with keystore
// (none: no client certificate) and returns the file's path.
func (ca *pemCA) clientConfig(t *testing.T, name, keystore string) string {
	t.Helper()
	props := "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=" + ca.truststore() + "\n"
	if keystore != "" {
		props += "ssl.keystore.type=PEM\nssl.keystore.location=" + keystore + "\n"
	}
	path := filepath.Join(ca.dir, name+".properties")
	require.NoError(t, os.WriteFile(path, []byte(props), 0o600))
	return path
}

// TestKafkaMutualTLSPrincipals runs Kafka 4.4's Java clients with PEM
// keystores against the command's SSL listener (-ssl.keystore.location,
// -ssl.truststore.location, -ssl.client.auth requested) with the
// StandardAuthorizer on: kafka-acls, as the super user its certificate
// names, grants User:CN=alice,OU=eng,O=Example\, Inc. (Java's
// X500Principal name of alice's certificate, comma escaped) a topic and
// User:carol (CN=Carol,OU=ops after a mapping rule) another; each
// produces to and consumes its own with the console tools, and each is
// refused the other's; a client without a certificate is User:ANONYMOUS.
func TestKafkaMutualTLSPrincipals(t *testing.T) {
	k := Get(t)
	ca := newPEMCA(t)
	s := startKafkaServer(t, k, "-ssl.keystore.location", ca.keystore(t, "server", pkix.Name{CommonName: "kafkaserver"}),
		"-ssl.truststore.location", ca.truststore(), "-ssl.client.auth", "requested",
		"-ssl.principal.mapping.rules", "RULE:^CN=(.*?),OU=ops,.*$/$1/L, DEFAULT",
		"-authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "-super.users", "User:CN=admin,O=kafkalite")
	admin := ca.clientConfig(t, "admin", ca.keystore(t, "admin", pkix.Name{CommonName: "admin", Organization: []string{"kafkalite"}}))
	alice := ca.clientConfig(t, "alice", ca.keystore(t, "alice", pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Example, Inc."}}))
	carol := ca.clientConfig(t, "carol", ca.keystore(t, "carol", pkix.Name{CommonName: "Carol", OrganizationalUnit: []string{"ops"}, Organization: []string{"Example"}}))
	anonymous := ca.clientConfig(t, "anonymous", "")

	run := func(class string, args ...string) (string, error) {
		return k.run("", class, append([]string{"--bootstrap-server", s.addr}, args...)...)
	}
	for _, topic := range []string{"alice-orders", "carol-orders"} {
		_, err := run("org.apache.kafka.tools.TopicCommand", "--command-config", admin, "--create", "--topic", topic, "--partitions", "1")
		require.NoError(t, err)
	}
	const alicePrincipal = `User:CN=alice,OU=eng,O=Example\, Inc.`
	for principal, topic := range map[string]string{alicePrincipal: "alice-orders", "User:carol": "carol-orders"} {
		out, err := run("org.apache.kafka.tools.AclCommand", "--command-config", admin, "--add", "--allow-principal", principal,
			"--operation", "Write", "--operation", "Read", "--operation", "Describe", "--topic", topic)
		require.NoError(t, err)
		require.Contains(t, out, "(principal="+principal+", host=*, operation=WRITE, permissionType=ALLOW)")
		_, err = run("org.apache.kafka.tools.AclCommand", "--command-config", admin, "--add", "--allow-principal", principal,
			"--operation", "Read", "--group", "g-", "--resource-pattern-type", "prefixed")
		require.NoError(t, err)
	}
	listed, err := run("org.apache.kafka.tools.AclCommand", "--command-config", admin, "--list")
	require.NoError(t, err)
	require.Contains(t, listed, "principal="+alicePrincipal)

	// The console tools exit 0 after an authorization error they print:
	// both streams tell.
	tool := func(stdin, class string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := k.javaCommand(ctx, class, args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	produce := func(config, topic, value string) (string, error) {
		return tool(value+"\n", "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", s.addr, "--topic", topic,
			"--command-config", config, "--command-property", "max.block.ms=10000", "--command-property", "delivery.timeout.ms=10000",
			"--command-property", "request.timeout.ms=5000")
	}
	consume := func(config, topic, group string) (string, error) {
		return tool("", "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", s.addr, "--topic", topic, "--group", group, "--from-beginning",
			"--max-messages", "1", "--timeout-ms", "20000", "--command-config", config)
	}
	for _, tc := range []struct{ config, topic, other string }{{alice, "alice-orders", "carol-orders"}, {carol, "carol-orders", "alice-orders"}} {
		out, err := produce(tc.config, tc.topic, "from "+tc.topic)
		require.NoError(t, err, out)
		require.NotContains(t, out, "Exception", out)
		out, err = consume(tc.config, tc.topic, "g-"+tc.topic)
		require.NoError(t, err, out)
		require.Contains(t, out, "from "+tc.topic)
		require.Contains(t, out, "Processed a total of 1 messages")
		out, _ = produce(tc.config, tc.other, "not allowed")
		require.Contains(t, out, "TopicAuthorizationException", "producing to %s", tc.other)
		out, _ = consume(tc.config, tc.other, "g-"+tc.topic)
		require.Contains(t, out, "TopicAuthorizationException: Not authorized to access topics: ["+tc.other+"]", "consuming %s", tc.other)
	}
	out, _ := consume(anonymous, "alice-orders", "g-anonymous")
	require.Contains(t, out, "TopicAuthorizationException", "no certificate: User:ANONYMOUS")
	// The handshake fails for a client whose certificate the truststore
	// does not vouch for.
	stranger := newPEMCA(t)
	out, _ = produce(ca.clientConfig(t, "stranger", stranger.keystore(t, "stranger", pkix.Name{CommonName: "alice"})), "alice-orders", "x")
	require.Contains(t, out, "SslAuthenticationException")
}
