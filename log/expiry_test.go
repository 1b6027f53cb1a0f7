package log

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// batchAt is idemBatch with records of timestamp ts: a producer's idle
// time counts from its latest batch's max timestamp (or its latest
// marker's append time), as in Kafka.
func batchAt(t testing.TB, pid int64, epoch int16, seq int32, n int, txn bool, ts int64) []byte {
	t.Helper()
	return idemBatchAt(t, pid, epoch, seq, n, txn, "v", ts)
}

// knownProducers returns the producer ids l remembers, in order.
func knownProducers(l *Log) []int64 {
	var out []int64
	for _, p := range l.Producers() {
		out = append(out, p.ProducerID)
	}
	return out
}

// TestDirExpiresProducersInTheBackground: the Dir's goroutine drops, every
// producer.id.expiration.check.interval.ms, the producers idle for
// producer.id.expiration.ms (Kafka's rule: now - lastTimestamp >=
// expiration) without an open transaction; nobody calls ExpireProducers.
// The ticker runs on synctest's fake clock, so each tick is one
// time.Sleep of the interval and synctest.Wait returns once the pass is
// done; the expiry itself reads the injected test clock.
func TestDirExpiresProducersInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		e := newEnv(t)
		e.cfg.ProducerIDExpiration = time.Minute
		e.cfg.ProducerIDExpirationCheckInterval = interval
		d := e.open(t)
		t.Cleanup(func() { require.NoError(t, d.Close()) })
		createTopic(t, d, "t", 1, nil)
		l := partition(t, d, "t", 0)
		tick := func() {
			t.Helper()
			time.Sleep(interval)
			synctest.Wait()
		}

		start := e.clock.Now().UnixMilli()
		_, err := l.Append(batchAt(t, 9, 0, 0, 3, false, start)) // sequences 0..2
		require.NoError(t, err)
		appendTxn(t, l, batchAt(t, 10, 0, 0, 1, true, start))
		lso := l.LastStableOffset()
		require.Less(t, lso, l.HighWatermark())

		e.clock.Add(time.Minute - time.Millisecond)
		tick()
		require.Equal(t, []int64{9, 10}, knownProducers(l), "idle for less than producer.id.expiration.ms")
		_, err = l.Append(batchAt(t, 9, 0, 5, 1, false, start))
		require.ErrorIs(t, err, ErrOutOfOrderSequence, "producer 9's sequence is remembered")

		e.clock.Add(time.Millisecond)
		tick()
		require.Equal(t, []int64{10}, knownProducers(l), "producer 9 went; producer 10 has a transaction open")
		require.Equal(t, lso, l.LastStableOffset(), "the open transaction still holds the LSO")
		now := e.clock.Now().UnixMilli()
		_, err = l.Append(batchAt(t, 9, 0, 5, 1, false, now))
		require.NoError(t, err, "a forgotten producer's batch is taken with any sequence")

		// However long it is idle, a producer with an open transaction
		// stays; once its marker ends the transaction, its idle time
		// counts from the marker.
		e.clock.Add(time.Hour)
		tick()
		require.Equal(t, []int64{10}, knownProducers(l))
		_, err = l.AppendTxnMarker(access.Internal{}, 10, 0, record.EndTxnMarker{Type: record.ControlCommit})
		require.NoError(t, err)
		require.Equal(t, l.HighWatermark(), l.LastStableOffset())
		tick()
		require.Equal(t, []int64{10}, knownProducers(l), "its marker is recent")
		e.clock.Add(time.Minute)
		tick()
		require.Empty(t, knownProducers(l))
	})
}

// TestProducerExpiryAtLoad: opening a partition drops the producers that
// became idle for producer.id.expiration.ms while it was closed, whether
// the state comes from the snapshot a clean close wrote or from replaying
// the log after a power loss; a producer with an open transaction stays.
// The Dir's expiry goroutine (every 10 minutes by default) never runs
// here.
func TestProducerExpiryAtLoad(t *testing.T) {
	expiration := DefaultConfig().ProducerIDExpiration
	for _, tc := range []struct {
		name    string
		crash   bool
		idle    time.Duration
		expired bool
	}{
		{"clean close, idle just under the expiration", false, expiration - time.Millisecond, false},
		{"clean close, idle for the expiration", false, expiration, true},
		{"power loss, idle just under the expiration", true, expiration - time.Millisecond, false},
		{"power loss, idle for the expiration", true, expiration, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			d := e.open(t)
			createTopic(t, d, "t", 1, nil)
			l := partition(t, d, "t", 0)
			start := e.clock.Now().UnixMilli()
			_, err := l.Append(batchAt(t, 9, 0, 0, 3, false, start))
			require.NoError(t, err)
			appendTxn(t, l, batchAt(t, 10, 0, 0, 1, true, start))
			lso := l.LastStableOffset()
			if tc.crash {
				require.NoError(t, l.Flush(context.Background()))
				e.crash()
			}
			require.NoError(t, d.Close()) // after a crash, on the old filesystem

			e.clock.Add(tc.idle)
			d = e.open(t)
			t.Cleanup(func() { require.NoError(t, d.Close()) })
			l = partition(t, d, "t", 0)
			require.Equal(t, lso, l.LastStableOffset(), "the open transaction survives")
			if tc.expired {
				require.Equal(t, []int64{10}, knownProducers(l), "producer 9 expired at load")
			} else {
				require.Equal(t, []int64{9, 10}, knownProducers(l))
			}
			_, err = l.Append(batchAt(t, 9, 0, 5, 1, false, e.clock.Now().UnixMilli()))
			if tc.expired {
				require.NoError(t, err, "a forgotten producer's batch is taken with any sequence")
			} else {
				require.ErrorIs(t, err, ErrOutOfOrderSequence, "producer 9's sequence is remembered")
			}
			require.Equal(t, []int64{9, 10}, knownProducers(l))

			_, err = l.AppendTxnMarker(access.Internal{}, 10, 0, record.EndTxnMarker{Type: record.ControlAbort})
			require.NoError(t, err)
			require.Equal(t, l.HighWatermark(), l.LastStableOffset())
		})
	}
}
