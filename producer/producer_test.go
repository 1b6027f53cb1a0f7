package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/internal/testkit/matrix"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/partitioner"
	"github.com/kafkalite/kafkalite/record"
	"github.com/stretchr/testify/require"
)

// openDir opens a Dir on a memory filesystem with the given topics.
func openDir(t *testing.T, topics map[string]int32) *log.Dir {
	t.Helper()
	return openDirWith(t, topics, nil)
}

// openDirWith is openDir with a change to the directory's configuration
// (mod may be nil).
func openDirWith(t *testing.T, topics map[string]int32, mod func(*log.Config)) *log.Dir {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	if mod != nil {
		mod(&cfg)
	}
	d, err := log.Open(context.Background(), "/data", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	for name, n := range topics {
		_, err := d.CreateTopic(context.Background(), name, n, nil)
		require.NoError(t, err)
	}
	return d
}

func newProducer(t *testing.T, d *log.Dir, mod func(*Config)) *Producer {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Linger = time.Millisecond
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(d, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// readAll reads every record of a partition.
func readAll(t *testing.T, d *log.Dir, topic string, partition int32) []record.Record {
	t.Helper()
	l, err := d.Partition(topic, partition)
	require.NoError(t, err)
	var out []record.Record
	for off := int64(0); off < l.LogEndOffset(); {
		next, err := l.ReadRecords(off, 1<<20, func(r *record.Record, _ *record.BatchHeader) error {
			out = append(out, r.Clone())
			return nil
		})
		require.NoError(t, err)
		off = next
	}
	return out
}

func ptr(p int32) *int32 { return &p }

func TestSendAndAcks(t *testing.T) {
	matrix.EachCodec(t, func(t *testing.T, codec record.Compression) {
		for _, acks := range []Acks{AcksNone, AcksLeader, AcksAll} {
			t.Run(acks.String(), func(t *testing.T) {
				d := openDir(t, map[string]int32{"orders": 3})
				p := newProducer(t, d, func(c *Config) { c.Acks, c.EnableIdempotence, c.CompressionType = acks, acks == AcksAll, codec })
				var mu sync.Mutex
				got := map[int32][]int64{}
				var futures []Future
				for i := range 300 {
					key := []byte(fmt.Sprintf("customer-%d", i%7))
					f, err := p.Send(context.Background(), &Record{Topic: "orders", Key: key, Value: []byte(fmt.Sprint(i)),
						Headers: []record.Header{{Key: []byte("i"), Value: []byte(fmt.Sprint(i))}}}, func(md RecordMetadata, err error) {
						require.NoError(t, err)
						mu.Lock()
						got[md.Partition] = append(got[md.Partition], md.Offset)
						mu.Unlock()
					})
					require.NoError(t, err)
					futures = append(futures, f)
				}
				require.NoError(t, p.Flush(context.Background()))
				for i, f := range futures {
					md, err := f.Wait(context.Background())
					require.NoError(t, err)
					want := partitioner.PartitionForKey([]byte(fmt.Sprintf("customer-%d", i%7)), 3)
					require.Equal(t, want, md.Partition, "keys are hashed with Kafka's murmur2")
					if acks == AcksNone {
						require.Equal(t, int64(-1), md.Offset)
					}
				}
				total := 0
				for part := int32(0); part < 3; part++ {
					recs := readAll(t, d, "orders", part)
					total += len(recs)
					for i, r := range recs {
						require.Equal(t, int64(i), r.Offset)
						require.Len(t, r.Headers, 1)
					}
					if acks != AcksNone {
						offs := got[part]
						for i := range offs {
							require.Equal(t, int64(i), offs[i], "callbacks in offset order per partition")
						}
					}
				}
				require.Equal(t, 300, total)
			})
		}
	})
}

func TestExplicitPartitionAndKeylessSpread(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 4})
	p := newProducer(t, d, func(c *Config) { c.BatchSize = 1024 })
	for range 50 {
		_, err := p.Send(context.Background(), &Record{Topic: "t", Partition: ptr(2), Value: []byte("x")}, nil)
		require.NoError(t, err)
	}
	for range 2000 {
		_, err := p.Send(context.Background(), &Record{Topic: "t", Value: make([]byte, 100)}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Flush(context.Background()))
	counts := make([]int, 4)
	for part := range int32(4) {
		counts[part] = len(readAll(t, d, "t", part))
	}
	require.GreaterOrEqual(t, counts[2], 50)
	used := 0
	for _, c := range counts {
		if c > 0 {
			used++
		}
	}
	require.Greater(t, used, 1, "keyless records move to other partitions after batch.size bytes: %v", counts)
	_, err := p.Send(context.Background(), &Record{Topic: "t", Partition: ptr(4)}, nil)
	require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)
}

func TestSendErrors(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	p := newProducer(t, d, func(c *Config) { c.MaxRequestSize = 1000 })
	_, err := p.Send(context.Background(), &Record{Topic: "missing"}, nil)
	require.ErrorIs(t, err, log.ErrUnknownTopicOrPartition)
	_, err = p.Send(context.Background(), &Record{Value: []byte("x")}, nil)
	require.ErrorIs(t, err, ErrInvalidRecord)
	_, err = p.Send(context.Background(), nil, nil)
	require.ErrorIs(t, err, ErrInvalidRecord)
	_, err = p.Send(context.Background(), &Record{Topic: "t", Timestamp: time.UnixMilli(-5)}, nil)
	require.ErrorIs(t, err, ErrInvalidRecord)
	_, err = p.Send(context.Background(), &Record{Topic: "t", Headers: []record.Header{{Key: nil}}}, nil)
	require.ErrorIs(t, err, ErrInvalidRecord)
	_, err = p.Send(context.Background(), &Record{Topic: "t", Value: make([]byte, 2000)}, nil)
	require.ErrorIs(t, err, ErrRecordTooLarge)

	// Auto-creation is off by default; on, the topic is created with the
	// directory's num.partitions.
	auto := newProducer(t, d, func(c *Config) { c.AutoCreateTopics = true })
	f, err := auto.Send(context.Background(), &Record{Topic: "created", Value: []byte("v")}, nil)
	require.NoError(t, err)
	md, err := f.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, "created", md.Topic)

	require.NoError(t, p.Close(context.Background()))
	_, err = p.Send(context.Background(), &Record{Topic: "t"}, nil)
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, p.Close(context.Background()), "Close is idempotent")
}

// TestLogErrorsReachCallbacks: a batch the log refuses fails its records.
func TestLogErrorsReachCallbacks(t *testing.T) {
	d := openDir(t, nil)
	_, err := d.CreateTopic(context.Background(), "small", 1, map[string]string{"max.message.bytes": "500"})
	require.NoError(t, err)
	p := newProducer(t, d, nil)
	var cbErr error
	f, err := p.Send(context.Background(), &Record{Topic: "small", Value: make([]byte, 800)}, func(_ RecordMetadata, err error) { cbErr = err })
	require.NoError(t, err)
	_, err = f.Wait(context.Background())
	require.ErrorIs(t, err, log.ErrRecordTooLarge)
	require.ErrorIs(t, err, ErrRecordTooLarge)
	require.ErrorIs(t, cbErr, log.ErrRecordTooLarge)
	require.Equal(t, int64(1), p.Stats().Errors)
}

// TestCallbackPanics: a panicking callback is recovered and the sender
// carries on.
func TestCallbackPanics(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	p := newProducer(t, d, nil)
	_, err := p.Send(context.Background(), &Record{Topic: "t", Value: []byte("a")}, func(RecordMetadata, error) { panic("boom") })
	require.NoError(t, err)
	f, err := p.Send(context.Background(), &Record{Topic: "t", Value: []byte("b")}, nil)
	require.NoError(t, err)
	md, err := f.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(1), md.Offset)
	require.NoError(t, p.Flush(context.Background()))
	require.Equal(t, int64(1), p.Stats().CallbackPanics)
}

type countingInterceptor struct {
	sends, acks atomic.Int64
}

func (c *countingInterceptor) OnSend(r *Record) *Record {
	c.sends.Add(1)
	out := *r
	out.Headers = append(append([]record.Header(nil), r.Headers...), record.Header{Key: []byte("intercepted"), Value: []byte("yes")})
	return &out
}

func (c *countingInterceptor) OnAcknowledgement(RecordMetadata, error) { c.acks.Add(1) }

func TestInterceptors(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	ic := &countingInterceptor{}
	p := newProducer(t, d, func(c *Config) { c.Interceptors = []Interceptor{ic} })
	for range 10 {
		_, err := p.Send(context.Background(), &Record{Topic: "t", Value: []byte("v")}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Flush(context.Background()))
	require.Equal(t, int64(10), ic.sends.Load())
	require.Equal(t, int64(10), ic.acks.Load())
	recs := readAll(t, d, "t", 0)
	require.Equal(t, []byte("intercepted"), recs[0].Headers[0].Key)
}

// TestConcurrentSendersAndFullPool: many goroutines send through a pool far
// smaller than what they send; every record arrives once, in order per
// goroutine, and memory never exceeds buffer.memory.
func TestConcurrentSendersAndFullPool(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 3})
	p := newProducer(t, d, func(c *Config) {
		c.BufferMemory = 16 << 10
		c.BatchSize = 2048
		c.Linger = 50 * time.Millisecond
	})
	const senders, each = 8, 300
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := p.Send(context.Background(), &Record{Topic: "t", Key: []byte(fmt.Sprintf("g%d", g)), Value: []byte(fmt.Sprintf("%d", i))}, nil)
				if err != nil {
					t.Error(err)
					return
				}
				require.LessOrEqual(t, p.Stats().BufferTotalBytes-p.Stats().BufferAvailableBytes, int64(16<<10))
			}
		}()
	}
	wg.Wait()
	require.NoError(t, p.Close(context.Background()))
	seen := map[string]int{}
	for part := int32(0); part < 3; part++ {
		for _, r := range readAll(t, d, "t", part) {
			var i int
			_, err := fmt.Sscan(string(r.Value), &i)
			require.NoError(t, err)
			require.Equal(t, seen[string(r.Key)], i, "in order per key")
			seen[string(r.Key)]++
		}
	}
	for g := range senders {
		require.Equal(t, each, seen[fmt.Sprintf("g%d", g)])
	}
}

// TestSendBlocksOnFullPool: with the pool exhausted and nothing draining,
// Send waits max.block.ms and fails.
func TestSendBlocksOnFullPool(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	p := newProducer(t, d, func(c *Config) {
		c.BufferMemory = 4096
		c.BatchSize = 4096
		c.Linger = time.Hour
		c.MaxBlock = 20 * time.Millisecond
		c.DeliveryTimeout = 2 * time.Hour
	})
	// One batch takes all the memory and lingers an hour; a record that
	// needs a second batch waits for memory, which the sender frees by
	// sending early (Kafka drains when memory is exhausted).
	_, err := p.Send(context.Background(), &Record{Topic: "t", Value: make([]byte, 3000)}, nil)
	require.NoError(t, err)
	f, err := p.Send(context.Background(), &Record{Topic: "t", Value: make([]byte, 3000)}, nil)
	require.NoError(t, err)
	md, err := f.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(1), md.Offset)

	_, err = p.Send(context.Background(), &Record{Topic: "t", Value: make([]byte, 5000)}, nil)
	require.ErrorIs(t, err, ErrRecordTooLarge, "larger than buffer.memory fails at once, without waiting for memory")
}

func TestCloseWithExpiredContext(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	p := newProducer(t, d, func(c *Config) { c.Linger = time.Hour; c.DeliveryTimeout = 2 * time.Hour })
	var cbErr error
	var done = make(chan struct{})
	_, err := p.Send(context.Background(), &Record{Topic: "t", Value: []byte("x")}, func(_ RecordMetadata, err error) { cbErr = err; close(done) })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = p.Close(ctx)
	<-done
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, cbErr, ErrClosed, "a Close with no time left sends nothing more")
}

func TestTypedProducer(t *testing.T) {
	d := openDir(t, map[string]int32{"events": 1})
	p := newProducer(t, d, nil)
	type event struct {
		Kind string `json:"kind"`
	}
	tp := NewTyped(p, StringSerializer, JSONSerializer[event])
	f, err := tp.Send(context.Background(), TypedRecord[string, event]{Topic: "events", Key: "k", Value: event{Kind: "click"}}, nil)
	require.NoError(t, err)
	_, err = f.Wait(context.Background())
	require.NoError(t, err)
	recs := readAll(t, d, "events", 0)
	require.Equal(t, `{"kind":"click"}`, string(recs[0].Value))
	bad := NewTyped(p, StringSerializer, func(string, int) ([]byte, error) { return nil, errors.New("nope") })
	_, err = bad.Send(context.Background(), TypedRecord[string, int]{Topic: "events"}, nil)
	require.ErrorIs(t, err, ErrSerialization)
}

func TestCompressionAndStats(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	p := newProducer(t, d, func(c *Config) { c.CompressionType = record.Zstd; c.BatchSize = 64 << 10 })
	for i := range 1000 {
		_, err := p.Send(context.Background(), &Record{Topic: "t", Value: []byte(fmt.Sprintf(`{"event":"view","n":%d}`, i%10))}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Flush(context.Background()))
	st := p.Stats()
	require.Equal(t, int64(1000), st.Records)
	require.Less(t, st.CompressionRate, 0.5)
	require.Greater(t, st.RecordsPerBatch, 1.0)
	l, err := d.Partition("t", 0)
	require.NoError(t, err)
	res, err := l.Read(0, 1<<20, true)
	require.NoError(t, err)
	defer res.Release()
	b, err := res.Slice.Bytes(nil)
	require.NoError(t, err)
	h, err := record.ParseHeader(b)
	require.NoError(t, err)
	require.Equal(t, record.Zstd, h.Attributes.Compression())
}

// TestRoundRobinPartitioner: a custom partitioner with OnNewBatch spreads
// records evenly, as Kafka 4's RoundRobinPartitioner does.
func TestRoundRobinPartitioner(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 3})
	p := newProducer(t, d, func(c *Config) { c.Partitioner = partitioner.NewRoundRobin(); c.BatchSize = 0 })
	for range 30 {
		_, err := p.Send(context.Background(), &Record{Topic: "t", Key: []byte("same"), Value: []byte("v")}, nil)
		require.NoError(t, err)
	}
	require.NoError(t, p.Flush(context.Background()))
	for part := int32(0); part < 3; part++ {
		require.Len(t, readAll(t, d, "t", part), 10)
	}
}

// TestClosedDirIsClosedProducer: once the producer's Dir is closed, Send
// and the outcomes of records buffered before fail with an error that
// matches both producer.ErrClosed and log.ErrClosed (Send returned only
// log.ErrClosed, so a caller checking the producer's sentinel missed it).
func TestClosedDirIsClosedProducer(t *testing.T) {
	d := openDir(t, map[string]int32{"t": 1})
	p := newProducer(t, d, func(c *Config) { c.Linger, c.DeliveryTimeout = time.Minute, time.Hour })
	f, err := p.Send(context.Background(), &Record{Topic: "t", Value: []byte("buffered")}, nil)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, p.Flush(context.Background()))
	_, err = f.Wait(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, log.ErrClosed)
	// A record sent after: refused by Send, or failed once sent.
	f, err = p.Send(context.Background(), &Record{Topic: "t", Value: []byte("after")}, nil)
	if err == nil {
		require.NoError(t, p.Flush(context.Background()))
		_, err = f.Wait(context.Background())
	}
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, log.ErrClosed)
	// A topic the producer has not seen: refused by Send.
	_, err = p.Send(context.Background(), &Record{Topic: "other", Value: []byte("after")}, nil)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, err, log.ErrClosed)
}
