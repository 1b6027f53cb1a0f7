package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// childEnv selects the child mode of the test binary: run the processor on
// the directory it names, printing a line per committed transaction.
const childEnv = "KAFKALITE_EXACTLYONCE_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		out := bufio.NewWriter(os.Stdout)
		_, err := process(context.Background(), dir, func(n int) {
			fmt.Fprintln(out, "commit", n)
			out.Flush()
		})
		if err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			os.Exit(1)
		}
		fmt.Fprintln(out, "done")
		out.Flush()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestExactlyOnceAcrossKills seeds the input, then runs the processor as a
// child process and kills it with SIGKILL at random moments — between
// transactions, inside them, during commits — restarting it each time,
// until a run finishes. The output, read with read_committed, must hold
// every input record transformed exactly once, in the input's order per
// partition.
func TestExactlyOnceAcrossKills(t *testing.T) {
	const records, kills = 20000, 12
	dir := t.TempDir()
	ctx := context.Background()
	require.NoError(t, seedInput(ctx, dir, records))

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	killed := 0
	for run := 0; ; run++ {
		require.Less(t, run, 100, "the processor never finished")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		if killed < kills {
			// Kill after a random number of commits, plus a random delay
			// so that some kills land inside a transaction.
			want := rng.IntN(4)
			finished := false
			for commits := 0; commits < want; {
				line, ok := <-lines
				if !ok || line == "done" {
					finished = true
					break
				}
				require.False(t, strings.HasPrefix(line, "error"), line)
				commits++
			}
			if !finished {
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // where in the transaction the kill lands
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				killed++
			}
			for range lines {
			}
			_ = cmd.Wait()
			continue
		}
		var last string
		for line := range lines {
			require.False(t, strings.HasPrefix(line, "error"), line)
			last = line
		}
		require.NoError(t, cmd.Wait())
		require.Equal(t, "done", last)
		break
	}
	t.Logf("%d kills", killed)
	checkOutput(t, dir, records)
}

// checkOutput compares the output, read with read_committed, with the
// input: per partition, the same records in the same order, transformed.
func checkOutput(t *testing.T, dir string, records int) {
	t.Helper()
	d, err := log.Open(context.Background(), dir, dirConfig())
	require.NoError(t, err)
	defer d.Close()
	total := 0
	for p := range int32(partitions) {
		in := readCommitted(t, d, inputTopic, p)
		out := readCommitted(t, d, outputTopic, p)
		want := make([]string, len(in))
		for i, v := range in {
			want[i] = string(transform([]byte(v)))
		}
		require.Equal(t, want, out, "partition %d: every input record exactly once, in order", p)
		total += len(out)
	}
	require.Equal(t, records, total)
}

func readCommitted(t *testing.T, d *log.Dir, topic string, p int32) []string {
	t.Helper()
	l, err := d.Partition(topic, p)
	require.NoError(t, err)
	require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "%s-%d: no transaction left open", topic, p)
	var out []string
	for off := l.LogStartOffset(); ; {
		next, err := l.ReadCommittedRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			out = append(out, string(r.Value))
			return nil
		})
		require.NoError(t, err)
		if next == off {
			return out
		}
		off = next
	}
}
