package suites

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An outcome is how one test of a suite ended.
type outcome int

const (
	passed outcome = iota
	failed
	// notApplicable: the test skipped itself (it needs what the target
	// does not offer, such as SASL or a second broker) or was not run.
	notApplicable
)

func (o outcome) String() string {
	return [...]string{"pass", "fail", "not applicable"}[o]
}

// A result is one test's outcome and, for a failure or a skip, the first
// lines of its message.
type result struct {
	outcome outcome
	detail  string
}

// results are a suite's tests by id, as the suite names them.
type results map[string]result

// count returns how many tests ended with o.
func (r results) count(o outcome) int {
	n := 0
	for _, res := range r {
		if res.outcome == o {
			n++
		}
	}
	return n
}

// ids returns the ids of the tests that ended with o, sorted.
func (r results) ids(o outcome) []string {
	var out []string
	for id, res := range r {
		if res.outcome == o {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// A suite is a client's test suite: run runs it against the broker and
// returns every test's result.
type suite struct {
	name string
	run  func(t *testing.T, b broker) results
	// targets, when set, are the only targets the suite runs against,
	// the first in CI (a suite that needs a cluster of its own); else
	// kafkalite, Kafka and kfake, each one broker.
	targets []target
}

// ciTarget is the target TestSuites runs s against.
func (s suite) ciTarget() target {
	if len(s.targets) > 0 {
		return s.targets[0]
	}
	return kafkalite
}

// runsOn tells whether TestReportCard runs s against the target named name.
func (s suite) runsOn(name string) bool {
	if len(s.targets) == 0 {
		return true
	}
	return slices.ContainsFunc(s.targets, func(tg target) bool { return tg.name == name })
}

// expectedFile is the list of the suite's tests that pass against the
// kafkaserver command, one id a line.
func expectedFile(s suite) string {
	return filepath.Join(moduleDir(), "testdata", s.name+".pass")
}

// flakyFile lists the suite's tests whose outcome against the kafkaserver
// command varies from run to run: neither outcome fails TestSuites.
func flakyFile(s suite) string {
	return filepath.Join(moduleDir(), "testdata", s.name+".flaky")
}

// readList reads one id a line, skipping blank lines and # comments.
func readList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// readFlakyNotes reads a .flaky file's notes: the comment lines just
// above each id (after the last bare "#" line), joined, without a leading
// "ID: ".
func readFlakyNotes(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	var note []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "#":
			note = nil
		case strings.HasPrefix(l, "#"):
			note = append(note, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		case l != "":
			out[l] = strings.TrimPrefix(strings.Join(note, " "), l+": ")
			note = nil
		}
	}
	return out, sc.Err()
}

// compare reports, as t's errors, every expected test that did not pass
// (a regression) and every passing test the list lacks.
func compare(t *testing.T, s suite, got results) {
	t.Helper()
	if *update {
		writeExpected(t, s, got)
		return
	}
	want, err := readList(expectedFile(s))
	if err != nil {
		t.Fatal(err)
	}
	flaky, err := readList(flakyFile(s))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, id := range flaky {
		if res, ok := got[id]; ok && res.outcome != passed {
			t.Logf("%s %s (known to vary): %s: %s", s.name, id, res.outcome, res.detail)
		}
	}
	for _, id := range want {
		res, ok := got[id]
		switch {
		case !ok:
			t.Errorf("%s %s: expected to pass, did not run", s.name, id)
		case res.outcome != passed:
			t.Errorf("%s %s: expected to pass, %s: %s", s.name, id, res.outcome, res.detail)
		}
	}
	var added []string
	for _, id := range got.ids(passed) {
		if !slices.Contains(want, id) && !slices.Contains(flaky, id) {
			added = append(added, id)
		}
	}
	if len(added) > 0 {
		t.Errorf("%s: %d tests now pass; add them to %s:\n%s", s.name, len(added), expectedFile(s), strings.Join(added, "\n"))
	}
	t.Logf("%s against the kafkaserver command: %d pass, %d fail, %d not applicable",
		s.name, got.count(passed), got.count(failed), got.count(notApplicable))
}

// writeExpected (with -update) writes the tests that passed as the suite's
// list, keeping the list's leading comment, leaving out its flaky tests.
func writeExpected(t *testing.T, s suite, got results) {
	t.Helper()
	var head strings.Builder
	if old, err := os.ReadFile(expectedFile(s)); err == nil {
		for _, l := range strings.SplitAfter(string(old), "\n") {
			if !strings.HasPrefix(l, "#") {
				break
			}
			head.WriteString(l)
		}
	}
	flaky, _ := readList(flakyFile(s))
	for _, id := range got.ids(passed) {
		if !slices.Contains(flaky, id) {
			head.WriteString(id + "\n")
		}
	}
	if err := os.WriteFile(expectedFile(s), []byte(head.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d pass, %d fail, %d not applicable", expectedFile(s), got.count(passed), got.count(failed), got.count(notApplicable))
}

// firstLines returns the first n non-empty lines of s, joined by " / ".
func firstLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	return fmt.Sprint(strings.Join(out, " / "))
}

// TestFlakyNotes: each id of a .flaky file gets the comment just above
// it, the file's header going to none.
func TestFlakyNotes(t *testing.T) {
	notes, err := readFlakyNotes(flakyFile(librdkafkaSuite))
	if err != nil {
		t.Fatal(err)
	}
	if got := notes["0001_multiobj"]; !strings.HasPrefix(got, "passed run alone, did not pass in the run that wrote librdkafka.pass") {
		t.Errorf("0001_multiobj: %q", got)
	}
	if got := notes["0086_purge_remote"]; !strings.HasPrefix(got, "the test purges as soon as") || strings.Contains(got, "0086_purge_remote:") {
		t.Errorf("0086_purge_remote: %q", got)
	}
	for id, note := range notes {
		if strings.Contains(note, "tests whose outcome") {
			t.Errorf("%s took the file's header: %q", id, note)
		}
	}
}
