package suites

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// librdkafkaVersion is Debian's librdkafka (trixie's), whose source package
// carries upstream's tests; .ci/suites/fetch builds the library and the
// tests' runner in the cache.
const librdkafkaVersion = "2.8.0"

// librdkafkaSuite runs librdkafka's broker tests (0001 to 0999; -L leaves
// out those that need no broker), each in a test-runner process of its
// own: a test that times out aborts its runner, and would end the rest.
// Quick mode (-Q), random topic names, TEST_KAFKA_VERSION 4.0.0 (the
// newest release the suite knows), timeouts doubled (a shared 2-core
// machine).
var librdkafkaSuite = suite{name: "librdkafka", run: runLibrdkafka}

var (
	testFile   = regexp.MustCompile(`^(0[0-9]{3})-.*\.(c|cpp)$`)
	ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// A summary row: | 0001_multiobj | PASSED | 0.047s | failure, if any
	summaryRow = regexp.MustCompile(`^\|\s*(\d{4}_\S+)\s*\|\s*([A-Z]+)\s*\|\s*[0-9.]+s\s*\|\s*(.*)$`)
)

func runLibrdkafka(t *testing.T, b broker) results {
	src := filepath.Join(suitesDir(), "librdkafka-"+librdkafkaVersion)
	tests := filepath.Join(src, "tests")
	need(t, filepath.Join(tests, "test-runner"), "librdkafka's test runner")
	tmp := t.TempDir()
	conf := func(name, settings string) string {
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(settings+"test.topic.random=true\ntest.timeout.multiplier=2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plaintextConf := conf("test.conf", "metadata.broker.list="+b.bootstrap+"\n")
	entries, err := os.ReadDir(tests)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []string
	for _, e := range entries {
		if m := testFile.FindStringSubmatch(e.Name()); m != nil && m[1] != "0000" && !slices.Contains(numbers, m[1]) {
			numbers = append(numbers, m[1])
		}
	}
	slices.Sort(numbers)
	got := results{}
	for _, r := range librdkafkaRuns(t, b, numbers, plaintextConf, conf) {
		n := r.test
		cmd := exec.Command("./test-runner", "-L", "-Q", "-p1")
		cmd.Dir = tests
		cmd.Env = append(os.Environ(), "TESTS="+n, "RDKAFKA_TEST_CONF="+r.conf, "TEST_KAFKA_VERSION=4.0.0",
			"LD_LIBRARY_PATH="+filepath.Join(src, "src")+":"+filepath.Join(src, "src-cpp"))
		cmd.Env = append(cmd.Env, r.env...)
		out, _ := cmd.CombinedOutput()
		text := ansiEscape.ReplaceAllString(string(out), "")
		found := false
		for _, l := range strings.Split(text, "\n") {
			m := summaryRow.FindStringSubmatch(strings.TrimSpace(l))
			if m == nil {
				continue
			}
			found = true
			switch m[2] {
			case "PASSED":
				got[m[1]+r.suffix] = result{outcome: passed}
			case "FAILED":
				got[m[1]+r.suffix] = result{outcome: failed, detail: strings.TrimSuffix(strings.TrimSpace(m[3]), "|")}
			case "SKIPPED":
				got[m[1]+r.suffix] = result{outcome: notApplicable, detail: strings.TrimSpace(m[3])}
			}
		}
		if !found {
			// The runner ended before its summary: a timeout or a crash
			// (it names the test in its failure banner).
			if m := regexp.MustCompile(`### Test "(` + n + `_[^"]+)" failed at [^\n]*###\n([^\n]*)`).FindStringSubmatch(text); m != nil {
				got[m[1]+r.suffix] = result{outcome: failed, detail: m[2]}
			}
		}
	}
	return got
}
