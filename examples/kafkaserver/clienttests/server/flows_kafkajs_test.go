package server_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// kafkajsFlow is testdata/kafkajs/flows.js in node, with kafkajs
// installed beside it (npm ci in testdata/kafkajs; .ci/run does it), or
// skips the test unless KAFKALITE_CLIENTS_REQUIRED=1. The script takes
// the modes of the Python flow scripts and prints the same lines, so the
// flows of flows_test.go check it.
func kafkajsFlow(t *testing.T) scriptFlow {
	t.Helper()
	node := requireTool(t, "node")
	if _, err := os.Stat("testdata/kafkajs/node_modules/kafkajs"); err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatalf("kafkajs is not installed in testdata/kafkajs: %v", err)
		}
		t.Skip("kafkajs is not installed (cd testdata/kafkajs && npm ci)")
	}
	// kafkajs stays a member across a restart; when it starts its
	// consumer again by itself (after a fetch's connection closed), it
	// leaves and joins anew, which the script does not count as a loss.
	return scriptFlow{interpreter: node, script: "testdata/kafkajs/flows.js", keepsGroup: true}
}

// TestFlowKafkaJSTimestamps: kafkajs creates a topic, produces records
// with timestamps, reads them from the earliest offsets, finds offsets
// by time with admin.fetchTopicOffsetsByTimestamp and reads from them.
// Where the server finds no record at or after the time (ListOffsets
// answers -1, as Kafka's broker does), kafkajs gives the partition's
// high watermark instead.
func TestFlowKafkaJSTimestamps(t *testing.T) {
	f := kafkajsFlow(t)
	srv := servertest.Start(t, nil)
	base := time.Now().Add(-time.Minute).UnixMilli()
	lines := map[string][]string{}
	for _, l := range f.run(t, "times", srv.Addr, "times", strconv.FormatInt(base, 10)) {
		tag, _, _ := strings.Cut(l, " ")
		lines[tag] = append(lines[tag], l)
	}
	all := map[int32][]string{0: keyed(0, stepping(0, 10, 2)...), 1: keyed(0, stepping(1, 10, 2)...)}
	require.Equal(t, all, logRecords(t, srv, "times", false))
	require.Equal(t, all, byPartition(t, "earliest", lines["earliest"]))
	require.Equal(t, []string{"time 0 2", "time 1 2"}, lines["time"])
	require.Equal(t, []string{"late 0 5", "late 1 5"}, lines["late"], "kafkajs's high watermark for the server's -1")
	require.Equal(t, map[int32][]string{0: keyed(2, 4, 6, 8), 1: keyed(2, 5, 7, 9)}, byPartition(t, "bytime", lines["bytime"]))
}

// TestFlowKafkaJSGroup: two kafkajs consumers in one group split a
// topic's two partitions after a rebalance (the second joins while the
// first reads), each committing what it reads; a third member resumes
// after their commits.
func TestFlowKafkaJSGroup(t *testing.T) { flowGroup(t, kafkajsFlow(t)) }

// TestFlowKafkaJSRestart: an idempotent kafkajs producer (idempotent,
// maxInFlightRequests 1) with records in flight and a group consumer
// carry on across a restart of the server; the topic holds every record
// once, in order, and the consumer reads each once and stays a member.
func TestFlowKafkaJSRestart(t *testing.T) { flowRestart(t, kafkajsFlow(t), true) }

// TestFlowKafkaJSTransactions: a kafkajs transactional producer
// (transactionalId, idempotent, maxInFlightRequests 1) commits two
// transactions and aborts one; a consumer with readUncommitted false
// reads the committed records only, one with readUncommitted true all; a
// consume-transform-produce transaction (sendOffsets) commits its copy
// and the group's offset together.
func TestFlowKafkaJSTransactions(t *testing.T) { flowTxn(t, kafkajsFlow(t)) }
