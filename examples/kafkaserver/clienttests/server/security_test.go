package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"log/slog"
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

// TestSASLAuthorizationID: PLAIN and SCRAM refuse an authorization id
// other than the user's, with Kafka's message (PlainSaslServer,
// ScramSaslServer); the user's own, or none, is accepted. Both ignored it:
// alice could ask to act as bob.
func TestSASLAuthorizationID(t *testing.T) {
	srv := servertest.StartInMemory(t, func(c *server.Config) { withSASL(c); c.Logger = slog.New(slog.DiscardHandler) })
	for _, tc := range []struct {
		name string
		mech sasl.Mechanism
		ok   bool
	}{
		{"PLAIN, another user's id", plain.Auth{Zid: "bob", User: "alice", Pass: "alice-secret"}.AsMechanism(), false},
		{"PLAIN, the user's id", plain.Auth{Zid: "alice", User: "alice", Pass: "alice-secret"}.AsMechanism(), true},
		{"SCRAM-SHA-256, another user's id", scram.Auth{Zid: "alice", User: "bob", Pass: "bob-secret"}.AsSha256Mechanism(), false},
		{"SCRAM-SHA-512, another user's id", scram.Auth{Zid: "bob", User: "alice", Pass: "alice-secret"}.AsSha512Mechanism(), false},
		{"SCRAM-SHA-256, the user's id", scram.Auth{Zid: "bob", User: "bob", Pass: "bob-secret"}.AsSha256Mechanism(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := roundTrip(t, srv.Addr, "authzid", kgo.SASL(tc.mech))
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, "Client requested an authorization id that is different from username")
		})
	}
}

// TestFailedAuthenticationDelay: the answer to a failed authentication
// comes no sooner than connection.failed.authentication.delay.ms after
// the attempt, and the connection is closed after it (PLAIN and SCRAM
// through SaslAuthenticate; a bare v0 token gets no answer and its close
// waits as long), so that one connection tries at most one password a
// delay. They were answered at once: 2,764 wrong passwords a second from
// one client.
func TestFailedAuthenticationDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		withSASL(c)
		c.FailedAuthenticationDelay = delay
		c.Logger = slog.New(slog.DiscardHandler)
	})
	handshake := func(t *testing.T, c net.Conn, mechanism string, version int16) {
		t.Helper()
		req := kmsg.NewPtrSASLHandshakeRequest()
		req.SetVersion(version)
		req.Mechanism = mechanism
		body, err := rawRequest(t, c, requestFrame(kmsg.SASLHandshake.Int16(), version, req.AppendTo(nil)))
		require.NoError(t, err)
		resp := kmsg.NewPtrSASLHandshakeResponse()
		resp.SetVersion(version)
		require.NoError(t, resp.ReadFrom(body))
		require.Zero(t, resp.ErrorCode)
	}
	for _, tc := range []struct {
		name, mechanism, token string
	}{
		{"PLAIN, wrong password", server.MechanismPlain, "\x00alice\x00wrong"},
		{"PLAIN, unknown user", server.MechanismPlain, "\x00mallory\x00x"},
		{"SCRAM-SHA-256, unknown user", server.MechanismScramSHA256, "n,,n=mallory,r=abcdefgh"},
		{"SCRAM-SHA-512, another user's id", server.MechanismScramSHA512, "n,a=bob,n=alice,r=abcdefgh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := memDial(t, srv.Addr)
			handshake(t, c, tc.mechanism, 1)
			req := kmsg.NewPtrSASLAuthenticateRequest()
			req.SetVersion(1)
			req.SASLAuthBytes = []byte(tc.token)
			sent := time.Now()
			body, err := rawRequest(t, c, requestFrame(kmsg.SASLAuthenticate.Int16(), 1, req.AppendTo(nil)))
			require.NoError(t, err)
			require.GreaterOrEqual(t, time.Since(sent), delay, "the failure was answered before the delay")
			resp := kmsg.NewPtrSASLAuthenticateResponse()
			resp.SetVersion(1)
			require.NoError(t, resp.ReadFrom(body))
			require.Equal(t, int16(58), resp.ErrorCode, "SASL_AUTHENTICATION_FAILED")
			_, err = c.Read(make([]byte, 1))
			require.ErrorIs(t, err, io.EOF, "closed after the answer")
		})
	}
	t.Run("v0 token", func(t *testing.T) {
		c := memDial(t, srv.Addr)
		handshake(t, c, server.MechanismPlain, 0)
		token := "\x00alice\x00wrong"
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(token)))
		sent := time.Now()
		_, err := c.Write(append(frame, token...))
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
		_, err = c.Read(make([]byte, 1))
		require.ErrorIs(t, err, io.EOF, "closed unanswered")
		require.GreaterOrEqual(t, time.Since(sent), delay, "closed before the delay")
	})
	// A good password is not delayed by the failures before it.
	require.NoError(t, roundTrip(t, srv.Addr, "delay", kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())))
	cfg := server.DefaultConfig()
	cfg.FailedAuthenticationDelay = cfg.IdleTimeout
	_, err := server.New(srv.Dir, cfg)
	require.Error(t, err, "a delay must be below connections.max.idle.ms, as Kafka requires")
}
