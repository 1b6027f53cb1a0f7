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

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
)

// Environment variables of the harness. The child ones are set by the
// parent; the others are for people running long campaigns.
const (
	childDirEnv    = "KAFKALITE_CRASHTEST_CHILD_DIR"    // child mode: the directory
	childGenEnv    = "KAFKALITE_CRASHTEST_CHILD_GEN"    // child mode: the generation
	childCodecsEnv = "KAFKALITE_CRASHTEST_CHILD_CODECS" // child mode: the producers' codecs (Codecs.String)
	killsEnv       = "KAFKALITE_CRASH_KILLS"            // kills to make (default 20)
	seedEnv        = "KAFKALITE_CRASH_SEED"             // replays a run's kill timings and codecs
	keepEnv        = "KAFKALITE_CRASH_KEEP"             // where to copy the directory of a failed check
	traceEnv       = "KAFKALITE_CRASH_TRACE"            // with -v: time each kill; "2": log the child's lines but acks
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		gen, _ := strconv.Atoi(os.Getenv(childGenEnv))
		codecs, err := ParseCodecs(os.Getenv(childCodecsEnv))
		if err == nil {
			// The parent kills the child long before this; the deadline
			// only keeps an orphan from running forever.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			err = Run(ctx, dir, gen, codecs, os.Stdout)
			cancel()
		}
		if err != nil {
			fmt.Printf("error %v\n", bytes.ReplaceAll([]byte(err.Error()), []byte("\n"), []byte("; ")))
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// chooseCodecs returns four different codecs for the four producers of a
// generation, a random choice and order from rng: over a few generations
// every codec meets every producer (acks=all, acks=1, transactional,
// compacted).
func chooseCodecs(rng *rand.Rand) Codecs {
	p := rng.Perm(len(matrix.AllCodecs))
	return Codecs{All: matrix.AllCodecs[p[0]], One: matrix.AllCodecs[p[1]], Txn: matrix.AllCodecs[p[2]], Compact: matrix.AllCodecs[p[3]]}
}

func TestCodecsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		c := chooseCodecs(rng)
		got, err := ParseCodecs(c.String())
		require.NoError(t, err)
		require.Equal(t, c, got)
	}
	got, err := ParseCodecs("all=lz4,one=none,txn=zstd,cmp=gzip")
	require.NoError(t, err)
	require.Equal(t, Codecs{All: record.LZ4, One: record.None, Txn: record.Zstd, Compact: record.Gzip}, got)
	for _, bad := range []string{"", "all=lz4", "all=lz4,one=none,txn=zstd,cmp=brotli", "all=lz4,one=none,txn=zstd,cmp=gzip,all=none", "all=lz4,one=none,txn=zstd,nope=gzip", "all:lz4,one=none,txn=zstd,cmp=gzip"} {
		_, err := ParseCodecs(bad)
		require.Error(t, err, "%q", bad)
	}
}

// TestKill9 runs the workload in child processes on one directory, kills
// each with SIGKILL at a random moment (one kill in ten early, while the
// child opens the directory and starts; the others up to 400 ms after the
// first acknowledged record) and checks the directory after every kill
// with a Checker. Each child's producers compress with codecs chosen from
// the seed (chooseCodecs), so that a run covers every codec on every kind
// of producer, and the checker finds each record in a batch of its
// producer's codec. 20 kills by default, KAFKALITE_CRASH_KILLS for long
// runs; KAFKALITE_CRASH_SEED replays the kill timings and the codecs.
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
	codecRng := rand.New(rand.NewPCG(seed, 10)) // a stream of its own: the kill timings of a seed do not depend on it
	dir := t.TempDir()
	c := NewChecker()
	start := time.Now()
	chosen := map[string]map[record.Compression]int{} // topic -> codec -> generations
	for gen := range kills {
		codecs := chooseCodecs(codecRng)
		for _, topic := range []string{TopicAll, TopicOne, TopicTxn, TopicCompact} {
			codec, _ := codecs.For(topic)
			if chosen[topic] == nil {
				chosen[topic] = map[record.Compression]int{}
			}
			chosen[topic][codec]++
		}
		c.Generation(gen, codecs)
		t0 := time.Now()
		lines := runAndKill(t, dir, gen, codecs, rng, c)
		t1 := time.Now()
		if err := c.Check(context.Background(), dir); err != nil {
			if keep := os.Getenv(keepEnv); keep != "" {
				require.NoError(t, os.CopyFS(keep, os.DirFS(dir)), "keeping the directory")
				t.Logf("directory kept in %s", keep)
			}
			require.NoError(t, err, "after kill %d (%d lines from the child; codecs %v)", gen, lines, codecs)
		}
		if testing.Verbose() && os.Getenv(traceEnv) != "" {
			t.Logf("kill %d (%v): child %s (%d lines), check %s", gen, codecs, t1.Sub(t0).Round(time.Millisecond), lines, time.Since(t1).Round(time.Millisecond))
		}
		if (gen+1)%100 == 0 {
			t.Logf("%d kills, %s, %d acks, %d commits, %d offset commits", gen+1, time.Since(start).Round(time.Second), c.Acks, c.Commits, c.OffsetCommits)
		}
	}
	t.Logf("%d kills survived in %s: %d acknowledged records, %d committed transactions, %d offset commits observed; %d records read back in %d checks; compacted topic: %d acknowledged, %d removed by the cleaner",
		kills, time.Since(start).Round(time.Millisecond), c.Acks, c.Commits, c.OffsetCommits, c.RecordsRead, c.Checks, c.CompactAcks, c.CompactRemoved)
	t.Logf("codecs chosen, generations per topic: %v; workload records read back by batch codec: %v", chosen, c.CodecRecords)
	t.Logf("tiered storage: %d records read back from copies, at most %d copies per partition", c.RemoteRecords, c.RemoteSegments)
	t.Logf("share group: %d records acknowledged (accepted or rejected), %d released by the children; %d delivered to the checks (%d delivered before), %d share state records decoded",
		c.ShareDone, c.ShareReleased, c.ShareDrained, c.ShareRedelivered, c.ShareStates)
	require.Positive(t, c.RecordsRead, "the checks read records back")
	require.Positive(t, c.ShareDone, "the children's share consumers acknowledged records")
	require.Positive(t, c.RemoteRecords, "the checks read records back from copies in remote storage")
}

// runAndKill starts generation gen with its producers' codecs, kills it
// and feeds its output to c. It returns the number of lines the child
// wrote.
func runAndKill(t *testing.T, dir string, gen int, codecs Codecs, rng *rand.Rand, c *Checker) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, fmt.Sprintf("%s=%d", childGenEnv, gen), childCodecsEnv+"="+codecs.String())
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
	// (up to 400 ms) after the first acknowledged record of the topics
	// but TopicShare.
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
			// TopicShare's producer acknowledges long before the others:
			// its acks do not start the clock.
			if kill == nil && strings.HasPrefix(line, "ack ") && !strings.HasPrefix(line, "ack "+TopicShare+" ") {
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

// TestCheckerChecksCodecs writes records of generation 0 to TopicAll with
// lz4 and checks them with Checkers told different codecs: only the one
// told lz4 finds nothing wrong.
func TestCheckerChecksCodecs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := log.Open(ctx, dir, DirConfig(dir))
	require.NoError(t, err)
	_, err = d.CreateTopic(ctx, TopicAll, topicPartitions[TopicAll], topicProps)
	require.NoError(t, err)
	writeTen(t, d, TopicAll)
	require.NoError(t, d.Close())

	lz4 := Codecs{All: record.LZ4, One: record.None, Txn: record.Gzip, Compact: record.Zstd}
	for _, tc := range []struct {
		name   string
		codecs *Codecs // nil: Generation not called
		want   string  // in the error; "" for none
	}{
		{"the codec used", &lz4, ""},
		{"another codec", &Codecs{All: record.Gzip, One: record.LZ4, Txn: record.None, Compact: record.Zstd}, "in a lz4 batch, its producer's codec is gzip"},
		{"no codecs given", nil, "whose codecs were never given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker()
			if tc.codecs != nil {
				c.Generation(0, *tc.codecs)
			}
			err := c.Check(ctx, dir)
			if tc.want == "" {
				require.NoError(t, err)
				require.Equal(t, map[record.Compression]int{record.LZ4: 10}, c.CodecRecords)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// writeTen writes the records "g0:<topic>:0" to "g0:<topic>:9" to topic,
// compressed with lz4, as a producer of generation 0 does.
func writeTen(t *testing.T, d *log.Dir, topic string) {
	t.Helper()
	ctx := context.Background()
	pcfg := producer.DefaultConfig()
	pcfg.CompressionType = record.LZ4
	p, err := producer.New(d, pcfg)
	require.NoError(t, err)
	for seq := range 10 {
		_, err := p.Send(ctx, &producer.Record{Topic: topic, Value: fmt.Appendf(nil, "g0:%s:%d", topic, seq)}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Close(ctx))
}
