package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// The child mode of the test binary, set by the parent in the environment.
const (
	// childEnv: run the processor on the directory it names, printing a
	// line per stage of every transaction ("begin 3 500", "sent 3 500",
	// "offsets 3 500", "commit 3 500": stage, transaction, records), then
	// "done", or "error ...".
	childEnv = "KAFKALITE_EXACTLYONCE_CHILD_DIR"
	// pauseEnv ("sent 2", "offsets 1"): at that stage of that transaction
	// the child flushes the transaction's records into the log, prints
	// "paused <stage> <txn>" and waits, its transaction open, to be killed.
	pauseEnv = "KAFKALITE_EXACTLYONCE_CHILD_PAUSE"
	// compressionEnv is the child's compression.type ("lz4").
	compressionEnv = "KAFKALITE_EXACTLYONCE_CHILD_COMPRESSION"
	// seedEnv replays a run's kill plan and codecs, as in internal/testkit/crashtest.
	seedEnv = "KAFKALITE_CRASH_SEED"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(child(dir, os.Getenv(pauseEnv), os.Getenv(compressionEnv)))
	}
	os.Exit(m.Run())
}

// child runs the processor for the parent test, reporting every stage on
// stdout; pause is pauseEnv's value, compression compressionEnv's.
func child(dir, pause, compression string) int {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	ctx := context.Background()
	cfg := DefaultConfig()
	var err error
	if cfg.CompressionType, err = record.ParseCompression(compression); err != nil {
		fmt.Fprintln(out, "error", err)
		return 1
	}
	_, err = process(ctx, dir, cfg, func(s step) {
		fmt.Fprintln(out, s.stage, s.txn, s.records)
		if pause == fmt.Sprintf("%s %d", s.stage, s.txn) {
			if err := s.producer.Flush(ctx); err != nil {
				fmt.Fprintln(out, "error flushing before the pause:", err)
				out.Flush()
				os.Exit(1)
			}
			fmt.Fprintln(out, "paused", s.stage, s.txn)
			out.Flush()
			_, _ = io.Copy(io.Discard, os.Stdin) // the parent never writes: this waits for SIGKILL
			os.Exit(3)                           // the parent is gone
		}
		out.Flush()
	})
	if err != nil {
		fmt.Fprintln(out, "error", err)
		return 1
	}
	fmt.Fprintln(out, "done")
	return 0
}

// killKind says how the parent chooses the moment of a kill.
type killKind int

const (
	// killPaused: the child stops inside a transaction whose records are in
	// the log (pauseEnv), and is killed there. Inside a transaction by
	// construction: the next run must abort it.
	killPaused killKind = iota
	// killOnLine: killed at once when the child reports a stage (begin,
	// sent, offsets) of a transaction: the child runs on until the
	// signal lands, in the sends, SendOffsetsToTransaction or the commit.
	killOnLine
	// killAtRandom: killed a random delay after some commits: during a
	// poll, a transaction, a commit or the start.
	killAtRandom
)

func (k killKind) String() string {
	return [...]string{"paused", "on a line", "at random"}[k]
}

// kill is one planned kill.
type kill struct {
	kind    killKind
	commits int           // killOnLine, killAtRandom: commits to let through first
	stage   stage         // killPaused: sent or offsetsIn; killOnLine: begun, sent or offsetsIn
	txn     int           // killPaused: the transaction of the run, from 1
	delay   time.Duration // killAtRandom
}

func (k kill) String() string {
	switch k.kind {
	case killPaused:
		return fmt.Sprintf("paused at %s of transaction %d", k.stage, k.txn)
	case killOnLine:
		return fmt.Sprintf("on the %q line after %d commits", k.stage, k.commits)
	}
	return fmt.Sprintf("%v after %d commits", k.delay, k.commits)
}

// planKills returns n kills, a third of each kind, in random order but
// for the first, which is always paused: every run of the test kills at
// least one child inside a transaction, whatever the timing. Each kill lets
// at most three transactions commit, so that all kills happen before the
// input (about 40 transactions) is consumed.
func planKills(rng *rand.Rand, n int) []kill {
	kinds := make([]killKind, n)
	for i := range kinds {
		kinds[i] = killKind(i % 3)
	}
	rng.Shuffle(n-1, func(i, j int) { kinds[i+1], kinds[j+1] = kinds[j+1], kinds[i+1] })
	kills := make([]kill, n)
	for i, kind := range kinds {
		k := kill{kind: kind}
		switch kind {
		case killPaused:
			k.stage, k.txn = []stage{sent, offsetsIn}[rng.IntN(2)], 1+rng.IntN(3)
		case killOnLine:
			k.stage, k.commits = []stage{begun, sent, offsetsIn}[rng.IntN(3)], rng.IntN(3)
		case killAtRandom:
			k.commits, k.delay = rng.IntN(4), time.Duration(rng.IntN(20_000))*time.Microsecond
		}
		kills[i] = k
	}
	return kills
}

// TestExactlyOnce runs the loop in process with each codec, in two rounds
// with more input in between (the second run resumes at the offsets the
// first committed): the output, read with read_committed, holds every
// input record transformed once, in order, and every batch of both topics
// is compressed with the codec.
func TestExactlyOnce(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		ctx := context.Background()
		dir := t.TempDir()
		cfg := DefaultConfig()
		cfg.CompressionType = codec
		for _, records := range []int{1000, 500} {
			require.NoError(t, seedInput(ctx, dir, records, cfg))
			n, err := process(ctx, dir, cfg, nil)
			require.NoError(t, err)
			require.Equal(t, records, n, "the round's input, processed once")
		}
		checkOutput(t, dir, 1500)
		for _, topic := range []string{inputTopic, outputTopic} {
			require.Equal(t, []record.Compression{codec}, slices.Sorted(maps.Keys(batchCodecs(t, dir, topic))), "%s: the codecs of its data batches", topic)
		}
		require.Zero(t, abortedTxns(t, dir), "no transaction aborted")
	})
}

// TestExactlyOnceAcrossKills seeds the input, then runs the processor as a
// child process and kills it with SIGKILL, restarting it each time, until a
// run finishes. A third of the kills stop the child inside a transaction
// whose records are in the log (the first kill always does), a third land
// as soon as the child reports a stage of a transaction, a third at random
// moments. Each child run writes with a codec chosen from the seed, the
// seeded input with another. Each killed child must have died of the
// SIGKILL. The output, read with read_committed, must hold every input
// record transformed exactly once, in the input's order per partition; the
// output partitions must hold an aborted transaction for each kill inside
// one, and data batches of the codec of every run that committed, of no
// other. The seed is logged; KAFKALITE_CRASH_SEED replays the kill plan
// and the codecs.
func TestExactlyOnceAcrossKills(t *testing.T) {
	const records, kills = 20000, 12
	dir := t.TempDir()
	ctx := context.Background()

	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv(seedEnv), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (%s replays it)", seed, seedEnv)
	plan := planKills(rand.New(rand.NewPCG(seed, 7)), kills)
	codecs := rand.New(rand.NewPCG(seed, 8)) // a stream of its own: the kill plan of a seed does not depend on it
	nextCodec := func() record.Compression { return matrix.AllCodecs[codecs.IntN(len(matrix.AllCodecs))] }
	seedCfg := DefaultConfig()
	seedCfg.CompressionType = nextCodec()
	t.Logf("input written with %v", seedCfg.CompressionType)
	require.NoError(t, seedInput(ctx, dir, records, seedCfg))

	killed, inTxn, paused := 0, 0, 0 // inTxn: paused included
	used, committedWith := map[record.Compression]bool{}, map[record.Compression]bool{}
	for run := 0; ; run++ {
		require.Less(t, run, 100, "the processor never finished")
		codec := nextCodec()
		used[codec] = true
		if killed == len(plan) {
			c := startChild(t, dir, "", codec)
			for line := range c.lines {
				c.observe(t, line)
			}
			require.NoError(t, c.cmd.Wait(), "stderr: %s", c.stderr)
			require.True(t, c.done, "the last run ends with done")
			t.Logf("last run (%v): %d commits", codec, c.commits)
			if c.commits > 0 {
				committedWith[codec] = true
			}
			break
		}
		k := plan[killed]
		pause := ""
		if k.kind == killPaused {
			pause = fmt.Sprintf("%s %d", k.stage, k.txn)
		}
		c := startChild(t, dir, pause, codec)
		finished := !c.killAt(t, k)
		if c.commits > 0 {
			committedWith[codec] = true
		}
		if finished {
			t.Logf("kill %d (%s, %v): the child finished first", killed, k, codec)
			continue
		}
		killed++
		where := "between transactions"
		switch {
		case k.kind == killPaused:
			require.True(t, c.paused && c.open == k.txn, "the child paused inside transaction %d", k.txn)
			paused++
			inTxn++
			where = fmt.Sprintf("inside transaction %d, paused after %q with its records in the log", c.open, c.last)
		case c.open != 0:
			inTxn++
			where = fmt.Sprintf("inside transaction %d (begun, not committed, as the child reported), after its %q line", c.open, c.last)
		}
		t.Logf("kill %d (%s, %v): %d commits, landed %s", killed, k, codec, c.commits, where)
	}
	aborted := abortedTxns(t, dir)
	found := batchCodecs(t, dir, outputTopic)
	t.Logf("%d kills: %d inside a transaction as the child reported, %d of them paused with the records in the log; %d aborted transactions with records in %s; its data batches by codec: %v",
		killed, inTxn, paused, aborted, outputTopic, found)
	require.GreaterOrEqual(t, paused, 1, "a kill inside a transaction, by construction")
	require.GreaterOrEqual(t, aborted, paused, "each paused transaction's records were aborted by the next run")
	checkOutput(t, dir, records)
	require.Equal(t, []record.Compression{seedCfg.CompressionType}, slices.Sorted(maps.Keys(batchCodecs(t, dir, inputTopic))), "the input's codec")
	for codec := range committedWith {
		require.Contains(t, found, codec, "a run with %v committed: the output has its batches", codec)
	}
	for codec := range found {
		require.True(t, used[codec], "the output has %v batches, a codec no run used", codec)
	}
}

// childRun is a running child and what its lines said.
type childRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser // never written: a paused child waits on it
	lines  <-chan string
	stderr *lockedBuffer

	open    int    // the transaction begun and not committed, or 0
	last    string // the stage of the last stage line
	commits int
	paused  bool
	done    bool
}

// startChild starts the processor as a child process on dir, writing with
// codec; pause is pauseEnv's value ("" for none).
func startChild(t *testing.T, dir, pause string, codec record.Compression) *childRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, pauseEnv+"="+pause, compressionEnv+"="+codec.String())
	c := &childRun{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	var err error
	c.stdin, err = cmd.StdinPipe() // closed by Wait
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // if a check fails before Wait
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	c.lines = lines
	return c
}

// observe follows the child's transactions through one of its lines, and
// fails the test on an error line.
func (c *childRun) observe(t *testing.T, line string) {
	t.Helper()
	require.False(t, strings.HasPrefix(line, "error"), "child: %s; stderr: %s", line, c.stderr)
	f := strings.Fields(line)
	switch {
	case line == "done":
		c.done = true
	case len(f) == 3 && f[0] == "paused":
		c.paused = true
	case len(f) == 3:
		c.last = f[0]
		switch f[0] {
		case begun.String():
			c.open, _ = strconv.Atoi(f[1])
		case committed.String():
			c.open = 0
			c.commits++
		}
	default:
		require.Fail(t, "unexpected line from the child", "%q", line)
	}
}

// killAt kills the child at the moment k chooses, reads the rest of its
// output and waits for it. It returns false if the child finished (printed
// "done") first; otherwise it checks that the child died of SIGKILL.
func (c *childRun) killAt(t *testing.T, k kill) bool {
	t.Helper()
	var timer <-chan time.Time
	arm := func() {
		if k.kind == killAtRandom && timer == nil && c.commits >= k.commits {
			timer = time.After(k.delay)
		}
	}
	arm()
	for fire := false; !fire; {
		select {
		case line, ok := <-c.lines:
			if !ok {
				require.NoError(t, c.cmd.Wait(), "the child exited before its kill; stderr: %s", c.stderr)
				require.True(t, c.done, "the child exited without done; stderr: %s", c.stderr)
				return false
			}
			c.observe(t, line)
			switch k.kind {
			case killPaused:
				fire = c.paused
			case killOnLine:
				fire = c.commits >= k.commits && strings.HasPrefix(line, k.stage.String()+" ")
			case killAtRandom:
				arm()
			}
		case <-timer:
			fire = true
		}
	}
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	for line := range c.lines { // what the child wrote before the signal landed
		c.observe(t, line)
	}
	err := c.cmd.Wait()
	if c.done {
		return false // finished just before the signal: exit status 0, or killed while exiting
	}
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL,
		"the child must die of the SIGKILL, not %v (%v); stderr: %s", c.cmd.ProcessState, err, c.stderr)
	return true
}

// lockedBuffer is a child's stderr, read while the child writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// abortedTxns returns the number of aborted transactions with records in
// the output partitions (their .txnindex entries), summed over partitions.
func abortedTxns(t *testing.T, dir string) int {
	t.Helper()
	d, err := log.Open(context.Background(), dir, dirConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	n := 0
	for p := range int32(partitions) {
		l, err := d.Partition(outputTopic, p)
		require.NoError(t, err)
		txns, err := l.AbortedTransactions(l.LogStartOffset(), l.HighWatermark())
		require.NoError(t, err)
		n += len(txns)
	}
	return n
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

// batchCodecs counts the data batches of topic in dir by codec (control
// batches, uncompressed by Kafka's rules, are not counted).
func batchCodecs(t *testing.T, dir, topic string) map[record.Compression]int {
	t.Helper()
	d, err := log.Open(context.Background(), dir, dirConfig())
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	return logtest.BatchCodecs(t, d, topic)
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
