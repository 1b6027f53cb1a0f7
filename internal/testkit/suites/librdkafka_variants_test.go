package suites

import (
	"fmt"
	"slices"
	"testing"
)

// A librdkafkaVariant is one run of a test: on which listener, with what
// else in its environment, and what its results' names get after a slash
// (nothing for a test's first run).
type librdkafkaVariant struct {
	name string
	// listener is PLAINTEXT, SSL or SSL_REQUESTED (with pki's client
	// certificate) or the SASL mechanism to log in with as saslUser on
	// SASL_PLAINTEXT. Against
	// a broker without the listener (Kafka's and kfake's) the run is on
	// PLAINTEXT, where such tests skip themselves.
	listener string
	env      []string
}

// librdkafkaVariants are the tests that run other than once on PLAINTEXT:
//
//   - 0081_admin: once whole and once with only its SCRAM credentials
//     subtests (Describe- and AlterUserScramCredentials, which OpenSSL
//     builds send in full), which the whole run does not reach when an
//     earlier subtest fails.
//   - 0097_ssl_verify: on TLS, with the client certificate in every
//     encoding it loads (the SSL_* variables trivup sets: DER, PEM,
//     PKCS#12 and a PEM file of two CAs), on the listener that requires
//     client certificates and on the one that requests them (as trivup's
//     ssl_client_auth "requested"), where a client whose certificate the
//     broker's CAs did not sign connects without it.
//   - 0135_sasl_credentials: a wrong password, then the right one, with
//     PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.
//
// 0142_reauthentication stays on PLAINTEXT: it needs
// connections.max.reauth.ms set, quick mode leaves out its subtests, and
// run in full they create topics of replication factor 3.
var librdkafkaVariants = map[string][]librdkafkaVariant{
	"0081": {{listener: "PLAINTEXT"}, {name: "UserScramCredentials", listener: "PLAINTEXT", env: []string{"SUBTESTS=UserScramCredentials"}}},
	"0097": {{listener: "SSL"}, {name: "requested", listener: "SSL_REQUESTED"}},
	"0135": {{listener: "PLAIN"}, {name: "SCRAM-SHA-256", listener: "SCRAM-SHA-256"}, {name: "SCRAM-SHA-512", listener: "SCRAM-SHA-512"}},
}

// A librdkafkaRun is one test-runner process: the test's number, its
// configuration file and environment, and what its results' names end
// with.
type librdkafkaRun struct {
	test, conf string
	env        []string
	suffix     string
}

// librdkafkaRuns returns the runs of the tests numbers against b:
// plaintextConf's for most, librdkafkaVariants' for the others. conf
// writes a configuration file of the given settings (one "name=value\n"
// each) and returns its path.
func librdkafkaRuns(t *testing.T, b broker, numbers []string, plaintextConf string, conf func(name, settings string) string) []librdkafkaRun {
	t.Helper()
	var runs []librdkafkaRun
	for _, n := range numbers {
		variants, ok := librdkafkaVariants[n]
		if !ok {
			variants = []librdkafkaVariant{{listener: "PLAINTEXT"}}
		}
		for _, v := range variants {
			r := librdkafkaRun{test: n, conf: plaintextConf, env: slices.Clone(v.env)}
			if v.name != "" {
				r.suffix = "/" + v.name
			}
			switch {
			case v.listener == "PLAINTEXT":
			case v.listener == "SSL" && b.ssl != "", v.listener == "SSL_REQUESTED" && b.sslRequested != "":
				p, addr, auth := b.pki, b.ssl, "required"
				if v.listener == "SSL_REQUESTED" {
					addr, auth = b.sslRequested, "requested"
				}
				r.conf = conf(n+"-"+v.listener+".conf", fmt.Sprintf("metadata.broker.list=%s\nsecurity.protocol=SSL\nssl.ca.location=%s\nssl.certificate.location=%s\nssl.key.location=%s\nssl.key.password=%s\n",
					addr, p.ca, p.clientCert, p.clientKey, clientPassword))
				r.env = append(r.env,
					"SSL_ca_pem="+p.ca, "SSL_ca_der="+p.caDER, "SSL_all_cas_pem="+p.allCAs,
					"SSL_pub_pem="+p.clientCert, "SSL_pub_der="+p.clientCertDER,
					"SSL_priv_pem="+p.clientKey, "SSL_priv_der="+p.clientKeyDER,
					"SSL_pkcs="+p.clientPKCS12, "SSL_password="+clientPassword,
					"SSL_client_auth="+auth)
			case v.listener != "SSL" && v.listener != "SSL_REQUESTED" && b.sasl != "":
				r.conf = conf(n+"-"+v.listener+".conf", fmt.Sprintf("metadata.broker.list=%s\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=%s\nsasl.username=%s\nsasl.password=%s\n",
					b.sasl, v.listener, saslUser, saslPassword))
			}
			runs = append(runs, r)
		}
	}
	return runs
}
