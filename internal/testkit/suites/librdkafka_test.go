package suites

import (
	"maps"
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
// machine). With -v, each failed test's failure is logged.
var librdkafkaSuite = suite{name: "librdkafka", run: runLibrdkafka}

var (
	testFile   = regexp.MustCompile(`^(0[0-9]{3})-.*\.(c|cpp)$`)
	ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// A summary row: | 0001_multiobj | PASSED | 0.047s | failure, if any
	summaryRow = regexp.MustCompile(`^\|\s*(\d{4}_\S+)\s*\|\s*([A-Z]+)\s*\|\s*[0-9.]+s\s*\|\s*(.*)$`)
	// A failure banner, the test's name followed by its subtest's, if
	// any, and the failure on the next line:
	//	### Test "0081_admin (do_test_CreateAcls:1362)" failed at 0081-admin.c:1445:... ###
	//	Test assertion failed: ...
	failureBanner = regexp.MustCompile(`### Test "(\d{4}_[^" ]+)(?: \(([^"]*)\))?" failed at [^\n]*###\n([^\n]*)`)
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
		readLibrdkafkaRunner(got, n, r.suffix, ansiEscape.ReplaceAllString(string(out), ""))
	}
	if testing.Verbose() {
		for _, id := range got.ids(failed) {
			t.Logf("librdkafka %s failed: %s", id, got[id].detail)
		}
	}
	return got
}

// readLibrdkafkaRunner adds to got the results a runner of the tests
// numbered n printed: its summary's rows or, when it ended before its
// summary (a timeout or a crash), the failure its banner names, under the
// test's name, the subtest's before the failure; suffix follows each
// test's name (a run of the test with another configuration).
func readLibrdkafkaRunner(got results, n, suffix, text string) {
	found := false
	for _, l := range strings.Split(text, "\n") {
		m := summaryRow.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		found = true
		switch m[2] {
		case "PASSED":
			got[m[1]+suffix] = result{outcome: passed}
		case "FAILED":
			got[m[1]+suffix] = result{outcome: failed, detail: strings.TrimSuffix(strings.TrimSpace(m[3]), "|")}
		case "SKIPPED":
			got[m[1]+suffix] = result{outcome: notApplicable, detail: strings.TrimSpace(m[3])}
		}
	}
	if found {
		return
	}
	for _, m := range failureBanner.FindAllStringSubmatch(text, -1) {
		if strings.HasPrefix(m[1], n+"_") {
			detail := m[3]
			if m[2] != "" {
				detail = m[2] + ": " + detail
			}
			got[m[1]+suffix] = result{outcome: failed, detail: detail}
			return
		}
	}
}

// TestReadLibrdkafkaRunner reads a runner that printed its summary and two
// that ended at a failure, one of them in a subtest, from the runner's own
// output.
func TestReadLibrdkafkaRunner(t *testing.T) {
	got := results{}
	readLibrdkafkaRunner(got, "0086", "", `[0086_purge_remote          /  0.000s] ================= Running test 0086_purge_remote =================
| <MAIN>                                   |     PASSED |   0.296s |
| 0086_purge_local                         |    SKIPPED |   0.000s | Filtered due to negative test flags
| 0086_purge_remote                        |     PASSED |   1.011s |
`)
	readLibrdkafkaRunner(got, "0012", "", `[0012_produce_consume        /  0.004s] TEST FAILURE
### Test "0012_produce_consume" failed at 0012-produce_consume.c:57:dr_cb() at Sat Dec  5 23:33:31 2026: ###
Message delivery failed: Local: Unknown partition
### Test "<MAIN>" failed at test.c:1684:test_wait_exit() at Sat Dec  5 23:33:32 2026: ###
3 thread(s) still active in librdkafka
`)
	readLibrdkafkaRunner(got, "0081", "", `### Test "0081_admin (do_test_CreateAcls:1362)" failed at 0081-admin.c:1445:do_test_CreateAcls() at Sat Dec  5 23:39:07 2026: ###
Test assertion failed: "!error": Expected RD_KAFKA_RESP_ERR_NO_ERROR, not No Authorizer is configured.
`)
	want := results{
		"0086_purge_local":     {outcome: notApplicable, detail: "Filtered due to negative test flags"},
		"0086_purge_remote":    {outcome: passed},
		"0012_produce_consume": {outcome: failed, detail: "Message delivery failed: Local: Unknown partition"},
		"0081_admin":           {outcome: failed, detail: `do_test_CreateAcls:1362: Test assertion failed: "!error": Expected RD_KAFKA_RESP_ERR_NO_ERROR, not No Authorizer is configured.`},
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
