package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
)

// TestFlags: the limits are flags named as Kafka's properties, each
// defaulting to server.DefaultConfig's; the request-size bound could not
// be lowered from the command (16 connections sending 64 MiB each took
// 1.7 GiB).
func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"-dir", "/tmp/kl"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, server.DefaultConfig(), o.cfg)
	require.Equal(t, "127.0.0.1:9092", o.listen)
	require.False(t, o.dirCfg.AdoptBrokerDirectory, "a broker's directory only when asked")

	o, err = parseFlags([]string{"-dir", "/tmp/kl", "-listen", ":9093", "-advertised", "kl:9093",
		"-socket.request.max.bytes", "1048576", "-fetch.max.bytes", "524288",
		"-max.connections", "100", "-max.connections.per.ip", "10",
		"-max.connections.per.ip.overrides", "127.0.0.1:50, [::1]:40,host.example:0",
		"-connections.max.idle.ms", "60000", "-connection.failed.authentication.delay.ms", "250",
		"-max.partitions", "2000", "-group.share.max.share.sessions", "50", "-adopt-broker-dir", "-node.id", "1",
		"-authorizer.class.name", server.StandardAuthorizer, "-super.users", "User:admin; User:ops", "-allow.everyone.if.no.acl.found"}, io.Discard)
	require.NoError(t, err)
	require.True(t, o.dirCfg.AdoptBrokerDirectory)
	require.Equal(t, int32(1), o.dirCfg.NodeID)
	want := server.DefaultConfig()
	want.AdvertisedAddr = "kl:9093"
	want.MaxRequestBytes, want.FetchMaxBytes = 1<<20, 512<<10
	want.MaxConnections, want.MaxConnectionsPerIP = 100, 10
	want.MaxConnectionsPerIPOverrides = map[string]int{"127.0.0.1": 50, "::1": 40, "host.example": 0}
	want.IdleTimeout, want.FailedAuthenticationDelay = time.Minute, 250*time.Millisecond
	want.MaxPartitions, want.MaxShareSessions = 2000, 50
	want.AuthorizerClassName, want.SuperUsers, want.AllowEveryoneIfNoACLFound = server.StandardAuthorizer, []string{"User:admin", "User:ops"}, true
	require.Equal(t, want, o.cfg)
	require.Equal(t, ":9093", o.listen)

	o, err = parseFlags([]string{"-dir", "d", "-override", "group.share.min.record.lock.duration.ms=1000",
		"-override", "group.share.record.lock.duration.ms=2000", "-adopt-broker-dir"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, time.Second, o.dirCfg.ShareMinRecordLockDuration)
	require.Equal(t, 2*time.Second, o.dirCfg.ShareRecordLockDuration)
	require.True(t, o.dirCfg.AdoptBrokerDirectory, "the flags beside -override keep their effect")
	o, err = parseFlags([]string{"-dir", "d", "-override", "node.id=7"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int32(7), o.dirCfg.NodeID)
	o, err = parseFlags([]string{"-dir", "d", "-override", "node.id=7", "-node.id", "3"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int32(3), o.dirCfg.NodeID, "the flag wins")
	o, err = parseFlags([]string{"-dir", "d", "-sasl.enabled.mechanisms", "SCRAM-SHA-256, SCRAM-SHA-512"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}, o.cfg.SASLMechanisms)

	// An unknown property is listed, once, as Kafka lists the ones it
	// does not use; it stops nothing.
	var listed strings.Builder
	o, err = parseFlags([]string{"-dir", "d", "-override", "no.such.property=1"}, &listed)
	require.NoError(t, err)
	require.Equal(t, []string{"no.such.property"}, o.unused)
	require.Equal(t, "kafkaserver: not used: no.such.property\n", listed.String())

	for _, args := range [][]string{
		{"-dir", "d", "-override", "group.share.record.lock.duration.ms=x"},
		{"-dir", "d", "-override", "novalue"},
		{},
		{"-dir", "d", "-socket.request.max.bytes", "0"},
		{"-dir", "d", "-socket.request.max.bytes", "4294967296"},
		{"-dir", "d", "-max.connections.per.ip.overrides", "127.0.0.1"},
		{"-dir", "d", "-max.connections.per.ip.overrides", "127.0.0.1:-1"},
		{"-dir", "d", "extra"},
		{"-dir", "d", "-node.id", "-1"},
		{"-dir", "d", "-sasl.enabled.mechanisms", "PLAIN"},
	} {
		_, err := parseFlags(args, io.Discard)
		require.Error(t, err, "%q", args)
	}
}

// TestOAuthBearerFlags: OAUTHBEARER, its unsecured validator's JAAS
// options under Kafka's names, and connections.max.reauth.ms.
func TestOAuthBearerFlags(t *testing.T) {
	o, err := parseFlags([]string{"-dir", "d", "-sasl.enabled.mechanisms", "SCRAM-SHA-256,OAUTHBEARER", "-connections.max.reauth.ms", "5000",
		"-unsecuredValidatorPrincipalClaimName", "client_id", "-unsecuredValidatorScopeClaimName", "scp",
		"-unsecuredValidatorRequiredScope", "kafka  produce", "-unsecuredValidatorAllowableClockSkewMs", "250"}, io.Discard)
	require.NoError(t, err)
	want := server.DefaultConfig()
	want.SASLMechanisms = []string{server.MechanismScramSHA256, server.MechanismOAuthBearer}
	want.ConnectionsMaxReauth = 5 * time.Second
	want.OAuthBearerPrincipalClaimName, want.OAuthBearerScopeClaimName = "client_id", "scp"
	want.OAuthBearerRequiredScope, want.OAuthBearerAllowableClockSkew = []string{"kafka", "produce"}, 250*time.Millisecond
	require.Equal(t, want, o.cfg)
}

// writePEMs writes a self-signed certificate and its key to dir as PEM
// blocks: keystore.pem (the key as keyType, then the certificate) and
// truststore.pem (the certificate), and returns their paths.
func writePEMs(t *testing.T, dir, keyType string) (keystore, truststore string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkaserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	var keyDER []byte
	if keyType == "EC PRIVATE KEY" {
		keyDER, err = x509.MarshalECPrivateKey(key)
	} else {
		keyDER, err = x509.MarshalPKCS8PrivateKey(key)
	}
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keystore, truststore = filepath.Join(dir, "keystore.pem"), filepath.Join(dir, "truststore.pem")
	require.NoError(t, os.WriteFile(keystore, append(pem.EncodeToMemory(&pem.Block{Type: keyType, Bytes: keyDER}), certPEM...), 0o600))
	require.NoError(t, os.WriteFile(truststore, certPEM, 0o644))
	return keystore, truststore
}

// TestSSLFlags: -ssl.keystore.location makes the listener SSL from a PEM
// keystore as Kafka's ssl.keystore.type=PEM holds one, with
// -ssl.truststore.location's CAs, -ssl.client.auth and
// -ssl.principal.mapping.rules; keystores Kafka does not read, unknown
// client auth values and SSL settings without a keystore are refused.
func TestSSLFlags(t *testing.T) {
	keystore, truststore := writePEMs(t, t.TempDir(), "PRIVATE KEY")
	for auth, want := range map[string]tls.ClientAuthType{"none": tls.NoClientCert, "requested": tls.VerifyClientCertIfGiven,
		"REQUIRED": tls.RequireAndVerifyClientCert} {
		o, err := parseFlags([]string{"-dir", "d", "-ssl.keystore.location", keystore, "-ssl.truststore.location", truststore,
			"-ssl.client.auth", auth, "-ssl.principal.mapping.rules", "RULE:^CN=(.*?),.*$/$1/L,DEFAULT"}, io.Discard)
		require.NoError(t, err, auth)
		require.NotNil(t, o.cfg.TLS)
		require.Equal(t, want, o.cfg.TLS.ClientAuth, auth)
		require.Len(t, o.cfg.TLS.Certificates, 1)
		require.NotNil(t, o.cfg.TLS.ClientCAs)
		require.Equal(t, uint16(tls.VersionTLS12), o.cfg.TLS.MinVersion)
		require.Equal(t, "RULE:^CN=(.*?),.*$/$1/L,DEFAULT", o.cfg.SSLPrincipalMappingRules)
	}
	o, err := parseFlags([]string{"-dir", "d", "-ssl.keystore.location", keystore}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, tls.NoClientCert, o.cfg.TLS.ClientAuth, "Kafka's default: none")
	require.Nil(t, o.cfg.TLS.ClientCAs, "the system's CAs")

	ecKeystore, _ := writePEMs(t, t.TempDir(), "EC PRIVATE KEY")
	encKeystore, _ := writePEMs(t, t.TempDir(), "ENCRYPTED PRIVATE KEY")
	for _, args := range [][]string{
		{"-ssl.keystore.location", keystore, "-ssl.client.auth", "want"},
		{"-ssl.keystore.location", ecKeystore},  // not PKCS#8: Kafka finds no private key
		{"-ssl.keystore.location", encKeystore}, // needs ssl.key.password
		{"-ssl.keystore.location", truststore},  // no key
		{"-ssl.keystore.location", filepath.Join(t.TempDir(), "missing.pem")},
		{"-ssl.keystore.location", keystore, "-ssl.truststore.location", keystore + ".missing"},
		{"-ssl.truststore.location", truststore},
		{"-ssl.client.auth", "required"},
	} {
		_, err := parseFlags(append([]string{"-dir", "d"}, args...), io.Discard)
		require.Error(t, err, "%q", args)
	}
	// A truststore without certificates.
	empty := filepath.Join(t.TempDir(), "empty.pem")
	require.NoError(t, os.WriteFile(empty, []byte("nothing"), 0o644))
	_, err = parseFlags([]string{"-dir", "d", "-ssl.keystore.location", keystore, "-ssl.truststore.location", empty}, io.Discard)
	require.Error(t, err)
}

// TestBrokersFlags: -brokers and -default.replication.factor set the
// cluster of virtual brokers; a replication factor above the brokers is
// refused; the listeners take -listen's port and the ones after it.
func TestBrokersFlags(t *testing.T) {
	o, err := parseFlags([]string{"-dir", "d", "-brokers", "5", "-default.replication.factor", "3"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 5, o.cfg.Brokers)
	require.Equal(t, int16(3), o.cfg.DefaultReplicationFactor)
	_, err = parseFlags([]string{"-dir", "d", "-brokers", "2", "-default.replication.factor", "3"}, io.Discard)
	require.ErrorContains(t, err, "default.replication.factor")

	lns, err := listenBrokers("127.0.0.1:0", 3)
	require.NoError(t, err)
	require.Len(t, lns, 3)
	for _, ln := range lns {
		require.NoError(t, ln.Close())
	}
	first := lns[0].Addr().(*net.TCPAddr).Port
	lns, err = listenBrokers(net.JoinHostPort("127.0.0.1", strconv.Itoa(first)), 2)
	if err == nil { // the ports may have been taken meanwhile
		require.Equal(t, first+1, lns[1].Addr().(*net.TCPAddr).Port)
		for _, ln := range lns {
			require.NoError(t, ln.Close())
		}
	}
}

// TestControl: -control serves the control API beside the brokers in the
// command's process (here with -race): brokers stopped and started again
// on their ports, requests it cannot do refused with 400, and the
// command's end stops the API and every broker's goroutine.
func TestControl(t *testing.T) {
	_, err := parseFlags([]string{"-dir", "d", "-control", "127.0.0.1:0"}, io.Discard)
	require.ErrorContains(t, err, "needs brokers above 1")
	o, err := parseFlags([]string{"-dir", t.TempDir(), "-listen", "127.0.0.1:0", "-brokers", "2", "-control", "127.0.0.1:0"}, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- serve(ctx, o, func(l string) { lines <- l }) }()
	var line string
	select {
	case line = <-lines:
	case err := <-served:
		t.Fatal(err)
	}
	_, ctl, ok := strings.Cut(line, "; control ")
	require.True(t, ok, line)
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	call := func(method, path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+ctl+path, nil)
		require.NoError(t, err)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := call("GET", "/brokers")
	require.Equal(t, http.StatusOK, code)
	f := strings.Fields(body)
	require.Len(t, f, 6, body)
	addr1 := f[4]
	code, body = call("POST", "/brokers/1/stop")
	require.Equal(t, []any{http.StatusOK, "broker 1 stopped\n"}, []any{code, body})
	_, err = net.DialTimeout("tcp", addr1, time.Second)
	require.Error(t, err, "the stopped broker's port is closed")
	code, body = call("GET", "/brokers")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "1 "+addr1+" stopped\n")
	code, body = call("POST", "/brokers/1/start")
	require.Equal(t, []any{http.StatusOK, "broker 1 started\n"}, []any{code, body})
	conn, err := net.DialTimeout("tcp", addr1, time.Second)
	require.NoError(t, err, "served again on its port")
	conn.Close()
	for _, path := range []string{"/brokers/5/stop", "/brokers/x/start", "/partitions/none/0/leader/1", "/partitions/t/x/leader/1"} {
		code, body := call("POST", path)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", path, body)
	}
	code, _ = call("DELETE", "/brokers/1/stop")
	require.Equal(t, http.StatusMethodNotAllowed, code)

	// A broker stopped on command does not end the server; the command's
	// end does, and stops the API.
	code, _ = call("POST", "/brokers/0/stop")
	require.Equal(t, http.StatusOK, code)
	cancel()
	require.NoError(t, <-served)
	_, err = hc.Get("http://" + ctl + "/brokers")
	require.Error(t, err, "the control API stopped")
}

// TestControlClient: "kafkaserver control" refuses a command line it
// cannot send, and fails when the server is not there.
func TestControlClient(t *testing.T) {
	var out, errOut strings.Builder
	require.Equal(t, 2, runControl([]string{"127.0.0.1:1"}, &out, &errOut))
	require.Contains(t, errOut.String(), "usage")
	require.Equal(t, 2, runControl([]string{"127.0.0.1:1", "stop"}, &out, &errOut))
	errOut.Reset()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	require.Equal(t, 1, runControl([]string{addr, "brokers"}, &out, &errOut))
	require.Contains(t, errOut.String(), "kafkaserver control:")
	require.Empty(t, out.String())
	require.True(t, isControl([]string{"control", "a", "brokers"}))
	require.False(t, isControl([]string{"server.properties"}))
}
