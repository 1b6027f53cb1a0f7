package suites

import (
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
	"testing"
	"time"
)

// A pki is the PEM files of a CA made for one test run and of the server
// and client certificates it signed.
type pki struct {
	ca string // the CA's certificate
	// serverKeystore holds the server's PKCS#8 key and its certificate,
	// as Kafka's ssl.keystore.type=PEM reads them; the certificate names
	// 127.0.0.1 and localhost.
	serverKeystore string
	// clientCert and clientKey are a client's certificate (CN=client)
	// and its PKCS#8 key.
	clientCert, clientKey string
}

// writePKI makes a CA (ECDSA P-256, valid for a day) and a server and a
// client certificate it signs, and writes them to dir as PEM files.
func writePKI(t *testing.T, dir string) pki {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkalite suites CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP, names []string) (der, key []byte) {
		k := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: ips, DNSNames: names,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		key, err = x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	serverDER, serverKey := leaf(2, "localhost", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"})
	clientDER, clientKey := leaf(3, "client", x509.ExtKeyUsageClientAuth, nil, nil)
	p := pki{
		ca:             filepath.Join(dir, "ca.pem"),
		serverKeystore: filepath.Join(dir, "server.pem"),
		clientCert:     filepath.Join(dir, "client.pem"),
		clientKey:      filepath.Join(dir, "client.key"),
	}
	for path, blocks := range map[string][]*pem.Block{
		p.ca:             {{Type: "CERTIFICATE", Bytes: caDER}},
		p.serverKeystore: {{Type: "PRIVATE KEY", Bytes: serverKey}, {Type: "CERTIFICATE", Bytes: serverDER}},
		p.clientCert:     {{Type: "CERTIFICATE", Bytes: clientDER}},
		p.clientKey:      {{Type: "PRIVATE KEY", Bytes: clientKey}},
	} {
		var out []byte
		for _, b := range blocks {
			out = append(out, pem.EncodeToMemory(b)...)
		}
		if err := os.WriteFile(path, out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// newKey makes an ECDSA P-256 key.
func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
