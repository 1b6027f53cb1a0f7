package server_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// kafkaPythonFlows are testdata/flow_kafkapython.py with each
// kafka-interpreter: Debian's python3-kafka 2.0.2 in Debian's own python3
// (fixed old request versions; no idempotence, no transactions) and
// PyPI's latest in the first python3 on PATH. A missing one skips its
// subtest.
var kafkaPythonFlows = []struct {
	name   string
	python func(t *testing.T) string
}{
	{"debian", func(t *testing.T) string {
		python := requireTool(t, "/usr/bin/python3")
		if err := exec.Command(python, "-c", "import kafka").Run(); err != nil {
			if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
				t.Fatalf("%s does not import kafka: %v", python, err)
			}
			t.Skipf("%s does not import kafka (apt-get install python3-kafka)", python)
		}
		return python
	}},
	{"pypi", func(t *testing.T) string { return pythonWith(t, "kafka") }},
}

// runKafkaPython runs a flow with each kafka-python; needs names the
// features ("idempotence", "transactions") the flow needs, and a client
// without them skips it.
func runKafkaPython(t *testing.T, flow func(*testing.T, scriptFlow), needs ...string) {
	for _, kp := range kafkaPythonFlows {
		t.Run(kp.name, func(t *testing.T) {
			f := scriptFlow{interpreter: kp.python(t), script: "testdata/flow_kafkapython.py", keepsGroup: true}
			if len(needs) > 0 {
				features := f.features(t)
				for _, n := range needs {
					if !features[n] {
						t.Skipf("this kafka-python has no %s", n)
					}
				}
			}
			flow(t, f)
		})
	}
}

// TestFlowKafkaPythonTimestamps: kafka-python creates a topic, produces
// with timestamps, reads from the earliest offsets and from
// offsets_for_times.
func TestFlowKafkaPythonTimestamps(t *testing.T) { runKafkaPython(t, flowTimes) }

// TestFlowKafkaPythonGroup: two kafka-python consumers in one group split
// a topic's two partitions after a rebalance, commit, and a third member
// resumes after their commits.
func TestFlowKafkaPythonGroup(t *testing.T) { runKafkaPython(t, flowGroup) }

// TestFlowKafkaPythonRestart: a kafka-python producer (flushed before the
// restart: without idempotence a batch in flight could be written twice)
// and a group consumer carry on across a restart of the server.
func TestFlowKafkaPythonRestart(t *testing.T) {
	runKafkaPython(t, func(t *testing.T, f scriptFlow) { flowRestart(t, f, false) })
}

// TestFlowKafkaPythonIdempotentRestart: an idempotent kafka-python
// producer with records in flight carries on across a restart, with no
// record repeated.
func TestFlowKafkaPythonIdempotentRestart(t *testing.T) {
	runKafkaPython(t, func(t *testing.T, f scriptFlow) { flowRestart(t, f, true) }, "idempotence")
}

// TestFlowKafkaPythonTransactions: kafka-python commits two transactions
// and aborts one; read_committed reads the committed records only,
// read_uncommitted all; a consume-transform-produce transaction commits
// its copy and the group's offset together.
func TestFlowKafkaPythonTransactions(t *testing.T) { runKafkaPython(t, flowTxn, "transactions") }

// TestFlowKafkaPythonCodecs: PyPI's kafka-python produces with the codecs
// that TestKafkaPythonLatest leaves out, which need its extras (pip
// install 'kafka-python[lz4,snappy,zstd]'), and reads back.
func TestFlowKafkaPythonCodecs(t *testing.T) {
	python := pythonWith(t, "kafka")
	check := "import kafka.codec as c; assert c.has_snappy() and c.has_lz4() and c.has_zstd()"
	if err := exec.Command(python, "-c", check).Run(); err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("%s's kafka-python lacks a codec module: %v", python, err)
		}
		t.Skipf("%s's kafka-python lacks a codec module (python3 -m pip install 'kafka-python[lz4,snappy,zstd]')", python)
	}
	srv := servertest.Start(t, nil)
	for _, codec := range []string{"snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			const n = 100
			out := run(t, "", python, "testdata/kafkapython.py", srv.Addr, "pyc-"+codec, codec, fmt.Sprint(n))
			requireScriptRecords(t, out, n, false)
		})
	}
}
