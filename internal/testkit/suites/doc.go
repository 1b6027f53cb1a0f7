// Package suites runs Kafka clients' own test suites, as their package
// registries ship them, against the kafkaserver command (examples/kafkaserver,
// built from this repository) and compares each test's outcome with the list
// of tests expected to pass in testdata: a test on the list that no longer
// passes, or a passing test missing from it, fails TestSuites.
//
// The command starts from a server.properties with four listeners on
// loopback: PLAINTEXT; SSL, with a CA, server and client certificates
// made for the run (crypto/x509) and client certificates required;
// SSL_REQUESTED, the same with client certificates requested;
// SASL_PLAINTEXT, with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (user alice,
// password alice-secret, kafka-python's fixture's) and OAUTHBEARER
// (unsecured tokens). The suites' TLS and SASL tests run there; against
// Kafka and kfake, which TestReportCard starts with PLAINTEXT only, they
// skip themselves.
//
// The suites:
//
//   - kgo: franz-go's pkg/kgo tests (the Go module proxy's franz-go, the
//     version go.mod requires), all over TLS with the client certificate
//     (KGO_SEEDS, KGO_TEST_TLS) but those that dial through a Dialer of
//     their own, which franz-go refuses beside TLS (a second go test runs
//     them over PLAINTEXT), the SCRAM and OAUTHBEARER tests on the SASL
//     listener (KGO_TEST_SCRAM_SEEDS, KGO_TEST_OAUTH_SEEDS).
//   - kafka-python: kafka-python's integration tests from Debian's source
//     package python-kafka, run with Debian's python3 and its python3-kafka
//     of the same version (the tests import the source package's own copy of
//     the client, the same files); testdata/kafkapython/kafkalite_external.py points
//     the tests' fixtures at a running broker (the package's fixtures launch
//     ZooKeeper and Kafka themselves), test_sasl_integration.py's at the
//     SASL listener.
//   - librdkafka: librdkafka's broker tests from Debian's source package
//     librdkafka, built by .ci/suites/fetch with OpenSSL (without
//     Kerberos and libcurl: its GSSAPI and OIDC tests are not
//     applicable), each test in a runner of its own. A few run more than
//     once, each later run's results named with a suffix
//     (librdkafkaVariants): 0097_ssl_verify on the SSL listener and on
//     SSL_REQUESTED (/requested), with the client certificate in every
//     encoding it loads; 0135_sasl_credentials on the SASL listener with
//     PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (/SCRAM-SHA-256,
//     /SCRAM-SHA-512); 0081_admin whole and with only its SCRAM
//     credentials subtests (/UserScramCredentials).
//   - sarama: sarama's functional tests (the Go module proxy's sarama, the
//     version go.mod requires, with the functional build tag) against five
//     brokers of the kafkaserver command with replication factor 3, as
//     sarama's docker-compose cluster has them, behind toxiproxy (the Go
//     module proxy's, a tool in go.mod) on the ports the tests name,
//     127.0.0.1:29091 to 29095, which must be free. testdata/sarama's
//     docker stands in for docker: the tests' "docker compose stop|start
//     kafka-N" stop and start broker N through the command's control API
//     (-control); the test that reads a broker's log through docker
//     compose fails. They run against kafkalite only.
//
// .ci/suites/fetch obtains the Debian sources into the directory
// KAFKALITE_SUITES_DIR names (default: the user's cache directory's
// kafkalite/suites). A suite whose sources are missing skips, unless
// KAFKALITE_CLIENTS_REQUIRED=1. With -update, TestSuites writes the tests
// that passed as the lists instead of comparing.
//
// With -card, TestReportCard runs every suite against the kafkaserver
// command, Apache Kafka's broker (internal/testkit/kafkacheck) and franz-go's
// kfake, and writes docs/clients-report-card.md:
//
//	go test -run TestReportCard -card -timeout 90m
//
// Each cell's results (suite and target, with the commit and date it ran
// on) are kept in testdata/card.json, so that -card-only runs some cells
// again and writes the card with the others' results as they were:
//
//	go test -run TestReportCard -card-only librdkafka/kafkalite,kgo/kafka -timeout 60m
//
// and -card-write writes the card from them and testdata/causes.txt,
// running nothing.
package suites
