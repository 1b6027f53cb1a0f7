package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// requireTool returns the path of a client tool, or skips the test when
// it is not installed, unless KAFKALITE_CLIENTS_REQUIRED=1 (CI installs
// them and sets it), which fails it instead.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("%s is not installed and KAFKALITE_CLIENTS_REQUIRED=1", name)
		}
		t.Skipf("%s is not installed (KAFKALITE_CLIENTS_REQUIRED=1 makes this a failure)", name)
	}
	return path
}

// run runs a client tool with stdin and returns its standard output.
func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %v\nstderr:\n%s", name, args, stderr.String())
	return stdout.String()
}

// TestKcat produces keyed lines with kcat (librdkafka; Debian's kcat is
// built on librdkafka 2.0.2, which turns its features on from single probe
// versions of ApiVersions' ranges) with every codec it offers, and reads
// them back with kcat from the beginning.
func TestKcat(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, nil)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "kcat-" + codec
			var in strings.Builder
			var want []string
			for i := range 200 {
				line := fmt.Sprintf("k%d:value %d %s", i%7, i, strings.Repeat("x", i%50))
				in.WriteString(line + "\n")
				want = append(want, line)
			}
			run(t, in.String(), kcat, "-b", srv.Addr, "-t", topic, "-P", "-K:", "-z", codec,
				"-X", "topic.metadata.refresh.interval.ms=100")
			out := run(t, "", kcat, "-b", srv.Addr, "-t", topic, "-C", "-o", "beginning", "-e", "-q", "-f", "%k:%s\n")
			got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			slices.Sort(got)
			slices.Sort(want)
			require.Equal(t, want, got)
		})
	}
}

// TestKafkaPython produces and consumes with kafka-python (Debian's
// python3-kafka 2.0.2, in Debian's own python3, which sends fixed old
// versions: Metadata 0/1/5, Produce 7, Fetch 4, ListOffsets 1) with every
// codec.
func TestKafkaPython(t *testing.T) {
	python := requireTool(t, "/usr/bin/python3")
	if err := exec.Command(python, "-c", "import kafka, lz4, snappy, zstandard").Run(); err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("kafka-python or a codec module is missing from %s: %v", python, err)
		}
		t.Skipf("kafka-python or a codec module is missing from %s (python3-kafka, python3-lz4, python3-snappy, python3-zstandard)", python)
	}
	srv := servertest.Start(t, nil)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			const n = 100
			out := run(t, "", python, "testdata/kafkapython.py", srv.Addr, "py-"+codec, codec, fmt.Sprint(n))
			requireScriptRecords(t, out, n, false)
		})
	}
}

// TestKcatSASL: kcat (librdkafka) authenticates with PLAIN and with
// SCRAM-SHA-256 and SCRAM-SHA-512, produces and reads back.
func TestKcatSASL(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, withSASL)
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			auth := []string{"-b", srv.Addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + mech,
				"-X", "sasl.username=bob", "-X", "sasl.password=bob-secret"}
			topic := "kcat-sasl-" + strings.ToLower(mech)
			run(t, "one\ntwo\n", kcat, append(auth, "-t", topic, "-P")...)
			out := run(t, "", kcat, append(auth, "-t", topic, "-C", "-o", "beginning", "-e", "-q")...)
			require.Equal(t, "one\ntwo\n", out)
		})
	}
}

// TestKcatGroup: kcat's balanced consumer (-G) reads a topic in a group
// and commits; a second run of the same group reads only what came after.
func TestKcatGroup(t *testing.T) {
	kcat := requireTool(t, "kcat")
	srv := servertest.Start(t, nil)
	run(t, "a\nb\nc\n", kcat, "-b", srv.Addr, "-t", "kg", "-P")
	require.Equal(t, "a\nb\nc\n", run(t, "", kcat, "-b", srv.Addr, "-G", "kgroup", "kg", "-o", "beginning", "-e", "-q"))
	run(t, "d\n", kcat, "-b", srv.Addr, "-t", "kg", "-P")
	require.Equal(t, "d\n", run(t, "", kcat, "-b", srv.Addr, "-G", "kgroup", "kg", "-e", "-q"))
}

// pythonWith returns the first python3 on PATH (on the project's machines
// pyenv's, where PyPI's packages are installed; Debian's packages load
// only in /usr/bin/python3), skipping the test unless it imports module.
func pythonWith(t *testing.T, module string) string {
	t.Helper()
	python := requireTool(t, "python3")
	if err := exec.Command(python, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("%s does not import %s: %v", python, module, err)
		}
		t.Skipf("%s does not import %s (python3 -m pip install %s)", python, module, module)
	}
	return python
}

// TestConfluentKafka: confluent-kafka (PyPI's wheel, a current
// librdkafka) produces idempotently with every codec and reads back in a
// consumer group, committing.
func TestConfluentKafka(t *testing.T) {
	python := pythonWith(t, "confluent_kafka")
	srv := servertest.Start(t, nil)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			const n = 100
			out := run(t, "", python, "testdata/confluentkafka.py", srv.Addr, "ck-"+codec, codec, fmt.Sprint(n), "ck-group-"+codec)
			requireScriptRecords(t, out, n, true)
		})
	}
}

// TestKafkaPythonLatest runs TestKafkaPython's script with PyPI's latest
// kafka-python in the first python3 on PATH.
func TestKafkaPythonLatest(t *testing.T) {
	python := pythonWith(t, "kafka")
	srv := servertest.Start(t, nil)
	for _, codec := range []string{"none", "gzip"} {
		t.Run(codec, func(t *testing.T) {
			const n = 100
			out := run(t, "", python, "testdata/kafkapython.py", srv.Addr, "pyl-"+codec, codec, fmt.Sprint(n))
			requireScriptRecords(t, out, n, false)
		})
	}
}

// TestKafkaJS: kafkajs (npm) creates a topic, produces idempotently with
// acks=all uncompressed and with gzip (its own codecs), and reads back in
// a consumer group. .ci/run installs it (npm ci in testdata/kafkajs).
func TestKafkaJS(t *testing.T) {
	node := requireTool(t, "node")
	if _, err := os.Stat("testdata/kafkajs/node_modules/kafkajs"); err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("kafkajs is not installed in testdata/kafkajs: %v", err)
		}
		t.Skip("kafkajs is not installed (cd testdata/kafkajs && npm ci)")
	}
	srv := servertest.Start(t, nil)
	for _, codec := range []string{"none", "gzip"} {
		t.Run(codec, func(t *testing.T) {
			const n = 100
			out := run(t, "", node, "testdata/kafkajs/check.js", srv.Addr, "js-"+codec, codec, fmt.Sprint(n), "js-group-"+codec)
			requireScriptRecords(t, out, n, true)
		})
	}
}

// requireScriptRecords checks a client script's output: n records
// "k<i%7>:value <i>", one per line, in order or sorted.
func requireScriptRecords(t *testing.T, out string, n int, sorted bool) {
	t.Helper()
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("k%d:value %d", i%7, i))
	}
	if sorted {
		slices.Sort(want)
	}
	require.Equal(t, want, strings.Split(strings.TrimSuffix(out, "\n"), "\n"))
}
