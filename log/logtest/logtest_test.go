package logtest_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/logtest"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/partitioner"
	"github.com/kafkalite/kafkalite/producer"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// TestOrderService is Example_orderService as a test writes it.
func TestOrderService(t *testing.T) {
	b := logtest.New(t, logtest.Partitions(3), logtest.Topics("order-events"))
	svc := &OrderService{events: b.Producer()}
	ctx := context.Background()
	require.NoError(t, svc.PlaceOrder(ctx, "alice", 1200))
	require.NoError(t, svc.PlaceOrder(ctx, "dave", 350))
	require.NoError(t, svc.PlaceOrder(ctx, "alice", 99))

	b.AssertProduced(t, "order-events",
		logtest.KV("alice", `{"cents":1200,"customer":"alice"}`, "type", "OrderPlaced"),
		logtest.KV("dave", `{"cents":350,"customer":"dave"}`, "type", "OrderPlaced"),
		logtest.KV("alice", `{"cents":99,"customer":"alice"}`, "type", "OrderPlaced"),
	)
	b.Expect(t, "order-events").Len(3).Header("type", "OrderPlaced").
		Key("alice").Values(`{"cents":1200,"customer":"alice"}`, `{"cents":99,"customer":"alice"}`)
}

func TestProduceConsumeAll(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []logtest.Option
	}{
		{"memory", nil},
		{"disk", []logtest.Option{logtest.OnDisk()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := logtest.New(t, append(tc.opts, logtest.Partitions(4))...)
			var recs []*producer.Record
			for i := range 200 {
				recs = append(recs, logtest.KV(fmt.Sprintf("k%d", i%17), fmt.Sprintf("v%d", i), "i", fmt.Sprint(i)))
			}
			mds := b.Produce("events", recs...)
			require.Len(t, mds, len(recs))
			for i, md := range mds {
				require.Equal(t, partitioner.PartitionForKey(recs[i].Key, 4), md.Partition, "record %d", i)
				require.Empty(t, recs[i].Topic, "Produce does not modify the records")
			}

			got := b.ConsumeAll("events")
			require.Len(t, got, len(recs))
			for i := 1; i < len(got); i++ {
				prev, cur := got[i-1], got[i]
				require.True(t, prev.Partition < cur.Partition || prev.Partition == cur.Partition && prev.Offset+1 == cur.Offset,
					"ordered by partition, then offset: %d@%d before %d@%d", prev.Partition, prev.Offset, cur.Partition, cur.Offset)
			}
			b.AssertProduced(t, "events", recs...)
			if tc.name == "disk" {
				require.True(t, strings.HasPrefix(b.Dir().Path(), b.Path()))
			}
		})
	}
}

// failT is a T that records failures instead of failing the test.
type failT struct {
	testing.TB
	failures []string
}

type failedNow struct{}

func (f *failT) Errorf(format string, args ...any) {
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}
func (f *failT) FailNow() { panic(failedNow{}) }

// fails runs check with a failT and returns what it reported.
func fails(t *testing.T, check func(logtest.T)) (failures []string) {
	t.Helper()
	f := &failT{TB: t}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(failedNow); !ok {
				panic(r)
			}
		}
		failures = f.failures
	}()
	check(f)
	return nil
}

func TestAssertProduced(t *testing.T) {
	// k2 → partition 0, k3 → 1, k1 → 2 (murmur2 over 3 partitions).
	b := logtest.New(t, logtest.Partitions(3))
	sent := []*producer.Record{
		logtest.KV("k1", "a", "h", "1"),
		logtest.KV("k2", "b"),
		logtest.KV("k1", "c"),
		logtest.Value("keyless"),
		logtest.InPartition(logtest.KV("k3", "pinned"), 0),
	}
	b.Produce("t", sent...)

	for _, tc := range []struct {
		name string
		want []*producer.Record
		fail string // a substring of the failure; "" for success
	}{
		{name: "exact", want: sent},
		{name: "wrong order in a partition", want: []*producer.Record{
			sent[2], sent[1], sent[0], sent[3], sent[4],
		}, fail: "per partition"},
		{name: "missing header", want: []*producer.Record{
			logtest.KV("k1", "a"), sent[1], sent[2], sent[3], sent[4],
		}, fail: "per partition"},
		{name: "record not produced", want: append(sent[:5:5], logtest.KV("k2", "never")),
			fail: "never"},
		{name: "keyless record not produced", want: append(sent[:5:5], logtest.Value("never")),
			fail: "{-1:"},
		{name: "a record too many", want: sent[:4], fail: "pinned"},
		{name: "expected in another partition", want: []*producer.Record{
			sent[0], sent[1], sent[2], sent[3], logtest.KV("k3", "pinned"),
		}, fail: "1:[]string{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failures := fails(t, func(ft logtest.T) { b.AssertProduced(ft, "t", tc.want...) })
			if tc.fail == "" {
				require.Empty(t, failures)
				return
			}
			require.Len(t, failures, 1)
			require.Contains(t, failures[0], tc.fail)
		})
	}
}

// keyByLength is a deterministic custom partitioner.
type keyByLength struct{}

func (keyByLength) Partition(_ string, key, _ []byte, n int32) int32 { return int32(len(key)) % n }

func TestAssertProducedCustomPartitioner(t *testing.T) {
	b := logtest.New(t, logtest.Partitions(3), logtest.ProducerConfig(func(c *producer.Config) {
		c.Partitioner = keyByLength{}
	}))
	recs := []*producer.Record{logtest.KV("a", "1"), logtest.KV("bb", "2"), logtest.KV("ccc", "3"), logtest.KV("dddd", "4")}
	mds := b.Produce("t", recs...)
	require.Equal(t, []int32{1, 2, 0, 1}, []int32{mds[0].Partition, mds[1].Partition, mds[2].Partition, mds[3].Partition})
	b.AssertProduced(t, "t", recs...)
	b.Expect(t, "t").Partition(1).Keys("a", "dddd").Values("1", "4")
}

func TestExpect(t *testing.T) {
	b := logtest.New(t, logtest.Partitions(2), logtest.TopicProperties(map[string]string{"cleanup.policy": "compact"}))
	b.Produce("t", logtest.KV("x", "1"), logtest.KV("x", "2"), logtest.KV("y", "3", "kind", "y"))
	desc, err := b.Dir().DescribeTopic("t")
	require.NoError(t, err)
	require.Equal(t, "compact", desc.Overrides["cleanup.policy"])

	e := b.Expect(t, "t").Len(3)
	e.Key("x").Len(2).Values("1", "2")
	e.Key("y").Keys("y").Header("kind", "y")
	require.Len(t, e.Records(), 3)

	for _, tc := range []struct {
		name  string
		check func(e *logtest.Expectation)
	}{
		{"length", func(e *logtest.Expectation) { e.Len(2) }},
		{"values", func(e *logtest.Expectation) { e.Key("x").Values("2", "1") }},
		{"header", func(e *logtest.Expectation) { e.Header("kind", "y") }},
		{"keys", func(e *logtest.Expectation) { e.Partition(5).Keys("x") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEmpty(t, fails(t, func(ft logtest.T) { tc.check(b.Expect(ft, "t")) }))
		})
	}
}

func TestFailNextAppend(t *testing.T) {
	b := logtest.New(t, logtest.Partitions(2))
	ctx := context.Background()
	b.Produce("t", logtest.InPartition(logtest.Value("before"), 0))
	b.FailNextAppend("t", 0, syscall.ENOSPC)

	p := b.Producer()
	p0, p1 := int32(0), int32(1)
	fut, err := p.Send(ctx, &producer.Record{Topic: "t", Partition: &p0, Value: []byte("lost")}, nil)
	require.NoError(t, err)
	_, err = fut.Wait(ctx)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorIs(t, err, log.ErrStorage)
	require.ErrorIs(t, err, vfs.ErrInjected)

	fut, err = p.Send(ctx, &producer.Record{Topic: "t", Partition: &p1, Value: []byte("other partition")}, nil)
	require.NoError(t, err)
	_, err = fut.Wait(ctx)
	require.NoError(t, err, "the other partition still works")

	l, err := b.Dir().Partition("t", 0)
	require.NoError(t, err)
	_, err = l.Append(batch(t, "refused"))
	require.ErrorIs(t, err, log.ErrStorage, "the partition refuses appends until reopened")

	b.Restart()
	b.Produce("t", logtest.InPartition(logtest.Value("after"), 0))
	b.Expect(t, "t").Partition(0).Values("before", "after")
	b.Expect(t, "t").Partition(1).Values("other partition")
}

// batch builds a producer batch of one record without a key.
func batch(t *testing.T, value string) []byte {
	t.Helper()
	var bb record.Builder
	bb.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, record.DefaultLevel)
	require.NoError(t, bb.Append(time.Now().UnixMilli(), nil, []byte(value), nil))
	out, err := bb.Build()
	require.NoError(t, err)
	return out
}

func TestDelay(t *testing.T) {
	b := logtest.New(t, logtest.Partitions(2))
	ctx := context.Background()
	p := b.Producer()
	h := b.Delay("t", 1)
	p1 := int32(1)
	fut, err := p.Send(ctx, &producer.Record{Topic: "t", Partition: &p1, Value: []byte("slow")}, nil)
	require.NoError(t, err)
	flushed := make(chan error, 1)
	go func() { flushed <- p.Flush(ctx) }()
	<-h.Waiting()
	select {
	case <-fut.Done():
		t.Fatal("the append completed while held")
	default:
	}
	b.Expect(t, "t").Len(0)
	h.Release()
	md, err := fut.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, int32(1), md.Partition)
	require.NoError(t, <-flushed)
	b.Expect(t, "t").Values("slow")

	t.Run("released by Close", func(t *testing.T) {
		b := logtest.New(t)
		h := b.Delay("t", 0)
		p := b.Producer()
		_, err := p.Send(ctx, &producer.Record{Topic: "t", Value: []byte("held")}, nil)
		require.NoError(t, err)
		flushed := make(chan error, 1)
		go func() { flushed <- p.Flush(ctx) }()
		<-h.Waiting()
		require.NoError(t, b.Close())
		require.NoError(t, <-flushed)
	})
}

func TestRestartAndCrash(t *testing.T) {
	b := logtest.New(t)
	b.Produce("t", logtest.KV("k", "durable")) // acks=all: fsynced
	b.Restart()
	b.Expect(t, "t").Values("durable")

	l, err := b.Dir().Partition("t", 0)
	require.NoError(t, err)
	_, err = l.Append(batch(t, "page cache only"))
	require.NoError(t, err)
	b.Expect(t, "t").Values("durable", "page cache only")
	b.Crash()
	b.Expect(t, "t").Values("durable")
	require.Positive(t, b.Dir().Recovery().Partitions, "the directory recovered as after a crash")
	b.Produce("t", logtest.KV("k", "after"))
	b.Expect(t, "t").Values("durable", "after")

	require.NotEmpty(t, fails(t, func(ft logtest.T) {
		logtest.New(ft, logtest.OnDisk()).Crash()
	}), "Crash needs the memory filesystem")
}

func TestWaitFor(t *testing.T) {
	b := logtest.New(t)
	b.Topic("t")
	p := b.Producer()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		for i := range 50 {
			if _, err := p.Send(ctx, &producer.Record{Topic: "t", Value: fmt.Appendf(nil, "%d", i)}, nil); err != nil {
				done <- err
				return
			}
		}
		done <- p.Flush(ctx)
	}()
	recs := b.WaitFor(t, "t", 50)
	require.Len(t, recs, 50)
	require.NoError(t, <-done)

	require.NotEmpty(t, fails(t, func(ft logtest.T) {
		logtest.New(ft, logtest.Timeout(10e6)).WaitFor(ft, "t", 1)
	}), "WaitFor fails after the timeout")
}

// TestSharedProducerDoesNotLinger: the shared producer starts from Kafka's
// defaults but linger.ms 0, so that a test sending a record and waiting for
// it does not wait out the 5 ms linger (5.7 ms a record before, against
// 0.3 ms); the other defaults stay Kafka's, and ProducerConfig may set a
// linger again.
func TestSharedProducerDoesNotLinger(t *testing.T) {
	var seen producer.Config
	logtest.New(t, logtest.ProducerConfig(func(c *producer.Config) { seen = *c }))
	want := producer.DefaultConfig()
	want.Linger = 0
	require.Equal(t, want.Linger, seen.Linger)
	require.Equal(t, want.Acks, seen.Acks)
	require.Equal(t, want.BatchSize, seen.BatchSize)
	require.Equal(t, want.EnableIdempotence, seen.EnableIdempotence)
}
