package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMain lets the tests run this binary as the migrate command (a child
// they can kill -9): with MIGRATE_RUN_MAIN=1 it is the command.
func TestMain(m *testing.M) {
	if os.Getenv("MIGRATE_RUN_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// command runs the migrate command as a child process.
func command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MIGRATE_RUN_MAIN=1")
	return cmd
}

// TestKillNineThenResume kills the command with SIGKILL at several points
// of a copy (as soon as it saved its first state, then after more and
// more records were acknowledged), starting it again each time; the last
// run finishes, -verify passes, and the cluster holds every record once,
// at its own offset.
func TestKillNineThenResume(t *testing.T) {
	ctx := t.Context()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	brokers := strings.Join(c.ListenAddrs(), ",")
	dir := filepath.Join(t.TempDir(), "kafkalite")
	const perPartition = 100000
	writeOrders(t, dir, perPartition)
	stateFile := dir + ".migrate/state.json"

	for _, atLeast := range []int64{0, 3 * perPartition / 10, 3 * perPartition * 4 / 10, 3 * perPartition * 7 / 10} {
		if n, _ := savedRecords(stateFile); n >= 3*perPartition {
			t.Fatalf("the copy finished before the kill point %d: make it longer", atLeast)
		}
		cmd := command(ctx, "-from", dir, "-to", brokers, "-progress", "log", "-checkpoint", "5ms")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		killed := false
	wait:
		for {
			select {
			case <-exited:
				break wait // it finished before the kill point
			case <-time.After(time.Millisecond):
			}
			if n, ok := savedRecords(stateFile); ok && n >= atLeast {
				require.NoError(t, cmd.Process.Kill())
				<-exited
				killed = true
				break
			}
		}
		n, _ := savedRecords(stateFile)
		t.Logf("kill point %d: killed=%v, %d records in the saved state", atLeast, killed, n)
	}
	out, err := command(ctx, "-from", dir, "-to", brokers, "-progress", "log").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "offsets identical")
	out, err = command(ctx, "-from", dir, "-to", brokers, "-verify").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "both sides agree")

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	seen := map[string]int64{}
	total := 0
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for total < 3*perPartition {
		fs := cl.PollFetches(pctx)
		require.NoError(t, pctx.Err(), "read %d of %d records", total, 3*perPartition)
		fs.EachRecord(func(r *kgo.Record) {
			key := fmt.Sprintf("%d/%s", r.Partition, r.Value)
			_, dup := seen[key]
			require.False(t, dup, "record %s twice", key)
			seen[key] = r.Offset
			require.Equal(t, fmt.Sprintf("order %d", r.Offset), string(r.Value), "offset kept")
			total++
		})
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "orders")
	require.NoError(t, err)
	ends.Each(func(o kadm.ListedOffset) {
		require.Equal(t, int64(perPartition), o.Offset, "partition %d", o.Partition)
	})
}

// savedRecords reads the records the saved state counts.
func savedRecords(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var st struct {
		Partitions map[string]struct {
			Records int64 `json:"records"`
		} `json:"partitions"`
	}
	if json.Unmarshal(b, &st) != nil {
		return 0, false
	}
	var n int64
	for _, p := range st.Partitions {
		n += p.Records
	}
	return n, true
}

// writeOrders writes "orders" (3 partitions, n records each, value "order
// <offset>", a header on every other) and a group's offsets.
func writeOrders(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := t.Context()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, "orders", 3, nil)
	require.NoError(t, err)
	cfg := producer.DefaultConfig()
	cfg.CompressionType = record.LZ4
	p, err := producer.New(d, cfg)
	require.NoError(t, err)
	for part := range int32(3) {
		for i := range n {
			r := &producer.Record{Topic: "orders", Partition: &part, Key: fmt.Appendf(nil, "customer-%d", i%100),
				Value: fmt.Appendf(nil, "order %d", i)}
			if i%2 == 0 {
				r.Headers = []record.Header{{Key: []byte("source"), Value: []byte("shop")}}
			}
			_, err := p.Send(ctx, r, nil)
			require.NoError(t, err)
		}
	}
	require.NoError(t, p.Close(ctx))
	_, err = consumer.ResetOffsets(ctx, d, "billing", []consumer.TopicPartition{{Topic: "orders", Partition: 1}}, consumer.ResetToOffset(int64(n/3)))
	require.NoError(t, err)
	require.NoError(t, d.Close())
}

// TestCommandLine checks the command's flags: which side is the
// directory, the exit statuses, a dry run, -since.
func TestCommandLine(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()[0]
	dir := filepath.Join(t.TempDir(), "kafkalite")
	writeOrders(t, dir, 10)

	tests := []struct {
		name   string
		args   []string
		status int
		out    string
	}{
		{name: "no sides", args: []string{"-from", dir}, status: 2, out: "-from and -to are required"},
		{name: "two directories", args: []string{"-from", dir, "-to", dir}, status: 2, out: "must be a directory"},
		{name: "topics required from a cluster", args: []string{"-from", brokers, "-to", dir + "-copy"}, status: 2,
			out: "name the topics"},
		{name: "bad since", args: []string{"-from", brokers, "-to", dir + "-copy", "-topics", "orders", "-since", "yesterday"},
			status: 2, out: "neither an RFC 3339 time nor a duration"},
		{name: "dry run", args: []string{"-from", dir, "-to", brokers, "-dry-run"}, status: 0,
			out: "topic orders: 3 partitions, to create, 30 offsets to copy"},
		{name: "verify before any copy", args: []string{"-from", dir, "-to", brokers, "-verify"}, status: 1,
			out: "no migration state"},
		{name: "copy", args: []string{"-from", dir, "-to", brokers, "-progress", "log"}, status: 0,
			out: "to-cluster: 30 records"},
		{name: "verify", args: []string{"-from", dir, "-to", brokers, "-verify"}, status: 0, out: "both sides agree"},
		{name: "dry run back", args: []string{"-from", brokers, "-to", dir + "-dry", "-topics", "orders", "-dry-run"}, status: 0,
			out: "topic orders: 3 partitions, to create, 30 offsets to copy"},
		{name: "back, since an hour ago", args: []string{"-from", brokers, "-to", dir + "-copy", "-topics", "orders", "-since", "1h"},
			status: 0, out: "from-cluster: 30 records"},
		{name: "verify back", args: []string{"-from", brokers, "-to", dir + "-copy", "-topics", "orders", "-verify"},
			status: 0, out: "both sides agree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := command(t.Context(), tt.args...).CombinedOutput()
			status := 0
			if ee, ok := err.(*exec.ExitError); ok {
				status = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.status, status, "%s", out)
			require.Contains(t, string(out), tt.out)
		})
	}
	require.NoDirExists(t, dir+"-dry", "a dry run creates nothing")
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	got, err := parseSince("2026-12-01T00:00:00Z", now)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), got)
	got, err = parseSince("90m", now)
	require.NoError(t, err)
	require.Equal(t, now.Add(-90*time.Minute), got)
	_, err = parseSince("-5m", now)
	require.Error(t, err)
}
