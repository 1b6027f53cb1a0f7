package server_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	"github.com/kafkalite/kafkalite/record"
)

// TestMemoryBoundedByLimits: the server's heap stays within what its
// limits imply while many connections produce requests near
// socket.request.max.bytes and many others fetch a large topic, with
// fetch.max.bytes far below what the fetches ask for: at most one request
// frame per connection (the server reads a request only once its size is
// checked, and reuses the connection's buffer) and its two 64 KiB
// buffers; a fetch holds no record bytes in memory (the records go out as
// file slices, the read_committed fetch cut at the last stable offset
// too, exercised here by an open transaction). The load writes 128 MiB,
// about three times the bound, so a server that kept what it was sent, or
// copied what it fetched, would exceed it. The heap is the live heap after a forced
// collection, sampled as the load goes, in this process (the clients'
// share is one shared request frame and small buffers); once the
// connections close it is back near where it started.
func TestMemoryBoundedByLimits(t *testing.T) {
	const (
		maxRequestBytes = 1 << 20
		fetchMaxBytes   = 256 << 10
		producers       = 16
		fetchers        = 16
		requestsEach    = 8 // per producer: 16 × 8 requests of 1 MiB
		partitions      = 4
		// perConn is what a connection may hold besides its request: the
		// server's bufio reader and writer (64 KiB each), a decoded
		// request and its response, and the client's buffers here.
		perConn = 256 << 10
		// fixed covers what does not grow with the load: the directory,
		// the kgo clients, and what is allocated while a forced
		// collection marks (counted live by that collection).
		fixed = 16 << 20
	)
	srv := servertest.Start(t, func(c *server.Config) {
		c.MaxRequestBytes, c.FetchMaxBytes = maxRequestBytes, fetchMaxBytes
		c.Logger = slog.New(slog.DiscardHandler)
	})
	createTopic(t, client(t, srv.Addr), "big", partitions)

	// Partition 0: 32 small batches, then an open transaction, so that
	// its last stable offset stays at 32 while the load appends past it,
	// and a read_committed fetch from 0 takes the copy path.
	small := memProduceFrame(t, "big", 0, memBatch(t, 4<<10))
	c := memDial(t, srv.Addr)
	for range 32 {
		require.NoError(t, memProduce(c, small))
	}
	txn := client(t, srv.Addr, kgo.TransactionalID("memory-test"), kgo.TransactionTimeout(10*time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, txn.BeginTransaction())
	require.NoError(t, txn.ProduceSync(context.Background(), &kgo.Record{Topic: "big", Partition: 0, Value: []byte("open")}).FirstErr())
	p0, err := srv.Dir.Partition("big", 0)
	require.NoError(t, err)
	require.Equal(t, int64(32), p0.LastStableOffset(), "the open transaction holds the last stable offset")

	bigFrames := make([][]byte, partitions) // one per partition, shared by the producers
	for p := range partitions {
		bigFrames[p] = memProduceFrame(t, "big", int32(p), memBatch(t, maxRequestBytes-1024))
	}
	require.LessOrEqual(t, len(bigFrames[0])-4, maxRequestBytes)
	require.Greater(t, len(bigFrames[0])-4, maxRequestBytes-2048, "a request near socket.request.max.bytes")
	// The fetch asks for 64 MiB, 256 times fetch.max.bytes: fetcher i
	// reads partition i%4 from offset 0, read_committed when i is even.
	fetchFrames := map[[2]int][]byte{}
	for p := range partitions {
		for iso := range 2 {
			fetchFrames[[2]int{p, iso}] = memFetchFrame(t, "big", int32(p), int8(iso), 64<<20)
		}
	}
	// One of each before the load: a read_committed fetch of partition 0
	// gets the 32 small batches, cut before the open transaction.
	body, err := memExchange(c, fetchFrames[[2]int{0, 1}], true)
	require.NoError(t, err)
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(11)
	require.NoError(t, resp.ReadFrom(body))
	require.Zero(t, resp.Topics[0].Partitions[0].ErrorCode)
	require.Equal(t, 32*len(memBatch(t, 4<<10)), len(resp.Topics[0].Partitions[0].RecordBatches))
	require.NoError(t, c.Close())

	base := heapLive()
	var (
		peak    uint64
		peakMu  sync.Mutex // protects peak
		sample  = make(chan struct{}, 1)
		stop    = make(chan struct{})
		sampled = make(chan struct{})
	)
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-sample:
				h := heapLive()
				peakMu.Lock()
				peak = max(peak, h)
				peakMu.Unlock()
			}
		}
	}()
	tick := func() {
		select {
		case sample <- struct{}{}:
		default:
		}
	}

	var (
		wg, fwg    sync.WaitGroup
		errs       = make(chan error, producers+fetchers)
		producing  = make(chan struct{})
		fetched    [fetchers]int64
		producerCs = make([]net.Conn, producers)
		fetcherCs  = make([]net.Conn, fetchers)
	)
	for i := range producers {
		producerCs[i] = memDial(t, srv.Addr)
		wg.Go(func() {
			for range requestsEach {
				if err := memProduce(producerCs[i], bigFrames[i%partitions]); err != nil {
					errs <- fmt.Errorf("producer %d: %w", i, err)
					return
				}
				tick()
			}
		})
	}
	for i := range fetchers {
		fetcherCs[i] = memDial(t, srv.Addr)
		fwg.Go(func() {
			// Until the producers are done, and at least once.
			frame := fetchFrames[[2]int{i % partitions, 1 - i%2}]
			for {
				if _, err := memExchange(fetcherCs[i], frame, false); err != nil {
					errs <- fmt.Errorf("fetcher %d: %w", i, err)
					return
				}
				fetched[i]++
				tick()
				select {
				case <-producing:
					return
				default:
				}
			}
		})
	}
	wg.Wait()
	close(producing)
	fwg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	close(stop)
	<-sampled
	held := heapLive() // the connections are still open
	for _, c := range append(producerCs, fetcherCs...) {
		require.NoError(t, c.Close())
	}
	require.NoError(t, txn.AbortBufferedRecords(context.Background()))
	require.NoError(t, txn.EndTransaction(context.Background(), kgo.TryAbort))

	bound := uint64(producers*(maxRequestBytes+perConn) + fetchers*perConn + fixed)
	t.Logf("live heap: %.1f MiB before the load, %.1f MiB at its peak, %.1f MiB after it with the connections open; bound %.1f MiB above the start; fetches per fetcher %v",
		inMiB(base), inMiB(peak), inMiB(held), inMiB(bound), fetched)
	require.LessOrEqual(t, peak, base+bound, "the live heap at the load's peak")
	require.LessOrEqual(t, held, base+bound, "the live heap after the load")
	require.Eventually(t, func() bool { return heapLive() <= base+fixed }, time.Minute, 10*time.Millisecond,
		"the connections' buffers are released once they close (the server notices a close asynchronously)")
}

// heapLive is the heap's live bytes after a forced collection.
func heapLive() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func inMiB(n uint64) float64 { return float64(n) / (1 << 20) }

// memBatch is an uncompressed batch of one record whose value takes
// size bytes.
func memBatch(t *testing.T, size int) []byte {
	t.Helper()
	b, err := record.AppendBatch(nil, record.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}, 0,
		[]record.Record{{Timestamp: time.Now().UnixMilli(), Value: make([]byte, size)}})
	require.NoError(t, err)
	return b
}

// memProduceFrame is a Produce v8 request frame (acks=1) of one batch to one
// partition.
func memProduceFrame(t *testing.T, topic string, partition int32, batch []byte) []byte {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(8)
	req.Acks, req.TimeoutMillis = 1, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = []kmsg.ProduceRequestTopicPartition{rp}
	req.Topics = []kmsg.ProduceRequestTopic{rt}
	return requestFrame(kmsg.Produce.Int16(), 8, req.AppendTo(nil))
}

// memFetchFrame is a Fetch v11 request frame for one partition from offset
// 0, asking for maxBytes in all and for the partition, isolation 0
// (read_uncommitted) or 1 (read_committed), waiting up to a second for a
// byte.
func memFetchFrame(t *testing.T, topic string, partition int32, isolation int8, maxBytes int32) []byte {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.IsolationLevel = -1, 1000, 1, maxBytes, isolation
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = partition, 0, maxBytes, -1, -1
	rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	return requestFrame(kmsg.Fetch.Int16(), 11, req.AppendTo(nil))
}

func memDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// memExchange writes a request frame and reads its response, returning the
// response's body (after the correlation id) when keep is set, else
// discarding it. A minute's deadline guards against a hang.
func memExchange(c net.Conn, frame []byte, keep bool) ([]byte, error) {
	if err := c.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		return nil, err
	}
	if _, err := c.Write(frame); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(size[:]))
	if !keep {
		_, err := io.CopyN(io.Discard, c, n)
		return nil, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	return body[4:], nil
}

// memProduce sends a Produce v8 frame and checks its answer.
func memProduce(c net.Conn, frame []byte) error {
	body, err := memExchange(c, frame, true)
	if err != nil {
		return err
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.SetVersion(8)
	if err := resp.ReadFrom(body); err != nil {
		return err
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		return fmt.Errorf("produce: error code %d", code)
	}
	return nil
}

// TestAnnouncedSizeHoldsNoMemory: a request's size alone holds no memory.
// Connections that announce a request of the full socket.request.max.bytes
// (100 MiB) and send only its first bytes cost the server what they sent
// and a step of its read buffer (1 MiB), not the size they announced; a
// server that allocated the announced size would hold 3.2 GiB here.
func TestAnnouncedSizeHoldsNoMemory(t *testing.T) {
	srv := servertest.Start(t, func(c *server.Config) { c.Logger = slog.New(slog.DiscardHandler) })
	const conns = 32
	base := heapLive()
	var open []net.Conn
	for range conns {
		c := memDial(t, srv.Addr)
		open = append(open, c)
		var frame [4 + 14]byte
		binary.BigEndian.PutUint32(frame[:], 100<<20)
		// The start of a Produce v8 header: key, version, correlation id.
		binary.BigEndian.PutUint16(frame[4:], 0)
		binary.BigEndian.PutUint16(frame[6:], 8)
		_, err := c.Write(frame[:])
		require.NoError(t, err)
	}
	// Every connection's first bytes have reached the server when a new
	// connection's request is answered after them (connections are
	// accepted and read in order of arrival only loosely, so the check
	// is that the heap stays bounded however far the reads have got).
	cl := client(t, srv.Addr)
	require.NoError(t, cl.Ping(context.Background()))
	held := heapLive()
	bound := uint64(conns*(1<<20+128<<10) + 16<<20)
	require.LessOrEqual(t, held, base+bound, "%d connections announcing 100 MiB each hold %.1f MiB (bound %.1f MiB)",
		conns, inMiB(held-min(held, base)), inMiB(bound))
	for _, c := range open {
		require.NoError(t, c.Close())
	}
}
