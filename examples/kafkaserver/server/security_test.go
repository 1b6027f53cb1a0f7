package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

var users = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}

func withSASL(c *server.Config) {
	c.SASLMechanisms = []string{server.MechanismPlain, server.MechanismScramSHA256, server.MechanismScramSHA512}
	c.Users = users
}

// roundTrip produces one record and reads it back with the client's
// options, or returns the first error.
func roundTrip(t *testing.T, addr, topic string, opts ...kgo.Opt) error {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ProducerLinger(0), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RecordDeliveryTimeout(time.Second),
		kgo.RequestRetries(1), kgo.RetryTimeout(time.Second)}, opts...)...)
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("secret")}).FirstErr(); err != nil {
		return err
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		return err
	}
	require.Equal(t, "secret", string(fs.Records()[0].Value))
	return nil
}

// TestSASL: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with franz-go's
// mechanisms; wrong passwords, unknown users and a mechanism the server
// does not enable fail; a connection that sends a request before it
// authenticates is closed.
func TestSASL(t *testing.T) {
	srv := servertest.Start(t, withSASL)
	for _, tc := range []struct {
		name string
		mech sasl.Mechanism
		ok   bool
	}{
		{"PLAIN", plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism(), true},
		{"SCRAM-SHA-256", scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha256Mechanism(), true},
		{"SCRAM-SHA-512", scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism(), true},
		{"PLAIN, wrong password", plain.Auth{User: "alice", Pass: "nope"}.AsMechanism(), false},
		{"SCRAM-SHA-256, wrong password", scram.Auth{User: "bob", Pass: "nope"}.AsSha256Mechanism(), false},
		{"SCRAM-SHA-512, unknown user", scram.Auth{User: "mallory", Pass: "x"}.AsSha512Mechanism(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := roundTrip(t, srv.Addr, "sasl", kgo.SASL(tc.mech))
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
	require.Error(t, roundTrip(t, srv.Addr, "sasl"), "no SASL at all")

	only := servertest.Start(t, func(c *server.Config) { withSASL(c); c.SASLMechanisms = []string{server.MechanismScramSHA256} })
	require.Error(t, roundTrip(t, only.Addr, "sasl", kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())),
		"PLAIN is not enabled there")

	// A Metadata request before authenticating: closed, unanswered.
	c, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer c.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(1)
	_, err = rawRequest(t, c, requestFrame(kmsg.Metadata.Int16(), 1, req.AppendTo(nil)))
	require.Error(t, err)
}

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts
// it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkaserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// TestTLS: a TLS listener serves a client that trusts its certificate,
// with and without SASL on top, and refuses a plaintext one.
func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv := servertest.Start(t, func(c *server.Config) { c.TLS = tlsCfg })
	client := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	require.NoError(t, roundTrip(t, srv.Addr, "tls", kgo.DialTLSConfig(client)))
	require.Error(t, roundTrip(t, srv.Addr, "tls"), "plaintext against TLS")

	both := servertest.Start(t, func(c *server.Config) { c.TLS = tlsCfg; withSASL(c) })
	require.NoError(t, roundTrip(t, both.Addr, "tls", kgo.DialTLSConfig(client),
		kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism())))
}
