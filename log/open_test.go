package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// onBothFS runs test on the memory filesystem and on the operating
// system's, each with a root directory of its own.
func onBothFS(t *testing.T, test func(t *testing.T, fsys vfs.FS, root string)) {
	t.Run("mem", func(t *testing.T) { test(t, vfs.NewMem(), "/data") })
	t.Run("os", func(t *testing.T) { test(t, vfs.Default, filepath.Join(t.TempDir(), "data")) })
}

// tree maps every entry under root, directories included, to its contents
// ("dir" for a directory), so that a test sees any file or directory made,
// changed or removed.
func tree(t *testing.T, fsys vfs.FS, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := fsys.List(dir)
		require.NoError(t, err)
		for _, e := range entries {
			full := filepath.Join(dir, e.Name)
			rel, err := filepath.Rel(root, full)
			require.NoError(t, err)
			if e.IsDir {
				out[rel] = "dir"
				walk(full)
				continue
			}
			f, err := fsys.Open(full)
			require.NoError(t, err)
			b, err := io.ReadAll(io.NewSectionReader(f, 0, e.Size))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			out[rel] = string(b)
		}
	}
	walk(root)
	return out
}

// writeFile writes a file, making its directory.
func writeFile(t *testing.T, fsys vfs.FS, name, contents string) {
	t.Helper()
	require.NoError(t, fsys.MkdirAll(filepath.Dir(name)))
	f, err := fsys.Create(name)
	require.NoError(t, err)
	_, err = f.Write([]byte(contents))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// formatted writes the meta.properties of node 0, as kafka-storage format
// does.
func formatted(t *testing.T, fsys vfs.FS, root string) {
	t.Helper()
	require.NoError(t, fsys.MkdirAll(root))
	require.NoError(t, checkpoint.WriteMetaProperties(fsys, filepath.Join(root, checkpoint.MetaPropertiesFile),
		checkpoint.MetaProperties{Version: 1, ClusterID: "MmuP5jq9QZeKhqiV0xk3fw", NodeID: 0, DirectoryID: "vZ0Ku5wlQbqWBNNZX2DFvw"}))
}

func openCfg(fsys vfs.FS) Config {
	cfg := DefaultConfig()
	cfg.FS = fsys
	return cfg
}

// TestOpenRefusesAForeignDirectory: a directory that holds anything but
// Kafka's root files and no kafkalite topic store is a user's folder, not
// a log directory. Open used to adopt "backup-2024/" as partition 2024 of a
// topic "backup", create partitions 0 to 2023 beside it and write segment
// files among the user's; it refuses, before writing a byte (no lock file,
// no meta.properties), and says how to adopt a broker's directory.
func TestOpenRefusesAForeignDirectory(t *testing.T) {
	folders := map[string]map[string]string{
		"partition-like folder": {"backup-2024/notes.txt": "mine"},
		"many of them":          {"photos-99999/a.jpg": "jpeg", "photos-3/b.jpg": "jpeg", "docs/c.txt": "c"},
		"one file":              {"readme.txt": "hello"},
		"a hidden file":         {".DS_Store": "x"},
		"an empty folder":       {"backup-2024/": ""},
		"a broker's partitions": {"orders-0/00000000000000000000.log": "", "meta.properties": "node.id=0\nversion=1\n"},
	}
	for name, files := range folders {
		t.Run(name, func(t *testing.T) {
			onBothFS(t, func(t *testing.T, fsys vfs.FS, root string) {
				require.NoError(t, fsys.MkdirAll(root))
				for file, contents := range files {
					if strings.HasSuffix(file, "/") {
						require.NoError(t, fsys.MkdirAll(filepath.Join(root, file)))
						continue
					}
					writeFile(t, fsys, filepath.Join(root, file), contents)
				}
				before := tree(t, fsys, root)
				_, err := Open(context.Background(), root, openCfg(fsys))
				require.ErrorIs(t, err, ErrNotLogDir)
				require.Contains(t, err.Error(), "AdoptBrokerDirectory")
				require.Equal(t, before, tree(t, fsys, root), "a refused Open writes nothing")
			})
		})
	}
}

// TestOpenCreatesAndReopens: a missing or empty directory is made a log
// directory, and a kafkalite directory whose store was written reopens
// without the adoption setting.
func TestOpenCreatesAndReopens(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		for _, prepare := range []func(){func() {}, func() { require.NoError(t, fsys.MkdirAll(root)) }} {
			require.NoError(t, fsys.RemoveAll(root))
			prepare()
			d, err := Open(context.Background(), root, openCfg(fsys))
			require.NoError(t, err)
			_, err = d.CreateTopic(context.Background(), "orders", 2, nil)
			require.NoError(t, err)
			require.NoError(t, d.Close())
			d, err = Open(context.Background(), root, openCfg(fsys))
			require.NoError(t, err)
			require.Equal(t, []string{"orders"}, d.Topics())
			require.NoError(t, d.Close())
		}
	})
}

// TestAdoptionNeedsAFormattedDirectory: adopting asks for a Kafka log
// directory, and Kafka refuses one without meta.properties; so does Open,
// writing nothing.
func TestAdoptionNeedsAFormattedDirectory(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		writeFile(t, fsys, filepath.Join(root, "orders-0", "00000000000000000000.log"), "")
		before := tree(t, fsys, root)
		cfg := openCfg(fsys)
		cfg.AdoptBrokerDirectory = true
		_, err := Open(context.Background(), root, cfg)
		require.ErrorIs(t, err, ErrNotLogDir)
		require.Contains(t, err.Error(), "meta.properties")
		require.Equal(t, before, tree(t, fsys, root))
	})
}

// TestAdoptionMakesNoPartitions: adopting a broker's directory loads the
// partitions it holds and never creates others: a directory named like a
// partition that holds no partition files is left alone, untouched, and a
// topic whose partitions are not 0 to n-1 is refused with the topic named,
// the directory as it was.
func TestAdoptionMakesNoPartitions(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		cfg := openCfg(fsys)
		cfg.AdoptBrokerDirectory = true
		formatted(t, fsys, root)
		writeFile(t, fsys, filepath.Join(root, "backup-2024", "notes.txt"), "mine")
		writeFile(t, fsys, filepath.Join(root, "orders-0", "00000000000000000000.log"), "")
		writeFile(t, fsys, filepath.Join(root, "orders-1", "00000000000000000000.log"), "")

		d, err := Open(context.Background(), root, cfg)
		require.NoError(t, err)
		require.Equal(t, []string{"orders"}, d.Topics())
		desc, err := d.DescribeTopic("orders")
		require.NoError(t, err)
		require.Equal(t, int32(2), desc.Partitions)
		require.NoError(t, d.Close())
		entries, err := fsys.List(filepath.Join(root, "backup-2024"))
		require.NoError(t, err)
		require.Len(t, entries, 1, "nothing written among the user's files")

		// A broker of a cluster holds some partitions of a topic only.
		root2 := root + "-partial"
		formatted(t, fsys, root2)
		writeFile(t, fsys, filepath.Join(root2, "photos-99999", "00000000000000000000.log"), "")
		writeFile(t, fsys, filepath.Join(root2, "events-1", "partition.metadata"), "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
		writeFile(t, fsys, filepath.Join(root2, "events-0", "00000000000000000000.log"), "")
		writeFile(t, fsys, filepath.Join(root2, "events-3", "00000000000000000000.log"), "")
		before := tree(t, fsys, root2)
		_, err = Open(context.Background(), root2, cfg)
		require.ErrorIs(t, err, ErrIncompleteTopic)
		require.Contains(t, err.Error(), "photos (partitions 99999 of at least 100000)")
		require.Contains(t, err.Error(), "events (partitions 0, 1, 3 of at least 4)")
		require.Equal(t, before, tree(t, fsys, root2), "a refused adoption writes nothing (the lock file it made is removed)")
	})
}

// TestFailedOpenIsOneError: a cancelled or timed-out Open returns ctx's
// error once (it returned a copy per partition left, thousands joined),
// and leaves the directory as it was, its clean-shutdown marker included;
// a partition that fails to load stops the loading and is the error,
// naming it.
func TestFailedOpenIsOneError(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		cfg := openCfg(fsys)
		cfg.RecoveryThreads = 2
		d, err := Open(context.Background(), root, cfg)
		require.NoError(t, err)
		for _, name := range []string{"a", "b", "c"} {
			_, err = d.CreateTopic(context.Background(), name, 40, nil)
			require.NoError(t, err)
		}
		l := partition(t, d, "b", 7)
		_, err = l.Append(producerBatch(t, 3, 10, time.Now().UnixMilli(), record.None))
		require.NoError(t, err)
		require.NoError(t, d.Close())
		before := tree(t, fsys, root)
		require.Contains(t, before, checkpoint.CleanShutdownFile)

		for _, c := range []struct {
			name string
			ctx  func() (context.Context, context.CancelFunc)
			want error
		}{
			{"cancelled", func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			}, context.Canceled},
			{"deadline", func() (context.Context, context.CancelFunc) {
				return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			}, context.DeadlineExceeded},
		} {
			ctx, cancel := c.ctx()
			_, err = Open(ctx, root, cfg)
			cancel()
			require.ErrorIs(t, err, c.want, c.name)
			require.Equal(t, c.want.Error(), err.Error(), "%s: one error", c.name)
			require.Equal(t, before, tree(t, fsys, root), "%s: the directory as it was", c.name)
		}

		// Two partitions that cannot be read: the first failure is the
		// error, and the others are counted, not listed.
		faults := vfs.NewFaultFS(fsys)
		faults.Inject(vfs.Rule{Op: vfs.OpOpen, Match: func(_ vfs.Op, path string) bool {
			return strings.Contains(path, string(filepath.Separator)+"b-3"+string(filepath.Separator)) ||
				strings.Contains(path, string(filepath.Separator)+"c-5"+string(filepath.Separator))
		}, Sticky: true, Err: errors.New("disk on fire")})
		cfg.FS = faults
		_, err = Open(context.Background(), root, cfg)
		require.Error(t, err)
		require.Equal(t, 1, strings.Count(err.Error(), "disk on fire"), err.Error())
		require.Regexp(t, `loading (b-3|c-5)`, err.Error())

		// And the directory still opens, with its data.
		cfg.FS = fsys
		d, err = Open(context.Background(), root, cfg)
		require.NoError(t, err)
		require.Equal(t, int64(3), partition(t, d, "b", 7).LogEndOffset())
		require.NoError(t, d.Close())
	})
}

// TestLogsBelongToTheDir: a *Log from Dir.Partition has no Close (a
// user's Close broke the topic for the whole Dir: later appends failed
// with "log: closed", Partition kept returning the closed log and
// Dir.Close reported nil); the Dir closes its logs, after which their
// calls and Partition say ErrClosed.
func TestLogsBelongToTheDir(t *testing.T) {
	_, hasClose := reflect.TypeFor[*Log]().MethodByName("Close")
	require.False(t, hasClose, "a Dir's Log must not be closable by its users")

	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	_, err := l.Append(producerBatch(t, 2, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	require.NoError(t, d.Close())
	_, err = l.Append(producerBatch(t, 2, 10, e.clock.Now().UnixMilli(), record.None))
	require.ErrorIs(t, err, ErrClosed)
	_, err = d.Partition("t", 0)
	require.ErrorIs(t, err, ErrClosed)
	d = e.open(t)
	defer d.Close()
	require.Equal(t, int64(2), partition(t, d, "t", 0).LogEndOffset())
}

func ExampleConfig_adoptBrokerDirectory() {
	cfg := DefaultConfig()
	fsys := vfs.NewMem()
	cfg.FS = fsys
	// A broker's log directory: formatted (meta.properties), one topic.
	write := func(name, text string) {
		_ = fsys.MkdirAll(filepath.Dir(name))
		f, _ := fsys.Create(name)
		_, _ = f.Write([]byte(text))
		_ = f.Close()
	}
	write("/kafka-logs/meta.properties", "version=1\ncluster.id=MmuP5jq9QZeKhqiV0xk3fw\nnode.id=0\n")
	write("/kafka-logs/orders-0/00000000000000000000.log", "")

	_, err := Open(context.Background(), "/kafka-logs", cfg)
	fmt.Println(errors.Is(err, ErrNotLogDir))

	cfg.AdoptBrokerDirectory = true
	d, err := Open(context.Background(), "/kafka-logs", cfg)
	if err != nil {
		panic(err)
	}
	defer d.Close()
	fmt.Println(d.Topics())
	// Output:
	// true
	// [orders]
}
