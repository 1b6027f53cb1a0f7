package suites

import (
	"bufio"
	"bytes"
	"encoding/json"
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
// suite takes minutes. Tests skip themselves for SCRAM, OAUTHBEARER and
// what the broker's ApiVersions lack.
var kgoSuite = suite{name: "kgo", run: runKgo}

func runKgo(t *testing.T, bootstrap string) results {
	cmd := exec.Command("go", "test", "-json", "-count=1", "-timeout", "30m", "github.com/twmb/franz-go/pkg/kgo")
	cmd.Dir = moduleDir()
	cmd.Env = append(os.Environ(), "KGO_SEEDS="+bootstrap, "KGO_TEST_RF=1", "KGO_TEST_RECORDS=20000", "KGO_LOG_LEVEL=none")
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
