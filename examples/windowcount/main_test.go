package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/consumer"
	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// The child mode of the test binary, set by the parent in the environment.
const (
	// childEnv: run the processor on the directory it names, printing a
	// line per committed transaction.
	childEnv = "KAFKALITE_WINDOWCOUNT_CHILD_DIR"
	// compressionEnv is the child's compression.type ("lz4").
	compressionEnv = "KAFKALITE_WINDOWCOUNT_CHILD_COMPRESSION"
)

// childPollRecords keeps the child's transactions small, so that kills land
// in many different places.
const childPollRecords = 150

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(child(dir, os.Getenv(compressionEnv)))
	}
	os.Exit(m.Run())
}

// child runs the processor for the parent test, writing with compression
// (compressionEnv's value), and prints "commit <events>" after each
// transaction, then "done", or "error ...".
func child(dir, compression string) int {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.MaxPollRecords = childPollRecords
	codec, err := record.ParseCompression(compression)
	cfg.CompressionType = codec
	var d *log.Dir
	if err == nil {
		d, err = log.Open(ctx, dir, testDirConfig())
	}
	if err == nil {
		_, err = Run(ctx, d, cfg, func(n int) {
			fmt.Fprintln(out, "commit", n)
			out.Flush()
		})
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(out, "error", err)
		return 1
	}
	fmt.Fprintln(out, "done")
	return 0
}

// testDirConfig is dirConfig with 64 KiB indexes instead of Kafka's 10 MiB:
// recovery after a kill reads the indexes left at their preallocated size,
// which the race detector makes slow.
func testDirConfig() log.Config {
	cfg := dirConfig()
	cfg.DefaultTopic.SegmentIndexBytes = 64 << 10
	return cfg
}

func TestTask(t *testing.T) {
	cfg := Windows{Size: 10, Lateness: 3}
	type out struct {
		late    bool
		emitted []Result
	}
	ev := func(typ string, ts int64) Event { return Event{Type: typ, TS: ts} }
	res := func(typ string, start, count int64) Result {
		return Result{Type: typ, Start: start, End: start + 10, Count: count}
	}
	for _, tc := range []struct {
		name   string
		events []Event
		want   []out // per event
		open   map[WindowKey]int64
	}{
		{
			name:   "in order: a window closes when the watermark reaches its end",
			events: []Event{ev("a", 1), ev("a", 9), ev("a", 12), ev("a", 13)},
			want:   []out{{}, {}, {}, {emitted: []Result{res("a", 0, 2)}}},
			open:   map[WindowKey]int64{{10, "a"}: 2},
		},
		{
			name:   "out of order within the lateness is counted",
			events: []Event{ev("a", 12), ev("a", 9), ev("b", 7), ev("a", 15)},
			want:   []out{{}, {}, {}, {emitted: []Result{res("a", 0, 1), res("b", 0, 1)}}},
			open:   map[WindowKey]int64{{10, "a"}: 2},
		},
		{
			name:   "an event for an emitted window is late and changes nothing",
			events: []Event{ev("a", 5), ev("a", 14), ev("a", 9), ev("b", 2), ev("a", 10)},
			want:   []out{{}, {emitted: []Result{res("a", 0, 1)}}, {late: true}, {late: true}, {}},
			open:   map[WindowKey]int64{{10, "a"}: 2},
		},
		{
			name:   "a late event for a window never opened is late too",
			events: []Event{ev("a", 25), ev("b", 1)},
			want:   []out{{}, {late: true}},
			open:   map[WindowKey]int64{{20, "a"}: 1},
		},
		{
			name:   "one event can close several windows, in order of end then type",
			events: []Event{ev("b", 1), ev("a", 2), ev("a", 11), ev("c", 40)},
			want:   []out{{}, {}, {}, {emitted: []Result{res("a", 0, 1), res("b", 0, 1), res("a", 10, 1)}}},
			open:   map[WindowKey]int64{{40, "c"}: 1},
		},
		{
			name:   "negative times round down",
			events: []Event{ev("a", -1), ev("a", 13)},
			want:   []out{{}, {emitted: []Result{res("a", -10, 1)}}},
			open:   map[WindowKey]int64{{10, "a"}: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := newTask(cfg, noTime, nil)
			for i, e := range tc.events {
				late, emitted := tk.process(e)
				require.Equal(t, tc.want[i], out{late, emitted}, "event %d %+v", i, e)
			}
			require.Equal(t, tc.open, tk.counts)
		})
	}
}

func TestTaskChanges(t *testing.T) {
	tk := newTask(Windows{Size: 10, Lateness: 0}, noTime, nil)
	tk.process(Event{Type: "a", TS: 1})
	tk.process(Event{Type: "a", TS: 2})
	tk.process(Event{Type: "b", TS: 3})
	require.Equal(t, []change{{Key: WindowKey{0, "a"}, Count: 2}, {Key: WindowKey{0, "b"}, Count: 1}}, tk.takeChanges())
	require.Empty(t, tk.takeChanges())
	tk.process(Event{Type: "a", TS: 4})
	tk.process(Event{Type: "a", TS: 10}) // closes [0, 10)
	require.Equal(t, []change{
		{Key: WindowKey{0, "a"}, Deleted: true},
		{Key: WindowKey{0, "b"}, Deleted: true},
		{Key: WindowKey{10, "a"}, Count: 1},
	}, tk.takeChanges(), "a window counted and emitted since the last write is a removal")

	k, err := ParseWindowKey(WindowKey{-20, "x/y"}.String())
	require.NoError(t, err)
	require.Equal(t, WindowKey{-20, "x/y"}, k)
	for _, bad := range []string{"", "12", "x/a"} {
		_, err := ParseWindowKey(bad)
		require.Error(t, err, bad)
	}
	for _, ts := range []int64{noTime, 0, -5, 1767225600000} {
		got, err := parseStreamTime(formatStreamTime(ts))
		require.NoError(t, err)
		require.Equal(t, ts, got)
	}
}

// withCodec is DefaultConfig with compression codec and maxPollRecords.
func withCodec(codec record.Compression, maxPollRecords int) Config {
	cfg := DefaultConfig()
	cfg.CompressionType, cfg.MaxPollRecords = codec, maxPollRecords
	return cfg
}

// TestWindowCount runs the processor in process (memory filesystem), with
// each codec, in two runs with more events in between, and checks the
// outputs and that every batch of every topic is compressed with the codec.
func TestWindowCount(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		ctx := context.Background()
		cfg := withCodec(codec, 200)
		b := logtest.New(t)
		require.NoError(t, SeedEvents(ctx, b.Dir(), 1500, 1, codec))
		n, err := Run(ctx, b.Dir(), cfg, nil)
		require.NoError(t, err)
		require.Equal(t, 1500, n)
		b.Restart() // the second run restores its tasks from a reopened directory
		require.NoError(t, SeedEvents(ctx, b.Dir(), 1500, 2, codec))
		n, err = Run(ctx, b.Dir(), cfg, nil)
		require.NoError(t, err)
		require.Equal(t, 1500, n)
		checkOutputs(t, b.Dir())
		for _, topic := range []string{SourceTopic, ResultsTopic, LateTopic, ChangelogTopic} {
			require.Equal(t, []record.Compression{codec}, slices.Sorted(maps.Keys(logtest.BatchCodecs(t, b.Dir(), topic))), "%s: the codecs of its data batches", topic)
		}

		// A malformed input goes to the side topic, and the pipeline goes on.
		b.Produce(SourceTopic, logtest.InPartition(logtest.KV("click", "not json"), 0))
		_, err = Run(ctx, b.Dir(), cfg, nil)
		require.NoError(t, err)
		late := b.Expect(t, LateTopic).Partition(0).Records()
		require.Equal(t, "not json", string(late[len(late)-1].Value))
	})
}

// TestSeedingContinues seeds one directory in two rounds, as
// "go run ./examples/windowcount -dir DIR -seed 2000" then "-seed 1000"
// do, processing after each: the second round's event times continue
// after the first's latest, so it closes new windows and its events are
// late no more often than the first round's (about one in thirty by
// construction; they would all be late if it started over at the first
// round's start). Each codec.
func TestSeedingContinues(t *testing.T) {
	matrix.EachCodec(t, testSeedingContinues)
}

func testSeedingContinues(t *testing.T, codec record.Compression) {
	ctx := context.Background()
	dir := t.TempDir()
	type round struct {
		events              int
		lateMax, windowsMin int   // bounds of late and windows
		minTS, maxTS        int64 // of the round's events
		late, windows       int   // added by the round's Run
	}
	rounds := []round{
		{events: 2000, lateMax: 2000 / 10, windowsMin: 2000 * eventSpacing / int(DefaultWindows.Size) * 4},
		{events: 1000, lateMax: 1000 / 10, windowsMin: 1000 * eventSpacing / int(DefaultWindows.Size) * 4},
	}
	late, windows := 0, 0
	ends := make([]int64, Partitions) // the source's end offsets before the round
	for i := range rounds {
		r := &rounds[i]
		d, err := log.Open(ctx, dir, testDirConfig()) // each round opens the directory anew, as go run does
		require.NoError(t, err)
		require.NoError(t, SeedEvents(ctx, d, r.events, uint64(i+1), codec))
		n, err := Run(ctx, d, withCodec(codec, 500), nil)
		require.NoError(t, err)
		require.Equal(t, r.events, n, "round %d: the round's events are processed", i)

		r.minTS, r.maxTS = math.MaxInt64, math.MinInt64
		for p := range int32(Partitions) {
			l, err := d.Partition(SourceTopic, p)
			require.NoError(t, err)
			for off := ends[p]; off < l.HighWatermark(); {
				next, err := l.ReadRecords(off, 1<<20, func(rec *record.Record, _ *record.BatchHeader) error {
					var ev Event
					require.NoError(t, json.Unmarshal(rec.Value, &ev))
					r.minTS, r.maxTS = min(r.minTS, ev.TS), max(r.maxTS, ev.TS)
					return nil
				})
				require.NoError(t, err)
				off = next
			}
			ends[p] = l.HighWatermark()
		}
		count := func(topic string) int {
			n := 0
			require.NoError(t, readAll(ctx, d, topic, func(*consumer.Record) error { n++; return nil }))
			return n
		}
		r.late, r.windows = count(LateTopic)-late, count(ResultsTopic)-windows
		late, windows = late+r.late, windows+r.windows
		t.Logf("round %d: %d events from %s to %s: %d late, %d windows emitted", i, r.events,
			time.UnixMilli(r.minTS).UTC().Format(time.TimeOnly), time.UnixMilli(r.maxTS).UTC().Format(time.TimeOnly), r.late, r.windows)
		require.LessOrEqual(t, r.late, r.lateMax, "round %d: late events", i)
		require.GreaterOrEqual(t, r.windows, r.windowsMin, "round %d: windows emitted", i)
		// The round's nominal times run from start, 40 ms apart; each
		// event is up to 10 s early.
		start := int64(firstEventTime)
		if i > 0 {
			start = rounds[i-1].maxTS + eventSpacing
		}
		last := start + int64(r.events-1)*eventSpacing
		require.LessOrEqual(t, r.minTS, start, "round %d starts at %d", i, start)
		require.GreaterOrEqual(t, r.minTS, start-10_000, "round %d starts at %d", i, start)
		require.LessOrEqual(t, r.maxTS, last, "round %d ends at %d", i, last)
		require.Greater(t, r.maxTS, last-10_000, "round %d ends at %d", i, last)
		if i == len(rounds)-1 {
			checkOutputs(t, d)
		}
		require.NoError(t, d.Close())
	}
}

// TestWindowCountAcrossKills seeds the source, then runs the processor as a
// child process and kills it with SIGKILL at random moments — between
// transactions, inside them, during commits — restarting it each time, until
// a run finishes. Each run writes with a codec chosen from the seed, the
// source with another. The outputs, read with read_committed, must be
// exactly those of a replay of the events through the same rules, and hold
// data batches of the codec of every run that committed, of no other.
func TestWindowCountAcrossKills(t *testing.T) {
	const events, kills = 3000, 8
	dir := t.TempDir()
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("KAFKALITE_CRASH_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "KAFKALITE_CRASH_SEED")
	}
	t.Logf("seed %d (KAFKALITE_CRASH_SEED=%d replays the events, the kill plan and the codecs)", seed, seed)
	codecs := rand.New(rand.NewPCG(seed, 8)) // a stream of its own: the kill plan of a seed does not depend on it
	nextCodec := func() record.Compression { return matrix.AllCodecs[codecs.IntN(len(matrix.AllCodecs))] }
	sourceCodec := nextCodec()
	t.Logf("source written with %v", sourceCodec)
	d, err := log.Open(ctx, dir, testDirConfig())
	require.NoError(t, err)
	require.NoError(t, SeedEvents(ctx, d, events, seed, sourceCodec))
	require.NoError(t, d.Close())

	rng := rand.New(rand.NewPCG(seed, 7))
	killed, processed := 0, 0
	used, committedWith := map[record.Compression]bool{}, map[record.Compression]bool{}
	for run := 0; ; run++ {
		require.Less(t, run, 100, "the processor never finished")
		codec := nextCodec()
		used[codec] = true
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir, compressionEnv+"="+codec.String())
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
		commits := 0
		observe := func(line string) {
			require.False(t, strings.HasPrefix(line, "error"), line)
			if strings.HasPrefix(line, "commit") {
				processed += commitCount(t, line)
				commits++
				committedWith[codec] = true
			}
		}
		if killed < kills {
			// Kill after a random number of commits, plus a random delay
			// so that some kills land inside a transaction.
			want, finished := rng.IntN(5), false
			for commits < want {
				line, ok := <-lines
				if !ok || line == "done" {
					finished = true
					break
				}
				observe(line)
			}
			if !finished {
				time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond) // where in the transaction the kill lands
				if err := cmd.Process.Signal(syscall.SIGKILL); err == nil {
					killed++
				} else {
					require.ErrorIs(t, err, os.ErrProcessDone, "the child ended before the kill")
				}
			}
			for line := range lines { // what the child wrote before the signal landed
				if line != "done" {
					observe(line)
				}
			}
			werr := cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				require.Equal(t, syscall.SIGKILL, ws.Signal(), "the child must die of the SIGKILL")
				t.Logf("run %d (%v): killed after %d commits", run, codec, commits)
			} else {
				require.NoError(t, werr, "the child failed before the kill")
				t.Logf("run %d (%v): finished before its kill, %d commits", run, codec, commits)
			}
			continue
		}
		var last string
		for line := range lines {
			if line != "done" {
				observe(line)
			}
			last = line
		}
		require.NoError(t, cmd.Wait())
		require.Equal(t, "done", last)
		t.Logf("run %d (%v): finished, %d commits", run, codec, commits)
		break
	}

	d, err = log.Open(ctx, dir, testDirConfig())
	require.NoError(t, err)
	defer d.Close()
	checkOutputs(t, d)
	found := map[record.Compression]int{}
	for _, topic := range []string{ResultsTopic, LateTopic, ChangelogTopic} {
		for codec, n := range logtest.BatchCodecs(t, d, topic) {
			found[codec] += n
		}
	}
	t.Logf("%d kills; %d events in committed transactions seen by the test; output data batches by codec: %v", killed, processed, found)
	require.Equal(t, []record.Compression{sourceCodec}, slices.Sorted(maps.Keys(logtest.BatchCodecs(t, d, SourceTopic))), "the source's codec")
	for codec := range committedWith {
		require.Contains(t, found, codec, "a run with %v committed: the outputs have its batches", codec)
	}
	for codec := range found {
		require.True(t, used[codec], "the outputs have %v batches, a codec no run used", codec)
	}
}

func commitCount(t *testing.T, line string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(line, "commit "))
	require.NoError(t, err, line)
	return n
}

// partitioned is what a topic holds, per partition, in offset order.
type partitioned map[int32][]string

// readCommitted returns a topic's values (read_committed) per partition,
// after checking that no transaction is left open in it.
func readCommitted(t *testing.T, d *log.Dir, topic string) partitioned {
	t.Helper()
	for p := range int32(Partitions) {
		l, err := d.Partition(topic, p)
		require.NoError(t, err)
		require.Equal(t, l.HighWatermark(), l.LastStableOffset(), "%s-%d: no transaction left open", topic, p)
	}
	out := partitioned{}
	require.NoError(t, readAll(context.Background(), d, topic, func(r *consumer.Record) error {
		v := "<null>"
		if r.Value != nil {
			v = string(r.Value)
		}
		out[r.Partition] = append(out[r.Partition], string(r.Key)+"="+v)
		return nil
	}))
	return out
}

// checkOutputs replays the source topic through fresh tasks and compares:
// window-counts must hold exactly the windows the replay emits, each once,
// in the same order per partition, with the same counts; late-events exactly
// the events the replay finds late; and the changelog's latest value per key
// the replay's open windows.
func checkOutputs(t *testing.T, d *log.Dir) {
	t.Helper()
	source := readCommitted(t, d, SourceTopic)
	wantResults, wantLate, wantOpen := partitioned{}, partitioned{}, map[int32]map[string]int64{}
	for p := range int32(Partitions) {
		tk := newTask(DefaultWindows, noTime, nil)
		for _, kv := range source[p] {
			key, value, _ := strings.Cut(kv, "=")
			var ev Event
			if err := json.Unmarshal([]byte(value), &ev); err != nil || ev.Type == "" {
				wantLate[p] = append(wantLate[p], kv)
				continue
			}
			late, emitted := tk.process(ev)
			if late {
				wantLate[p] = append(wantLate[p], key+"="+value)
			}
			for _, r := range emitted {
				v, err := json.Marshal(r)
				require.NoError(t, err)
				wantResults[p] = append(wantResults[p], r.Type+"="+string(v))
			}
		}
		wantOpen[p] = map[string]int64{}
		for k, n := range tk.counts {
			wantOpen[p][k.String()] = n
		}
	}

	results := readCommitted(t, d, ResultsTopic)
	require.Equal(t, wantResults, results, "window-counts: every window once, with its count")
	seen := map[string]bool{}
	for _, rs := range results {
		for _, kv := range rs {
			_, value, _ := strings.Cut(kv, "=")
			var r Result
			require.NoError(t, json.Unmarshal([]byte(value), &r))
			id := fmt.Sprintf("%d/%s", r.Start, r.Type)
			require.False(t, seen[id], "window %s emitted twice", id)
			seen[id] = true
		}
	}
	require.NotEmpty(t, seen)
	require.Equal(t, wantLate, readCommitted(t, d, LateTopic), "late-events")
	require.NotEmpty(t, wantLate)

	open := map[int32]map[string]int64{}
	for p, kvs := range readCommitted(t, d, ChangelogTopic) {
		open[p] = map[string]int64{}
		for _, kv := range kvs {
			key, value, _ := strings.Cut(kv, "=")
			if value == "<null>" {
				delete(open[p], key)
				continue
			}
			n, err := strconv.ParseInt(value, 10, 64)
			require.NoError(t, err)
			open[p][key] = n
		}
	}
	for p := range int32(Partitions) {
		if open[p] == nil {
			open[p] = map[string]int64{}
		}
	}
	require.Equal(t, wantOpen, open, "the changelog's latest values are the open windows")
}
