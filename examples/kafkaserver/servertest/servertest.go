// Package servertest starts a kafkaserver for one test: a kafkalite
// directory in the test's temporary directory, served on a loopback port,
// both closed by t.Cleanup.
package servertest

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/log"
)

// Server is a running server and its directory.
type Server struct {
	// Addr is the bootstrap address to give a client.
	Addr string
	// Dir is the served directory: a test may read it with kafkalite's
	// own API while clients use the server.
	Dir    *log.Dir
	srv    *server.Server
	closed bool
}

// Start opens a directory in t.TempDir() and serves it on 127.0.0.1 on a
// free port with server.DefaultConfig, changed by configure when it is not
// nil. It returns once the server accepts connections; t.Cleanup stops the
// server, then closes the directory, and fails t if either fails.
func Start(t testing.TB, configure func(*server.Config)) *Server {
	t.Helper()
	ctx := context.Background()
	d, err := log.Open(ctx, t.TempDir(), log.DefaultConfig())
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = d.Close()
		t.Fatalf("servertest: %v", err)
	}
	cfg := server.DefaultConfig()
	if configure != nil {
		configure(&cfg)
	}
	srv, err := server.New(d, cfg)
	if err != nil {
		_ = ln.Close()
		_ = d.Close()
		t.Fatalf("servertest: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	s := &Server{Addr: ln.Addr().String(), Dir: d, srv: srv}
	t.Cleanup(func() {
		if s.closed {
			return
		}
		if err := srv.Close(); err != nil {
			t.Errorf("servertest: closing the server: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("servertest: serving: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("servertest: closing the directory: %v", err)
		}
	})
	return s
}

// Close stops the server and closes its directory before the test ends
// (a restart test opens the directory again); the cleanup then does
// nothing more.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(s.srv.Close(), s.Dir.Close())
}
