// Package servertest starts a kafkaserver for one test: a kafkalite
// directory in the test's temporary directory ([Start]) or in memory
// ([StartInMemory]), served on a loopback port, both closed by t.Cleanup.
//
// What the server and its directory log goes to the test's output (t.Output,
// shown by go test -v and for a test that fails), at level Info and above,
// not to the process's stderr; a server.Config.Logger set by the test's
// configure function takes the server's instead.
package servertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
)

// Server is a running server and its directory.
type Server struct {
	// Addr is the bootstrap address to give a client. It stays the same
	// across Restart.
	Addr string
	// Dir is the served directory: a test may read it with kafkalite's
	// own API while clients use the server. Restart replaces it.
	Dir *log.Dir
	// Addrs are the brokers' addresses by broker id, the first one Addr
	// (StartCluster; one broker otherwise). They stay the same across
	// Restart, StopBroker and StartBroker.
	Addrs map[int32]string

	path   string
	fs     vfs.FS // nil: the operating system's
	cfg    server.Config
	logger *slog.Logger // the directory's: to the test's output
	srv    *server.Server
	served chan error // one result per broker served
	nserve int        // the ServeBroker calls whose results served has not given
	closed bool
}

// Start opens a directory in t.TempDir() and serves it on 127.0.0.1 on a
// free port with server.DefaultConfig, changed by configure when it is not
// nil. It returns once the server accepts connections; t.Cleanup stops the
// server, then closes the directory, and fails t if either fails.
func Start(t testing.TB, configure func(*server.Config)) *Server {
	t.Helper()
	cfg := server.DefaultConfig()
	if configure != nil {
		configure(&cfg)
	}
	return startWith(t, &Server{path: t.TempDir(), cfg: cfg})
}

// StartInMemory is Start with the directory in memory (log/vfs's memory
// filesystem) instead of on disk: nothing is fsynced, so a server starts
// and closes in a fraction of the time Start's directory costs in fsyncs
// (docs/performance.md, "Tests with logtest and servertest", gives the
// figures). The clients see the same server; what a test gives up is the
// files themselves (Kafka's tools reading them, sendfile(2), a crash of
// the process). Restart keeps the memory.
func StartInMemory(t testing.TB, configure func(*server.Config)) *Server {
	t.Helper()
	cfg := server.DefaultConfig()
	if configure != nil {
		configure(&cfg)
	}
	return startWith(t, &Server{path: "/kafkalite", fs: vfs.NewMem(), cfg: cfg})
}

func startWith(t testing.TB, s *Server) *Server {
	t.Helper()
	// Registered first, this cleanup runs last: after the server and its
	// directory closed, nothing writes to the test's output, which may
	// not be written once the test has ended.
	out := &testOutput{w: t.Output()}
	t.Cleanup(out.end)
	s.logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if s.cfg.Logger == nil {
		s.cfg.Logger = s.logger
	}
	if err := s.start("127.0.0.1:0"); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("servertest: %v", err)
		}
	})
	return s
}

// start opens the directory and serves it on addr.
func (s *Server) start(addr string) error {
	lcfg := log.DefaultConfig()
	lcfg.Logger = s.logger
	if s.fs != nil {
		lcfg.FS = s.fs
	}
	d, err := log.Open(context.Background(), s.path, lcfg)
	if err != nil {
		return err
	}
	srv, err := server.New(d, s.cfg)
	if err != nil {
		return errors.Join(err, d.Close())
	}
	ids := srv.Brokers()
	s.served = make(chan error, len(ids))
	s.Dir, s.srv, s.closed, s.nserve = d, srv, false, 0
	addrs := map[int32]string{}
	for i, id := range ids {
		a := addr
		if s.Addrs[id] != "" {
			a = s.Addrs[id]
		} else if i > 0 {
			a = "127.0.0.1:0"
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return errors.Join(err, s.Close())
		}
		addrs[id] = ln.Addr().String()
		if err := s.serve(id, ln); err != nil {
			return errors.Join(err, s.Close())
		}
	}
	s.Addr, s.Addrs = addrs[ids[0]], addrs
	return nil
}

// serve serves broker id on ln until it stops or the server closes.
// It returns once the broker is registered (listed in Metadata, leading
// its partitions again), or its serving ended.
func (s *Server) serve(id int32, ln net.Listener) error {
	s.nserve++
	ended := make(chan error, 1)
	go func() {
		err := s.srv.ServeBroker(context.Background(), id, ln)
		ended <- err
		s.served <- err
	}()
	// The broker registers as soon as its goroutine runs: look again
	// after 10 µs, doubling up to 1 ms (a first wait of 1 ms was most of
	// a start in memory).
	for wait := 10 * time.Microsecond; s.srv.BrokerAddr(id) == ""; wait = min(2*wait, time.Millisecond) {
		select {
		case err := <-ended:
			return err
		case <-time.After(wait):
		}
	}
	return nil
}

// StartCluster is Start with n virtual brokers (server.Config.Brokers),
// each on its own loopback port (Addrs), the first at Addr.
func StartCluster(t testing.TB, n int, configure func(*server.Config)) *Server {
	t.Helper()
	return Start(t, func(c *server.Config) {
		c.Brokers = n
		if configure != nil {
			configure(c)
		}
	})
}

// Srv is the running server, for its cluster's Go API
// (server.Server.MoveLeader, PartitionLeader and the like). Restart
// replaces it.
func (s *Server) Srv() *server.Server { return s.srv }

// StopBroker stops broker id as server.Server.StopBroker does (its port
// closes, its connections drop, its partitions' leadership moves to their
// other replicas); it fails t if that fails.
func (s *Server) StopBroker(t testing.TB, id int32) {
	t.Helper()
	if err := s.srv.StopBroker(id); err != nil {
		t.Fatalf("servertest: stopping broker %d: %v", id, err)
	}
	if err := <-s.served; err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatalf("servertest: broker %d: %v", id, err)
	}
	s.nserve--
}

// StartBroker serves broker id again on its address, after StopBroker;
// it fails t if the port cannot be listened on again.
func (s *Server) StartBroker(t testing.TB, id int32) {
	t.Helper()
	ln, err := net.Listen("tcp", s.Addrs[id])
	if err != nil {
		t.Fatalf("servertest: starting broker %d: %v", id, err)
	}
	if err := s.serve(id, ln); err != nil {
		t.Fatalf("servertest: starting broker %d: %v", id, err)
	}
}

// Restart stops the server and closes its directory as Close does, then
// opens the directory again and serves it on the same address: clients
// connected before reconnect to it and carry on, as across a broker's
// restart. It fails t if the stop or the new start fails.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("servertest: restart: %v", err)
	}
	if err := s.start(s.Addr); err != nil {
		t.Fatalf("servertest: restart: %v", err)
	}
}

// RestartAfterPowerLoss is Restart after a simulated power loss of the
// machine of a server started with StartInMemory: the directory opens
// again with only what was fsynced (and the directory entries synced)
// when it was called, as after a kill -9 of a broker followed by the
// loss of the page cache. It fails t for a server on disk.
func (s *Server) RestartAfterPowerLoss(t testing.TB) {
	t.Helper()
	mem, ok := s.fs.(*vfs.MemFS)
	if !ok {
		t.Fatalf("servertest: a power loss needs a server started with StartInMemory")
	}
	survivor := mem.CrashClone()
	// The old directory closes on the old filesystem; nothing it writes
	// now reaches the survivor.
	if err := s.Close(); err != nil {
		t.Fatalf("servertest: restart after a power loss: %v", err)
	}
	s.fs = survivor
	if err := s.start(s.Addr); err != nil {
		t.Fatalf("servertest: restart after a power loss: %v", err)
	}
}

// Close stops the server and closes its directory before the test ends
// (a restart test opens the directory again); the cleanup then does
// nothing more.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if err := s.srv.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the server: %w", err))
	}
	for ; s.nserve > 0; s.nserve-- {
		if err := <-s.served; err != nil && !errors.Is(err, server.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, fmt.Errorf("serving: %w", err))
		}
	}
	if err := s.Dir.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the directory: %w", err))
	}
	return errors.Join(errs...)
}

// testOutput passes the logs to a test's output until the test ends.
type testOutput struct {
	mu    sync.Mutex // protects the following
	w     io.Writer
	ended bool
}

func (o *testOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return len(p), nil
	}
	return o.w.Write(p)
}

func (o *testOutput) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = true
}
