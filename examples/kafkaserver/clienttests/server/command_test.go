package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"software.sslmate.com/src/go-pkcs12"
)

// serverCert writes a certificate for localhost, 127.0.0.1 and ::1 with
// its key to dir, as a PEM keystore and as a PKCS#12 one (password
// "p12-secret"), and returns their paths and a pool trusting it.
func serverCert(t *testing.T, dir string) (pemKeystore, p12Keystore string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	pemKeystore, p12Keystore = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.p12")
	require.NoError(t, os.WriteFile(pemKeystore, append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...), 0o600))
	p12, err := pkcs12.Modern.Encode(key, cert, nil, "p12-secret")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p12Keystore, p12, 0o600))
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return pemKeystore, p12Keystore, roots
}

// freePort is a TCP port free on host now.
func freePortOn(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestCommandListeners: the command (built and run) started from a properties file
// written as Kafka's config/server.properties (a controller listener, which
// is not served, and KRaft settings, which are listed as not used), with
// a PLAINTEXT, an SSL (PEM keystore), a SASL_PLAINTEXT (on IPv6's
// localhost) and a SASL_SSL listener (PKCS#12 keystore, every interface),
// and a listener named CLIENT mapped to PLAINTEXT on port 0, serves them
// all at once: franz-go clients without SASL, with SCRAM-SHA-256 and
// SCRAM-SHA-512 (users from --add-scram) and with PLAIN (users from the
// listener's JAAS setting), over plaintext and TLS, produce on each, and
// each sees in Metadata and DescribeCluster the advertised address of the
// listener it came in on. DescribeConfigs lists the listeners.
func TestCommandListeners(t *testing.T) {
	dir := t.TempDir()
	pemKS, p12KS, roots := serverCert(t, dir)
	v6 := "::1"
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		v6 = "127.0.0.1" // no IPv6 on this machine
	} else {
		ln.Close()
	}
	pPlain, pSSL, pSASL, pSASLSSL := freePortOn(t, "127.0.0.1"), freePortOn(t, "127.0.0.1"), freePortOn(t, v6), freePortOn(t, "")
	props := fmt.Sprintf(`# Written as Kafka's config/server.properties.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://127.0.0.1:%[1]d,SSL://localhost:%[2]d,SASL_PLAINTEXT://%[3]s,\
    SASL_SSL://:%[4]d,CLIENT://localhost:0,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d,SSL://localhost:%[2]d,SASL_PLAINTEXT://%[3]s,SASL_SSL://localhost:%[4]d
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CLIENT:PLAINTEXT
num.network.threads=3
log.dirs=%[5]s
num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
log.retention.hours=168

sasl.enabled.mechanisms=SCRAM-SHA-256,PLAIN
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username="admin" password="admin-secret" user_admin="admin-secret" user_bob="bob-secret";
plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret" user_carol="carol\\\"s-secret";
ssl.keystore.type=PEM
ssl.keystore.location=%[6]s
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=%[7]s
listener.name.sasl_ssl.ssl.keystore.password=p12-secret
`, pPlain, pSSL, net.JoinHostPort(v6, strconv.Itoa(pSASL)), pSASLSSL, filepath.Join(dir, "kl"), pemKS, p12KS)
	file := filepath.Join(dir, "server.properties")
	require.NoError(t, os.WriteFile(file, []byte(props), 0o644))

	srv := startCommand(t, file, "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]",
		"-S", `SCRAM-SHA-512=[name="alice",password="alice-512",iterations=8192]`)
	require.Contains(t, srv.stderr(), "kafkaserver: not used: controller.quorum.bootstrap.servers, inter.broker.listener.name, "+
		"listeners: CONTROLLER (controller.listener.names), num.network.threads, offsets.topic.replication.factor, process.roles, "+
		"transaction.state.log.replication.factor\n")
	ctx := context.Background()
	// CLIENT's port, bound at random, is in the line the command prints.
	_, clientAddr, ok := strings.Cut(srv.line, "CLIENT://")
	require.True(t, ok, srv.line)
	clientAddr, _, _ = strings.Cut(clientAddr, ",")
	_, clientPort, err := net.SplitHostPort(clientAddr)
	require.NoError(t, err)

	tlsCfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	scram256 := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()
	scram512 := scram.Auth{User: "alice", Pass: "alice-512"}.AsSha512Mechanism()
	plainBob := plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism()
	for _, c := range []struct {
		name, seed, advertised string
		tls                    bool
		mech                   sasl.Mechanism
	}{
		{"PLAINTEXT", fmt.Sprintf("127.0.0.1:%d", pPlain), fmt.Sprintf("127.0.0.1:%d", pPlain), false, nil},
		{"CLIENT", "localhost:" + clientPort, "localhost:" + clientPort, false, nil},
		{"SSL", fmt.Sprintf("localhost:%d", pSSL), fmt.Sprintf("localhost:%d", pSSL), true, nil},
		{"SASL_PLAINTEXT/SCRAM-SHA-256", net.JoinHostPort(v6, strconv.Itoa(pSASL)), net.JoinHostPort(v6, strconv.Itoa(pSASL)), false, scram256},
		{"SASL_PLAINTEXT/PLAIN", net.JoinHostPort(v6, strconv.Itoa(pSASL)), net.JoinHostPort(v6, strconv.Itoa(pSASL)), false, plainBob},
		{"SASL_SSL/SCRAM-SHA-512", fmt.Sprintf("127.0.0.1:%d", pSASLSSL), fmt.Sprintf("localhost:%d", pSASLSSL), true, scram512},
		{"SASL_SSL/PLAIN", fmt.Sprintf("127.0.0.1:%d", pSASLSSL), fmt.Sprintf("localhost:%d", pSASLSSL), true, plainBob},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []kgo.Opt{kgo.SeedBrokers(c.seed), kgo.DefaultProduceTopic("orders"), kgo.AllowAutoTopicCreation(),
				kgo.RequestRetries(2), kgo.RetryTimeout(10 * time.Second)}
			if c.tls {
				opts = append(opts, kgo.DialTLSConfig(tlsCfg))
			}
			if c.mech != nil {
				opts = append(opts, kgo.SASL(c.mech))
			}
			cl, err := kgo.NewClient(opts...)
			require.NoError(t, err)
			defer cl.Close()
			rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
			defer rcancel()
			require.NoError(t, cl.ProduceSync(rctx, &kgo.Record{Value: []byte(c.name)}).FirstErr())

			meta, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, cl)
			require.NoError(t, err)
			require.Len(t, meta.Brokers, 1)
			require.Equal(t, c.advertised, net.JoinHostPort(meta.Brokers[0].Host, strconv.Itoa(int(meta.Brokers[0].Port))), "Metadata")
			dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(rctx, cl)
			require.NoError(t, err)
			require.Equal(t, c.advertised, net.JoinHostPort(dc.Brokers[0].Host, strconv.Itoa(int(dc.Brokers[0].Port))), "DescribeCluster")
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.CoordinatorKeys = []string{"g"}
			fcr, err := fc.RequestWith(rctx, cl)
			require.NoError(t, err)
			if fcr.Coordinators[0].ErrorCode == kerr.CoordinatorNotAvailable.Code { // the lookup made __consumer_offsets
				fcr, err = fc.RequestWith(rctx, cl)
				require.NoError(t, err)
			}
			require.Equal(t, c.advertised, net.JoinHostPort(fcr.Coordinators[0].Host, strconv.Itoa(int(fcr.Coordinators[0].Port))), "FindCoordinator")
		})
	}

	// The wrong password is refused on the SASL listeners.
	cl, err := kgo.NewClient(kgo.SeedBrokers(net.JoinHostPort(v6, strconv.Itoa(pSASL))),
		kgo.SASL(scram.Auth{User: "alice", Pass: "wrong"}.AsSha256Mechanism()), kgo.RequestRetries(0))
	require.NoError(t, err)
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	cl.Close()
	require.Error(t, err)
	// PLAIN's JAAS users are PLAIN's only: bob has no SCRAM credential, as
	// on a Kafka broker (SCRAM with his PLAIN password logged in before).
	cl, err = kgo.NewClient(kgo.SeedBrokers(net.JoinHostPort(v6, strconv.Itoa(pSASL))),
		kgo.SASL(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism()), kgo.RequestRetries(0))
	require.NoError(t, err)
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	cl.Close()
	require.Error(t, err)

	// DescribeConfigs of the broker lists the listeners, as bound and as
	// advertised, and their protocols.
	cl, err = kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", pPlain)))
	require.NoError(t, err)
	defer cl.Close()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl)
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range resp.Resources[0].Configs {
		if e.Value != nil {
			got[e.Name] = *e.Value
		}
	}
	require.Equal(t, fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d,SASL_PLAINTEXT://%s,SASL_SSL://[::]:%d,CLIENT://127.0.0.1:%s",
		pPlain, pSSL, net.JoinHostPort(v6, strconv.Itoa(pSASL)), pSASLSSL, clientPort), got["listeners"])
	require.Equal(t, fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,SSL://localhost:%d,SASL_PLAINTEXT://%s,SASL_SSL://localhost:%d,CLIENT://localhost:%s",
		pPlain, pSSL, net.JoinHostPort(v6, strconv.Itoa(pSASL)), pSASLSSL, clientPort), got["advertised.listeners"])
	require.Equal(t, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CLIENT:PLAINTEXT", got["listener.security.protocol.map"])
	require.Equal(t, "SCRAM-SHA-512,PLAIN", got["listener.name.sasl_ssl.sasl.enabled.mechanisms"])
}

// command is the kafkaserver command running in a test.
type command struct {
	bin    string // the command's binary
	line   string // the line it printed once it listened
	errOut *syncBuffer
}

func (c *command) stderr() string { return c.errOut.String() }

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCommand builds examples/kafkaserver's command and runs it with
// args until the test ends (SIGTERM, then its exit is checked), once it
// printed that it serves.
func startCommand(t *testing.T, args ...string) *command {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kafkaserver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the command: %s", out)
	c := &command{bin: bin, errOut: &syncBuffer{}}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = c.errOut
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "serving") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the command did not start: %q %v\n%s", line, err, c.stderr())
	}
	c.line = strings.TrimSpace(line)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		require.NoError(t, cmd.Wait(), c.stderr())
	})
	return c
}
