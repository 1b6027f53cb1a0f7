//go:build linux

package server_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// TestClientsThatNeverRead: 20 connections each send four read_committed
// fetches over 50 partitions, whose last stable offset an open
// transaction holds below data already written, and never read the
// answers (4 MiB each, more than the sockets buffer). While they are
// stuck the live heap stays under the documented bound, connections ×
// (socket.request.max.bytes + 256 KiB) + 16 MiB: a fetch holds no records
// in memory, read_committed's cut at the last stable offset included,
// and a connection has one request in hand at a time. The connections are
// closed once their writes made no progress for connections.max.idle.ms,
// and the heap goes back. On disk (sendfile), in memory, and over TLS
// (the records copied through a small buffer). The server
// copied each read_committed partition it cut (4 MiB a stuck connection,
// plus the copies' spare capacity while the fetch was made) and waited
// on a stuck write forever.
func TestClientsThatNeverRead(t *testing.T) {
	cert, pool := selfSigned(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	clientTLS := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	for _, tc := range []struct {
		name                 string
		start                func(testing.TB, func(*server.Config)) *servertest.Server
		serverTLS, clientTLS *tls.Config
	}{
		{"disk", servertest.Start, nil, nil},
		{"memory", servertest.StartInMemory, nil, nil},
		{"disk over TLS", servertest.Start, serverTLS, clientTLS},
	} {
		t.Run(tc.name, func(t *testing.T) { testClientsThatNeverRead(t, tc.start, tc.serverTLS, tc.clientTLS) })
	}
}

func testClientsThatNeverRead(t *testing.T, start func(testing.TB, func(*server.Config)) *servertest.Server, serverTLS, clientTLS *tls.Config) {
	const (
		conns           = 20
		fetchesEach     = 4
		partitions      = 50
		committedBytes  = 80 << 10  // per partition, below the last stable offset
		maxRequestBytes = 128 << 10 // the produce of a committed batch fits
		fetchMaxBytes   = 8 << 20
		perConn         = 256 << 10
		fixed           = 16 << 20
		idle            = 2 * time.Second
	)
	watch := newLogWatch()
	srv := start(t, func(c *server.Config) {
		c.MaxRequestBytes, c.FetchMaxBytes, c.IdleTimeout = maxRequestBytes, fetchMaxBytes, idle
		c.FailedAuthenticationDelay = 0
		c.TLS = serverTLS
		c.Logger = slog.New(watch)
	})
	ctx := context.Background()
	var kopts []kgo.Opt
	dial := func() net.Conn { return memDial(t, srv.Addr) }
	if clientTLS != nil {
		kopts = append(kopts, kgo.DialTLSConfig(clientTLS))
		dial = func() net.Conn {
			c, err := tls.Dial("tcp", srv.Addr, clientTLS)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			return c
		}
	}
	createTopic(t, client(t, srv.Addr, kopts...), "rc", partitions)
	// Each partition: a committed batch at offset 0, an open
	// transaction's record at 1 (the last stable offset), a batch after.
	pc := dial()
	for p := range int32(partitions) {
		require.NoError(t, memProduce(pc, memProduceFrame(t, "rc", p, memBatch(t, committedBytes))))
	}
	txn := client(t, srv.Addr, append(kopts, kgo.TransactionalID("never-read"), kgo.TransactionTimeout(10*time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	require.NoError(t, txn.BeginTransaction())
	for p := range int32(partitions) {
		require.NoError(t, txn.ProduceSync(ctx, &kgo.Record{Topic: "rc", Partition: p, Value: []byte("open")}).FirstErr())
	}
	for p := range int32(partitions) {
		require.NoError(t, memProduce(pc, memProduceFrame(t, "rc", p, memBatch(t, 16<<10))))
	}
	l, err := srv.Dir.Partition("rc", 7)
	require.NoError(t, err)
	require.Equal(t, int64(1), l.LastStableOffset())
	require.Equal(t, int64(3), l.HighWatermark())

	fetch := multiFetchFrame(t, "rc", partitions, fetchMaxBytes)
	// One fetch read whole: each partition's committed batch, cut before
	// the open transaction, and nothing after it.
	body, err := memExchange(pc, fetch, true)
	require.NoError(t, err)
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(11)
	require.NoError(t, resp.ReadFrom(body))
	committed := len(memBatch(t, committedBytes))
	for _, p := range resp.Topics[0].Partitions {
		require.Zero(t, p.ErrorCode)
		require.Len(t, p.RecordBatches, committed, "partition %d", p.Partition)
		require.Equal(t, int64(1), p.LastStableOffset)
	}
	require.NoError(t, pc.Close())

	base := heapLive()
	stuck := make([]net.Conn, conns)
	for i := range stuck {
		stuck[i] = dial()
		for range fetchesEach {
			_, err := stuck[i].Write(fetch)
			require.NoError(t, err)
		}
	}
	// Every connection is being answered (bytes wait in its socket) and
	// cannot be answered whole: 16 MiB each, unread.
	for _, c := range stuck {
		require.Eventually(t, func() bool { return peekable(t, c) }, time.Minute, 5*time.Millisecond)
	}
	bound := uint64(conns*(maxRequestBytes+perConn) + fixed)
	var peak uint64
	for range 10 {
		peak = max(peak, heapLive())
	}
	t.Logf("live heap: %.1f MiB before, %.1f MiB at the peak with %d connections stuck; bound %.1f MiB above the start",
		inMiB(base), inMiB(peak), conns, inMiB(bound))
	require.LessOrEqual(t, peak, base+bound, "the live heap with connections that do not read")

	watch.await(t, "closing a connection that does not read its responses", conns)
	for i, c := range stuck {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
		n, err := io.Copy(io.Discard, c)
		require.False(t, errorsIsTimeout(err), "connection %d is still open", i)
		require.Less(t, n, int64(fetchesEach*partitions*committed), "connection %d was closed before its answers were whole", i)
	}
	require.Eventually(t, func() bool { return heapLive() <= base+fixed }, time.Minute, 10*time.Millisecond,
		"the stuck connections' memory is released once they close")
	require.NoError(t, txn.AbortBufferedRecords(ctx))
	require.NoError(t, txn.EndTransaction(ctx, kgo.TryAbort))
	cl := client(t, srv.Addr, kopts...)
	require.NoError(t, cl.Ping(ctx), "still serving")
}

// peekable reports whether bytes of an answer wait in c's socket (under
// TLS, the connection's), without reading them.
func peekable(t *testing.T, c net.Conn) bool {
	t.Helper()
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	rc, err := c.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	n := 0
	require.NoError(t, rc.Control(func(fd uintptr) {
		buf := make([]byte, 1)
		n, _, _ = syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	}))
	return n > 0
}

// multiFetchFrame is a read_committed Fetch v11 request frame for
// partitions 0..n-1 of topic from offset 0, maxBytes in all and for each
// partition, answering at once.
func multiFetchFrame(t *testing.T, topic string, n int, maxBytes int32) []byte {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.IsolationLevel = -1, 0, 1, maxBytes, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for p := range int32(n) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = p, 0, maxBytes, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	frame := requestFrame(kmsg.Fetch.Int16(), 11, req.AppendTo(nil))
	require.Less(t, len(frame), 4<<10, fmt.Sprintf("a fetch of %d partitions", n))
	return frame
}

// errorsIsTimeout reports a network timeout.
func errorsIsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
