package consumer

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// env is a Dir with one partition of internal topics, and helpers to
// produce into it: on a memory filesystem (newEnv), or on the filesystem
// of a matrix case, writing batches compressed with its codec (newEnvFor).
type env struct {
	t     *testing.T
	mem   *vfs.MemFS // nil on the operating system's filesystem
	path  string
	codec record.Compression
	cfg   log.Config
	dir   *log.Dir
}

func newEnv(t *testing.T) *env { return newEnvFor(t, matrix.Case{}) }

// newEnvFor opens a Dir on c's filesystem; e.produce writes c.Codec
// batches of c.RecordsPerBatch() records.
func newEnvFor(t *testing.T, c matrix.Case) *env {
	t.Helper()
	fsys, path := c.Dir(t)
	e := &env{t: t, path: path, codec: c.Codec}
	e.mem, _ = fsys.(*vfs.MemFS)
	e.cfg = log.DefaultConfig()
	e.cfg.FS = fsys
	e.cfg.OffsetsTopicNumPartitions = 1
	e.open()
	t.Cleanup(func() { _ = e.dir.Close() })
	return e
}

func (e *env) open() {
	d, err := log.Open(context.Background(), e.path, e.cfg)
	require.NoError(e.t, err)
	e.dir = d
}

// reopen closes and reopens the Dir (a restart of the process).
func (e *env) reopen() {
	require.NoError(e.t, e.dir.Close())
	e.open()
}

func (e *env) topic(name string, partitions int32) {
	_, err := e.dir.CreateTopic(context.Background(), name, partitions, nil)
	require.NoError(e.t, err)
}

// produce appends n records with keys k0..k{n-1}, values v0..v{n-1}, to a
// partition, in batches of up to 100 records compressed with the env's
// codec. (The consumer's tests write through the log, not the producer
// package, which imports this one.)
func (e *env) produce(topic string, partition int32, n int) {
	l, err := e.dir.Partition(topic, partition)
	require.NoError(e.t, err)
	require.NoError(e.t, appendRecords(l, e.codec, n, 100, func(i int) ([]byte, []byte) {
		return []byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("v%d", i))
	}))
}

// appendRecords appends n records in batches of perBatch compressed with
// codec, as a non-idempotent producer writes them; kv gives record i's key
// and value.
func appendRecords(l *log.Log, codec record.Compression, n, perBatch int, kv func(i int) (key, value []byte)) error {
	var b record.Builder
	for i := 0; i < n; {
		b.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			Attributes: record.Attributes(0).WithCompression(codec)}, record.DefaultLevel)
		for j := 0; j < perBatch && i < n; j, i = j+1, i+1 {
			k, v := kv(i)
			if err := b.Append(time.Now().UnixMilli(), k, v, nil); err != nil {
				return err
			}
		}
		batch, err := b.Build()
		if err != nil {
			return err
		}
		if _, err := l.Append(batch); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) consumer(mod func(*Config)) *Consumer {
	cfg := DefaultConfig()
	cfg.AutoOffsetReset = OffsetResetEarliest
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(e.dir, cfg)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// pollN polls until n records arrived (each Poll bounded by a timeout).
func pollN(t *testing.T, c *Consumer, n int) []Record {
	t.Helper()
	var out []Record
	for len(out) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		recs, err := c.Poll(ctx)
		cancel()
		require.NoError(t, err, "after %d of %d records", len(out), n)
		for i := range recs {
			out = append(out, recs[i].Clone())
		}
	}
	return out
}

func tp(topic string, p int32) TopicPartition { return TopicPartition{Topic: topic, Partition: p} }

func TestAssignPollSeek(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 2)
	e.produce("t", 0, 1200)
	e.produce("t", 1, 30)
	c := e.consumer(nil)
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0), tp("t", 1)}))
	recs := pollN(t, c, 1230)
	require.Len(t, recs, 1230)
	next := map[int32]int64{}
	for _, r := range recs {
		require.Equal(t, next[r.Partition], r.Offset, "in order, no gaps, per partition")
		require.Equal(t, fmt.Sprintf("v%d", r.Offset), string(r.Value))
		next[r.Partition]++
	}
	pos, err := c.Position(tp("t", 0))
	require.NoError(t, err)
	require.Equal(t, int64(1200), pos)
	lag, err := c.Lag(tp("t", 0))
	require.NoError(t, err)
	require.Zero(t, lag)

	require.NoError(t, c.Seek(tp("t", 0), 1195))
	require.NoError(t, c.Pause(tp("t", 1)))
	got := pollN(t, c, 5)
	require.Equal(t, int64(1195), got[0].Offset)
	require.Equal(t, []TopicPartition{tp("t", 1)}, c.Paused())

	require.NoError(t, c.SeekToBeginning(tp("t", 1)))
	require.NoError(t, c.Resume(tp("t", 1)))
	got = pollN(t, c, 30)
	require.Equal(t, int32(1), got[0].Partition)
	require.Equal(t, int64(0), got[0].Offset)

	ends, err := c.EndOffsets([]TopicPartition{tp("t", 0)})
	require.NoError(t, err)
	require.Equal(t, int64(1200), ends[tp("t", 0)])
	require.ErrorIs(t, c.Seek(tp("t", 9), 0), ErrNotAssigned)
}

// TestPollWaitsForData: Poll blocks until an append, without polling, and
// returns ctx's error when nothing comes.
func TestPollWaitsForData(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	c := e.consumer(nil)
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	recs, err := c.Poll(ctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, recs)

	done := make(chan []Record)
	go func() {
		recs, err := c.Poll(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- recs
	}()
	e.produce("t", 0, 3)
	require.Len(t, <-done, 3)
}

func TestMaxPollRecordsAndReset(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 100)
	latest := e.consumer(func(c *Config) { c.AutoOffsetReset = OffsetResetLatest })
	require.NoError(t, latest.Assign([]TopicPartition{tp("t", 0)}))
	pos, err := latest.Position(tp("t", 0))
	require.NoError(t, err)
	require.Equal(t, int64(100), pos)

	none := e.consumer(func(c *Config) { c.AutoOffsetReset = OffsetResetNone; c.GroupID = "g" })
	require.NoError(t, none.Assign([]TopicPartition{tp("t", 0)}))
	_, err = none.Poll(context.Background())
	require.ErrorIs(t, err, ErrNoOffset)

	small := e.consumer(func(c *Config) { c.MaxPollRecords = 7 })
	require.NoError(t, small.Assign([]TopicPartition{tp("t", 0)}))
	recs, err := small.Poll(context.Background())
	require.NoError(t, err)
	require.Len(t, recs, 7)
	recs, err = small.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(7), recs[0].Offset, "the rest of a fetched batch comes next")
}

func TestCommittedOffsetsSurviveRestart(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	e.produce("t", 0, 50)
	c := e.consumer(func(c *Config) { c.GroupID = "g" })
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	pollN(t, c, 20)
	require.NoError(t, c.CommitSync(context.Background(), map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 20, LeaderEpoch: -1, Metadata: "m"}}))
	committed, err := c.Committed([]TopicPartition{tp("t", 0)})
	require.NoError(t, err)
	require.Equal(t, OffsetAndMetadata{Offset: 20, LeaderEpoch: -1, Metadata: "m"}, committed[tp("t", 0)])
	require.NoError(t, c.Close(context.Background()))

	e.reopen()
	c2 := e.consumer(func(c *Config) { c.GroupID = "g" })
	require.NoError(t, c2.Assign([]TopicPartition{tp("t", 0)}))
	recs := pollN(t, c2, 30)
	require.Equal(t, int64(20), recs[0].Offset, "resumes from the committed offset after a restart")

	// The commit is a record of __consumer_offsets, where Kafka keeps it.
	l, err := e.dir.Partition("__consumer_offsets", 0)
	require.NoError(t, err)
	require.Positive(t, l.LogEndOffset())
}

// TestCommitUnknownPartition: a commit naming a topic that does not
// exist, or a partition beyond the topic's, fails with
// log.ErrUnknownTopicOrPartition and commits the others only, as Kafka's
// broker answers its consumer; CommitAsync reports the same.
func TestCommitUnknownPartition(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	c := e.consumer(func(c *Config) { c.GroupID = "g" })
	ctx := context.Background()
	err := c.CommitSync(ctx, map[TopicPartition]OffsetAndMetadata{
		tp("t", 0): {Offset: 5, LeaderEpoch: -1}, tp("t", 3): {Offset: 5, LeaderEpoch: -1}, tp("absent", 0): {Offset: 5, LeaderEpoch: -1},
	})
	require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)
	require.ErrorContains(t, err, "absent-0")
	require.ErrorContains(t, err, "t-3")
	committed, err := c.Committed([]TopicPartition{tp("t", 0), tp("t", 3), tp("absent", 0)})
	require.NoError(t, err)
	require.Equal(t, map[TopicPartition]OffsetAndMetadata{tp("t", 0): {Offset: 5, LeaderEpoch: -1}}, committed)

	done := make(chan error, 1)
	c.CommitAsync(map[TopicPartition]OffsetAndMetadata{tp("absent", 1): {Offset: 1, LeaderEpoch: -1}}, func(_ map[TopicPartition]OffsetAndMetadata, err error) { done <- err })
	require.ErrorIs(t, <-done, log.ErrUnknownTopicOrPartition)
	require.NoError(t, c.Close(ctx))
}

func TestConcurrentUseDetected(t *testing.T) {
	e := newEnv(t)
	e.topic("t", 1)
	c := e.consumer(nil)
	require.NoError(t, c.Assign([]TopicPartition{tp("t", 0)}))
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		close(started)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _ = c.Poll(ctx)
		close(done)
	}()
	<-started
	for c.inUse.Load() == 0 {
		runtime.Gosched() // wait until the Poll has entered
		select {
		case <-done:
			t.Fatal("Poll returned before the check")
		default:
		}
	}
	require.ErrorIs(t, c.Seek(tp("t", 0), 0), ErrConcurrentUse)
	<-done
}

func newMemFS() *vfs.MemFS { return vfs.NewMem() }
