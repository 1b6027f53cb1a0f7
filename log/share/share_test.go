package share

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/internal/sharecodec"
	"github.com/kafkalite/kafkalite/internal/testkit/testclock"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

var ctx = context.Background()

// env is a Dir with topic t and its share-partition manager.
type env struct {
	t     *testing.T
	mem   *vfs.MemFS // nil on the OS filesystem
	path  string
	cfg   log.Config
	clock *testclock.Clock
	dir   *log.Dir
	m     *PartitionManager
	lim   limits
	reset resetPolicy
	codec record.Compression
}

func newEnv(t *testing.T, onDisk bool, partitions int32) *env {
	e := &env{t: t, clock: testclock.New(time.Unix(1_700_000_000, 0)), cfg: log.DefaultConfig(),
		lim: limits{lock: 30 * time.Second, delivery: 5, maxLocks: 2000, renew: true}, reset: resetPolicy{earliest: true}}
	e.cfg.Now = e.clock.Now
	if onDisk {
		e.path = t.TempDir()
	} else {
		e.mem, e.path = vfs.NewMem(), "/data"
		e.cfg.FS = e.mem
	}
	e.open()
	_, err := e.dir.CreateTopic(ctx, "t", partitions, nil)
	require.NoError(t, err)
	return e
}

func (e *env) open() {
	e.t.Helper()
	d, err := log.Open(ctx, e.path, e.cfg)
	require.NoError(e.t, err)
	e.dir = d
	e.t.Cleanup(func() { _ = d.Close() })
	e.m, err = Partitions(ctx, d)
	require.NoError(e.t, err)
	again, err := Partitions(ctx, d)
	require.NoError(e.t, err)
	require.Same(e.t, e.m, again, "one manager per Dir")
	e.m.settings = func(string) (limits, resetPolicy) { return e.lim, e.reset }
}

// reopen closes the Dir cleanly and opens it again.
func (e *env) reopen() {
	e.t.Helper()
	require.NoError(e.t, e.dir.Close())
	e.open()
}

// crash opens the Dir again on what was durable (memory filesystem only).
func (e *env) crash() {
	e.t.Helper()
	e.mem = e.mem.CrashClone()
	require.NoError(e.t, e.dir.Close())
	e.cfg.FS = e.mem
	e.open()
}

func (e *env) log(p int32) *log.Log {
	l, err := e.dir.Partition("t", p)
	require.NoError(e.t, err)
	return l
}

// produce appends batches of the given sizes to t-p, plain or
// transactional (producer pid), and returns the offset after them.
func (e *env) produce(p int32, pid int64, sizes ...int) int64 {
	e.t.Helper()
	l := e.log(p)
	for _, n := range sizes {
		var b record.Builder
		h := record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
			Attributes: record.Attributes(0).WithCompression(e.codec)}
		if pid >= 0 {
			h.ProducerID, h.ProducerEpoch, h.BaseSequence = pid, 0, int32(e.seq(l, pid))
			h.Attributes = h.Attributes.WithTransactional(true)
			require.NoError(e.t, l.VerifyTransaction(access.Internal{}, pid, 0))
		}
		b.Reset(h, record.DefaultLevel)
		for i := range n {
			require.NoError(e.t, b.Append(e.clock.Now().UnixMilli(), nil, fmt.Appendf(nil, "v%d", i), nil))
		}
		batch, err := b.Build()
		require.NoError(e.t, err)
		_, err = l.Append(batch)
		require.NoError(e.t, err)
	}
	require.NoError(e.t, l.Flush(ctx))
	return l.LogEndOffset()
}

// seq returns the next sequence of producer pid in l.
func (e *env) seq(l *log.Log, pid int64) int64 {
	for _, p := range l.Producers() {
		if p.ProducerID == pid {
			return int64(p.LastSequence) + 1
		}
	}
	return 0
}

// end writes a transaction marker of producer pid to t-p.
func (e *env) end(p int32, pid int64, commit bool) {
	e.t.Helper()
	typ := record.ControlAbort
	if commit {
		typ = record.ControlCommit
	}
	_, err := e.log(p).AppendTxnMarker(access.Internal{}, pid, 0, record.EndTxnMarker{Type: typ})
	require.NoError(e.t, err)
}

func (e *env) acquire(member string, p int32, maxRecords int) Fetched {
	e.t.Helper()
	f, err := e.m.Acquire(ctx, FetchRequest{GroupID: "g", MemberID: member, Topic: "t", Partition: p, MaxRecords: maxRecords, MaxBytes: 1 << 20})
	require.NoError(e.t, err)
	if f.Acquired != nil {
		f.Records.Release()
	}
	return f
}

func (e *env) ack(member string, p int32, first, last int64, types ...AckType) error {
	return e.m.Acknowledge(ctx, "g", member, "t", p, []AckBatch{{FirstOffset: first, LastOffset: last, Types: types}})
}

func (e *env) offsets(p int32) PartitionOffset {
	e.t.Helper()
	po := e.m.Offsets("g", []log.TopicPartition{{Topic: "t", Partition: p}})
	require.Len(e.t, po, 1)
	return po[0]
}

func ranges(rs ...int64) []AcquiredRecords {
	var out []AcquiredRecords
	for i := 0; i < len(rs); i += 3 {
		out = append(out, AcquiredRecords{FirstOffset: rs[i], LastOffset: rs[i+1], DeliveryCount: int16(rs[i+2])})
	}
	return out
}

var codecs = []record.Compression{record.None, record.Gzip, record.Snappy, record.LZ4, record.Zstd}

// matrix runs fn over every codec, on the memory and OS filesystems.
func matrix(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, onDisk := range []bool{false, true} {
		for _, c := range codecs {
			t.Run(fmt.Sprintf("%s/disk=%v", c, onDisk), func(t *testing.T) {
				e := newEnv(t, onDisk, 1)
				e.codec = c
				fn(t, e)
			})
		}
	}
}

func TestAcquireAndAcknowledge(t *testing.T) {
	matrix(t, func(t *testing.T, e *env) {
		e.produce(0, -1, 3, 4, 3) // batches 0-2, 3-6, 7-9
		f := e.acquire("a", 0, 100)
		assert.Equal(t, ranges(0, 9, 1), f.Acquired)
		assert.Equal(t, 30*time.Second, f.LockDuration)
		assert.Empty(t, e.acquire("b", 0, 100).Acquired, "everything is acquired by a")

		require.NoError(t, e.ack("a", 0, 0, 4, AckAccept))
		require.NoError(t, e.ack("a", 0, 5, 6, AckRelease))
		require.NoError(t, e.ack("a", 0, 7, 7, AckReject))
		assert.Equal(t, int64(5), e.offsets(0).StartOffset)
		assert.Equal(t, int64(10-5-1), e.offsets(0).Lag, "5 and 6 released, 8 and 9 acquired; 7 done")

		assert.ErrorIs(t, e.ack("b", 0, 8, 9, AckAccept), ErrInvalidRecordState, "b never acquired 8-9")
		assert.ErrorIs(t, e.ack("a", 0, 5, 5, AckAccept), ErrInvalidRecordState, "5 was released")
		assert.ErrorIs(t, e.ack("a", 0, 10, 10, AckAccept), ErrInvalidRecordState, "never acquired")
		require.NoError(t, e.ack("a", 0, 0, 2, AckAccept), "before the start offset: done, skipped")

		assert.Equal(t, ranges(5, 6, 2), e.acquire("b", 0, 100).Acquired, "released records go to any member, delivered a second time")
		require.NoError(t, e.ack("a", 0, 8, 9, AckAccept))
		require.NoError(t, e.ack("b", 0, 5, 6, AckAccept))
		assert.Equal(t, int64(10), e.offsets(0).StartOffset)
		assert.Equal(t, int64(0), e.offsets(0).Lag)
		assert.Empty(t, e.acquire("a", 0, 100).Acquired)

		// Per-offset types, and a failed batch applies nothing.
		e.produce(0, -1, 4) // 10-13
		assert.Equal(t, ranges(10, 13, 1), e.acquire("a", 0, 100).Acquired)
		err := e.m.Acknowledge(ctx, "g", "a", "t", 0, []AckBatch{
			{FirstOffset: 10, LastOffset: 11, Types: []AckType{AckAccept}},
			{FirstOffset: 12, LastOffset: 14, Types: []AckType{AckAccept}},
		})
		assert.ErrorIs(t, err, ErrInvalidRecordState)
		assert.Equal(t, int64(10), e.offsets(0).StartOffset, "all or nothing")
		require.NoError(t, e.ack("a", 0, 10, 13, AckAccept, AckRelease, AckGap, AckAccept))
		assert.Equal(t, int64(11), e.offsets(0).StartOffset)
		assert.Equal(t, ranges(11, 11, 2), e.acquire("b", 0, 100).Acquired)
	})
}

func TestAcknowledgementShape(t *testing.T) {
	e := newEnv(t, false, 1)
	e.produce(0, -1, 5)
	e.acquire("a", 0, 10)
	for name, acks := range map[string][]AckBatch{
		"backwards":     {{FirstOffset: 3, LastOffset: 2, Types: []AckType{AckAccept}}},
		"negative":      {{FirstOffset: -1, LastOffset: 2, Types: []AckType{AckAccept}}},
		"overlap":       {{FirstOffset: 0, LastOffset: 2, Types: []AckType{AckAccept}}, {FirstOffset: 2, LastOffset: 3, Types: []AckType{AckAccept}}},
		"out of order":  {{FirstOffset: 3, LastOffset: 4, Types: []AckType{AckAccept}}, {FirstOffset: 0, LastOffset: 1, Types: []AckType{AckAccept}}},
		"types count":   {{FirstOffset: 0, LastOffset: 3, Types: []AckType{AckAccept, AckAccept}}},
		"no types":      {{FirstOffset: 0, LastOffset: 3}},
		"unknown type":  {{FirstOffset: 0, LastOffset: 0, Types: []AckType{5}}},
		"negative type": {{FirstOffset: 0, LastOffset: 0, Types: []AckType{-1}}},
	} {
		err := e.m.Acknowledge(ctx, "g", "a", "t", 0, acks)
		assert.ErrorIs(t, err, ErrInvalidRequest, name)
	}
	assert.Equal(t, int64(0), e.offsets(0).StartOffset, "nothing applied")
	e.lim.renew = false
	assert.ErrorIs(t, e.ack("a", 0, 0, 0, AckRenew), ErrInvalidRequest, "renew when share.renew.acknowledge.enable is false")
	_, err := e.m.Acquire(ctx, FetchRequest{GroupID: "g", Topic: "t"})
	assert.ErrorIs(t, err, ErrInvalidRequest, "no member id")
	_, err = e.m.Acquire(ctx, FetchRequest{MemberID: "a", Topic: "t"})
	assert.ErrorIs(t, err, ErrInvalidRequest, "no group id")
	_, err = e.m.Acquire(ctx, FetchRequest{GroupID: "g", MemberID: "a", Topic: "missing"})
	assert.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)
}

func TestDeliveryCountLimit(t *testing.T) {
	e := newEnv(t, false, 1)
	e.lim.delivery = 3
	e.produce(0, -1, 2)
	for i := 1; i <= 3; i++ {
		assert.Equal(t, ranges(0, 1, int64(i)), e.acquire("a", 0, 10).Acquired)
		require.NoError(t, e.ack("a", 0, 0, 1, AckRelease))
	}
	assert.Empty(t, e.acquire("a", 0, 10).Acquired, "archived after the third delivery")
	assert.Equal(t, int64(2), e.offsets(0).StartOffset)
}

func TestAcquisitionLocks(t *testing.T) {
	e := newEnv(t, false, 1)
	e.lim.delivery = 2
	e.produce(0, -1, 4)
	assert.Equal(t, ranges(0, 3, 1), e.acquire("a", 0, 10).Acquired)
	e.clock.Add(20 * time.Second)
	require.NoError(t, e.ack("a", 0, 2, 3, AckRenew))
	e.clock.Add(15 * time.Second)
	e.m.expireDue(e.clock.Now())
	assert.Equal(t, ranges(0, 1, 2), e.acquire("b", 0, 10).Acquired, "0-1's lock ran out; 2-3 were renewed")
	assert.ErrorIs(t, e.ack("a", 0, 0, 1, AckAccept), ErrInvalidRecordState, "a lost 0-1 with its lock")
	require.NoError(t, e.ack("a", 0, 2, 3, AckAccept))
	e.clock.Add(31 * time.Second)
	e.m.expireDue(e.clock.Now())
	assert.Empty(t, e.acquire("c", 0, 10).Acquired, "0-1 delivered twice, the limit: archived when the lock ran out")
	assert.Equal(t, int64(4), e.offsets(0).StartOffset)

	// The goroutine expires locks on its own, at the real clock.
	e.cfg.Now = nil
	e.reopen()
	e.lim.lock = 30 * time.Millisecond
	e.m.settings = func(string) (limits, resetPolicy) { return e.lim, e.reset }
	e.produce(0, -1, 1)
	assert.Equal(t, ranges(4, 4, 1), e.acquire("a", 0, 10).Acquired)
	require.Eventually(t, func() bool { return len(e.acquire("b", 0, 10).Acquired) == 1 }, 5*time.Second, 10*time.Millisecond)
}

func TestReleaseMember(t *testing.T) {
	e := newEnv(t, false, 2)
	e.produce(0, -1, 3)
	e.produce(1, -1, 3)
	e.acquire("a", 0, 10)
	e.acquire("a", 1, 10)
	require.NoError(t, e.m.ReleaseMember(ctx, "g", "a"))
	assert.Equal(t, ranges(0, 2, 2), e.acquire("b", 0, 10).Acquired)
	assert.Equal(t, ranges(0, 2, 2), e.acquire("b", 1, 10).Acquired)
	require.NoError(t, e.m.ReleaseMember(ctx, "g", "nobody"))

	// Released in the partitions named only, as a broker's share session
	// closing releases its own partitions.
	e.produce(0, -1, 2)
	e.produce(1, -1, 2)
	assert.Equal(t, ranges(3, 4, 1), e.acquire("c", 0, 10).Acquired)
	assert.Equal(t, ranges(3, 4, 1), e.acquire("c", 1, 10).Acquired)
	require.NoError(t, e.m.ReleaseMemberPartitions(ctx, "g", "c", []log.TopicPartition{{Topic: "t", Partition: 1}, {Topic: "gone", Partition: 0}}))
	assert.Empty(t, e.acquire("d", 0, 10).Acquired, "t-0 is not named: c keeps it")
	assert.Equal(t, ranges(3, 4, 2), e.acquire("d", 1, 10).Acquired)
	require.NoError(t, e.m.ReleaseMemberPartitions(ctx, "g", "c", nil))
}

func TestInFlightLimit(t *testing.T) {
	e := newEnv(t, false, 1)
	e.lim.maxLocks = 5
	e.produce(0, -1, 3, 3, 3)
	assert.Equal(t, ranges(0, 5, 1), e.acquire("a", 0, 100).Acquired, "whole batches until the limit is reached")
	assert.Empty(t, e.acquire("b", 0, 100).Acquired, "6 in flight, over the limit")
	require.NoError(t, e.ack("a", 0, 0, 2, AckAccept))
	assert.Equal(t, ranges(6, 8, 1), e.acquire("b", 0, 100).Acquired)
	require.NoError(t, e.ack("a", 0, 3, 3, AckRelease))
	assert.Equal(t, ranges(3, 3, 2), e.acquire("b", 0, 100).Acquired, "released records come back at the limit")
}

func TestMaxRecordsIsSoft(t *testing.T) {
	e := newEnv(t, false, 1)
	e.produce(0, -1, 3, 3, 3)
	assert.Equal(t, ranges(0, 5, 1), e.acquire("a", 0, 4).Acquired, "batches are acquired whole")
	assert.Equal(t, ranges(6, 8, 1), e.acquire("b", 0, 1).Acquired)
}

// TestAcquiredRecordsEndAtTheLastBatchAcquired: the records an acquisition
// returns end with the last batch it acquired from, not at the fetch's
// MaxBytes (which made every consumer read up to 1 MiB per acquisition,
// most of it for nothing): stopped by MaxRecords, by the in-flight limit,
// and for a released record delivered again; every codec, both
// filesystems.
func TestAcquiredRecordsEndAtTheLastBatchAcquired(t *testing.T) {
	matrix(t, func(t *testing.T, e *env) {
		e.produce(0, -1, 3, 3, 3, 3)
		// lastBatch acquires and returns the acquired ranges and the base
		// offsets of the batches of the records returned.
		lastBatch := func(member string, maxRecords int) ([]AcquiredRecords, []int64) {
			f, err := e.m.Acquire(ctx, FetchRequest{GroupID: "g", MemberID: member, Topic: "t", Partition: 0, MaxRecords: maxRecords, MaxBytes: 1 << 20})
			require.NoError(t, err)
			require.NotEmpty(t, f.Acquired)
			defer f.Records.Release()
			var bases []int64
			_, err = f.Records.Slice.Batches(nil, func(h *record.BatchHeader, _ []byte) error {
				bases = append(bases, h.BaseOffset)
				return nil
			})
			require.NoError(t, err)
			return f.Acquired, bases
		}
		acq, bases := lastBatch("a", 4)
		assert.Equal(t, ranges(0, 5, 1), acq)
		assert.Equal(t, []int64{0, 3}, bases, "MaxRecords: the two batches acquired, not the four fetched")
		require.NoError(t, e.ack("a", 0, 1, 1, AckRelease))
		acq, bases = lastBatch("b", 1)
		assert.Equal(t, ranges(1, 1, 2), acq)
		assert.Equal(t, []int64{0}, bases, "the released record's batch")
		e.lim.maxLocks = 8
		acq, bases = lastBatch("b", 100)
		assert.Equal(t, ranges(6, 8, 1), acq)
		assert.Equal(t, []int64{6}, bases, "the in-flight limit: up to the batch acquired, not the next")
	})
}

func TestIsolation(t *testing.T) {
	for _, iso := range []log.IsolationLevel{log.ReadUncommitted, log.ReadCommitted} {
		for _, c := range codecs {
			t.Run(fmt.Sprintf("%s/%s", iso, c), func(t *testing.T) {
				e := newEnv(t, false, 1)
				e.codec = c
				e.lim.isolation = int8(iso)
				e.produce(0, 7, 2) // 0-1 aborted
				e.end(0, 7, false) // 2 marker
				e.produce(0, -1, 2)
				e.produce(0, 7, 2) // 5-6 committed
				e.end(0, 7, true)  // 7
				e.produce(0, 7, 2) // 8-9 open
				f := e.acquire("a", 0, 100)
				if iso == log.ReadCommitted {
					assert.Equal(t, ranges(3, 6, 1), f.Acquired, "aborted records and markers archived; the open transaction held back")
				} else {
					assert.Equal(t, ranges(0, 1, 1, 3, 6, 1, 8, 9, 1), f.Acquired, "markers archived, never delivered")
				}
				require.NoError(t, e.m.Acknowledge(ctx, "g", "a", "t", 0, ackAll(f.Acquired, AckAccept)))
				if iso == log.ReadCommitted {
					assert.Equal(t, int64(8), e.offsets(0).StartOffset)
					e.end(0, 7, true)
					assert.Equal(t, ranges(8, 9, 1), e.acquire("a", 0, 100).Acquired, "committed now")
				} else {
					assert.Equal(t, int64(10), e.offsets(0).StartOffset)
				}
			})
		}
	}
}

func ackAll(rs []AcquiredRecords, t AckType) []AckBatch {
	var out []AckBatch
	for _, r := range rs {
		out = append(out, AckBatch{FirstOffset: r.FirstOffset, LastOffset: r.LastOffset, Types: []AckType{t}})
	}
	return out
}

func TestStateSurvivesRestartAndCrash(t *testing.T) {
	for _, how := range []string{"reopen", "crash"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, false, 1)
			e.produce(0, -1, 5, 5)
			e.acquire("a", 0, 100)
			require.NoError(t, e.ack("a", 0, 0, 9, AckAccept, AckAccept, AckRelease, AckReject, AckAccept, AckRelease, AckAccept, AckAccept, AckRenew, AckRenew))
			// 0,1 accepted (start 2); 2 released; 3 rejected; 4 accepted; 5 released; 6,7 accepted; 8,9 still acquired.
			if how == "crash" {
				e.crash()
			} else {
				e.reopen()
			}
			e.m.settings = func(string) (limits, resetPolicy) { return e.lim, resetPolicy{} }
			assert.Equal(t, int64(2), e.offsets(0).StartOffset)
			f := e.acquire("b", 0, 100)
			assert.Equal(t, ranges(2, 2, 2, 5, 5, 2, 8, 9, 2), f.Acquired,
				"released and unacknowledged records again, counted; accepted and rejected ones never")
			require.NoError(t, e.m.Acknowledge(ctx, "g", "b", "t", 0, ackAll(f.Acquired, AckAccept)))
			assert.Equal(t, int64(10), e.offsets(0).StartOffset)
		})
	}
}

func TestCrashAfterEveryAcknowledgement(t *testing.T) {
	// A power loss after each acknowledgement: everything acknowledged
	// before it stays done, on every codec.
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			e := newEnv(t, false, 1)
			e.codec = c
			e.produce(0, -1, 4, 4, 4)
			done := map[int64]bool{}
			for round := 0; round < 20 && len(done) < 12; round++ {
				f := e.acquire(fmt.Sprintf("m%d", round), 0, 3)
				require.NotEmpty(t, f.Acquired)
				for _, r := range f.Acquired {
					for o := r.FirstOffset; o <= r.LastOffset; o++ {
						require.False(t, done[o], "offset %d delivered after it was accepted", o)
						typ := AckAccept
						if (o+int64(round))%3 == 0 {
							typ = AckRelease
						}
						require.NoError(t, e.ack(fmt.Sprintf("m%d", round), 0, o, o, typ))
						if typ == AckAccept {
							done[o] = true
						}
					}
				}
				e.crash()
			}
			assert.Len(t, done, 12)
			assert.Equal(t, int64(12), e.offsets(0).StartOffset)
		})
	}
}

func TestAutoOffsetReset(t *testing.T) {
	e := newEnv(t, false, 3)
	e.produce(0, -1, 5)
	e.produce(1, -1, 5)
	e.clock.Add(time.Hour)
	e.produce(1, -1, 2)
	e.produce(2, -1, 5)
	e.reset = resetPolicy{}
	assert.Empty(t, e.acquire("a", 0, 10).Acquired, "latest: only what comes after")
	assert.Equal(t, int64(5), e.offsets(0).StartOffset)
	e.produce(0, -1, 1)
	assert.Equal(t, ranges(5, 5, 1), e.acquire("a", 0, 10).Acquired)
	e.reset = resetPolicy{byDuration: 30 * time.Minute}
	assert.Equal(t, ranges(5, 6, 1), e.acquire("a", 1, 10).Acquired, "by_duration: the records of the last 30 minutes")
	e.reset = resetPolicy{earliest: true}
	assert.Equal(t, ranges(0, 4, 1), e.acquire("a", 2, 10).Acquired)
	_, err := e.log(2).DeleteRecordsBefore(3)
	require.NoError(t, err)
	e.reset = resetPolicy{}
	assert.Equal(t, int64(0), e.offsets(2).StartOffset, "a stored state does not reset")
}

func TestLogStartMovesPastTheStartOffset(t *testing.T) {
	e := newEnv(t, false, 1)
	e.produce(0, -1, 3, 3)
	e.acquire("a", 0, 1)
	_, err := e.log(0).DeleteRecordsBefore(4)
	require.NoError(t, err)
	assert.Equal(t, ranges(4, 5, 1), e.acquire("b", 0, 10).Acquired, "records the log deleted are gone from the share-partition")
	assert.ErrorIs(t, e.ack("a", 0, 0, 2, AckAccept), nil, "before the start offset: skipped")
}

func TestOffsetsAdmin(t *testing.T) {
	e := newEnv(t, false, 2)
	e.produce(0, -1, 10)
	assert.Equal(t, []PartitionOffset{{Topic: "t", Partition: 0, StartOffset: -1, LeaderEpoch: -1, Lag: -1}},
		e.m.Offsets("g", []log.TopicPartition{{Topic: "t", Partition: 0}}), "no state yet")
	assert.Empty(t, e.m.Offsets("g", nil))
	f := e.acquire("a", 0, 100)
	require.NoError(t, e.m.Acknowledge(ctx, "g", "a", "t", 0, []AckBatch{{FirstOffset: 0, LastOffset: 3, Types: []AckType{AckAccept}}}))
	all := e.m.Offsets("g", nil)
	require.Len(t, all, 1)
	assert.Equal(t, int64(4), all[0].StartOffset)
	assert.Equal(t, int64(6), all[0].Lag)
	_ = f

	require.NoError(t, e.m.SetStartOffset(ctx, "g", log.TopicPartition{Topic: "t", Partition: 0}, 8))
	assert.Equal(t, ranges(8, 9, 1), e.acquire("b", 0, 100).Acquired, "in flight forgotten, delivered again from 8, counted anew")
	assert.ErrorIs(t, e.ack("a", 0, 4, 7, AckAccept), nil, "before the new start: skipped")
	e.crash()
	e.m.settings = func(string) (limits, resetPolicy) { return e.lim, e.reset }
	assert.Equal(t, int64(8), e.offsets(0).StartOffset)

	require.NoError(t, e.m.DeleteState(ctx, "g", log.TopicPartition{Topic: "t", Partition: 0}))
	assert.Equal(t, int64(-1), e.offsets(0).StartOffset)
	e.crash()
	e.m.settings = func(string) (limits, resetPolicy) { return e.lim, e.reset }
	assert.Equal(t, int64(-1), e.offsets(0).StartOffset, "deleted durably")
	assert.Equal(t, ranges(0, 9, 1), e.acquire("a", 0, 100).Acquired, "starts again from share.auto.offset.reset")

	e.acquire("a", 1, 100)
	require.Len(t, e.m.Offsets("g", nil), 2)
	require.NoError(t, e.m.DeleteGroup(ctx, "g"))
	assert.Empty(t, e.m.Offsets("g", nil))
	assert.ErrorIs(t, e.m.SetStartOffset(ctx, "g", log.TopicPartition{Topic: "t", Partition: 0}, -1), ErrInvalidRequest)
}

func TestConcurrentMembers(t *testing.T) {
	// Members acquire, accept, release and let locks lapse at once; every
	// record is accepted exactly once.
	e := newEnv(t, false, 1)
	const n = 2000
	for range n / 50 {
		e.produce(0, -1, 50)
	}
	var mu sync.Mutex
	accepted := map[int64]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			member := fmt.Sprintf("m%d", w)
			for i := 0; ; i++ {
				f, err := e.m.Acquire(ctx, FetchRequest{GroupID: "g", MemberID: member, Topic: "t", MaxRecords: 30, MaxBytes: 4096})
				if !assert.NoError(t, err) {
					return
				}
				if len(f.Acquired) == 0 {
					if e.offsets(0).StartOffset == n {
						return
					}
					continue
				}
				f.Records.Release()
				var acks []AckBatch
				for _, r := range f.Acquired {
					for o := r.FirstOffset; o <= r.LastOffset; o++ {
						typ := AckAccept
						if (o+int64(i)+int64(w))%5 == 0 {
							typ = AckRelease
						}
						acks = append(acks, AckBatch{FirstOffset: o, LastOffset: o, Types: []AckType{typ}})
					}
				}
				if !assert.NoError(t, e.m.Acknowledge(ctx, "g", member, "t", 0, acks)) {
					return
				}
				mu.Lock()
				for _, a := range acks {
					if a.Types[0] == AckAccept {
						accepted[a.FirstOffset]++
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Len(t, accepted, n)
	for o, c := range accepted {
		require.Equal(t, 1, c, "offset %d accepted %d times", o, c)
	}
}

func TestWait(t *testing.T) {
	e := newEnv(t, false, 2)
	tps := []log.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, e.m.Wait(short, "g", tps), context.DeadlineExceeded, "nothing to acquire")

	done := make(chan error, 1)
	go func() { done <- e.m.Wait(ctx, "g", tps) }()
	e.produce(1, -1, 1)
	require.NoError(t, <-done, "a new record wakes it")

	e.acquire("a", 1, 10)
	go func() { done <- e.m.Wait(ctx, "g", tps) }()
	require.NoError(t, e.ack("a", 1, 0, 0, AckRelease))
	require.NoError(t, <-done, "a released record wakes it")
	require.NoError(t, e.m.Wait(ctx, "g", tps), "available at once")

	gone := []log.TopicPartition{{Topic: "missing"}}
	short, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, e.m.Wait(short, "g", gone), context.DeadlineExceeded, "a partition that cannot be read is not waited on, nor does it wake the waiter")
}

func TestStoredStateIsKafkas(t *testing.T) {
	// The state is ShareSnapshot records in the partition of
	// __share_group_state Kafka's share coordinator reads it from.
	e := newEnv(t, false, 1)
	e.produce(0, -1, 5)
	e.acquire("a", 0, 10)
	require.NoError(t, e.ack("a", 0, 0, 4, AckAccept, AckRelease, AckReject, AckAccept, AckAccept))
	desc, err := e.dir.DescribeTopic("t")
	require.NoError(t, err)
	key := stateKey{group: "g", topic: "t", topicID: desc.ID, partition: 0}
	want := partitionFor(key.coordinatorKey(), stateTopicPartitions)
	for p := range int32(stateTopicPartitions) {
		l, err := e.dir.Partition(StateTopic, p)
		require.NoError(t, err)
		if int(p) != want {
			assert.Equal(t, int64(0), l.LogEndOffset(), "partition %d", p)
			continue
		}
		var last sharecodec.Snapshot
		_, err = l.ReadRecords(0, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			k, err := sharecodec.DecodeKey(r.Key)
			require.NoError(t, err)
			assert.Equal(t, sharecodec.TypeShareSnapshot, k.Type)
			assert.Equal(t, "g", k.GroupID)
			last, err = sharecodec.DecodeSnapshot(r.Value)
			return err
		})
		require.NoError(t, err)
		assert.Equal(t, int64(1), last.StartOffset)
		assert.Equal(t, []sharecodec.StateBatch{
			{FirstOffset: 1, LastOffset: 1, DeliveryState: sharecodec.StateAvailable, DeliveryCount: 1},
			{FirstOffset: 2, LastOffset: 2, DeliveryState: sharecodec.StateArchived, DeliveryCount: 1},
			{FirstOffset: 3, LastOffset: 4, DeliveryState: sharecodec.StateAcknowledged, DeliveryCount: 1},
		}, last.StateBatches)
	}
}

func TestPartitionForIsKafkas(t *testing.T) {
	// Java's "g:AAAAAAAAAAAAAAAAAAAAAQ:0".hashCode() and others, computed
	// by the String.hashCode definition: s[0]*31^(n-1) + ... + s[n-1].
	for _, s := range []string{"g:AAAAAAAAAAAAAAAAAAAAAQ:0", "", "é€𝄞"} {
		var h int64
		for _, c := range utf16Units(s) {
			h = (h*31 + int64(c)) & 0xffffffff
		}
		j := int32(uint32(h))
		if j < 0 {
			j = -j
		}
		assert.Equal(t, int(j)%50, partitionFor(s, 50), s)
	}
	assert.Equal(t, []uint16{0xe9, 0x20ac, 0xd834, 0xdd1e}, utf16Units("é€𝄞"))
}

func TestSettingsAreTheGroupsConfig(t *testing.T) {
	e := newEnv(t, false, 1)
	e.m.settings = func(group string) (limits, resetPolicy) { return groupSettings(e.dir, group) } // as opened
	e.produce(0, 7, 2)
	e.end(0, 7, false)
	e.produce(0, -1, 2) // 3-4
	f, err := e.m.Acquire(ctx, FetchRequest{GroupID: "g", MemberID: "a", Topic: "t", MaxRecords: 10, MaxBytes: 1 << 20})
	require.NoError(t, err)
	assert.Empty(t, f.Acquired, "share.auto.offset.reset latest by default")
	assert.Equal(t, 30*time.Second, f.LockDuration, "group.share.record.lock.duration.ms")

	_, err = e.dir.AlterGroupConfig(ctx, "h", map[string]string{
		"share.auto.offset.reset": "earliest", "share.isolation.level": "read_committed",
		"share.delivery.count.limit": "2", "share.record.lock.duration.ms": "20000", "share.renew.acknowledge.enable": "false",
	})
	require.NoError(t, err)
	f, err = e.m.Acquire(ctx, FetchRequest{GroupID: "h", MemberID: "a", Topic: "t", MaxRecords: 10, MaxBytes: 1 << 20})
	require.NoError(t, err)
	f.Records.Release()
	assert.Equal(t, ranges(3, 4, 1), f.Acquired, "earliest, read_committed: the aborted records archived")
	assert.Equal(t, 20*time.Second, f.LockDuration)
	ack := func(typ AckType) error {
		return e.m.Acknowledge(ctx, "h", "a", "t", 0, []AckBatch{{FirstOffset: 3, LastOffset: 4, Types: []AckType{typ}}})
	}
	assert.ErrorIs(t, ack(AckRenew), ErrInvalidRequest, "renewals disabled")
	require.NoError(t, ack(AckRelease))
	f, err = e.m.Acquire(ctx, FetchRequest{GroupID: "h", MemberID: "a", Topic: "t", MaxRecords: 10, MaxBytes: 1 << 20})
	require.NoError(t, err)
	f.Records.Release()
	assert.Equal(t, ranges(3, 4, 2), f.Acquired)
	require.NoError(t, ack(AckRelease))
	assert.Equal(t, int64(5), e.offsets0("h").StartOffset, "archived at the second delivery")
}

func (e *env) offsets0(group string) PartitionOffset {
	return e.m.Offsets(group, []log.TopicPartition{{Topic: "t"}})[0]
}

func TestFailedWriteLoadsTheStateAgain(t *testing.T) {
	// A state write that fails (EIO at its fsync) fails the call; the
	// share-partition is dropped and loaded from its last stored state at
	// its next use (ErrStateLoading for a call that raced the failure), so
	// nothing acknowledged in memory outlives a write that did not happen.
	e := &env{t: t, clock: testclock.New(time.Unix(1_700_000_000, 0)), cfg: log.DefaultConfig(),
		lim: limits{lock: 30 * time.Second, delivery: 5, maxLocks: 2000, renew: true}, reset: resetPolicy{earliest: true}}
	e.mem, e.path = vfs.NewMem(), "/data"
	faults := vfs.NewFaultFS(e.mem)
	e.cfg.FS, e.cfg.Now = faults, e.clock.Now
	e.open()
	_, err := e.dir.CreateTopic(ctx, "t", 1, nil)
	require.NoError(t, err)
	e.produce(0, -1, 3)
	assert.Equal(t, ranges(0, 2, 1), e.acquire("a", 0, 10).Acquired)
	faults.Inject(vfs.EIO(vfs.OpSync, StateTopic, 1))
	assert.ErrorIs(t, e.ack("a", 0, 0, 2, AckAccept), vfs.ErrInjected)
	faults.Clear()
	assert.Equal(t, int64(0), e.offsets(0).StartOffset, "the acknowledgement is not stored")
	assert.ErrorIs(t, e.ack("a", 0, 0, 2, AckAccept), ErrInvalidRecordState, "loaded again from the store: nothing is acquired there")
	assert.Equal(t, ranges(0, 2, 1), e.acquire("b", 0, 10).Acquired, "delivered again, counted from the stored state")
	assert.ErrorIs(t, e.ack("b", 0, 0, 2, AckAccept), log.ErrStorage,
		"the state's partition refuses appends after a failed fsync, until the directory is opened again")
	e.mem = e.mem.CrashClone()
	assert.ErrorIs(t, e.dir.Close(), log.ErrStorage, "Close reports the failed flush")
	e.cfg.FS = e.mem
	e.open()
	e.m.settings = func(string) (limits, resetPolicy) { return e.lim, e.reset }
	assert.Equal(t, int64(0), e.offsets(0).StartOffset)
	assert.Equal(t, ranges(0, 2, 1), e.acquire("c", 0, 10).Acquired)
	require.NoError(t, e.ack("c", 0, 0, 2, AckAccept))
	e.crash()
	e.m.settings = func(string) (limits, resetPolicy) { return e.lim, e.reset }
	assert.Equal(t, int64(3), e.offsets(0).StartOffset)
}
