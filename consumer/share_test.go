package consumer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/coordinator"
	"github.com/kafkalite/kafkalite/log/share"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// newShareEnv is an env with topic t (one partition) whose share group
// "s" has its share-partition state, started at the (empty) log's end:
// the share groups' share.auto.offset.reset is latest, so the records the
// tests write afterwards are the group's.
func newShareEnv(t *testing.T, mc matrix.Case) *env {
	e := newEnvFor(t, mc)
	e.topic("t", 1)
	e.initShare("s", "t", 0)
	return e
}

// initShare creates group's share-partition state of a partition, at the
// log's end, with an acquisition that finds nothing.
func (e *env) initShare(group, topic string, partition int32) {
	e.t.Helper()
	pm, err := share.Partitions(context.Background(), e.dir)
	require.NoError(e.t, err)
	f, err := pm.Acquire(context.Background(), share.FetchRequest{GroupID: group, MemberID: "init", Topic: topic, Partition: partition})
	require.NoError(e.t, err)
	require.Empty(e.t, f.Acquired)
}

// produceBatches appends n records to t-0 in batches of perBatch,
// compressed with the env's codec.
func (e *env) produceBatches(n, perBatch int) {
	e.t.Helper()
	l, err := e.dir.Partition("t", 0)
	require.NoError(e.t, err)
	require.NoError(e.t, appendRecords(l, e.codec, n, perBatch, func(i int) ([]byte, []byte) {
		return []byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("v%d", i))
	}))
}

// shareConsumer returns a share consumer of group "s" subscribed to t,
// closed at the test's end.
func (e *env) shareConsumer(mods ...func(*ShareConfig)) *ShareConsumer {
	e.t.Helper()
	cfg := DefaultShareConfig()
	cfg.GroupID = "s"
	for _, mod := range mods {
		mod(&cfg)
	}
	sc, err := NewShareConsumer(e.dir, cfg)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = sc.Close(context.Background()) })
	require.NoError(e.t, sc.Subscribe([]string{"t"}))
	return sc
}

func explicit(c *ShareConfig) { c.AcknowledgementMode = AcknowledgeExplicit }

// startOffset is the share-partition start offset of group s on t-0.
func (e *env) startOffset() int64 {
	e.t.Helper()
	pm, err := share.Partitions(context.Background(), e.dir)
	require.NoError(e.t, err)
	offs := pm.Offsets("s", []log.TopicPartition{{Topic: "t", Partition: 0}})
	require.Len(e.t, offs, 1)
	return offs[0].StartOffset
}

// pollNow polls with a context that ends at once if nothing can be
// acquired: it returns what is acquirable now.
func pollNow(t *testing.T, sc *ShareConsumer) []ShareRecord {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		recs []ShareRecord
		err  error
	}
	done := make(chan result, 1)
	before := sc.stats.waits.Load()
	go func() {
		recs, err := sc.Poll(ctx)
		done <- result{recs, err}
	}()
	// Cancel once Poll waits: it counts its waits before blocking.
	for {
		select {
		case r := <-done:
			if errors.Is(r.err, context.Canceled) {
				return nil
			}
			require.NoError(t, r.err)
			return r.recs
		default:
		}
		if sc.stats.waits.Load() > before {
			cancel()
		}
		runtime.Gosched()
	}
}

func shareOffsets(recs []ShareRecord) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for o := from; o < to; o++ {
		out = append(out, o)
	}
	return out
}

// TestShareConsumersShareRecords: two and three share consumers of one
// partition, polling concurrently in implicit mode, get every record
// exactly once between them, each at its first delivery, with its key and
// value; once they commit, the share-partition start offset is past them
// all. Over every codec, one and many batches per poll, memory and OS
// filesystems.
func TestShareConsumersShareRecords(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.Polls|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		for _, members := range []int{2, 3} {
			t.Run(fmt.Sprintf("members=%d", members), func(t *testing.T) {
				e := newShareEnv(t, mc)
				const n = 1200
				e.produceBatches(n, mc.RecordsPerBatch())
				var (
					mu    sync.Mutex
					seen  = map[int64]int{}
					total atomic.Int64
				)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var wg sync.WaitGroup
				errs := make(chan error, members)
				for range members {
					sc := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 100 })
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							recs, err := sc.Poll(ctx)
							if ctx.Err() != nil {
								break
							}
							if err != nil {
								errs <- err
								return
							}
							mu.Lock()
							for _, r := range recs {
								seen[r.Offset]++
								if r.DeliveryCount != 1 || string(r.Value) != fmt.Sprintf("v%d", r.Offset) || string(r.Key) != fmt.Sprintf("k%d", r.Offset) {
									errs <- fmt.Errorf("offset %d: delivery %d, key %q, value %q", r.Offset, r.DeliveryCount, r.Key, r.Value)
								}
							}
							mu.Unlock()
							if total.Add(int64(len(recs))) >= n {
								cancel()
							}
						}
						res, err := sc.CommitSync(context.Background())
						if err == nil {
							for tp, perr := range res {
								if perr != nil {
									err = fmt.Errorf("%s: %w", tp, perr)
								}
							}
						}
						if err == nil {
							err = sc.Close(context.Background())
						}
						if err != nil {
							errs <- err
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				require.Len(t, seen, n)
				for o, k := range seen {
					require.Equal(t, 1, k, "offset %d delivered %d times", o, k)
				}
				require.Equal(t, int64(n), e.startOffset(), "every record accepted")
			})
		}
	})
}

// TestShareConsumersTakeTurns: with its records under one member's locks,
// a batch goes to the next member, deterministically; each member's Stats
// count what it got.
func TestShareConsumersTakeTurns(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newShareEnv(t, mc)
		e.produceBatches(30, 10)
		a := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 10 })
		b := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 10 })
		cc := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 10 })
		require.Equal(t, seq(0, 10), shareOffsets(pollNow(t, a)))
		require.Equal(t, seq(10, 20), shareOffsets(pollNow(t, b)))
		require.Equal(t, seq(20, 30), shareOffsets(pollNow(t, cc)))
		require.Empty(t, pollNow(t, a), "a's Poll accepts its records and finds nothing")
		for _, sc := range []*ShareConsumer{b, cc} {
			res, err := sc.CommitSync(context.Background())
			require.NoError(t, err)
			require.Equal(t, map[TopicPartition]error{{Topic: "t", Partition: 0}: nil}, res)
			require.Equal(t, int64(10), sc.Stats().Records)
			require.Equal(t, int64(10), sc.Stats().Acknowledgements)
		}
		require.Equal(t, int64(30), e.startOffset())
	})
}

// TestShareConsumerReleaseReject: released records come back with their
// delivery count raised, to this member or another; rejected ones never
// come back; accepted ones neither.
func TestShareConsumerReleaseReject(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.Polls|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newShareEnv(t, mc)
		per := mc.RecordsPerBatch()
		n := 2 * per
		e.produceBatches(n, per)
		a := e.shareConsumer(explicit, func(c *ShareConfig) { c.MaxPollRecords = n })
		b := e.shareConsumer(explicit, func(c *ShareConfig) { c.MaxPollRecords = n })
		recs := pollNow(t, a)
		require.Equal(t, seq(0, int64(n)), shareOffsets(recs))
		// Even offsets released, odd ones: rejected below 10, accepted
		// from 10 on.
		for _, r := range recs {
			typ := AcknowledgeAccept
			switch {
			case r.Offset%2 == 0:
				typ = AcknowledgeRelease
			case r.Offset < 10:
				typ = AcknowledgeReject
			}
			require.NoError(t, a.Acknowledge(r, typ))
		}
		res, err := a.CommitSync(context.Background())
		require.NoError(t, err)
		require.NoError(t, res[TopicPartition{Topic: "t", Partition: 0}])
		again := pollNow(t, b)
		var evens []int64
		for o := int64(0); o < int64(n); o += 2 {
			evens = append(evens, o)
		}
		require.Equal(t, evens, shareOffsets(again))
		for _, r := range again {
			require.Equal(t, int16(2), r.DeliveryCount)
			require.Equal(t, fmt.Sprintf("v%d", r.Offset), string(r.Value))
			require.NoError(t, b.Acknowledge(r, AcknowledgeAccept))
		}
		_, err = b.CommitSync(context.Background())
		require.NoError(t, err)
		require.Equal(t, int64(n), e.startOffset())
		e.produceBatches(3, 3)
		require.Equal(t, seq(int64(n), int64(n)+3), shareOffsets(pollNow(t, a)), "only the new records")
	})
}

// TestShareConsumerModes: implicit mode refuses Acknowledge and accepts a
// Poll's records at the next Poll; explicit mode refuses a Poll before
// every record is acknowledged, and an acknowledgement of a record not
// from the last Poll or acknowledged twice.
func TestShareConsumerModes(t *testing.T) {
	e := newShareEnv(t, matrix.Case{})
	e.produceBatches(4, 2)
	imp := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 2 })
	recs := pollNow(t, imp)
	require.Len(t, recs, 2)
	require.ErrorIs(t, imp.Acknowledge(recs[0], AcknowledgeAccept), ErrIllegalState)
	require.Equal(t, []int64{2, 3}, shareOffsets(pollNow(t, imp)))
	require.Equal(t, int64(2), e.startOffset(), "the first Poll's records accepted by the second")
	require.NoError(t, imp.Close(context.Background()))
	require.Equal(t, int64(2), e.startOffset(), "Close does not accept in implicit mode (Kafka 4.4): released")

	exp := e.shareConsumer(explicit, func(c *ShareConfig) { c.MaxPollRecords = 2 })
	recs = pollNow(t, exp)
	require.Equal(t, []int64{2, 3}, shareOffsets(recs))
	require.Equal(t, int16(2), recs[0].DeliveryCount, "released by Close")
	require.NoError(t, exp.Acknowledge(recs[0], AcknowledgeAccept))
	require.ErrorIs(t, exp.Acknowledge(recs[0], AcknowledgeAccept), ErrInvalidAcknowledgement)
	_, err := exp.Poll(context.Background())
	require.ErrorIs(t, err, ErrIllegalState, "offset 3 is not acknowledged")
	stranger := recs[1]
	stranger.Offset = 7
	require.ErrorIs(t, exp.Acknowledge(stranger, AcknowledgeAccept), ErrInvalidAcknowledgement)
	require.ErrorIs(t, exp.Acknowledge(recs[1], AcknowledgeType(4)), ErrInvalidAcknowledgement, "renew is not offered")
	require.NoError(t, exp.Acknowledge(recs[1], AcknowledgeReject))
	require.Empty(t, pollNow(t, exp))
	require.Equal(t, int64(4), e.startOffset())

	none, err := NewShareConsumer(e.dir, ShareConfig{GroupID: "s", MaxPollRecords: 1})
	require.NoError(t, err)
	_, err = none.Poll(context.Background())
	require.ErrorIs(t, err, ErrIllegalState, "not subscribed")
	require.NoError(t, none.Close(context.Background()))
	_, err = none.Poll(context.Background())
	require.ErrorIs(t, err, ErrClosed)
}

// TestShareConsumerCloseReleases: what a consumer holds when it closes
// goes to the others at once (acquired and buffered alike), with its
// delivery count raised, except what it acknowledged: Close sends that.
func TestShareConsumerCloseReleases(t *testing.T) {
	matrix.Run(t, matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newShareEnv(t, mc)
		e.produceBatches(20, 10)
		a := e.shareConsumer(explicit, func(c *ShareConfig) { c.MaxPollRecords = 4 })
		recs := pollNow(t, a) // acquires the first batch, returns 4
		require.Equal(t, seq(0, 4), shareOffsets(recs))
		require.NoError(t, a.Acknowledge(recs[0], AcknowledgeAccept))
		require.NoError(t, a.Acknowledge(recs[1], AcknowledgeReject))
		require.NoError(t, a.Close(context.Background()))
		b := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 100 })
		got := pollNow(t, b)
		require.Equal(t, seq(2, 20), shareOffsets(got))
		for _, r := range got {
			want := int16(1)
			if r.Offset < 10 {
				want = 2
			}
			require.Equal(t, want, r.DeliveryCount, "offset %d", r.Offset)
		}
	})
}

// TestShareConsumerRestartKeepsAcknowledgements: after a restart of the
// Dir, a new consumer gets only what was not accepted before: what was
// acquired and never acknowledged comes back; nothing accepted does.
func TestShareConsumerRestartKeepsAcknowledgements(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newShareEnv(t, mc)
		e.produceBatches(30, 10)
		a := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 10 })
		require.Equal(t, seq(0, 10), shareOffsets(pollNow(t, a)))
		_, err := a.CommitSync(context.Background())
		require.NoError(t, err)
		require.Equal(t, seq(10, 20), shareOffsets(pollNow(t, a))) // acquired, never acknowledged
		e.reopen()
		b := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 100 })
		got := pollNow(t, b)
		require.Equal(t, seq(10, 30), shareOffsets(got))
		_, err = b.CommitSync(context.Background())
		require.NoError(t, err)
		require.NoError(t, b.Close(context.Background()))
		e.reopen()
		require.Equal(t, int64(30), e.startOffset())
	})
}

// TestShareConsumerCommitAsyncCallback: CommitAsync's outcome reaches the
// callback from the next call on the consumer's goroutine; CommitSync's
// at once; a refused acknowledgement (the records went back when the
// member was fenced) names ErrInvalidRecordState.
func TestShareConsumerCommitAsyncCallback(t *testing.T) {
	e := newShareEnv(t, matrix.Case{})
	e.produceBatches(6, 3)
	a := e.shareConsumer(explicit, func(c *ShareConfig) { c.MaxPollRecords = 3 })
	type call struct {
		offsets []int64
		err     error
	}
	var calls []call
	require.NoError(t, a.SetAcknowledgementCommitCallback(func(m map[TopicPartition][]int64, err error) {
		require.Len(t, m, 1)
		calls = append(calls, call{m[TopicPartition{Topic: "t", Partition: 0}], err})
	}))
	recs := pollNow(t, a)
	for _, r := range recs {
		require.NoError(t, a.Acknowledge(r, AcknowledgeAccept))
	}
	require.NoError(t, a.CommitAsync())
	require.Empty(t, calls, "not before the next call")
	res, err := a.CommitSync(context.Background())
	require.NoError(t, err)
	require.Empty(t, res, "nothing left to send")
	require.Equal(t, []call{{[]int64{0, 1, 2}, nil}}, calls)

	recs = pollNow(t, a)
	require.Equal(t, []int64{3, 4, 5}, shareOffsets(recs))
	// The group forgets the member (its session ran out): its records go
	// back, and its acknowledgement is refused.
	pm, err := share.Partitions(context.Background(), e.dir)
	require.NoError(t, err)
	require.NoError(t, pm.ReleaseMember(context.Background(), "s", a.member.id()))
	require.NoError(t, a.Acknowledge(recs[0], AcknowledgeAccept))
	res, err = a.CommitSync(context.Background())
	require.NoError(t, err)
	require.ErrorIs(t, res[TopicPartition{Topic: "t", Partition: 0}], ErrInvalidRecordState)
	require.Len(t, calls, 2)
	require.Equal(t, []int64{3}, calls[1].offsets)
	require.ErrorIs(t, calls[1].err, ErrInvalidRecordState)
}

// TestShareConsumerLockExpiry: a record whose acquisition lock (the
// group's share.record.lock.duration.ms, 30 s) runs out goes to another
// member with its delivery count raised, and the first member's late
// acknowledgement is refused. On testing/synctest's clock.
func TestShareConsumerLockExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := &env{t: t, path: "/data", mem: vfs.NewMem()}
		e.cfg = log.DefaultConfig()
		e.cfg.FS = e.mem
		e.cfg.OffsetsTopicNumPartitions = 1
		e.open()
		e.topic("t", 1)
		e.initShare("s", "t", 0)
		e.produceBatches(5, 5)
		newSC := func() *ShareConsumer {
			cfg := DefaultShareConfig()
			cfg.GroupID, cfg.AcknowledgementMode = "s", AcknowledgeExplicit
			sc, err := NewShareConsumer(e.dir, cfg)
			require.NoError(t, err)
			require.NoError(t, sc.Subscribe([]string{"t"}))
			return sc
		}
		a, b := newSC(), newSC()
		recs, err := a.Poll(context.Background())
		require.NoError(t, err)
		require.Len(t, recs, 5)
		time.Sleep(31 * time.Second)
		synctest.Wait()
		got, err := b.Poll(context.Background())
		require.NoError(t, err)
		require.Equal(t, seq(0, 5), shareOffsets(got))
		for _, r := range got {
			require.Equal(t, int16(2), r.DeliveryCount)
		}
		require.NoError(t, a.Acknowledge(recs[0], AcknowledgeAccept))
		res, err := a.CommitSync(context.Background())
		require.NoError(t, err)
		require.ErrorIs(t, res[TopicPartition{Topic: "t", Partition: 0}], ErrInvalidRecordState)
		for _, r := range got {
			require.NoError(t, b.Acknowledge(r, AcknowledgeAccept))
		}
		require.NoError(t, b.Close(context.Background()))
		require.NoError(t, a.Close(context.Background()))
		require.Equal(t, int64(5), e.startOffset())
		require.NoError(t, e.dir.Close())
	})
}

// TestShareConsumerBesideConsumerGroup: a share group and a KIP-848
// consumer group read the same partition side by side, each every record;
// the ids of one type are refused to the other.
func TestShareConsumerBesideConsumerGroup(t *testing.T) {
	matrix.Run(t, matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newShareEnv(t, mc)
		e.produceBatches(50, 10)
		sc := e.shareConsumer(func(c *ShareConfig) { c.MaxPollRecords = 100 })
		cg := e.consumer(func(c *Config) {
			c.GroupID, c.GroupProtocol, c.AutoOffsetReset, c.EnableAutoCommit = "g", "consumer", OffsetResetEarliest, false
		})
		defer cg.Close(context.Background())
		require.NoError(t, cg.Subscribe([]string{"t"}, nil))
		var read []int64
		for len(read) < 50 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			recs, err := cg.Poll(ctx)
			cancel()
			require.NoError(t, err)
			for _, r := range recs {
				read = append(read, r.Offset)
			}
		}
		require.Equal(t, seq(0, 50), read)
		require.Equal(t, seq(0, 50), shareOffsets(pollNow(t, sc)))
		_, err := sc.CommitSync(context.Background())
		require.NoError(t, err)
		require.Equal(t, int64(50), e.startOffset())

		wrong, err := NewShareConsumer(e.dir, ShareConfig{GroupID: "g", MaxPollRecords: 1})
		require.NoError(t, err)
		defer wrong.Close(context.Background())
		require.NoError(t, wrong.Subscribe([]string{"t"}))
		_, err = wrong.Poll(context.Background())
		require.ErrorIs(t, err, coordinator.ErrUnknownGroup, "g is a consumer group")
	})
}

// TestShareConsumerNoLeak: consumers that polled, waited and committed
// asynchronously leave no goroutine behind once closed.
func TestShareConsumerNoLeak(t *testing.T) {
	e := newShareEnv(t, matrix.Case{})
	e.produceBatches(10, 5)
	// The Dir's services and their goroutines start first.
	_, err := share.Partitions(context.Background(), e.dir)
	require.NoError(t, err)
	_, err = coordinator.Groups(context.Background(), e.dir)
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	for range 3 {
		cfg := DefaultShareConfig()
		cfg.GroupID = "s"
		sc, err := NewShareConsumer(e.dir, cfg)
		require.NoError(t, err)
		require.NoError(t, sc.Subscribe([]string{"t"}))
		pollNow(t, sc)
		require.NoError(t, sc.CommitAsync())
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(time.Millisecond); cancel() }()
		_, err = sc.Poll(ctx) // waits, then is cancelled
		require.ErrorIs(t, err, context.Canceled)
		require.NoError(t, sc.Close(context.Background()))
		require.NoError(t, sc.Close(context.Background()), "a second Close")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling NumGoroutine: there is no signal for "goroutine exited"
	}
	require.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left after Close")
}

func TestParseShareConfig(t *testing.T) {
	c, unused, err := ParseShareConfig(map[string]string{"group.id": "s", "share.acknowledgement.mode": "explicit",
		"max.poll.records": "10", "bootstrap.servers": "x:9092", "fetch.min.bytes": "5", "share.acquire.mode": "batch_optimized"})
	require.NoError(t, err)
	require.Equal(t, AcknowledgeExplicit, c.AcknowledgementMode)
	require.Equal(t, 10, c.MaxPollRecords)
	require.Equal(t, []string{"bootstrap.servers", "fetch.min.bytes"}, unused)
	back, _, err := ParseShareConfig(c.Properties())
	require.NoError(t, err)
	require.Equal(t, c, back)

	for _, k := range []string{"auto.offset.reset", "enable.auto.commit", "group.instance.id", "isolation.level",
		"partition.assignment.strategy", "interceptor.classes", "session.timeout.ms", "heartbeat.interval.ms",
		"group.protocol", "group.remote.assignor"} {
		_, _, err := ParseShareConfig(map[string]string{"group.id": "s", k: ""})
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, k)
		require.Equal(t, k, ce.Property)
		require.ErrorIs(t, err, ErrInvalidConfig, k)
		require.NotErrorIs(t, err, ErrUnknownProperty, k)
	}
	_, _, err = ParseShareConfig(map[string]string{"group.id": "s", "no.such.thing": "1"})
	require.ErrorIs(t, err, ErrUnknownProperty)
	_, _, err = ParseShareConfig(map[string]string{"group.id": "s", "share.acknowledgement.mode": "EXPLICIT"})
	require.ErrorIs(t, err, ErrInvalidConfig, "lower case only, as Kafka")
	_, _, err = ParseShareConfig(map[string]string{"group.id": "s", "share.acquire.mode": "record_limit"})
	require.ErrorIs(t, err, ErrNotSupported)
	_, _, err = ParseShareConfig(map[string]string{"max.poll.records": "0"})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.True(t, slices.ContainsFunc(flatten(err), func(err error) bool {
		var ce *ConfigError
		return errors.As(err, &ce) && ce.Property == "group.id"
	}), "group.id is required: %v", err)
	_, err = NewShareConsumer(nil, DefaultShareConfig())
	require.Error(t, err)
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestShareConsumerGroupConfig: the share group's configuration rules its
// consumers: share.auto.offset.reset=earliest delivers what was written
// before the group's first fetch; a short share.record.lock.duration.ms
// (1 s) hands a record nobody acknowledged to another member, delivered a
// second time; at share.delivery.count.limit=2 a record released at its
// second delivery is archived, never delivered again; the first member's
// late acknowledgement of records done meanwhile changes nothing (Kafka
// skips offsets before the share-partition start offset).
func TestShareConsumerGroupConfig(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newEnvFor(t, mc)
		require.NoError(t, e.dir.Close())
		e.cfg.ShareMinRecordLockDuration = time.Second
		e.open()
		e.topic("t", 1)
		_, err := e.dir.AlterGroupConfig(context.Background(), "s", map[string]string{"share.auto.offset.reset": "earliest",
			"share.record.lock.duration.ms": "1000", "share.delivery.count.limit": "2"})
		require.NoError(t, err)
		e.produceBatches(6, 3)
		a := e.shareConsumer(explicit)
		b := e.shareConsumer(explicit)
		first := pollNow(t, a)
		require.Equal(t, seq(0, 6), shareOffsets(first))
		got, err := b.Poll(context.Background()) // waits for a's locks to run out
		require.NoError(t, err)
		require.Equal(t, seq(0, 6), shareOffsets(got))
		for _, r := range got {
			require.Equal(t, int16(2), r.DeliveryCount)
			require.NoError(t, b.Acknowledge(r, AcknowledgeRelease))
		}
		res, err := b.CommitSync(context.Background())
		require.NoError(t, err)
		require.NoError(t, res[TopicPartition{Topic: "t", Partition: 0}])
		require.Equal(t, int64(6), e.startOffset(), "released at the delivery count limit: archived")
		require.Empty(t, pollNow(t, b))
		for _, r := range first {
			require.NoError(t, a.Acknowledge(r, AcknowledgeAccept))
		}
		res, err = a.CommitSync(context.Background())
		require.NoError(t, err)
		require.NoError(t, res[TopicPartition{Topic: "t", Partition: 0}])
		require.Empty(t, pollNow(t, a))
		require.Equal(t, int64(6), e.startOffset())
	})
}

// TestShareConsumerAcknowledgesGaps: on a compacted topic whose cleaner
// removed records inside batches, the offsets acquired without a record
// are acknowledged as gaps by the next commit: only the records left are
// delivered, and the share-partition start offset moves past them all.
func TestShareConsumerAcknowledgesGaps(t *testing.T) {
	matrix.Run(t, matrix.Codecs|matrix.FSes, func(t *testing.T, mc matrix.Case) {
		e := newEnvFor(t, mc)
		require.NoError(t, e.dir.Close())
		e.cfg.CleanerEnable = false
		e.open()
		_, err := e.dir.CreateTopic(context.Background(), "t", 1, map[string]string{"cleanup.policy": "compact",
			"segment.bytes": "1024", "min.cleanable.dirty.ratio": "0.01"})
		require.NoError(t, err)
		_, err = e.dir.AlterGroupConfig(context.Background(), "s", map[string]string{"share.auto.offset.reset": "earliest"})
		require.NoError(t, err)
		l, err := e.dir.Partition("t", 0)
		require.NoError(t, err)
		require.NoError(t, appendRecords(l, e.codec, 200, 20, func(i int) ([]byte, []byte) {
			return []byte(fmt.Sprintf("k%d", i%7)), []byte(fmt.Sprintf("v%d", i))
		}))
		require.NoError(t, l.Roll(context.Background()))
		_, err = e.dir.CleanNow(context.Background())
		require.NoError(t, err)
		a := e.shareConsumer()
		got := pollNow(t, a)
		require.Equal(t, seq(193, 200), shareOffsets(got), "the last value of each of the 7 keys")
		res, err := a.CommitSync(context.Background())
		require.NoError(t, err)
		require.NoError(t, res[TopicPartition{Topic: "t", Partition: 0}])
		require.Equal(t, int64(200), e.startOffset())
		require.Equal(t, int64(7), a.Stats().Acknowledgements, "gaps are not counted")
	})
}
