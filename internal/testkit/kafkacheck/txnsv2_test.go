package kafkacheck

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJavaTransactionsV2AgainstServer: Kafka 4.4's Java transactional
// producer, which uses transactions version 2 since the server finalizes
// transaction.version 2, commits, aborts and commits again over two
// partitions with the group's offsets in the first transaction (no
// AddPartitionsToTxn or AddOffsetsToTxn: Produce v12+ and TxnOffsetCommit
// v5 add them); read_committed sees the committed records only;
// kafka-transactions describes the id at epoch 3 (every end bumped it);
// every COMMIT and ABORT marker carries its transaction's bumped epoch;
// DumpLogSegments --transaction-log-decoder reads __transaction_state
// with clientTransactionVersion 2.
func TestJavaTransactionsV2AgainstServer(t *testing.T) {
	k := Get(t)
	s := startKafkaServer(t, k)
	k.Client(t, "", "create-topic", s.addr, "tv2", "2")
	var tx strings.Builder
	tx.WriteString("init\n")
	for n, end := range []string{"commit", "abort", "commit"} {
		tx.WriteString("begin\n")
		for i := range 4 {
			fmt.Fprintf(&tx, "send\ttv2\t%d\t%s\t%s\n", i%2, b64("k"), b64(fmt.Sprintf("%s %d %d", end, n, i)))
		}
		if n == 0 {
			tx.WriteString("offsets\ttv2g\ttv2\t0\t7\n")
		}
		tx.WriteString("flush\n" + end + "\n")
	}
	k.Client(t, tx.String(), "produce", s.addr, "transactional.id=java-tv2")

	byIso := map[string][]string{}
	for _, f := range Lines(k.Client(t, "", "read", s.addr, "tv2"), "record") {
		byIso[f[0]] = append(byIso[f[0]], f[8])
	}
	require.Len(t, byIso["read_committed"], 8)
	for _, v := range byIso["read_committed"] {
		require.NotContains(t, v, b64("abort"), "read_committed")
	}
	require.Len(t, byIso["read_uncommitted"], 12)
	committed := Lines(k.Client(t, "", "committed", s.addr, "tv2g"), "committed")
	require.Len(t, committed, 1)
	require.Equal(t, "7", committed[0][3], "the offsets committed in the first transaction: %v", committed)
	txdesc := k.Run(t, "", "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", s.addr,
		"describe", "--transactional-id", "java-tv2")
	require.Regexp(t, `(?m)^\S+\s+java-tv2\s+\d+\s+3\s+CompleteCommit\s`, txdesc, "three ends, three bumps after InitProducerId's epoch 0")

	s.stop(t)
	for p := range int32(2) {
		tp := TopicPartition{Topic: "tv2", Partition: p}
		out := k.Dump(t, Paths(PartitionFiles(t, s.dir, tp, ".log")), "--deep-iteration")
		require.Empty(t, out.Problems)
		var epochs []int16
		var kinds []string
		for _, b := range dumpedBatches(t, out, s.dir, tp) {
			if b.IsControl {
				epochs = append(epochs, b.ProducerEpoch)
				kinds = append(kinds, b.Records[0].EndTxnMarker)
			}
		}
		require.Equal(t, []int16{1, 2, 3}, epochs, "tv2-%d's markers carry the bumped epochs", p)
		require.Equal(t, []string{"COMMIT", "ABORT", "COMMIT"}, kinds, "tv2-%d", p)
	}
	var states []string
	decoded := k.Dump(t, txnStateFiles(t, s.dir), "--deep-iteration", "--transaction-log-decoder")
	require.Empty(t, decoded.Problems, "DumpLogSegments --transaction-log-decoder reports no problem")
	for _, f := range decoded.Files {
		for _, b := range f.Batches {
			for _, r := range b.Records {
				if r.Key != nil && strings.Contains(*r.Key, "java-tv2") && r.Payload != nil {
					states = append(states, *r.Payload)
				}
			}
		}
	}
	require.NotEmpty(t, states)
	last := states[len(states)-1]
	require.Contains(t, last, `"clientTransactionVersion":2`, "Kafka decodes the version 1 value: %s", last)
	require.Contains(t, last, `"producerEpoch":3`, last)
}

// txnStateFiles lists the .log files of __transaction_state under dir.
func txnStateFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, TxnStateTopic+"-*", "*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}
