package producer

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// The crash test re-executes the test binary as a child that produces with
// acks=all and prints every acknowledged record; the parent kills it with
// SIGKILL at a random moment, reopens the directory and checks that every
// acknowledged record is there exactly once, in order, and that recovery
// succeeded. The child mode is selected by this environment variable.
const crashChildEnv = "KAFKALITE_CRASH_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild produces sequence numbers as values, keyed to 3 partitions,
// with small segments so that it rolls, and prints "ack <partition>
// <offset> <seq>" for each acknowledged record until it is killed.
func crashChild(dir string) {
	ctx := context.Background()
	d, err := log.Open(ctx, dir, log.DefaultConfig())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	if _, err := d.DescribeTopic("crash"); err != nil {
		if _, err := d.CreateTopic(ctx, "crash", 3, map[string]string{"segment.bytes": "20000"}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
	}
	cfg := DefaultConfig()
	cfg.Acks = AcksAll
	cfg.Linger = time.Millisecond
	p, err := New(d, cfg)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	acks := make(chan string, 1024)
	go func() {
		for line := range acks {
			out.WriteString(line)
			out.Flush()
		}
	}()
	start, _ := strconv.Atoi(os.Getenv("KAFKALITE_CRASH_START"))
	for seq := start; ; seq++ {
		key := fmt.Appendf(nil, "k%d", seq%7)
		value := fmt.Appendf(nil, "%d", seq)
		_, err := p.Send(ctx, &Record{Topic: "crash", Key: key, Value: value}, func(md RecordMetadata, err error) {
			if err == nil {
				acks <- fmt.Sprintf("ack %d %d %s\n", md.Partition, md.Offset, value)
			}
		})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
	}
}

// TestCrashKill9 kills producing children and checks the directory after
// each kill. 20 kills by default; KAFKALITE_CRASH_KILLS raises it for long
// runs.
func TestCrashKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	kills := 20
	if n, err := strconv.Atoi(os.Getenv("KAFKALITE_CRASH_KILLS")); err == nil {
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("KAFKALITE_CRASH_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (KAFKALITE_CRASH_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	ackedValue := map[string]string{} // "partition offset" -> the value acknowledged there
	next := 0
	for kill := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, fmt.Sprintf("KAFKALITE_CRASH_START=%d", next))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(stdout)
		want := 50 + rng.IntN(400) // acknowledgements to wait for before the kill
		got := 0
		for got < want && sc.Scan() {
			f := strings.Fields(sc.Text())
			require.Equal(t, "ack", f[0], "child said %q", sc.Text())
			ackedValue[f[1]+" "+f[2]] = f[3]
			got++
		}
		// Kill at a random moment after that, while it keeps producing.
		time.Sleep(time.Duration(rng.IntN(5)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		for sc.Scan() { // acknowledgements printed before the kill
			f := strings.Fields(sc.Text())
			if len(f) == 4 && f[0] == "ack" {
				ackedValue[f[1]+" "+f[2]] = f[3]
			}
		}
		_ = cmd.Wait()
		require.Positive(t, got, "kill %d: the child acknowledged nothing", kill)

		// Reopen: recovery must succeed and every acknowledged record be
		// there, at its offset, with its value; offsets are gapless.
		d, err := log.Open(context.Background(), dir, log.DefaultConfig())
		require.NoError(t, err, "kill %d", kill)
		require.False(t, d.Recovery().Clean, "a killed process leaves no clean-shutdown marker")
		maxSeq := 0
		for p := int32(0); p < 3; p++ {
			l, err := d.Partition("crash", p)
			require.NoError(t, err)
			expect := int64(0)
			for off := int64(0); off < l.LogEndOffset(); {
				n, err := l.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
					require.Equal(t, expect, r.Offset, "partition %d: offsets are gapless", p)
					expect++
					if v, ok := ackedValue[fmt.Sprintf("%d %d", p, r.Offset)]; ok {
						require.Equal(t, v, string(r.Value), "partition %d offset %d", p, r.Offset)
					}
					seq, err := strconv.Atoi(string(r.Value))
					require.NoError(t, err)
					maxSeq = max(maxSeq, seq)
					return nil
				})
				require.NoError(t, err)
				off = n
			}
			for k := range ackedValue {
				var kp int32
				var ko int64
				_, err := fmt.Sscanf(k, "%d %d", &kp, &ko)
				require.NoError(t, err)
				if kp == p {
					require.Less(t, ko, l.LogEndOffset(), "kill %d: acknowledged %s-%d@%d is missing", kill, "crash", p, ko)
				}
			}
		}
		require.NoError(t, d.Close())
		next = maxSeq + 1
	}
	t.Logf("%d kills survived, %d acknowledged records checked", kills, len(ackedValue))
}
