package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// testCA makes a CA whose certificate also serves 127.0.0.1 (no extended
// key usage, so that it may sign client certificates), and the pool that
// trusts it.
func testCA(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkaserver CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// clientCert makes a client certificate for subject, signed by ca.
func clientCert(t *testing.T, ca tls.Certificate, subject pkix.Name) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Leaf, &key.PublicKey, ca.PrivateKey)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestMutualTLSPrincipal: over a TLS listener that asks for client
// certificates, the authorizer sees "User:" and the certificate's subject
// as Java prints it (Kafka's DefaultKafkaPrincipalBuilder), after
// ssl.principal.mapping.rules; a client without a certificate is
// User:ANONYMOUS under ssl.client.auth=requested and refused at the
// handshake under required; a certificate with no ACL gets
// TOPIC_AUTHORIZATION_FAILED; SASL over TLS names the SASL user; and
// quotas see the same principal.
func TestMutualTLSPrincipal(t *testing.T) {
	ca, pool := testCA(t)
	mtls := func(auth tls.ClientAuthType, rules string) func(*server.Config) {
		return func(c *server.Config) {
			c.TLS = &tls.Config{Certificates: []tls.Certificate{ca}, ClientCAs: pool, ClientAuth: auth, MinVersion: tls.VersionTLS12}
			c.SSLPrincipalMappingRules = rules
			c.AuthorizerClassName = server.StandardAuthorizer
			c.SuperUsers = []string{"User:CN=admin,O=kafkalite"}
		}
	}
	admin := clientCert(t, ca, pkix.Name{CommonName: "admin", Organization: []string{"kafkalite"}})
	alice := clientCert(t, ca, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Example, Inc."}})
	carol := clientCert(t, ca, pkix.Name{CommonName: "Carol", OrganizationalUnit: []string{"eng"}, Organization: []string{"Example"}})
	bob := clientCert(t, ca, pkix.Name{CommonName: "bob", Organization: []string{"Example"}})
	dial := func(certs ...tls.Certificate) kgo.Opt {
		return kgo.DialTLSConfig(&tls.Config{RootCAs: pool, Certificates: certs, MinVersion: tls.VersionTLS12})
	}
	allow := func(t *testing.T, addr, principal string, topics ...string) {
		t.Helper()
		cl := client(t, addr, dial(admin))
		adm := kadm.NewClient(cl)
		for _, topic := range topics {
			if md, err := adm.ListTopics(context.Background(), topic); err != nil || !md.Has(topic) {
				createTopic(t, cl, topic, 1)
			}
		}
		res, err := adm.CreateACLs(context.Background(), kadm.NewACLs().Allow(principal).Topics(topics...).
			ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead, kadm.OpWrite))
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}
	}
	authzFailed := func(t *testing.T, err error) {
		t.Helper()
		require.True(t, errors.Is(err, kerr.TopicAuthorizationFailed), "want TOPIC_AUTHORIZATION_FAILED, got %v", err)
	}

	t.Run("requested", func(t *testing.T) {
		srv := servertest.StartInMemory(t, mtls(tls.VerifyClientCertIfGiven, ""))
		// The comma in the organization is escaped, as Java escapes it.
		allow(t, srv.Addr, `User:CN=alice,OU=eng,O=Example\, Inc.`, "alice-t")
		allow(t, srv.Addr, "User:ANONYMOUS", "anon-t")
		require.NoError(t, roundTrip(t, srv.Addr, "alice-t", dial(alice)))
		authzFailed(t, roundTrip(t, srv.Addr, "alice-t", dial(bob)))
		authzFailed(t, roundTrip(t, srv.Addr, "alice-t", dial()))
		require.NoError(t, roundTrip(t, srv.Addr, "anon-t", dial()), "no certificate: ANONYMOUS")
		authzFailed(t, roundTrip(t, srv.Addr, "anon-t", dial(alice)))
		require.Error(t, roundTrip(t, srv.Addr, "anon-t"), "plaintext")
	})

	t.Run("required", func(t *testing.T) {
		srv := servertest.StartInMemory(t, mtls(tls.RequireAndVerifyClientCert, ""))
		allow(t, srv.Addr, `User:CN=alice,OU=eng,O=Example\, Inc.`, "alice-t")
		require.NoError(t, roundTrip(t, srv.Addr, "alice-t", dial(alice)))
		err := roundTrip(t, srv.Addr, "alice-t", dial())
		require.Error(t, err, "no certificate: refused at the handshake")
		require.False(t, errors.Is(err, kerr.TopicAuthorizationFailed), "refused before any request: %v", err)
		// A certificate from another CA is refused too.
		other, _ := testCA(t)
		require.Error(t, roundTrip(t, srv.Addr, "alice-t", dial(clientCert(t, other, pkix.Name{CommonName: "admin", Organization: []string{"kafkalite"}}))))
	})

	t.Run("mapping rules", func(t *testing.T) {
		rules := "RULE:^CN=(.*?),OU=eng,.*$/$1/L, RULE:^CN=admin,O=kafkalite$/CN=admin,O=kafkalite/, DEFAULT"
		srv := servertest.StartInMemory(t, mtls(tls.RequireAndVerifyClientCert, rules))
		allow(t, srv.Addr, "User:carol", "carol-t")
		allow(t, srv.Addr, "User:CN=bob,O=Example", "bob-t")
		require.NoError(t, roundTrip(t, srv.Addr, "carol-t", dial(carol)), "CN=Carol,OU=eng,O=Example maps to carol")
		require.NoError(t, roundTrip(t, srv.Addr, "bob-t", dial(bob)), "DEFAULT: the name as it is")
		authzFailed(t, roundTrip(t, srv.Addr, "carol-t", dial(bob)))

		// No rule applies: the connection fails, as Kafka fails it.
		strict := servertest.StartInMemory(t, mtls(tls.RequireAndVerifyClientCert, "RULE:^CN=(.*?),OU=eng,.*$/$1/L"))
		err := roundTrip(t, strict.Addr, "carol-t", dial(bob))
		require.Error(t, err)
		require.False(t, errors.Is(err, kerr.TopicAuthorizationFailed), "closed before any request: %v", err)
	})

	t.Run("SASL over TLS", func(t *testing.T) {
		srv := servertest.StartInMemory(t, func(c *server.Config) {
			mtls(tls.VerifyClientCertIfGiven, "")(c)
			c.SASLMechanisms, c.Users = []string{server.MechanismPlain}, map[string]string{"bob": "bob-secret", "eve": "eve-secret", "admin": "admin-secret"}
			c.SuperUsers = []string{"User:admin"}
		})
		cl := client(t, srv.Addr, dial(), kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism()))
		adm := kadm.NewClient(cl)
		createTopic(t, cl, "bob-t", 1)
		for _, p := range []string{"User:bob", `User:CN=alice,OU=eng,O=Example\, Inc.`} {
			res, err := adm.CreateACLs(context.Background(), kadm.NewACLs().Allow(p).Topics("bob-t").
				ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead, kadm.OpWrite))
			require.NoError(t, err)
			require.NoError(t, res[0].Err)
		}
		sasl := func(user string) kgo.Opt {
			return kgo.SASL(plain.Auth{User: user, Pass: user + "-secret"}.AsMechanism())
		}
		require.NoError(t, roundTrip(t, srv.Addr, "bob-t", dial(bob), sasl("bob")), "bob's certificate and SASL: bob")
		require.NoError(t, roundTrip(t, srv.Addr, "bob-t", dial(), sasl("bob")), "no certificate, bob's SASL: bob")
		authzFailed(t, roundTrip(t, srv.Addr, "bob-t", dial(alice), sasl("eve")))
		require.NoError(t, roundTrip(t, srv.Addr, "bob-t", dial(alice), sasl("bob")))
	})

	t.Run("quotas", func(t *testing.T) {
		srv := servertest.StartInMemory(t, mtls(tls.RequireAndVerifyClientCert, "RULE:^CN=(.*?),OU=eng,.*$/$1/L, DEFAULT"))
		allow(t, srv.Addr, "User:carol", "q")
		allow(t, srv.Addr, "User:CN=bob,O=Example", "q")
		adm := kadm.NewClient(client(t, srv.Addr, dial(admin)))
		setClientQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: str("carol")}}, "producer_byte_rate", 4096)
		produce := func(cert tls.Certificate) []time.Duration {
			h := &throttles{}
			cl := client(t, srv.Addr, dial(cert), kgo.WithHooks(h), kgo.DefaultProduceTopic("q"), kgo.ProducerLinger(0),
				kgo.ProducerBatchCompression(kgo.NoCompression()))
			value := make([]byte, 64<<10)
			_, _ = rand.Read(value)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr())
			return h.get()
		}
		throttled := func(ds []time.Duration) bool {
			for _, d := range ds {
				if d > 0 {
					return true
				}
			}
			return false
		}
		require.True(t, throttled(produce(carol)), "carol's quota applies to CN=Carol,OU=eng,O=Example")
		require.False(t, throttled(produce(bob)), "bob has no quota")
	})
}

// TestTLSHandshakeBounded: a client that opens a TLS connection and never
// completes the handshake is closed after connections.max.idle.ms, as one
// that sends no request is.
func TestTLSHandshakeBounded(t *testing.T) {
	ca, pool := testCA(t)
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{ca}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
		c.IdleTimeout = 300 * time.Millisecond
	})
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte{0x16, 0x03, 0x01}) // the start of a ClientHello, never finished
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute))) // a safety net, not the assertion
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server closed the connection: %v", err)
}
