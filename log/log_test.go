package log

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

func TestAppendAssignsOffsets(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "orders", 3, nil)
	l := partition(t, d, "orders", 1)
	ts := e.clock.Now().UnixMilli()
	for i := range 5 {
		res, err := l.Append(producerBatch(t, 10, 20, ts, record.None))
		require.NoError(t, err)
		require.Equal(t, int64(i*10), res.BaseOffset)
		require.Equal(t, int64(i*10+9), res.LastOffset)
		require.Equal(t, record.NoTimestamp, res.LogAppendTime)
	}
	require.Equal(t, int64(50), l.LogEndOffset())
	require.Equal(t, l.LogEndOffset(), l.HighWatermark())
	recs := records(t, l, 0)
	require.Len(t, recs, 50)
	for i, r := range recs {
		require.Equal(t, int64(i), r.Offset)
	}
	require.Len(t, records(t, l, 37), 13, "reads start at the offset asked for")

	res, err := l.Read(50, 1<<20, true)
	require.NoError(t, err)
	require.Nil(t, res.Slice, "nothing at the log end offset")
	_, err = l.Read(51, 1<<20, true)
	var oor *OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	require.Equal(t, int64(0), oor.LogStartOffset)
	require.Equal(t, int64(50), oor.LogEndOffset)

	// The stored batches carry the leader epoch 0 and the assigned offsets.
	res, err = l.Read(0, 1<<20, true)
	require.NoError(t, err)
	defer res.Release()
	b, err := res.Slice.Bytes(nil)
	require.NoError(t, err)
	h, err := record.ParseHeader(b)
	require.NoError(t, err)
	require.Equal(t, int32(0), h.PartitionLeaderEpoch)
}

func TestAppendValidation(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "plain", 1, map[string]string{"max.message.bytes": "2000"})
	createTopic(t, d, "compacted", 1, map[string]string{"cleanup.policy": "compact"})
	now := e.clock.Now().UnixMilli()
	tests := []struct {
		name  string
		topic string
		batch func() []byte
		want  error
	}{
		{"corrupt CRC", "plain", func() []byte { b := producerBatch(t, 1, 10, now, record.None); b[len(b)-1] ^= 1; return b }, record.ErrCRC},
		{"base offset not 0", "plain", func() []byte {
			b := producerBatch(t, 1, 10, now, record.None)
			require.NoError(t, record.SetBaseOffset(b, 5))
			return b
		}, ErrInvalidRecord},
		{"too large", "plain", func() []byte { return producerBatch(t, 1, 3000, now, record.None) }, ErrRecordTooLarge},
		{"control batch", "plain", func() []byte {
			b, err := record.AppendEndTxnMarkerBatch(nil, 0, -1, 1, 0, now, record.EndTxnMarker{Type: record.ControlCommit})
			require.NoError(t, err)
			return b
		}, ErrInvalidRecord},
		{"producer id without sequence", "plain", func() []byte {
			b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: 5, ProducerEpoch: 0, BaseSequence: -1}, 0, []record.Record{{Timestamp: now, Key: []byte("k")}})
			require.NoError(t, err)
			return b
		}, ErrInvalidRecord},
		{"LogAppendTime from a producer", "plain", func() []byte {
			b := producerBatch(t, 1, 10, now, record.None)
			require.NoError(t, record.SetLogAppendTime(b, now))
			return b
		}, ErrInvalidTimestamp},
		{"timestamp too far ahead", "plain", func() []byte { return producerBatch(t, 1, 10, now+2*time.Hour.Milliseconds(), record.None) }, ErrInvalidTimestamp},
		{"null key on a compacted topic", "compacted", func() []byte {
			b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, 0,
				[]record.Record{{Timestamp: now, Key: []byte("a")}, {OffsetDelta: 1, Timestamp: now, Key: nil, Value: []byte("x")}})
			require.NoError(t, err)
			return b
		}, ErrInvalidRecord},
		{"count disagrees with offsets", "plain", func() []byte {
			b, err := record.AppendBatch(nil, record.BatchHeader{LastOffsetDelta: 3, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, 0,
				[]record.Record{{Timestamp: now, Key: []byte("a")}})
			require.NoError(t, err)
			return b
		}, ErrInvalidRecord},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := partition(t, d, tc.topic, 0)
			before := l.LogEndOffset()
			_, err := l.Append(tc.batch())
			require.ErrorIs(t, err, tc.want)
			var pe *PartitionError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.topic, pe.Topic)
			require.Equal(t, before, l.LogEndOffset(), "nothing appended")
		})
	}
	// A timestamp of -1 is never checked.
	_, err := partition(t, d, "plain", 0).Append(producerBatch(t, 1, 10, -1, record.None))
	require.NoError(t, err)
}

func TestLogAppendTimeAndRecompression(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "lat", 1, map[string]string{"message.timestamp.type": "LogAppendTime", "compression.type": "zstd"})
	l := partition(t, d, "lat", 0)
	res, err := l.Append(producerBatch(t, 20, 100, 1, record.None))
	require.NoError(t, err)
	require.Equal(t, e.clock.Now().UnixMilli(), res.LogAppendTime)
	fr, err := l.Read(0, 1<<20, true)
	require.NoError(t, err)
	defer fr.Release()
	b, err := fr.Slice.Bytes(nil)
	require.NoError(t, err)
	h, err := record.Validate(b)
	require.NoError(t, err)
	require.Equal(t, record.Zstd, h.Attributes.Compression(), "recompressed to the topic's codec")
	require.Equal(t, record.LogAppendTime, h.Attributes.TimestampType())
	for _, r := range records(t, l, 0) {
		require.Equal(t, res.LogAppendTime, r.Timestamp)
	}
}

func TestRollAndReadAcrossSegments(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "5000", "index.interval.bytes": "100"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	for range 40 {
		_, err := l.Append(producerBatch(t, 5, 100, now, record.None))
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, len(l.local.segs()), 5, "segment.bytes rolls segments")
	for i, s := range l.local.segs()[1:] {
		require.LessOrEqual(t, l.local.segs()[i].Size(), int64(5000))
		require.Equal(t, s.BaseOffset()%5, int64(0), "named by the first offset of the batch that rolled it")
	}
	require.Len(t, records(t, l, 0), 200)
	require.Len(t, records(t, l, 123), 77)
	require.NoError(t, d.Close())

	d = e.open(t)
	defer d.Close()
	require.True(t, d.Recovery().Clean)
	require.Zero(t, d.Recovery().SegmentsRecovered)
	l = partition(t, d, "t", 0)
	require.Equal(t, int64(200), l.LogEndOffset())
	require.Len(t, records(t, l, 0), 200)
}

func TestRetention(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "bytes", 1, map[string]string{"segment.bytes": "3000", "retention.bytes": "7000", "file.delete.delay.ms": "0"})
	createTopic(t, d, "time", 1, map[string]string{"segment.bytes": "3000", "retention.ms": "60000"})
	now := e.clock.Now().UnixMilli()
	for _, name := range []string{"bytes", "time"} {
		for range 20 {
			_, err := partition(t, d, name, 0).Append(producerBatch(t, 5, 100, now, record.None))
			require.NoError(t, err)
		}
	}
	lb := partition(t, d, "bytes", 0)
	res, err := lb.EnforceRetention()
	require.NoError(t, err)
	require.Positive(t, res.SegmentsDeleted)
	var total int64
	for _, s := range lb.local.segs() {
		total += s.Size()
	}
	// Kafka deletes the oldest segments while the excess covers them whole,
	// so what stays is at most retention.bytes plus less than one segment.
	require.Greater(t, total, int64(7000))
	require.Less(t, total-lb.local.segs()[0].Size(), int64(7000))
	require.Equal(t, lb.local.segs()[0].BaseOffset(), lb.LogStartOffset())
	_, err = lb.Read(0, 100, true)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	require.NoError(t, lb.RemoveDeleted(false))
	names, err := e.mem.List("/data/bytes-0")
	require.NoError(t, err)
	for _, n := range names {
		require.NotContains(t, n.Name, ".deleted", "file.delete.delay.ms=0 removes at once")
	}

	lt := partition(t, d, "time", 0)
	res, err = lt.EnforceRetention()
	require.NoError(t, err)
	require.Zero(t, res.SegmentsDeleted, "nothing is older than retention.ms yet")
	e.clock.Add(-time.Hour)
	res, err = lt.EnforceRetention()
	require.NoError(t, err)
	require.Zero(t, res.SegmentsDeleted, "a clock that went backwards deletes nothing")
	e.clock.Add(2 * time.Hour)
	res, err = lt.EnforceRetention()
	require.NoError(t, err)
	require.Equal(t, int64(100), lt.LogStartOffset(), "a quiet topic expires whole: the active segment is rolled first")
	require.Equal(t, int64(100), lt.LogEndOffset())
	require.Len(t, lt.local.segs(), 1)
	require.Zero(t, lt.local.segs()[0].Size())
	require.NoError(t, d.Close())

	// Kafka checkpoints a log start offset only above the first segment's
	// base; here the segments carry it.
	lso, err := checkpoint.ReadOffsets(e.mem, "/data/"+checkpoint.LogStartOffsetFile)
	require.NoError(t, err)
	require.NotContains(t, lso, checkpoint.TopicPartition{Topic: "time", Partition: 0})

	// Inside a segment, the start offset survives a restart through
	// log-start-offset-checkpoint.
	d = e.open(t)
	require.Equal(t, int64(100), partition(t, d, "time", 0).LogStartOffset())
	lb = partition(t, d, "bytes", 0)
	inside := lb.local.segs()[0].BaseOffset() + 2
	_, err = lb.DeleteRecordsBefore(inside)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	lso, err = checkpoint.ReadOffsets(e.mem, "/data/"+checkpoint.LogStartOffsetFile)
	require.NoError(t, err)
	require.Equal(t, inside, lso[checkpoint.TopicPartition{Topic: "bytes", Partition: 0}])
	d = e.open(t)
	defer d.Close()
	require.Equal(t, inside, partition(t, d, "bytes", 0).LogStartOffset())
}

func TestDurableAppendsSurviveCrash(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "20000"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	var wg sync.WaitGroup
	acked := make([]int64, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last int64 = -1
			for range 10 {
				res, err := l.AppendDurable(context.Background(), producerBatch(t, 3, 50, now, record.None))
				if err != nil {
					t.Error(err)
					return
				}
				last = res.LastOffset
			}
			acked[g] = last
		}()
	}
	wg.Wait()
	_, err := l.Append(producerBatch(t, 3, 50, now, record.None)) // not durable
	require.NoError(t, err)
	var maxAcked int64
	for _, a := range acked {
		maxAcked = max(maxAcked, a)
	}
	e.crash() // without Close: no clean-shutdown marker survives either
	d2 := e.open(t)
	defer d2.Close()
	require.False(t, d2.Recovery().Clean)
	l2 := partition(t, d2, "t", 0)
	require.GreaterOrEqual(t, l2.LogEndOffset(), maxAcked+1, "every acknowledged durable append survived")
	recs := records(t, l2, 0)
	for i, r := range recs {
		require.Equal(t, int64(i), r.Offset, "a clean prefix")
	}
	_ = d.Close()
}

func TestWaitForData(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	done := make(chan error)
	go func() { done <- l.WaitForData(context.Background(), 0) }()
	select {
	case err := <-done:
		t.Fatalf("returned before any append: %v", err)
	case <-time.After(10 * time.Millisecond):
	}
	_, err := l.Append(producerBatch(t, 1, 1, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	require.NoError(t, <-done)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- l.WaitForData(ctx, 1) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

func TestOffsetForTimestamp(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "2000"})
	l := partition(t, d, "t", 0)
	base := e.clock.Now().UnixMilli() - 10_000
	for i := range 30 {
		_, err := l.Append(producerBatch(t, 2, 50, base+int64(i)*100, record.None))
		require.NoError(t, err)
	}
	got, ok, err := l.OffsetForTimestamp(base + 1050)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, OffsetAndTimestamp{Offset: 22, Timestamp: base + 1100}, got)
	_, ok, err = l.OffsetForTimestamp(base + 100_000)
	require.NoError(t, err)
	require.False(t, ok)
	got, _, _ = l.OffsetForTimestamp(EarliestTimestamp)
	require.Equal(t, int64(0), got.Offset)
	got, _, _ = l.OffsetForTimestamp(LatestTimestamp)
	require.Equal(t, int64(60), got.Offset)
	got, ok, err = l.OffsetForTimestamp(MaxTimestamp)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, OffsetAndTimestamp{Offset: 58, Timestamp: base + 2900}, got)
}

func TestDeleteRecordsAndTruncate(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "2000"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	for range 30 {
		_, err := l.Append(producerBatch(t, 2, 50, now, record.None))
		require.NoError(t, err)
	}
	start, err := l.DeleteRecordsBefore(25)
	require.NoError(t, err)
	require.Equal(t, int64(25), start)
	require.Len(t, records(t, l, 25), 35)
	_, err = l.Read(24, 100, true)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	_, err = l.DeleteRecordsBefore(61)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)

	require.NoError(t, l.TruncateTo(40))
	require.Equal(t, int64(40), l.LogEndOffset())
	require.Len(t, records(t, l, 25), 15)
	res, err := l.Append(producerBatch(t, 2, 50, now, record.None))
	require.NoError(t, err)
	require.Equal(t, int64(40), res.BaseOffset)
}

func TestSecondOpenIsLocked(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	_, err := Open(context.Background(), "/data", e.cfg)
	require.ErrorIs(t, err, ErrDirLocked)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close returns nil")
	d = e.open(t)
	require.NoError(t, d.Close())

	other := e.cfg
	other.NodeID = 7
	_, err = Open(context.Background(), "/data", other)
	require.ErrorIs(t, err, ErrInvalidConfig, "meta.properties names node 0")
}

func TestTopicAdministration(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	props := map[string]string{"retention.ms": "1000", "min.insync.replicas": "2"}
	_, unused, err := ParseTopicConfig(props)
	require.NoError(t, err)
	require.Equal(t, []string{"min.insync.replicas"}, unused, "ParseTopicConfig lists what kafkalite does not use")
	desc, err := d.CreateTopic(context.Background(), "a.b", 2, props)
	require.NoError(t, err)
	require.Equal(t, "a.b", desc.Name)
	require.Equal(t, int32(2), desc.Partitions)
	require.NotEmpty(t, desc.ID)
	require.Equal(t, time.Second, desc.Config.Retention, "the configuration in force")
	require.Equal(t, props, desc.Overrides)
	_, err = d.CreateTopic(context.Background(), "a_b", 1, nil)
	require.ErrorIs(t, err, ErrTopicExists, "collides after '.' = '_'")
	_, err = d.CreateTopic(context.Background(), "a.b", 1, nil)
	require.ErrorIs(t, err, ErrTopicExists)
	_, err = d.CreateTopic(context.Background(), "../escape", 1, nil)
	require.ErrorIs(t, err, ErrInvalidTopicName)
	_, err = d.CreateTopic(context.Background(), "__consumer_offsets", 1, nil)
	require.ErrorIs(t, err, ErrInternalTopic)
	_, err = d.CreateTopic(context.Background(), "x", 1, map[string]string{"no.such.property": "1"})
	require.ErrorIs(t, err, ErrUnknownProperty)
	_, err = d.CreateTopic(context.Background(), "x", 1, map[string]string{"segment.bytes": "1"})
	require.ErrorIs(t, err, ErrInvalidConfig)

	desc, err = d.DescribeTopic("a.b")
	require.NoError(t, err)
	require.Equal(t, int32(2), desc.Partitions)
	require.Equal(t, time.Second, desc.Config.Retention)
	altered, err := d.AlterTopicConfig(context.Background(), "a.b", map[string]string{"retention.ms": "5000"})
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, altered.Config.Retention, "the new description")
	require.Equal(t, 5*time.Second, partition(t, d, "a.b", 1).Config().Retention)
	require.NoError(t, d.AddPartitions(context.Background(), "a.b", 4))
	require.NotNil(t, partition(t, d, "a.b", 3))
	require.Equal(t, []string{"a.b"}, d.Topics())

	l := partition(t, d, "a.b", 0)
	require.NoError(t, d.DeleteTopic(context.Background(), "a.b"))
	_, err = l.Append(producerBatch(t, 1, 1, e.clock.Now().UnixMilli(), record.None))
	require.ErrorIs(t, err, ErrTopicDeleted)
	_, err = l.Read(0, 10, true)
	require.ErrorIs(t, err, ErrTopicDeleted)
	_, err = d.Partition("a.b", 0)
	require.ErrorIs(t, err, ErrUnknownTopicOrPartition)
	require.ErrorIs(t, d.DeleteTopic(context.Background(), "__consumer_offsets"), ErrUnknownTopicOrPartition,
		"not created yet (TestInternalTopicsRefuseUsers deletes one that exists)")
}

func TestDirectoryLayout(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "orders", 2, nil)
	_, err := partition(t, d, "orders", 0).Append(producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	require.NoError(t, d.Close())
	for _, name := range []string{".lock", "meta.properties", ".kafka_cleanshutdown", "recovery-point-offset-checkpoint",
		"log-start-offset-checkpoint", "replication-offset-checkpoint", "kafkalite-topics.json",
		"orders-0/00000000000000000000.log", "orders-0/00000000000000000000.index", "orders-0/00000000000000000000.timeindex",
		"orders-0/partition.metadata", "orders-0/leader-epoch-checkpoint", "orders-1/00000000000000000000.log"} {
		_, err := e.mem.Stat(filepath.Join("/data", name))
		require.NoError(t, err, name)
	}
	rp, err := checkpoint.ReadOffsets(e.mem, "/data/recovery-point-offset-checkpoint")
	require.NoError(t, err)
	require.Equal(t, map[checkpoint.TopicPartition]int64{{Topic: "orders", Partition: 0}: 3, {Topic: "orders", Partition: 1}: 0}, rp)
	epochs, err := checkpoint.ReadLeaderEpochs(e.mem, "/data/orders-0/leader-epoch-checkpoint")
	require.NoError(t, err)
	require.Equal(t, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}}, epochs)
	idx, err := e.mem.Stat("/data/orders-0/00000000000000000000.index")
	require.NoError(t, err)
	require.Zero(t, idx.Size%8, "trimmed to its entries on close")
	require.Less(t, idx.Size, int64(10<<20))
}

func TestStrayFilesAndCorruptCheckpoints(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	_, err := partition(t, d, "t", 0).Append(producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	require.NoError(t, d.Close())
	for name, data := range map[string]string{
		"/data/notes.txt":                        "hello",
		"/data/t-0/README":                       "x",
		"/data/recovery-point-offset-checkpoint": "garbage\n",
		"/data/log-start-offset-checkpoint":      "0\n5\n",
		"/data/t-0/leader-epoch-checkpoint":      "1\n",
		"/data/t-0/00000000000000000000.index":   "bad",
		"/data/t-0/00000000000000000099.index":   "orphan index",
	} {
		f, err := e.mem.Create(name + ".x")
		require.NoError(t, err)
		_, err = f.Write([]byte(data))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, e.mem.Rename(name+".x", name))
	}
	d = e.open(t)
	defer d.Close()
	l := partition(t, d, "t", 0)
	require.Equal(t, int64(3), l.LogEndOffset())
	require.Len(t, records(t, l, 0), 3)
	_, err = e.mem.Stat("/data/t-0/00000000000000000099.index")
	require.ErrorIs(t, err, fs.ErrNotExist, "orphan index files are removed")
}

func TestStorageFailure(t *testing.T) {
	e := newEnv(t)
	ffs := vfs.NewFaultFS(e.mem)
	e.cfg.FS = ffs
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	_, err := l.AppendDurable(context.Background(), producerBatch(t, 2, 10, now, record.None))
	require.NoError(t, err)
	ffs.Inject(vfs.Rule{Op: vfs.OpWrite, Path: ".log", Nth: 1, Err: syscall.ENOSPC})
	_, err = l.Append(producerBatch(t, 2, 10, now, record.None))
	require.ErrorIs(t, err, ErrStorage)
	require.ErrorIs(t, err, syscall.ENOSPC)
	_, err = l.Append(producerBatch(t, 2, 10, now, record.None))
	require.ErrorIs(t, err, ErrStorage, "the partition refuses appends until reopened")
	require.Len(t, records(t, l, 0), 2, "what was acknowledged stays readable")
	ffs.Clear()
	_ = d.Close()

	e.cfg.FS = e.mem
	d = e.open(t)
	defer d.Close()
	l = partition(t, d, "t", 0)
	require.Equal(t, int64(2), l.LogEndOffset())
	_, err = l.Append(producerBatch(t, 2, 10, now, record.None))
	require.NoError(t, err)
}

func TestReadRecord(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, map[string]string{"segment.bytes": "20000"})
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	for i := range 20 {
		codec := record.None
		if i%2 == 1 {
			codec = record.LZ4
		}
		_, err := l.Append(producerBatch(t, 50, 20, now, codec))
		require.NoError(t, err)
	}
	for _, off := range []int64{0, 1, 49, 50, 123, 777, 999} {
		rec, ok, err := l.ReadRecord(off)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, off, rec.Offset)
		require.Equal(t, []byte(fmt.Sprintf("k%d", off%50)), rec.Key)
	}
	_, ok, err := l.ReadRecord(1000)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestAppendRewritesTheBatch: Append writes the offset it assigns into the
// caller's slice, so appending the same slice again is refused, in Kafka's
// words naming the partition and the offset the first Append wrote (the
// message said "base offset 0, not 50" of a batch whose base offset was
// 50 because of that first Append); a copy made before resends, and an
// idempotent producer's resend is the first append's duplicate.
func TestAppendRewritesTheBatch(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	now := e.clock.Now().UnixMilli()
	_, err := l.Append(producerBatch(t, 50, 10, now, record.None))
	require.NoError(t, err)

	batch, _ := idempotentBatch(t, 7, 0, 0, 3, now)
	kept := bytes.Clone(batch)
	first, err := l.Append(batch)
	require.NoError(t, err)
	require.Equal(t, int64(50), first.BaseOffset)
	h, err := record.ParseHeader(batch)
	require.NoError(t, err)
	require.Equal(t, int64(50), h.BaseOffset, "Append rewrote the caller's slice")

	_, err = l.Append(batch)
	require.ErrorIs(t, err, ErrInvalidRecord)
	require.Contains(t, err.Error(), "the baseOffset of the record batch in the append to t-0 should be 0, but it is 50")

	again, err := l.Append(kept)
	require.NoError(t, err)
	require.Equal(t, first.BaseOffset, again.BaseOffset, "the copy is the first append's duplicate")
	require.Equal(t, int64(53), l.LogEndOffset())
}
