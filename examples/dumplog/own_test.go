package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// TestKafkaliteDirectory dumps a directory kafkalite writes, while its Dir
// is open (dumplog takes no lock and changes nothing; the active segments'
// indexes are still preallocated) and after Close: an aborted and a
// committed transaction, several segments, a LogAppendTime topic.
func TestKafkaliteDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := log.DefaultConfig()
	cfg.OffsetsTopicNumPartitions, cfg.TransactionStateNumPartitions = 1, 1
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "events", 1, map[string]string{"segment.bytes": "600", "index.interval.bytes": "100"})
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "stamped", 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	require.NoError(t, err)

	pcfg := producer.DefaultConfig()
	pcfg.TransactionalID = "dumplog-test"
	p, err := producer.New(d, pcfg)
	require.NoError(t, err)
	require.NoError(t, p.InitTransactions(ctx))
	send := func(value string) {
		_, err := p.Send(ctx, &producer.Record{Topic: "events", Key: []byte("k"), Value: []byte(value)}, nil)
		require.NoError(t, err)
	}
	var want []string
	for txn := range 4 {
		require.NoError(t, p.BeginTransaction())
		for i := range 3 {
			send(fmt.Sprintf("txn %d record %d", txn, i))
		}
		if txn%2 == 0 {
			require.NoError(t, p.AbortTransaction(ctx))
			continue
		}
		require.NoError(t, p.CommitTransaction(ctx))
		for i := range 3 {
			want = append(want, fmt.Sprintf("txn %d record %d", txn, i))
		}
	}
	require.NoError(t, p.Close(ctx))

	stamped, err := d.Partition("stamped", 0)
	require.NoError(t, err)
	batch, err := record.AppendBatch(nil, noProducer, record.DefaultLevel, []record.Record{{Timestamp: 1, Value: []byte("x")}})
	require.NoError(t, err)
	res, err := stamped.Append(batch)
	require.NoError(t, err)

	check := func(t *testing.T) {
		code, stdout, stderr := runDumplog("-verify", dir)
		require.Equal(t, 0, code, "stderr:\n%s", stderr)
		require.Contains(t, stdout, "no problems")

		code, stdout, stderr = runDumplog("-json", "-isolation", "read_committed", "-topic", "events", dir)
		require.Equal(t, 0, code, stderr)
		var got []string
		for _, l := range parseJSONLines(t, stdout) {
			require.Equal(t, "events", l.Topic)
			got = append(got, string(l.Value))
		}
		require.Equal(t, want, got)

		code, stdout, stderr = runDumplog("-json", "-isolation", "read_uncommitted", filepath.Join(dir, "events-0"))
		require.Equal(t, 0, code, stderr)
		require.Len(t, parseJSONLines(t, stdout), 12)

		code, stdout, stderr = runDumplog("-json", filepath.Join(dir, "stamped-0"))
		require.Equal(t, 0, code, stderr)
		lines := parseJSONLines(t, stdout)
		require.Len(t, lines, 1)
		require.Equal(t, res.LogAppendTime, lines[0].Timestamp, "LogAppendTime applied")
		require.InDelta(t, time.Now().UnixMilli(), lines[0].Timestamp, float64(time.Hour.Milliseconds()))
	}
	t.Run("open", check)
	require.NoError(t, d.Close())
	t.Run("closed", check)
}

// TestReadCommittedAgreesWithLog adopts a copy of the fixture with
// log.Open and checks that its read_committed and read_uncommitted reads
// return the records dumplog prints, offset for offset.
func TestReadCommittedAgreesWithLog(t *testing.T) {
	ctx := context.Background()
	dir := copyFixture(t)
	cfg := log.DefaultConfig()
	cfg.NodeID = 1 // meta.properties says so
	d, err := log.Open(ctx, dir, cfg)
	require.NoError(t, err)
	defer d.Close()
	l, err := d.Partition("orders", 0)
	require.NoError(t, err)

	read := func(committed bool) []int64 {
		var offsets []int64
		fn := func(rec *record.Record, _ *record.BatchHeader) error {
			offsets = append(offsets, rec.Offset)
			return nil
		}
		for next := int64(0); ; {
			var n int64
			if committed {
				n, err = l.ReadCommittedRecords(next, 1<<20, fn)
			} else {
				n, err = l.ReadRecords(next, 1<<20, fn)
			}
			require.NoError(t, err)
			if n == next {
				return offsets
			}
			next = n
		}
	}
	for _, tc := range []struct {
		isolation string
		committed bool
	}{{"read_uncommitted", false}, {"read_committed", true}} {
		code, stdout, stderr := runDumplog("-json", "-isolation", tc.isolation, filepath.Join(fixtureDir, "orders-0"))
		require.Equal(t, 0, code, stderr)
		var dumped []int64
		for _, line := range parseJSONLines(t, stdout) {
			dumped = append(dumped, line.Offset)
		}
		require.Equal(t, read(tc.committed), dumped, tc.isolation)
	}
}
