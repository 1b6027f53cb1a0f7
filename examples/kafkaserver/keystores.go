package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// errJKS is a Java KeyStore file, which is not read.
var errJKS = errors.New("a JKS keystore is not read: convert it to PKCS12 (keytool -importkeystore -deststoretype PKCS12) or PEM")

// listenerTLS is an SSL listener's TLS configuration from its ssl.*
// properties (listener.name.<name>.ssl.* first; name "" is -listen's
// listener): the keystore's key and chain, client certificates verified
// against the truststore's CAs (the system's without one, as Kafka uses
// the JVM's) as ssl.client.auth says, TLS 1.2 and 1.3 (Kafka's
// ssl.enabled.protocols).
func listenerTLS(p *brokerProps, name string) (*tls.Config, error) {
	get := func(prop string) string {
		if name == "" {
			v, _ := p.get(prop)
			return v
		}
		v, _ := p.listener(name, prop)
		return v
	}
	where := "the SSL listener"
	if name != "" {
		where = "listener " + name
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch auth := get("ssl.client.auth"); strings.ToLower(auth) {
	case "none", "":
		cfg.ClientAuth = tls.NoClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("%s: ssl.client.auth %q: none, requested or required", where, auth)
	}
	ks := get("ssl.keystore.location")
	if ks == "" {
		return nil, fmt.Errorf("%s: TLS needs a keystore: ssl.keystore.location", where)
	}
	cert, err := readKeystore(ks, get("ssl.keystore.type"), get("ssl.keystore.password"), get("ssl.key.password"))
	if err != nil {
		return nil, fmt.Errorf("%s: ssl.keystore.location: %w", where, err)
	}
	cfg.Certificates = []tls.Certificate{cert}
	if ts := get("ssl.truststore.location"); ts != "" {
		pool, err := readTruststore(ts, get("ssl.truststore.type"), get("ssl.truststore.password"))
		if err != nil {
			return nil, fmt.Errorf("%s: ssl.truststore.location: %w", where, err)
		}
		cfg.ClientCAs = pool
	}
	return cfg, nil
}

// storeType is a keystore's or truststore's type: the one given (PEM,
// PKCS12; JKS, Kafka's default, is refused unless the file is PKCS#12 or
// PEM, which Java reads under that type too), else the file's.
func storeType(b []byte, given string) (string, error) {
	given = strings.ToUpper(given)
	sniffed := "PKCS12"
	switch {
	case bytes.HasPrefix(b, []byte{0xfe, 0xed, 0xfe, 0xed}):
		sniffed = "JKS"
	case bytes.Contains(b, []byte("-----BEGIN")):
		sniffed = "PEM"
	}
	switch given {
	case "", "JKS":
		if sniffed == "JKS" {
			return "", errJKS
		}
		return sniffed, nil
	case "PEM", "PKCS12":
		return given, nil
	}
	return "", fmt.Errorf("type %q: PEM or PKCS12", given)
}

// readKeystore reads a keystore's private key and certificate chain.
func readKeystore(path, typ, password, keyPassword string) (tls.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return tls.Certificate{}, err
	}
	if typ, err = storeType(b, typ); err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", path, err)
	}
	if typ == "PEM" {
		return pemKeystore(path, b)
	}
	key, leaf, chain, err := pkcs12.DecodeChain(b, password)
	if err != nil && keyPassword != "" && keyPassword != password {
		key, leaf, chain, err = pkcs12.DecodeChain(b, keyPassword)
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: PKCS#12 (ssl.keystore.password): %w", path, err)
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

// readTruststore reads a truststore's CA certificates.
func readTruststore(path, typ, password string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if typ, err = storeType(b, typ); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pool := x509.NewCertPool()
	if typ == "PEM" {
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", path)
		}
		return pool, nil
	}
	certs, err := pkcs12.DecodeTrustStore(b, password)
	if err != nil {
		return nil, fmt.Errorf("%s: PKCS#12 (ssl.truststore.password): %w", path, err)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s: no certificate in it", path)
	}
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// pemKeystore reads a PEM keystore as Kafka's ssl.keystore.type=PEM
// reads one: a PKCS#8 private key ("PRIVATE KEY") and its certificate
// chain, leaf first. An encrypted key (which needs ssl.key.password) is
// not read.
func pemKeystore(path string, b []byte) (tls.Certificate, error) {
	var certs, key []byte
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			break
		}
		switch blk.Type {
		case "CERTIFICATE":
			certs = append(certs, pem.EncodeToMemory(blk)...)
		case "PRIVATE KEY":
			if key != nil {
				return tls.Certificate{}, fmt.Errorf("%s: more than one private key", path)
			}
			key = pem.EncodeToMemory(blk)
		case "ENCRYPTED PRIVATE KEY":
			return tls.Certificate{}, fmt.Errorf("%s: an encrypted private key (ssl.key.password) is not read; store it unencrypted (PKCS#8)", path)
		}
	}
	if key == nil {
		return tls.Certificate{}, fmt.Errorf("%s: no PKCS#8 private key (-----BEGIN PRIVATE KEY-----) in it", path)
	}
	if certs == nil {
		return tls.Certificate{}, fmt.Errorf("%s: no certificate in it", path)
	}
	return tls.X509KeyPair(certs, key)
}

// parseOverrides reads max.connections.per.ip.overrides: host:count pairs
// separated by commas (a host may be an IPv6 address in brackets).
func parseOverrides(v string) (map[string]int, error) {
	out := map[string]int{}
	for _, pair := range strings.Split(v, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		i := strings.LastIndexByte(pair, ':')
		if i <= 0 {
			return nil, fmt.Errorf("%q is not host:count", pair)
		}
		n, err := strconv.Atoi(pair[i+1:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: the count must be a number 0 or above", pair)
		}
		out[strings.Trim(pair[:i], "[]")] = n
	}
	return out, nil
}
