package fileio

import (
	"bytes"
	"io"
	"net"
	"path/filepath"
	"testing"

	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/stretchr/testify/require"
)

// loopback returns a TCP connection to a listener on 127.0.0.1 and a
// channel that receives everything written to it once it is closed.
func loopback(t *testing.T) (net.Conn, <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	return c, got
}

// TestCopyRange sends a range of a file over a loopback TCP connection (the
// kernel path on Linux) and into a buffer (the copying path).
func TestCopyRange(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	name := filepath.Join(t.TempDir(), "f")
	f, err := vfs.Default.Create(name)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	defer f.Close()

	c, got := loopback(t)
	n, err := CopyRange(c, f, 1000, 700000)
	require.NoError(t, err)
	require.Equal(t, int64(700000), n)
	require.NoError(t, c.Close())
	require.Equal(t, data[1000:701000], <-got)

	var buf bytes.Buffer
	n, err = CopyRange(&buf, f, 5, 20)
	require.NoError(t, err)
	require.Equal(t, int64(20), n)
	require.Equal(t, data[5:25], buf.Bytes())

	mem := vfs.NewMem()
	mf, err := mem.Create("/m")
	require.NoError(t, err)
	_, err = mf.Write(data[:100])
	require.NoError(t, err)
	buf.Reset()
	_, err = CopyRange(&buf, mf, 10, 10)
	require.NoError(t, err)
	require.Equal(t, data[10:20], buf.Bytes())
}
