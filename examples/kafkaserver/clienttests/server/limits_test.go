package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
	kllog "github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// logWatch is a slog handler that keeps the server's messages and tells
// waiters when one containing a text arrives.
type logWatch struct {
	mu   sync.Mutex // protects the following
	msgs []string
	wake chan struct{} // closed and replaced at each message
}

func newLogWatch() *logWatch { return &logWatch{wake: make(chan struct{})} }

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *logWatch) WithGroup(string) slog.Handler            { return w }

func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	w.add(b.String())
	return nil
}

// add keeps a message (a log line of another process, say).
func (w *logWatch) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
	close(w.wake)
	w.wake = make(chan struct{})
}

// collect adds every line r gives until it ends.
func (w *logWatch) collect(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w.add(sc.Text())
	}
}

// next waits up to d for the next message.
func (w *logWatch) next(d time.Duration) {
	w.mu.Lock()
	wake := w.wake
	w.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	}
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msgs, "\n")
}

// count is how many messages contain text.
func (w *logWatch) count(text string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.msgs {
		if strings.Contains(m, text) {
			n++
		}
	}
	return n
}

// await waits until n messages contain text, failing t after a minute.
func (w *logWatch) await(t *testing.T, text string, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		w.mu.Lock()
		wake := w.wake
		w.mu.Unlock()
		if w.count(text) >= n {
			return
		}
		select {
		case <-wake:
		case <-timeout:
			t.Fatalf("%d log messages containing %q, waited for %d", w.count(text), text, n)
		}
	}
}

// flakyListener fails its first accepts as a process out of file
// descriptors fails them (EMFILE).
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptErrorsAreRetried: failed accepts (EMFILE) are logged and
// retried, as Kafka's acceptor goes on after them; Serve keeps serving
// and the clients that wait are served once accepts work again. Serve
// returned the first accept error, and the command exited.
func TestAcceptErrorsAreRetried(t *testing.T) {
	ctx := context.Background()
	lcfg := kllog.DefaultConfig()
	lcfg.FS = vfs.NewMem()
	d, err := kllog.Open(ctx, "/kl", lcfg)
	require.NoError(t, err)
	defer func() { require.NoError(t, d.Close()) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fl := &flakyListener{Listener: ln}
	fl.fails.Store(6)
	watch := newLogWatch()
	cfg := server.DefaultConfig()
	cfg.Logger = slog.New(watch)
	srv, err := server.New(d, cfg)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, fl) }()

	cl := client(t, ln.Addr().String())
	require.NoError(t, cl.Ping(ctx), "a client waiting through the failed accepts is served")
	require.Equal(t, 6, watch.count("accepting a connection failed"))
	require.Equal(t, 6, watch.count("too many open files"))
	createTopic(t, cl, "after", 1)

	require.NoError(t, srv.Close())
	require.ErrorIs(t, <-served, server.ErrServerClosed)
}

// apiVersions sends an ApiVersions v0 on c and returns the error of its
// answer (io.EOF when the server closed c instead).
func apiVersions(t *testing.T, c net.Conn) error {
	t.Helper()
	body, err := rawRequest(t, c, requestFrame(kmsg.ApiVersions.Int16(), 0, nil))
	if err != nil {
		return err
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	require.NoError(t, resp.ReadFrom(body))
	require.Zero(t, resp.ErrorCode)
	return nil
}

// dialFrom connects to addr from the local address ip (the loopback
// network holds all of 127.0.0.0/8 on Linux).
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	dl := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := dl.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestMaxConnectionsWaits: with max.connections connections open the
// server accepts no other; a new connection waits (in the listen backlog)
// and is served once one closes, as Kafka's acceptor waits for a slot.
// The server closed it at once.
func TestMaxConnectionsWaits(t *testing.T) {
	watch := newLogWatch()
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.MaxConnections = 2
		c.Logger = slog.New(watch)
	})
	first, second := memDial(t, srv.Addr), memDial(t, srv.Addr)
	require.NoError(t, apiVersions(t, first))
	require.NoError(t, apiVersions(t, second))
	third := memDial(t, srv.Addr)
	_, err := third.Write(requestFrame(kmsg.ApiVersions.Int16(), 0, nil))
	require.NoError(t, err)
	watch.await(t, "max.connections reached", 1)
	// The acceptor waits: nothing has answered the third connection.
	require.NoError(t, third.SetReadDeadline(time.Now()))
	_, err = third.Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "the third connection was answered or closed: %v", err)

	require.NoError(t, first.Close())
	var size [4]byte
	require.NoError(t, third.SetReadDeadline(time.Now().Add(time.Minute)))
	_, err = io.ReadFull(third, size[:])
	require.NoError(t, err, "the waiting connection is served once one closes")
	require.NoError(t, apiVersions(t, second))
}

// TestMaxConnectionsPerIP: a connection from an address that has
// max.connections.per.ip connections open is closed at once, as Kafka
// closes it; other addresses are served, an override raises the limit of
// its address, and a closed connection makes room. New refuses a limit of
// 0 without overrides, as Kafka does; with overrides, 0 refuses every
// other address.
func TestMaxConnectionsPerIP(t *testing.T) {
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.MaxConnectionsPerIP = 2
		c.MaxConnectionsPerIPOverrides = map[string]int{"127.0.0.2": 3}
		c.Logger = slog.New(slog.DiscardHandler)
	})
	var open []net.Conn
	for range 2 {
		c := dialFrom(t, "127.0.0.1", srv.Addr)
		require.NoError(t, apiVersions(t, c))
		open = append(open, c)
	}
	err := apiVersions(t, dialFrom(t, "127.0.0.1", srv.Addr))
	require.True(t, closedByServer(err), "a third connection from 127.0.0.1: %v", err)
	for range 3 {
		require.NoError(t, apiVersions(t, dialFrom(t, "127.0.0.2", srv.Addr)), "127.0.0.2's override is 3")
	}
	err = apiVersions(t, dialFrom(t, "127.0.0.2", srv.Addr))
	require.True(t, closedByServer(err), "a fourth from 127.0.0.2: %v", err)
	require.NoError(t, apiVersions(t, dialFrom(t, "127.0.0.3", srv.Addr)), "another address")

	require.NoError(t, open[0].Close())
	require.Eventually(t, func() bool {
		c := dialFrom(t, "127.0.0.1", srv.Addr)
		defer c.Close()
		return apiVersions(t, c) == nil
	}, time.Minute, 10*time.Millisecond, "a closed connection makes room (the server notices the close asynchronously)")
	require.NoError(t, apiVersions(t, open[1]))

	cfg := server.DefaultConfig()
	cfg.MaxConnectionsPerIP = 0
	_, err = server.New(srv.Dir, cfg)
	require.Error(t, err, "max.connections.per.ip=0 without overrides")

	only := servertest.StartInMemory(t, func(c *server.Config) {
		c.MaxConnectionsPerIP = 0
		c.MaxConnectionsPerIPOverrides = map[string]int{"127.0.0.5": 1}
		c.Logger = slog.New(slog.DiscardHandler)
	})
	err = apiVersions(t, dialFrom(t, "127.0.0.1", only.Addr))
	require.True(t, closedByServer(err), "an address without an override: %v", err)
	require.NoError(t, apiVersions(t, dialFrom(t, "127.0.0.5", only.Addr)))
}

// TestPartitionLimit: CreateTopics, CreatePartitions (validate-only too)
// and Metadata's auto-creation that would pass MaxPartitions are refused:
// POLICY_VIOLATION with the reason, UNKNOWN_TOPIC_OR_PARTITION for
// Metadata as Kafka 4 answers a refused auto-creation; nothing is
// created. A topic that exists is refused as such; what fits is created,
// and a deleted topic makes room. The server created a million
// partitions if asked (three file descriptors each).
func TestPartitionLimit(t *testing.T) {
	srv := servertest.StartInMemory(t, func(c *server.Config) {
		c.MaxPartitions, c.NumPartitions = 10, 2
		c.Logger = slog.New(slog.DiscardHandler)
	})
	ctx := context.Background()
	cl := client(t, srv.Addr)
	createTopic(t, cl, "six", 6)

	create := func(validate bool, topics map[string]int32) map[string]kmsg.CreateTopicsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validate
		for name, n := range topics {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, n, 1
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		out := map[string]kmsg.CreateTopicsResponseTopic{}
		for _, rt := range resp.Topics {
			out[rt.Topic] = rt
		}
		return out
	}
	const policyViolation = 44
	for _, validate := range []bool{true, false} {
		got := create(validate, map[string]int32{"five": 5})
		require.Equal(t, int16(policyViolation), got["five"].ErrorCode, "validate-only %v", validate)
		require.Contains(t, *got["five"].ErrorMessage, "holds 6 partitions, and 5 more would pass its limit of 10")
	}
	got := create(false, map[string]int32{"million": 1_000_000, "six": 1})
	require.Equal(t, int16(policyViolation), got["million"].ErrorCode)
	require.Equal(t, int16(36), got["six"].ErrorCode, "TOPIC_ALREADY_EXISTS, not the limit")
	require.Equal(t, []string{"six"}, srv.Dir.Topics(), "nothing created")

	got = create(false, map[string]int32{"four": 4})
	require.Zero(t, got["four"].ErrorCode, "what fits is created")

	for _, validate := range []bool{true, false} {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.ValidateOnly = validate
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "six", 7
		req.Topics = []kmsg.CreatePartitionsRequestTopic{rt}
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		require.Equal(t, int16(policyViolation), resp.Topics[0].ErrorCode)
	}
	td, err := srv.Dir.DescribeTopic("six")
	require.NoError(t, err)
	require.Equal(t, int32(6), td.Partitions)

	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("auto")
	meta.Topics, meta.AllowAutoTopicCreation = []kmsg.MetadataRequestTopic{mt}, true
	mresp, err := meta.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, int16(3), mresp.Topics[0].ErrorCode, "UNKNOWN_TOPIC_OR_PARTITION")
	_, err = srv.Dir.DescribeTopic("auto")
	require.ErrorIs(t, err, kllog.ErrUnknownTopicOrPartition)

	del := kmsg.NewPtrDeleteTopicsRequest()
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("four")
	del.TopicNames, del.Topics = []string{"four"}, []kmsg.DeleteTopicsRequestTopic{dt}
	dresp, err := del.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, dresp.Topics[0].ErrorCode)
	mresp, err = meta.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Zero(t, mresp.Topics[0].ErrorCode, "room again: auto-created")
	td, err = srv.Dir.DescribeTopic("auto")
	require.NoError(t, err)
	require.Equal(t, int32(2), td.Partitions)
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "auto", Value: []byte("x")}).FirstErr())
}

// closedByServer reports the error of a read from a connection the
// server closed: EOF, or a reset when the client had sent bytes the
// server did not read.
func closedByServer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}
