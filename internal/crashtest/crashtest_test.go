package crashtest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Environment variables of the harness. The child ones are set by the
// parent; the others are for people running long campaigns.
const (
	childDirEnv = "KAFKALITE_CRASHTEST_CHILD_DIR" // child mode: the directory
	childGenEnv = "KAFKALITE_CRASHTEST_CHILD_GEN" // child mode: the generation
	killsEnv    = "KAFKALITE_CRASH_KILLS"         // kills to make (default 20)
	seedEnv     = "KAFKALITE_CRASH_SEED"          // replays a run's kill timings
	keepEnv     = "KAFKALITE_CRASH_KEEP"          // where to copy the directory of a failed check
	traceEnv    = "KAFKALITE_CRASH_TRACE"         // with -v: time each kill; "2": log the child's lines but acks
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		gen, _ := strconv.Atoi(os.Getenv(childGenEnv))
		// The parent kills the child long before this; the deadline only
		// keeps an orphan from running forever.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := Run(ctx, dir, gen, os.Stdout)
		cancel()
		if err != nil {
			fmt.Printf("error %v\n", bytes.ReplaceAll([]byte(err.Error()), []byte("\n"), []byte("; ")))
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKill9 runs the workload in child processes on one directory, kills
// each with SIGKILL at a random moment (one kill in ten early, while the
// child opens the directory and starts; the others up to 400 ms after the
// first acknowledged record) and checks the directory
// after every kill with a Checker. 20 kills by default, KAFKALITE_CRASH_KILLS
// for long runs; KAFKALITE_CRASH_SEED replays the kill timings.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	kills := 20
	if n, err := strconv.Atoi(os.Getenv(killsEnv)); err == nil && n > 0 {
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv(seedEnv), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (%s replays it)", seed, seedEnv)
	rng := rand.New(rand.NewPCG(seed, 9))
	dir := t.TempDir()
	c := NewChecker()
	start := time.Now()
	for gen := range kills {
		t0 := time.Now()
		lines := runAndKill(t, dir, gen, rng, c)
		t1 := time.Now()
		if err := c.Check(context.Background(), dir); err != nil {
			if keep := os.Getenv(keepEnv); keep != "" {
				require.NoError(t, os.CopyFS(keep, os.DirFS(dir)), "keeping the directory")
				t.Logf("directory kept in %s", keep)
			}
			require.NoError(t, err, "after kill %d (%d lines from the child)", gen, lines)
		}
		if testing.Verbose() && os.Getenv(traceEnv) != "" {
			t.Logf("kill %d: child %s (%d lines), check %s", gen, t1.Sub(t0).Round(time.Millisecond), lines, time.Since(t1).Round(time.Millisecond))
		}
		if (gen+1)%100 == 0 {
			t.Logf("%d kills, %s, %d acks, %d commits, %d offset commits", gen+1, time.Since(start).Round(time.Second), c.Acks, c.Commits, c.OffsetCommits)
		}
	}
	t.Logf("%d kills survived in %s: %d acknowledged records, %d committed transactions, %d offset commits observed; %d records read back in %d checks; compacted topic: %d acknowledged, %d removed by the cleaner",
		kills, time.Since(start).Round(time.Millisecond), c.Acks, c.Commits, c.OffsetCommits, c.RecordsRead, c.Checks, c.CompactAcks, c.CompactRemoved)
}

// runAndKill starts generation gen, kills it and feeds its output to c. It
// returns the number of lines the child wrote.
func runAndKill(t *testing.T, dir string, gen int, rng *rand.Rand, c *Checker) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, fmt.Sprintf("%s=%d", childGenEnv, gen))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // also when a check below fails
	out := make(chan string, 256)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	n := 0
	observe := func(line string) {
		n++
		if os.Getenv(traceEnv) == "2" && !strings.HasPrefix(line, "ack") {
			t.Log(line)
		}
		require.NoError(t, c.Observe(line), "generation %d; stderr: %s", gen, stderr.String())
	}
	// One kill in ten is early: during Open, topic creation,
	// InitTransactions, the first joins. The others come a random moment
	// (up to 400 ms) after the first acknowledged record.
	var delay time.Duration
	early := rng.IntN(10) == 0
	if early {
		delay = time.Duration(rng.IntN(60)) * time.Millisecond
	} else {
		delay = time.Duration(rng.IntN(400_000)) * time.Microsecond
	}
	var kill <-chan time.Time
	if early {
		kill = time.After(delay)
	}
	timeout := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case line, ok := <-out:
			require.True(t, ok, "generation %d exited after %d lines; stderr: %s", gen, n, stderr.String())
			observe(line)
			if kill == nil && strings.HasPrefix(line, "ack ") {
				kill = time.After(delay)
			}
		case <-kill:
			done = true
		case <-timeout:
			// A stall: the child's goroutines say where.
			_ = cmd.Process.Signal(syscall.SIGQUIT)
			for range out {
			}
			_ = cmd.Wait()
			require.Failf(t, "child stalled", "generation %d wrote %d lines in 30 s and no acknowledgement; stderr:\n%s", gen, n, stderr.String())
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL
	for line := range out {                // what it wrote before dying
		observe(line)
	}
	_ = cmd.Wait()
	return n
}

// lockedBuffer is a bytes.Buffer safe for the exec package's copying
// goroutine and the test reading it.
type lockedBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
