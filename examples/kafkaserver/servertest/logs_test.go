package servertest_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/examples/kafkaserver/server"
	"github.com/kafkalite/kafkalite/examples/kafkaserver/servertest"
)

// outputTB is a test whose output is kept in a buffer.
type outputTB struct {
	testing.TB
	mu  sync.Mutex
	out bytes.Buffer
}

func (o *outputTB) Output() io.Writer { return o }

func (o *outputTB) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.Write(p)
}

func (o *outputTB) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.out.String()
}

// TestLogsGoToTheTest: what a server started for a test logs (here, at
// Info, the connection it closes for a request above
// socket.request.max.bytes) goes to the test's output, for disk and memory
// alike, and nothing to the process's default logger, which printed a
// line to stderr for every test; a Logger the test configures gets the
// server's logs instead.
func TestLogsGoToTheTest(t *testing.T) {
	var std bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&std, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)
	oversized := func(t *testing.T, addr string) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write(binary.BigEndian.AppendUint32(nil, 1<<30))
		require.NoError(t, err)
		_, err = io.ReadAll(c) // until the server closes it
		require.NoError(t, err)
	}
	for _, st := range []struct {
		name  string
		start func(testing.TB, func(*server.Config)) *servertest.Server
	}{{"disk", servertest.Start}, {"memory", servertest.StartInMemory}} {
		t.Run(st.name, func(t *testing.T) {
			tb := &outputTB{TB: t}
			srv := st.start(tb, nil)
			oversized(t, srv.Addr)
			require.NoError(t, srv.Close())
			require.Contains(t, tb.String(), "kafkaserver: closing a connection")
			require.Contains(t, tb.String(), "level=INFO")

			var own bytes.Buffer
			var mu sync.Mutex
			tb = &outputTB{TB: t}
			srv = st.start(tb, func(c *server.Config) {
				c.Logger = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					return own.Write(p)
				}), nil))
			})
			oversized(t, srv.Addr)
			require.NoError(t, srv.Close())
			mu.Lock()
			require.Contains(t, own.String(), "kafkaserver: closing a connection")
			mu.Unlock()
			require.NotContains(t, tb.String(), "kafkaserver: closing a connection")
		})
	}
	require.Empty(t, std.String(), "nothing to the process's logger")
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
