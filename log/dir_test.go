package log

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/record"
	"github.com/kafkalite/kafkalite/segment"
	"github.com/stretchr/testify/require"
)

// TestRecoveryStartsAtTheRecoveryPoint: after an unclean shutdown only the
// segments from the one holding the recovery point on are scanned.
func TestRecoveryStartsAtTheRecoveryPoint(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "3000"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	for range 30 {
		_, err := l.Append(producerBatch(t, 5, 100, now, record.None))
		require.NoError(t, err)
	}
	require.NoError(t, l.Flush(context.Background()))
	require.NoError(t, d.writeCheckpoints(false)) // recovery point = 150
	for range 6 {
		_, err := l.Append(producerBatch(t, 5, 100, now, record.None))
		require.NoError(t, err)
	}
	require.NoError(t, l.Flush(context.Background()))
	segsBefore := len(l.local.segs())
	var recoverFrom int
	for i, s := range l.local.segs() {
		if s.BaseOffset() <= 150 {
			recoverFrom = i
		}
	}
	e.crash()
	d2 := e.open(t)
	defer d2.Close()
	st := d2.Recovery()
	require.False(t, st.Clean)
	require.Equal(t, segsBefore-recoverFrom, st.SegmentsRecovered)
	require.Zero(t, st.BytesTruncated)
	l2 := partition(t, d2, "t", 0)
	require.Equal(t, int64(180), l2.LogEndOffset())
	require.Len(t, records(t, l2, 0), 180)
	require.NoError(t, d.Close())
}

// TestTornTailAfterCrash: bytes appended but never synced are lost whole;
// a partial batch is cut off by recovery.
func TestTornTailAfterCrash(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	_, err := l.AppendDurable(context.Background(), producerBatch(t, 5, 100, now, record.None))
	require.NoError(t, err)
	require.NoError(t, d.Close())

	// Append half a batch behind the log's back, as a torn write leaves it.
	f, err := e.mem.OpenReadWrite("/data/t-0/" + segment.FileName(0, segment.LogSuffix))
	require.NoError(t, err)
	torn := producerBatch(t, 5, 100, now, record.None)
	_, err = f.Write(torn[:len(torn)/2])
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	require.NoError(t, checkpoint.RemoveCleanShutdown(e.mem, "/data"))

	d = e.open(t)
	defer d.Close()
	require.Equal(t, int64(len(torn)/2), d.Recovery().BytesTruncated)
	l = partition(t, d, "t", 0)
	require.Equal(t, int64(5), l.LogEndOffset())
	_, err = l.Append(producerBatch(t, 5, 100, now, record.None))
	require.NoError(t, err)
	require.Len(t, records(t, l, 0), 10)
}

// TestAdoptsKafkaDirectory: with Config.AdoptBrokerDirectory, partition
// directories without kafkalite's topic store (as a Kafka broker leaves
// them) are loaded as topics with the default configuration.
func TestAdoptsKafkaDirectory(t *testing.T) {
	e := newEnv(t)
	e.cfg.AdoptBrokerDirectory = true
	d := e.open(t)
	createTopic(t, d, "from-kafka", 2, nil)
	_, err := partition(t, d, "from-kafka", 1).Append(producerBatch(t, 4, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	desc, err := d.DescribeTopic("from-kafka")
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, e.mem.Remove("/data/kafkalite-topics.json"))

	d = e.open(t)
	defer d.Close()
	require.Equal(t, []string{"from-kafka"}, d.Topics())
	got, err := d.DescribeTopic("from-kafka")
	require.NoError(t, err)
	require.Equal(t, int32(2), got.Partitions)
	require.Equal(t, desc.ID, got.ID, "the topic id comes from partition.metadata")
	require.Equal(t, int64(4), partition(t, d, "from-kafka", 1).LogEndOffset())
}

// TestAdoptedInternalTopicsGetKafkasConfig: a broker's __consumer_offsets
// and __transaction_state are adopted compacted, with the configuration
// Kafka gives them (not the default cleanup.policy=delete, which would
// delete committed offsets and transaction states after 7 days); a store
// of a kafkalite that adopted them with the default configuration is
// corrected the same way, and the correction is saved.
func TestAdoptedInternalTopicsGetKafkasConfig(t *testing.T) {
	for _, storeFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "broker directory", true: "store with the default config"}[storeFirst], func(t *testing.T) {
			e := newEnv(t)
			e.cfg.AdoptBrokerDirectory = true
			d := e.open(t)
			for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
				_, err := d.InternalTopic(access.Internal{}, context.Background(), name, 1, map[string]string{})
				require.NoError(t, err)
			}
			require.NoError(t, d.Close())
			if !storeFirst {
				require.NoError(t, e.mem.Remove("/data/kafkalite-topics.json"))
			}
			for range 2 { // the second Open reads what the first saved
				d = e.open(t)
				for name, want := range map[string]string{"__consumer_offsets": "producer", "__transaction_state": "uncompressed"} {
					desc, err := d.DescribeTopic(name)
					require.NoError(t, err)
					require.Equal(t, "compact", desc.Overrides["cleanup.policy"], name)
					require.Equal(t, want, desc.Overrides["compression.type"], name)
					require.Equal(t, "104857600", desc.Overrides["segment.bytes"], name)
					require.True(t, desc.Config.CleanupPolicy.Compact, name)
					require.False(t, desc.Config.CleanupPolicy.Delete, name)
				}
				require.NoError(t, d.Close())
			}
		})
	}
}

// TestUnlistedPartitionDirIsSetAsideAsStray: with a topic store, a
// partition directory it does not list (copied in, or left by a crash in
// the middle of CreateTopic or DeleteTopic) is renamed as a Kafka stray
// replica, with its data, not adopted and not deleted.
func TestUnlistedPartitionDirIsSetAsideAsStray(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "kept", 1, nil)
	createTopic(t, d, "copied", 1, nil)
	_, err := partition(t, d, "copied", 0).Append(producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	require.NoError(t, d.Close())
	// Forget "copied" in the store, as if its directory had been copied in.
	store, err := loadTopicStore(e.mem, "/data")
	require.NoError(t, err)
	delete(store, "copied")
	require.NoError(t, saveTopicStore(e.mem, "/data", store))

	d = e.open(t)
	defer d.Close()
	require.Equal(t, []string{"kept"}, d.Topics())
	entries, err := e.mem.List("/data")
	require.NoError(t, err)
	var stray []string
	for _, en := range entries {
		if pd, err := ParsePartitionDir(en.Name); err == nil && pd.Kind == StrayPartitionDir {
			stray = append(stray, en.Name)
			require.Equal(t, "copied", pd.Topic)
			files, err := e.mem.List("/data/" + en.Name)
			require.NoError(t, err)
			require.NotEmpty(t, files, "the data is kept")
		}
	}
	require.Len(t, stray, 1)
}

// TestOpenCancelled: a cancelled context stops Open and releases the lock.
func TestOpenCancelled(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 4, nil)
	require.NoError(t, d.Close())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Open(ctx, "/data", e.cfg)
	require.ErrorIs(t, err, context.Canceled)
	d = e.open(t) // the lock was released
	require.NoError(t, d.Close())
}

// TestNoGoroutineLeak: Close stops everything Open and DeleteTopic started.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	e := newEnv(t)
	e.cfg.RetentionCheckInterval = time.Millisecond
	e.cfg.FlushSchedulerInterval = time.Millisecond
	d := e.open(t)
	createTopic(t, d, "a", 2, nil)
	createTopic(t, d, "b", 1, nil)
	require.NoError(t, d.DeleteTopic(context.Background(), "b"))
	require.NoError(t, d.Close())
	// Goroutines that were told to stop may take a moment to exit; poll
	// without starting goroutines of our own (which would be counted).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left after Close")
}

// TestServicesCloseInReverseOrder: attached services close with the Dir,
// last attached first, before the logs.
func TestServicesCloseInReverseOrder(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	var order []string
	for _, name := range []string{"groups", "transactions", "cleaner"} {
		svc, err := d.Service(name, func(*Dir) (Service, error) {
			return closer(func() error { order = append(order, name); return nil }), nil
		})
		require.NoError(t, err)
		again, err := d.Service(name, func(*Dir) (Service, error) { t.Fatal("created twice"); return nil, nil })
		require.NoError(t, err)
		require.NotNil(t, svc)
		require.NotNil(t, again)
	}
	require.NoError(t, d.Close())
	require.Equal(t, []string{"cleaner", "transactions", "groups"}, order)
	_, err := d.Service("late", func(*Dir) (Service, error) { return nil, nil })
	require.ErrorIs(t, err, ErrClosed)
}

type closer func() error

func (c closer) Close() error { return c() }

func TestStats(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 2, nil)
	_, err := partition(t, d, "t", 0).Append(producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	st := d.Stats()
	require.Equal(t, 1, st.Topics)
	require.Equal(t, 2, st.Partitions)
	require.Equal(t, 2, st.Segments)
	require.Positive(t, st.Size)
	require.Equal(t, int64(3), st.PartitionStats[0].LogEndOffset)
	require.Equal(t, int64(0), st.PartitionStats[0].RecoveryPoint)
}

// TestInternalTopicsRefuseUsers: the internal topics the coordinators keep
// refuse every write and deletion of a caller outside the coordinators,
// with ErrInternalTopic, and change nothing: appends, DeleteRecordsBefore
// (which erased every group's commits, or an open transaction's state, at
// the next restart), DeleteTopic, AddPartitions and AlterTopicConfig. A
// CreateTopic of an internal topic that exists is ErrTopicExists, as Kafka
// answers it; of one that does not, ErrInternalTopic. What the
// coordinators wrote is all there after a restart.
func TestInternalTopicsRefuseUsers(t *testing.T) {
	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			d := e.open(t)
			ctx := context.Background()
			parts, err := d.InternalTopic(access.Internal{}, ctx, name, 2, nil)
			require.NoError(t, err)
			for _, l := range parts {
				_, err := l.AppendInternal(access.Internal{}, producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
				require.NoError(t, err)
			}
			before, err := d.DescribeTopic(name)
			require.NoError(t, err)

			_, err = parts[0].Append(producerBatch(t, 1, 10, e.clock.Now().UnixMilli(), record.None))
			require.ErrorIs(t, err, ErrInternalTopic)
			for _, off := range []int64{1, parts[1].HighWatermark()} {
				start, err := parts[1].DeleteRecordsBefore(off)
				require.ErrorIs(t, err, ErrInternalTopic, "DeleteRecordsBefore(%d)", off)
				require.Zero(t, start)
			}
			require.ErrorIs(t, d.DeleteTopic(ctx, name), ErrInternalTopic)
			require.ErrorIs(t, d.AddPartitions(ctx, name, 3), ErrInternalTopic)
			_, err = d.AlterTopicConfig(ctx, name, map[string]string{"cleanup.policy": "delete", "retention.ms": "1"})
			require.ErrorIs(t, err, ErrInternalTopic)
			_, err = d.CreateTopic(ctx, name, 1, nil)
			require.ErrorIs(t, err, ErrTopicExists)
			_, err = d.CreateTopic(ctx, "__share_group_state", 1, nil)
			require.ErrorIs(t, err, ErrInternalTopic)
			after, err := d.DescribeTopic(name)
			require.NoError(t, err)
			require.Equal(t, before, after, "nothing changed")

			require.NoError(t, d.Close())
			d = e.open(t)
			defer d.Close()
			for p := range int32(2) {
				l := partition(t, d, name, p)
				require.Zero(t, l.LogStartOffset())
				require.Len(t, records(t, l, 0), 3, "%s-%d keeps what the coordinator wrote", name, p)
			}
		})
	}
}

func TestInternalTopicsAndChanged(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	parts, err := d.InternalTopic(access.Internal{}, context.Background(), "__consumer_offsets", 2, map[string]string{"cleanup.policy": "compact"})
	require.NoError(t, err)
	require.Len(t, parts, 2)
	again, err := d.InternalTopic(access.Internal{}, context.Background(), "__consumer_offsets", 2, nil)
	require.NoError(t, err)
	require.Same(t, parts[0], again[0], "created once")
	_, err = d.InternalTopic(access.Internal{}, context.Background(), "users", 1, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)

	batch := producerBatch(t, 1, 10, e.clock.Now().UnixMilli(), record.None)
	_, err = parts[0].Append(batch)
	require.ErrorIs(t, err, ErrInternalTopic, "users may not append to internal topics")
	require.NoError(t, record.SetBaseOffset(batch, 0))

	changed := d.Changed()
	select {
	case <-changed:
		t.Fatal("closed before any append")
	default:
	}
	_, err = parts[0].AppendInternal(access.Internal{}, batch)
	require.NoError(t, err)
	<-changed // closed by the append
	desc, err := d.DescribeTopic("__consumer_offsets")
	require.NoError(t, err)
	require.True(t, desc.Internal)
}
