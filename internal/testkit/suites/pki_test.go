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

	"software.sslmate.com/src/go-pkcs12"
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
	// The same in the other encodings librdkafka's 0097_ssl_verify loads
	// (trivup's files): the CA's and the client's certificate and the
	// client's key in DER; the CA's and an unused CA's certificates in
	// one PEM file; the client's key, its certificate and the CA's in a
	// PKCS#12 file sealed with clientPassword.
	caDER, clientCertDER, clientKeyDER, allCAs, clientPKCS12 string
}

// clientPassword seals pki's PKCS#12 file.
const clientPassword = "client-secret"

// writePKI makes a CA (ECDSA P-256, valid for a day) and a server and a
// client certificate it signs, and writes them to dir as PEM files, and
// the client's files in DER and PKCS#12 too.
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
	unusedKey := newKey(t)
	unusedTmpl := *caTmpl
	unusedTmpl.Subject = pkix.Name{CommonName: "kafkalite suites unused CA"}
	unusedDER, err := x509.CreateCertificate(rand.Reader, &unusedTmpl, &unusedTmpl, &unusedKey.PublicKey, unusedKey)
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
		caDER:          filepath.Join(dir, "ca.der"),
		clientCertDER:  filepath.Join(dir, "client.der"),
		clientKeyDER:   filepath.Join(dir, "client-key.der"),
		allCAs:         filepath.Join(dir, "all-cas.pem"),
		clientPKCS12:   filepath.Join(dir, "client.p12"),
	}
	clientCert, err := x509.ParseCertificate(clientDER)
	if err != nil {
		t.Fatal(err)
	}
	clientPriv, err := x509.ParsePKCS8PrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	p12, err := pkcs12.Modern.Encode(clientPriv, clientCert, []*x509.Certificate{caCert}, clientPassword)
	if err != nil {
		t.Fatal(err)
	}
	for path, b := range map[string][]byte{p.caDER: caDER, p.clientCertDER: clientDER, p.clientKeyDER: clientKey, p.clientPKCS12: p12} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for path, blocks := range map[string][]*pem.Block{
		p.ca:             {{Type: "CERTIFICATE", Bytes: caDER}},
		p.serverKeystore: {{Type: "PRIVATE KEY", Bytes: serverKey}, {Type: "CERTIFICATE", Bytes: serverDER}},
		p.clientCert:     {{Type: "CERTIFICATE", Bytes: clientDER}},
		p.clientKey:      {{Type: "PRIVATE KEY", Bytes: clientKey}},
		p.allCAs:         {{Type: "CERTIFICATE", Bytes: caDER}, {Type: "CERTIFICATE", Bytes: unusedDER}},
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
