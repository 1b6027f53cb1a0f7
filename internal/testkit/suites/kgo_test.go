package suites

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	// The module requires franz-go at the version whose pkg/kgo tests run.
	_ "github.com/twmb/franz-go/pkg/kgo"
)

// kgoSuite runs franz-go's pkg/kgo tests, those that need no broker among
// them, against one broker: replication factor 1, and 20,000 records
// (instead of 500,000) in the group and transaction ETL tests, so that the
// suite takes minutes. Against the kafkaserver command every test but
// kgoPlaintext's runs over TLS with a client certificate (KGO_TEST_TLS),
// and the SCRAM and OAUTHBEARER tests log in on its SASL listener
// (KGO_TEST_SCRAM_SEEDS, KGO_TEST_OAUTH_SEEDS); against the other targets
// every test runs over PLAINTEXT, those skipping themselves. Tests skip
// themselves too for what the broker's ApiVersions lack.
var kgoSuite = suite{name: "kgo", run: runKgo}

// kgoPlaintext are the tests that dial through a Dialer of their own,
// which franz-go refuses beside KGO_TEST_TLS's DialTLSConfig (their
// client is nil, and the test binary crashes): they run in a second
// go test, over PLAINTEXT.
var kgoPlaintext = []string{"TestIssue769"}

func runKgo(t *testing.T, b broker) results {
	env := []string{"KGO_TEST_RF=1", "KGO_TEST_RECORDS=20000", "KGO_LOG_LEVEL=none"}
	if b.sasl != "" {
		env = append(env, "KGO_TEST_SCRAM_SEEDS="+b.sasl, "KGO_TEST_SCRAM="+saslUser+":"+saslPassword,
			"KGO_TEST_OAUTH_SEEDS="+b.sasl)
	}
	if b.ssl == "" {
		return goTestKgo(t, append(env, "KGO_SEEDS="+b.bootstrap))
	}
	only := "^(" + strings.Join(kgoPlaintext, "|") + ")$"
	got := goTestKgo(t, append(env, "KGO_SEEDS="+b.ssl,
		"KGO_TEST_TLS=ca:"+b.pki.ca+",cert:"+b.pki.clientCert+",key:"+b.pki.clientKey), "-skip", only)
	maps.Copy(got, goTestKgo(t, append(env, "KGO_SEEDS="+b.bootstrap), "-run", only))
	return got
}

// goTestKgo runs go test of pkg/kgo with env and args.
func goTestKgo(t *testing.T, env []string, args ...string) results {
	cmd := exec.Command("go", append([]string{"test", "-json", "-count=1", "-timeout", "30m"}, append(args, "github.com/twmb/franz-go/pkg/kgo")...)...)
	cmd.Dir = moduleDir()
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	got := parseTestJSON(out)
	if len(got) == 0 {
		t.Fatalf("go test of pkg/kgo ran no tests: %v\n%s", err, stderr.Bytes())
	}
	return got
}

// parseTestJSON reads go test -json's events into each top-level test's
// result; a failed or skipped test's detail is its first lines of output
// that name a test file.
func parseTestJSON(out []byte) results {
	type event struct{ Action, Test, Output string }
	got := results{}
	output := map[string]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
			continue
		}
		top, _, _ := strings.Cut(e.Test, "/")
		switch e.Action {
		case "output":
			if strings.Contains(e.Output, "_test.go:") && !strings.Contains(e.Output, "deleting") {
				if output[top] == nil {
					output[top] = &strings.Builder{}
				}
				output[top].WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test != top {
				continue
			}
			o := map[string]outcome{"pass": passed, "fail": failed, "skip": notApplicable}[e.Action]
			var detail string
			if o != passed && output[top] != nil {
				detail = firstLines(output[top].String(), 3)
			}
			got[top] = result{outcome: o, detail: detail}
		}
	}
	return got
}
