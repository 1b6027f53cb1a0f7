package suites

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "TestSuites: write the tests that pass as testdata/SUITE.pass instead of comparing")

var card = flag.Bool("card", false, "TestReportCard: run every suite against kafkalite, Kafka and kfake and write docs/clients-report-card.md")

var cardWrite = flag.Bool("card-write", false, "TestReportCard: write the card from testdata/card.json and testdata/causes.txt, running nothing")

var cardOnly = flag.String("card-only", "", "TestReportCard: run only these cells (SUITE/TARGET, comma-separated; TARGET kafkalite, kafka or kfake), keep the others' saved results (testdata/card.json), and write the card")

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
	if !*card && *cardOnly == "" && !*cardWrite {
		t.Skip("-card (or -card-only, -card-write) writes the report card")
	}
	targets := []target{kafkalite, kafka, kfake}
	saved, err := loadCard(cardFile())
	if err != nil {
		t.Fatal(err)
	}
	only, unknown := map[string]bool{}, map[string]bool{}
	for _, c := range strings.Split(*cardOnly, ",") {
		if c = strings.TrimSpace(c); c != "" {
			only[c], unknown[c] = true, true
		}
	}
	for _, s := range allSuites {
		for _, tg := range targets {
			if s.runsOn(tg.name) {
				delete(unknown, s.name+"/"+cellName(tg))
			}
		}
	}
	if len(unknown) > 0 {
		t.Fatalf("-card-only: no such cells: %v", slices.Sorted(maps.Keys(unknown)))
	}
	commit := gitCommit(t)
	for _, s := range allSuites {
		for _, tg := range targets {
			if !s.runsOn(tg.name) {
				continue
			}
			key := s.name + "/" + cellName(tg)
			if *cardWrite || len(only) > 0 && !only[key] {
				if _, ok := saved[key]; !ok {
					t.Logf("%s: no saved results; the card says it did not run", key)
				}
				continue
			}
			if tg.name == kafkalite.name {
				tg = s.ciTarget()
			}
			t.Run(key, func(t *testing.T) {
				start := time.Now()
				got := s.run(t, tg.start(t))
				saved[key] = savedCell{Commit: commit, Date: start.UTC().Format(time.DateOnly),
					Took: time.Since(start).Round(time.Second).String(), Results: got.export()}
			})
		}
	}
	if err := saveCard(cardFile(), saved); err != nil {
		t.Fatal(err)
	}
	causes, err := readCauses(filepath.Join(moduleDir(), "testdata", "causes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range allSuites {
		varying, err := readFlakyNotes(flakyFile(s))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for id, note := range varying {
			if _, ok := causes[s.name+" "+id]; !ok {
				causes[s.name+" "+id] = "its outcome against the server varies from run to run: " + note
			}
		}
	}
	var b strings.Builder
	writeCard(&b, targets, saved, causes)
	path := filepath.Join(repoDir(), "docs", "clients-report-card.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// cardTargetsNote says what each target serves, and so which tests are
// not applicable where.
const cardTargetsNote = "Each target is one broker on loopback (sarama's: five virtual brokers of the kafkaserver command behind toxiproxy, against kafkalite only). " +
	"The kafkaserver command serves PLAINTEXT, SSL (client certificates required, and a second with them requested) and SASL_PLAINTEXT listeners at once: kgo's tests run over TLS, " +
	"and kgo's SCRAM and OAUTHBEARER tests, kafka-python's SASL tests (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and librdkafka's 0135_sasl_credentials (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) on its SASL listener, librdkafka's 0097_ssl_verify on both SSL listeners. " +
	"Kafka and kfake serve PLAINTEXT only, where those tests are not applicable; tests that need several brokers, and librdkafka's that need Kerberos or an OIDC server, are not applicable on every target."

// cellName is a target's name in -card-only and testdata/card.json.
func cellName(tg target) string {
	switch tg.name {
	case kafka.name:
		return "kafka"
	default:
		return tg.name
	}
}

// cardFile holds the card's results, so that -card-only runs a few cells
// again and keeps the rest.
func cardFile() string { return filepath.Join(moduleDir(), "testdata", "card.json") }

// A savedCell is one suite's run against one target: when and on which
// commit it ran, how long it took, and each test's outcome.
type savedCell struct {
	Commit, Date, Took string
	Results            map[string]savedResult
}

type savedResult struct {
	Outcome string // pass, fail or not applicable
	Detail  string `json:",omitempty"`
}

func (r results) export() map[string]savedResult {
	out := make(map[string]savedResult, len(r))
	for id, res := range r {
		out[id] = savedResult{Outcome: res.outcome.String(), Detail: res.detail}
	}
	return out
}

func (c savedCell) results() (results, error) {
	out := make(results, len(c.Results))
	for id, r := range c.Results {
		i := slices.Index([]string{passed.String(), failed.String(), notApplicable.String()}, r.Outcome)
		if i < 0 {
			return nil, fmt.Errorf("test %s: outcome %q", id, r.Outcome)
		}
		out[id] = result{outcome: outcome(i), detail: r.Detail}
	}
	return out, nil
}

func loadCard(path string) (map[string]savedCell, error) {
	cells := map[string]savedCell{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return cells, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &cells); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for key, c := range cells {
		if _, err := c.results(); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, key, err)
		}
	}
	return cells, nil
}

func saveCard(path string, cells map[string]savedCell) error {
	b, err := json.MarshalIndent(cells, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// gitCommit is the repository's HEAD, short, with "+" when the working
// tree has changes.
func gitCommit(t *testing.T) string {
	out, err := exec.Command("git", "-C", repoDir(), "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", repoDir(), "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		commit += "+"
	}
	return commit
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

func writeCard(b *strings.Builder, targets []target, cells map[string]savedCell, causes map[string]string) {
	runs := map[string]map[string]results{} // suite, target
	for _, s := range allSuites {
		runs[s.name] = map[string]results{}
		for _, tg := range targets {
			if c, ok := cells[s.name+"/"+cellName(tg)]; ok {
				runs[s.name][tg.name], _ = c.results() // checked by loadCard
			}
		}
	}
	fmt.Fprintf(b, "# Clients' own test suites: kafkalite beside Kafka %s and kfake\n\n", strings.TrimPrefix(kafka.name, "Kafka "))
	b.WriteString("Written by `go test -run TestReportCard -card` in internal/testkit/suites (see its package doc; `-card-only` runs some cells again, keeping the others' results); ")
	b.WriteString("CI runs the same suites against the kafkaserver command and fails on any change from the lists in its testdata. ")
	b.WriteString(cardTargetsNote + "\n\n")
	b.WriteString("| suite | target | pass | fail | not applicable | took | run on |\n|---|---|---:|---:|---:|---:|---|\n")
	for _, s := range allSuites {
		for _, tg := range targets {
			if !s.runsOn(tg.name) {
				continue
			}
			c, ok := cells[s.name+"/"+cellName(tg)]
			if !ok {
				fmt.Fprintf(b, "| %s | %s | – | – | – | – | did not run |\n", s.name, tg.name)
				continue
			}
			r := runs[s.name][tg.name]
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %s | %s, commit %s |\n", s.name, tg.name, r.count(passed), r.count(failed), r.count(notApplicable), c.Took, c.Date, c.Commit)
		}
	}
	for _, s := range allSuites {
		mine, ok := runs[s.name][kafkalite.name]
		fmt.Fprintf(b, "\n## %s: kafkalite's failures\n\n", s.name)
		if !ok {
			b.WriteString("Not run against kafkalite.\n")
			continue
		}
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
			if len(elsewhere) > 0 {
				fmt.Fprintf(b, "- `%s` (%s): %s\n", id, strings.Join(elsewhere, ", "), cause)
			} else {
				fmt.Fprintf(b, "- `%s`: %s\n", id, cause)
			}
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
