package log

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/compaction"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// cleanerGoroutines counts the goroutines in a Dir's cleanerLoop, in the
// whole process (tests compare it with a count taken before).
func cleanerGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("log.(*Dir).cleanerLoop("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// compactedTopic creates a one-partition compacted topic of small
// segments, cleanable once its dirty ratio is above minRatio.
func compactedTopic(t *testing.T, d *Dir, name string, minRatio string) *Log {
	t.Helper()
	createTopic(t, d, name, 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1024", "min.cleanable.dirty.ratio": minRatio})
	return partition(t, d, name, 0)
}

// writeKeys appends n records, keys k0 to k<keys-1> in turn, with values
// of size bytes, then rolls, so that the cleaner may clean them all.
func writeKeys(t *testing.T, l *Log, ts int64, n, keys, size int) {
	t.Helper()
	for i := range n {
		put(t, l, ts, fmt.Sprintf("k%d", i%keys), strings.Repeat("v", size), false)
	}
	require.NoError(t, l.Roll(context.Background()))
}

func cleanerRounds(l *Log) int {
	st, _ := l.CleanerStats()
	return st.Rounds
}

// TestCleanerBackoffDynamic: log.cleaner.backoff.ms changes at run time
// (sarama's TestFuncAdminIncrementalAlterConfigs sets it; kafkalite
// refused it): the cleaner goroutine asleep for the old backoff is
// restarted at once, and the new one sleeps the new backoff. On
// synctest's clock: a cleaner's pass is over once synctest.Wait returns.
func TestCleanerBackoffDynamic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		base := cleanerGoroutines()
		e := newEnv(t)
		e.cfg.CleanerBackoff = time.Hour
		d := e.open(t)
		defer func() { require.NoError(t, d.Close()) }()
		l := compactedTopic(t, d, "c", "0.01")
		ts := e.clock.Now().UnixMilli()
		synctest.Wait() // the goroutine's first pass is done

		writeKeys(t, l, ts, 30, 3, 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Zero(t, cleanerRounds(l), "asleep for log.cleaner.backoff.ms, an hour")

		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"log.cleaner.backoff.ms": "1000"}))
		synctest.Wait()
		require.Equal(t, 1, cleanerRounds(l), "the goroutine asleep for an hour was restarted and cleaned")
		require.Equal(t, 1, cleanerGoroutines()-base)

		// The new goroutine sleeps a second when nothing is left.
		writeKeys(t, l, ts, 30, 3, 1)
		time.Sleep(990 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 1, cleanerRounds(l))
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 2, cleanerRounds(l), "cleaned after log.cleaner.backoff.ms, a second")

		// Back to the static hour.
		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, nil))
		synctest.Wait()
		writeKeys(t, l, ts, 30, 3, 1)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 2, cleanerRounds(l))
		require.Equal(t, time.Hour, d.cleaner.pool.gen.settings.backoff)
	})
}

// TestCleanerIORateDynamic: log.cleaner.io.max.bytes.per.second changes
// the shared throttler's rate at once, without a restart: a round asleep
// under 1 byte/s (for hours) wakes and ends when the rate goes back to
// unlimited (Kafka's default, Double.MAX_VALUE).
func TestCleanerIORateDynamic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t)
		e.cfg.CleanerBackoff = time.Second
		d := e.open(t)
		defer func() { require.NoError(t, d.Close()) }()
		gen := d.cleaner.pool.gen
		l := compactedTopic(t, d, "c", "0.01")

		require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, map[string]string{"log.cleaner.io.max.bytes.per.second": "1"}))
		require.Equal(t, 1.0, d.cleaner.throttler.Rate())
		// A check window lasts 300 ms: the round starts after one. The
		// writes fall between two passes of the cleaner (every second).
		time.Sleep(2500 * time.Millisecond)
		writeKeys(t, l, e.clock.Now().UnixMilli(), 30, 3, 1)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Zero(t, cleanerRounds(l), "the round sleeps, throttled to a byte a second")
		sleptFrom := time.Now()

		require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, map[string]string{"log.cleaner.io.max.bytes.per.second": "1.7976931348623157E308"}))
		require.True(t, d.cleaner.throttler.Unlimited())
		synctest.Wait()
		require.Equal(t, 1, cleanerRounds(l), "the round woke and ended")
		require.Equal(t, sleptFrom, time.Now())
		require.Same(t, gen, d.cleaner.pool.gen, "the rate needs no restart")
	})
}

// TestCleanerThreadsDynamic: log.cleaner.threads changes the number of
// cleaner goroutines at run time, within Kafka's bounds (at least 1, at
// least half and at most double the current count), and Close stops them
// all, a restart in progress included.
func TestCleanerThreadsDynamic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		base := cleanerGoroutines()
		e := newEnv(t)
		d := e.open(t)
		synctest.Wait()
		require.Equal(t, 1, cleanerGoroutines()-base)
		for _, c := range []struct {
			threads string
			want    int
			refused string
		}{
			{"3", 1, "Log cleaner threads cannot be increased to more than double the current value 1"},
			{"0", 1, "Log cleaner threads should be at least 1"},
			{"2", 2, ""},
			{"4", 4, ""},
			{"1", 4, "Log cleaner threads cannot be reduced to less than half the current value 4"},
			{"9", 4, "Log cleaner threads cannot be increased to more than double the current value 4"},
			{"2", 2, ""},
			{"1", 1, ""},
		} {
			err := d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"log.cleaner.threads": c.threads})
			if c.refused != "" {
				require.ErrorIs(t, err, ErrInvalidConfig, c.threads)
				require.ErrorContains(t, err, c.refused)
			} else {
				require.NoError(t, err, c.threads)
			}
			synctest.Wait()
			require.Equal(t, c.want, cleanerGoroutines()-base, c.threads)
			require.Equal(t, c.want, d.Config().CleanerThreads)
		}

		// A restart waits for the round in progress (here asleep in the
		// throttler, at a byte a second, after a check window of 300 ms):
		// the round is not aborted, and the new goroutines start once it
		// has ended.
		slowly := map[string]string{"log.cleaner.io.max.bytes.per.second": "1", "log.cleaner.backoff.ms": "100"}
		throttledRound := func(l *Log) {
			t.Helper()
			require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, slowly))
			// The writes fall between two passes (every 100 ms).
			time.Sleep(1050 * time.Millisecond)
			writeKeys(t, l, e.clock.Now().UnixMilli(), 30, 3, 1)
			time.Sleep(time.Second)
			synctest.Wait()
			require.Zero(t, cleanerRounds(l), "asleep in its round")
		}
		l := compactedTopic(t, d, "c", "0.01")
		throttledRound(l)
		slowly["log.cleaner.threads"] = "2"
		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, slowly))
		synctest.Wait()
		require.Equal(t, 1, cleanerGoroutines()-base, "the old goroutine is in its round")
		require.True(t, d.cleaner.pool.restarting)
		slowly["log.cleaner.io.max.bytes.per.second"] = "1.7976931348623157E308"
		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, slowly))
		synctest.Wait()
		require.Equal(t, 1, cleanerRounds(l), "the round ended")
		require.Equal(t, 2, cleanerGoroutines()-base, "then the new goroutines started")
		require.False(t, d.cleaner.pool.restarting)

		// Close stops a restart waiting for a round, and the round.
		slowly["log.cleaner.io.max.bytes.per.second"] = "1"
		l = compactedTopic(t, d, "d", "0.01")
		throttledRound(l)
		slowly["log.cleaner.threads"] = "1"
		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, slowly))
		synctest.Wait()
		require.Equal(t, 1, cleanerGoroutines()-base, "the idle one stopped, the other is in its round")
		require.True(t, d.cleaner.pool.restarting)
		require.NoError(t, d.Close())
		synctest.Wait()
		require.Zero(t, cleanerGoroutines()-base)
		require.Zero(t, cleanerRounds(l), "the round was aborted by Close")
	})
}

// TestCleanerBuffersDynamic: log.cleaner.dedupe.buffer.size,
// log.cleaner.io.buffer.load.factor and log.cleaner.io.buffer.size reach
// the cleaner goroutines: a round's offset map has the new share of the
// dedupe buffer (divided among the goroutines and Dir.CleanNow) and fills
// to the new load factor, and the rounds read the new I/O buffer's size at
// a time.
func TestCleanerBuffersDynamic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t)
		e.cfg.CleanerBackoff = time.Second
		ffs := vfs.NewFaultFS(e.mem)
		e.cfg.FS = ffs
		d := e.open(t)
		defer func() { require.NoError(t, d.Close()) }()
		ts := e.clock.Now().UnixMilli()

		// Each topic is cleaned once: 300 keys, of which a round maps
		// fewer than 300, leave a dirty ratio below 0.9.
		round := func(name string, set map[string]string) compaction.Stats {
			t.Helper()
			require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, set))
			synctest.Wait() // the goroutines restarted, asleep: none cleans before the writes end
			l := compactedTopic(t, d, name, "0.9")
			writeKeys(t, l, ts, 300, 300, 1)
			time.Sleep(2 * time.Second)
			synctest.Wait()
			st, ok := l.CleanerStats()
			require.True(t, ok, name)
			require.Equal(t, 1, st.Rounds, "%s %+v", name, st)
			return st.Stats
		}
		// Two goroutines and CleanNow: thirds of 7200 bytes, 100 slots.
		set := map[string]string{"log.cleaner.threads": "2", "log.cleaner.dedupe.buffer.size": "7200"}
		st := round("a", set)
		require.Equal(t, int64(100*compaction.SlotBytes), st.MapBudgetBytes)
		require.Equal(t, 90, st.MapKeys, "full at the load factor 0.9")
		set["log.cleaner.io.buffer.load.factor"] = "0.5"
		st = round("b", set)
		require.Equal(t, int64(100*compaction.SlotBytes), st.MapBudgetBytes)
		require.Equal(t, 50, st.MapKeys, "full at the load factor 0.5")
		set["log.cleaner.dedupe.buffer.size"] = "14400"
		st = round("c", set)
		require.Equal(t, int64(200*compaction.SlotBytes), st.MapBudgetBytes)
		require.Equal(t, 100, st.MapKeys)

		// The I/O buffer: the rounds read at most log.cleaner.io.buffer.size
		// at a time (64 KiB at least), as the throttler's calls show: at a
		// byte a second, on a clock that moves a second at each reading,
		// a call of n bytes sleeps n−1 seconds. 2 MiB of records in
		// segments of 1 MiB, of which a round keeps 16 KiB.
		largest := func(name string, ioBuffer string) int64 {
			t.Helper()
			var mu sync.Mutex
			var most int64
			clk := newClock()
			d.cleaner.throttler = compaction.NewThrottler(1, func() time.Time { clk.Add(time.Second); return clk.Now() },
				func(_ context.Context, dur time.Duration) error {
					mu.Lock()
					defer mu.Unlock()
					most = max(most, int64(dur/time.Second)+1)
					return nil
				})
			require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, map[string]string{
				"log.cleaner.io.buffer.size": ioBuffer, "log.cleaner.io.max.bytes.per.second": "1"}))
			synctest.Wait()
			createTopic(t, d, name, 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "1048576"})
			l := partition(t, d, name, 0)
			writeKeys(t, l, ts, 2048, 16, 1000)
			time.Sleep(2 * time.Second)
			synctest.Wait()
			require.Equal(t, 1, cleanerRounds(l), name)
			mu.Lock()
			defer mu.Unlock()
			return most
		}
		require.LessOrEqual(t, largest("small", "1000"), int64(64<<10), "below 64 KiB counts as 64 KiB")
		require.Greater(t, largest("large", "4194304"), int64(512<<10))
	})
}

// TestCleanerSettingsSurviveReopen: the cleaner's dynamic settings are
// stored with the other dynamic broker settings, are in force again
// after a reopen, and DescribeBrokerConfig reports them as dynamic, with
// their synonyms.
func TestCleanerSettingsSurviveReopen(t *testing.T) {
	groupConfigFS(t, func(t *testing.T, cfg Config, path string) {
		synctest.Test(t, func(t *testing.T) { cleanerSettingsSurviveReopen(t, cfg, path) })
	})
}

func cleanerSettingsSurviveReopen(t *testing.T, cfg Config, path string) {
	ctx := context.Background()
	base := cleanerGoroutines()
	d, err := Open(ctx, path, cfg)
	require.NoError(t, err)
	def := map[string]string{"log.cleaner.backoff.ms": "16000", "log.cleaner.io.max.bytes.per.second": "1000000"}
	own := map[string]string{"log.cleaner.threads": "2", "log.cleaner.dedupe.buffer.size": "3000000",
		"log.cleaner.io.buffer.size": "1048576", "log.cleaner.io.buffer.load.factor": "0.75", "log.cleaner.backoff.ms": "15001"}
	require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, def))
	require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, own))
	require.NoError(t, d.Close())
	synctest.Wait()
	require.Zero(t, cleanerGoroutines()-base)

	d, err = Open(ctx, path, cfg)
	require.NoError(t, err)
	defer d.Close()
	synctest.Wait()
	require.Equal(t, 2, cleanerGoroutines()-base)
	require.Equal(t, 1e6, d.cleaner.throttler.Rate())
	require.Equal(t, cleanerSettings{threads: 2, dedupeBufferSize: 3_000_000, loadFactor: 0.75, ioBufferSize: 1 << 20, backoff: 15001 * time.Millisecond},
		d.cleaner.pool.gen.settings)
	require.Equal(t, own, d.BrokerConfigOverrides(ThisBroker))
	entries := map[string]ConfigEntry{}
	for _, e := range d.DescribeBrokerConfig() {
		entries[e.Name] = e
	}
	for _, name := range cleanerDynamicProps {
		require.False(t, entries[name].ReadOnly, name)
		require.True(t, IsDynamicBrokerProperty(name), name)
	}
	require.Equal(t, ConfigEntry{Name: "log.cleaner.backoff.ms", Value: "15001", Source: SourceDynamicBroker, Type: "LONG",
		Synonyms: []ConfigSynonym{{"log.cleaner.backoff.ms", "15001", SourceDynamicBroker}, {"log.cleaner.backoff.ms", "16000", SourceDynamicDefaultBroker},
			{"log.cleaner.backoff.ms", "15000", SourceDefault}}, Doc: entries["log.cleaner.backoff.ms"].Doc}, entries["log.cleaner.backoff.ms"])
	e := entries["log.cleaner.io.max.bytes.per.second"]
	require.Equal(t, "1000000.0", e.Value, "as Kafka prints a double")
	require.Equal(t, SourceDynamicDefaultBroker, e.Source)
	require.Equal(t, "DOUBLE", e.Type)
}

// TestCleanerReconfigurationRefused: values the configuration does not
// take, and thread counts outside Kafka's bounds, are refused with
// ErrInvalidConfig; nothing is stored and the cleaner is not restarted.
// Kafka checks the bounds on a change of any of its cleaner's settings
// (message.max.bytes among them), and not without log.cleaner.enable.
func TestCleanerReconfigurationRefused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	d := e.open(t)
	gen := d.cleaner.pool.gen
	for _, props := range []map[string]string{
		{"log.cleaner.threads": "-1"},
		{"log.cleaner.threads": "two"},
		{"log.cleaner.threads": "3"},
		{"log.cleaner.dedupe.buffer.size": "2047"}, // 1 KiB per goroutine and for CleanNow
		{"log.cleaner.io.buffer.size": "-1"},
		{"log.cleaner.io.buffer.load.factor": "0"},
		{"log.cleaner.io.buffer.load.factor": "1.5"},
		{"log.cleaner.io.buffer.load.factor": "NaN"},
		{"log.cleaner.io.max.bytes.per.second": "0"},
		{"log.cleaner.backoff.ms": "-1"},
		{"log.cleaner.backoff.ms": "1000", "log.cleaner.threads": "0"},
	} {
		for _, scope := range []BrokerConfigScope{ClusterDefault, ThisBroker} {
			require.ErrorIs(t, d.CheckBrokerConfig(ctx, scope, props), ErrInvalidConfig, "%v", props)
			require.ErrorIs(t, d.AlterBrokerConfig(ctx, scope, props), ErrInvalidConfig, "%v", props)
			require.Empty(t, d.BrokerConfigOverrides(scope))
		}
		require.Same(t, gen, d.cleaner.pool.gen)
		require.False(t, d.cleaner.pool.restarting)
		require.Equal(t, DefaultConfig().CleanerIOMaxBytesPerSecond, d.cleaner.throttler.Rate())
	}
	// A cluster default under this broker's setting changes nothing: no
	// bound applies.
	require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"log.cleaner.threads": "2"}))
	require.NoError(t, d.AlterBrokerConfig(ctx, ClusterDefault, map[string]string{"log.cleaner.threads": "8"}))
	require.Equal(t, 2, d.Config().CleanerThreads)
	require.NoError(t, d.Close())

	// With log.cleaner.threads 0 in server.properties, Kafka refuses any
	// change of its cleaner's settings, message.max.bytes included, but
	// not of others.
	e.cfg.CleanerThreads = 0
	e.dirPath = "/static-zero"
	d = e.open(t)
	err := d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"message.max.bytes": "2000000"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "Log cleaner threads should be at least 1")
	require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"log.retention.ms": "3600000"}))
	require.NoError(t, d.Close())

	// Without log.cleaner.enable, there is no cleaner to reconfigure: the
	// settings are stored, nothing runs.
	e.cfg.CleanerThreads, e.cfg.CleanerEnable = 1, false
	e.dirPath = "/disabled"
	d = e.open(t)
	defer d.Close()
	require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, map[string]string{"log.cleaner.threads": "5"}))
	require.Equal(t, 5, d.Config().CleanerThreads)
	require.Nil(t, d.cleaner.pool.gen, "no goroutine")
	require.False(t, d.cleaner.pool.restarting)
}

// TestCleanerReconfigureRace alters the cleaner's settings again and again
// while a producer appends, the goroutines clean and CleanNow runs: under
// -race, no data race; once cleaned, the log holds each key's latest
// record and only it (no round lost or mixed up a record).
func TestCleanerReconfigureRace(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.cfg.CleanerBackoff = time.Millisecond
	d := e.open(t)
	l := compactedTopic(t, d, "c", "0.01")
	const keys, writes = 10, 400
	var wg sync.WaitGroup
	done := make(chan struct{})
	// A failing check below ends the test at once: the goroutines stop
	// first, so that they report nothing after it ended.
	defer func() {
		select {
		case <-done:
		default:
			close(done)
		}
		wg.Wait()
	}()
	wg.Add(2)
	appended := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(appended)
		for i := range writes {
			if _, err := l.Append(keyedBatch(t, e.clock.Now().UnixMilli(), kv{key: fmt.Sprintf("k%d", i%keys), value: fmt.Sprint(i)})); err != nil {
				t.Error(err)
				return
			}
			if i%50 == 49 {
				if err := l.Roll(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := d.CleanNow(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	settings := []map[string]string{
		{"log.cleaner.threads": "2", "log.cleaner.backoff.ms": "2"},
		{"log.cleaner.threads": "3", "log.cleaner.dedupe.buffer.size": "100000", "log.cleaner.io.max.bytes.per.second": "1e12"},
		{"log.cleaner.threads": "2", "log.cleaner.io.buffer.load.factor": "0.5", "log.cleaner.io.buffer.size": "70000"},
		{"log.cleaner.threads": "1"},
	}
	alters := 0
	for running := true; running; alters++ {
		select {
		case <-appended:
			running = false
		default:
		}
		require.NoError(t, d.AlterBrokerConfig(ctx, ThisBroker, settings[alters%len(settings)]))
	}
	close(done)
	wg.Wait()
	st, _ := l.CleanerStats()
	t.Logf("%d alters, %d rounds", alters, st.Rounds)
	// Close aborts the round in progress, if any: the rest is cleaned
	// after a reopen.
	require.NoError(t, d.Close())
	e.cfg.CleanerEnable = false
	d = e.open(t)
	defer d.Close()
	l = partition(t, d, "c", 0)
	_, err := d.CleanNow(ctx)
	require.NoError(t, err)
	var want []kv
	for i := writes - keys; i < writes; i++ {
		want = append(want, kv{off: int64(i), key: fmt.Sprintf("k%d", i%keys), value: fmt.Sprint(i)})
	}
	require.Equal(t, want, readAll(t, l), "each key's latest record, and only it")
}
