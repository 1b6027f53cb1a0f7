package suites

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "TestSuites: write the tests that pass as testdata/SUITE.pass instead of comparing")

var card = flag.Bool("card", false, "TestReportCard: run every suite against kafkalite, Kafka and kfake and write docs/clients-report-card.md")

// allSuites are the suites in the order CI runs them and the card lists
// them.
var allSuites = []suite{kgoSuite, kafkaPythonSuite, librdkafkaSuite, saramaSuite}

// TestSuites runs each suite against a kafkaserver command of its own and
// compares the tests that pass with testdata/SUITE.pass.
func TestSuites(t *testing.T) {
	for _, s := range allSuites {
		t.Run(s.name, func(t *testing.T) {
			start := time.Now()
			got := s.run(t, s.ciTarget().start(t))
			compare(t, s, got)
			t.Logf("%s took %s", s.name, time.Since(start).Round(time.Second))
		})
	}
}

// TestReportCard (with -card) runs every suite against each target and
// writes docs/clients-report-card.md; the causes of kafkalite's failures
// come from testdata/causes.txt.
func TestReportCard(t *testing.T) {
	if !*card {
		t.Skip("-card writes the report card")
	}
	targets := []target{kafkalite, kafka, kfake}
	runs := map[string]map[string]results{} // suite, target
	took := map[string]map[string]time.Duration{}
	for _, s := range allSuites {
		runs[s.name], took[s.name] = map[string]results{}, map[string]time.Duration{}
		for _, tg := range targets {
			if !s.runsOn(tg.name) {
				continue
			}
			if tg.name == kafkalite.name {
				tg = s.ciTarget()
			}
			t.Run(s.name+"/"+tg.name, func(t *testing.T) {
				start := time.Now()
				runs[s.name][tg.name] = s.run(t, tg.start(t))
				took[s.name][tg.name] = time.Since(start).Round(time.Second)
			})
		}
	}
	causes, err := readCauses(filepath.Join(moduleDir(), "testdata", "causes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeCard(&b, targets, runs, took, causes)
	path := filepath.Join(repoDir(), "docs", "clients-report-card.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// readCauses reads "SUITE TEST-ID: cause" lines.
func readCauses(path string) (map[string]string, error) {
	lines, err := readList(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range lines {
		key, cause, ok := strings.Cut(l, ": ")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not \"SUITE TEST-ID: cause\"", path, l)
		}
		out[key] = cause
	}
	return out, nil
}

func writeCard(b *strings.Builder, targets []target, runs map[string]map[string]results, took map[string]map[string]time.Duration, causes map[string]string) {
	fmt.Fprintf(b, "# Clients' own test suites: kafkalite beside Kafka %s and kfake\n\n", strings.TrimPrefix(kafka.name, "Kafka "))
	b.WriteString("Written by `go test -run TestReportCard -card` in internal/testkit/suites (see its package doc); ")
	b.WriteString("CI runs the same suites against the kafkaserver command and fails on any change from the lists in its testdata. ")
	b.WriteString("Each target is one broker on loopback. The kafkaserver command serves PLAINTEXT, SSL (client certificates required, and a second with them requested) and SASL_PLAINTEXT listeners at once: kgo's tests run over TLS, and kgo's SCRAM and OAUTHBEARER tests, kafka-python's SASL tests (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and librdkafka's 0135_sasl_credentials (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) on its SASL listener, librdkafka's 0097_ssl_verify on both SSL listeners. Kafka and kfake serve PLAINTEXT only, where those tests are not applicable; tests that need several brokers, and librdkafka's that need Kerberos or an OIDC server, are not applicable on every target.\n\n")
	b.WriteString("| suite | target | pass | fail | not applicable | took |\n|---|---|---:|---:|---:|---:|\n")
	for _, s := range allSuites {
		for _, tg := range targets {
			r, ok := runs[s.name][tg.name]
			if !ok {
				fmt.Fprintf(b, "| %s | %s | – | – | – | did not run |\n", s.name, tg.name)
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %s |\n", s.name, tg.name, r.count(passed), r.count(failed), r.count(notApplicable), took[s.name][tg.name])
		}
	}
	for _, s := range allSuites {
		mine := runs[s.name][kafkalite.name]
		fmt.Fprintf(b, "\n## %s: kafkalite's failures\n\n", s.name)
		fails := mine.ids(failed)
		if len(fails) == 0 {
			b.WriteString("None.\n")
		}
		for _, id := range fails {
			var elsewhere []string
			for _, tg := range targets[1:] {
				if r, ok := runs[s.name][tg.name][id]; ok {
					elsewhere = append(elsewhere, tg.name+": "+r.outcome.String())
				}
			}
			cause, ok := causes[s.name+" "+id]
			if !ok {
				cause = "not yet determined; the test reports: " + mine[id].detail
			}
			fmt.Fprintf(b, "- `%s` (%s): %s\n", id, strings.Join(elsewhere, ", "), cause)
		}
		var onlyElsewhere []string
		for _, tg := range targets[1:] {
			for _, id := range runs[s.name][tg.name].ids(failed) {
				if mine[id].outcome == passed && !slices.Contains(onlyElsewhere, id) {
					onlyElsewhere = append(onlyElsewhere, fmt.Sprintf("`%s` (fails on %s)", id, tg.name))
				}
			}
		}
		if len(onlyElsewhere) > 0 {
			fmt.Fprintf(b, "\nPassing on kafkalite, failing elsewhere: %s.\n", strings.Join(onlyElsewhere, ", "))
		}
	}
}
