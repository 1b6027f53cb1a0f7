package log

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/checkpoint"
	"github.com/kafkalite/kafkalite/record"
)

// epochBatch builds a batch as a leader stored it: n records from base,
// stamped with the leader epoch.
func epochBatch(t *testing.T, base int64, n int, epoch int32) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{OffsetDelta: int32(i), Timestamp: newClock().Now().UnixMilli(), Value: fmt.Appendf(nil, "e%d-%d", epoch, i)}
	}
	b, err := record.AppendBatch(nil, record.BatchHeader{BaseOffset: base, PartitionLeaderEpoch: epoch,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel, recs)
	require.NoError(t, err)
	return b
}

// threeEpochs appends, as a replica (which keeps the batches' epochs),
// epoch 0 at offsets 0–2, epoch 2 at 3–5 and epoch 5 at 6–9.
func threeEpochs(t *testing.T, l *Log) {
	t.Helper()
	for _, b := range []struct {
		base  int64
		n     int
		epoch int32
	}{{0, 3, 0}, {3, 3, 2}, {6, 4, 5}} {
		_, err := l.AppendAsReplica(epochBatch(t, b.base, b.n, b.epoch))
		require.NoError(t, err)
	}
	require.Equal(t, int64(10), l.LogEndOffset())
}

// epochAnswer is what EndOffsetForEpoch returns for one requested epoch.
type epochAnswer struct {
	requested, epoch int32
	endOffset        int64
}

// requireAnswers checks EndOffsetForEpoch for each requested epoch.
func requireAnswers(t *testing.T, l *Log, want []epochAnswer) {
	t.Helper()
	for _, w := range want {
		epoch, end, err := l.EndOffsetForEpoch(w.requested)
		require.NoError(t, err)
		require.Equal(t, w, epochAnswer{w.requested, epoch, end}, "epoch %d", w.requested)
	}
}

// TestEndOffsetForEpoch: EndOffsetForEpoch answers as Kafka's leader
// answers OffsetForLeaderEpoch (LeaderEpochFileCache.endOffsetFor with the
// leader's own epoch in the cache): the largest epoch at or below the one
// asked and where it ends (the next epoch's start, or the log end offset
// for the latest); the epoch asked and the earliest start when it is below
// every epoch; -1/-1 for -1 and for epochs above the leader's. It holds
// for epochs appended as a replica, after a reopen that reads them from
// leader-epoch-checkpoint (as of an adopted broker directory), after the
// log start offset passes epoch starts, and after truncations, where
// Kafka's leader still holds its own epoch.
func TestEndOffsetForEpoch(t *testing.T) {
	undefined := func(requested int32) epochAnswer { return epochAnswer{requested, -1, -1} }
	threeEpochAnswers := []epochAnswer{
		undefined(-1),
		{0, 0, 3}, {1, 0, 3}, {2, 2, 6}, {3, 2, 6}, {4, 2, 6}, {5, 5, 10},
		undefined(6), undefined(math.MaxInt32),
		{-2, -2, 0}, // below every epoch: Kafka answers the epoch asked
	}
	// deletedBefore and truncatedTo append threeEpochs, then move the log
	// start offset to off or truncate the log to off.
	deletedBefore := func(off int64) func(t *testing.T, _ *env, l *Log, _ func() *Log) *Log {
		return func(t *testing.T, _ *env, l *Log, _ func() *Log) *Log {
			threeEpochs(t, l)
			_, err := l.DeleteRecordsBefore(off)
			require.NoError(t, err)
			return l
		}
	}
	truncatedTo := func(off int64) func(t *testing.T, _ *env, l *Log, _ func() *Log) *Log {
		return func(t *testing.T, _ *env, l *Log, _ func() *Log) *Log {
			threeEpochs(t, l)
			require.NoError(t, l.TruncateTo(off))
			return l
		}
	}
	tests := []struct {
		name        string
		setup       func(t *testing.T, e *env, l *Log, reopen func() *Log) *Log // returns the log to ask
		leaderEpoch int32
		want        []epochAnswer
	}{{
		name:  "new partition",
		setup: func(_ *testing.T, _ *env, l *Log, _ func() *Log) *Log { return l },
		want:  []epochAnswer{{0, 0, 0}, undefined(-1), undefined(1), {-2, -2, 0}},
	}, {
		name: "appended as leader",
		setup: func(t *testing.T, e *env, l *Log, _ func() *Log) *Log {
			for range 2 {
				_, err := l.Append(producerBatch(t, 3, 10, e.clock.Now().UnixMilli(), record.None))
				require.NoError(t, err)
			}
			return l
		},
		want: []epochAnswer{{0, 0, 6}, undefined(1), undefined(-1)},
	}, {
		name:        "epochs appended as a replica",
		setup:       func(t *testing.T, _ *env, l *Log, _ func() *Log) *Log { threeEpochs(t, l); return l },
		leaderEpoch: 5,
		want:        threeEpochAnswers,
	}, {
		name: "epochs read from leader-epoch-checkpoint",
		setup: func(t *testing.T, _ *env, l *Log, reopen func() *Log) *Log {
			threeEpochs(t, l)
			return reopen()
		},
		leaderEpoch: 5,
		want:        threeEpochAnswers,
	}, {
		name:        "log start offset inside the second epoch",
		setup:       deletedBefore(4),
		leaderEpoch: 5,
		want:        []epochAnswer{{0, 0, 4}, {1, 1, 4}, {2, 2, 6}, {4, 2, 6}, {5, 5, 10}, undefined(6)},
	}, {
		name:        "log start offset inside the latest epoch",
		setup:       deletedBefore(7),
		leaderEpoch: 5,
		want:        []epochAnswer{{0, 0, 7}, {2, 2, 7}, {4, 4, 7}, {5, 5, 10}},
	}, {
		name:        "every record deleted",
		setup:       deletedBefore(10),
		leaderEpoch: 5,
		want:        []epochAnswer{{2, 2, 10}, {5, 5, 10}, undefined(6)},
	}, {
		name:        "truncated to the latest epoch's start",
		setup:       truncatedTo(6),
		leaderEpoch: 5, // the leader keeps its epoch; it now starts at the log end
		want:        []epochAnswer{{0, 0, 3}, {2, 2, 6}, {4, 2, 6}, {5, 5, 6}, undefined(6)},
	}, {
		name:        "truncated into the first epoch",
		setup:       truncatedTo(3),
		leaderEpoch: 5,
		want:        []epochAnswer{{0, 0, 3}, {2, 0, 3}, {5, 5, 3}},
	}, {
		name: "truncated below the log start",
		setup: func(t *testing.T, _ *env, l *Log, _ func() *Log) *Log {
			threeEpochs(t, l)
			_, err := l.DeleteRecordsBefore(4)
			require.NoError(t, err)
			require.NoError(t, l.TruncateTo(2))
			return l
		},
		leaderEpoch: 5, // the cache is empty
		want:        []epochAnswer{{0, 0, 2}, {4, 4, 2}, {5, 5, 2}, undefined(6), undefined(-1)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.AdoptBrokerDirectory = true
			d := e.open(t)
			t.Cleanup(func() { _ = d.Close() })
			createTopic(t, d, "t", 1, nil)
			// reopen opens the directory again without its topic store, so
			// that the partition directory is adopted as a broker's is.
			reopen := func() *Log {
				require.NoError(t, d.Close())
				require.NoError(t, e.mem.Remove("/data/kafkalite-topics.json"))
				d = e.open(t)
				return partition(t, d, "t", 0)
			}
			l := tc.setup(t, e, partition(t, d, "t", 0), reopen)
			require.Equal(t, tc.leaderEpoch, l.LeaderEpoch())
			requireAnswers(t, l, tc.want)
		})
	}
}

// TestLeaderEpoch: a new partition's leader epoch is 0; a replica batch of
// a later epoch raises it, and appends as leader then stamp that epoch
// and keep the earlier epochs; a reopen reads it back from
// leader-epoch-checkpoint.
func TestLeaderEpoch(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	require.Equal(t, int32(0), l.LeaderEpoch())
	threeEpochs(t, l)
	require.Equal(t, int32(5), l.LeaderEpoch())

	res, err := l.Append(producerBatch(t, 2, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	require.Equal(t, int64(10), res.BaseOffset)
	var epochs []int32
	_, err = l.ReadRecords(res.BaseOffset, 1<<20, func(_ *record.Record, h *record.BatchHeader) error {
		epochs = append(epochs, h.PartitionLeaderEpoch)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int32{5, 5}, epochs, "stamped with the raised epoch")
	requireAnswers(t, l, []epochAnswer{{0, 0, 3}, {2, 2, 6}, {5, 5, 12}})

	// An older replica epoch does not lower it.
	_, err = l.AppendAsReplica(epochBatch(t, 12, 1, 4))
	require.NoError(t, err)
	require.Equal(t, int32(5), l.LeaderEpoch())

	require.NoError(t, d.Close())
	d = e.open(t)
	defer d.Close()
	l = partition(t, d, "t", 0)
	require.Equal(t, int32(4), l.LeaderEpoch(), "the latest epoch of leader-epoch-checkpoint")
	got, err := checkpoint.ReadLeaderEpochs(e.mem, "/data/t-0/leader-epoch-checkpoint")
	require.NoError(t, err)
	require.Equal(t, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 2, StartOffset: 3}, {Epoch: 4, StartOffset: 12}}, got,
		"Kafka's assign drops the entries of epochs at or above a new one")
}

// TestEpochForOffset: the epoch of the batch holding an offset, from the
// cache; none below the earliest epoch's start once the log start moved.
func TestEpochForOffset(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	defer d.Close()
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	_, ok := l.EpochForOffset(0)
	require.False(t, ok, "no epoch in a new partition")
	threeEpochs(t, l)
	for off, want := range []int32{0, 0, 0, 2, 2, 2, 5, 5, 5, 5, 5} {
		got, ok := l.EpochForOffset(int64(off))
		require.True(t, ok, "offset %d", off)
		require.Equal(t, want, got, "offset %d", off)
	}
	_, err := l.DeleteRecordsBefore(4)
	require.NoError(t, err)
	_, ok = l.EpochForOffset(3)
	require.False(t, ok, "below the log start offset")
	got, ok := l.EpochForOffset(4)
	require.True(t, ok)
	require.Equal(t, int32(2), got)
}

// TestEndOffsetForEpochOfClosedOrDeletedLog: a closed log answers
// ErrClosed, a deleted topic's ErrTopicDeleted, both with -1/-1.
func TestEndOffsetForEpochOfClosedOrDeletedLog(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "gone", 1, nil)
	createTopic(t, d, "kept", 1, nil)
	gone, kept := partition(t, d, "gone", 0), partition(t, d, "kept", 0)
	require.NoError(t, d.DeleteTopic(t.Context(), "gone"))
	epoch, end, err := gone.EndOffsetForEpoch(0)
	require.ErrorIs(t, err, ErrTopicDeleted)
	require.Equal(t, epochAnswer{0, -1, -1}, epochAnswer{0, epoch, end})
	require.NoError(t, d.Close())
	epoch, end, err = kept.EndOffsetForEpoch(0)
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, epochAnswer{0, -1, -1}, epochAnswer{0, epoch, end})
}

// TestBecomeLeader: a new leader's epoch starts at the log end offset:
// appends are stamped with it, the previous epoch ends there, a lower or
// equal epoch changes nothing, and a closed log refuses it.
func TestBecomeLeader(t *testing.T) {
	e := newEnv(t)
	d := e.open(t)
	createTopic(t, d, "t", 1, nil)
	l := partition(t, d, "t", 0)
	threeEpochs(t, l) // epochs 0, 2, 5; log end offset 10
	require.NoError(t, l.BecomeLeader(7))
	require.Equal(t, int32(7), l.LeaderEpoch())
	requireAnswers(t, l, []epochAnswer{{5, 5, 10}, {6, 5, 10}, {7, 7, 10}})
	require.NoError(t, l.BecomeLeader(6), "a lower epoch")
	require.Equal(t, int32(7), l.LeaderEpoch())
	res, err := l.Append(producerBatch(t, 1, 10, e.clock.Now().UnixMilli(), record.None))
	require.NoError(t, err)
	got, ok := l.EpochForOffset(res.BaseOffset)
	require.True(t, ok)
	require.Equal(t, int32(7), got, "stamped with the new epoch")
	requireAnswers(t, l, []epochAnswer{{5, 5, 10}, {7, 7, 11}})
	require.NoError(t, d.Close())
	require.ErrorIs(t, l.BecomeLeader(8), ErrClosed)
}
