package log

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// topicSteps is a topic administration workload: a Dir opened on an empty
// directory, two topics created with overrides, one deleted, the Dir
// closed. done counts the calls that returned nil so far; a fault stops
// the workload at the first call that fails.
type topicSteps struct {
	mu   sync.Mutex // protects done
	done int
}

const (
	stepOpened = iota + 1
	stepCreatedA
	stepCreatedB
	stepDeletedA
)

var (
	topicAProps = map[string]string{"segment.bytes": "4096", "retention.ms": "1000"}
	topicBProps = map[string]string{"retention.bytes": "100000"}
)

func (s *topicSteps) finished() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func (s *topicSteps) run(cfg Config) {
	ctx := context.Background()
	ok := func(err error) bool {
		if err != nil {
			return false
		}
		s.mu.Lock()
		s.done++
		s.mu.Unlock()
		return true
	}
	d, err := Open(ctx, "/data", cfg)
	if !ok(err) {
		return
	}
	defer d.Close()
	_, err = d.CreateTopic(ctx, "a", 2, topicAProps)
	if !ok(err) {
		return
	}
	_, err = d.CreateTopic(ctx, "b", 1, topicBProps)
	if !ok(err) {
		return
	}
	ok(d.DeleteTopic(context.Background(), "a"))
}

// checkTopicsAfterCrash opens a crashed directory and checks it against
// the steps that had returned: a topic whose CreateTopic returned is there
// with its overrides until its DeleteTopic returned, after which it is
// gone; a topic whose creation or deletion was under way is either absent
// or there with its overrides (never adopted with the defaults); no
// partition directory is left without a topic.
func checkTopicsAfterCrash(t *testing.T, cfg Config, done int, what string) {
	t.Helper()
	d, err := Open(context.Background(), "/data", cfg)
	require.NoError(t, err, "%s: Open after the crash", what)
	defer d.Close()
	check := func(name string, props map[string]string, created, deleted int) {
		desc, err := d.DescribeTopic(name)
		present := err == nil
		switch {
		case done >= deleted:
			require.False(t, present, "%s: topic %s was deleted", what, name)
		case done >= created && done < deleted-1: // not yet being deleted
			require.True(t, present, "%s: topic %s was created", what, name)
		}
		if present {
			require.True(t, maps.Equal(props, desc.Overrides), "%s: topic %s has overrides %v, created with %v", what, name, desc.Overrides, props)
		}
	}
	check("a", topicAProps, stepCreatedA, stepDeletedA)
	check("b", topicBProps, stepCreatedB, 1<<30)
	entries, err := cfg.FS.List("/data")
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir {
			continue
		}
		topic, _, err := ParsePartitionDirName(e.Name)
		if errors.Is(err, ErrStrayPartitionDir) {
			continue // an interrupted creation or deletion, set aside as Kafka sets aside stray replicas
		}
		require.NoError(t, err, "%s: %s", what, e.Name)
		_, err = d.DescribeTopic(topic)
		require.NoError(t, err, "%s: partition directory %s without a topic", what, e.Name)
	}
}

// TestTopicAdministrationCrashAtEveryOp crashes (keeping only what was
// synced) before every filesystem operation of the topic workload, and
// reopens. It is the regression test of a bug the kill -9 harness found:
// a crash inside DeleteTopic (store saved, directories not yet renamed) or
// CreateTopic (directories made, store not yet saved) brought the topic
// back, adopted with the default configuration.
func TestTopicAdministrationCrashAtEveryOp(t *testing.T) {
	e := newEnv(t)
	ffs := vfs.NewFaultFS(e.mem)
	var steps topicSteps
	type crash struct {
		fs   *vfs.MemFS
		done int
		op   string
	}
	var mu sync.Mutex
	var crashes []crash
	ffs.OnOp(func(op vfs.Op, path string) {
		c := crash{fs: e.mem.CrashClone(), done: steps.finished(), op: op.String() + " " + path}
		mu.Lock()
		crashes = append(crashes, c)
		mu.Unlock()
	})
	cfg := e.cfg
	cfg.FS = ffs
	steps.run(cfg)
	ffs.OnOp(nil)
	require.Equal(t, stepDeletedA, steps.finished())
	for i, c := range crashes {
		cfg := e.cfg
		cfg.FS = c.fs
		checkTopicsAfterCrash(t, cfg, c.done, "crash "+itoa(i)+" before "+c.op)
	}
	t.Logf("%d crash points", len(crashes))
}

// TestTopicAdministrationFaults fails each operation of the topic workload
// once, with ENOSPC and with EIO, then crashes and reopens: the call that
// met the fault fails or succeeds, and the directory reopens to a state
// consistent with what returned.
func TestTopicAdministrationFaults(t *testing.T) {
	ops := []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpSyncDir, vfs.OpMkdir, vfs.OpRemove, vfs.OpOpen, vfs.OpList}
	faults := 0
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		for _, op := range ops {
			for nth := 1; ; nth++ {
				e := newEnv(t)
				ffs := vfs.NewFaultFS(e.mem)
				ffs.Inject(vfs.Rule{Op: op, Nth: nth, Err: errno})
				cfg := e.cfg
				cfg.FS = ffs
				var steps topicSteps
				steps.run(cfg)
				if ffs.Injected() == 0 {
					break
				}
				faults++
				cfg.FS = e.mem.CrashClone()
				checkTopicsAfterCrash(t, cfg, steps.finished(), op.String()+" #"+itoa(nth)+" "+errno.Error())
			}
		}
	}
	t.Logf("%d faults injected", faults)
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestTopicCreationBlocksNoOne: while a CreateTopic or an AddPartitions
// builds its partitions (held here inside a filesystem operation on its
// directories), the Dir's lock is free: an append and a read of another
// topic, DescribeTopic and Topics go through, and so does the creation of
// another topic. The topic being created is invisible until its store
// entry is durable, and its name is taken: a second creation is
// ErrTopicExists. Before, the creation held the lock for its whole work.
func TestTopicCreationBlocksNoOne(t *testing.T) {
	for _, grow := range []bool{false, true} {
		name := map[bool]string{false: "CreateTopic", true: "AddPartitions"}[grow]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ffs, cfg, d := openFaulty(t, e)
			defer d.Close()
			ctx := context.Background()
			createTopic(t, d, "busy", 1, nil)
			if grow {
				createTopic(t, d, "big", 1, nil)
			}
			blocked, release := make(chan struct{}), make(chan struct{})
			var once, released sync.Once
			unblock := func() { released.Do(func() { close(release) }) }
			defer unblock() // before d.Close, should a check fail
			ffs.OnOp(func(op vfs.Op, path string) {
				if op == vfs.OpMkdir && strings.Contains(path, "/data/big-3") {
					once.Do(func() { close(blocked); <-release })
				}
			})
			done := make(chan error, 1)
			go func() {
				if grow {
					done <- d.AddPartitions(ctx, "big", 8)
				} else {
					_, err := d.CreateTopic(ctx, "big", 8, nil)
					done <- err
				}
			}()
			<-blocked
			require.True(t, d.mu.TryRLock(), "the Dir's lock is free while %s builds partitions", name)
			d.mu.RUnlock()
			l := partition(t, d, "busy", 0)
			res, err := l.Append(producerBatch(t, 2, 10, e.clock.Now().UnixMilli(), record.None))
			require.NoError(t, err)
			require.Len(t, records(t, l, res.BaseOffset), 2)
			_, err = d.DescribeTopic("busy")
			require.NoError(t, err)
			createTopic(t, d, "other", 2, nil)
			if grow {
				desc, err := d.DescribeTopic("big")
				require.NoError(t, err)
				require.Equal(t, int32(1), desc.Partitions, "the new partitions are not there yet")
			} else {
				require.NotContains(t, d.Topics(), "big")
				_, err = d.Partition("big", 0)
				require.ErrorIs(t, err, ErrUnknownTopicOrPartition)
				_, err = d.CreateTopic(ctx, "big", 1, nil)
				require.ErrorIs(t, err, ErrTopicExists, "the name is taken")
			}
			unblock()
			require.NoError(t, <-done)
			desc, err := d.DescribeTopic("big")
			require.NoError(t, err)
			require.Equal(t, int32(8), desc.Partitions)
			ffs.OnOp(nil)

			require.NoError(t, d.Close())
			cfg.FS = e.mem
			d, err = Open(ctx, "/data", cfg)
			require.NoError(t, err)
			require.Equal(t, []string{"big", "busy", "other"}, d.Topics())
			desc, err = d.DescribeTopic("big")
			require.NoError(t, err)
			require.Equal(t, int32(8), desc.Partitions)
		})
	}
}

// TestFailedTopicCreationLeavesNoDirectory fails each filesystem operation
// of a CreateTopic of 4 partitions (and of an AddPartitions from 1 to 4)
// once, with ENOSPC and with EIO: a call that fails leaves no directory of
// the partitions it was making (before, a failed creation left them
// behind) and the topic as it was; the
// same call then succeeds; and the directory reopens, after a crash too,
// with no partition directory without its topic and no stray.
func TestFailedTopicCreationLeavesNoDirectory(t *testing.T) {
	ops := []vfs.Op{vfs.OpCreate, vfs.OpOpen, vfs.OpWrite, vfs.OpSync, vfs.OpTruncate, vfs.OpStat, vfs.OpList,
		vfs.OpRemove, vfs.OpRename, vfs.OpMkdir, vfs.OpSyncDir}
	for _, grow := range []bool{false, true} {
		call := map[bool]string{false: "CreateTopic", true: "AddPartitions"}[grow]
		failures := 0
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			for _, op := range ops {
				for nth := 1; ; nth++ {
					what := call + " " + op.String() + " #" + itoa(nth) + " " + errno.Error()
					e := newEnv(t)
					ffs, cfg, d := openFaulty(t, e)
					ctx := context.Background()
					var err error
					if grow {
						createTopic(t, d, "t", 1, topicBProps)
					}
					ffs.Inject(vfs.Rule{Op: op, Nth: nth, Err: errno})
					if grow {
						err = d.AddPartitions(ctx, "t", 4)
					} else {
						_, err = d.CreateTopic(ctx, "t", 4, topicAProps)
					}
					injected := ffs.Injected()
					ffs.Clear()
					if injected == 0 {
						require.NoError(t, err, what)
						require.NoError(t, d.Close())
						break
					}
					want := 4
					if err != nil {
						failures++
						want = map[bool]int{false: 0, true: 1}[grow]
						require.Equal(t, want, len(partitionDirs(t, e.mem, "t")), "%s: %v", what, err)
						if grow {
							desc, derr := d.DescribeTopic("t")
							require.NoError(t, derr, what)
							require.Equal(t, int32(1), desc.Partitions, what)
						} else {
							require.NotContains(t, d.Topics(), "t", what)
						}
					}
					survivor := e.mem.CrashClone()
					if err != nil { // the same call, without the fault
						if grow {
							require.NoError(t, d.AddPartitions(ctx, "t", 4), what)
						} else {
							_, cerr := d.CreateTopic(ctx, "t", 4, topicAProps)
							require.NoError(t, cerr, what)
						}
						require.Len(t, partitionDirs(t, e.mem, "t"), 4, what)
					}
					require.NoError(t, d.Close(), what)
					for _, fsys := range []*vfs.MemFS{e.mem, survivor} {
						cfg.FS = fsys
						d, err := Open(ctx, "/data", cfg)
						require.NoError(t, err, what)
						n := 0
						if desc, err := d.DescribeTopic("t"); err == nil {
							n = int(desc.Partitions)
						}
						require.Len(t, partitionDirs(t, fsys, "t"), n, "%s: every partition directory has its topic, none is a stray", what)
						require.NoError(t, d.Close())
					}
				}
			}
		}
		t.Logf("%s: %d failures", call, failures)
	}
}

// openFaulty opens a Dir on a FaultFS over e's memory filesystem.
func openFaulty(t *testing.T, e *env) (*vfs.FaultFS, Config, *Dir) {
	t.Helper()
	ffs := vfs.NewFaultFS(e.mem)
	cfg := e.cfg
	cfg.FS = ffs
	d, err := Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	return ffs, cfg, d
}

// partitionDirs lists the directories of topic's partitions in /data,
// strays and those marked for deletion included.
func partitionDirs(t *testing.T, fsys vfs.FS, topic string) []string {
	t.Helper()
	entries, err := fsys.List("/data")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir && strings.HasPrefix(e.Name, topic+"-") {
			out = append(out, e.Name)
		}
	}
	return out
}

// TestConcurrentTopicAdministration runs creations, partition additions,
// configuration changes and deletions of several topics at once, some on
// the same names, beside an appender, then closes: each call succeeds or
// fails with ErrTopicExists or ErrUnknownTopicOrPartition, and the
// directory reopens with every partition directory belonging to a topic
// of the store, at its partition count.
func TestConcurrentTopicAdministration(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	ctx := context.Background()
	createTopic(t, d, "busy", 1, nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				name := "t" + itoa((w+i)%3)
				if _, err := d.CreateTopic(ctx, name, 2, nil); err != nil && !errors.Is(err, ErrTopicExists) {
					t.Errorf("CreateTopic %s: %v", name, err)
				}
				if err := d.AddPartitions(ctx, name, int32(3+i)); err != nil && !errors.Is(err, ErrUnknownTopicOrPartition) && !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("AddPartitions %s: %v", name, err)
				}
				if _, err := d.AlterTopicConfig(ctx, name, map[string]string{"retention.ms": itoa(1000 + i)}); err != nil && !errors.Is(err, ErrUnknownTopicOrPartition) {
					t.Errorf("AlterTopicConfig %s: %v", name, err)
				}
				if i%3 == w%3 {
					if err := d.DeleteTopic(ctx, name); err != nil && !errors.Is(err, ErrUnknownTopicOrPartition) {
						t.Errorf("DeleteTopic %s: %v", name, err)
					}
				}
			}
		})
	}
	l := partition(t, d, "busy", 0)
	for range 50 {
		_, err := l.Append(producerBatch(t, 1, 10, e.clock.Now().UnixMilli(), record.None))
		require.NoError(t, err)
	}
	wg.Wait()
	require.NoError(t, d.Close())
	d = e.open(t)
	defer d.Close()
	for _, name := range []string{"t0", "t1", "t2"} {
		n := 0
		if desc, err := d.DescribeTopic(name); err == nil {
			n = int(desc.Partitions)
		}
		var live []string
		for _, dir := range partitionDirs(t, e.mem, name) {
			if _, _, err := ParsePartitionDirName(dir); err == nil {
				live = append(live, dir)
			}
		}
		require.Len(t, live, n, "%s: %v", name, live)
	}
	require.Equal(t, int64(50), partition(t, d, "busy", 0).LogEndOffset())
}

// TestCreateTopicRacingDelete: a creation that succeeded returns its
// topic even when a deletion of the same name runs right after it (it
// looked the topic up again, and failed with ErrUnknownTopicOrPartition,
// as TestConcurrentTopicAdministration found once in CI).
func TestCreateTopicRacingDelete(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := d.DeleteTopic(ctx, "racy"); err != nil && !errors.Is(err, ErrUnknownTopicOrPartition) {
				t.Errorf("DeleteTopic: %v", err)
				return
			}
		}
	})
	for range 300 {
		desc, err := d.CreateTopic(ctx, "racy", 1, map[string]string{"retention.ms": "1000"})
		if errors.Is(err, ErrTopicExists) {
			continue
		}
		require.NoError(t, err)
		require.Equal(t, "racy", desc.Name)
		require.Equal(t, int32(1), desc.Partitions)
		require.Equal(t, map[string]string{"retention.ms": "1000"}, desc.Overrides)
		require.Len(t, desc.ID, 22)
	}
	close(stop)
	wg.Wait()
}
