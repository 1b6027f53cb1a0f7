package suites

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kafkaPythonVersion is Debian's python-kafka (bookworm's), whose source
// package carries upstream's tests and whose python3-kafka is the client
// they run.
const kafkaPythonVersion = "2.0.2"

// kafkaPythonSuite runs kafka-python's integration tests (the test files
// that need a broker) with Debian's python3, each test failed after 120 s
// (pytest-timeout): some wait for records for ever. KAFKA_VERSION, which the tests
// read to skip what older brokers lack, names 2.5.0, the newest release
// kafka-python 2.0.2's fixtures know. Against the kafkaserver command the
// SASL tests (test_sasl_integration.py: PLAIN, SCRAM-SHA-256 and
// SCRAM-SHA-512 as the fixture's user alice) log in on its SASL_PLAINTEXT
// listener (KAFKALITE_SASL_BOOTSTRAP).
var kafkaPythonSuite = suite{name: "kafka-python", run: runKafkaPython}

var kafkaPythonFiles = []string{
	"test/test_admin_integration.py", "test/test_consumer_group.py", "test/test_consumer_integration.py",
	"test/test_producer.py", "test/test_sasl_integration.py",
}

func runKafkaPython(t *testing.T, b broker) results {
	src := filepath.Join(suitesDir(), "python-kafka-"+kafkaPythonVersion)
	need(t, filepath.Join(src, "test", "fixtures.py"), "kafka-python's tests")
	report := filepath.Join(t.TempDir(), "junit.xml")
	args := append([]string{"-m", "pytest", "-p", "kafkalite_external", "-p", "no:cacheprovider", "-q", "--timeout=120", "--junitxml=" + report}, kafkaPythonFiles...)
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "KAFKALITE_BOOTSTRAP="+b.bootstrap, "KAFKA_VERSION=2.5.0",
		"PYTHONPATH="+filepath.Join(moduleDir(), "testdata", "kafkapython"))
	if b.sasl != "" {
		cmd.Env = append(cmd.Env, "KAFKALITE_SASL_BOOTSTRAP="+b.sasl)
	}
	out, err := cmd.CombinedOutput()
	junit, rerr := os.ReadFile(report)
	if rerr != nil {
		t.Fatalf("pytest wrote no report: %v %v\n%s", err, rerr, out)
	}
	got, perr := parseJUnit(junit)
	if perr != nil || len(got) == 0 {
		t.Fatalf("pytest's report: %v\n%s", perr, out)
	}
	return got
}

// parseJUnit reads pytest's JUnit XML report into each test's result, by
// pytest's id (file::name[parameters]).
func parseJUnit(b []byte) (results, error) {
	type message struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	var doc struct {
		Cases []struct {
			Class   string   `xml:"classname,attr"`
			Name    string   `xml:"name,attr"`
			Failure *message `xml:"failure"`
			Error   *message `xml:"error"`
			Skipped *message `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	got := results{}
	for _, c := range doc.Cases {
		id := strings.ReplaceAll(c.Class, ".", "/") + ".py::" + c.Name
		res := result{outcome: passed}
		switch {
		case c.Failure != nil:
			res = result{outcome: failed, detail: firstLines(c.Failure.Message+"\n"+c.Failure.Text, 2)}
		case c.Error != nil:
			res = result{outcome: failed, detail: firstLines(c.Error.Message+"\n"+c.Error.Text, 2)}
		case c.Skipped != nil:
			res = result{outcome: notApplicable, detail: firstLines(c.Skipped.Message, 1)}
		}
		got[id] = res
	}
	return got, nil
}
